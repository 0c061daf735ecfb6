"""Adaptive pairing: which pair of systems the next vote should compare, and when to stop.

State. A Bradley-Terry model (``P(i beats j) = sigmoid(theta_i - theta_j)``, a tie half a
win each way as in Chatbot Arena) with a Gaussian prior ``theta ~ N(0, I / prior_precision)``
kept as its maximum a posteriori estimate and the Laplace approximation around it: the
posterior covariance is ``Sigma = (L(theta) + prior_precision * I)^-1``, ``L`` the Fisher
information (the weighted graph Laplacian with off-diagonal ``-N_ij p_ij (1 - p_ij)``). The
state is the matrix of effective wins and ``theta``: a vote adds to one cell and moves
``theta`` by Newton steps started from where it was (one or two suffice: the optimum moves
by O(1/N) per vote), never refitting from the votes; its cost depends on the number of
systems only, not on the votes stored. The prior keeps ``theta`` finite before every system
has won and lost (where the maximum-likelihood estimate does not exist) and matters less
as votes accumulate.

Stopping rule. The ranking question (in what order are the systems?) is answered when every
pair adjacent in the estimated order is separated: ``|theta_(k) - theta_(k+1)| / sd >=
z_{(1 + level) / 2}``, the standard deviation of the difference from ``Sigma`` (a Wald test
of each adjacent difference at ``level``). Checked after every vote it is a sequential test,
so the chance of stopping on a wrong order is somewhat higher than ``1 - level`` per pair:
docs/analysis.md says so.

Pick rule: greedy sequential A-optimal design on the unresolved adjacent differences. A
vote between i and j adds Fisher information ``w_ij u u^T`` to the posterior precision
(``u = e_i - e_j``, ``w_ij = p_ij (1 - p_ij)``), so by Sherman-Morrison the variance of a
contrast ``c`` falls by ``w_ij (c^T Sigma u)^2 / (1 + w_ij u^T Sigma u)``. The score of a
pair is that fall summed over the adjacent differences, each weighted by ``1 / (var +
difference^2)`` (a relative fall of the difference's mean square, so a close pair counts
more than one whose gap is plain) while it is unresolved, and by ``RESOLVED_WEIGHT`` times
that once it is separated (the order may still change). This is the
expected-information design of Glickman & Jensen (2005, "Adaptive paired comparison
design", J. Statist. Plann. Inference 127) specialised to the ranking question, and the
sampling follows Chatbot Arena's active sampling (Chiang et al. 2024, "Chatbot Arena: An
Open Platform for Evaluating LLMs by Human Preference", section 5: a pair is drawn with
probability proportional to the reduction of uncertainty one more vote brings, rather than
the single best pair, so concurrent voters do not all get the same pair), with the scores
sharpened by a power ``sharpness`` (default 4: the proportional draw spends votes on pairs
that barely help; the greedy one sends every concurrent voter to the same pair). The draw
mixes a floor of uniform exploration and the owner's weights:

    P(i, j) = (1 - exploration) * s_ij^sharpness w_i w_j / sum(s^sharpness w w)
              + exploration * w_i w_j / sum(w w).

Pure: numpy and scipy only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtri

__all__ = [
    "DEFAULT_EXPLORATION",
    "DEFAULT_PRIOR_PRECISION",
    "DEFAULT_SHARPNESS",
    "RESOLVED_WEIGHT",
    "PairChoice",
    "PairingState",
    "Separation",
    "add_vote",
    "add_votes",
    "answered_by_counts",
    "choose_pair",
    "covariance",
    "new_state",
    "pair_probabilities",
    "pair_scores",
    "separation",
    "state_from_counts",
]

# theta ~ N(0, 1 / 0.1): a standard deviation of 3.2 in log-odds (about 550 Elo points), far
# wider than any real arena's spread, so it only matters before the data can say anything.
DEFAULT_PRIOR_PRECISION = 0.1
# A twentieth of the votes go to pairs drawn as the uniform rule draws them (the owner's
# weights only), so no pair is starved when the approximation is wrong.
DEFAULT_EXPLORATION = 0.05
# Scores are raised to this power before drawing: 1 is Chatbot Arena's proportional draw,
# infinity the greedy best pair. 4 keeps most of the greedy rule's saving (bench/
# bench_adaptive_pairing.py: with 10 systems the votes to separate fell by 29% at 1, 66%
# at 4, 70% near-greedy) while concurrent voters still get different pairs.
DEFAULT_SHARPNESS = 4.0
# How much a separated adjacent difference still counts in a pair's score.
RESOLVED_WEIGHT = 0.05
# Newton stops after a step shorter than this: the error left is about its square (the
# convergence is quadratic): a vote usually costs one step and the check.
_TOLERANCE = 1e-6
_LOCAL_STEP = 0.5
_MAX_STEPS = 25


@dataclass(frozen=True)
class PairingState:
    """Effective wins ``wins[i, j]`` (a tie adds 1/2 both ways), the MAP ``strengths``
    (log-odds scale) and the prior's precision; ``votes`` counts the votes added."""

    wins: np.ndarray
    strengths: np.ndarray
    prior_precision: float
    votes: int

    @property
    def n(self) -> int:
        return self.strengths.size


