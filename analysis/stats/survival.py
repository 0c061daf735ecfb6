r"""Survival analysis of Spot The Bot annotations: how long a chatbot passes for a human.

Deriu et al. (2020), "Spot The Bot: A Robust and Efficient Framework for the Evaluation of
Conversational Dialogue Systems" (EMNLP), sections 3.3 and 4.2: an annotator who sees the
first ``k`` exchanges of a conversation and labels a speaker "bot" tells us the bot was
spotted at some time in :math:`(0, k]`; "human" or "unsure" tells us it survived past ``k``
(right-censored, :math:`(k, \infty)`). Every judgment is therefore interval-censored, and
in fact *current status* data: each one is either :math:`(0, k]` or :math:`(k, \infty)`.

* :func:`spot_the_bot_intervals` / :func:`aggregate_intervals`: per-judgment arrays to
  distinct intervals with per-system counts (a study has a handful of segment lengths and
  thousands of judgments, so every fit works on at most ``2 x n_lengths`` weighted rows).
* :func:`turnbull_npmle`: Turnbull's (1976) nonparametric MLE of the survival function
  (self-consistency EM, finished by a Newton step on the support and certified by the
  Gentleman & Geyer (1994) optimality conditions).
* :func:`interval_logrank_test` and :func:`pairwise_interval_logrank`: the generalized
  log-rank test for interval-censored data with Sun's (1996) scores, in the permutation form
  of Fay & Shaw (2010) (R package ``interval``, ``ictest``) or in the hypergeometric form that
  reduces exactly to the ordinary log-rank test on exact or right-censored data.
* :func:`interval_cox_ph`: the proportional hazards model with a free baseline cumulative
  hazard at each segment length, fitted to the interval-censored likelihood (for current
  status data this is a complementary log-log binomial GLM).

Interval convention (the ``interval`` package's default): an observation ``(left, right)``
with ``left < right`` means the event time :math:`T` satisfies ``left < T <= right``;
``right = inf`` is right-censoring at ``left``; ``left == right`` is an exact event time.

Labels use the integer codes of :mod:`analysis.stats.pairwise` (``BOT``, ``UNSURE``,
``HUMAN``), whose :func:`~analysis.stats.pairwise.adjust_pvalues` also provides the
Holm/Bonferroni corrections. Pure numpy/scipy: no I/O, no Django.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import optimize, stats

from analysis.stats.pairwise import BOT, HUMAN, UNSURE, adjust_pvalues

__all__ = [
    "IntervalCensoredData",
    "IntervalCoxResult",
    "IntervalLogrankResult",
    "PairwiseLogrankResult",
    "TurnbullResult",
    "aggregate_intervals",
    "interval_cox_ph",
    "interval_cox_ph_by_system",
    "interval_logrank_test",
    "pairwise_interval_logrank",
    "spot_the_bot_intervals",
    "turnbull_by_group",
    "turnbull_npmle",
]

Variance = Literal["permutation", "hypergeometric"]
Information = Literal["observed", "expected"]
Correction = Literal["holm", "bonferroni", "none"]

# Label codes shared with the win-rate analysis, so one encoding serves both.
_LABEL_CODES = (BOT, UNSURE, HUMAN)

# EM iterations after which a Newton finish on the current support is attempted: cheap,
# and it removes EM's sublinear crawl when an interval's optimal mass sits on the boundary.
_POLISH_SCHEDULE = frozenset(2**i for i in range(2, 40))
_MAX_NEWTON_STEPS = 100
# Masses below this share of the largest one are treated as zero when choosing the support;
# the optimality check afterwards catches a wrong choice, so this only affects speed.
_SUPPORT_FLOOR = 1e-12


def _frozen(array: npt.ArrayLike, dtype: npt.DTypeLike = None) -> np.ndarray:
    out = np.array(array, dtype=dtype, copy=True)
    out.setflags(write=False)
    return out


# --- data preparation ------------------------------------------------------------------------


# eq=False: the fields are numpy arrays, whose elementwise == makes a generated __eq__ useless.
@dataclass(frozen=True, eq=False)
class IntervalCensoredData:
    """Distinct censoring intervals with a count per group.

    ``counts[g, i]`` is how many observations of group ``groups[g]`` have the interval
    ``(left[i], right[i])`` (see the module docstring for the convention).
    """

    left: np.ndarray
    right: np.ndarray
    counts: np.ndarray
    groups: np.ndarray

    def counts_of(self, group: object) -> np.ndarray:
        """Counts of one group (by label, e.g. a system index)."""
        index = np.flatnonzero(self.groups == group)
        if index.size != 1:
            raise KeyError(f"no group {group!r}")
        return self.counts[index[0]]


def _validate_intervals(left: np.ndarray, right: np.ndarray) -> None:
    if left.shape != right.shape or left.ndim != 1:
        raise ValueError("left and right must be 1-d arrays of the same length")
    if np.isnan(left).any() or np.isnan(right).any():
        raise ValueError("interval endpoints must not be NaN")
    if not np.isfinite(left).all():
        raise ValueError("left endpoints must be finite")
    if (left < 0).any():
        raise ValueError("event times are non-negative: left endpoints must be >= 0")
    if (right < left).any():
        raise ValueError("every interval needs left <= right")


def aggregate_intervals(
    left: npt.ArrayLike, right: npt.ArrayLike, group: npt.ArrayLike | None = None
) -> IntervalCensoredData:
    """Collapse per-observation intervals to distinct ``(left, right)`` rows with counts.

    ``group`` (optional, e.g. the system of each judgment) gives one row of ``counts`` per
    distinct group, in sorted order; without it there is a single group ``0``.
    """
    left = np.asarray(left, dtype=float)
    right = np.asarray(right, dtype=float)
    _validate_intervals(left, right)
    group = np.zeros(left.shape, dtype=int) if group is None else np.asarray(group)
    if group.shape != left.shape:
        raise ValueError("group must have one entry per interval")
    pairs, pair_index = np.unique(np.column_stack([left, right]), axis=0, return_inverse=True)
    groups, group_index = np.unique(group, return_inverse=True)
    counts = np.zeros((groups.size, pairs.shape[0]), dtype=np.int64)
    np.add.at(counts, (group_index.ravel(), pair_index.ravel()), 1)
    return IntervalCensoredData(
        left=_frozen(pairs[:, 0]),
        right=_frozen(pairs[:, 1]),
        counts=_frozen(counts),
        groups=_frozen(groups),
    )


def _spotted_mask(label: npt.ArrayLike, bot_label: int) -> np.ndarray:
    label = np.asarray(label)
    if not np.issubdtype(label.dtype, np.integer) or not np.isin(label, _LABEL_CODES).all():
        raise ValueError(
            f"labels must be the integer codes of analysis.stats.pairwise "
            f"(bot={BOT}, unsure={UNSURE}, human={HUMAN})"
        )
    return label == bot_label


def _segment_lengths(segment_length: npt.ArrayLike) -> np.ndarray:
    k = np.asarray(segment_length, dtype=float)
    if not (np.isfinite(k).all() and (k > 0).all()):
        raise ValueError("segment lengths must be positive and finite")
    return k


def spot_the_bot_intervals(
    system: npt.ArrayLike,
    segment_length: npt.ArrayLike,
    label: npt.ArrayLike,
    *,
    bot_label: int = BOT,
) -> IntervalCensoredData:
    r"""Spot The Bot judgments as aggregated interval-censored observations per system.

    A speaker of system ``s`` judged on a segment of ``k`` exchanges contributes
    :math:`(0, k]` if it was labelled ``bot_label`` (spotted within the first ``k``
    exchanges) and :math:`(k, \infty)` otherwise (it survived ``k`` exchanges), following
    Deriu et al. (2020), section 3.3. Identical intervals are counted, not repeated.
    """
    k = _segment_lengths(segment_length)
    spotted = _spotted_mask(label, bot_label)
    system = np.asarray(system)
    if not (k.shape == spotted.shape == system.shape):
        raise ValueError("system, segment_length and label must have the same length")
    left = np.where(spotted, 0.0, k)
    right = np.where(spotted, k, np.inf)
    return aggregate_intervals(left, right, system)


# --- Turnbull NPMLE --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Support:
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


def _turnbull_support(left: np.ndarray, right: np.ndarray) -> _Support:
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
    return _Support(values, obs_first, obs_last, first, last, contains.astype(float))


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
class _NpmleFit:
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


def _fit_npmle(contains: np.ndarray, weights: np.ndarray, tol: float, max_iter: int) -> _NpmleFit:
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
                return _NpmleFit(candidate, violation, max_gradient, True, n_iter, total_newton)
    violation, max_gradient = _kkt_violation(contains, weights, mass)
    return _NpmleFit(mass, violation, max_gradient, violation <= tol, n_iter, total_newton)


def _prepare(
    left: npt.ArrayLike, right: npt.ArrayLike, counts: npt.ArrayLike | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Validated float arrays restricted to the intervals somebody has, and that mask.

    Intervals with a zero count must go: Turnbull's intervals depend on the observed
    endpoints.
    """
    left = np.asarray(left, dtype=float)
    right = np.asarray(right, dtype=float)
    _validate_intervals(left, right)
    counts = np.ones(left.shape) if counts is None else np.asarray(counts, dtype=float)
    if counts.shape[-1] != left.size:
        raise ValueError("counts must have one column per interval")
    if (counts < 0).any() or not np.isfinite(counts).all():
        raise ValueError("counts must be finite and non-negative")
    observed = counts.reshape(-1, left.size).sum(axis=0) > 0
    if not observed.any():
        raise ValueError("no observations")
    return left[observed], right[observed], counts[..., observed], observed


