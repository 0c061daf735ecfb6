"""Style-controlled Bradley-Terry: ratings with answer length and markdown held equal.

Chatbot Arena's style control (LMSYS blog "Does style matter? Disentangling style and
substance in Chatbot Arena", August 2024; FastChat ``fastchat/serve/monitor/rating_systems.py``
``preprocess_for_style`` / ``fit_contextual_bt`` / ``compute_style_control``, and the earlier
``elo_analysis.py`` ``construct_style_matrices`` / ``fit_mle_elo`` with scikit-learn) adds to
the Bradley-Terry logistic model of the battles one column per style feature:

    P(a beats b) = sigmoid(ln(10) * (beta_a - beta_b) + sum_c gamma_c * z_c)

where for feature c (answer tokens, headers, list items, bold spans, each summed over the
battle's turns and over the sub-kinds: header levels, ordered + unordered lists, ``**`` +
``__``) the battle's value is the normalised difference ``d_c = (a_c - b_c) / (a_c + b_c + 1)``
(the ``+ 1``, FastChat's ``add_one``, keeps 0 / 0 out), standardised over the battles:
``z_c = (d_c - mean(d_c)) / std(d_c)`` (population standard deviation, computed once on the
full data, also for the bootstrap). Ties count half a win each way (FastChat's outcome 0.5,
which is its sklearn version's duplicated battle rows). The objective is FastChat's, ridge
penalty included:

    maximise  sum_i [y_i log p_i + (1 - y_i) log(1 - p_i)] - (l2 / 2) * ||(beta, gamma)||^2

with ``l2 = 0.5`` (FastChat's ``reg=0.5``, equal to scikit-learn's default ``C=1`` on the
duplicated rows). The penalty is negligible with many battles and makes the estimate exist
without battles for some pairs; it also makes ``sum(beta) = 0``, so the ratings
``1000 + 400 * beta`` have mean 1000 and 400 points are 10:1 odds with the style equal. The
style coefficients ``gamma`` are log-odds per standard deviation of the normalised difference
(positive: the longer / more marked-up answer is preferred, other things equal).

Fit: damped Newton (IRLS) on the battles with the per-pair sums taken by one sparse product,
not a logistic regression per call. Bootstrap over battles (as FastChat: each round draws n
battles with replacement): round r's counts are ``bincount(default_rng(SeedSequence(seed)
.spawn(R)[r]).integers(0, n, n))``, and each round is either

- ``refit``: Newton to convergence from the full-data fit on the round's counts (the exact
  bootstrap; what FastChat computes), or
- ``one_step``: one Newton step from the full-data fit with the full-data information
  (the linearised bootstrap). Its difference from ``refit`` is second order, O(1/n) on the
  log-odds scale against intervals of width O(1/sqrt(n)); used when the battles times the
  rounds pass ``REFIT_LIMIT`` (``bootstrap="auto"``), where a refit per round would take
  minutes; ``bench/bench_style_control.py`` measures the difference.

Intervals are percentiles of the rounds; ranks are ``1 + #{j : lower_j > upper_i}``.
Pure: numpy and scipy only.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse
from scipy.linalg import cho_factor, cho_solve
from scipy.special import expit

from evalstats.bradley_terry import fit_bradley_terry, ranks_from_intervals
from evalstats.pairwise import A_WINS, B_WINS, TIE, win_count_matrices

__all__ = [
    "DEFAULT_L2",
    "REFIT_LIMIT",
    "STYLE_FEATURES",
    "StyleControlResult",
    "normalised_style_differences",
    "style_controlled_bradley_terry",
]

STYLE_FEATURES = ("length", "headers", "lists", "bold")
DEFAULT_L2 = 0.5
# Battles x rounds above which "auto" bootstraps by one Newton step (see the module).
REFIT_LIMIT = 20_000_000
LOG10 = math.log(10.0)
SCALE = 400.0
ANCHOR = 1000.0
_TOLERANCE = 1e-9
_MAX_ITERATIONS = 100
_MAX_HALVINGS = 40


@dataclass(frozen=True)
class StyleControlResult:
    ratings: np.ndarray  # (p,) 1000 + 400 beta
    lower: np.ndarray  # (p,) bootstrap percentile bounds
    upper: np.ndarray
    ranks: np.ndarray
    bootstrap_ratings: np.ndarray  # (R, p)
    features: tuple[str, ...]
    coefficients: np.ndarray  # (k,) gamma; NaN for a feature left out (no variation)
    coefficients_lower: np.ndarray
    coefficients_upper: np.ndarray
    bootstrap_coefficients: np.ndarray  # (R, k)
    feature_mean: np.ndarray  # (k,) of the normalised differences, before standardising
    feature_std: np.ndarray
    l2: float
    n_bootstrap: int
    confidence: float
    bootstrap_method: str  # "refit" or "one_step"
    converged: bool
    warnings: tuple[str, ...]


def normalised_style_differences(
    style_a: ArrayLike, style_b: ArrayLike, *, add_one: bool = True
) -> np.ndarray:
    """``(a - b) / (a + b + 1)`` per battle and feature (``+ 1`` only with ``add_one``)."""
    a = np.asarray(style_a, dtype=float)
    b = np.asarray(style_b, dtype=float)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError("style_a and style_b must be (battles, features) arrays of one shape")
    if np.any(a < 0) or np.any(b < 0) or not np.all(np.isfinite(a + b)):
        raise ValueError("style counts must be finite and non-negative")
    total = a + b + (1.0 if add_one else 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (a - b) / total


@dataclass(frozen=True)
class _Design:
    """The battles oriented so that system i < system j (a flipped battle has its outcome
    and its style columns negated) and sorted by pair, so that a pair's battles are one run
    of rows: per-pair sums are differences of cumulative sums, and a bootstrap round's draws
    are read near each other."""

    n_systems: int
    y: np.ndarray  # (n,) 1 = i won, 0.5 tie, 0 = j won
    z: np.ndarray  # (m, n) standardised style columns, sign as oriented, feature-major
    pair_i: np.ndarray  # (K,) the pairs that met
    pair_j: np.ndarray
    sizes: np.ndarray  # (K,) battles per pair
    bounds: np.ndarray  # (K + 1,) where each pair's run of rows starts (and the end)
    incidence: sparse.csr_matrix  # (p, K): +1 for i, -1 for j

    @property
    def n(self) -> int:
        return self.y.size

    @property
    def dimension(self) -> int:
        return self.n_systems + self.z.shape[0]

    def per_pair(self, values: np.ndarray) -> np.ndarray:
        """Sums over each pair's run of rows (last axis; every pair has a battle)."""
        return np.add.reduceat(values, self.bounds[:-1], axis=-1)