@dataclass(frozen=True)
class Separation:
    order: np.ndarray  # systems, strongest first
    difference: np.ndarray  # (n - 1,) theta of order[k] minus theta of order[k + 1]
    sd: np.ndarray  # (n - 1,) their standard deviations
    z: np.ndarray  # difference / sd
    separated: np.ndarray  # (n - 1,) bool
    level: float

    @property
    def answered(self) -> bool:
        return bool(self.separated.all())


@dataclass(frozen=True)
class PairChoice:
    i: int
    j: int
    probability: float  # of the unordered pair under the mixed rule
    score: float  # its expected reduction of the weighted variance


# --- the state -------------------------------------------------------------------------------


def _check_prior(prior_precision: float) -> float:
    if not (np.isfinite(prior_precision) and prior_precision > 0):
        raise ValueError("prior_precision must be positive (it keeps the strengths finite)")
    return float(prior_precision)


def new_state(n: int, prior_precision: float = DEFAULT_PRIOR_PRECISION) -> PairingState:
    """No votes yet: every strength 0."""
    if n < 2:
        raise ValueError("pairing needs at least two systems")
    return PairingState(np.zeros((n, n)), np.zeros(n), _check_prior(prior_precision), 0)


def _win_probability(theta: np.ndarray) -> np.ndarray:
    """``p[..., i, j] = sigmoid(theta_i - theta_j)``."""
    return 1.0 / (1.0 + np.exp(theta[..., None, :] - theta[..., :, None]))


def _information(theta: np.ndarray, totals: np.ndarray, prior: float) -> np.ndarray:
    """``L(theta) + prior * I + 11^T / n`` (batched over leading axes): the negative Hessian
    of the log posterior plus a unit of information on the mean strength.

    No vote says anything about the mean (``L 1 = 0``): along ``1`` the posterior has only
    the prior's precision, tiny for a weak prior, which makes the matrix nearly singular.
    Strengths start centred and stay so (the gradient sums to ``-prior * sum(theta)``), and
    everything read from the covariance is a difference, on which the extra term has no
    effect: ``L``'s other eigenvectors are orthogonal to ``1``."""
    return _information_at(_win_probability(theta), totals, prior)


def _information_at(p: np.ndarray, totals: np.ndarray, prior: float) -> np.ndarray:
    n = p.shape[-1]
    weight = totals * p * (1.0 - p)
    matrix = 1.0 / n - weight
    diagonal = np.arange(n)
    matrix[..., diagonal, diagonal] = weight.sum(axis=-1) + prior + 1.0 / n
    return matrix


def _log_posterior(theta: np.ndarray, wins: np.ndarray, prior: float) -> np.ndarray:
    margin = theta[..., :, None] - theta[..., None, :]
    likelihood = -(wins * np.logaddexp(0.0, -margin)).sum(axis=(-2, -1))
    return likelihood - 0.5 * prior * (theta * theta).sum(axis=-1)


