"""Tests of analysis.stats.survival against independent references.

References: lifelines (Turnbull NPMLE, Kaplan-Meier, Nelson-Aalen, log-rank tests and a
parametric interval-censored regression), scipy (isotonic regression, one-way ANOVA),
statsmodels (complementary log-log binomial GLM, Holm/Bonferroni), brute-force enumeration of
relabellings, and Monte-Carlo permutation tests.
"""

import itertools
import math

import autograd.numpy as anp
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from lifelines import KaplanMeierFitter, NelsonAalenFitter
from lifelines.fitters import ParametricRegressionFitter
from lifelines.statistics import logrank_test, multivariate_logrank_test
from scipy import stats
from scipy.optimize import isotonic_regression
from statsmodels.stats.multitest import multipletests

from analysis.stats.pairwise import BOT, HUMAN, UNSURE
from analysis.stats.survival import (
    aggregate_intervals,
    interval_cox_ph,
    interval_cox_ph_by_system,
    interval_logrank_test,
    pairwise_interval_logrank,
    spot_the_bot_intervals,
    turnbull_by_group,
    turnbull_npmle,
)

SEGMENT_LENGTHS = np.array([2.0, 3.0, 5.0])
# The six distinct Spot The Bot intervals for segment lengths 2, 3, 5: spotted within k,
# then survived past k.
STUDY_LEFT = np.array([0.0, 0.0, 0.0, 2.0, 3.0, 5.0])
STUDY_RIGHT = np.array([2.0, 3.0, 5.0, np.inf, np.inf, np.inf])
# lifelines takes closed intervals [lower, upper]; (k, inf) becomes [k + EPS, inf].
EPS = 1e-6


def simulate_judgments(rng, n_per_system, rates, lengths=SEGMENT_LENGTHS):
    """Exponential time to being spotted (rate per system), uniformly chosen segment lengths."""
    system = np.repeat(np.arange(len(rates)), n_per_system)
    k = rng.choice(lengths, system.size)
    spotted = rng.exponential(1.0 / np.asarray(rates)[system]) <= k
    not_spotted = rng.choice([HUMAN, UNSURE], system.size)
    return system, k, np.where(spotted, BOT, not_spotted)


def simulate_study_counts(rng, rate, n, size):
    """Counts of the six STUDY_LEFT/STUDY_RIGHT intervals for ``size`` simulated systems."""
    lengths = rng.multinomial(n, [1 / 3] * 3, size=size)
    spotted = rng.binomial(lengths, -np.expm1(-rate * SEGMENT_LENGTHS))
    return np.concatenate([spotted, lengths - spotted], axis=1)


def lifelines_bounds(left, right):
    """Our (left, right] intervals as the closed intervals lifelines expects."""
    return np.where(left < right, left + EPS, left), right


def containment(left, right, interval_left, interval_right):
    """alpha_ij = 1 when observation i (left < T <= right; T = left if exact) contains
    Turnbull interval j ((l, r], or the point l when l == r)."""
    lo, hi = interval_left[None, :], interval_right[None, :]
    obs_left, obs_right = left[:, None], right[:, None]
    point = lo == hi
    inside = np.where(point, obs_left < lo, obs_left <= lo) & (hi <= obs_right)
    return np.where(obs_left == obs_right, point & (lo == obs_left), inside).astype(float)


def right_censored_sample(rng, n_groups, n, *, ties=True):
    group = np.repeat(np.arange(n_groups), n)
    event_time = rng.exponential(5.0, group.size) * (1 + 0.3 * group)
    censor_time = rng.uniform(2.0, 15.0, group.size)
    if ties:
        event_time, censor_time = np.ceil(event_time), np.ceil(censor_time)
    duration = np.minimum(event_time, censor_time)
    observed = event_time <= censor_time
    return group, duration, observed


# --- data preparation ------------------------------------------------------------------------