def _design(a, b, outcome, z, n_systems) -> _Design:
    y = np.where(outcome == A_WINS, 1.0, np.where(outcome == B_WINS, 0.0, 0.5))
    flip = a > b
    i = np.where(flip, b, a)
    j = np.where(flip, a, b)
    code = i * n_systems + j
    # Pair codes below 2^16 sort by radix (numpy's stable sort of 16-bit integers): O(n).
    small = n_systems * n_systems <= np.iinfo(np.uint16).max
    order = np.argsort(code.astype(np.uint16) if small else code, kind="stable")
    code = code[order]
    y = np.where(flip, 1.0 - y, y)[order]
    z = np.take(np.ascontiguousarray(z.T), order, axis=1)
    z[:, flip[order]] *= -1.0
    starts = np.flatnonzero(np.r_[True, code[1:] != code[:-1]])
    bounds = np.r_[starts, code.size]
    pairs = code[starts]
    pair_i, pair_j = pairs // n_systems, pairs % n_systems
    k = pairs.size
    incidence = sparse.csr_matrix(
        (
            np.r_[np.ones(k), -np.ones(k)],
            (np.r_[pair_i, pair_j], np.r_[np.arange(k), np.arange(k)]),
        ),
        shape=(n_systems, k),
    )
    return _Design(n_systems, y, z, pair_i, pair_j, np.diff(bounds), bounds, incidence)


def _logits(design: _Design, params: np.ndarray) -> np.ndarray:
    beta, gamma = params[: design.n_systems], params[design.n_systems :]
    pair_logit = LOG10 * (beta[design.pair_i] - beta[design.pair_j])
    return np.repeat(pair_logit, design.sizes) + gamma @ design.z


def _value(design, params, weights, l2) -> float:
    """The penalised log-likelihood: sum of w * (y * eta - softplus(eta)) - l2/2 |params|^2."""
    eta = _logits(design, params)
    softplus = np.maximum(eta, 0.0) + np.log1p(np.exp(-np.abs(eta)))
    fitted = design.y * eta - softplus
    total = fitted.sum() if weights is None else weights @ fitted
    return float(total) - 0.5 * l2 * float(params @ params)


