"""Bradley-Terry strengths with bootstrap intervals and interval-based ranks.

Model (Bradley & Terry 1952; Zermelo 1929): system i beats system j with probability

    P(i > j) = exp(theta_i) / (exp(theta_i) + exp(theta_j)) = sigmoid(theta_i - theta_j),

identified by the constraint ``sum(theta) = 0``. Given aggregated counts ``W[i, j]`` (wins of
i over j) and symmetric tie counts ``T[i, j]``, a tie counts as half a win for each side
(as in Chatbot Arena), so the fitted weights are ``Weff = W + T / 2`` and the (pseudo-)
log-likelihood is

    l(theta) = sum_{i != j} Weff[i, j] * log sigmoid(theta_i - theta_j).

It is concave; its gradient is ``g_i = sum_j Weff[i, j] - sum_j N[i, j] p_ij`` with
``N = Weff + Weff^T`` and ``p_ij = sigmoid(theta_i - theta_j)``, and its negative Hessian is the
weighted graph Laplacian ``L`` with off-diagonal ``-N[i, j] p_ij (1 - p_ij)``. We maximise it
by damped Newton-Raphson (the same iteration as logistic-regression IRLS), solving
``(L + 11^T / n) step = g`` so every step keeps ``sum(theta) = 0``, with backtracking until the
Armijo condition holds. All bootstrap replicates are fitted at once as a batch.

Existence (Zermelo 1929; Hunter 2004, "MM algorithms for generalized Bradley-Terry models",
Ann. Statist. 32, Assumption 1): a finite maximum exists iff the directed graph with an edge
i -> j whenever ``Weff[i, j] > 0`` is strongly connected: otherwise some group of systems never
lost to the rest (an unbeaten system is the simplest case), and its strength runs off to
infinity, or the comparison graph is disconnected and the groups have no common scale.
Then, and only then, we add ``pseudo_ties`` virtual ties between every pair of systems (half
a win each way; default 1) - a symmetric prior pulling strengths towards each other - and
report it in ``warnings``. Strengths across disconnected components are then set by that
prior only and must not be compared.

Display scale (Elo-like, as Chatbot Arena): ``rating = 1000 + 400 * theta / ln(10)``, so the
mean rating is 1000 and a 400-point gap means 10:1 odds: ``P(i > j) = 1 / (1 + 10^((R_j -
R_i) / 400))``.

Bootstrap (Chatbot Arena, Chiang et al. 2024, section 5 and their ``compute_bootstrap_bt``):
the judgments are collapsed into unique outcomes (ordered pair won, or pair tied) with
counts; each replicate draws multinomial counts over those outcomes with the observed
frequencies and the total number of judgments - exactly a resample of the judgments with
replacement - and refits. (The outcomes are ordered as win cells ``(i, j)`` in row-major
order, then tie cells ``(i < j)``; rounds are drawn in chunks of 25, chunk k with
``np.random.default_rng(np.random.SeedSequence(seed).spawn(n_chunks)[k]).multinomial(...,
size=25)`` (the last chunk smaller), so a replicate can be reproduced outside, and chunks
are drawn on all cores.) Intervals are bootstrap percentiles; the point estimate is the fit
to the full data.

Ranks (Chatbot Arena): ``rank_i = 1 + #{j : low_j > high_i}``, the number of systems
significantly better than i, plus one; systems whose intervals overlap can share a rank.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.sparse.csgraph import connected_components

from evalstats.pairwise import win_count_matrices
from evalstats.proportions import ConfidenceInterval

__all__ = [
    "DEFAULT_PSEUDO_TIES",
    "ELO_ANCHOR",
    "ELO_SCALE",
    "BradleyTerryFit",
    "BradleyTerryResult",
    "bootstrap_bradley_terry",
    "bradley_terry_from_judgments",
    "bradley_terry_log_likelihood",
    "fit_bradley_terry",
    "multinomial_rounds",
    "ranks_from_intervals",
    "to_elo_scale",
]

ELO_SCALE = 400.0
ELO_ANCHOR = 1000.0
# Virtual ties per pair added when the ML estimate does not exist: one tie = half a win each way.
DEFAULT_PSEUDO_TIES = 1.0

# Newton stops when no strength moves by more than _TOLERANCE (or l(theta) is at rounding level).
_TOLERANCE = 1e-10
# Bootstrap rounds are resampled and refitted in chunks of this many, chunk k drawn from child k
# of the seed: the chunks run in threads on all cores (multinomial, ufuncs and LAPACK release
# the GIL), and a round's draws depend on the seed and its position only, not on the cores.
_RESAMPLE_CHUNK = 25
_MAX_ITERATIONS = 100
_ARMIJO_FRACTION = 1e-4
_MAX_HALVINGS = 50
_PRECISION = 1e-15


@dataclass(frozen=True)
class BradleyTerryFit:
    """Maximum-likelihood Bradley-Terry fit.

    Attributes
    ----------
    strengths : ndarray, shape (n,)
        Log-strengths ``theta`` with ``sum(theta) == 0``.
    ratings : ndarray, shape (n,)
        ``to_elo_scale(strengths)``: mean 1000, 400 points = 10:1 odds.
    log_likelihood : float
        ``l(theta)`` of the observed counts alone (pseudo-ties excluded).
    n_iterations : int
    converged : bool
    pseudo_ties : float
        Virtual ties per pair that were added (0.0 when the ML estimate exists).
    component : ndarray of int, shape (n,)
        Connected component of the comparison graph each system belongs to.
    warnings : tuple of str
        Why pseudo-ties were needed, or empty.
    """

    strengths: np.ndarray
    ratings: np.ndarray
    log_likelihood: float
    n_iterations: int
    converged: bool
    pseudo_ties: float
    component: np.ndarray
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class BradleyTerryResult:
    """Bradley-Terry fit with percentile bootstrap intervals and ranks.

    ``confidence_interval`` is on the rating (Elo-like) scale, ``strengths_interval`` on the
    log-strength scale. ``bootstrap_ratings`` has shape ``(n_bootstrap, n)``. ``ranks`` come
    from ``ranks_from_intervals`` applied to the rating intervals.
    """

    strengths: np.ndarray
    ratings: np.ndarray
    confidence_interval: ConfidenceInterval
    strengths_interval: ConfidenceInterval
    ranks: np.ndarray
    bootstrap_ratings: np.ndarray
    n_bootstrap: int
    confidence_level: float
    seed: int | None
    fit: BradleyTerryFit
    warnings: tuple[str, ...]


# --- scales and ranks ------------------------------------------------------------------------


def to_elo_scale(
    strengths: ArrayLike, scale: float = ELO_SCALE, anchor: float = ELO_ANCHOR
) -> np.ndarray:
    """``anchor + scale * theta / ln(10)`` after centring ``theta`` on zero (mean = anchor)."""
    theta = np.asarray(strengths, dtype=float)
    centred = theta - theta.mean(axis=-1, keepdims=True)
    return anchor + scale * centred / np.log(10.0)


def ranks_from_intervals(low: ArrayLike, high: ArrayLike) -> np.ndarray:
    """``rank_i = 1 + #{j : low_j > high_i}`` (Chatbot Arena's rank from confidence intervals)."""
    lo = np.asarray(low, dtype=float)
    hi = np.asarray(high, dtype=float)
    if lo.shape != hi.shape or lo.ndim != 1:
        raise ValueError("low and high must be 1-d arrays of equal length")
    return 1 + (lo[None, :] > hi[:, None]).sum(axis=1)


