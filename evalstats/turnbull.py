"""Turnbull's (1976) nonparametric MLE of the survival function of interval-censored data.

Self-consistency EM, finished by a Newton step on the support and certified by the
Gentleman & Geyer (1994) optimality conditions. Intervals follow the convention of
:mod:`evalstats.intervals`. Pure numpy: no I/O, no Django.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evalstats.intervals import IntervalCensoredData, observed_intervals, read_only_array

__all__ = ["TurnbullResult", "turnbull_by_group", "turnbull_npmle"]


# EM iterations after which a Newton finish on the current support is attempted: cheap,
# and it removes EM's sublinear crawl when an interval's optimal mass sits on the boundary.
_POLISH_SCHEDULE = frozenset(2**i for i in range(2, 40))


_MAX_NEWTON_STEPS = 100


# Masses below this share of the largest one are treated as zero when choosing the support;
# the optimality check afterwards catches a wrong choice, so this only affects speed.
_SUPPORT_FLOOR = 1e-12


@dataclass(frozen=True)
class TurnbullSupport:
    """Turnbull's innermost intervals on an integer grid of endpoint positions.

    Every distinct finite endpoint ``v`` gets two positions: ``2 r`` for the point ``v``
    itself and ``2 r + 1`` for the open gap just after it; ``inf`` is ``2 * n_values``.
    Open/closed ends then become plain integer comparisons.
    """

    values: np.ndarray
    obs_first: np.ndarray  # first position covered by each observation
    obs_last: np.ndarray  # last position covered by each observation
    first: np.ndarray  # first position of each Turnbull interval
    last: np.ndarray  # last position of each Turnbull interval
    contains: np.ndarray  # (n_obs, n_intervals) float 0/1: observation i contains interval j

    def position(self, times: np.ndarray) -> np.ndarray:
        index = np.searchsorted(self.values, times)
        exact = (index < self.values.size) & (
            self.values[np.minimum(index, self.values.size - 1)] == times
        )
        # Between two endpoint values t lies in the gap after the smaller one.
        return np.where(exact, 2 * index, 2 * index - 1)

    def endpoint(self, positions: np.ndarray) -> np.ndarray:
        finite = positions < 2 * self.values.size
        index = np.minimum(positions // 2, self.values.size - 1)
        return np.where(finite, self.values[index], np.inf)


def turnbull_support(left: np.ndarray, right: np.ndarray) -> TurnbullSupport:
    finite_right = np.isfinite(right)
    values = np.unique(np.concatenate([left, right[finite_right]]))
    exact = left == right
    obs_first = 2 * np.searchsorted(values, left) + (~exact)
    safe_right = np.where(finite_right, right, values[0])
    obs_last = np.where(finite_right, 2 * np.searchsorted(values, safe_right), 2 * values.size)
    # Turnbull (1976): an innermost interval runs from a left end to the next right end
    # with no endpoint in between; on ties, left ends sort first so [t, t] is found.
    positions = np.concatenate([obs_first, obs_last])
    is_right = np.concatenate([np.zeros(left.size, bool), np.ones(left.size, bool)])
    order = np.lexsort((is_right, positions))
    positions, is_right = positions[order], is_right[order]
    starts = np.flatnonzero(~is_right[:-1] & is_right[1:])
    first, last = positions[starts], positions[starts + 1]
    contains = (obs_first[:, None] <= first[None, :]) & (last[None, :] <= obs_last[:, None])
    return TurnbullSupport(values, obs_first, obs_last, first, last, contains.astype(float))


@dataclass(frozen=True, eq=False)
class TurnbullResult:
    r"""Turnbull NPMLE of a survival function from interval-censored counts.

    Attributes
    ----------
    times, survival :
        :math:`\hat S(t) = 1 - \sum_{j:\, r_j \le t} \hat p_j` at the requested times; ``nan``
        where ``t`` falls strictly inside an innermost interval carrying mass (there the
        NPMLE does not determine :math:`S`). Segment lengths are always endpoints, so Spot
        The Bot survival curves are fully determined.
    interval_left, interval_right, mass :
        Turnbull's innermost intervals :math:`(l_j, r_j]` (``l_j == r_j``: the point
        :math:`\{l_j\}`) and the probability :math:`\hat p_j` the NPMLE puts on each.
    loglik :
        :math:`\sum_i w_i \log \sum_j \alpha_{ij} \hat p_j` (:math:`\alpha_{ij} = 1` when
        observation ``i`` contains interval ``j``).
    max_gradient :
        :math:`\max_j d_j` with :math:`d_j = \frac{1}{W} \sum_i w_i \alpha_{ij} /
        \sum_l \alpha_{il}\hat p_l`. The estimate is the NPMLE iff :math:`d_j \le 1` for all
        ``j`` with equality where :math:`\hat p_j > 0` (Gentleman & Geyer 1994).
    kkt_violation :
        Largest violation of those conditions; ``converged`` means it is ``<= tol``.
    n_iter, n_newton, tol, max_iter :
        EM iterations used, Newton steps of the finishing stage, and the settings.
    """

    times: np.ndarray
    survival: np.ndarray
    interval_left: np.ndarray
    interval_right: np.ndarray
    mass: np.ndarray
    loglik: float
    max_gradient: float
    kkt_violation: float
    converged: bool
    n_iter: int
    n_newton: int
    tol: float
    max_iter: int


@dataclass(frozen=True)
class NpmleFit:
    mass: np.ndarray
    kkt_violation: float
    max_gradient: float
    converged: bool
    n_iter: int
    n_newton: int


def _loglik(contains: np.ndarray, weights: np.ndarray, mass: np.ndarray) -> float:
    with np.errstate(divide="ignore"):  # an observation left with no mass: -inf, rejected
        return float(weights @ np.log(contains @ mass))


def _gradient_ratio(contains: np.ndarray, weights: np.ndarray, mass: np.ndarray) -> np.ndarray:
    """d_j = (1/W) sum_i w_i alpha_ij / P_i; self-consistency is p_j <- p_j d_j."""
    return contains.T @ (weights / (contains @ mass)) / weights.sum()


def _kkt_violation(
    contains: np.ndarray, weights: np.ndarray, mass: np.ndarray
) -> tuple[float, float]:
    ratio = _gradient_ratio(contains, weights, mass)
    on_support = mass > 0
    excess = float(np.max(ratio - 1.0))
    support_gap = float(np.max(np.abs(ratio[on_support] - 1.0)))
    return max(excess, support_gap), float(ratio.max())


def _newton_finish(
    contains: np.ndarray, weights: np.ndarray, start: np.ndarray
) -> tuple[np.ndarray, int]:
    """Maximise the log-likelihood on the support of ``start`` by an active-set Newton method.

    Newton's step for max l(p) subject to sum(p) = 1 solves ``H dp + nu 1 = g, 1'dp = 0``
    with ``g`` the gradient and ``H`` minus the Hessian. A step that would make a mass
    negative stops at the boundary and drops that interval from the support.
    """
    mass = np.where(start > _SUPPORT_FLOOR * start.max(), start, 0.0)
    mass /= mass.sum()
    steps = 0
    while steps < _MAX_NEWTON_STEPS:
        steps += 1
        step = _newton_direction(contains, weights, mass)
        trial = _largest_feasible_step(mass, step)
        # Far from the optimum a full Newton step can lower the likelihood: halve it. Near
        # the optimum the change is below rounding, hence the relative slack.
        floor = _loglik(contains, weights, mass) - 1e-13 * weights.sum()
        shrink = 1.0
        while _loglik(contains, weights, trial) < floor and shrink > 1e-10:
            shrink /= 2
            trial = _largest_feasible_step(mass, shrink * step)
        moved = float(np.max(np.abs(trial - mass)))
        mass = trial
        if moved <= 1e-13:
            break
    return mass, steps


def _newton_direction(contains: np.ndarray, weights: np.ndarray, mass: np.ndarray) -> np.ndarray:
    support = np.flatnonzero(mass > 0)
    sub = contains[:, support]
    prob = sub @ mass[support]
    gradient = sub.T @ (weights / prob)
    neg_hessian = (sub * (weights / prob**2)[:, None]).T @ sub
    size = support.size
    system = np.zeros((size + 1, size + 1))
    system[:size, :size] = neg_hessian
    system[:size, size] = system[size, :size] = 1.0
    # lstsq: intervals always observed together make the Hessian singular (p not unique).
    solution = np.linalg.lstsq(system, np.append(gradient, 0.0), rcond=None)[0]
    step = np.zeros_like(mass)
    step[support] = solution[:size]
    return step


def _largest_feasible_step(mass: np.ndarray, step: np.ndarray) -> np.ndarray:
    """``mass + t * step`` with the largest ``t <= 1`` keeping masses >= 0; the mass that
    hits zero first leaves the support."""
    shrinking = np.flatnonzero(step < 0)
    ratios = -mass[shrinking] / step[shrinking]
    trial = mass + step
    if ratios.size and ratios.min() < 1.0:
        blocking = shrinking[np.argmin(ratios)]
        trial = mass + ratios.min() * step
        trial[blocking] = 0.0
    trial = np.maximum(trial, 0.0)
    return trial / trial.sum()


def fit_npmle(contains: np.ndarray, weights: np.ndarray, tol: float, max_iter: int) -> NpmleFit:
    """Self-consistency EM (Turnbull 1976) with a Newton finish certified by the KKT check."""
    mass = np.full(contains.shape[1], 1.0 / contains.shape[1])
    total_newton = 0
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        mass = mass * _gradient_ratio(contains, weights, mass)
        mass /= mass.sum()
        if n_iter in _POLISH_SCHEDULE or n_iter == max_iter:
            candidate, steps = _newton_finish(contains, weights, mass)
            total_newton += steps
            violation, max_gradient = _kkt_violation(contains, weights, candidate)
            if violation <= tol:
                return NpmleFit(candidate, violation, max_gradient, True, n_iter, total_newton)
    violation, max_gradient = _kkt_violation(contains, weights, mass)
    return NpmleFit(mass, violation, max_gradient, violation <= tol, n_iter, total_newton)


def _survival_at(support: TurnbullSupport, mass: np.ndarray, times: np.ndarray) -> np.ndarray:
    where = support.position(times)
    before = support.last[None, :] <= where[:, None]
    straddled = (support.first[None, :] <= where[:, None]) & ~before & (mass[None, :] > 1e-12)
    survival = np.clip(1.0 - before.astype(float) @ mass, 0.0, 1.0)
    return np.where(straddled.any(axis=1), np.nan, survival)


def turnbull_npmle(
    left: npt.ArrayLike,
    right: npt.ArrayLike,
    counts: npt.ArrayLike | None = None,
    *,
    times: npt.ArrayLike | None = None,
    tol: float = 1e-9,
    max_iter: int = 10_000,
) -> TurnbullResult:
    r"""Turnbull's (1976) NPMLE of :math:`S(t) = P(T > t)` from interval-censored data.

    Maximises :math:`\ell(p) = \sum_i w_i \log \sum_j \alpha_{ij} p_j` over the simplex,
    where ``j`` runs over Turnbull's innermost intervals and :math:`w_i` are the counts of
    the distinct observed intervals. Self-consistency (EM) iterations
    :math:`p_j \leftarrow p_j d_j(p)` do the bulk of the work; because EM crawls when an
    interval's optimal mass is exactly zero (common with small integer counts, e.g. equal
    spotted fractions at two segment lengths), every ``2**i``-th iteration tries an
    active-set Newton finish, accepted once the Gentleman & Geyer (1994) conditions
    :math:`d_j \le 1`, :math:`d_j = 1` on the support, hold within ``tol``.

    For current status data (every observation :math:`(0, k]` or :math:`(k, \infty)`, as
    in Spot The Bot) :math:`1 - \hat S(k)` is the weighted isotonic regression of the
    spotted fraction at each ``k`` on ``k`` (Groeneboom & Wellner 1992, "Information Bounds and
    Nonparametric Maximum Likelihood Estimation", Part II).

    ``times`` defaults to the distinct positive finite endpoints (for Spot The Bot data:
    the segment lengths).
    """
    left, right, weights, _ = observed_intervals(left, right, counts)
    if weights.ndim != 1:
        raise ValueError("counts must be 1-d; use turnbull_by_group for several groups")
    support = turnbull_support(left, right)
    fit = fit_npmle(support.contains, weights, tol, max_iter)
    if times is None:
        times = support.values[support.values > 0]
    times = np.asarray(times, dtype=float).ravel()
    return TurnbullResult(
        times=read_only_array(times),
        survival=read_only_array(_survival_at(support, fit.mass, times)),
        interval_left=read_only_array(support.endpoint(support.first)),
        interval_right=read_only_array(support.endpoint(support.last)),
        mass=read_only_array(fit.mass),
        loglik=_loglik(support.contains, weights, fit.mass),
        max_gradient=fit.max_gradient,
        kkt_violation=fit.kkt_violation,
        converged=fit.converged,
        n_iter=fit.n_iter,
        n_newton=fit.n_newton,
        tol=tol,
        max_iter=max_iter,
    )


def turnbull_by_group(
    data: IntervalCensoredData,
    *,
    times: npt.ArrayLike | None = None,
    tol: float = 1e-9,
    max_iter: int = 10_000,
) -> dict[object, TurnbullResult]:
    """One :func:`turnbull_npmle` per group (system), all evaluated at the same times.

    ``times`` defaults to the distinct positive finite endpoints of the whole data set, so
    every system's curve is reported at every segment length of the study.
    """
    if times is None:
        endpoints = np.concatenate([data.left, data.right[np.isfinite(data.right)]])
        times = np.unique(endpoints[endpoints > 0])
    return {
        group.item() if isinstance(group, np.generic) else group: turnbull_npmle(
            data.left, data.right, row, times=times, tol=tol, max_iter=max_iter
        )
        for group, row in zip(data.groups, data.counts, strict=True)
    }
