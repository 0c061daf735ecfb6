"""Intervals and tests for proportions and means, as used by ABC-Eval.

ABC-Eval (Finch, Finch & Choi, 2023, "Don't Forget Your ABC's", Figures 4-8 and Table 5)
reports behaviour rates and win proportions with 95% Wilson score intervals, Likert means
with Student's t intervals, and compares bots with z-tests of proportions (behaviour rates),
t-tests (Likert ratings) and sign tests (comparative judgments). This module implements
those statistics with numpy/scipy only; no I/O, no Django.

Conventions
-----------
* ``confidence`` is the two-sided confidence level (0.95 -> z = 1.959964...).
* Interval functions are vectorised: ``count`` and ``nobs`` broadcast like numpy arrays, and
  an element with ``nobs == 0`` gets a NaN estimate and NaN bounds (there is no data to
  estimate from). Invalid input (negative counts, ``count > nobs``) raises ``ValueError``.
* ``alternative`` is ``"two-sided"``, ``"greater"`` (true value above the null) or
  ``"less"``, as in ``scipy.stats``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

# scipy.special, not scipy.stats: the normal, t and binomial functions scipy.stats calls, without
# its half-second import (issue 22: every `manage.py analyze` paid it).
from scipy.special import bdtr, bdtrc, ndtr, ndtri, stdtr, stdtrit

__all__ = [
    "ConfidenceInterval",
    "MeanInterval",
    "ProportionInterval",
    "SignTestResult",
    "TwoProportionZTestResult",
    "TwoSampleTTestResult",
    "ZTestResult",
    "mean_t_interval",
    "one_proportion_ztest",
    "sign_test",
    "sign_test_from_counts",
    "two_proportion_ztest",
    "two_sample_t_test",
    "wald_interval",
    "wilson_interval",
]

Alternative = Literal["two-sided", "greater", "less"]
_ALTERNATIVES = ("two-sided", "greater", "less")


@dataclass(frozen=True)
class ConfidenceInterval:
    """Bounds of a confidence interval (floats, or arrays for vectorised calls)."""

    low: float | np.ndarray
    high: float | np.ndarray

    def __iter__(self):
        # Lets callers write ``low, high = result.confidence_interval``.
        return iter((self.low, self.high))


@dataclass(frozen=True)
class ProportionInterval:
    """Point estimate ``count / nobs`` and its confidence interval.

    Attributes
    ----------
    proportion : float or ndarray
        ``count / nobs`` (NaN where ``nobs == 0``).
    confidence_interval : ConfidenceInterval
        Bounds, within [0, 1].
    confidence_level : float
    method : str
        ``"wilson"``, ``"wilson-cc"`` or ``"wald"``.
    """

    proportion: float | np.ndarray
    confidence_interval: ConfidenceInterval
    confidence_level: float
    method: str


@dataclass(frozen=True)
class ZTestResult:
    """One-sample z-test of a proportion: ``statistic`` is z, ``pvalue`` from N(0, 1)."""

    statistic: float
    pvalue: float
    proportion: float
    null_value: float
    alternative: str


@dataclass(frozen=True)
class TwoProportionZTestResult:
    """Pooled two-proportion z-test; ``statistic`` is z for ``proportion_a - proportion_b``."""

    statistic: float
    pvalue: float
    proportion_a: float
    proportion_b: float
    pooled_proportion: float
    alternative: str


@dataclass(frozen=True)
class MeanInterval:
    """Sample mean with its Student's t confidence interval."""

    mean: float
    standard_error: float
    df: int
    confidence_interval: ConfidenceInterval
    confidence_level: float


@dataclass(frozen=True)
class TwoSampleTTestResult:
    """Two-sample t-test of ``H0: mean_a = mean_b``; ``statistic`` is t for ``a - b``.

    ``confidence_interval`` bounds ``mean_a - mean_b`` (two-sided, whatever ``alternative``);
    ``equal_var`` tells whether the pooled (Student) or Welch test was used, ``df`` its
    (possibly fractional, Welch-Satterthwaite) degrees of freedom.
    """

    statistic: float
    pvalue: float
    df: float
    mean_a: float
    mean_b: float
    mean_difference: float
    standard_error: float
    confidence_interval: ConfidenceInterval
    confidence_level: float
    equal_var: bool
    alternative: str


