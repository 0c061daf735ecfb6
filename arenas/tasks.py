"""Background work of arenas: computing a leaderboard (asked for by votes, debounced:
arenas/leaderboard_queue.py) and queueing again the computations whose message was lost."""

import logging
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnreachable

from webhooks.events import emit
from webhooks.events import link as webhook_link
from webhooks.models import EventType

from . import leaderboard, pairing_state
from .language import detect_language
from .models import Arena, Battle, BattleTurn, Leaderboard, LeaderboardVariant

logger = logging.getLogger(__name__)

# A mark this much older than the delay is a lost message.
LOST_AFTER_SECONDS = 120


@shared_task(name="arenas.tasks.compute_leaderboard")
def compute_leaderboard(arena_id: int) -> int | None:
    """Compute and store the arena's leaderboard and its variants (style control, each
    category: arenas/leaderboard.py); the number of battles counted. Idempotent: a
    computation that started earlier never overwrites one that started later."""
    started = timezone.now()
    # Cleared first: a vote from now on queues the next computation.
    Arena.objects.filter(pk=arena_id).update(leaderboard_queued_at=None)
    arena = Arena.objects.filter(pk=arena_id).first()
    if arena is None:
        return None
    results = leaderboard.compute_all(arena)
    result = results.pop("")
    # Pairing (issue 27): the pairing state caught up with every counted battle.
    pairing_state.rebuild(arena)
    values = {"result": result, "battles": result["battles"], "computed_at": started}
    stored = Leaderboard.objects.filter(arena=arena, computed_at__lte=started).update(**values)
    if not stored:
        stored = Leaderboard.objects.get_or_create(arena=arena, defaults=values)[1]
    store_variants(arena, results, started)
    if stored:  # not when a later computation had already stored its own
        emit_updated(arena, result["battles"], started)
    return result["battles"]


def emit_updated(arena: Arena, battles: int, computed_at) -> None:
    """The arena's owner's webhooks hear of the leaderboard just stored."""

    def data() -> dict:
        return {
            "arena": {
                "slug": arena.slug,
                "name": arena.name,
                "url": webhook_link(arena.get_absolute_url()),
            },
            "battles": battles,
            "computed_at": computed_at,
        }

    emit(
        arena.owner,
        EventType.ARENA_LEADERBOARD_UPDATED,
        data,
        key=f"arena.leaderboard_updated:{arena.pk}:{computed_at.isoformat()}",
    )


def store_variants(arena: Arena, results: dict, started) -> None:
    """Each variant as its own row (the API reads one, not all); the variants of a
    category that no longer exists go."""
    for key, result in results.items():
        values = {"result": result, "battles": result["battles"], "computed_at": started}
        older = LeaderboardVariant.objects.filter(arena=arena, key=key, computed_at__lte=started)
        if not older.update(**values):
            LeaderboardVariant.objects.get_or_create(arena=arena, key=key, defaults=values)
    LeaderboardVariant.objects.filter(arena=arena, computed_at__lt=started).exclude(
        key__in=list(results)
    ).delete()


def send(arena_id: int, countdown: float | None = None) -> bool:
    """Queue the computation; False, logged, when the broker cannot be reached (the mark
    stays, and the sweep queues it again)."""
    if countdown is None:
        countdown = settings.EVALHUB_ARENA_LEADERBOARD_DELAY_SECONDS
    try:
        compute_leaderboard.apply_async((arena_id,), countdown=countdown)
    except BrokerUnreachable as error:
        logger.warning("Could not queue arena %s's leaderboard: %s", arena_id, error)
        return False
    return True


def lost() -> list[int]:
    """Arenas whose leaderboard was asked for and not computed in time."""
    delay = settings.EVALHUB_ARENA_LEADERBOARD_DELAY_SECONDS + LOST_AFTER_SECONDS
    before = timezone.now() - timedelta(seconds=delay)
    return list(Arena.objects.filter(leaderboard_queued_at__lt=before).values_list("pk", flat=True))


@shared_task(name="arenas.tasks.requeue_lost_leaderboards")
def requeue_lost_leaderboards() -> int:
    arenas = lost()
    for arena_id in arenas:
        send(arena_id, countdown=0)
    return len(arenas)


@shared_task(name="arenas.tasks.detect_battle_language")
def detect_battle_language(battle_id: int) -> str:
    """The language of a battle's first prompt. Off the request: the detector's model
    takes seconds to load in a new process."""
    prompt = (
        BattleTurn.objects.filter(battle_id=battle_id, number=1)
        .values_list("prompt", flat=True)
        .first()
    )
    language = detect_language(prompt or "")
    Battle.objects.filter(pk=battle_id, language="").update(language=language)
    return language


def send_language(battle_id: int) -> None:
    try:
        detect_battle_language.delay(battle_id)
    except BrokerUnreachable as error:
        # The battle keeps no language; everything else about it is right.
        logger.warning("Could not queue battle %s's language: %s", battle_id, error)
