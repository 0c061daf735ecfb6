"""Building a campaign's items: stored, packed into batches with gold mixed in, and the
slots (assignments) opened, within the assignment limit of the settings."""

import random
from dataclasses import fields, replace

from django.conf import settings
from django.db import transaction

from evalhub.errors import UserInputError

from .kinds.base import ItemSpec
from .models import Assignment, Batch, Campaign, Item
from .packing import pack_batches


class TooMuchWork(UserInputError, ValueError):
    """A campaign that would open more assignments than the settings allow."""


def check_assignments(batches: int, redundancy: int) -> int:
    """The number of assignments `batches` batches open; TooMuchWork above
    settings.EVALHUB_MAX_ASSIGNMENTS_PER_CAMPAIGN, before anything is written."""
    assignments = batches * redundancy
    most = settings.EVALHUB_MAX_ASSIGNMENTS_PER_CAMPAIGN
    if assignments > most:
        raise TooMuchWork(
            f"This campaign would open {assignments:,} assignments ({batches:,} batches × "
            f"{redundancy} judgments each); at most {most:,} are allowed "
            "(EVALHUB_MAX_ASSIGNMENTS_PER_CAMPAIGN). Use larger batches, fewer judgments "
            "per item or fewer items.",
            field="batch_size",
        )
    return assignments


# The spec fields stored as many-to-many links once the items have keys.
_LINKED = ("shown_response_ids", "shown_conversation_ids")


def _item(campaign: Campaign, position: int, spec: ItemSpec, **extra) -> Item:
    # Shallow on purpose: dataclasses.asdict deep-copies every content dict, which was a
    # quarter of the time of building a 50k-item campaign.
    values = {f.name: getattr(spec, f.name) for f in fields(spec) if f.name not in _LINKED}
    return Item(campaign=campaign, position=position, **values, **extra)


@transaction.atomic
def add_items(
    campaign: Campaign, specs: list[ItemSpec], gold_per_batch: int = 1, pack=None, rng=None
) -> dict:
    """Store items, pack the shown ones into batches with gold mixed in, open the slots.

    Items with an `auto_payload` are stored without a batch (they are never shown).
    Gold specs are copied into batches round-robin, `gold_per_batch` per batch (at most
    one copy of each spec), each copy keyed to its gold spec so that a worker never meets
    the same check twice. A batch holds `campaign.batch_size` items gold included, and
    its checks sit at random positions (`rng`, default the system's): neither a batch's
    length nor a position tells a worker which item is a check. Training specs are stored
    without a batch. Refuses (TooMuchWork) before writing anything when the campaign would
    open more assignments than the settings allow. Returns counts.
    """
    if campaign.batches.exists():
        raise ValueError("This campaign already has batches; create a new campaign instead.")
    task = [s for s in specs if s.role == Item.Role.TASK and s.auto_payload is None]
    auto = [s for s in specs if s.role == Item.Role.TASK and s.auto_payload is not None]
    gold = [s for s in specs if s.role == Item.Role.GOLD]
    training = [s for s in specs if s.role == Item.Role.TRAINING]

    # More copies per batch than there are gold specs would put one check twice in a batch.
    gold_per_batch = min(gold_per_batch, len(gold))
    if gold_per_batch >= campaign.batch_size:
        raise TooMuchWork(
            f"gold_per_batch ({gold_per_batch}) must be less than batch_size "
            f"({campaign.batch_size}): a batch holds its checks among its items.",
            field="gold_per_batch",
        )
    # `pack(task_specs, slots) -> [[index, ...], ...]` may replace the generic packer
    # (Spot The Bot also mixes systems and segment lengths within each batch).
    packed = (pack or _pack_by_group)(task, campaign.batch_size - gold_per_batch)
    check_assignments(len(packed), campaign.redundancy)
    rng = rng or random.SystemRandom()
    items: list[Item] = []
    stored: list[ItemSpec] = []  # the spec of each item, in order
    batches = Batch.objects.bulk_create(
        Batch(campaign=campaign, position=i) for i in range(len(packed))
    )
    position = 0
    for batch_index, (batch, indices) in enumerate(zip(batches, packed, strict=True)):
        members = [task[i] for i in indices]
        for g in range(gold_per_batch):
            n = (batch_index * gold_per_batch + g) % len(gold)
            spec = gold[n]
            # Uniform over the len(members) + 1 gaps: each check's final position is uniform.
            members.insert(
                rng.randint(0, len(members)),
                replace(spec, group_key=spec.group_key or f"gold:{n}"),
            )
        for order, spec in enumerate(members):
            items.append(_item(campaign, position, spec, batch=batch, order_in_batch=order))
            stored.append(spec)
            position += 1
    for spec in auto + training:
        items.append(_item(campaign, position, spec))
        stored.append(spec)
        position += 1
    # bulk_create set the batches' primary keys (RETURNING, on PostgreSQL and SQLite 3.35+).
    Item.objects.bulk_create(items, batch_size=2000)
    _link_shown_responses(items, stored)
    Assignment.objects.bulk_create(
        (
            Assignment(campaign=campaign, batch=batch)
            for batch in batches
            for _ in range(campaign.redundancy)
        ),
        batch_size=2000,
    )
    return {
        "batches": len(batches),
        "shown": len(task),
        "automatic": len(auto),
        "gold_copies": len(batches) * gold_per_batch,
        "training": len(training),
    }


def _link_shown_responses(items: list[Item], specs: list[ItemSpec]) -> None:
    """The responses and conversations of k-way rankings (`ItemSpec.shown_*_ids`)."""
    links = Item.shown_responses.through
    links.objects.bulk_create(
        (
            links(item_id=item.pk, response_id=response_id)
            for item, spec in zip(items, specs, strict=True)
            for response_id in spec.shown_response_ids
        ),
        batch_size=2000,
    )
    links = Item.shown_conversations.through
    links.objects.bulk_create(
        (
            links(item_id=item.pk, conversation_id=conversation_id)
            for item, spec in zip(items, specs, strict=True)
            for conversation_id in spec.shown_conversation_ids
        ),
        batch_size=2000,
    )


def _pack_by_group(specs: list[ItemSpec], batch_size: int) -> list[list[int]]:
    return pack_batches([s.group_key for s in specs], batch_size)
