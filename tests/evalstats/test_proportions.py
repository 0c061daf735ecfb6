import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats
from scipy.stats.contingency import chi2_contingency
from statsmodels.stats.descriptivestats import sign_test as sm_sign_test
from statsmodels.stats.proportion import proportion_confint, proportions_ztest
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW, ttest_ind

from evalstats.proportions import (
    ConfidenceInterval,
    mean_t_interval,
    one_proportion_ztest,
    sign_test,
    sign_test_from_counts,
    two_proportion_ztest,
    two_sample_t_test,
    wald_interval,
    wilson_interval,
)

counts_and_nobs = st.integers(min_value=1, max_value=2000).flatmap(
    lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
)
confidences = st.sampled_from([0.8, 0.9, 0.95, 0.99])


# --- Wilson interval -------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(counts_and_nobs, confidences)
def test_wilson_matches_statsmodels(count_nobs, confidence):
    count, nobs = count_nobs
    result = wilson_interval(count, nobs, confidence)
    low, high = proportion_confint(count, nobs, alpha=1 - confidence, method="wilson")
    assert result.confidence_interval.low == pytest.approx(low, abs=1e-12)
    assert result.confidence_interval.high == pytest.approx(high, abs=1e-12)
    assert result.proportion == count / nobs


def test_wilson_is_vectorised_and_matches_statsmodels_elementwise():
    counts = np.array([0, 3, 50, 99, 100])
    nobs = np.array([10, 10, 100, 100, 100])
    result = wilson_interval(counts, nobs)
    low, high = proportion_confint(counts, nobs, alpha=0.05, method="wilson")
    np.testing.assert_allclose(result.confidence_interval.low, low, atol=1e-12)
    np.testing.assert_allclose(result.confidence_interval.high, high, atol=1e-12)
    np.testing.assert_array_equal(result.proportion, counts / nobs)


def test_wilson_hand_worked_example():
    # 81/263, 95%: Newcombe (1998) Table I, method 3 gives 0.2553 to 0.3662.
    low, high = wilson_interval(81, 263).confidence_interval
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)


@pytest.mark.parametrize(
    ("count", "nobs", "expected"),
    [
        # Newcombe (1998) Table I, method 4 (score interval with continuity correction).
        (81, 263, (0.2535, 0.3682)),
        (15, 148, (0.0598, 0.1644)),
        (0, 20, (0.0, 0.2005)),
        (1, 29, (0.0018, 0.1963)),
    ],
)
def test_wilson_continuity_corrected_matches_newcombe_table(count, nobs, expected):
    low, high = wilson_interval(count, nobs, continuity_correction=True).confidence_interval
    assert (round(low, 4), round(high, 4)) == expected


@settings(max_examples=200, deadline=None)
@given(counts_and_nobs, confidences)
def test_wilson_continuity_corrected_matches_scipy(count_nobs, confidence):
    count, nobs = count_nobs
    result = wilson_interval(count, nobs, confidence, continuity_correction=True)
    reference = stats.binomtest(count, nobs).proportion_ci(confidence, method="wilsoncc")
    assert result.confidence_interval.low == pytest.approx(reference.low, abs=1e-12)
    assert result.confidence_interval.high == pytest.approx(reference.high, abs=1e-12)


def _inverted_score_test_bounds(count, nobs, confidence, correction):
    # Independent definition: the interval is {pi : |p - pi| - c <= z sqrt(pi (1 - pi) / n)}.
    z = stats.norm.ppf(0.5 + confidence / 2)
    p = count / nobs

    def excess(pi):
        return abs(p - pi) - correction - z * np.sqrt(pi * (1 - pi) / nobs)

    # The Wilson centre lies strictly inside both intervals: a bracket point for each root.
    centre = (count + z * z / 2) / (nobs + z * z)
    low = 0.0 if excess(0.0) <= 0 else optimize.brentq(excess, 0.0, centre, xtol=1e-14)
    high = 1.0 if excess(1.0) <= 0 else optimize.brentq(excess, centre, 1.0, xtol=1e-14)
    return low, high