# --- likelihood and the batched Newton fit ---------------------------------------------------


def percentile_intervals(
    replicate_theta: np.ndarray, confidence: float
) -> tuple[ConfidenceInterval, np.ndarray, ConfidenceInterval]:
    """The bootstrap's percentile intervals of the log-strengths, the replicates on the Elo
    scale, and their intervals (Bradley-Terry's and Plackett-Luce's alike)."""
    tail = (1.0 - confidence) / 2.0
    theta_low, theta_high = np.quantile(replicate_theta, [tail, 1.0 - tail], axis=0)
    ratings = to_elo_scale(replicate_theta)
    rating_low, rating_high = np.quantile(ratings, [tail, 1.0 - tail], axis=0)
    return (
        ConfidenceInterval(theta_low, theta_high),
        ratings,
        ConfidenceInterval(rating_low, rating_high),
    )


def _effective_wins(wins: ArrayLike, ties: ArrayLike | None) -> np.ndarray:
    w = np.asarray(wins, dtype=float)
    if w.ndim != 2 or w.shape[0] != w.shape[1] or w.shape[0] == 0:
        raise ValueError("wins must be a non-empty square matrix")
    t = np.zeros_like(w) if ties is None else np.asarray(ties, dtype=float)
    if t.shape != w.shape:
        raise ValueError("ties must have the same shape as wins")
    if not np.allclose(t, t.T):
        raise ValueError("ties must be symmetric (ties[i, j] == ties[j, i])")
    if np.any(w < 0) or np.any(t < 0) or not np.all(np.isfinite(w + t)):
        raise ValueError("counts must be finite and non-negative")
    effective = w + t / 2.0
    np.fill_diagonal(effective, 0.0)
    return effective


