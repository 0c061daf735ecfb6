"""The collection plan of a tournament: one PlannedDialogue row per conversation to collect.

The rows come from the tournament's schedule (tournaments/schedule.py) over the slugs of
its systems (the evaluation targets) and, for bipartite-play, of its partner set:
`conversations_per_pair` conversations per pairing, seeds derived from `tournament.seed`.
Making the plan is idempotent: rows are keyed by the planned conversation's key (unique
per tournament), so running it again, or after adding a system, inserts only what is
missing. Rows are never removed here: collected conversations stay.
"""

from dataclasses import dataclass

from django.conf import settings
from django.db import transaction

from endpoints.models import BotEndpoint
from evalhub.errors import UserInputError

from . import schedule
from .models import PlannedDialogue, Tournament


class PlanInvalid(UserInputError, ValueError):
    """The tournament cannot be planned as it is; the message says what to fix."""


@dataclass(frozen=True)
class PlanSize:
    pairings: int
    conversations: int


def _members(tournament: Tournament) -> tuple[list[str], list[str] | None]:
    """(target slugs, partner slugs or None) of a collected tournament; PlanInvalid for one
    whose conversations are imported, or a bipartite-play one without partners."""
    kind = tournament.schedule
    if kind not in (
        Tournament.Schedule.SELF_PLAY,
        Tournament.Schedule.ALL_PLAY_ALL,
        Tournament.Schedule.BIPARTITE_PLAY,
    ):
        raise PlanInvalid(
            f"Tournament {tournament.slug} has the schedule {kind!r}: its conversations are "
            "imported, not collected."
        )
    targets = sorted(tournament.systems.values_list("slug", flat=True))
    partners = None
    if kind == Tournament.Schedule.BIPARTITE_PLAY:
        if tournament.partner_set is None:
            raise PlanInvalid("Bipartite-play needs a partner set; choose one.")
        partners = sorted(tournament.partner_set.systems.values_list("slug", flat=True))
    return targets, partners


def speaking_systems(tournament: Tournament) -> list[str]:
    """The slugs of every system that speaks in the tournament's collected conversations
    (its pool and partners); none for a tournament whose conversations are imported."""
    try:
        targets, partners = _members(tournament)
    except PlanInvalid:
        return []
    return sorted({*targets, *(partners or ())})


def _size(tournament: Tournament, targets, partners) -> PlanSize:
    kind = tournament.schedule
    try:
        pairings = schedule.pairing_count(kind, targets, partners)
    except ValueError as error:
        raise PlanInvalid(f"Cannot plan {kind} for {tournament.slug}: {error}.") from error
    conversations = pairings * tournament.conversations_per_pair
    most = settings.EVALHUB_MAX_PLANNED_CONVERSATIONS
    if conversations > most:
        raise PlanInvalid(
            f"This plan has {conversations:,} conversations ({pairings:,} pairings × "
            f"{tournament.conversations_per_pair:,} conversations per pair); at most "
            f"{most:,} may be planned (EVALHUB_MAX_PLANNED_CONVERSATIONS). Lower "
            "conversations_per_pair or choose fewer systems."
        )
    return PlanSize(pairings, conversations)


def plan_size(tournament: Tournament) -> PlanSize:
    """The size of the tournament's plan, by arithmetic (nothing is listed), refused with
    PlanInvalid above settings.EVALHUB_MAX_PLANNED_CONVERSATIONS."""
    return _size(tournament, *_members(tournament))


def planned_conversations(tournament: Tournament) -> list[schedule.PlannedConversation]:
    """The conversations the tournament's schedule asks for, in schedule order; refused
    before anything is listed when the plan is larger than the settings allow."""
    if tournament.exchanges < 1:
        raise PlanInvalid("Collect at least one exchange after the seed exchange.")
    targets, partners = _members(tournament)
    _size(tournament, targets, partners)
    per_pairing, seed = tournament.conversations_per_pair, tournament.seed
    kind = tournament.schedule
    if kind == Tournament.Schedule.SELF_PLAY:
        return schedule.self_play(targets, per_pairing, seed)
    if kind == Tournament.Schedule.ALL_PLAY_ALL:
        return schedule.all_play_all(targets, per_pairing, seed)
    return schedule.bipartite_play(targets, partners, per_pairing, seed)


def check_endpoints(tournament: Tournament, planned: list[schedule.PlannedConversation]) -> None:
    """Every system that speaks in the plan must have a bot endpoint this tournament may
    call (its owner's, or one whose owner allows other owners' tournaments)."""
    speakers = {slug for p in planned for slug in p.speakers}
    endpoints = list(BotEndpoint.objects.filter(system__slug__in=speakers).select_related("system"))
    missing = sorted(speakers - {e.system.slug for e in endpoints})
    if missing:
        raise PlanInvalid(
            f"These systems have no bot endpoint, so they cannot be collected live: "
            f"{', '.join(missing)}. Register an endpoint for each, or remove them."
        )
    refused = sorted(e.system.slug for e in endpoints if not e.may_serve(tournament))
    if refused:
        raise PlanInvalid(
            f"The owners of {', '.join(refused)} do not let other owners' tournaments call "
            "their bot endpoints; ask them to allow it, or remove these systems."
        )


def make_plan(tournament: Tournament) -> int:
    """Create the tournament's missing PlannedDialogue rows; returns how many were created."""
    planned = planned_conversations(tournament)
    check_endpoints(tournament, planned)
    with transaction.atomic():
        existing = set(tournament.plan.values_list("key", flat=True))
        rows = [
            PlannedDialogue(
                tournament=tournament,
                key=p.key,
                speakers=list(p.speakers),
                index=p.index,
                seed=p.seed,
            )
            for p in planned
            if p.key not in existing
        ]
        before = len(existing)
        # ignore_conflicts: a concurrent make_plan may insert the same keys first.
        PlannedDialogue.objects.bulk_create(rows, batch_size=500, ignore_conflicts=True)
        return tournament.plan.count() - before