@settings(max_examples=100, deadline=None)
@given(counts_and_nobs, confidences, st.booleans())
def test_wilson_bounds_invert_the_score_test(count_nobs, confidence, corrected):
    count, nobs = count_nobs
    correction = 0.5 / nobs if corrected else 0.0
    expected = _inverted_score_test_bounds(count, nobs, confidence, correction)
    result = wilson_interval(count, nobs, confidence, continuity_correction=corrected)
    assert tuple(result.confidence_interval) == pytest.approx(expected, abs=1e-9)


def test_continuity_correction_widens_the_interval():
    plain = wilson_interval(7, 40).confidence_interval
    corrected = wilson_interval(7, 40, continuity_correction=True).confidence_interval
    assert corrected.low < plain.low
    assert corrected.high > plain.high


def test_empty_sample_gives_nan_interval_but_others_are_computed():
    result = wilson_interval([0, 2], [0, 4])
    assert np.isnan(result.proportion[0])
    assert np.isnan(result.confidence_interval.low[0])
    assert np.isnan(result.confidence_interval.high[0])
    assert result.proportion[1] == 0.5
    assert 0 < result.confidence_interval.low[1] < 0.5 < result.confidence_interval.high[1]


@pytest.mark.parametrize(("count", "nobs"), [(-1, 5), (6, 5), (1, -1)])
def test_invalid_counts_are_rejected(count, nobs):
    with pytest.raises(ValueError):
        wilson_interval(count, nobs)


def test_invalid_confidence_is_rejected():
    with pytest.raises(ValueError):
        wilson_interval(1, 2, confidence=95)


# --- Wald interval ---------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(counts_and_nobs, confidences)
def test_wald_matches_statsmodels_normal(count_nobs, confidence):
    count, nobs = count_nobs
    result = wald_interval(count, nobs, confidence)
    low, high = proportion_confint(count, nobs, alpha=1 - confidence, method="normal")
    assert result.confidence_interval.low == pytest.approx(low, abs=1e-12)
    assert result.confidence_interval.high == pytest.approx(high, abs=1e-12)


def test_wald_hand_worked_example_and_clipping():
    # p = 0.2, n = 100: 0.2 -/+ 1.959964 * 0.04.
    low, high = wald_interval(20, 100).confidence_interval
    assert low == pytest.approx(0.2 - 1.959963985 * 0.04, abs=1e-9)
    assert high == pytest.approx(0.2 + 1.959963985 * 0.04, abs=1e-9)
    # p = 1/20 would give a negative lower bound without clipping.
    assert wald_interval(1, 20).confidence_interval.low == 0.0


# --- z-tests ---------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    st.integers(min_value=1, max_value=1000).flatmap(
        lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
    ),
    st.floats(min_value=0.05, max_value=0.95),
    st.sampled_from([("two-sided", "two-sided"), ("greater", "larger"), ("less", "smaller")]),
)
def test_one_proportion_ztest_matches_statsmodels_with_null_variance(
    count_nobs, null_value, alternatives
):
    count, nobs = count_nobs
    ours, theirs = alternatives
    result = one_proportion_ztest(count, nobs, null_value, alternative=ours)
    z, p = proportions_ztest(count, nobs, value=null_value, alternative=theirs, prop_var=null_value)
    assert result.statistic == pytest.approx(z, rel=1e-12, abs=1e-12)
    assert result.pvalue == pytest.approx(p, rel=1e-9, abs=1e-15)


def test_one_proportion_ztest_hand_worked_example():
    # 60 of 100 against 0.5: z = 0.1 / sqrt(0.25 / 100) = 2, p = 2 * (1 - Phi(2)) = 0.0455.
    result = one_proportion_ztest(60, 100, 0.5)
    assert result.statistic == pytest.approx(2.0, abs=1e-12)
    assert result.pvalue == pytest.approx(0.04550026, abs=1e-8)


