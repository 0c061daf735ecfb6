from collections import Counter

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import accuracy_score, cohen_kappa_score

from evalstats.bradley_terry import fit_bradley_terry
from evalstats.judges import (
    alpha_with_judge,
    bradley_terry_comparison,
    convergence,
    kappa_with_majority,
    ranking_correlation,
    system_mean,
)
from evalstats.pairwise import win_count_matrices


def _labels(seed=3, n_items=60):
    rng = np.random.default_rng(seed)
    humans, judge = {}, {}
    for item in range(n_items):
        truth = int(rng.integers(1, 6))
        humans[item] = [int(np.clip(truth + rng.choice([-1, 0, 0, 1]), 1, 5)) for _ in range(3)]
        judge[item] = int(np.clip(truth + rng.choice([-1, 0, 0, 0, 1]), 1, 5))
    return humans, judge


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_with_majority_matches_sklearn(weights):
    humans, judge = _labels()
    humans[1000] = [1, 2]  # tied majority: left out
    judge[1000] = 1
    humans[1001] = [3, 3]  # no judge label: missing
    result = kappa_with_majority(humans, judge, labels=[1, 2, 3, 4, 5], weights=weights)
    majority, judged = [], []
    for item, given in humans.items():
        counts = Counter(given).most_common()
        if item in judge and (len(counts) == 1 or counts[0][1] > counts[1][1]):
            majority.append(counts[0][0])
            judged.append(judge[item])
    expected = cohen_kappa_score(majority, judged, labels=[1, 2, 3, 4, 5], weights=weights)
    assert result.kappa.statistic == pytest.approx(expected, rel=1e-12)
    assert result.kappa.n_items == len(majority)
    # Three different labels from three humans (or item 1000's 1-1 split) have no majority.
    assert result.n_tied_majority == sum(
        1 for i, g in humans.items() if i in judge and len(Counter(g)) == len(g)
    )
    assert result.n_missing == 1


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_with_judge_matches_krippendorff(level):
    humans, judge = _labels()
    by_annotator = {
        item: {f"w{k}": v for k, v in enumerate(given)} for item, given in humans.items()
    }
    del by_annotator[5]["w2"]
    del by_annotator[6]["w1"], by_annotator[6]["w2"]  # one human value: in neither alpha
    result = alpha_with_judge(by_annotator, judge, level)
    items = sorted(i for i in by_annotator if i != 6 and i in judge)
    assert result.n_items == len(items)
    matrix = np.array(
        [[by_annotator[i].get(f"w{k}", np.nan) for i in items] for k in range(3)]
        + [[judge[i] for i in items]],
        dtype=float,
    )
    assert result.humans.statistic == pytest.approx(
        krippendorff.alpha(reliability_data=matrix[:3], level_of_measurement=level), rel=1e-10
    )
    assert result.with_judge.statistic == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement=level), rel=1e-10
    )


def test_alpha_with_judge_codes_nominal_strings_on_the_humans_items():
    humans = {1: {"a": "good", "b": "good"}, 2: {"a": "bad", "b": "bad"}, 3: {"a": "good"}}
    result = alpha_with_judge(humans, {1: "good", 2: "good", 3: "bad"})
    assert result.humans.statistic == pytest.approx(1.0)
    # Item 3 has one human label: the humans' alpha leaves it out, so the judge's does too.
    matrix = np.array([[0, 1], [0, 1], [0, 0]], dtype=float)
    # Coded good = 0, bad = 1; rows a, b, judge.
    assert result.with_judge.statistic == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    )
    assert result.n_items == 2 == result.humans.n_units == result.with_judge.n_units
    with pytest.raises(ValueError, match="no item has two human values"):
        alpha_with_judge({3: {"a": "good"}}, {3: "bad"})


def _system_scores(seed=8):
    rng = np.random.default_rng(seed)
    centres = {"a": 2.0, "b": 2.6, "c": 3.1, "d": 3.5, "e": 4.0}
    human, judge = {}, {}
    for system, centre in centres.items():
        n = int(rng.integers(15, 25))
        h = centre + rng.normal(0, 0.8, n)
        human[system] = {f"{system}{k}": float(v) for k, v in enumerate(h)}
        judge[system] = {f"{system}{k}": float(v + rng.normal(0, 0.6)) for k, v in enumerate(h)}
    return human, judge