def _batched_log_likelihood(theta: np.ndarray, effective: np.ndarray) -> np.ndarray:
    margin = theta[..., :, None] - theta[..., None, :]
    # log sigmoid(x) = -log(1 + exp(-x)), computed without overflow.
    return -(effective * np.logaddexp(0.0, -margin)).sum(axis=(-2, -1))


def bradley_terry_log_likelihood(
    strengths: ArrayLike, wins: ArrayLike, ties: ArrayLike | None = None
) -> float:
    """``sum_{i != j} Weff[i, j] * log sigmoid(theta_i - theta_j)`` with ``Weff = W + T / 2``."""
    theta = np.asarray(strengths, dtype=float)
    return float(_batched_log_likelihood(theta, _effective_wins(wins, ties)))


def _newton_fit(
    effective: np.ndarray, tol: float, max_iter: int, start: np.ndarray | None = None
) -> tuple[np.ndarray, int, np.ndarray]:
    """Maximise l(theta) for a batch ``effective`` of shape (B, n, n); needs finite optima.

    ``start`` (shape (n,) or (B, n), centred) is where the iterations begin: bootstrap
    replicates start from the full-data fit, a few Newton steps from their own optimum.
    """
    batch, n, _ = effective.shape
    # The likelihood only involves pairs that met: work on those, each pair (i < j) once,
    # with the wins either way, instead of the whole n x n matrix twice.
    rows, cols = np.nonzero(np.triu((effective + np.swapaxes(effective, 1, 2)).any(axis=0), 1))
    pairs = _Pairs(rows, cols, effective[:, rows, cols], effective[:, cols, rows], n)
    won = effective.sum(axis=2)
    centring = 1.0 / n
    theta = np.zeros((batch, n)) if start is None else np.broadcast_to(start, (batch, n)).copy()
    log_lik, p = pairs.log_likelihood_and_probability(theta)
    converged = np.zeros(batch, dtype=bool)
    diagonal = np.arange(n)
    n_iterations = 0
    while n_iterations < max_iter and not converged.all():
        n_iterations += 1
        gradient = won - pairs.expected_wins(p)
        information = pairs.totals * p * (1.0 - p)
        # (L + 11^T / n): the Laplacian with off-diagonal -N_ij p_ij (1 - p_ij).
        system = np.full((batch, n, n), centring)
        system[:, rows, cols] -= information
        system[:, cols, rows] -= information
        system[:, diagonal, diagonal] += pairs.per_system(information)
        step = np.linalg.solve(system, gradient[..., None])[..., 0]
        step[converged] = 0.0
        theta, log_lik, p = _backtrack(theta, step, gradient, log_lik, p, pairs)
        # Newton decrement g^T L^-1 g ~ twice the remaining gain in l(theta). Below rounding
        # level of l the step is noise (near-separated data make L nearly singular), and
        # the step just taken has already brought theta to machine precision.
        decrement = (gradient * step).sum(axis=1)
        at_precision = decrement <= _PRECISION * (1.0 + np.abs(log_lik))
        converged |= (np.abs(step).max(axis=1) < tol) | at_precision
    return theta - theta.mean(axis=1, keepdims=True), n_iterations, converged