def test_spot_the_bot_intervals_hand_example():
    system = [0, 0, 0, 1, 1]
    k = [2, 2, 3, 2, 5]
    label = [BOT, BOT, HUMAN, UNSURE, BOT]
    data = spot_the_bot_intervals(system, k, label)
    np.testing.assert_array_equal(data.left, [0, 0, 2, 3])
    np.testing.assert_array_equal(data.right, [2, 5, np.inf, np.inf])
    np.testing.assert_array_equal(data.groups, [0, 1])
    np.testing.assert_array_equal(data.counts, [[2, 0, 0, 1], [0, 1, 1, 0]])
    np.testing.assert_array_equal(data.counts_of(1), [0, 1, 1, 0])
    assert not data.counts.flags.writeable


def test_aggregation_matches_pandas_value_counts():
    rng = np.random.default_rng(0)
    system, k, label = simulate_judgments(rng, 900, [0.2, 0.3, 0.5])
    data = spot_the_bot_intervals(system, k, label)
    spotted = label == BOT
    frame = pd.DataFrame(
        {
            "system": system,
            "left": np.where(spotted, 0.0, k),
            "right": np.where(spotted, k, np.inf),
        }
    )
    expected = frame.value_counts()
    assert data.counts.sum() == len(frame)
    assert data.left.size <= 2 * SEGMENT_LENGTHS.size
    for (s, left, right), count in expected.items():
        column = np.flatnonzero((data.left == left) & (data.right == right))
        assert data.counts_of(s)[column].item() == count


@pytest.mark.parametrize(
    "label", [np.array(["bot", "human"]), np.array([BOT, 7]), np.array([0.0, 1.0])]
)
def test_bad_labels_are_rejected(label):
    with pytest.raises(ValueError, match="integer codes"):
        spot_the_bot_intervals([0, 0], [2, 3], label)


def test_invalid_intervals_are_rejected():
    with pytest.raises(ValueError, match="left <= right"):
        aggregate_intervals([3.0], [2.0])
    with pytest.raises(ValueError, match="finite"):
        aggregate_intervals([np.inf], [np.inf])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 2),
            st.integers(0, 5),
            st.sampled_from([0.0, 1.0, 2.5, np.inf]),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_aggregation_round_trips(rows):
    group = np.array([r[0] for r in rows])
    left = np.array([r[1] for r in rows], dtype=float)
    right = left + np.array([r[2] for r in rows])
    data = aggregate_intervals(left, right, group)
    for g, counts in zip(data.groups, data.counts, strict=True):
        rebuilt = sorted(
            zip(np.repeat(data.left, counts), np.repeat(data.right, counts), strict=True)
        )
        original = sorted(zip(left[group == g], right[group == g], strict=True))
        assert rebuilt == original


# --- Turnbull NPMLE --------------------------------------------------------------------------


def test_turnbull_matches_lifelines_on_spot_the_bot_data():
    rng = np.random.default_rng(1)
    system, k, label = simulate_judgments(rng, 300, [0.15, 0.3, 0.6])
    data = spot_the_bot_intervals(system, k, label)
    fits = turnbull_by_group(data)
    for group, fit in fits.items():
        counts = data.counts_of(group)
        lower, upper = lifelines_bounds(np.repeat(data.left, counts), np.repeat(data.right, counts))
        reference = KaplanMeierFitter().fit_interval_censoring(
            lower, upper, timeline=SEGMENT_LENGTHS, tol=1e-12
        )
        # The "lower" column is S just after the mass of an interval ending at t, i.e. S(t).
        expected = reference.survival_function_["NPMLE_estimate_lower"].to_numpy()
        assert fit.converged
        np.testing.assert_array_equal(fit.times, SEGMENT_LENGTHS)
        # lifelines' EM stops on a log-likelihood change of 1e-12, not at the exact optimum.
        np.testing.assert_allclose(fit.survival, expected, atol=1e-5)