@dataclass(frozen=True)
class SignTestResult:
    """Exact sign test.

    ``statistic`` is the number of positive signs; ties (zero differences) are dropped before
    testing and reported in ``n_ties``. ``pvalue`` is 1.0 when nothing is left to test.
    """

    statistic: int
    n_positive: int
    n_negative: int
    n_ties: int
    pvalue: float
    alternative: str


# --- helpers ---------------------------------------------------------------------------------


def _z_quantile(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return float(ndtri(0.5 + 0.5 * confidence))


def _check_alternative(alternative: str) -> None:
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")


def _counts_and_nobs(count: ArrayLike, nobs: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    count_arr, nobs_arr = np.broadcast_arrays(
        np.asarray(count, dtype=float), np.asarray(nobs, dtype=float)
    )
    if np.any(count_arr < 0) or np.any(nobs_arr < 0):
        raise ValueError("count and nobs must be non-negative")
    if np.any(count_arr > nobs_arr):
        raise ValueError("count must not exceed nobs")
    return count_arr, nobs_arr


def _safe_proportion(count: np.ndarray, nobs: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(nobs > 0, count / np.where(nobs > 0, nobs, 1.0), np.nan)


def _scalar_or_array(values: np.ndarray) -> float | np.ndarray:
    return float(values) if values.ndim == 0 else values


def _normal_pvalue(z: float, alternative: str) -> float:
    if alternative == "two-sided":
        return float(2.0 * ndtr(-abs(z)))
    if alternative == "greater":
        return float(ndtr(-z))
    return float(ndtr(z))


def _proportion_interval(
    count: np.ndarray,
    nobs: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    confidence: float,
    method: str,
) -> ProportionInterval:
    empty = nobs == 0
    # Rounding can push a bound a few ulps outside [0, 1]; a proportion cannot be there.
    low = np.where(empty, np.nan, np.clip(low, 0.0, 1.0))
    high = np.where(empty, np.nan, np.clip(high, 0.0, 1.0))
    return ProportionInterval(
        proportion=_scalar_or_array(_safe_proportion(count, nobs)),
        confidence_interval=ConfidenceInterval(_scalar_or_array(low), _scalar_or_array(high)),
        confidence_level=confidence,
        method=method,
    )


# --- intervals for a proportion ---------------------------------------------------------------


def wilson_interval(
    count: ArrayLike,
    nobs: ArrayLike,
    confidence: float = 0.95,
    *,
    continuity_correction: bool = False,
) -> ProportionInterval:
    """Wilson score interval for a binomial proportion (vectorised).

    With ``p = count / nobs``, ``q = 1 - p``, ``n = nobs`` and ``z`` the ``(1 + confidence)/2``
    normal quantile, the interval is the set of ``pi`` not rejected by the score test
    ``|p - pi| <= z sqrt(pi (1 - pi) / n)``::

        (2 n p + z^2 -/+ z sqrt(z^2 + 4 n p q)) / (2 (n + z^2))

    With ``continuity_correction=True`` the test is ``|p - pi| - 1/(2n) <= z sqrt(...)``,
    whose closed form (Newcombe 1998, method 4) is::

        low  = (2 n p + z^2 - 1 - z sqrt(z^2 - 2 - 1/n + 4 p (n q + 1))) / (2 (n + z^2))
        high = (2 n p + z^2 + 1 + z sqrt(z^2 + 2 - 1/n + 4 p (n q - 1))) / (2 (n + z^2))

    with ``low = 0`` when ``count == 0`` and ``high = 1`` when ``count == nobs``.

    Sources: E. B. Wilson (1927), "Probable inference, the law of succession, and statistical
    inference", JASA 22; R. G. Newcombe (1998), "Two-sided confidence intervals for the single
    proportion: comparison of seven methods", Statistics in Medicine 17. ABC-Eval uses the
    uncorrected interval (Figures 4, 5, 7).
    """
    z = _z_quantile(confidence)
    count_arr, nobs_arr = _counts_and_nobs(count, nobs)
    n = np.where(nobs_arr > 0, nobs_arr, 1.0)  # placeholder n for empty cells, masked later
    p = count_arr / n
    q = 1.0 - p
    denominator = 2.0 * (n + z * z)
    centre = 2.0 * n * p + z * z
    with np.errstate(invalid="ignore"):
        if continuity_correction:
            low = centre - 1.0 - z * np.sqrt(z * z - 2.0 - 1.0 / n + 4.0 * p * (n * q + 1.0))
            high = centre + 1.0 + z * np.sqrt(z * z + 2.0 - 1.0 / n + 4.0 * p * (n * q - 1.0))
        else:
            half_width = z * np.sqrt(z * z + 4.0 * n * p * q)
            low, high = centre - half_width, centre + half_width
    low = np.where(count_arr == 0, 0.0, low / denominator)
    high = np.where(count_arr == nobs_arr, 1.0, high / denominator)
    method = "wilson-cc" if continuity_correction else "wilson"
    return _proportion_interval(count_arr, nobs_arr, low, high, confidence, method)


def wald_interval(
    count: ArrayLike, nobs: ArrayLike, confidence: float = 0.95
) -> ProportionInterval:
    """Normal-approximation (Wald) interval ``p -/+ z sqrt(p (1 - p) / n)``, clipped to [0, 1].

    Kept for comparison with older reports: it has poor coverage near 0 and 1 and collapses to
    a single point when ``count`` is 0 or ``nobs`` (Brown, Cai & DasGupta 2001, "Interval
    estimation for a binomial proportion", Statistical Science 16). Prefer ``wilson_interval``.
    """
    z = _z_quantile(confidence)
    count_arr, nobs_arr = _counts_and_nobs(count, nobs)
    p = _safe_proportion(count_arr, nobs_arr)
    with np.errstate(invalid="ignore"):
        half_width = z * np.sqrt(p * (1.0 - p) / np.where(nobs_arr > 0, nobs_arr, 1.0))
    return _proportion_interval(
        count_arr, nobs_arr, p - half_width, p + half_width, confidence, "wald"
    )


# --- z-tests ---------------------------------------------------------------------------------


def one_proportion_ztest(
    count: int,
    nobs: int,
    null_value: float = 0.5,
    alternative: Alternative = "two-sided",
) -> ZTestResult:
    """One-sample z-test (score test) of ``H0: pi = null_value``.

    ``z = (p - pi0) / sqrt(pi0 (1 - pi0) / n)`` with ``p = count / nobs``; the standard error
    uses the null value, so the test rejects at level ``1 - c`` exactly when ``pi0`` lies
    outside the uncorrected Wilson interval at level ``c``. (statsmodels' ``proportions_ztest``
    uses the sample proportion by default; pass ``prop_var=null_value`` to get this test.)

    Source: A. Agresti (2013), Categorical Data Analysis, 3rd ed., section 1.4.1.
    """
    _check_alternative(alternative)
    if not 0.0 < null_value < 1.0:
        raise ValueError(f"null_value must be in (0, 1), got {null_value!r}")
    count_arr, nobs_arr = _counts_and_nobs(count, nobs)
    if nobs_arr <= 0:
        raise ValueError("nobs must be positive")
    proportion = float(count_arr / nobs_arr)
    z = (proportion - null_value) / np.sqrt(null_value * (1.0 - null_value) / float(nobs_arr))
    return ZTestResult(
        statistic=float(z),
        pvalue=_normal_pvalue(float(z), alternative),
        proportion=proportion,
        null_value=null_value,
        alternative=alternative,
    )


def two_proportion_ztest(
    count_a: int,
    nobs_a: int,
    count_b: int,
    nobs_b: int,
    alternative: Alternative = "two-sided",
) -> TwoProportionZTestResult:
    """Pooled z-test of ``H0: pi_a = pi_b`` (ABC-Eval's "z-test of proportions").

    ``z = (p_a - p_b) / sqrt(p (1 - p) (1/n_a + 1/n_b))`` with the pooled proportion
    ``p = (x_a + x_b) / (n_a + n_b)``; ``z^2`` equals Pearson's chi-square statistic of the
    2x2 table without continuity correction. When ``p`` is 0 or 1 both samples are identical
    (all failures or all successes): z = 0 and p-value 1 are returned rather than 0/0.

    Source: A. Agresti (2013), Categorical Data Analysis, 3rd ed., section 3.1.
    """
    _check_alternative(alternative)
    x_a, n_a = _counts_and_nobs(count_a, nobs_a)
    x_b, n_b = _counts_and_nobs(count_b, nobs_b)
    if n_a <= 0 or n_b <= 0:
        raise ValueError("both samples need nobs > 0")
    p_a, p_b = float(x_a / n_a), float(x_b / n_b)
    pooled = float((x_a + x_b) / (n_a + n_b))
    variance = pooled * (1.0 - pooled) * (1.0 / float(n_a) + 1.0 / float(n_b))
    z = 0.0 if variance == 0.0 else (p_a - p_b) / np.sqrt(variance)
    return TwoProportionZTestResult(
        statistic=float(z),
        pvalue=_normal_pvalue(float(z), alternative),
        proportion_a=p_a,
        proportion_b=p_b,
        pooled_proportion=pooled,
        alternative=alternative,
    )


# --- mean ------------------------------------------------------------------------------------


def mean_t_interval(values: ArrayLike, confidence: float = 0.95) -> MeanInterval:
    """Student's t confidence interval of a mean (ABC-Eval Figures 6 and 8, Likert ratings).

    ``mean -/+ t_{n-1, (1 + confidence)/2} * s / sqrt(n)`` with ``s`` the sample standard
    deviation (``ddof=1``). Needs at least two finite values; a zero-variance sample gives a
    zero-width interval.

    Source: "Student" (1908), "The probable error of a mean", Biometrika 6.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    sample = np.asarray(values, dtype=float).ravel()
    if sample.size < 2:
        raise ValueError("a t interval needs at least two values")
    if not np.all(np.isfinite(sample)):
        raise ValueError("values must be finite")
    df = sample.size - 1
    mean = float(sample.mean())
    standard_error = float(sample.std(ddof=1) / np.sqrt(sample.size))
    half_width = float(stdtrit(df, 0.5 + 0.5 * confidence)) * standard_error
    return MeanInterval(
        mean=mean,
        standard_error=standard_error,
        df=df,
        confidence_interval=ConfidenceInterval(mean - half_width, mean + half_width),
        confidence_level=confidence,
    )


def _finite_sample(values: ArrayLike, name: str) -> np.ndarray:
    sample = np.asarray(values, dtype=float).ravel()
    if sample.size < 2:
        raise ValueError(f"{name} needs at least two values, got {sample.size}")
    if not np.all(np.isfinite(sample)):
        raise ValueError(f"{name} values must be finite")
    return sample


def two_sample_t_test(
    a: ArrayLike,
    b: ArrayLike,
    *,
    equal_var: bool = True,
    alternative: Alternative = "two-sided",
    confidence: float = 0.95,
) -> TwoSampleTTestResult:
    """Two-sample t-test of independent samples (ABC-Eval's Likert comparisons, Table 5).

    Pooled (Student): ``se = s_p sqrt(1/n_a + 1/n_b)`` with ``df = n_a + n_b - 2``;
    ``equal_var=False`` gives Welch's test, ``se = sqrt(s_a^2/n_a + s_b^2/n_b)`` with the
    Welch-Satterthwaite ``df``. Same as ``scipy.stats.ttest_ind`` and statsmodels'
    ``ttest_ind(usevar="pooled" | "unequal")``. When both samples have zero variance the test
    is undefined: statistic and p-value are NaN (as in scipy).

    Source: B. L. Welch (1947), "The generalization of 'Student's' problem when several
    different population variances are involved", Biometrika 34.
    """
    _check_alternative(alternative)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    x, y = _finite_sample(a, "sample a"), _finite_sample(b, "sample b")
    n_a, n_b = x.size, y.size
    var_a, var_b = x.var(ddof=1), y.var(ddof=1)
    if equal_var:
        df = float(n_a + n_b - 2)
        pooled = ((n_a - 1) * var_a + (n_b - 1) * var_b) / df
        standard_error = float(np.sqrt(pooled * (1.0 / n_a + 1.0 / n_b)))
    else:
        share_a, share_b = var_a / n_a, var_b / n_b
        standard_error = float(np.sqrt(share_a + share_b))
        with np.errstate(invalid="ignore", divide="ignore"):
            df = float((share_a + share_b) ** 2 / (share_a**2 / (n_a - 1) + share_b**2 / (n_b - 1)))
    difference = float(x.mean() - y.mean())
    if standard_error == 0.0:
        statistic = pvalue = math.nan
        low = high = difference
    else:
        statistic = difference / standard_error
        if alternative == "two-sided":
            pvalue = float(2.0 * stdtr(df, -abs(statistic)))
        elif alternative == "greater":
            pvalue = float(stdtr(df, -statistic))
        else:
            pvalue = float(stdtr(df, statistic))
        half_width = float(stdtrit(df, 0.5 + 0.5 * confidence)) * standard_error
        low, high = difference - half_width, difference + half_width
    return TwoSampleTTestResult(
        statistic=float(statistic),
        pvalue=float(pvalue),
        df=df,
        mean_a=float(x.mean()),
        mean_b=float(y.mean()),
        mean_difference=difference,
        standard_error=standard_error,
        confidence_interval=ConfidenceInterval(low, high),
        confidence_level=confidence,
        equal_var=equal_var,
        alternative=alternative,
    )


# --- sign test -------------------------------------------------------------------------------


def _binomial_half_pvalue(n_positive: int, n_total: int, alternative: str) -> float:
    # Under H0 the positives are Binomial(n, 1/2); the distribution is symmetric, so the
    # two-sided p-value (sum of outcomes no more likely than the observed one) is twice the
    # smaller tail.
    if n_total == 0:
        return 1.0
    if alternative == "greater":
        return float(bdtrc(n_positive - 1, n_total, 0.5)) if n_positive > 0 else 1.0
    if alternative == "less":
        return float(bdtr(n_positive, n_total, 0.5))
    smaller_tail = bdtr(min(n_positive, n_total - n_positive), n_total, 0.5)
    return float(min(1.0, 2.0 * smaller_tail))


def sign_test_from_counts(
    n_positive: int,
    n_negative: int,
    alternative: Alternative = "two-sided",
    *,
    n_ties: int = 0,
) -> SignTestResult:
    """Exact sign test from counts of positive and negative signs (ties already removed).

    Under ``H0: P(+) = P(-)`` the number of positives among the ``n = n_positive + n_negative``
    non-tied pairs is Binomial(n, 1/2). Two-sided: ``min(1, 2 * P(X <= min(k, n - k)))``;
    ``"greater"``: ``P(X >= k)``; ``"less"``: ``P(X <= k)``. ``n_ties`` is only reported.

    Source: W. J. Conover (1999), Practical Nonparametric Statistics, 3rd ed., section 3.4.
    ABC-Eval tests its comparative (A/B) metrics with it (Table 5).
    """
    _check_alternative(alternative)
    for name, value in (("n_positive", n_positive), ("n_negative", n_negative), ("n_ties", n_ties)):
        if int(value) != value or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    n_positive, n_negative, n_ties = int(n_positive), int(n_negative), int(n_ties)
    return SignTestResult(
        statistic=n_positive,
        n_positive=n_positive,
        n_negative=n_negative,
        n_ties=n_ties,
        pvalue=_binomial_half_pvalue(n_positive, n_positive + n_negative, alternative),
        alternative=alternative,
    )


def sign_test(differences: ArrayLike, alternative: Alternative = "two-sided") -> SignTestResult:
    """Exact sign test of paired differences (``H0``: median difference is zero).

    Zero differences are ties: they are dropped (Conover's convention) and reported in
    ``n_ties``. See ``sign_test_from_counts`` for the p-value.
    """
    values = np.asarray(differences, dtype=float).ravel()
    if not np.all(np.isfinite(values)):
        raise ValueError("differences must be finite")
    return sign_test_from_counts(
        int(np.count_nonzero(values > 0)),
        int(np.count_nonzero(values < 0)),
        alternative,
        n_ties=int(np.count_nonzero(values == 0)),
    )