class _Pairs:
    """The pairs that met, ``rows[k] < cols[k]``, with ``forward`` wins of rows over cols and
    ``backward`` wins of cols over rows per batch element (shape (B, P))."""

    def __init__(self, rows, cols, forward, backward, n):
        self.rows, self.cols, self.n = rows, cols, n
        self.forward, self.backward = forward, backward
        self.totals = forward + backward

    def log_likelihood_and_probability(self, theta):
        """l(theta) per batch element and ``p = sigmoid(theta_row - theta_col)`` per pair."""
        margin = theta[:, self.rows] - theta[:, self.cols]
        # log sigmoid(+-m) = -(log1p(exp(-|m|)) + max(0, -+m)), one exp for both sides.
        decay = np.exp(-np.abs(margin))
        softplus = np.log1p(decay)
        loss = self.totals * softplus
        loss += self.forward * np.maximum(-margin, 0.0) + self.backward * np.maximum(margin, 0.0)
        p = np.where(margin >= 0, 1.0, decay) / (1.0 + decay)
        return -loss.sum(axis=1), p

    def per_system(self, values):
        """``sum_j values_ij`` for each system i over the pairs it is in (batch, n)."""
        return _scatter_sum(values, self.rows, self.n) + _scatter_sum(values, self.cols, self.n)

    def expected_wins(self, p):
        """``sum_j N_ij p_ij`` per system."""
        expected = self.totals * p
        return _scatter_sum(expected, self.rows, self.n) + _scatter_sum(
            self.totals - expected, self.cols, self.n
        )


def _scatter_sum(values: np.ndarray, index: np.ndarray, n: int) -> np.ndarray:
    """``out[b, i] = sum of values[b, k] with index[k] == i``, for every batch row at once."""
    batch = values.shape[0]
    flat = (index[None, :] + n * np.arange(batch)[:, None]).ravel()
    return np.bincount(flat, weights=values.ravel(), minlength=batch * n).reshape(batch, n)


