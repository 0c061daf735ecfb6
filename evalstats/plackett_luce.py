"""Plackett-Luce strengths from k-way rankings, with bootstrap intervals: Bradley-Terry's
generalisation, on Bradley-Terry's scale, so that pairwise judgments are its k = 2 case.

Model (Luce 1959; Plackett 1975): a ranking of k systems is read as k - 1 successive
choices; the best is chosen from all k, the second from the k - 1 left, and so on, each
with probability ``exp(theta_i) / sum_{j in remaining} exp(theta_j)``. For k = 2 this is
Bradley-Terry's ``sigmoid(theta_i - theta_j)``.

Ties. A ranking is a list of tiers, best first; systems in one tier are tied. A tier is
read as every order of its members, equally likely, each weighted by 1 / m! (m its size):
the log-likelihood of the ranking is the mean of the log-likelihoods of its untied
versions. We chose this over the Davidson-Luce extension (Firth, Kosmidis & Turner 2019)
because it adds no parameter and it is exactly Bradley-Terry's rule in this code base
(and Chatbot Arena's): a tie between two systems is half a win for each, so k = 2 gives
`evalstats.bradley_terry` unchanged; and with no ties it is plain Plackett-Luce, which
`choix` (Maystre & Grossglauser 2015) fits independently. The m! orders are not
enumerated: averaged over the orders, the tier contributes one choice per non-empty subset
S of the tier (the members not yet chosen) and member i of S, "i chosen from S and all
lower tiers", with weight ``1 / (C(m, |S|) * |S|)``: ``m * 2^(m - 1)`` choices, so a tier
has at most `MAX_TIED` members.

Fit: the weighted log-likelihood ``sum_e w_e (theta_{winner_e} - log sum_{j in S_e}
exp(theta_j))`` is concave; it is maximised by damped Newton-Raphson with backtracking
(Armijo), solving ``(H + 11^T / n) step = g`` so that every step keeps ``sum(theta) = 0``,
as `evalstats.bradley_terry` does. Bootstrap replicates are fitted as a batch, from the
full-data fit.

Existence (Hunter 2004, "MM algorithms for generalized Bradley-Terry models", Ann. Statist.
32: Bradley-Terry's condition, read over every choice of the rankings): a finite maximum
exists iff the directed graph with an edge i -> j whenever i was chosen while j was still
in the choice set is strongly connected. Otherwise, and only then, ``pseudo_ties`` virtual ties are added between every
pair of systems (half a win each way), the prior Bradley-Terry uses, and ``warnings`` say
why.

Scale, bootstrap and ranks are Bradley-Terry's (`evalstats.bradley_terry`): ratings
``1000 + 400 * theta / ln(10)``; the rankings are collapsed into unique rankings with
counts (ordered as: rankings without ties before rankings with ties, then by the systems
in ranking order, then by tier sizes - for k = 2 that is Bradley-Terry's order of win
cells then tie cells) and each replicate is a multinomial draw of those counts
(`multinomial_rounds`, chunked by the seed as Bradley-Terry draws them), i.e. a resample of
the judgments with replacement; percentile intervals; ``rank_i = 1 + #{j : low_j > high_i}``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from math import comb

import numpy as np
from scipy.sparse.csgraph import connected_components

from evalstats.bradley_terry import (
    DEFAULT_PSEUDO_TIES,
    _existence_warnings,
    _strongly_connected,
    multinomial_rounds,
    ranks_from_intervals,
    to_elo_scale,
)
from evalstats.proportions import ConfidenceInterval

__all__ = [
    "MAX_TIED",
    "PlackettLuceFit",
    "PlackettLuceResult",
    "bootstrap_plackett_luce",
    "fit_plackett_luce",
    "plackett_luce_log_likelihood",
]

# The most systems one tier may tie: a tier of m gives m * 2^(m - 1) weighted choices.
MAX_TIED = 10

_TOLERANCE = 1e-10
_MAX_ITERATIONS = 100
_ARMIJO_FRACTION = 1e-4
_MAX_HALVINGS = 50
_PRECISION = 1e-15

Ranking = tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class PlackettLuceFit:
    """Maximum-likelihood Plackett-Luce fit; the fields of `BradleyTerryFit`.

    ``strengths`` are log-strengths with ``sum == 0``; ``ratings`` their Elo-like scale;
    ``log_likelihood`` that of the rankings alone (pseudo-ties excluded); ``pseudo_ties``
    the virtual ties per pair that were added (0.0 when the ML estimate exists);
    ``component`` the connected group of the comparison graph of each system.
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
class PlackettLuceResult:
    """The fit with percentile bootstrap intervals and ranks; the fields of
    `BradleyTerryResult` (``confidence_interval`` on the rating scale,
    ``bootstrap_ratings`` of shape ``(n_bootstrap, n)``), plus ``n_rankings``."""

    strengths: np.ndarray
    ratings: np.ndarray
    confidence_interval: ConfidenceInterval
    strengths_interval: ConfidenceInterval
    ranks: np.ndarray
    bootstrap_ratings: np.ndarray
    n_bootstrap: int
    confidence_level: float
    seed: int | None
    fit: PlackettLuceFit
    n_rankings: int
    warnings: tuple[str, ...]