@pytest.mark.parametrize("seed", [0, 2, 3])
def test_turnbull_matches_lifelines_on_general_interval_data(seed):
    """Visits at random times: the event is known to lie between two visits."""
    rng = np.random.default_rng(seed)
    event = rng.weibull(1.5, 200) * 6
    left, right = np.zeros(event.size), np.full(event.size, np.inf)
    for i, t in enumerate(event):
        visits = np.cumsum(rng.integers(1, 4, size=10)).astype(float)
        left[i] = visits[visits < t].max(initial=0.0)
        right[i] = visits[visits >= t].min(initial=np.inf)
    data = aggregate_intervals(left, right)
    fit = turnbull_npmle(data.left, data.right, data.counts[0])
    lower, upper = lifelines_bounds(left, right)
    reference = KaplanMeierFitter().fit_interval_censoring(
        lower, upper, timeline=fit.times, tol=1e-12
    )
    expected = reference.survival_function_["NPMLE_estimate_lower"].to_numpy()
    assert fit.converged and not np.isnan(fit.survival).any()
    np.testing.assert_allclose(fit.survival, expected, atol=1e-6)


def test_turnbull_equals_kaplan_meier_on_right_censored_data():
    _, duration, observed = right_censored_sample(np.random.default_rng(4), 1, 150)
    times = np.unique(duration)
    km = KaplanMeierFitter().fit(duration, observed, timeline=times)
    ours = turnbull_npmle(duration, np.where(observed, duration, np.inf), times=times)
    assert ours.converged
    np.testing.assert_allclose(ours.survival, km.survival_function_.to_numpy().ravel(), atol=1e-9)


@st.composite
def current_status_counts(draw):
    lengths = draw(st.lists(st.integers(1, 9), min_size=1, max_size=4, unique=True))
    lengths = np.sort(np.array(lengths, dtype=float))
    spotted = np.array(
        draw(st.lists(st.integers(0, 30), min_size=lengths.size, max_size=lengths.size))
    )
    survived = np.array(
        draw(st.lists(st.integers(0, 30), min_size=lengths.size, max_size=lengths.size))
    )
    survived = np.where(spotted + survived == 0, 1, survived)
    return lengths, spotted, survived


@settings(max_examples=200, deadline=None)
@given(current_status_counts())
def test_turnbull_equals_antitonic_regression_of_survived_fraction(sample):
    """Current status data: the NPMLE of S(k) is the weighted antitonic regression of the
    survived fraction on k (Groeneboom & Wellner 1992), computed here by scipy's PAVA."""
    lengths, spotted, survived = sample
    left = np.concatenate([np.zeros(lengths.size), lengths])
    right = np.concatenate([lengths, np.full(lengths.size, np.inf)])
    fit = turnbull_npmle(left, right, np.concatenate([spotted, survived]), times=lengths)
    total = spotted + survived
    reference = isotonic_regression(survived / total, weights=total, increasing=False).x
    assert fit.converged
    np.testing.assert_allclose(fit.survival, reference, atol=1e-9)


@st.composite
def general_intervals(draw):
    n = draw(st.integers(1, 30))
    left = np.array(draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)), dtype=float)
    width = np.array(
        draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0, np.inf]), min_size=n, max_size=n))
    )
    counts = np.array(draw(st.lists(st.integers(1, 5), min_size=n, max_size=n)))
    return left, left + width, counts


@settings(max_examples=200, deadline=None)
@given(general_intervals())
def test_turnbull_survival_is_a_survival_function(sample):
    left, right, counts = sample
    fit = turnbull_npmle(left, right, counts, times=np.arange(0.0, 11.0, 0.5))
    determined = fit.survival[~np.isnan(fit.survival)]
    assert fit.converged and fit.kkt_violation <= fit.tol
    assert np.all(fit.mass >= 0) and math.isclose(fit.mass.sum(), 1.0, rel_tol=1e-12)
    assert np.all((determined >= 0) & (determined <= 1))
    assert np.all(np.diff(determined) <= 1e-12)
    # Optimality: moving mass between any two intervals cannot raise the likelihood.
    contains = containment(left, right, fit.interval_left, fit.interval_right)
    for donor, receiver in itertools.product(np.flatnonzero(fit.mass > 1e-6), range(fit.mass.size)):
        moved = fit.mass.copy()
        moved[donor] -= 1e-6
        moved[receiver] += 1e-6
        with np.errstate(divide="ignore"):
            assert counts @ np.log(contains @ moved) <= fit.loglik + 1e-9


