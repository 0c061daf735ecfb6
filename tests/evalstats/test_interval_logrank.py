"""Tests of evalstats.interval_logrank against lifelines' log-rank tests, scipy's one-way
ANOVA, brute-force enumeration of relabellings, Monte-Carlo permutation tests and
statsmodels' Holm/Bonferroni adjustment."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lifelines import NelsonAalenFitter
from lifelines.statistics import logrank_test, multivariate_logrank_test
from scipy import stats
from statsmodels.stats.multitest import multipletests

from evalstats.interval_logrank import interval_logrank_test, pairwise_interval_logrank
from evalstats.intervals import aggregate_intervals, spot_the_bot_intervals
from evalstats.turnbull import turnbull_npmle
from tests.evalstats.survival_data import (
    SEGMENT_LENGTHS,
    STUDY_LEFT,
    STUDY_RIGHT,
    containment,
    right_censored_sample,
    simulate_judgments,
    simulate_study_counts,
)


@pytest.mark.parametrize("ties", [True, False])
def test_hypergeometric_form_is_the_two_sample_logrank_test(ties):
    group, duration, observed = right_censored_sample(np.random.default_rng(5), 2, 60, ties=ties)
    data = aggregate_intervals(duration, np.where(observed, duration, np.inf), group)
    ours = interval_logrank_test(data.left, data.right, data.counts, variance="hypergeometric")
    a, b = group == 0, group == 1
    reference = logrank_test(duration[a], duration[b], observed[a], observed[b])
    assert ours.df == 1
    assert ours.statistic == pytest.approx(reference.test_statistic, rel=1e-10)
    assert ours.pvalue == pytest.approx(reference.p_value, rel=1e-9)


@pytest.mark.parametrize("n_groups", [3, 5])
def test_hypergeometric_form_is_the_k_sample_logrank_test(n_groups):
    group, duration, observed = right_censored_sample(np.random.default_rng(6), n_groups, 40)
    data = aggregate_intervals(duration, np.where(observed, duration, np.inf), group)
    ours = interval_logrank_test(data.left, data.right, data.counts, variance="hypergeometric")
    reference = multivariate_logrank_test(duration, group, observed)
    assert ours.df == n_groups - 1
    assert ours.statistic == pytest.approx(reference.test_statistic, rel=1e-10)
    assert ours.pvalue == pytest.approx(reference.p_value, rel=1e-9)


def test_exact_data_without_censoring_is_the_logrank_test():
    rng = np.random.default_rng(7)
    group = np.repeat([0, 1, 2], 25)
    duration = np.ceil(rng.exponential(4.0, group.size) * (1 + 0.5 * group))
    data = aggregate_intervals(duration, duration, group)
    ours = interval_logrank_test(data.left, data.right, data.counts, variance="hypergeometric")
    reference = multivariate_logrank_test(duration, group)
    assert ours.statistic == pytest.approx(reference.test_statistic, rel=1e-10)


def test_sun_scores_are_logrank_scores_on_right_censored_data():
    """Event at t: 1 - Lambda(t); censored at c: -Lambda(c), Lambda the Nelson-Aalen sum d/n."""
    group, duration, observed = right_censored_sample(np.random.default_rng(8), 2, 50)
    data = aggregate_intervals(duration, np.where(observed, duration, np.inf), group)
    result = interval_logrank_test(data.left, data.right, data.counts)
    nelson_aalen = NelsonAalenFitter(nelson_aalen_smoothing=False).fit(duration, observed)
    cumhaz = nelson_aalen.cumulative_hazard_at_times(data.left).to_numpy()
    expected = np.where(np.isfinite(data.right), 1.0, 0.0) - cumhaz
    np.testing.assert_allclose(result.scores, expected, atol=1e-9)


def test_sun_scores_match_the_interval_package_formula():
    """interval::scoresFromFit, scores="logrank1": c*_j = (S_{j-1} log S~_{j-1} - S_j log
    S~_j) / p_j with S~ = exp(-cumsum(p_j / S_{j-1})), averaged over each observation's
    intervals with weights p_j."""
    rng = np.random.default_rng(9)
    system, k, label = simulate_judgments(rng, 200, [0.2, 0.4])
    data = spot_the_bot_intervals(system, k, label)
    result = interval_logrank_test(data.left, data.right, data.counts)
    pooled = turnbull_npmle(data.left, data.right, data.counts.sum(axis=0))
    p = pooled.mass
    survival = 1 - np.concatenate([[0.0], np.cumsum(p)])
    tilde = np.exp(-np.concatenate([[0.0], np.cumsum(p / survival[:-1])]))
    with np.errstate(divide="ignore", invalid="ignore"):
        s_log = np.where(survival > 1e-12, survival * np.log(tilde), 0.0)
    interval_score = (s_log[:-1] - s_log[1:]) / p
    contains = containment(data.left, data.right, pooled.interval_left, pooled.interval_right)
    expected = (contains @ (p * interval_score)) / (contains @ p)
    np.testing.assert_allclose(result.scores, expected, atol=1e-9)


def test_both_forms_share_observed_minus_expected_on_interval_censored_data():
    """At the NPMLE the risk-set tables' hazard d_j / n_j is p_j / S_{j-1}, so the table
    form of U equals the sum of Sun's scores."""
    rng = np.random.default_rng(10)
    system, k, label = simulate_judgments(rng, 150, [0.2, 0.3, 0.5])
    data = spot_the_bot_intervals(system, k, label)
    permutation = interval_logrank_test(data.left, data.right, data.counts)
    hypergeometric = interval_logrank_test(
        data.left, data.right, data.counts, variance="hypergeometric"
    )
    np.testing.assert_allclose(
        permutation.observed_minus_expected, hypergeometric.observed_minus_expected, atol=1e-8
    )
    assert abs(permutation.observed_minus_expected.sum()) < 1e-8