def _newton(
    wins: np.ndarray, theta: np.ndarray, prior: float, max_steps: int = _MAX_STEPS
) -> np.ndarray:
    """Maximise the log posterior from ``theta`` for a batch (wins (B, n, n), theta (B, n)).

    Near the optimum - always so after one more vote - a Newton step is taken whole and
    converges quadratically: one step (two solves counting the check) per vote, and no
    evaluation of the posterior. A step longer than ``_LOCAL_STEP`` (a cold start, a first
    loss of an unbeaten system) is damped by backtracking until the posterior rises."""
    totals = wins + np.swapaxes(wins, -1, -2)
    won = wins.sum(axis=-1)
    active = np.ones(theta.shape[0], dtype=bool)
    for _ in range(max_steps):
        t, tot = theta[active], totals[active]
        p = _win_probability(t)
        gradient = won[active] - (tot * p).sum(axis=-1) - prior * t
        step = np.linalg.solve(_information_at(p, tot, prior), gradient[..., None])[..., 0]
        length = np.abs(step).max(axis=-1)
        new_t = t + step
        far = length > _LOCAL_STEP
        if far.any():
            new_t[far] = _backtrack(t[far], step[far], gradient[far], wins[active][far], prior)
        theta[active] = new_t
        converged = ~far & (length < _TOLERANCE)
        active[np.flatnonzero(active)[converged]] = False
        if not active.any():
            break
    return theta


def _backtrack(theta, step, gradient, wins, prior):
    """Halve each step until the Armijo condition holds."""
    value = _log_posterior(theta, wins, prior)
    ascent = (gradient * step).sum(axis=-1)
    size = np.ones(theta.shape[0])
    accepted = np.zeros(theta.shape[0], dtype=bool)
    result = theta.copy()
    for _ in range(40):
        candidate = theta + size[:, None] * step
        candidate_value = _log_posterior(candidate, wins, prior)
        ok = ~accepted & (candidate_value >= value + 1e-4 * size * ascent)
        result[ok] = candidate[ok]
        accepted |= ok
        if accepted.all():
            break
        size = np.where(accepted, size, size / 2.0)
    return result


def _covariance(theta: np.ndarray, wins: np.ndarray, prior: float) -> np.ndarray:
    """The posterior covariance of the centred strengths (batched)."""
    totals = wins + np.swapaxes(wins, -1, -2)
    sigma = np.linalg.inv(_information(theta, totals, prior))
    centred = sigma - sigma.mean(axis=-2, keepdims=True)
    return centred - centred.mean(axis=-1, keepdims=True)


