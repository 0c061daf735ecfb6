"""Building a campaign's items and batches, and storing judgments."""

from dataclasses import fields, replace
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from .models import Assignment, Batch, Campaign, Item, Judgment, completion_code
from .packing import pack_batches
from .tasks.base import ItemSpec


def _item(campaign: Campaign, position: int, spec: ItemSpec, **extra) -> Item:
    # Shallow on purpose: dataclasses.asdict deep-copies every content dict, which was a
    # quarter of the time of building a 50k-item campaign.
    values = {f.name: getattr(spec, f.name) for f in fields(spec)}
    return Item(campaign=campaign, position=position, **values, **extra)


@transaction.atomic
def add_items(
    campaign: Campaign, specs: list[ItemSpec], gold_per_batch: int = 1, pack=None
) -> dict:
    """Store items, pack the shown ones into batches with gold mixed in, open the slots.

    Items with an `auto_payload` are stored without a batch (they are never shown).
    Gold specs are copied into batches round-robin, `gold_per_batch` per batch (at most
    one copy of each spec), each copy keyed to its gold spec so that a worker never meets
    the same check twice. Training
    specs are stored without a batch. Returns counts.
    """
    if campaign.batches.exists():
        raise ValueError("This campaign already has batches; create a new campaign instead.")
    task = [s for s in specs if s.role == Item.Role.TASK and s.auto_payload is None]
    auto = [s for s in specs if s.role == Item.Role.TASK and s.auto_payload is not None]
    gold = [s for s in specs if s.role == Item.Role.GOLD]
    training = [s for s in specs if s.role == Item.Role.TRAINING]

    # `pack(task_specs, batch_size) -> [[index, ...], ...]` may replace the generic packer
    # (Spot The Bot also mixes systems and segment lengths within each batch).
    packed = (pack or _pack_by_group)(task, campaign.batch_size)
    # More copies per batch than there are gold specs would put one check twice in a batch.
    gold_per_batch = min(gold_per_batch, len(gold))
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
            members.insert(
                (len(members) * (g + 1)) // (gold_per_batch + 1),
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


def batch_items(assignment: Assignment) -> list[Item]:
    return list(assignment.batch.items.order_by("order_in_batch"))


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
    kind = assignment.campaign.kind
    gold = kind.score_gold(item, payload) if item.role == Item.Role.GOLD else None
    try:
        with transaction.atomic():
            judgment, created = Judgment.objects.get_or_create(
                assignment=assignment,
                item=item,
                defaults={
                    "worker_id": assignment.worker_id,
                    "campaign_id": assignment.campaign_id,
                    "payload": payload,
                    "started_at": started_at,
                    "client_duration_ms": client_duration_ms,
                    "gold_correct": gold.correct if gold else None,
                    "gold_mistakes": gold.mistakes if gold else None,
                },
            )
    except IntegrityError:
        # Two identical submits raced past get_or_create's read: the other one stored it.
        return Judgment.objects.get(assignment=assignment, item=item), False
    return judgment, created


def submit_if_complete(assignment: Assignment, n_items: int) -> bool:
    """Close the assignment with a completion code once every item has a judgment."""
    if assignment.judgments.count() < n_items:
        return False
    updated = Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.STARTED).update(
        status=Assignment.Status.SUBMITTED,
        submitted_at=timezone.now(),
        completion_code=completion_code(),
    )
    assignment.refresh_from_db()
    return bool(updated) or assignment.status in Assignment.DONE