def enumerate_relabellings(sizes):
    """Every assignment of ``sum(sizes)`` observations to groups 0, 1, ... of these sizes."""
    if len(sizes) == 1:
        yield np.zeros(sizes[0], dtype=int)
        return
    n = sum(sizes)
    for chosen in itertools.combinations(range(n), sizes[0]):
        rest = np.setdiff1d(np.arange(n), chosen)
        for tail in enumerate_relabellings(sizes[1:]):
            labels = np.zeros(n, dtype=int)
            labels[rest] = tail + 1
            yield labels


@pytest.mark.parametrize("group_sizes", [(5, 5), (4, 3, 2)])
def test_permutation_covariance_matches_exhaustive_relabelling(group_sizes):
    rng = np.random.default_rng(11)
    n = sum(group_sizes)
    k = rng.choice(SEGMENT_LENGTHS, n)
    spotted = rng.random(n) < 0.5
    group = np.repeat(np.arange(len(group_sizes)), group_sizes)
    data = aggregate_intervals(np.where(spotted, 0.0, k), np.where(spotted, k, np.inf), group)
    result = interval_logrank_test(data.left, data.right, data.counts)
    pair_index = [
        np.flatnonzero((data.left == a) & (data.right == b)).item()
        for a, b in zip(np.where(spotted, 0.0, k), np.where(spotted, k, np.inf), strict=True)
    ]
    individual_scores = result.scores[pair_index]
    sums = np.array(
        [
            np.bincount(labels, weights=individual_scores, minlength=len(group_sizes))
            for labels in enumerate_relabellings(group_sizes)
        ]
    )
    np.testing.assert_allclose(result.covariance, np.cov(sums.T, bias=True), atol=1e-12)


def test_permutation_statistic_equals_anova_form_of_the_scores():
    """U'V^-U = (N - 1) SS_between / SS_total of the scores; SS_between / SS_total follows
    from scipy's one-way ANOVA F as F (G-1) / (F (G-1) + N - G)."""
    rng = np.random.default_rng(12)
    system, k, label = simulate_judgments(rng, 120, [0.2, 0.25, 0.3, 0.5])
    data = spot_the_bot_intervals(system, k, label)
    result = interval_logrank_test(data.left, data.right, data.counts)
    samples = [np.repeat(result.scores, row) for row in data.counts]
    f_statistic = stats.f_oneway(*samples).statistic
    n, g = data.counts.sum(), data.counts.shape[0]
    share_between = f_statistic * (g - 1) / (f_statistic * (g - 1) + n - g)
    assert result.statistic == pytest.approx((n - 1) * share_between, rel=1e-10)
    assert result.pvalue == pytest.approx(stats.chi2.sf(result.statistic, g - 1), rel=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.permutations(range(3)))
def test_logrank_statistic_does_not_depend_on_group_order(seed, order):
    counts = simulate_study_counts(np.random.default_rng(seed), 0.25, 40, 3)
    for variance in ("permutation", "hypergeometric"):
        base = interval_logrank_test(STUDY_LEFT, STUDY_RIGHT, counts, variance=variance)
        shuffled = interval_logrank_test(
            STUDY_LEFT, STUDY_RIGHT, counts[list(order)], variance=variance
        )
        assert shuffled.statistic == pytest.approx(base.statistic, rel=1e-8, abs=1e-10)


