"""Storing judgments: a worker's batch, each judgment recorded once, the assignment
submitted when complete and the campaign finished when its last slot closes.

Building a campaign's items and batches is annotation.items."""

import logging
from contextlib import nullcontext
from datetime import datetime

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from . import hot_queries, pairing
from .models import Assignment, Campaign, Item, Judgment, completion_code

logger = logging.getLogger(__name__)


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
    def after_commit():
        _finish_if_no_slot_left(campaign_id)
        _pause_if_answered_later(campaign_id)

    transaction.on_commit(after_commit)


def _finish_if_no_slot_left(campaign_id: int) -> bool:
    """Queue the finishing task only when no slot of the campaign is open or started (one
    indexed EXISTS), instead of a task for every finished batch. Run after the commit: of
    two batches finished at once, the one whose check runs last sees both committed, so
    the campaign's last batch always queues it. True if it was queued."""
    from evalhub.queueing import enqueue

    from .tasks import finish_campaign_if_complete

    pending = Assignment.objects.filter(campaign_id=campaign_id, status__in=Assignment.PENDING)
    return not pending.exists() and enqueue(finish_campaign_if_complete, campaign_id)


def _pause_if_answered_later(campaign_id: int) -> None:
    """Queue the stopping rule's check when the campaign asks to pause once its ranking is
    answered (annotation/pairing.py): one indexed query, nothing queued otherwise."""
    from evalhub.queueing import enqueue

    from .tasks import pause_campaign_if_answered

    asks = Campaign.objects.filter(
        pk=campaign_id,
        pause_when_answered=True,
        status=Campaign.Status.LIVE,
        task_kind__in=pairing.KINDS,
    )
    if asks.exists():
        enqueue(pause_campaign_if_answered, campaign_id)
