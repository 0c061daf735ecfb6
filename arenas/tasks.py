"""Background work of arenas: computing a leaderboard (debounced by arenas/leaderboard_queue.py)
and queueing again the computations whose message was lost."""

from celery import shared_task
from django.utils import timezone

from . import leaderboard, leaderboard_queue
from .models import Arena, Leaderboard


@shared_task(name="arenas.tasks.compute_leaderboard")
def compute_leaderboard(arena_id: int) -> int | None:
    """Compute and store the arena's leaderboard; the number of battles counted. Idempotent:
    a computation that started earlier never overwrites one that started later."""
    started = timezone.now()
    # Cleared first: a vote from now on queues the next computation.
    Arena.objects.filter(pk=arena_id).update(leaderboard_queued_at=None)
    arena = Arena.objects.filter(pk=arena_id).first()
    if arena is None:
        return None
    result = leaderboard.compute(arena)
    values = {"result": result, "battles": result["battles"], "computed_at": started}
    stored = Leaderboard.objects.filter(arena=arena, computed_at__lte=started).update(**values)
    if not stored:
        Leaderboard.objects.get_or_create(arena=arena, defaults=values)
    return result["battles"]


@shared_task(name="arenas.tasks.requeue_lost_leaderboards")
def requeue_lost_leaderboards() -> int:
    arenas = leaderboard_queue.lost()
    for arena_id in arenas:
        leaderboard_queue.send(arena_id, countdown=0)
    return len(arenas)