def rejection_rates(rng, rates, n_studies=2000, n_per_system=150, alpha=0.05):
    first = simulate_study_counts(rng, rates[0], n_per_system, n_studies)
    second = simulate_study_counts(rng, rates[1], n_per_system, n_studies)
    asymptotic = {"permutation": np.empty(n_studies), "hypergeometric": np.empty(n_studies)}
    monte_carlo = np.empty(n_studies)
    for i in range(n_studies):
        counts = np.stack([first[i], second[i]])
        for variance, pvalues in asymptotic.items():
            result = interval_logrank_test(STUDY_LEFT, STUDY_RIGHT, counts, variance=variance)
            pvalues[i] = result.pvalue
        # Permutation reference: relabel observations at random (a multivariate
        # hypergeometric draw of the first system's counts) with the scores held fixed.
        scores = np.nan_to_num(result.scores)  # nan: an interval no judgment of the study has
        total = counts.sum(axis=0)
        expected = n_per_system * (total @ scores) / total.sum()
        observed = abs(first[i] @ scores - expected)
        permuted = rng.multivariate_hypergeometric(total, n_per_system, size=999) @ scores
        monte_carlo[i] = (1 + np.sum(np.abs(permuted - expected) >= observed - 1e-12)) / 1000
    return {name: p < alpha for name, p in asymptotic.items()}, monte_carlo < alpha


def test_logrank_is_calibrated_under_the_null():
    """Two systems with the same survival, Spot The Bot design: 2,000 studies of 150 judgments
    per system on segments of 2, 3 or 5 exchanges. The 5% test must reject in 3.5%-6.5%
    (+-3 binomial standard errors of 0.49 points around 5%)."""
    asymptotic, monte_carlo = rejection_rates(np.random.default_rng(13), (0.2, 0.2))
    for variance, rejected in asymptotic.items():
        assert 0.035 <= rejected.mean() <= 0.065, (variance, rejected.mean())
    assert 0.035 <= monte_carlo.mean() <= 0.065


def test_logrank_power_matches_the_permutation_reference():
    """Hazard ratio 1.5: the asymptotic test must reject as often as the Monte-Carlo
    permutation test (999 relabellings) on the same 2,000 studies, and mostly on the same
    studies. Both estimate the power of the same statistic; the permutation one needs no
    normal approximation."""
    asymptotic, monte_carlo = rejection_rates(np.random.default_rng(14), (0.2, 0.3))
    permutation = asymptotic["permutation"]
    assert monte_carlo.mean() > 0.5  # a real difference, not a second null
    assert abs(permutation.mean() - monte_carlo.mean()) <= 0.02
    assert np.mean(permutation == monte_carlo) >= 0.97
    assert abs(asymptotic["hypergeometric"].mean() - monte_carlo.mean()) <= 0.04


def test_logrank_scores_stay_aligned_with_the_input_intervals():
    counts = np.array([[5, 0, 4, 6, 0, 3], [2, 0, 7, 3, 0, 6]])
    full = interval_logrank_test(STUDY_LEFT, STUDY_RIGHT, counts)
    present = counts.sum(axis=0) > 0
    reduced = interval_logrank_test(STUDY_LEFT[present], STUDY_RIGHT[present], counts[:, present])
    assert np.isnan(full.scores[~present]).all()
    np.testing.assert_array_equal(full.scores[present], reduced.scores)
    assert full.statistic == reduced.statistic


def test_logrank_needs_two_nonempty_groups():
    with pytest.raises(ValueError, match="n_groups >= 2"):
        interval_logrank_test(STUDY_LEFT, STUDY_RIGHT, np.ones((1, 6)))
    with pytest.raises(ValueError, match="at least one observation"):
        interval_logrank_test(STUDY_LEFT, STUDY_RIGHT, np.vstack([np.ones(6), np.zeros(6)]))