# --- rankings into weighted choices ------------------------------------------------------------


def _canonical(ranking, n: int, where: int) -> Ranking:
    if isinstance(ranking, str | bytes) or not isinstance(ranking, Sequence):
        raise ValueError(f"ranking {where}: give a list of tiers (lists of system indices)")
    tiers = []
    for tier in ranking:
        if isinstance(tier, str | bytes) or not isinstance(tier, Sequence) or not tier:
            raise ValueError(f"ranking {where}: every tier must be a non-empty list of systems")
        members = []
        for system in tier:
            if isinstance(system, bool) or not isinstance(system, int | np.integer):
                raise ValueError(f"ranking {where}: systems are integer indices, not {system!r}")
            if not 0 <= system < n:
                raise ValueError(f"ranking {where}: system {system} is not in 0 .. {n - 1}")
            members.append(int(system))
        if len(members) > MAX_TIED:
            raise ValueError(f"ranking {where}: at most {MAX_TIED} systems may tie")
        tiers.append(tuple(sorted(members)))
    flat = [s for tier in tiers for s in tier]
    if len(set(flat)) != len(flat):
        raise ValueError(f"ranking {where}: a system appears twice")
    if len(flat) < 2:
        raise ValueError(f"ranking {where}: a ranking compares at least 2 systems")
    return tuple(tiers)


def _order_key(ranking: Ranking) -> tuple:
    # For k = 2: (False, (i, j)) for "i beat j" then (True, (i, j)) for ties, i < j - the
    # order of Bradley-Terry's win cells then tie cells, so the same seed draws the same
    # resamples.
    return (
        any(len(tier) > 1 for tier in ranking),
        tuple(s for tier in ranking for s in tier),
        tuple(len(tier) for tier in ranking),
    )


def _unique_rankings(rankings, n: int) -> tuple[list[Ranking], np.ndarray]:
    counts = Counter(_canonical(r, n, where) for where, r in enumerate(rankings, 1))
    unique = sorted(counts, key=_order_key)
    return unique, np.array([counts[r] for r in unique], dtype=np.int64)


@dataclass(frozen=True)
class _Choices:
    """Weighted choices: ``winner[e]`` chosen from ``members[e, mask[e]]`` with weight
    ``weight[e]`` per judgment of unique ranking ``source[e]``."""

    winner: np.ndarray
    members: np.ndarray
    mask: np.ndarray
    weight: np.ndarray
    source: np.ndarray


def _choices(unique: list[Ranking]) -> _Choices:
    rows: list[tuple[int, tuple[int, ...], float, int]] = []
    for index, ranking in enumerate(unique):
        for position, tier in enumerate(ranking):
            lower = tuple(s for later in ranking[position + 1 :] for s in later)
            m = len(tier)
            for size in range(1, m + 1):
                if size + len(lower) < 2:
                    continue  # the last system left is "chosen" with probability 1
                weight = 1.0 / (comb(m, size) * size)
                for remaining in combinations(tier, size):
                    for winner in remaining:
                        rows.append((winner, remaining + lower, weight, index))
    width = max(len(r[1]) for r in rows)
    members = np.zeros((len(rows), width), dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=bool)
    for e, (_, chosen_from, _, _) in enumerate(rows):
        members[e, : len(chosen_from)] = chosen_from
        mask[e, : len(chosen_from)] = True
    return _Choices(
        winner=np.array([r[0] for r in rows], dtype=np.int64),
        members=members,
        mask=mask,
        weight=np.array([r[2] for r in rows], dtype=float),
        source=np.array([r[3] for r in rows], dtype=np.int64),
    )


