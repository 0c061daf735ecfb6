"""The budget planner before launch (evalstats/planner.py): how many judgments, and how
much money with the platform's fees, a ranking question needs, uniform and adaptive
allocation side by side.

The inputs are either an assumed effect size (the number of systems and the spread of their
strengths, best to worst, in Elo points) or a pilot: the campaign's (or arena's) judgments
so far, their fitted strengths and tie share. The answer, for each allocation: the
judgments that separate every adjacent pair at the chosen level with 80% and with 95%
probability (None when more than the simulation's cap would be needed), their cost at the
price of a judgment, and the share of simulated studies that stopped on a wrong order.
The simulation is bounded (`MAX_STUDIES`, `MAX_SYSTEMS`, `MAX_VOTES`, and studies x
systems^2 at most `MAX_WORK`; batches of 5% of the votes so far, so the counts are within 5%)
so a request costs seconds at most.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from evalhub.errors import UserInputError

from .costs import price_per_judgment
from .models import Campaign

MAX_STUDIES = 400
MAX_SYSTEMS = 30
MAX_VOTES = 200_000
DEFAULT_STUDIES = 100
# A request's simulation work grows with studies x systems^2 (and the batches, at most ~200
# with a batch of 5% of the votes so far): capped so a plan takes seconds, not minutes.
MAX_WORK = 20_000
GROWTH = 0.05
SEED = 20261127  # the same inputs give the same plan


class PlanRefused(UserInputError):
    """The plan's inputs are out of range or missing (nothing is computed)."""


@dataclass(frozen=True)
class PlanInputs:
    systems: int | None = None
    spread_elo: float | None = None
    tie_rate: float | None = None
    level: float = 0.95
    studies: int = DEFAULT_STUDIES
    pilot: bool = False

    @classmethod
    def from_cleaned(cls, data: dict) -> PlanInputs:
        """From the planner form's or the API serializer's validated data."""
        return cls(
            systems=data.get("systems"),
            spread_elo=data.get("spread_elo"),
            tie_rate=data.get("tie_rate"),
            level=data["level"],
            studies=data["studies"],
            pilot=data["pilot"],
        )


def check_inputs(inputs: PlanInputs) -> None:
    if not inputs.pilot:
        if inputs.spread_elo is None:
            raise PlanRefused("Give the spread of strengths in Elo points, or use the pilot.")
        if not 0 < inputs.spread_elo <= 2000:
            raise PlanRefused("The spread is more than 0 and at most 2000 Elo points.")
        if inputs.systems is None or not 2 <= inputs.systems <= MAX_SYSTEMS:
            raise PlanRefused(f"Plan for 2 to {MAX_SYSTEMS} systems.")
    if inputs.tie_rate is not None and not 0 <= inputs.tie_rate < 1:
        raise PlanRefused("The share of ties is at least 0 and below 1.")
    if not 0.5 <= inputs.level <= 0.999:
        raise PlanRefused("The level is between 0.5 and 0.999.")
    if not 10 <= inputs.studies <= MAX_STUDIES:
        raise PlanRefused(f"Simulate 10 to {MAX_STUDIES} studies.")


def plan(strengths, keys: list[str], tie_rate: float, inputs: PlanInputs, price) -> dict:
    """Run the planner for both allocations and price the judgments."""
    import numpy as np

    from evalstats import planner

    if len(keys) > MAX_SYSTEMS:
        raise PlanRefused(f"The planner simulates at most {MAX_SYSTEMS} systems.")
    if inputs.studies * len(keys) ** 2 > MAX_WORK:
        most = max(MAX_WORK // len(keys) ** 2, 1)
        raise PlanRefused(
            f"With {len(keys)} systems, simulate at most {most} studies (the planner's "
            "time is bounded)."
        )
    rows = {}
    for allocation in planner.ALLOCATIONS:
        study = planner.plan_study(
            np.asarray(strengths),
            tie_rate=tie_rate,
            level=inputs.level,
            allocation=allocation,
            n_studies=inputs.studies,
            max_votes=MAX_VOTES,
            growth=GROWTH,
            seed=SEED,
        )
        row = {"wrong_order_share": round(study.wrong_order_share, 4)}
        for power in planner.POWERS:
            votes = study.votes_for_power(power)
            label = f"{round(power * 100)}"
            row[f"judgments_{label}"] = votes
            row[f"cost_{label}"] = (
                None
                if votes is None or price is None
                else str((price * votes).quantize(Decimal("0.01")))
            )
        rows[allocation] = row
    ratings = planner.ELO_PER_LOG_ODDS * (np.asarray(strengths) - np.mean(strengths))
    return {
        "source": "pilot" if inputs.pilot else "assumed",
        "systems": [
            {"system": key, "rating": round(float(1000 + r), 1)}
            for key, r in sorted(zip(keys, ratings, strict=True), key=lambda kv: -kv[1])
        ],
        "tie_rate": round(float(tie_rate), 4),
        "level": inputs.level,
        "studies": inputs.studies,
        "max_judgments": MAX_VOTES,
        "price_per_judgment": None if price is None else str(price.quantize(Decimal("0.0001"))),
        "allocations": rows,
    }


def campaign_price(campaign: Campaign) -> Decimal:
    return price_per_judgment(
        campaign.provider, campaign.reward_per_batch, campaign.batch_size, campaign.redundancy
    )


def plan_for_campaign(campaign: Campaign, inputs: PlanInputs) -> dict:
    """The plan of an A/B or comparative campaign (its price per judgment with fees)."""
    from . import pairing

    check_inputs(inputs)
    if not pairing.supported(campaign):
        raise PlanRefused("The planner serves A/B and comparative campaigns.")
    tie_rate = inputs.tie_rate
    if inputs.pilot:
        counts = pairing.judged_pairs(campaign)
        judged = sum(counts.values())
        if judged < 10:
            raise PlanRefused("A pilot needs at least 10 judgments; assume a spread instead.")
        state, keys = pairing.campaign_state(campaign, pairing.item_systems(campaign))
        strengths = state.strengths
        if tie_rate is None:
            tie_rate = sum(n for (_, _, o), n in counts.items() if o == "tie") / judged
    else:
        from evalstats.planner import spread_strengths

        strengths = spread_strengths(inputs.systems, inputs.spread_elo)
        keys = [f"system {i + 1}" for i in range(inputs.systems)]
    result = plan(strengths, keys, min(tie_rate or 0.0, 0.95), inputs, campaign_price(campaign))
    result["provider"] = campaign.provider
    return result
