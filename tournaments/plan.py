"""The collection plan of a tournament: one PlannedDialogue row per conversation to collect.

The rows come from the tournament's schedule (tournaments/schedule.py) over the slugs of
its systems (the evaluation targets) and, for bipartite-play, of its partner set:
`conversations_per_pair` conversations per pairing, seeds derived from `tournament.seed`.
Making the plan is idempotent: rows are keyed by the planned conversation's key (unique
per tournament), so running it again, or after adding a system, inserts only what is
missing. Rows are never removed here: collected conversations stay.
"""

from django.db import transaction

from . import schedule
from .models import BotEndpoint, PlannedDialogue, Tournament


class PlanInvalid(ValueError):
    """The tournament cannot be planned as it is; the message says what to fix."""


def planned_conversations(tournament: Tournament) -> list[schedule.PlannedConversation]:
    """The conversations the tournament's schedule asks for, in schedule order."""
    kind = tournament.schedule
    if tournament.exchanges < 1:
        raise PlanInvalid("Collect at least one exchange after the seed exchange.")
    targets = sorted(tournament.systems.values_list("slug", flat=True))
    per_pairing, seed = tournament.conversations_per_pair, tournament.seed
    try:
        if kind == Tournament.Schedule.SELF_PLAY:
            return schedule.self_play(targets, per_pairing, seed)
        if kind == Tournament.Schedule.ALL_PLAY_ALL:
            return schedule.all_play_all(targets, per_pairing, seed)
        if kind == Tournament.Schedule.BIPARTITE_PLAY:
            if tournament.partner_set is None:
                raise PlanInvalid("Bipartite-play needs a partner set; choose one.")
            partners = sorted(tournament.partner_set.systems.values_list("slug", flat=True))
            return schedule.bipartite_play(targets, partners, per_pairing, seed)
    except PlanInvalid:
        raise
    except ValueError as error:
        raise PlanInvalid(f"Cannot plan {kind} for {tournament.slug}: {error}.") from error
    raise PlanInvalid(
        f"Tournament {tournament.slug} has the schedule {kind!r}: its conversations are "
        "imported, not collected."
    )


def check_endpoints(planned: list[schedule.PlannedConversation]) -> None:
    """Every system that speaks in the plan must have a bot endpoint."""
    speakers = {slug for p in planned for slug in p.speakers}
    reachable = set(
        BotEndpoint.objects.filter(system__slug__in=speakers).values_list("system__slug", flat=True)
    )
    missing = sorted(speakers - reachable)
    if missing:
        raise PlanInvalid(
            f"These systems have no bot endpoint, so they cannot be collected live: "
            f"{', '.join(missing)}. Register an endpoint for each, or remove them."
        )


def make_plan(tournament: Tournament) -> int:
    """Create the tournament's missing PlannedDialogue rows; returns how many were created."""
    planned = planned_conversations(tournament)
    check_endpoints(planned)
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
