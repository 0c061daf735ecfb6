from dataclasses import dataclass

import pytest

from evalstats.sensitivity import count_significant


@dataclass(frozen=True)
class _Test:
    metric: str
    pvalue: float
    pvalue_adjusted: float


def test_counts_pairs_below_each_alpha_hand_worked():
    tests = [
        _Test("Emp", 0.004, 0.012),
        _Test("Emp", 0.03, 0.06),
        _Test("Emp", 0.2, 0.2),
        _Test("Red", float("nan"), float("nan")),
        _Test("Red", 0.07, 0.07),
    ]
    counts = {(c.metric, c.alpha): c for c in count_significant(tests)}
    # Adjusted Emp p-values 0.012, 0.06, 0.2: none < 0.01, one < 0.05, two < 0.1.
    assert [counts["Emp", a].n_significant for a in (0.01, 0.05, 0.1)] == [0, 1, 2]
    assert counts["Red", 0.1].n_significant == 1 and counts["Red", 0.1].n_pairs == 1
    raw = {(c.metric, c.alpha): c.n_significant for c in count_significant(tests, adjusted=False)}
    assert [raw["Emp", a] for a in (0.01, 0.05, 0.1)] == [1, 2, 2]


def test_alpha_outside_unit_interval_is_rejected():
    with pytest.raises(ValueError, match="alpha must be in"):
        count_significant([], (0.05, 1.5))