@settings(max_examples=100, deadline=None)
@given(counts_and_nobs, st.floats(min_value=0.02, max_value=0.98))
def test_one_proportion_ztest_rejects_exactly_outside_the_wilson_interval(count_nobs, pi0):
    count, nobs = count_nobs
    low, high = wilson_interval(count, nobs, 0.95).confidence_interval
    rejected = one_proportion_ztest(count, nobs, pi0).pvalue < 0.05
    # Away from the boundary itself, where rounding decides.
    if min(abs(pi0 - low), abs(pi0 - high)) > 1e-9:
        assert rejected == (not low <= pi0 <= high)


@settings(max_examples=150, deadline=None)
@given(counts_and_nobs, counts_and_nobs)
def test_two_proportion_ztest_matches_statsmodels_and_chi_square(sample_a, sample_b):
    (x_a, n_a), (x_b, n_b) = sample_a, sample_b
    result = two_proportion_ztest(x_a, n_a, x_b, n_b)
    pooled = (x_a + x_b) / (n_a + n_b)
    if 0 < pooled < 1:
        z, p = proportions_ztest([x_a, x_b], [n_a, n_b])
        assert result.statistic == pytest.approx(z, rel=1e-10, abs=1e-12)
        assert result.pvalue == pytest.approx(p, rel=1e-8, abs=1e-15)
        table = [[x_a, n_a - x_a], [x_b, n_b - x_b]]
        chi2, chi2_p, _, _ = chi2_contingency(table, correction=False)
        assert result.statistic**2 == pytest.approx(chi2, rel=1e-8, abs=1e-10)
        assert result.pvalue == pytest.approx(chi2_p, rel=1e-6, abs=1e-12)
    else:
        assert (result.statistic, result.pvalue) == (0.0, 1.0)


def test_two_proportion_ztest_one_sided_matches_statsmodels():
    result = two_proportion_ztest(30, 100, 45, 100, alternative="less")
    z, p = proportions_ztest([30, 45], [100, 100], alternative="smaller")
    assert result.statistic == pytest.approx(z, rel=1e-12)
    assert result.pvalue == pytest.approx(p, rel=1e-10)
    assert result.pvalue < 0.05


def test_ztests_reject_bad_alternative():
    with pytest.raises(ValueError):
        one_proportion_ztest(3, 10, alternative="larger")
    with pytest.raises(ValueError):
        two_proportion_ztest(3, 10, 4, 10, alternative="both")


# --- t interval ------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(min_value=1, max_value=5), min_size=2, max_size=200),
    confidences,
)
def test_t_interval_matches_scipy_and_statsmodels(ratings, confidence):
    values = np.asarray(ratings, dtype=float)
    result = mean_t_interval(values, confidence)
    if values.std() > 0:  # scipy warns about (and mis-rounds) a constant sample
        scipy_ci = stats.ttest_1samp(values, 0.0).confidence_interval(confidence)
        assert result.confidence_interval.low == pytest.approx(scipy_ci.low, abs=1e-10)
        assert result.confidence_interval.high == pytest.approx(scipy_ci.high, abs=1e-10)
    low, high = DescrStatsW(values).tconfint_mean(alpha=1 - confidence)
    assert tuple(result.confidence_interval) == pytest.approx((low, high), abs=1e-10)
    assert result.mean == pytest.approx(values.mean(), abs=1e-12)
    assert result.df == values.size - 1


def test_t_interval_hand_worked_example():
    # 1..5: mean 3, s = sqrt(2.5), se = sqrt(0.5), t_{4, 0.975} = 2.776445.
    result = mean_t_interval([1, 2, 3, 4, 5])
    assert result.standard_error == pytest.approx(np.sqrt(0.5), abs=1e-12)
    assert result.confidence_interval.low == pytest.approx(3 - 2.7764451 * np.sqrt(0.5), abs=1e-6)
    assert result.confidence_interval.high == pytest.approx(3 + 2.7764451 * np.sqrt(0.5), abs=1e-6)


@pytest.mark.parametrize("values", [[4.0], [], [1.0, np.nan, 3.0]])
def test_t_interval_rejects_unusable_samples(values):
    with pytest.raises(ValueError):
        mean_t_interval(values)


