"""Building a campaign's items and batches, and storing judgments."""

import logging
import random
from contextlib import nullcontext
from dataclasses import fields, replace
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from evalhub.errors import UserInputError

from . import hot_queries
from .kinds.base import ItemSpec
from .models import Assignment, Batch, Campaign, Item, Judgment, completion_code
from .packing import pack_batches

logger = logging.getLogger(__name__)


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


def _item(campaign: Campaign, position: int, spec: ItemSpec, **extra) -> Item:
    # Shallow on purpose: dataclasses.asdict deep-copies every content dict, which was a
    # quarter of the time of building a 50k-item campaign.
    values = {f.name: getattr(spec, f.name) for f in fields(spec)}
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
            position += 1
    for spec in auto + training:
        items.append(_item(campaign, position, spec))
        position += 1
    # bulk_create set the batches' primary keys (RETURNING, on PostgreSQL and SQLite 3.35+).
    Item.objects.bulk_create(items, batch_size=2000)
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


def _pack_by_group(specs: list[ItemSpec], batch_size: int) -> list[list[int]]:
    return pack_batches([s.group_key for s in specs], batch_size)


def safe_score(campaign: Campaign, item: Item, payload: dict):
    """The kind's GoldResult, or None when the stored gold cannot be scored: a malformed
    gold answer is logged and the item left unscored, never an error in front of a worker."""
    try:
        return campaign.kind.score_gold(item, payload)
    except Exception:
        logger.exception("Gold of item %s (campaign %s) cannot be scored", item.pk, campaign.slug)
        return None


def batch_items(assignment: Assignment) -> list[hot_queries.BatchEntry]:
    """The items of the assignment's batch in order: each entry's ``pk``, ``judged`` (this
    assignment has a judgment of it) and ``item`` (made when asked for): one indexed query,
    whatever the campaign's size (its SQL is written once: annotation/hot_queries.py)."""
    return hot_queries.batch_items(assignment)


def record_judgment(
    assignment: Assignment,
    item: Item,
    payload: dict,
    *,
    started_at: datetime,
    client_duration_ms: int | None = None,
) -> tuple[Judgment, bool]:
    """Store a judgment once: a replay of the same submit returns the stored one.

    Returns (judgment, created). Gold is scored on the server; nothing of it has been sent.
    """
    gold = safe_score(assignment.campaign, item, payload) if item.role == Item.Role.GOLD else None
    # Insert first and let the unique (assignment, item) constraint catch a replay: the
    # first submit, by far the common case, costs one INSERT instead of get_or_create's
    # SELECT, savepoint and INSERT.
    # Outside a transaction (a web request) the INSERT runs on its own: a failed one
    # leaves nothing to roll back. Inside one, a savepoint keeps the caller's transaction.
    in_transaction = connection.in_atomic_block
    try:
        with transaction.atomic() if in_transaction else nullcontext():
            judgment = hot_queries.insert_judgment(
                Judgment(
                    assignment=assignment,
                    item=item,
                    worker_id=assignment.worker_id,
                    campaign_id=assignment.campaign_id,
                    payload=payload,
                    started_at=started_at,
                    client_duration_ms=client_duration_ms,
                    gold_correct=gold.correct if gold else None,
                    gold_mistakes=gold.mistakes if gold else None,
                )
            )
    except IntegrityError:
        # A replay (double click, resent form), or two identical submits at once: the
        # stored one stands.
        return Judgment.objects.get(assignment=assignment, item=item), False
    return judgment, True


def submit_if_complete(assignment: Assignment, n_items: int) -> bool:
    """Close the assignment with a completion code once every item has a judgment; the
    campaign is then finished if this was its last open slot (after the commit, in a task:
    the crowd platform's finish hook is a network call)."""
    if assignment.judgments.order_by().count() < n_items:
        return False
    closed = {
        "status": Assignment.Status.SUBMITTED,
        "submitted_at": timezone.now(),
        "completion_code": completion_code(),
    }
    updated = Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.STARTED).update(
        **closed
    )
    # Only what the UPDATE (or a concurrent one) set: a full refresh would drop the loaded
    # campaign and worker, which the completion page reads next.
    assignment.refresh_from_db(fields=list(closed))
    if updated:
        _finish_campaign_later(assignment.campaign_id)
    return bool(updated) or assignment.status in Assignment.DONE


def _finish_campaign_later(campaign_id: int) -> None:
    transaction.on_commit(lambda: _finish_if_no_slot_left(campaign_id))


def _finish_if_no_slot_left(campaign_id: int) -> bool:
    """Queue the finishing task only when no slot of the campaign is open or started (one
    indexed EXISTS), instead of a task for every finished batch. Run after the commit: of
    two batches finished at once, the one whose check runs last sees both committed, so
    the campaign's last batch always queues it. True if it was queued."""
    from evalhub.queueing import enqueue

    from .tasks import finish_campaign_if_complete

    pending = Assignment.objects.filter(campaign_id=campaign_id, status__in=Assignment.PENDING)
    return not pending.exists() and enqueue(finish_campaign_if_complete, campaign_id)