def _backtrack(
    theta: np.ndarray,
    step: np.ndarray,
    gradient: np.ndarray,
    log_lik: np.ndarray,
    p: np.ndarray,
    pairs: _Pairs,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # Full Newton steps can overshoot far from the optimum (large strength gaps); halve each
    # replicate's step until the Armijo condition holds. The slack term absorbs rounding in
    # l(theta) once the remaining improvement is below machine precision.
    ascent = (gradient * step).sum(axis=1)
    slack = 1e-12 * (1.0 + np.abs(log_lik))
    size = np.ones(theta.shape[0])
    accepted = np.zeros(theta.shape[0], dtype=bool)
    new_theta, new_log_lik, new_p = theta.copy(), log_lik.copy(), p.copy()
    for _ in range(_MAX_HALVINGS):
        candidate = theta + size[:, None] * step
        candidate_log_lik, candidate_p = pairs.log_likelihood_and_probability(candidate)
        ok = ~accepted & (candidate_log_lik >= log_lik + _ARMIJO_FRACTION * size * ascent - slack)
        new_theta[ok], new_log_lik[ok], new_p[ok] = (
            candidate[ok],
            candidate_log_lik[ok],
            candidate_p[ok],
        )
        accepted |= ok
        if accepted.all():
            break
        size = np.where(accepted, size, size / 2.0)
    return new_theta, new_log_lik, new_p


# --- existence of the ML estimate ------------------------------------------------------------


def _strongly_connected(effective: np.ndarray) -> np.ndarray:
    """Per batch element: is the directed graph i -> j (Weff[i, j] > 0) strongly connected?"""
    n = effective.shape[-1]
    reach = (effective > 0) | np.eye(n, dtype=bool)
    done = reach.all(axis=(-2, -1))
    if reach.ndim == 2:
        reach, done = reach[None], done[None]
    # Repeated squaring of the reachability relation: 2^k-step paths after k squarings, only
    # for the graphs not yet complete. Path counts in float32 are exact enough for "> 0"
    # (BLAS; integer matmul has none), and re-thresholding each time keeps them below n.
    pending = np.flatnonzero(~done)
    for _ in range(int(np.ceil(np.log2(max(n, 2))))):
        if pending.size == 0:
            break
        relation = reach[pending].astype(np.float32)
        squared = np.matmul(relation, relation) > 0
        reach[pending] = squared
        complete = squared.all(axis=(-2, -1))
        done[pending[complete]] = True
        pending = pending[~complete]
    return done if effective.ndim > 2 else done[0]


def _name(index: int, labels: Sequence[str] | None) -> str:
    return labels[index] if labels is not None else f"system {index}"


def _names(indices: np.ndarray, labels: Sequence[str] | None) -> str:
    return ", ".join(_name(int(i), labels) for i in indices)


def _existence_warnings(
    effective: np.ndarray, component: np.ndarray, labels: Sequence[str] | None
) -> list[str]:
    totals = effective + effective.T
    played = totals.sum(axis=1) > 0
    messages = []
    if not played.all():
        messages.append(
            f"no comparisons for {_names(np.flatnonzero(~played), labels)}: "
            "strength set by the prior only"
        )
    n_components = np.unique(component[played]).size
    if n_components > 1:
        messages.append(
            f"the comparison graph has {n_components} disconnected groups of systems; "
            "strengths of systems in different groups are set by the prior, not by data, "
            "and must not be compared"
        )
    unbeaten = np.flatnonzero(played & (effective.sum(axis=0) == 0))
    if unbeaten.size:
        messages.append(f"unbeaten (ML strength +infinity): {_names(unbeaten, labels)}")
    winless = np.flatnonzero(played & (effective.sum(axis=1) == 0))
    if winless.size:
        messages.append(f"winless (ML strength -infinity): {_names(winless, labels)}")
    if not messages:
        messages.append(
            "a group of systems never lost to the others (the win graph is not strongly "
            "connected): the ML strengths are infinite"
        )
    return messages


# --- public fits -----------------------------------------------------------------------------


def fit_bradley_terry(
    wins: ArrayLike,
    ties: ArrayLike | None = None,
    *,
    pseudo_ties: float = DEFAULT_PSEUDO_TIES,
    labels: Sequence[str] | None = None,
    tol: float = _TOLERANCE,
    max_iter: int = _MAX_ITERATIONS,
) -> BradleyTerryFit:
    """Maximum-likelihood Bradley-Terry strengths from ``wins[i, j]`` and symmetric ``ties``.

    When the ML estimate does not exist (see the module docstring) ``pseudo_ties`` virtual
    ties are added to every pair and ``warnings`` says why; ``pseudo_ties=0`` makes that case a
    ``ValueError`` instead. ``labels`` (system names) are only used in warning messages.
    """
    effective = _effective_wins(wins, ties)
    n = effective.shape[0]
    _, component = connected_components(effective + effective.T > 0, directed=False)
    messages: list[str] = []
    used_pseudo_ties = 0.0
    if n > 1 and not _strongly_connected(effective):
        messages = _existence_warnings(effective, component, labels)
        if pseudo_ties <= 0:
            raise ValueError("no finite ML estimate: " + "; ".join(messages))
        used_pseudo_ties = float(pseudo_ties)
        messages.append(
            f"added {used_pseudo_ties:g} virtual tie(s) between every pair of systems "
            "(half a win each way) to keep strengths finite"
        )
    regularised = _with_pseudo_ties(effective[None], np.array([used_pseudo_ties]))
    theta, n_iterations, converged = _newton_fit(regularised, tol, max_iter)
    if not converged[0]:
        messages.append(f"Newton iterations did not converge within {max_iter} steps")
    return BradleyTerryFit(
        strengths=theta[0],
        ratings=to_elo_scale(theta[0]),
        log_likelihood=float(_batched_log_likelihood(theta[0], effective)),
        n_iterations=n_iterations,
        converged=bool(converged[0]),
        pseudo_ties=used_pseudo_ties,
        component=component,
        warnings=tuple(messages),
    )


def _with_pseudo_ties(effective: np.ndarray, pseudo_ties: np.ndarray) -> np.ndarray:
    n = effective.shape[-1]
    off_diagonal = 1.0 - np.eye(n)
    return effective + (pseudo_ties / 2.0)[:, None, None] * off_diagonal


def _unique_outcomes(wins: np.ndarray, ties: np.ndarray) -> tuple[np.ndarray, ...]:
    """Cells holding outcomes: (row, col, is_tie, count); ties listed once per pair (i < j)."""
    win_rows, win_cols = np.nonzero(wins)
    tie_rows, tie_cols = np.nonzero(np.triu(ties, k=1))
    rows = np.concatenate([win_rows, tie_rows])
    cols = np.concatenate([win_cols, tie_cols])
    is_tie = np.concatenate([np.zeros(win_rows.size, bool), np.ones(tie_rows.size, bool)])
    counts = np.concatenate([wins[win_rows, win_cols], ties[tie_rows, tie_cols]])
    return rows, cols, is_tie, counts


def _round_chunks(n_rounds: int, seed: int | None) -> list[tuple[np.random.Generator, int]]:
    """(generator, number of rounds) per chunk of ``_RESAMPLE_CHUNK`` rounds, chunk k drawn
    with child k of ``SeedSequence(seed)``."""
    starts = range(0, n_rounds, _RESAMPLE_CHUNK)
    streams = np.random.SeedSequence(seed).spawn(len(starts))
    return [
        (np.random.default_rng(stream), min(_RESAMPLE_CHUNK, n_rounds - start))
        for start, stream in zip(starts, streams, strict=True)
    ]


def _on_all_cores(function, items: list) -> list:
    """``[function(item) for item in items]`` in threads: the numpy and LAPACK work of the
    bootstrap chunks releases the GIL."""
    workers = min(len(items), os.cpu_count() or 1)
    if workers <= 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(function, items))