# --- sign test -------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=0, max_value=300),
    st.integers(min_value=0, max_value=300),
    st.sampled_from(["two-sided", "greater", "less"]),
)
def test_sign_test_matches_scipy_binomtest(n_positive, n_negative, alternative):
    result = sign_test_from_counts(n_positive, n_negative, alternative)
    n = n_positive + n_negative
    if n == 0:
        assert result.pvalue == 1.0
    else:
        expected = stats.binomtest(n_positive, n, 0.5, alternative=alternative).pvalue
        assert result.pvalue == pytest.approx(expected, rel=1e-10, abs=1e-300)


def test_sign_test_on_differences_drops_ties_and_matches_statsmodels():
    differences = np.array([1.5, -0.5, 2.0, 0.0, 3.0, 1.0, 0.0, 4.0, -1.0, 2.5, 1.0, 0.5])
    result = sign_test(differences)
    assert (result.n_positive, result.n_negative, result.n_ties) == (8, 2, 2)
    _, sm_p = sm_sign_test(differences, mu0=0)
    assert result.pvalue == pytest.approx(sm_p, rel=1e-12)
    # By hand: 2 * P(X <= 2), X ~ Bin(10, 1/2) = 2 * 56 / 1024.
    assert result.pvalue == pytest.approx(112 / 1024, rel=1e-12)


def test_sign_test_rejects_non_integer_counts():
    with pytest.raises(ValueError):
        sign_test_from_counts(2.5, 3)


def test_confidence_interval_unpacks_as_low_high():
    low, high = ConfidenceInterval(0.1, 0.4)
    assert (low, high) == (0.1, 0.4)


# --- two-sample t-test -----------------------------------------------------------------------


@pytest.mark.parametrize("equal_var", [True, False])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_two_sample_t_test_matches_statsmodels_and_scipy(equal_var, alternative):
    rng = np.random.default_rng(12)
    a = rng.integers(1, 6, size=23).astype(float)
    b = rng.integers(2, 6, size=31).astype(float)
    result = two_sample_t_test(a, b, equal_var=equal_var, alternative=alternative)
    usevar = "pooled" if equal_var else "unequal"
    sm_alternative = {"two-sided": "two-sided", "greater": "larger", "less": "smaller"}
    t, p, df = ttest_ind(a, b, alternative=sm_alternative[alternative], usevar=usevar)
    assert result.statistic == pytest.approx(t, rel=1e-12)
    assert result.pvalue == pytest.approx(p, rel=1e-10)
    assert result.df == pytest.approx(df, rel=1e-12)
    scipy_result = stats.ttest_ind(a, b, equal_var=equal_var, alternative=alternative)
    assert result.pvalue == pytest.approx(scipy_result.pvalue, rel=1e-10)
    low, high = CompareMeans(DescrStatsW(a), DescrStatsW(b)).tconfint_diff(usevar=usevar)
    assert tuple(result.confidence_interval) == pytest.approx((low, high), rel=1e-12)
    assert result.mean_difference == pytest.approx(a.mean() - b.mean())
    assert result.equal_var is equal_var


def test_two_sample_t_test_hand_worked_example():
    # a = (1, 2, 3), b = (4, 5, 6): difference -3, pooled variance 1, se = sqrt(2/3),
    # t = -3 / 0.8165 = -3.6742 on 4 df.
    result = two_sample_t_test([1, 2, 3], [4, 5, 6])
    assert result.statistic == pytest.approx(-3 / np.sqrt(2 / 3))
    assert result.df == 4
    assert result.pvalue == pytest.approx(2 * stats.t.cdf(-3 / np.sqrt(2 / 3), 4))


def test_two_sample_t_test_without_variance_is_undefined_and_short_samples_fail():
    result = two_sample_t_test([3, 3], [3, 3, 3])
    assert np.isnan(result.statistic) and np.isnan(result.pvalue)
    with pytest.raises(ValueError, match="sample b needs at least two values"):
        two_sample_t_test([1, 2], [3])
