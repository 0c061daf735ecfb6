"""The proportional hazards model for interval-censored Spot The Bot judgments.

A free baseline cumulative hazard at each segment length, fitted to the interval-censored
likelihood (for current status data this is a complementary log-log binomial GLM), with
the judges' feature preferences as covariates (Deriu et al. 2020, section 4.2). Pure
numpy/scipy: no I/O, no Django.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import optimize
from scipy.special import ndtr

from evalstats.intervals import (
    read_only_array,
    segment_lengths,
    spotted_mask,
    unique_rows,
)
from evalstats.pairwise import BOT

__all__ = ["IntervalCoxResult", "interval_cox_ph", "interval_cox_ph_by_system"]


Information = Literal["observed", "expected"]


@dataclass(frozen=True, eq=False)
class IntervalCoxResult:
    r"""Proportional hazards fit to Spot The Bot current status data.

    ``coef[f]`` is the log hazard ratio of being spotted per unit of covariate ``f``
    (preferences coded +1 / 0 / -1: a negative coefficient means the speaker survives
    longer when it is preferred on that feature); ``se`` from the inverse ``information``
    matrix; ``z = coef / se``; ``p_value`` two-sided Wald.

    ``segment_lengths`` and ``log_baseline_cumhaz`` give :math:`\log \hat H_0(k)` at each
    segment length used; segment lengths where every or no speaker was spotted carry no
    information on the coefficients (their :math:`\hat H_0` is infinite or zero) and are
    listed in ``dropped_segment_lengths`` instead. ``baseline_monotone`` reports whether the
    free estimates of :math:`H_0` came out non-decreasing, as a cumulative hazard must.
    """

    names: tuple[str, ...]
    coef: np.ndarray
    se: np.ndarray
    z: np.ndarray
    p_value: np.ndarray
    hazard_ratio: np.ndarray
    segment_lengths: np.ndarray
    log_baseline_cumhaz: np.ndarray
    dropped_segment_lengths: np.ndarray
    baseline_monotone: bool
    loglik: float
    n_obs: int
    information: str
    converged: bool
    n_iter: int


def _cloglog_loglik_parts(
    eta: np.ndarray, spotted: np.ndarray, total: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """Binomial log-likelihood with P(spotted) = 1 - exp(-exp(eta)) and its eta-derivatives.

    Returns the log-likelihood, the score d l / d eta, minus the observed second derivative
    and the expected information per row (all per unit of eta).
    """
    hazard = np.exp(eta)
    prob = -np.expm1(-hazard)
    loglik = float(spotted @ np.log(prob) - (total - spotted) @ hazard)
    score = hazard * (spotted / prob - total)
    expected = total * hazard**2 * (1.0 - prob) / prob
    observed = spotted * hazard**2 * (1.0 - prob) / prob**2 - score
    return loglik, score, observed, expected


def interval_cox_ph(
    segment_length: npt.ArrayLike,
    spotted: npt.ArrayLike,
    covariates: npt.ArrayLike,
    *,
    names: Sequence[str] | None = None,
    information: Information = "observed",
    tol: float = 1e-9,
    max_iter: int = 200,
) -> IntervalCoxResult:
    r"""Cox proportional hazards model for current status data, fitted by maximum likelihood.

    Model: :math:`S(t \mid x) = \exp(-H_0(t)\, e^{x^\top\beta})`. A judgment on a segment of
    ``k`` exchanges is the interval :math:`(0, k]` if spotted, :math:`(k, \infty)` if not, so
    its likelihood is :math:`1 - S(k \mid x)` or :math:`S(k \mid x)`: only :math:`H_0` at the
    segment lengths enters, and it is left free (a piecewise-constant baseline hazard between
    consecutive segment lengths, as in Deriu et al.'s use of Cox (1972) per system).

    Equivalently, with :math:`y = 1` if spotted,
    :math:`\mathrm{cloglog}\, P(y = 1) = \log(-\log(1 - P)) = \alpha_k + x^\top\beta` with
    :math:`\alpha_k = \log H_0(k)`: a binomial GLM with complementary log-log link, one
    indicator column per distinct segment length (no global intercept) plus the covariates,
    e.g. ``sm.GLM(y, X, family=sm.families.Binomial(link=sm.families.links.CLogLog()))``.
    Identical ``(k, x)`` rows are pooled into binomial counts before fitting (same
    likelihood). Maximised with ``scipy.optimize.minimize(method="trust-exact")``; the
    log-likelihood is concave in :math:`(\alpha, \beta)`.

    Converged means every score component is at most ``tol * n_obs`` in absolute value.
    ``information="observed"`` (default) takes standard errors from the observed information
    (minus the Hessian, like statsmodels' Newton fit and lifelines);
    ``"expected"`` from the Fisher information (statsmodels' default IRLS fit).
    """
    k, spotted, x, names = _checked_inputs(segment_length, spotted, covariates, names)
    if information not in ("observed", "expected"):
        raise ValueError("information must be 'observed' or 'expected'")
    pooled = _pooled_design(k, spotted, x)
    # The score is a sum over observations, so its attainable precision scales with n.
    gradient_tol = tol * pooled.total.sum()
    solution = _maximise_likelihood(pooled, x.shape[1], gradient_tol, max_iter)
    theta = solution.x
    design, events, total = pooled.design, pooled.events, pooled.total
    loglik, score, observed, expected = _cloglog_loglik_parts(design @ theta, events, total)
    weights = observed if information == "observed" else expected
    covariance = np.linalg.inv((design * weights[:, None]).T @ design)
    n_alpha = pooled.lengths_used.size
    coef = theta[n_alpha:]
    se = np.sqrt(np.diag(covariance)[n_alpha:])
    z = coef / se
    alpha = theta[:n_alpha]
    return IntervalCoxResult(
        names=names,
        coef=read_only_array(coef),
        se=read_only_array(se),
        z=read_only_array(z),
        p_value=read_only_array(2.0 * ndtr(-np.abs(z))),
        hazard_ratio=read_only_array(np.exp(coef)),
        segment_lengths=read_only_array(pooled.lengths_used),
        log_baseline_cumhaz=read_only_array(alpha),
        dropped_segment_lengths=read_only_array(pooled.dropped),
        baseline_monotone=bool(np.all(np.diff(alpha) >= 0)),
        loglik=loglik,
        n_obs=pooled.n_obs,
        information=information,
        converged=bool(np.max(np.abs(design.T @ score)) <= gradient_tol),
        n_iter=int(solution.nit),
    )


def _checked_inputs(segment_length, spotted, covariates, names):
    """The inputs as arrays (covariates as a 2-d matrix) with a name per column."""
    k = segment_lengths(segment_length)
    spotted = np.asarray(spotted)
    if spotted.dtype != bool:
        raise ValueError("spotted must be a boolean array")
    x = np.asarray(covariates, dtype=float)
    x = x[:, None] if x.ndim == 1 else x
    if not (k.shape == spotted.shape and x.shape[0] == k.size and x.ndim == 2):
        raise ValueError("segment_length, spotted and covariate rows must match")
    if not np.isfinite(x).all():
        raise ValueError("covariates must be finite")
    names = tuple(f"x{i}" for i in range(x.shape[1])) if names is None else tuple(names)
    if len(names) != x.shape[1]:
        raise ValueError("one name per covariate column")
    return k, spotted, x, names


@dataclass(frozen=True, eq=False)
class _PooledDesign:
    """Identical (segment length, covariates) rows pooled into binomial counts."""

    design: np.ndarray  # one indicator column per segment length used, then the covariates
    length_column: np.ndarray  # each pattern's segment length, as a column index
    events: np.ndarray
    total: np.ndarray
    lengths_used: np.ndarray
    dropped: np.ndarray
    n_obs: int


def _pooled_design(k: np.ndarray, spotted: np.ndarray, x: np.ndarray) -> _PooledDesign:
    """The GLM design; segment lengths where everyone or no one was spotted carry no
    information about the coefficients and are dropped."""
    lengths, length_index = np.unique(k, return_inverse=True)
    spotted_share = np.bincount(length_index, weights=spotted) / np.bincount(length_index)
    informative = (spotted_share > 0) & (spotted_share < 1)
    keep = informative[length_index]
    lengths_used = lengths[informative]
    rows = np.column_stack([np.searchsorted(lengths_used, k[keep]), x[keep]])
    patterns, pattern_index = unique_rows(rows)
    total = np.bincount(pattern_index, minlength=len(patterns)).astype(float)
    events = np.bincount(pattern_index, weights=spotted[keep], minlength=len(patterns))
    design = np.column_stack(
        [patterns[:, 0][:, None] == np.arange(lengths_used.size)[None, :], patterns[:, 1:]]
    ).astype(float)
    if lengths_used.size == 0 or np.linalg.matrix_rank(design) < design.shape[1]:
        raise ValueError(
            "coefficients not identifiable: need a segment length with both outcomes and "
            "covariates that vary independently of the segment length"
        )
    return _PooledDesign(
        design=design,
        length_column=patterns[:, 0].astype(int),
        events=events,
        total=total,
        lengths_used=lengths_used,
        dropped=lengths[~informative],
        n_obs=int(keep.sum()),
    )


def _maximise_likelihood(
    pooled: _PooledDesign, n_covariates: int, gradient_tol: float, max_iter: int
) -> optimize.OptimizeResult:
    """Trust-region Newton on the concave log-likelihood, started from the per-length
    spotted shares with no covariate effect."""
    design, events, total = pooled.design, pooled.events, pooled.total

    def negative(theta: np.ndarray) -> tuple[float, np.ndarray]:
        loglik, score, _, _ = _cloglog_loglik_parts(design @ theta, events, total)
        return -loglik, -(design.T @ score)

    def negative_hessian(theta: np.ndarray) -> np.ndarray:
        _, _, observed, _ = _cloglog_loglik_parts(design @ theta, events, total)
        return (design * observed[:, None]).T @ design

    share = np.clip(
        np.bincount(pooled.length_column, weights=events)
        / np.bincount(pooled.length_column, weights=total),
        1e-6,
        1 - 1e-6,
    )
    start = np.concatenate([np.log(-np.log1p(-share)), np.zeros(n_covariates)])
    return optimize.minimize(
        negative,
        start,
        jac=True,
        hess=negative_hessian,
        method="trust-exact",
        options={"gtol": gradient_tol, "maxiter": max_iter},
    )


def interval_cox_ph_by_system(
    system: npt.ArrayLike,
    segment_length: npt.ArrayLike,
    label: npt.ArrayLike,
    covariates: npt.ArrayLike,
    *,
    names: Sequence[str] | None = None,
    bot_label: int = BOT,
    information: Information = "observed",
) -> dict[object, IntervalCoxResult]:
    """:func:`interval_cox_ph` for every system separately (Deriu et al. 2020, Table 2).

    ``covariates[i]`` are the feature preferences of judgment ``i`` from the point of view
    of the judged speaker: +1 it was better, 0 no difference, -1 the other speaker was better.
    """
    system = np.asarray(system)
    k = segment_lengths(segment_length)
    spotted = spotted_mask(label, bot_label)
    x = np.asarray(covariates, dtype=float)
    if not (system.shape == k.shape == spotted.shape) or x.shape[0] != system.size:
        raise ValueError("system, segment_length, label and covariates must align")
    return {
        s.item() if isinstance(s, np.generic) else s: interval_cox_ph(
            k[system == s],
            spotted[system == s],
            x[system == s],
            names=names,
            information=information,
        )
        for s in np.unique(system)
    }