def _evaluate(design, params, weights, l2):
    """The gradient and the negative Hessian of the penalised log-likelihood at ``params``
    (``weights``: each battle's count, None for one each)."""
    p_count = design.n_systems
    p = expit(_logits(design, params))
    residual = design.y - p
    curvature = p * (1.0 - p)
    if weights is not None:
        residual *= weights
        curvature *= weights
    z = design.z
    weighted_z = z * curvature
    pair_residual = design.per_pair(residual)
    pair_curvature = design.per_pair(curvature)
    pair_cross = design.per_pair(weighted_z)  # (m, K)
    gradient = np.concatenate([LOG10 * (design.incidence @ pair_residual), z @ residual])
    gradient -= l2 * params
    d = design.dimension
    information = np.zeros((d, d))
    system = information[:p_count, :p_count]
    system[design.pair_i, design.pair_j] = -pair_curvature
    system[design.pair_j, design.pair_i] = -pair_curvature
    system[np.diag_indices(p_count)] = -system.sum(axis=1)
    system *= LOG10**2
    cross = LOG10 * (design.incidence @ pair_cross.T)
    information[:p_count, p_count:] = cross
    information[p_count:, :p_count] = cross.T
    information[p_count:, p_count:] = weighted_z @ z.T
    information[np.diag_indices(d)] += l2
    if l2 == 0.0:
        # Unpenalised, ratings are identified up to a shift: solve with sum(beta) = 0.
        system += 1.0 / p_count
    return gradient, information


def _newton(design, weights, l2, start):
    """Newton from ``start``. The objective is concave: a step after which the slope along
    it is still upwards went uphill; otherwise it is halved until the objective rises."""
    params = start.copy()
    gradient, information = _evaluate(design, params, weights, l2)
    for iteration in range(1, _MAX_ITERATIONS + 1):
        step = cho_solve(cho_factor(information), gradient)
        scale = 1.0
        candidate = params + step
        evaluated = _evaluate(design, candidate, weights, l2)
        if evaluated[0] @ step < 0 and np.abs(step).max() > 1e-6:
            value = _value(design, params, weights, l2)
            for _ in range(_MAX_HALVINGS):
                # The objective sums up to millions of battles: allow for its rounding.
                if _value(design, candidate, weights, l2) >= value - 1e-12 * abs(value):
                    break
                scale /= 2.0
                candidate = params + scale * step
            evaluated = _evaluate(design, candidate, weights, l2)
        params = candidate
        gradient, information = evaluated
        if scale * np.abs(step).max() < _TOLERANCE:
            return params, True, iteration
    return params, False, _MAX_ITERATIONS


def _streams(rounds: int, seed: int | None) -> list[np.random.SeedSequence]:
    return np.random.SeedSequence(seed).spawn(rounds)


def resample(sizes: np.ndarray, stream: np.random.SeedSequence) -> tuple[np.ndarray, np.ndarray]:
    """One bootstrap round over pair-sorted battles with ``sizes[k]`` in pair k: the rows of
    n battles drawn with replacement (in order of pair) and how many fell in each pair.
    Drawn as how many of the n fall in each pair (multinomial with the pairs' shares), then
    that many uniformly among the pair's battles: the same distribution as n uniform draws,
    with the reads of a pair near each other."""
    rng = np.random.default_rng(stream)
    n = int(sizes.sum())
    per_pair = rng.multinomial(n, sizes / n)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    rows = rng.random(n, dtype=np.float32)
    rows *= np.repeat(sizes.astype(np.float32), per_pair)
    # float32 rounding could reach the pair's size itself: keep inside the pair
    rows = np.minimum(rows.astype(np.int64), np.repeat(sizes - 1, per_pair))
    rows += np.repeat(starts, per_pair)
    return rows, per_pair


def _on_cores(function, items):
    workers = min(len(items), os.cpu_count() or 1)
    if workers <= 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(function, items))


def _start(design: _Design, a, b, outcome) -> np.ndarray:
    """Plain Bradley-Terry on the win and tie counts (fast), style coefficients 0: a few
    Newton steps from the optimum."""
    wins, ties = win_count_matrices(a, b, outcome, design.n_systems)
    strengths = fit_bradley_terry(wins, ties).strengths
    return np.r_[strengths / LOG10, np.zeros(design.z.shape[0])]