def test_turnbull_reports_iteration_cap_when_not_certified():
    lengths, spotted, survived = np.array([2.0, 3.0]), np.array([26, 26]), np.array([27, 27])
    left = np.concatenate([np.zeros(2), lengths])
    right = np.concatenate([lengths, [np.inf, np.inf]])
    counts = np.concatenate([spotted, survived])
    certified = turnbull_npmle(left, right, counts)
    impossible = turnbull_npmle(left, right, counts, tol=-1.0, max_iter=64)
    assert certified.converged and certified.n_iter <= certified.max_iter
    # Equal spotted fractions: the middle interval's optimal mass is exactly 0, where plain
    # EM only crawls; the Newton finish reaches it.
    np.testing.assert_allclose(certified.survival, [27 / 53, 27 / 53], atol=1e-12)
    assert not impossible.converged
    assert impossible.n_iter == impossible.max_iter == 64


# --- generalized log-rank test ---------------------------------------------------------------


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


# --- pairwise comparisons --------------------------------------------------------------------


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


# --- proportional hazards --------------------------------------------------------------------

FEATURES = ("fluency", "specificity", "sensibleness")


def simulate_features(rng, n, beta=(-0.6, 0.0, -0.4), baseline=(0.4, 0.7, 1.2)):
    """Preferences in {-1, 0, 1}; P(spotted by k) = 1 - exp(-H0(k) exp(x beta))."""
    k = rng.choice(SEGMENT_LENGTHS, n)
    x = rng.choice([-1.0, 0.0, 1.0], size=(n, len(beta)))
    cumhaz = np.asarray(baseline)[np.searchsorted(SEGMENT_LENGTHS, k)] * np.exp(x @ beta)
    return k, rng.random(n) < -np.expm1(-cumhaz), x


def cloglog_glm(k, spotted, x, lengths):
    design = np.column_stack([(k[:, None] == lengths[None, :]).astype(float), x])
    family = sm.families.Binomial(link=sm.families.links.CLogLog())
    return sm.GLM(spotted.astype(float), design, family=family)


@pytest.mark.parametrize(("information", "method"), [("observed", "newton"), ("expected", "IRLS")])
def test_cox_matches_cloglog_glm(information, method):
    """Per-judgment GLM: y = spotted, one indicator per segment length (log H0(k)), features.
    statsmodels' Newton fit uses the observed information, IRLS the expected one."""
    k, spotted, x = simulate_features(np.random.default_rng(16), 900)
    ours = interval_cox_ph(k, spotted, x, names=FEATURES, information=information)
    reference = cloglog_glm(k, spotted, x, SEGMENT_LENGTHS).fit(
        method=method, tol=1e-12, maxiter=200
    )
    assert ours.converged and ours.names == FEATURES and ours.n_obs == 900
    np.testing.assert_allclose(ours.coef, reference.params[3:], atol=1e-7)
    np.testing.assert_allclose(ours.se, reference.bse[3:], atol=1e-7)
    np.testing.assert_allclose(ours.log_baseline_cumhaz, reference.params[:3], atol=1e-7)
    np.testing.assert_allclose(ours.p_value, reference.pvalues[3:], rtol=1e-5, atol=1e-12)
    assert ours.loglik == pytest.approx(reference.llf, rel=1e-10)