def multinomial_rounds(
    total: int, probabilities: np.ndarray, n_rounds: int, seed: int | None
) -> np.ndarray:
    """``n_rounds`` multinomial draws of ``total`` over ``probabilities`` (shape (rounds, K)),
    chunk by chunk as ``bootstrap_bradley_terry`` draws them: the same for a seed on any
    number of cores."""
    return np.concatenate(
        _on_all_cores(
            lambda chunk: chunk[0].multinomial(total, probabilities, size=chunk[1]),
            _round_chunks(n_rounds, seed),
        )
    )


def _resampled_effective_wins(
    outcomes: tuple[np.ndarray, ...], n: int, rng: np.random.Generator, n_rounds: int
) -> np.ndarray:
    rows, cols, is_tie, counts = outcomes
    total = int(counts.sum())
    draws = rng.multinomial(total, counts / total, size=n_rounds).astype(float)
    effective = np.zeros((n_rounds, n, n))
    # A resampled tie is half a win for each side; a resampled win is a whole one. Each cell
    # appears once among the wins and once among the ties (i < j), so plain indexing adds up.
    n_wins = int((~is_tie).sum())
    effective[:, rows[:n_wins], cols[:n_wins]] = draws[:, :n_wins]
    half_ties = draws[:, n_wins:] * 0.5
    effective[:, rows[n_wins:], cols[n_wins:]] += half_ties
    effective[:, cols[n_wins:], rows[n_wins:]] += half_ties
    return effective


def _integer_counts(matrix: ArrayLike | None, shape: tuple[int, ...], name: str) -> np.ndarray:
    values = np.zeros(shape) if matrix is None else np.asarray(matrix, dtype=float)
    if np.any(values != np.round(values)):
        raise ValueError(f"the bootstrap resamples judgments: {name} must be integer counts")
    return values.astype(np.int64)