def style_controlled_bradley_terry(
    system_a: ArrayLike,
    system_b: ArrayLike,
    outcome: ArrayLike,
    style_a: ArrayLike,
    style_b: ArrayLike,
    n_systems: int,
    *,
    features: tuple[str, ...] = STYLE_FEATURES,
    n_bootstrap: int = 100,
    confidence: float = 0.95,
    seed: int | None = None,
    l2: float = DEFAULT_L2,
    bootstrap: str = "auto",
    add_one: bool = True,
) -> StyleControlResult:
    """Style-controlled ratings of ``n_systems`` systems from battles (a, b, outcome) and each
    side's style counts (``style_a[i, c]``: feature c of battle i's answer A; columns in the
    order of ``features``). See the module for the model, the fit and the bootstrap."""
    a = np.asarray(system_a, dtype=np.int64)
    b = np.asarray(system_b, dtype=np.int64)
    o = np.asarray(outcome)
    if not (a.shape == b.shape == o.shape) or a.ndim != 1 or a.size == 0:
        raise ValueError(
            "system_a, system_b and outcome must be non-empty 1-d arrays of one length"
        )
    if np.any(a == b) or a.min() < 0 or b.min() < 0 or max(a.max(), b.max()) >= n_systems:
        raise ValueError("systems must be distinct indices in [0, n_systems)")
    if not np.isin(o, [A_WINS, B_WINS, TIE]).all():
        raise ValueError("outcome codes must be A_WINS, B_WINS or TIE")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if n_bootstrap < 1:
        raise ValueError("n_bootstrap must be at least 1")
    if l2 < 0 or not math.isfinite(l2):
        raise ValueError("l2 must be finite and non-negative")
    if bootstrap not in ("auto", "refit", "one_step"):
        raise ValueError('bootstrap must be "auto", "refit" or "one_step"')
    differences = normalised_style_differences(style_a, style_b, add_one=add_one)
    if differences.shape != (a.size, len(features)):
        raise ValueError("style arrays must have one row per battle and one column per feature")
    warnings: list[str] = []
    mean = differences.mean(axis=0)
    std = differences.std(axis=0)
    kept = np.isfinite(std) & (std > 0)
    for name in [name for name, keep in zip(features, kept, strict=True) if not keep]:
        warnings.append(f"style feature {name!r} does not vary across the battles: left out")
    z = (differences[:, kept] - mean[kept]) / std[kept]
    design = _design(a, b, o, z, n_systems)
    n = design.n
    params, converged, _ = _newton(design, None, l2, _start(design, a, b, o))
    if not converged:
        warnings.append("the fit did not converge")
    method = bootstrap
    if method == "auto":
        method = "refit" if n * n_bootstrap <= REFIT_LIMIT else "one_step"
    streams = _streams(n_bootstrap, seed)
    if method == "refit":

        def one_round(stream):
            rows, _ = resample(design.sizes, stream)
            counts = np.bincount(rows, minlength=n).astype(float)
            fitted, ok, _ = _newton(design, counts, l2, params)
            return fitted, ok

        rounds = _on_cores(one_round, streams)
        replicates = np.array([fitted for fitted, _ in rounds])
        failed = sum(not ok for _, ok in rounds)
        if failed:
            warnings.append(f"{failed} bootstrap fits did not converge")
    else:
        _, information = _evaluate(design, params, None, l2)
        factor = cho_factor(information)
        residual = design.y - expit(_logits(design, params))
        # A round's gradient at the full-data fit is linear in its counts w: per pair, the
        # sum of w * residual over the pair's battles; per style feature, of w * z * residual.
        n_pairs = design.sizes.size
        # float32: the counts and residuals need no more, and the products read half as much.
        pair_residual = sparse.csr_matrix(
            (residual.astype(np.float32), np.arange(n), design.bounds), shape=(n_pairs, n)
        )
        style_residual = (design.z * residual).astype(np.float32)

        def one_round(stream):
            rows, _ = resample(design.sizes, stream)
            counts = np.bincount(rows, minlength=n).astype(np.float32)
            gradient = np.r_[
                LOG10 * (design.incidence @ (pair_residual @ counts)), style_residual @ counts
            ]
            return params + cho_solve(factor, gradient - l2 * params)

        replicates = np.array(_on_cores(one_round, streams))
    p_count = n_systems
    ratings = ANCHOR + SCALE * params[:p_count]
    bootstrap_ratings = ANCHOR + SCALE * replicates[:, :p_count]
    tail = (1.0 - confidence) / 2.0
    lower, upper = np.quantile(bootstrap_ratings, [tail, 1.0 - tail], axis=0)
    k = len(features)
    coefficients = np.full(k, np.nan)
    coefficients[kept] = params[p_count:]
    bootstrap_coefficients = np.full((n_bootstrap, k), np.nan)
    bootstrap_coefficients[:, kept] = replicates[:, p_count:]
    coefficient_bounds = np.full((2, k), np.nan)
    if kept.any():
        coefficient_bounds[:, kept] = np.quantile(
            replicates[:, p_count:], [tail, 1.0 - tail], axis=0
        )
    return StyleControlResult(
        ratings=ratings,
        lower=lower,
        upper=upper,
        ranks=ranks_from_intervals(lower, upper),
        bootstrap_ratings=bootstrap_ratings,
        features=tuple(features),
        coefficients=coefficients,
        coefficients_lower=coefficient_bounds[0],
        coefficients_upper=coefficient_bounds[1],
        bootstrap_coefficients=bootstrap_coefficients,
        feature_mean=mean,
        feature_std=std,
        l2=l2,
        n_bootstrap=n_bootstrap,
        confidence=confidence,
        bootstrap_method=method,
        converged=converged,
        warnings=tuple(warnings),
    )