def _survival_at(support: _Support, mass: np.ndarray, times: np.ndarray) -> np.ndarray:
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
    left, right, weights, _ = _prepare(left, right, counts)
    if weights.ndim != 1:
        raise ValueError("counts must be 1-d; use turnbull_by_group for several groups")
    support = _turnbull_support(left, right)
    fit = _fit_npmle(support.contains, weights, tol, max_iter)
    if times is None:
        times = support.values[support.values > 0]
    times = np.asarray(times, dtype=float).ravel()
    return TurnbullResult(
        times=_frozen(times),
        survival=_frozen(_survival_at(support, fit.mass, times)),
        interval_left=_frozen(support.endpoint(support.first)),
        interval_right=_frozen(support.endpoint(support.last)),
        mass=_frozen(fit.mass),
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


# --- generalized log-rank test ---------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class IntervalLogrankResult:
    r"""Generalized log-rank test for interval-censored data.

    Attributes
    ----------
    statistic, pvalue, df :
        :math:`X^2 = U^\top V^{-} U` and its :math:`\chi^2_{G-1}` upper tail.
    observed_minus_expected :
        :math:`U_g = \sum_{i \in g} w_i c_i`, one per group (sums to zero).
    covariance :
        :math:`V`, the null covariance of :math:`U` (rank :math:`G - 1`).
    scores :
        Sun's score :math:`c_i` of each input interval (``nan`` for intervals nobody has).
    variance :
        ``"permutation"`` or ``"hypergeometric"``.
    npmle_converged, npmle_iterations :
        Convergence of the pooled Turnbull fit the scores come from.
    """

    statistic: float
    pvalue: float
    df: int
    observed_minus_expected: np.ndarray
    covariance: np.ndarray
    scores: np.ndarray
    variance: str
    npmle_converged: bool
    npmle_iterations: int


def _sun_scores(contains: np.ndarray, mass: np.ndarray) -> np.ndarray:
    r"""Sun's (1996) log-rank scores: :math:`c_i = E[1 - \Lambda(T) \mid T \in I_i]`.

    With the pooled NPMLE, hazard :math:`\lambda_j = p_j / S_{j-1}`, :math:`\Lambda_j =
    \sum_{l \le j} \lambda_l`, the score of dying in interval ``j`` is :math:`1 - \Lambda_j`
    and :math:`c_i = \sum_j \alpha_{ij} p_j (1 - \Lambda_j) / \sum_j \alpha_{ij} p_j`
    (``interval::wlr_trafo`` with ``scores = "logrank1"``; Fay & Shaw 2010).
    For right-censored data this is :math:`1 - \hat\Lambda(t)` for an event at ``t`` and
    :math:`-\hat\Lambda(c)` for censoring at ``c`` (Nelson-Aalen), the log-rank scores.
    """
    survival_before = 1.0 - np.concatenate([[0.0], np.cumsum(mass)[:-1]])
    hazard = np.divide(mass, survival_before, out=np.zeros_like(mass), where=survival_before > 0)
    dying_score = 1.0 - np.cumsum(hazard)
    return (contains @ (mass * dying_score)) / (contains @ mass)


def _permutation_covariance(scores: np.ndarray, counts: np.ndarray) -> np.ndarray:
    r"""Covariance of the group score sums over all relabellings of the observations.

    :math:`V = \frac{\sum_i w_i (c_i - \bar c)^2}{N - 1}
    \left(\mathrm{diag}(n) - n n^\top / N\right)` (sampling without replacement).
    """
    sizes = counts.sum(axis=1)
    total = sizes.sum()
    mean = (counts.sum(axis=0) @ scores) / total
    spread = (counts.sum(axis=0) @ (scores - mean) ** 2) / (total - 1)
    return spread * (np.diag(sizes) - np.outer(sizes, sizes) / total)


def _risk_tables(
    support: _Support, counts: np.ndarray, mass: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Expected events and numbers at risk per group and Turnbull interval.

    Observations with a finite right end spread their event over the intervals they contain
    in proportion to the NPMLE and are at risk up to it; right-censored observations are at
    risk exactly up to their censoring time and have no event (they are not imputed past
    it). On exact or right-censored data these are the ordinary log-rank tables.
    """
    contains = support.contains
    censored = ~np.isfinite(support.endpoint(support.obs_last))
    share = contains * mass[None, :]
    share /= share.sum(axis=1, keepdims=True)
    share[censored] = 0.0
    at_risk = np.cumsum(share[:, ::-1], axis=1)[:, ::-1]
    at_risk[censored] = (support.last[None, :] < support.obs_first[censored, None]).astype(float)
    return counts @ share, counts @ at_risk


def _hypergeometric_covariance(
    events: np.ndarray, at_risk: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    r"""Mantel-Haenszel log-rank: :math:`U = \sum_j (d_{gj} - n_{gj} d_j / n_j)` and
    :math:`V_{gh} = \sum_j \frac{d_j (n_j - d_j)}{n_j - 1}
    \frac{n_{gj}(\delta_{gh} n_j - n_{hj})}{n_j^2}` (factor 1 when :math:`n_j \le 1`, as in
    lifelines), the variance of the hypergeometric distribution of each risk-set table."""
    deaths = events.sum(axis=0)
    risk = at_risk.sum(axis=0)
    rate = np.divide(deaths, risk, out=np.zeros_like(deaths), where=risk > 0)
    observed_minus_expected = (events - at_risk * rate).sum(axis=1)
    tie_factor = np.divide(risk - deaths, risk - 1, out=np.ones_like(risk), where=risk > 1 + 1e-12)
    weight = np.divide(deaths * tie_factor, risk**2, out=np.zeros_like(deaths), where=risk > 0)
    covariance = np.diag((at_risk * (weight * risk)).sum(axis=1)) - (at_risk * weight) @ at_risk.T
    return observed_minus_expected, covariance


def _quadratic_form(u: np.ndarray, covariance: np.ndarray) -> float:
    # V has rank G - 1 (the U_g sum to zero): drop the last group, as lifelines does.
    return float(u[:-1] @ np.linalg.solve(covariance[:-1, :-1], u[:-1]))


def interval_logrank_test(
    left: npt.ArrayLike,
    right: npt.ArrayLike,
    counts: npt.ArrayLike,
    *,
    variance: Variance = "permutation",
    tol: float = 1e-9,
    max_iter: int = 10_000,
) -> IntervalLogrankResult:
    r"""G-sample generalized log-rank test for interval-censored data (Sun's scores).

    ``counts[g, i]`` is the number of observations of group ``g`` with interval
    ``(left[i], right[i])`` (e.g. ``IntervalCensoredData.counts``).

    Deriu et al. (2020) cite Zhao & Sun (2004), whose statistic is this :math:`U` with a
    multiple-imputation variance; that variance is not implemented here.

    Score statistic (Fay & Shaw 2010, "Exact and asymptotic weighted logrank tests for
    interval censored data: the interval R package", J. Stat. Softw. 36(2); ``ictest``'s
    default ``scores="logrank1"``, which the package labels Sun's scores, while
    ``"logrank2"`` are Finkelstein's (1986) grouped-proportional-hazards scores): fit the
    Turnbull NPMLE to all groups pooled, give every observation Sun's (1996) score
    :math:`c_i` (see :func:`_sun_scores`), and compare the group sums
    :math:`U_g = \sum_{i\in g} c_i` with their null expectation :math:`n_g \bar c`
    (:math:`\bar c = 0` at the NPMLE). :math:`X^2 = U^\top V^- U \sim \chi^2_{G-1}`.

    ``variance="permutation"`` (default; ``ictest``'s asymptotic ``"pclt"`` method): the
    exact covariance of :math:`U` over relabellings of the observations,
    :math:`V = s^2 (\mathrm{diag}(n) - nn^\top/N)` with :math:`s^2 = \sum_i (c_i - \bar
    c)^2 / (N - 1)`. Valid whenever the censoring does not depend on the group.

    ``variance="hypergeometric"``: :math:`U` and :math:`V` from the Mantel-Haenszel risk-set
    tables (:func:`_hypergeometric_covariance`) built by :func:`_risk_tables`. At the NPMLE
    the table :math:`U` equals the score :math:`U` (the tables' hazard :math:`d_j/n_j` is the
    NPMLE hazard :math:`p_j/S_{j-1}`), and on exact or right-censored data both :math:`U` and
    :math:`V` are exactly those of the ordinary log-rank test (``survival::survdiff``,
    ``lifelines.statistics.multivariate_logrank_test``). The permutation variance differs
    there: it treats the scores as fixed, whereas the hypergeometric variance conditions on
    every risk set (the ``interval`` package's ``right.censored.examples`` demo notes the same
    difference in p-values). The two agree asymptotically when censoring is balanced. For
    interval-censored data the hypergeometric form is a heuristic in the spirit of Sun
    (1996): the imputed tables are not hypergeometric, so prefer the permutation form there.
    """
    left, right, counts, observed = _prepare(left, right, counts)
    if counts.ndim != 2 or counts.shape[0] < 2:
        raise ValueError("counts must be (n_groups >= 2, n_intervals)")
    if (counts.sum(axis=1) == 0).any():
        raise ValueError("every group needs at least one observation")
    if variance not in ("permutation", "hypergeometric"):
        raise ValueError("variance must be 'permutation' or 'hypergeometric'")
    support = _turnbull_support(left, right)
    fit = _fit_npmle(support.contains, counts.sum(axis=0), tol, max_iter)
    scores = _sun_scores(support.contains, fit.mass)
    if variance == "permutation":
        pooled_mean = counts.sum(axis=0) @ scores / counts.sum()
        u = counts @ scores - counts.sum(axis=1) * pooled_mean
        covariance = _permutation_covariance(scores, counts)
    else:
        events, at_risk = _risk_tables(support, counts, fit.mass)
        u, covariance = _hypergeometric_covariance(events, at_risk)
    statistic = _quadratic_form(u, covariance)
    df = counts.shape[0] - 1
    all_scores = np.full(observed.size, np.nan)
    all_scores[observed] = scores
    return IntervalLogrankResult(
        statistic=statistic,
        pvalue=float(stats.chi2.sf(statistic, df)),
        df=df,
        observed_minus_expected=_frozen(u),
        covariance=_frozen(covariance),
        scores=_frozen(all_scores),
        variance=variance,
        npmle_converged=fit.converged,
        npmle_iterations=fit.n_iter,
    )


# --- pairwise comparisons --------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class PairwiseLogrankResult:
    """Two-sample generalized log-rank tests for every pair of groups.

    ``pairs[k] = (a, b)`` are group labels; ``statistic[k]``, ``pvalue[k]`` are the raw
    test of that pair (pooled NPMLE refitted on the pair's data, as ``ictest`` on the
    subset) and ``pvalue_adjusted[k]`` its ``correction``-adjusted p-value.
    """

    pairs: tuple[tuple[object, object], ...]
    statistic: np.ndarray
    pvalue: np.ndarray
    pvalue_adjusted: np.ndarray
    correction: str
    variance: str


def pairwise_interval_logrank(
    left: npt.ArrayLike,
    right: npt.ArrayLike,
    counts: npt.ArrayLike,
    *,
    groups: Sequence[object] | None = None,
    correction: Correction = "holm",
    variance: Variance = "permutation",
    tol: float = 1e-9,
    max_iter: int = 10_000,
) -> PairwiseLogrankResult:
    """All pairwise :func:`interval_logrank_test` comparisons with a multiplicity correction.

    ``groups`` labels the rows of ``counts`` (default ``0 .. G-1``), e.g.
    ``IntervalCensoredData.groups``. ``correction`` is passed to
    :func:`analysis.stats.pairwise.adjust_pvalues`: Holm's step-down procedure (default)
    controls the family-wise error rate like ``"bonferroni"`` and is uniformly more powerful;
    ``"none"`` leaves the p-values raw.
    """
    counts = np.asarray(counts, dtype=float)
    labels = list(range(counts.shape[0])) if groups is None else list(groups)
    if len(labels) != counts.shape[0]:
        raise ValueError("one group label per row of counts")
    pairs, statistics, pvalues = [], [], []
    for a, b in itertools.combinations(range(counts.shape[0]), 2):
        result = interval_logrank_test(
            left, right, counts[[a, b]], variance=variance, tol=tol, max_iter=max_iter
        )
        pairs.append((labels[a], labels[b]))
        statistics.append(result.statistic)
        pvalues.append(result.pvalue)
    return PairwiseLogrankResult(
        pairs=tuple(pairs),
        statistic=_frozen(statistics, float),
        pvalue=_frozen(pvalues, float),
        pvalue_adjusted=_frozen(adjust_pvalues(pvalues, correction)),
        correction=correction,
        variance=variance,
    )


# --- proportional hazards with feature covariates --------------------------------------------


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
    k = _segment_lengths(segment_length)
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
    if information not in ("observed", "expected"):
        raise ValueError("information must be 'observed' or 'expected'")

    lengths, length_index = np.unique(k, return_inverse=True)
    spotted_share = np.bincount(length_index, weights=spotted) / np.bincount(length_index)
    informative = (spotted_share > 0) & (spotted_share < 1)
    keep = informative[length_index]
    lengths_used = lengths[informative]
    dropped = lengths[~informative]
    rows = np.column_stack([np.searchsorted(lengths_used, k[keep]), x[keep]])
    patterns, pattern_index = np.unique(rows, axis=0, return_inverse=True)
    pattern_index = pattern_index.ravel()
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

    def negative(theta: np.ndarray) -> tuple[float, np.ndarray]:
        loglik, score, _, _ = _cloglog_loglik_parts(design @ theta, events, total)
        return -loglik, -(design.T @ score)

    def negative_hessian(theta: np.ndarray) -> np.ndarray:
        _, _, observed, _ = _cloglog_loglik_parts(design @ theta, events, total)
        return (design * observed[:, None]).T @ design

    share = np.clip(
        np.bincount(patterns[:, 0].astype(int), weights=events)
        / np.bincount(patterns[:, 0].astype(int), weights=total),
        1e-6,
        1 - 1e-6,
    )
    start = np.concatenate([np.log(-np.log1p(-share)), np.zeros(x.shape[1])])
    # The score is a sum over observations, so its attainable precision scales with n.
    gradient_tol = tol * total.sum()
    solution = optimize.minimize(
        negative,
        start,
        jac=True,
        hess=negative_hessian,
        method="trust-exact",
        options={"gtol": gradient_tol, "maxiter": max_iter},
    )
    theta = solution.x
    loglik, score, observed, expected = _cloglog_loglik_parts(design @ theta, events, total)
    weights = observed if information == "observed" else expected
    covariance = np.linalg.inv((design * weights[:, None]).T @ design)
    n_alpha = lengths_used.size
    coef = theta[n_alpha:]
    se = np.sqrt(np.diag(covariance)[n_alpha:])
    z = coef / se
    alpha = theta[:n_alpha]
    return IntervalCoxResult(
        names=names,
        coef=_frozen(coef),
        se=_frozen(se),
        z=_frozen(z),
        p_value=_frozen(2.0 * stats.norm.sf(np.abs(z))),
        hazard_ratio=_frozen(np.exp(coef)),
        segment_lengths=_frozen(lengths_used),
        log_baseline_cumhaz=_frozen(alpha),
        dropped_segment_lengths=_frozen(dropped),
        baseline_monotone=bool(np.all(np.diff(alpha) >= 0)),
        loglik=loglik,
        n_obs=int(keep.sum()),
        information=information,
        converged=bool(np.max(np.abs(design.T @ score)) <= gradient_tol),
        n_iter=int(solution.nit),
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
    k = _segment_lengths(segment_length)
    spotted = _spotted_mask(label, bot_label)
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