class PiecewiseProportionalHazards(ParametricRegressionFitter):
    """H(t | x) = H0(t) exp(x beta), H0 piecewise linear with knots at 2 and 3 exchanges."""

    _fitted_parameter_names = ["beta_", "log_rate1_", "log_rate2_", "log_rate3_"]

    def _cumulative_hazard(self, params, T, Xs):
        rate = [anp.exp(Xs[f"log_rate{i}_"] @ params[f"log_rate{i}_"]) for i in (1, 2, 3)]
        baseline = (
            rate[0] * anp.clip(T, 0, 2)
            + rate[1] * anp.clip(T - 2, 0, 1)
            + rate[2] * anp.clip(T - 3, 0, np.inf)
        )
        return baseline * anp.exp(Xs["beta_"] @ params["beta_"])


def test_cox_matches_lifelines_interval_censored_regression():
    k, spotted, x = simulate_features(np.random.default_rng(16), 900)
    ours = interval_cox_ph(k, spotted, x, names=FEATURES)
    frame = pd.DataFrame(x, columns=list(FEATURES))
    frame["lower"] = np.where(spotted, 0.0, k)
    frame["upper"] = np.where(spotted, k, np.inf)
    model = PiecewiseProportionalHazards().fit_interval_censoring(
        frame,
        "lower",
        "upper",
        regressors={
            "beta_": list(FEATURES),
            "log_rate1_": "1",
            "log_rate2_": "1",
            "log_rate3_": "1",
        },
        fit_options={"gtol": 1e-8},
    )
    assert ours.baseline_monotone  # lifelines' positive rates force a monotone H0
    summary = model.summary.loc["beta_"].loc[list(FEATURES)]
    # lifelines stops BFGS at a mean-score norm of 1e-8: agreement to ~1e-6.
    np.testing.assert_allclose(ours.coef, summary["coef"], atol=1e-5)
    np.testing.assert_allclose(ours.se, summary["se(coef)"], atol=1e-5)


def test_cox_drops_segment_lengths_without_contrast():
    rng = np.random.default_rng(17)
    k, spotted, x = simulate_features(rng, 600)
    spotted = np.where(k == 5.0, True, spotted)
    ours = interval_cox_ph(k, spotted, x)
    keep = k != 5.0
    reference = cloglog_glm(k[keep], spotted[keep], x[keep], SEGMENT_LENGTHS[:2]).fit(
        method="newton", tol=1e-12
    )
    np.testing.assert_array_equal(ours.dropped_segment_lengths, [5.0])
    np.testing.assert_array_equal(ours.segment_lengths, [2.0, 3.0])
    assert ours.n_obs == keep.sum()
    np.testing.assert_allclose(ours.coef, reference.params[2:], atol=1e-7)


def test_cox_recovers_the_simulated_effects():
    """Preferred speakers survive longer: the simulated fluency and sensibleness effects are
    negative log hazard ratios of being spotted; specificity has none."""
    truth = np.array([-0.6, 0.0, -0.4])
    k, spotted, x = simulate_features(np.random.default_rng(18), 20_000, beta=tuple(truth))
    ours = interval_cox_ph(k, spotted, x, names=FEATURES)
    assert np.all(np.abs(ours.coef - truth) < 4 * ours.se)
    assert ours.p_value[0] < 1e-10 and ours.p_value[2] < 1e-10


def test_cox_by_system_fits_each_system_alone():
    rng = np.random.default_rng(19)
    k, spotted, x = simulate_features(rng, 1200)
    system = rng.integers(0, 3, k.size)
    label = np.where(spotted, BOT, UNSURE)
    fits = interval_cox_ph_by_system(system, k, label, x, names=FEATURES)
    assert sorted(fits) == [0, 1, 2]
    for s, fit in fits.items():
        alone = interval_cox_ph(k[system == s], spotted[system == s], x[system == s])
        np.testing.assert_array_equal(fit.coef, alone.coef)


def test_cox_rejects_unidentifiable_covariates():
    k, spotted, x = simulate_features(np.random.default_rng(20), 300)
    constant = np.column_stack([x[:, 0], np.ones(k.size)])
    with pytest.raises(ValueError, match="identifiable"):
        interval_cox_ph(k, spotted, constant)
