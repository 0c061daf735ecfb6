"""Time and money spent on a campaign, and what more data would cost.

ABC-Eval (Finch et al., 2023, section 7.5 and Appendix F) compares evaluation methods by
their cost: median minutes per dialogue and pay per task. This module summarises the
judgments of one campaign (seconds each, amount paid each) and projects the cost of reaching
a target number of judgments, or the number needed for a target interval half-width:

* a proportion's Wilson interval at proportion ``p`` has half-width
  ``z / (n + z^2) * sqrt(n p (1 - p) + z^2 / 4)``, which decreases in ``n``;
* a mean's t interval has half-width ``t_{n-1} * s / sqrt(n)``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.special import ndtri

__all__ = [
    "CostProjection",
    "CostSummary",
    "TimedJudgment",
    "cost_summary",
    "judgments_for_mean",
    "judgments_for_proportion",
    "projected_cost",
]

_MAX_JUDGMENTS = 10**9


@dataclass(frozen=True)
class TimedJudgment:
    """One judgment: the conversation judged, seconds spent, amount paid for it."""

    conversation: Hashable
    seconds: float
    paid: float = 0.0


@dataclass(frozen=True)
class CostSummary:
    """Time and cost of a campaign's judgments.

    Seconds per conversation add up the judgments of each conversation. ``judgments_per_hour``
    is one worker's throughput, 3600 / mean seconds per judgment.
    """

    n_judgments: int
    n_conversations: int
    median_seconds_per_judgment: float
    mean_seconds_per_judgment: float
    median_seconds_per_conversation: float
    mean_seconds_per_conversation: float
    judgments_per_hour: float
    amount_paid: float
    cost_per_judgment: float
    cost_per_conversation: float


@dataclass(frozen=True)
class CostProjection:
    """What reaching ``target_judgments`` costs beyond the judgments already collected."""

    target_judgments: int
    additional_judgments: int
    additional_cost: float
    additional_work_hours: float
    total_cost: float


def cost_summary(
    judgments: Iterable[TimedJudgment], *, amount_paid: float | None = None
) -> CostSummary:
    """Median and mean time per judgment and per conversation, throughput and cost.

    ``amount_paid`` overrides the sum of the judgments' ``paid`` (e.g. to include bonuses or
    platform fees). Raises ValueError for no judgments or a negative/non-finite time or pay.
    """
    seconds: list[float] = []
    paid = 0.0
    per_conversation: dict[Hashable, float] = {}
    for index, judgment in enumerate(judgments):
        for name in ("seconds", "paid"):
            value = getattr(judgment, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"judgment {index}: {name} must be finite and >= 0, got {value}")
        seconds.append(float(judgment.seconds))
        paid += float(judgment.paid)
        per_conversation[judgment.conversation] = (
            per_conversation.get(judgment.conversation, 0.0) + judgment.seconds
        )
    if not seconds:
        raise ValueError("a cost summary needs at least one judgment")
    if amount_paid is not None:
        if not math.isfinite(amount_paid) or amount_paid < 0:
            raise ValueError(f"amount_paid must be finite and >= 0, got {amount_paid}")
        paid = float(amount_paid)
    mean_seconds = float(np.mean(seconds))
    conversation_seconds = list(per_conversation.values())
    return CostSummary(
        n_judgments=len(seconds),
        n_conversations=len(per_conversation),
        median_seconds_per_judgment=float(np.median(seconds)),
        mean_seconds_per_judgment=mean_seconds,
        median_seconds_per_conversation=float(np.median(conversation_seconds)),
        mean_seconds_per_conversation=float(np.mean(conversation_seconds)),
        judgments_per_hour=3600.0 / mean_seconds if mean_seconds > 0 else math.inf,
        amount_paid=paid,
        cost_per_judgment=paid / len(seconds),
        cost_per_conversation=paid / len(per_conversation),
    )


def projected_cost(summary: CostSummary, target_judgments: int) -> CostProjection:
    """Cost and work time of the judgments still missing to reach ``target_judgments``,
    at the campaign's observed cost per judgment and mean time per judgment."""
    if int(target_judgments) != target_judgments or target_judgments < 0:
        raise ValueError(f"target_judgments must be a non-negative integer, got {target_judgments}")
    additional = max(0, int(target_judgments) - summary.n_judgments)
    additional_cost = additional * summary.cost_per_judgment
    return CostProjection(
        target_judgments=int(target_judgments),
        additional_judgments=additional,
        additional_cost=additional_cost,
        additional_work_hours=additional * summary.mean_seconds_per_judgment / 3600.0,
        total_cost=summary.amount_paid + additional_cost,
    )


def _smallest_n(half_width_of, target: float, start: int) -> int:
    """Smallest n >= start with half_width_of(n) <= target, for a decreasing function."""
    low, high = start, start
    while half_width_of(high) > target:
        low, high = high + 1, high * 2
        if high > _MAX_JUDGMENTS:
            raise ValueError(f"half-width {target} needs more than {_MAX_JUDGMENTS} judgments")
    while low < high:
        middle = (low + high) // 2
        if half_width_of(middle) <= target:
            high = middle
        else:
            low = middle + 1
    return high


def _check(half_width: float, confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if not half_width > 0.0:
        raise ValueError(f"half_width must be positive, got {half_width!r}")


def judgments_for_proportion(
    half_width: float, proportion: float = 0.5, confidence: float = 0.95
) -> int:
    """Judgments needed for a Wilson interval of at most ``half_width`` around ``proportion``.

    ``proportion`` is the expected rate (0.5, the default, is the worst case).
    """
    _check(half_width, confidence)
    if not 0.0 <= proportion <= 1.0:
        raise ValueError(f"proportion must be in [0, 1], got {proportion!r}")
    z = float(ndtri(0.5 + 0.5 * confidence))
    variance = proportion * (1.0 - proportion)

    def wilson_half_width(n: int) -> float:
        return z / (n + z * z) * math.sqrt(n * variance + z * z / 4.0)

    return _smallest_n(wilson_half_width, half_width, 1)


def judgments_for_mean(
    half_width: float, standard_deviation: float, confidence: float = 0.95
) -> int:
    """Judgments needed for a t interval of at most ``half_width`` on a mean, given the
    ratings' standard deviation (e.g. from a pilot)."""
    _check(half_width, confidence)
    if not standard_deviation > 0:
        raise ValueError(f"standard_deviation must be positive, got {standard_deviation!r}")

    def t_half_width(n: int) -> float:
        return float(stats.t.ppf(0.5 + 0.5 * confidence, n - 1)) * standard_deviation / math.sqrt(n)

    return _smallest_n(t_half_width, half_width, 2)