def _with_prior(choices: _Choices, n: int, pseudo_ties: float) -> _Choices:
    """The choices plus ``pseudo_ties`` virtual ties between every pair: each pair a
    two-system tier (half a win each way), outside every ranking (never resampled)."""
    if not pseudo_ties:
        return choices
    first, second = np.triu_indices(n, k=1)
    winner = np.concatenate([first, second])
    pair = np.stack([np.concatenate([first, first]), np.concatenate([second, second])], axis=1)
    width = choices.members.shape[1]  # at least 2: every ranking compares two systems
    members = np.zeros((winner.size, width), dtype=np.int64)
    members[:, :2] = pair
    mask = np.zeros((winner.size, width), dtype=bool)
    mask[:, :2] = True
    return _Choices(
        winner=np.concatenate([choices.winner, winner]),
        members=np.concatenate([choices.members, members]),
        mask=np.concatenate([choices.mask, mask]),
        weight=np.concatenate([choices.weight, np.full(winner.size, pseudo_ties / 2.0)]),
        source=np.concatenate([choices.source, np.full(winner.size, -1)]),
    )


def _weights(choices: _Choices, counts: np.ndarray) -> np.ndarray:
    """Per batch row of ranking ``counts`` (B, R): each choice's weight (B, E)."""
    per_ranking = np.concatenate([counts, np.ones((counts.shape[0], 1))], axis=1)
    # source -1 (a virtual tie) reads the appended column of ones.
    return choices.weight[None, :] * per_ranking[:, choices.source]


def _beats(choices: _Choices, weights: np.ndarray, n: int) -> np.ndarray:
    """(B, n, n): weight of choices where i was chosen while j was in the choice set."""
    batch = weights.shape[0]
    width = choices.members.shape[1]
    winners = np.repeat(choices.winner, width)
    others = choices.members.ravel()
    keep = choices.mask.ravel() & (winners != others)
    cells = winners[keep] * n + others[keep]
    values = np.repeat(weights, width, axis=1)[:, keep]
    flat = (cells[None, :] + n * n * np.arange(batch)[:, None]).ravel()
    return np.bincount(flat, weights=values.ravel(), minlength=batch * n * n).reshape(batch, n, n)


# --- likelihood and the batched Newton fit ---------------------------------------------------


def _log_likelihood_and_probability(theta, choices: _Choices, weights):
    logits = theta[:, choices.members]
    # Padding holds system 0: masked out of the maximum and, as exp(-inf) = 0, of the sum.
    logits[:, ~choices.mask] = -np.inf
    top = logits.max(axis=2, keepdims=True)
    probability = np.exp(logits - top)
    total = probability.sum(axis=2, keepdims=True)
    probability /= total
    normaliser = (top + np.log(total))[..., 0]
    chosen = theta[:, choices.winner]
    return (weights * (chosen - normaliser)).sum(axis=1), probability


class _Scatter:
    """``out[b, i] = sum of values[b, k] with index[k] == i`` for every batch row, the flat
    bin of each (row, k) worked out once per fit instead of once per Newton step."""

    def __init__(self, index: np.ndarray, size: int, batch: int):
        self.size, self.batch = size, batch
        self.flat = (index[None, :] + size * np.arange(batch)[:, None]).ravel()

    def __call__(self, values: np.ndarray) -> np.ndarray:
        sums = np.bincount(self.flat, weights=values.ravel(), minlength=self.batch * self.size)
        return sums.reshape(self.batch, self.size)


def _newton_fit(choices: _Choices, weights, n, start, tol=_TOLERANCE, max_iter=_MAX_ITERATIONS):
    batch = weights.shape[0]
    theta = np.broadcast_to(start, (batch, n)).copy()
    to_winners = _Scatter(choices.winner, n, batch)
    to_members = _Scatter(choices.members.ravel(), n, batch)
    to_pairs = _Scatter(
        (choices.members[:, :, None] * n + choices.members[:, None, :]).ravel(), n * n, batch
    )
    won = to_winners(weights)
    log_lik, p = _log_likelihood_and_probability(theta, choices, weights)
    converged = np.zeros(batch, dtype=bool)
    diagonal = np.arange(n)
    n_iterations = 0
    while n_iterations < max_iter and not converged.all():
        n_iterations += 1
        weighted_p = weights[..., None] * p
        expected = to_members(weighted_p)
        gradient = won - expected
        # Negative Hessian: sum_e w_e (diag(p_e) - p_e p_e^T), plus 11^T / n to fix the mean.
        outer = weighted_p[..., :, None] * p[..., None, :]
        system = -to_pairs(outer).reshape(batch, n, n) + 1.0 / n
        system[:, diagonal, diagonal] += expected
        step = np.linalg.solve(system, gradient[..., None])[..., 0]
        step[converged] = 0.0
        theta, log_lik, p = _backtrack(theta, step, gradient, log_lik, p, choices, weights)
        decrement = (gradient * step).sum(axis=1)
        at_precision = decrement <= _PRECISION * (1.0 + np.abs(log_lik))
        converged |= (np.abs(step).max(axis=1) < tol) | at_precision
    return theta - theta.mean(axis=1, keepdims=True), n_iterations, converged


