"""An arena's pairing state on the database: updated by each vote, rebuilt with each
leaderboard, read by the adaptive draw and by the stopping rule's display.

The state (`PairingState`, one row per arena) is the Bradley-Terry state of
evalstats/pairing.py: the effective wins between the systems and their strengths. A vote
counted by the leaderboard (flagged battles left out when the arena says so) moves it by
Newton steps inside the vote's transaction, the row locked, so the cost of a vote depends
on the number of systems, never on the battles stored; the leaderboard task, which reads
every battle anyway, replaces it with a fit of them all (an import, a flag or a vote that
raced the task is caught up there). After each update the stopping rule is evaluated at
the arena's `separation_level`: when every adjacent pair is separated the ranking question
is answered, and an arena set to `pause_when_answered` stops starting battles.
"""

from __future__ import annotations

import base64
import random

from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from evalhub.models import System

from .leaderboard import counted_battles, outcome_codes
from .models import Arena, ArenaSystem, Battle, PairingState
from .pairing import Draw, draw_adaptive


def state_of(row: PairingState | None, extra_ids=()):
    """(evalstats state, system ids) of the row, with `extra_ids` appended (no votes)."""
    import numpy as np

    from evalstats import pairing

    ids = list(row.systems) if row else []
    ids += [pk for pk in extra_ids if pk not in ids]
    n = max(len(ids), 2)
    wins = np.zeros((n, n))
    strengths = np.zeros(n)
    votes = 0
    if row and row.systems:
        m = len(row.systems)
        wins[:m, :m] = stored_wins(row) / 2.0
        strengths[:m] = row.strengths
        votes = row.votes
    state = pairing.PairingState(wins, strengths, pairing.DEFAULT_PRIOR_PRECISION, votes)
    return state, ids


def stored_wins(row: PairingState):
    """The row's doubled effective wins as an (n, n) array (stored as base64 of
    little-endian int32: a 130-system arena decodes in microseconds, not milliseconds)."""
    import numpy as np

    m = len(row.systems)
    if not row.wins:
        return np.zeros((m, m))
    return np.frombuffer(base64.b64decode(row.wins), dtype="<i4").reshape(m, m).astype(float)


def _store(row: PairingState, state, ids: list[int], level: float) -> PairingState:
    import numpy as np

    from evalstats import pairing

    n = len(ids)
    separation = pairing.separation(state, level) if n >= 2 else None
    row.systems = ids
    doubled = np.rint(2 * state.wins[:n, :n]).astype("<i4")
    row.wins = base64.b64encode(doubled.tobytes()).decode("ascii")
    row.strengths = [round(float(value), 10) for value in state.strengths[:n]]
    row.votes = state.votes
    row.adjacent_pairs = max(n - 1, 0)
    row.separated_pairs = int(separation.separated.sum()) if separation else 0
    row.answered = bool(separation and separation.answered and state.votes > 0)
    row.updated = timezone.now()
    row.save()
    return row


def _entered(arena: Arena) -> list[int]:
    return list(arena.entries.order_by("pk").values_list("system_id", flat=True))


def _pause_if_answered(arena: Arena, row: PairingState) -> None:
    if row.answered and arena.pause_when_answered and not arena.paused:
        Arena.objects.filter(pk=arena.pk).update(paused=True)
        arena.paused = True


def rebuild(arena: Arena) -> PairingState:
    """The state fitted from every counted battle (the leaderboard's)."""
    from evalstats import pairing
    from evalstats.pairwise import A_WINS, B_WINS

    codes = outcome_codes()
    rows = (
        counted_battles(arena)
        .order_by()
        .values_list("system_a_id", "system_b_id", "vote")
        .annotate(count=Count("pk"))
    )
    index: dict[int, int] = {}
    cells = []
    for system_a, system_b, vote, count in rows:
        a = index.setdefault(system_a, len(index))
        b = index.setdefault(system_b, len(index))
        cells.append((a, b, codes[vote], count))
    import numpy as np

    n = max(len(index), 2)
    wins, ties = np.zeros((n, n)), np.zeros((n, n))
    for a, b, code, count in cells:
        if code == A_WINS:
            wins[a, b] += count
        elif code == B_WINS:
            wins[b, a] += count
        else:
            ties[a, b] += count
            ties[b, a] += count
    state = pairing.state_from_counts(wins, ties)
    # Every entered system is in the ranking, voted on yet or not (no votes: strength 0).
    ids = list(index) + [pk for pk in _entered(arena) if pk not in index]
    if len(ids) > n:
        grown = np.zeros((len(ids), len(ids)))
        grown[:n, :n] = state.wins
        state = pairing.PairingState(
            grown,
            np.concatenate([state.strengths, np.zeros(len(ids) - n)]),
            state.prior_precision,
            state.votes,
        )
    with transaction.atomic():
        row, _ = PairingState.objects.select_for_update().get_or_create(arena=arena)
        row = _store(row, state, ids, arena.separation_level)
        _pause_if_answered(arena, row)
    return row


def record_vote(battle: Battle) -> None:
    """Add the battle's vote to its arena's state (inside the vote's transaction)."""
    from evalstats.pairwise import A_WINS, B_WINS

    arena = battle.arena
    if arena.exclude_flagged and battle.flags:
        return
    row = PairingState.objects.select_for_update().filter(arena=arena).first()
    if row is None:
        # The first vote (or a state lost): fit every counted battle, this one included.
        rebuild(arena)
        return
    from evalstats import pairing

    state, ids = state_of(row, [battle.system_a_id, battle.system_b_id, *_entered(arena)])
    a, b = ids.index(battle.system_a_id), ids.index(battle.system_b_id)
    code = outcome_codes()[battle.vote]
    if code == A_WINS:
        state = pairing.add_vote(state, a, b)
    elif code == B_WINS:
        state = pairing.add_vote(state, b, a)
    else:
        state = pairing.add_vote(state, a, b, tie=True)
    _pause_if_answered(arena, _store(row, state, ids, arena.separation_level))


def draw(arena: Arena, entries: list[ArenaSystem], rng: random.Random) -> Draw:
    """The adaptive draw among the drawable `entries`, from the arena's state (systems
    that are not drawable still count in the ranking, with weight 0)."""
    row = PairingState.objects.filter(arena=arena).first()
    state, ids = state_of(row, [entry.system_id for entry in entries])
    weight = {entry.system_id: entry.weight for entry in entries}
    slugs = {entry.system_id: entry.system.slug for entry in entries}
    missing = [pk for pk in ids if pk not in slugs]
    if missing:
        slugs.update(System.objects.filter(pk__in=missing).values_list("pk", "slug"))
    keys = [slugs.get(pk, f"system-{pk}") for pk in ids]
    if len(ids) < 2:
        keys += ["(none)"] * (2 - len(ids))
    weights = [weight.get(pk, 0.0) for pk in ids] + [0.0] * (state.n - len(ids))
    return draw_adaptive(keys, weights, state, rng, level=arena.separation_level)


def stopping_status(arena: Arena) -> dict:
    """The stopping rule as the page and the API show it (no statistics loaded)."""
    row = PairingState.objects.filter(arena=arena).first()
    return {
        "rule": "every pair adjacent in the ranking separated",
        "level": arena.separation_level,
        "votes": row.votes if row else 0,
        "adjacent_pairs": row.adjacent_pairs if row else 0,
        "separated_pairs": row.separated_pairs if row else 0,
        "answered": bool(row and row.answered),
        "pause_when_answered": arena.pause_when_answered,
        "paused": arena.paused,
        "updated": row.updated.isoformat() if row else None,
    }