@pytest.mark.parametrize("correction", ["holm", "bonferroni"])
def test_pairwise_logrank_matches_subset_tests_and_statsmodels_adjustment(correction):
    rng = np.random.default_rng(15)
    system, k, label = simulate_judgments(rng, 150, [0.2, 0.22, 0.35, 0.6])
    data = spot_the_bot_intervals(system, k, label)
    result = pairwise_interval_logrank(
        data.left, data.right, data.counts, groups=data.groups, correction=correction
    )
    assert result.pairs == tuple(itertools.combinations(range(4), 2))
    for (a, b), statistic, pvalue in zip(
        result.pairs, result.statistic, result.pvalue, strict=True
    ):
        subset = interval_logrank_test(data.left, data.right, data.counts[[a, b]])
        assert statistic == pytest.approx(subset.statistic, rel=1e-12)
        assert pvalue == pytest.approx(subset.pvalue, rel=1e-12)
    expected = multipletests(result.pvalue, method=correction)[1]
    np.testing.assert_allclose(result.pvalue_adjusted, expected, atol=1e-12)


# --- Zhao & Sun (2004): multiple-imputation variance (R glrt::gLRT, method "glrt1") ---------


@pytest.mark.parametrize("ties", [True, False])
def test_zhao_sun_on_right_censored_data_is_the_logrank_test(ties):
    group, duration, observed = right_censored_sample(np.random.default_rng(21), 2, 60, ties=ties)
    data = aggregate_intervals(duration, np.where(observed, duration, np.inf), group)
    ours = interval_logrank_test(data.left, data.right, data.counts, variance="zhao-sun")
    a, b = group == 0, group == 1
    reference = logrank_test(duration[a], duration[b], observed[a], observed[b])
    assert ours.variance == "zhao-sun"
    assert ours.statistic == pytest.approx(reference.test_statistic, rel=1e-10)
    assert ours.pvalue == pytest.approx(reference.p_value, rel=1e-9)


def test_zhao_sun_on_exact_data_is_the_k_sample_logrank_test():
    rng = np.random.default_rng(22)
    group = np.repeat([0, 1, 2], 25)
    duration = np.ceil(rng.exponential(4.0, group.size) * (1 + 0.5 * group))
    data = aggregate_intervals(duration, duration, group)
    ours = interval_logrank_test(data.left, data.right, data.counts, variance="zhao-sun")
    reference = multivariate_logrank_test(duration, group)
    assert ours.statistic == pytest.approx(reference.test_statistic, rel=1e-10)


def test_zhao_sun_keeps_the_npmle_score_and_adds_the_imputation_spread():
    """On interval-censored data U is the NPMLE risk-table U (the hypergeometric form's) and
    the imputation variance differs from the single-table one; it is reproducible by seed."""
    rng = np.random.default_rng(23)
    system, k, label = simulate_judgments(rng, 150, [0.2, 0.35])
    data = spot_the_bot_intervals(system, k, label)
    table = interval_logrank_test(data.left, data.right, data.counts, variance="hypergeometric")
    first = interval_logrank_test(data.left, data.right, data.counts, variance="zhao-sun", seed=4)
    again = interval_logrank_test(data.left, data.right, data.counts, variance="zhao-sun", seed=4)
    np.testing.assert_allclose(first.observed_minus_expected, table.observed_minus_expected)
    assert first.statistic == again.statistic
    assert not np.allclose(first.covariance, table.covariance)
    assert first.covariance[0, 0] > 0


def test_zhao_sun_is_calibrated_under_the_null():
    """Two systems with the same survival, 400 Spot The Bot studies of 100 judgments each:
    the 5% test rejects in 1.7%-8.3% (+-3 binomial standard errors)."""
    rng = np.random.default_rng(24)
    rejected = []
    for _ in range(400):
        system, k, label = simulate_judgments(rng, 100, [0.25, 0.25])
        data = spot_the_bot_intervals(system, k, label)
        result = interval_logrank_test(
            data.left, data.right, data.counts, variance="zhao-sun", imputations=20
        )
        rejected.append(result.pvalue < 0.05)
    assert 0.017 <= np.mean(rejected) <= 0.083, np.mean(rejected)


def test_zhao_sun_needs_whole_counts():
    with pytest.raises(ValueError, match="integers"):
        interval_logrank_test(STUDY_LEFT, STUDY_RIGHT, np.full((2, 6), 1.5), variance="zhao-sun")


@pytest.mark.parametrize("variance", ["permutation", "hypergeometric", "zhao-sun"])
def test_groups_never_spotted_give_no_evidence_instead_of_an_error(variance):
    """Two partners never spotted (every judgment right-censored): no event, V = 0; the
    test says p = 1 rather than failing the analysis with a singular matrix."""
    left, right = np.array([1.0, 2.0]), np.array([np.inf, np.inf])
    result = interval_logrank_test(left, right, np.array([[2, 2], [3, 1]]), variance=variance)
    assert result.statistic == 0.0 and result.pvalue == 1.0