def bootstrap_bradley_terry(
    wins: ArrayLike,
    ties: ArrayLike | None = None,
    *,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int | None = None,
    pseudo_ties: float = DEFAULT_PSEUDO_TIES,
    labels: Sequence[str] | None = None,
) -> BradleyTerryResult:
    """Bradley-Terry fit plus percentile bootstrap intervals and ranks (Chatbot Arena style).

    ``wins``/``ties`` are integer judgment counts (see ``pairwise.win_count_matrices``). A
    replicate whose resample has no finite ML estimate (e.g. a rarely beaten system drew no
    losses) is fitted with ``pseudo_ties`` and counted in ``warnings``; so is the full-data
    fit, in which case every replicate gets the same pseudo-ties, keeping one estimator
    throughout. ``seed`` makes the result reproducible.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if n_bootstrap < 1:
        raise ValueError("n_bootstrap must be at least 1")
    fit = fit_bradley_terry(wins, ties, pseudo_ties=pseudo_ties, labels=labels)
    n = fit.strengths.size
    win_counts = _integer_counts(wins, (n, n), "wins")
    tie_counts = _integer_counts(ties, (n, n), "ties")
    np.fill_diagonal(win_counts, 0)
    np.fill_diagonal(tie_counts, 0)
    messages = list(fit.warnings)
    if win_counts.sum() + np.triu(tie_counts, k=1).sum() == 0:
        replicate_theta = np.zeros((n_bootstrap, n))
    else:
        outcomes = _unique_outcomes(win_counts, tie_counts)

        def resample(chunk):
            effective = _resampled_effective_wins(outcomes, n, *chunk)
            if fit.pseudo_ties:
                # The full data needed the prior: keep one estimator across all replicates.
                return effective, np.ones(chunk[1], dtype=bool)
            return effective, ~_strongly_connected(effective)

        resampled = _on_all_cores(resample, _round_chunks(n_bootstrap, seed))
        needs_prior = np.concatenate([chunk_needs for _, chunk_needs in resampled])
        if needs_prior.any() and not fit.pseudo_ties:
            message = (
                f"{int(needs_prior.sum())} of {n_bootstrap} bootstrap replicates had no "
                f"finite ML estimate"
            )
            if pseudo_ties <= 0:
                raise ValueError(message)
            messages.append(f"{message} and were fitted with {pseudo_ties:g} virtual tie(s)")

        def refit(chunk):
            effective, chunk_needs = chunk
            prior = np.where(chunk_needs, float(pseudo_ties), 0.0)
            # Start every replicate from the full-data fit: it is within sampling error of
            # each replicate's optimum, so Newton needs a few steps instead of a climb from
            # zero. A replicate that needed the prior while the full data did not starts
            # from zero.
            start = np.where(chunk_needs[:, None] & (fit.pseudo_ties == 0), 0.0, fit.strengths)
            theta, _, converged = _newton_fit(
                _with_pseudo_ties(effective, prior), _TOLERANCE, _MAX_ITERATIONS, start
            )
            return theta, converged

        refitted = _on_all_cores(refit, resampled)
        replicate_theta = np.concatenate([theta for theta, _ in refitted])
        converged = np.concatenate([chunk_converged for _, chunk_converged in refitted])
        if not converged.all():
            messages.append(f"{int((~converged).sum())} bootstrap fits did not converge")
    strengths_interval, bootstrap_ratings, interval = percentile_intervals(
        replicate_theta, confidence
    )
    return BradleyTerryResult(
        strengths=fit.strengths,
        ratings=fit.ratings,
        confidence_interval=interval,
        strengths_interval=strengths_interval,
        ranks=ranks_from_intervals(interval.low, interval.high),
        bootstrap_ratings=bootstrap_ratings,
        n_bootstrap=n_bootstrap,
        confidence_level=confidence,
        seed=seed,
        fit=fit,
        warnings=tuple(messages),
    )


def bradley_terry_from_judgments(
    system_a: ArrayLike,
    system_b: ArrayLike,
    outcome: ArrayLike,
    n_systems: int | None = None,
    **options,
) -> BradleyTerryResult:
    """``bootstrap_bradley_terry`` on flat judgment arrays (outcome codes as in ``pairwise``)."""
    wins, ties = win_count_matrices(system_a, system_b, outcome, n_systems)
    return bootstrap_bradley_terry(wins, ties, **options)
