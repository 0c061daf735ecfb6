"""Background jobs of tournaments: live dialogue collection.

Retries. A bot's transient errors (timeouts, 5xx, broken connections, bad JSON) are
retried by the bot client, request by request, with exponential backoff
(EVALHUB_BOT_RETRY_*), not by Celery: a Celery retry re-runs the whole task, and since only
complete conversations are stored it would restart the dialogue from the seed and throw
away the turns already generated. When the client gives up, the dialogue is recorded
failed and the task ends normally, so one broken bot does not hold up (or, in eager mode,
abort) the rest of the tournament; `collect_tournament(retry_failed=True)` runs the failed
ones again once the bot is fixed. Celery's autoretry is kept for database errors
(OperationalError), after which the row is failed, or running with its lease released, and
so claimable again.

Both tasks are idempotent: a dialogue's lease is held while it is collected, and a
complete one is never collected again.
"""

import logging
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.db import OperationalError
from django.db.models import Q
from django.utils import timezone

from evalhub import leases
from evalhub.queueing import enqueue

from .collection import (
    LEASE_PREFIX,
    DialogueFailed,
    check_collectable,
    check_seed_pool,
    collect_dialogue,
    dialogues_to_collect,
    mark_collecting,
    mark_ready_if_complete,
)
from .models import PlannedDialogue, Tournament
from .plan import make_plan

logger = logging.getLogger(__name__)


@shared_task(autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5, acks_late=True)
def collect_planned_dialogue(planned_id: int) -> str:
    """Collect one planned dialogue: "complete", "failed", "skipped" (complete already or
    running elsewhere) or "missing" (the row is gone)."""
    planned = PlannedDialogue.objects.filter(pk=planned_id).first()
    if planned is None:
        logger.warning("Planned dialogue %s vanished before it was collected", planned_id)
        return "missing"
    try:
        outcome = "complete" if collect_dialogue(planned) is not None else "skipped"
    except DialogueFailed as error:
        logger.warning("Dialogue collection failed: %s", error)
        outcome = "failed"
    mark_ready_if_complete(planned.tournament_id)
    return outcome


@shared_task(autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5, acks_late=True)
def collect_tournament(tournament_id: int, retry_failed: bool = False) -> dict:
    """Plan (idempotently) and enqueue the tournament's dialogues still to collect.

    Raises PlanInvalid, NoSeedConversations or CollectionError with a message saying what to
    fix before anything is enqueued."""
    tournament = Tournament.objects.filter(pk=tournament_id).first()
    if tournament is None:
        logger.warning("Tournament %s vanished before collection", tournament_id)
        return {"planned": 0, "enqueued": 0}
    check_collectable(tournament)
    planned = make_plan(tournament)
    ids = dialogues_to_collect(tournament, retry_failed=retry_failed)
    if ids:
        check_seed_pool(tournament.domain, tournament.owner)
    mark_collecting(tournament)
    for planned_id in ids:
        enqueue(collect_planned_dialogue, planned_id)
    mark_ready_if_complete(tournament.pk)
    return {"planned": planned, "enqueued": len(ids)}


@shared_task
def reclaim_lapsed_dialogues() -> int:
    """Queue again the dialogues of collecting tournaments whose lease lapsed (running: the
    worker died) or that are still pending after a maintenance interval (their message was
    never sent); how many were queued. Collecting a dialogue takes its lease first, so one
    queued twice is collected once."""
    waited = timezone.now() - timedelta(seconds=settings.EVALHUB_MAINTENANCE_INTERVAL_SECONDS)
    Status = PlannedDialogue.Status
    ids = (
        PlannedDialogue.objects.filter(tournament__status=Tournament.Status.COLLECTING)
        .filter(Q(status=Status.RUNNING) | Q(status=Status.PENDING, updated__lt=waited))
        .filter(leases.lapsed(LEASE_PREFIX))
        .values_list("pk", flat=True)
    )
    return sum(enqueue(collect_planned_dialogue, pk) for pk in ids)
