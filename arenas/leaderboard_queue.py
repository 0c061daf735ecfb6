"""When an arena's leaderboard is computed: after a vote, debounced, never in a request.

A vote marks the arena (`leaderboard_queued_at`) in the vote's transaction, and only the
vote that set the mark queues the task, `EVALHUB_ARENA_LEADERBOARD_DELAY_SECONDS` later:
every vote of that while is counted by one computation. The task clears the mark before
it reads the battles, so a vote arriving during a computation queues the next one. A mark
older than the delay plus `LOST_AFTER_SECONDS` is a message the broker lost (or could not
take): the periodic sweep queues it again.

With an eager Celery (the embedded mode of `make run`, no broker) a queued task runs at
once, after the vote's commit.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnreachable

from .models import Arena

logger = logging.getLogger(__name__)

LOST_AFTER_SECONDS = 120


def vote_arrived(arena: Arena) -> None:
    """Ask for the arena's leaderboard (called inside the vote's transaction)."""
    marked = Arena.objects.filter(pk=arena.pk, leaderboard_queued_at__isnull=True).update(
        leaderboard_queued_at=timezone.now()
    )
    if marked:
        transaction.on_commit(lambda: send(arena.pk))


def send(arena_id: int, countdown: float | None = None) -> bool:
    from .tasks import compute_leaderboard

    if countdown is None:
        countdown = settings.EVALHUB_ARENA_LEADERBOARD_DELAY_SECONDS
    try:
        compute_leaderboard.apply_async((arena_id,), countdown=countdown)
    except BrokerUnreachable as error:
        logger.warning(
            "Could not queue arena %s's leaderboard: %s; the sweep will", arena_id, error
        )
        return False
    return True


def lost() -> list[int]:
    """Arenas whose leaderboard was asked for and never computed."""
    delay = settings.EVALHUB_ARENA_LEADERBOARD_DELAY_SECONDS + LOST_AFTER_SECONDS
    before = timezone.now() - timedelta(seconds=delay)
    return list(Arena.objects.filter(leaderboard_queued_at__lt=before).values_list("pk", flat=True))