def _backtrack(theta, step, gradient, log_lik, p, choices, weights):
    # Bradley-Terry's step control: halve each replicate's step until Armijo holds.
    ascent = (gradient * step).sum(axis=1)
    slack = 1e-12 * (1.0 + np.abs(log_lik))
    size = np.ones(theta.shape[0])
    accepted = np.zeros(theta.shape[0], dtype=bool)
    new_theta, new_log_lik, new_p = theta.copy(), log_lik.copy(), p.copy()
    for _ in range(_MAX_HALVINGS):
        candidate = theta + size[:, None] * step
        candidate_log_lik, candidate_p = _log_likelihood_and_probability(
            candidate, choices, weights
        )
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


# Replicates refitted at once: Bradley-Terry's 25, fewer when the Hessian's per-choice terms
# (choices x width^2 per replicate) would pass this many floats.
_CHUNK = 25
_CHUNK_FLOATS = 4_000_000


def _chunks(rows: np.ndarray, choices: _Choices) -> list[np.ndarray]:
    per_replicate = choices.members.size * choices.members.shape[1]
    size = max(1, min(_CHUNK, _CHUNK_FLOATS // max(per_replicate, 1)))
    return np.array_split(rows, max(1, -(-rows.size // size)))


# --- public functions ------------------------------------------------------------------------


def _check_n(n_systems: int) -> int:
    if isinstance(n_systems, bool) or not isinstance(n_systems, int | np.integer):
        raise ValueError("n_systems must be an integer")
    if n_systems < 2:
        raise ValueError("n_systems must be at least 2")
    return int(n_systems)


def plackett_luce_log_likelihood(strengths, rankings, n_systems: int) -> float:
    """The log-likelihood of ``rankings`` (ties as every order, averaged) at ``strengths``."""
    n = _check_n(n_systems)
    unique, counts = _unique_rankings(rankings, n)
    if not unique:
        raise ValueError("no rankings to fit")
    choices = _choices(unique)
    theta = np.asarray(strengths, dtype=float)
    if theta.shape != (n,):
        raise ValueError(f"strengths must be {n} numbers, one per system")
    theta = theta[None, :]
    return float(
        _log_likelihood_and_probability(theta, choices, _weights(choices, counts[None]))[0][0]
    )


def _plain_choices(unique: list[Ranking]) -> _Choices:
    if not unique:
        raise ValueError("no rankings to fit")
    return _choices(unique)


def _fit(plain: _Choices, counts, n, pseudo_ties, labels) -> PlackettLuceFit:
    beats = _beats(plain, _weights(plain, counts[None].astype(float)), n)[0]
    _, component = connected_components(beats + beats.T > 0, directed=False)
    messages: list[str] = []
    used = 0.0
    if not _strongly_connected(beats):
        messages = _existence_warnings(beats, component, labels)
        if pseudo_ties <= 0:
            raise ValueError("no finite ML estimate: " + "; ".join(messages))
        used = float(pseudo_ties)
        messages.append(
            f"added {used:g} virtual tie(s) between every pair of systems "
            "(half a win each way) to keep strengths finite"
        )
    choices = _with_prior(plain, n, used)
    theta, n_iterations, converged = _newton_fit(
        choices, _weights(choices, counts[None].astype(float)), n, np.zeros(n)
    )
    if not converged[0]:
        messages.append(f"Newton iterations did not converge within {_MAX_ITERATIONS} steps")
    log_lik = _log_likelihood_and_probability(
        theta, plain, _weights(plain, counts[None].astype(float))
    )[0][0]
    return PlackettLuceFit(
        strengths=theta[0],
        ratings=to_elo_scale(theta[0]),
        log_likelihood=float(log_lik),
        n_iterations=n_iterations,
        converged=bool(converged[0]),
        pseudo_ties=used,
        component=component,
        warnings=tuple(messages),
    )


def fit_plackett_luce(
    rankings,
    n_systems: int,
    *,
    pseudo_ties: float = DEFAULT_PSEUDO_TIES,
    labels: Sequence[str] | None = None,
) -> PlackettLuceFit:
    """Maximum-likelihood Plackett-Luce strengths of systems ``0 .. n_systems - 1``.

    ``rankings``: each a list of tiers, best first, a tier a list of tied system indices
    (``[[2], [0, 1]]``: 2 first, 0 and 1 tied behind it). When the ML estimate does not
    exist ``pseudo_ties`` virtual ties are added (``0`` makes that a ``ValueError``).
    ``labels`` name the systems in warnings only.
    """
    n = _check_n(n_systems)
    unique, counts = _unique_rankings(rankings, n)
    return _fit(_plain_choices(unique), counts, n, pseudo_ties, labels)


def bootstrap_plackett_luce(
    rankings,
    n_systems: int,
    *,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int | None = None,
    pseudo_ties: float = DEFAULT_PSEUDO_TIES,
    labels: Sequence[str] | None = None,
) -> PlackettLuceResult:
    """The fit plus percentile bootstrap intervals (rankings resampled with replacement)
    and interval-based ranks, as `bootstrap_bradley_terry` gives them; ``seed`` makes it
    reproducible. A replicate without a finite ML estimate is fitted with ``pseudo_ties``
    (every replicate is when the full data needed them) and counted in ``warnings``."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, int) or n_bootstrap < 1:
        raise ValueError("n_bootstrap must be an integer of at least 1")
    n = _check_n(n_systems)
    unique, counts = _unique_rankings(rankings, n)
    plain = _plain_choices(unique)
    fit = _fit(plain, counts, n, pseudo_ties, labels)
    messages = list(fit.warnings)
    total = int(counts.sum())
    draws = multinomial_rounds(total, counts / total, n_bootstrap, seed).astype(float)
    if fit.pseudo_ties:
        needs_prior = np.ones(n_bootstrap, dtype=bool)
    else:
        needs_prior = np.concatenate(
            [
                ~_strongly_connected(_beats(plain, _weights(plain, draws[chunk]), n))
                for chunk in _chunks(np.arange(n_bootstrap), plain)
            ]
        )
        if needs_prior.any():
            message = (
                f"{int(needs_prior.sum())} of {n_bootstrap} bootstrap replicates had no "
                "finite ML estimate"
            )
            if pseudo_ties <= 0:
                raise ValueError(message)
            messages.append(f"{message} and were fitted with {pseudo_ties:g} virtual tie(s)")
    replicate_theta = np.empty((n_bootstrap, n))
    converged = np.ones(n_bootstrap, dtype=bool)
    for prior in (False, True):
        rows = np.flatnonzero(needs_prior == prior)
        if rows.size == 0:
            continue
        choices = _with_prior(plain, n, float(pseudo_ties) if prior else 0.0)
        # From the full-data fit: within sampling error of each replicate's optimum. A
        # replicate needing the prior the full data did not need starts from zero.
        start = np.zeros(n) if prior and not fit.pseudo_ties else fit.strengths
        for chunk in _chunks(rows, choices):
            theta, _, done = _newton_fit(choices, _weights(choices, draws[chunk]), n, start)
            replicate_theta[chunk] = theta
            converged[chunk] = done
    if not converged.all():
        messages.append(f"{int((~converged).sum())} bootstrap fits did not converge")
    tail = (1.0 - confidence) / 2.0
    theta_low, theta_high = np.quantile(replicate_theta, [tail, 1.0 - tail], axis=0)
    bootstrap_ratings = to_elo_scale(replicate_theta)
    rating_low, rating_high = np.quantile(bootstrap_ratings, [tail, 1.0 - tail], axis=0)
    return PlackettLuceResult(
        strengths=fit.strengths,
        ratings=fit.ratings,
        confidence_interval=ConfidenceInterval(rating_low, rating_high),
        strengths_interval=ConfidenceInterval(theta_low, theta_high),
        ranks=ranks_from_intervals(rating_low, rating_high),
        bootstrap_ratings=bootstrap_ratings,
        n_bootstrap=n_bootstrap,
        confidence_level=confidence,
        seed=seed,
        fit=fit,
        n_rankings=total,
        warnings=tuple(messages),
    )
