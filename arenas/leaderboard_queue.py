"""When an arena's leaderboard is computed: after a vote, debounced, never in a request.

A vote marks the arena (`leaderboard_queued_at`) in the vote's transaction, and only the
vote that set the mark queues the task (arenas.tasks.compute_leaderboard),
`EVALHUB_ARENA_LEADERBOARD_DELAY_SECONDS` later: every vote of that while is counted by one
computation. The task clears the mark before it reads the battles, so a vote arriving
during a computation queues the next one. A mark older than the delay plus a margin is a
message the broker lost (or could not take): the periodic sweep
(arenas.tasks.requeue_lost_leaderboards) queues it again.

With an eager Celery (the embedded mode of `make run`, no broker) a queued task runs at
once, after the vote's commit.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from .models import Arena
from .tasks import send


def vote_arrived(arena: Arena) -> None:
    """Ask for the arena's leaderboard (called inside the vote's transaction)."""
    ask_for(arena)


def ask_for(arena: Arena) -> None:
    """Ask for the arena's leaderboard: after a vote, or when what it shows changed (a
    category, the provisional rule)."""
    marked = Arena.objects.filter(pk=arena.pk, leaderboard_queued_at__isnull=True).update(
        leaderboard_queued_at=timezone.now()
    )
    if marked:
        transaction.on_commit(lambda: send(arena.pk))