def test_ranking_correlation_matches_scipy_point_estimates_and_bootstrap():
    human, judge = _system_scores()
    result = ranking_correlation(human, judge, n_resamples=300, rng=11)
    h = np.array([np.mean(list(human[s].values())) for s in result.systems])
    j = np.array([np.mean(list(judge[s].values())) for s in result.systems])
    assert result.spearman == pytest.approx(stats.spearmanr(h, j).statistic)
    assert result.kendall == pytest.approx(stats.kendalltau(h, j).statistic)

    hs = [np.array(list(human[s].values())) for s in result.systems]
    js = [np.array(list(judge[s].values())) for s in result.systems]

    def reference(*indices):
        means_h = [x[i].mean() for x, i in zip(hs, indices, strict=True)]
        means_j = [x[i].mean() for x, i in zip(js, indices, strict=True)]
        return stats.spearmanr(means_h, means_j).statistic

    expected = stats.bootstrap(
        tuple(np.arange(x.size) for x in hs),
        reference,
        vectorized=False,
        paired=False,
        n_resamples=300,
        method="percentile",
        rng=11,
    )
    assert result.spearman_low == pytest.approx(expected.confidence_interval.low)
    assert result.spearman_high == pytest.approx(expected.confidence_interval.high)
    assert result.kendall_low <= result.kendall <= result.kendall_high


def test_ranking_correlation_with_ties_matches_scipy():
    human = {"a": {1: 1.0}, "b": {2: 2.0}, "c": {3: 2.0}, "d": {4: 4.0}}
    judge = {"a": {1: 1.0}, "b": {2: 3.0}, "c": {3: 2.0}, "d": {4: 3.0}}
    result = ranking_correlation(human, judge, n_resamples=20)
    h, j = [1, 2, 2, 4], [1, 3, 2, 3]
    assert result.spearman == pytest.approx(stats.spearmanr(h, j).statistic)
    assert result.kendall == pytest.approx(stats.kendalltau(h, j).statistic)
    # One conversation per system cannot be resampled.
    assert np.isnan(result.spearman_low) and np.isnan(result.kendall_high)


def test_convergence_reaches_the_target_ranking_as_dialogues_grow():
    human, judge = _system_scores()
    target = {s: np.mean(list(v.values())) for s, v in human.items()}
    scores = {s: list(v.values()) for s, v in judge.items()}
    smallest = min(len(v) for v in scores.values())
    points = convergence(scores, target, [1, 5, smallest], n_repeats=300, rng=2)
    assert [p.n_dialogues for p in points] == [1, 5, smallest]
    assert points[0].spearman_mean < points[1].spearman_mean <= points[2].spearman_mean + 1e-12
    assert points[0].spearman_low < points[0].spearman_high
    # With every dialogue of the smallest system, only the other systems vary.
    assert points[2].spearman_low <= points[2].spearman_mean <= points[2].spearman_high
    full = {s: v[:smallest] for s, v in scores.items()}
    (exact,) = convergence(full, target, [smallest], n_repeats=5)
    expected = stats.spearmanr(
        [np.mean(full[s]) for s in sorted(full)], [target[s] for s in sorted(full)]
    ).statistic
    assert exact.spearman_low == exact.spearman_high == pytest.approx(expected)


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="at least two systems"):
        ranking_correlation({"a": {1: 1.0}}, {"a": {1: 1.0}})
    with pytest.raises(ValueError, match="system 'b' has no conversation scored by both"):
        ranking_correlation({"a": {1: 1.0}, "b": {2: 1.0}}, {"a": {1: 1.0}, "b": {3: 1.0}})
    with pytest.raises(ValueError, match="size 9 must be between 1 and 2"):
        convergence({"a": [1, 2], "b": [3, 4]}, {"a": 1, "b": 2}, [9])


def test_convergence_of_a_judge_that_ranks_every_system_alike_is_undefined(recwarn):
    scores = {"a": [1.0, 1.0, 1.0], "b": [1.0, 1.0, 1.0], "c": [1.0, 1.0, 1.0]}
    (point,) = convergence(scores, {"a": 1.0, "b": 2.0, "c": 3.0}, [2], n_repeats=10)
    assert np.isnan(point.spearman_mean) and np.isnan(point.kendall_high)
    assert point.n_dialogues == 2 and point.n_repeats == 10
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_a_system_mean_does_not_depend_on_the_order_of_its_scores():
    # 0.1 + 0.4 + 0.2 and 0.1 + 0.2 + 0.4 differ in floating point; their means must not.
    assert system_mean([0.1, 0.4, 0.2]) == system_mean([0.1, 0.2, 0.4]) == system_mean([0.7 / 3])
    assert np.mean([0.1, 0.4, 0.2]) != np.mean([0.1, 0.2, 0.4])  # what a plain mean does
    with pytest.raises(ValueError, match="at least one score"):
        system_mean([])


