import math

import pytest
from statsmodels.stats.proportion import proportion_confint

from evalstats.cost import (
    TimedJudgment,
    cost_summary,
    judgments_for_mean,
    judgments_for_proportion,
    projected_cost,
)


def _judgments():
    # c1: 60 + 120 s, c2: 90 s, c3: 30 + 30 + 30 s; 0.50 paid each.
    return [
        TimedJudgment("c1", 60, 0.5),
        TimedJudgment("c1", 120, 0.5),
        TimedJudgment("c2", 90, 0.5),
        TimedJudgment("c3", 30, 0.5),
        TimedJudgment("c3", 30, 0.5),
        TimedJudgment("c3", 30, 0.5),
    ]


def test_summary_hand_worked():
    """Seconds 30, 30, 30, 60, 90, 120: median 45, mean 60 -> 60 judgments per hour.
    Per conversation 180, 90, 90: median 90, mean 120. Paid 6 x 0.50 = 3.00: 0.50 per
    judgment, 1.00 per conversation."""
    summary = cost_summary(_judgments())
    assert (summary.n_judgments, summary.n_conversations) == (6, 3)
    assert summary.median_seconds_per_judgment == 45
    assert summary.mean_seconds_per_judgment == 60
    assert summary.median_seconds_per_conversation == 90
    assert summary.mean_seconds_per_conversation == 120
    assert summary.judgments_per_hour == 60
    assert (summary.amount_paid, summary.cost_per_judgment) == (3.0, 0.5)
    assert summary.cost_per_conversation == 1.0
    assert cost_summary(_judgments(), amount_paid=4.2).cost_per_judgment == pytest.approx(0.7)


def test_projection_hand_worked():
    """To reach 100 judgments: 94 more at 0.50 = 47.00, at 60 s each = 94 minutes."""
    projection = projected_cost(cost_summary(_judgments()), 100)
    assert projection.additional_judgments == 94
    assert projection.additional_cost == pytest.approx(47.0)
    assert projection.additional_work_hours == pytest.approx(94 / 60)
    assert projection.total_cost == pytest.approx(50.0)
    assert projected_cost(cost_summary(_judgments()), 3).additional_judgments == 0


def test_judgments_for_proportion_hand_worked_and_statsmodels():
    """At p = 1/2 the Wilson half-width is (z/2) / sqrt(n + z^2); <= 0.05 needs
    n >= (z / 0.1)^2 - z^2 = 384.15 - 3.84 = 380.3, so 381 (the Wald formula says 385)."""
    n = judgments_for_proportion(0.05)
    assert n == 381
    for size, fits in ((n, True), (n - 1, False)):
        low, high = proportion_confint(size / 2, size, method="wilson")
        assert ((high - low) / 2 <= 0.05) is fits
    assert judgments_for_proportion(0.05, proportion=0.1) < n


def test_judgments_for_mean_hand_worked():
    """s = 1, half-width 0.2: the normal approximation gives (1.96 / 0.2)^2 = 96.04; with t,
    n = 98 gives t_97 / sqrt(98) = 1.9847 / 9.8995 = 0.2005 > 0.2 and n = 99 gives
    1.9845 / 9.9499 = 0.19945, so 99."""
    assert judgments_for_mean(0.2, 1.0) == 99


def test_invalid_input_is_rejected():
    with pytest.raises(ValueError, match="judgment 1: seconds must be finite"):
        cost_summary([TimedJudgment("a", 1), TimedJudgment("b", -1)])
    with pytest.raises(ValueError, match="judgment 0: paid must be finite"):
        cost_summary([TimedJudgment("a", 1, math.nan)])
    with pytest.raises(ValueError, match="at least one judgment"):
        cost_summary([])
    with pytest.raises(ValueError, match="half_width must be positive"):
        judgments_for_proportion(0)
    with pytest.raises(ValueError, match="target_judgments must be"):
        projected_cost(cost_summary(_judgments()), 2.5)