def _separation_arrays(theta: np.ndarray, sigma: np.ndarray, z_star: float):
    """(order, difference, sd, z, separated), batched over the leading axis."""
    order = np.argsort(-theta, axis=-1, kind="stable")
    upper, lower = order[:, :-1], order[:, 1:]
    batch = np.arange(theta.shape[0])[:, None]
    difference = np.take_along_axis(theta, upper, -1) - np.take_along_axis(theta, lower, -1)
    variance = (
        sigma[batch, upper, upper] + sigma[batch, lower, lower] - 2.0 * sigma[batch, upper, lower]
    )
    sd = np.sqrt(np.maximum(variance, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(sd > 0, difference / np.where(sd > 0, sd, 1.0), np.inf)
    return order, difference, sd, z, z >= z_star


def _scores(theta: np.ndarray, sigma: np.ndarray, z_star: float) -> np.ndarray:
    """``pair_scores`` for a batch (theta (B, n), sigma (B, n, n))."""
    order, difference, sd, _, separated = _separation_arrays(theta, sigma, z_star)
    upper, lower = order[:, :-1], order[:, 1:]
    weight = np.where(separated, RESOLVED_WEIGHT, 1.0) / np.maximum(sd**2 + difference**2, 1e-300)
    # M[:, k] = Sigma c_k; Q = M diag(weight) M^T; (c_k^T Sigma u_ij)^2 summed with the
    # weights is Q_ii + Q_jj - 2 Q_ij.
    m = np.take_along_axis(sigma, upper[:, None, :], -1) - np.take_along_axis(
        sigma, lower[:, None, :], -1
    )
    q = (m * weight[:, None, :]) @ np.swapaxes(m, -1, -2)
    d = np.diagonal(q, axis1=-2, axis2=-1)
    gain = d[:, :, None] + d[:, None, :] - 2.0 * q
    s = np.diagonal(sigma, axis1=-2, axis2=-1)
    pair_variance = s[:, :, None] + s[:, None, :] - 2.0 * sigma
    p = _win_probability(theta)
    w = p * (1.0 - p)
    scores = np.maximum(w * gain / (1.0 + w * pair_variance), 0.0)
    n = theta.shape[-1]
    scores[:, np.arange(n), np.arange(n)] = 0.0
    return scores


def state_from_counts(
    wins: ArrayLike,
    ties: ArrayLike | None = None,
    prior_precision: float = DEFAULT_PRIOR_PRECISION,
) -> PairingState:
    """The state of many votes at once (a full fit): ``wins[i, j]`` wins of i over j and
    symmetric ``ties``, as `pairwise.win_count_matrices` gives them."""
    w = np.asarray(wins, dtype=float)
    if w.ndim != 2 or w.shape[0] != w.shape[1] or w.shape[0] < 2:
        raise ValueError("wins must be a square matrix of at least two systems")
    t = np.zeros_like(w) if ties is None else np.asarray(ties, dtype=float)
    if t.shape != w.shape or not np.allclose(t, t.T):
        raise ValueError("ties must be a symmetric matrix of the same shape as wins")
    if np.any(w < 0) or np.any(t < 0) or not np.all(np.isfinite(w + t)):
        raise ValueError("counts must be finite and non-negative")
    effective = w + t / 2.0
    np.fill_diagonal(effective, 0.0)
    prior = _check_prior(prior_precision)
    theta = _newton(effective[None], np.zeros((1, w.shape[0])), prior)[0]
    votes = int(round(np.triu(effective + effective.T, 1).sum()))
    return PairingState(effective, theta, prior, votes)


def add_vote(state: PairingState, winner: int, loser: int, tie: bool = False) -> PairingState:
    """The state after one vote (``tie``: half a win each way), by Newton steps from the
    current strengths."""
    return add_votes(state, [winner], [loser], [tie])


def add_votes(state: PairingState, first: ArrayLike, second: ArrayLike, tie: ArrayLike):
    """The state after several votes (``first[k]`` beat ``second[k]``, or tied with it)."""
    first = np.asarray(first, dtype=np.int64)
    second = np.asarray(second, dtype=np.int64)
    tie = np.asarray(tie, dtype=bool)
    n = state.n
    if first.shape != second.shape or first.shape != tie.shape:
        raise ValueError("one winner, one loser and one tie flag per vote")
    if np.any((first < 0) | (first >= n) | (second < 0) | (second >= n)):
        raise ValueError(f"systems are numbered 0 to {n - 1}")
    if np.any(first == second):
        raise ValueError("a vote compares two different systems")
    wins = state.wins.copy()
    share = np.where(tie, 0.5, 1.0)
    np.add.at(wins, (first, second), share)
    np.add.at(wins, (second, first), 1.0 - share)
    theta = _newton(wins[None], state.strengths[None].copy(), state.prior_precision)[0]
    return PairingState(wins, theta, state.prior_precision, state.votes + first.size)


def covariance(state: PairingState) -> np.ndarray:
    """The Laplace approximation's posterior covariance of the centred strengths
    ``theta - mean(theta)`` (what every difference of strengths is read from)."""
    return _covariance(state.strengths[None], state.wins[None], state.prior_precision)[0]


# --- the stopping rule -----------------------------------------------------------------------


def _critical(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    return float(ndtri(0.5 + level / 2.0))


def separation(
    state: PairingState, level: float = 0.95, sigma: np.ndarray | None = None
) -> Separation:
    """Is every adjacent pair of the estimated order separated at ``level``?"""
    z_star = _critical(level)
    sigma = covariance(state) if sigma is None else sigma
    arrays = _separation_arrays(state.strengths[None], sigma[None], z_star)
    return Separation(*(array[0] for array in arrays), level)


def answered_by_counts(
    wins: ArrayLike,
    ties: ArrayLike | None = None,
    level: float = 0.95,
    prior_precision: float = DEFAULT_PRIOR_PRECISION,
) -> np.ndarray:
    """For a stack of count matrices (shape (B, n, n)), fitted from scratch: is each one's
    ranking question answered? (The full-fit path, for checking the incremental one.)"""
    w = np.asarray(wins, dtype=float)
    t = np.zeros_like(w) if ties is None else np.asarray(ties, dtype=float)
    if w.ndim != 3 or w.shape[1] != w.shape[2] or t.shape != w.shape:
        raise ValueError("wins and ties are stacks of square matrices of one shape")
    effective = w + t / 2.0
    n = w.shape[1]
    effective[:, np.arange(n), np.arange(n)] = 0.0
    prior = _check_prior(prior_precision)
    theta = _newton(effective, np.zeros(w.shape[:2]), prior)
    sigma = _covariance(theta, effective, prior)
    return _separation_arrays(theta, sigma, _critical(level))[-1].all(axis=-1)


# --- the pick rule ---------------------------------------------------------------------------


def pair_scores(state: PairingState, level: float = 0.95) -> np.ndarray:
    """``s[i, j]``: the expected fall of the weighted variance of the adjacent differences
    after one more vote between i and j (symmetric, zero diagonal)."""
    sigma = covariance(state)
    return _scores(state.strengths[None], sigma[None], _critical(level))[0]


def pair_probabilities(
    state: PairingState,
    weights: ArrayLike | None = None,
    *,
    exploration: float = DEFAULT_EXPLORATION,
    level: float = 0.95,
    sharpness: float = DEFAULT_SHARPNESS,
    scores: np.ndarray | None = None,
) -> np.ndarray:
    """The probability of each unordered pair (upper triangle; the rest 0) under the
    mixed rule of the module docstring. A weight of 0 keeps a system out."""
    n = state.n
    weights = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    if weights.shape != (n,) or np.any(weights < 0) or not np.all(np.isfinite(weights)):
        raise ValueError("one finite, non-negative weight per system")
    if not 0.0 <= exploration <= 1.0:
        raise ValueError("exploration must be in [0, 1]")
    if not 0.0 <= sharpness <= 64.0:
        raise ValueError("sharpness must be in [0, 64]")
    owner = np.triu(np.outer(weights, weights), 1)
    if owner.sum() <= 0:
        raise ValueError("fewer than two systems have a positive weight")
    scores = pair_scores(state, level) if scores is None else scores
    adaptive = owner * np.triu(scores, 1) ** sharpness
    uniform = owner / owner.sum()
    if adaptive.sum() <= 0:
        return uniform
    return (1.0 - exploration) * adaptive / adaptive.sum() + exploration * uniform


def choose_pair(
    state: PairingState,
    rng: np.random.Generator,
    weights: ArrayLike | None = None,
    *,
    exploration: float = DEFAULT_EXPLORATION,
    level: float = 0.95,
    sharpness: float = DEFAULT_SHARPNESS,
) -> PairChoice:
    """Draw the next unordered pair (i < j) by the mixed rule."""
    scores = pair_scores(state, level)
    probabilities = pair_probabilities(
        state, weights, exploration=exploration, level=level, sharpness=sharpness, scores=scores
    )
    flat = probabilities.ravel()
    cell = int(rng.choice(flat.size, p=flat / flat.sum()))
    i, j = divmod(cell, state.n)
    return PairChoice(i, j, float(flat[cell]), float(scores[i, j]))