def test_ranking_correlation_of_tied_systems_is_scipys_on_its_means():
    humans = {"A": {"a3": 0.9, "a1": 0.9, "a2": 0.9}, "B": {"b1": 0.5}, "C": {"c1": 0.1}}
    judge = {"A": {"a3": 0.1, "a1": 0.4, "a2": 0.2}, "B": {"b1": 0.7 / 3}, "C": {"c1": 0.0}}
    result = ranking_correlation(humans, judge, n_resamples=50)
    assert result.judge_means[0] == result.judge_means[1]
    assert result.spearman == pytest.approx(
        stats.spearmanr(result.human_means, result.judge_means).statistic, rel=1e-12
    )
    assert result.kendall == pytest.approx(
        stats.kendalltau(result.human_means, result.judge_means).statistic, rel=1e-12
    )


# --- raw agreement and Bradley-Terry ratings of battles (arenas) -----------------------------


def test_raw_agreement_with_the_majority_matches_sklearns_accuracy():
    humans, judge = _labels(seed=11)
    humans[1000] = [1, 2]  # tied: out of kappa and of the raw agreement alike
    judge[1000] = 1
    result = kappa_with_majority(humans, judge, labels=[1, 2, 3, 4, 5])
    majority, judged = [], []
    for item, given in humans.items():
        counts = Counter(given).most_common()
        if len(counts) == 1 or counts[0][1] > counts[1][1]:
            majority.append(counts[0][0])
            judged.append(judge[item])
    assert result.observed == pytest.approx(accuracy_score(majority, judged), rel=1e-12)


def test_raw_agreement_and_kappa_of_one_voter_per_battle_by_hand():
    # Votes and verdicts mapped as docs/human-vs-automatic.md says: both_bad is a tie.
    votes = {1: ["a"], 2: ["a"], 3: ["b"], 4: ["tie"], 5: ["tie"], 6: ["b"]}
    judge = {1: "a", 2: "b", 3: "b", 4: "tie", 5: "a", 6: "b"}
    result = kappa_with_majority(votes, judge)
    # 4 of 6 agree; chance: humans a 2/6, b 2/6, tie 2/6; judge a 2/6, b 3/6, tie 1/6.
    chance = (2 * 2 + 2 * 3 + 2 * 1) / 36
    assert result.observed == pytest.approx(4 / 6)
    assert result.kappa.statistic == pytest.approx((4 / 6 - chance) / (1 - chance))
    assert result.kappa.statistic == pytest.approx(
        cohen_kappa_score([v[0] for v in votes.values()], list(judge.values()))
    )


def test_raw_agreement_without_items_is_undefined():
    assert np.isnan(kappa_with_majority({1: ["a", "b"]}, {1: "a"}).observed)


def _battles(seed, n=400, n_systems=5):
    rng = np.random.default_rng(seed)
    strength = np.linspace(-1, 1, n_systems)
    a = rng.integers(0, n_systems, n)
    b = (a + rng.integers(1, n_systems, n)) % n_systems
    p = 1 / (1 + np.exp(strength[b] - strength[a]))
    human = np.where(rng.random(n) < 0.1, -1, np.where(rng.random(n) < p, 0, 1))
    judge = np.where(rng.random(n) < 0.8, human, rng.choice([-1, 0, 1], n))
    return a, b, human, judge, n_systems


def test_bradley_terry_comparison_fits_each_side_and_correlates_as_scipy():
    a, b, human, judge, n = _battles(seed=5)
    result = bradley_terry_comparison(a, b, human, judge, n)
    for outcome, ratings in ((human, result.human_ratings), (judge, result.judge_ratings)):
        wins, ties = win_count_matrices(a, b, outcome, n)
        np.testing.assert_allclose(ratings, fit_bradley_terry(wins, ties).ratings, atol=1e-8)
    assert result.spearman == pytest.approx(
        stats.spearmanr(result.human_ratings, result.judge_ratings).statistic, rel=1e-12
    )
    assert result.kendall == pytest.approx(
        stats.kendalltau(result.human_ratings, result.judge_ratings).statistic, rel=1e-12
    )
    assert result.n_battles == 400 and result.warnings == ()


def test_bradley_terry_comparison_of_a_judge_that_reverses_every_verdict():

    a, b, human, _, n = _battles(seed=8)
    reversed_ = np.where(human == -1, -1, 1 - human)
    result = bradley_terry_comparison(a, b, human, reversed_, n)
    assert result.spearman == pytest.approx(-1.0) and result.kendall == pytest.approx(-1.0)


def test_bradley_terry_comparison_refuses_bad_input():

    with pytest.raises(ValueError, match="both outcomes"):
        bradley_terry_comparison([0], [1], [0], [], 2)
    with pytest.raises(ValueError, match="at least two systems"):
        bradley_terry_comparison([], [], [], [], 1)
