import itertools
from dataclasses import dataclass

import numpy as np
import pytest
from statsmodels.stats.proportion import proportions_ztest

from evalstats.behaviour import (
    BehaviourJudgment,
    behaviour_comparisons,
    behaviour_rates,
    rate_clusters,
    rates_of,
)
from evalstats.sensitivity import count_significant, downsampled_significance


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


def _behaviour_study(seed=11):
    """Three bots x 5 conversations x 8 bot turns, one annotation, "ignore" at bot rates."""
    rng = np.random.default_rng(seed)
    judgments = []
    for system, rate in (("a", 0.15), ("b", 0.3), ("c", 0.4)):
        for c in range(5):
            conversation = f"{system}{c}"
            # Conversations differ: a draw of 3 of 5 changes the counts.
            own = np.clip(rate + rng.normal(0, 0.1), 0, 1)
            judgments += [
                BehaviourJudgment(conversation, system, t, conversation, "ignore", bool(flag))
                for t, flag in enumerate(rng.random(8) < own)
            ]
    return judgments


def test_downsampled_counts_match_every_subset_enumerated_with_statsmodels():
    judgments = _behaviour_study()
    table = rate_clusters(judgments)

    def tests_for(conversations):
        return behaviour_comparisons(rates_of(table, conversations=conversations))

    [count] = downsampled_significance(
        table.conversations_of(),
        tests_for,
        per_group=3,
        draws=3000,
        alphas=(0.05,),
        adjusted=False,
        rng=5,
    )
    # Reference: every choice of 3 conversations per bot (10^3 subsets), z-tests by statsmodels.
    by_conversation = {}
    for j in judgments:
        by_conversation.setdefault((j.system, j.conversation), []).append(j.present)
    choices = {
        system: list(itertools.combinations([f"{system}{c}" for c in range(5)], 3))
        for system in "abc"
    }
    significant = []
    for subset in itertools.product(*choices.values()):
        tallies = {}
        for system, conversations in zip("abc", subset, strict=True):
            flags = [f for c in conversations for f in by_conversation[system, c]]
            tallies[system] = (sum(flags), len(flags))
        found = 0
        for x, y in itertools.combinations("abc", 2):
            counts, nobs = zip(tallies[x], tallies[y], strict=True)
            _, p = proportions_ztest(list(counts), list(nobs))
            found += p < 0.05
        significant.append(found)
    expected = np.mean(significant)
    spread = np.std(significant) / np.sqrt(3000)
    assert (count.metric, count.n_pairs, count.per_group, count.draws) == ("ignore", 3, 3, 3000)
    assert count.mean == pytest.approx(expected, abs=4 * spread)
    assert 0 < expected < 3 and spread > 0  # the draws do vary
    assert count.minimum <= count.low <= count.mean <= count.high <= count.maximum


def test_each_draw_takes_the_same_number_of_units_of_every_group():
    drawn = []

    def tests_for(units):
        drawn.append(sorted(units))
        return [_Test("m", 0.5, 0.5)]

    units = {"x": ["x1", "x2", "x3", "x4"], "y": ["y1", "y2", "y3"], "z": ["z1", "z2"]}
    downsampled_significance(units, tests_for, per_group=2, draws=50, rng=1)
    assert len(drawn) == 50
    for chosen in drawn:
        assert [sum(u.startswith(g) for u in chosen) for g in "xyz"] == [2, 2, 2]
    assert len({tuple(chosen) for chosen in drawn}) > 10  # random, not the same subset


def test_groups_no_larger_than_the_draw_are_analysed_once_whole():
    judgments = _behaviour_study()
    table = rate_clusters(judgments)
    calls = []

    def tests_for(conversations):
        calls.append(conversations)
        return behaviour_comparisons(rates_of(table, conversations=conversations))

    counts = downsampled_significance(table.conversations_of(), tests_for, per_group=5, draws=9)
    whole = count_significant(behaviour_comparisons(behaviour_rates(judgments)))
    assert len(calls) == 1 and all(c.draws == 1 for c in counts)
    assert [(c.metric, c.alpha, c.mean, c.low, c.high) for c in counts] == [
        (w.metric, w.alpha, w.n_significant, w.n_significant, w.n_significant) for w in whole
    ]
    with pytest.raises(ValueError, match="per_group"):
        downsampled_significance({}, tests_for, per_group=0, draws=1)
