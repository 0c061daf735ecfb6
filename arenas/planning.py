"""The budget planner for an arena (annotation/planning.py does the work): from an assumed
spread of strengths over the entered systems, or from the arena's votes so far (its pairing
state's strengths and its share of ties), how many votes separate every adjacent pair,
uniform and adaptive. Arena voters are not paid by EvalHub; a price per vote (say, of
recruiting them on a crowd platform) can be given, with that platform's fee on it."""

from __future__ import annotations

from decimal import Decimal

from annotation.costs import fee_per_place
from annotation.planning import PlanInputs, PlanRefused, check_inputs, plan

from .leaderboard import counted_battles
from .models import Arena, Battle, PairingState
from .pairing_state import state_of


def plan_for_arena(
    arena: Arena, inputs: PlanInputs, price_per_vote: Decimal | None, provider: str
) -> dict:
    check_inputs(inputs)
    price = None
    if price_per_vote is not None:
        price = Decimal(price_per_vote) + fee_per_place(provider, Decimal(price_per_vote), 1)
    tie_rate = inputs.tie_rate
    if inputs.pilot:
        row = PairingState.objects.filter(arena=arena).first()
        if row is None or row.votes < 10:
            raise PlanRefused("A pilot needs at least 10 counted votes; assume a spread instead.")
        state, ids = state_of(row)
        names = dict(arena.entries.values_list("system_id", "system__slug"))
        keys = [names.get(pk, f"system {pk}") for pk in ids]
        strengths = state.strengths[: len(ids)]
        if tie_rate is None:
            counted = counted_battles(arena)
            ties = counted.filter(vote__in=[Battle.Vote.TIE, Battle.Vote.BOTH_BAD]).count()
            tie_rate = ties / max(counted.count(), 1)
    else:
        from evalstats.planner import spread_strengths

        strengths = spread_strengths(inputs.systems, inputs.spread_elo)
        keys = [f"system {i + 1}" for i in range(inputs.systems)]
    result = plan(strengths, keys, min(tie_rate or 0.0, 0.95), inputs, price)
    result["provider"] = provider
    return result
