"""How many judgments a ranking study needs: simulated before launch, uniform and adaptive.

A study compares ``n`` systems by pairwise votes under the Bradley-Terry model with given
strengths (log-odds scale) and a share of ties (a tie is half a win each way, as the
leaderboards count it); it stops when the ranking question is answered - every pair adjacent
in the estimated order separated at ``level`` (`evalstats.pairing.separation`) - or when the
budget is spent. The planner runs the study many times, each with the allocation the
platform would use (``uniform``: every pair equally likely; ``adaptive``: the pick rule of
`evalstats.pairing`), and records the votes each run needed. The votes needed for a power
``q`` are the q-quantile of those stopping counts: with that budget, a share ``q`` of studies
like this one end with every adjacent pair separated. This is a Monte-Carlo power analysis
(e.g. Arnold et al. 2011, "Simulation methods to estimate design power", BMC Med. Res.
Methodol. 11:94), run with the study's own model and allocation rather than a formula,
because the adaptive allocation has none.

Inputs come either from an assumed effect size (``spread_strengths``: ``n`` systems evenly
spaced over a spread of Elo points) or from a pilot (its fitted strengths and tie share):
the pilot's annotator disagreement is already in its strengths (noisier judges give
closer win rates and so smaller gaps).

The simulated votes arrive in batches, as a crowd's do: the allocation is decided once per
batch from the state after the previous one, and the stopping rule checked after each;
a batch is ``max(min_batch, growth * votes so far)`` votes, so the reported counts are
within ``growth`` of what checking after every vote would give (the price of keeping the
simulation to a few hundred steps a study).

Pure: numpy and `evalstats.pairing`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from evalstats import pairing as pg

__all__ = [
    "ALLOCATIONS",
    "POWERS",
    "StudyPlan",
    "plan_study",
    "simulate_votes",
    "spread_strengths",
]

ADAPTIVE = "adaptive"
UNIFORM = "uniform"
ALLOCATIONS = (UNIFORM, ADAPTIVE)
POWERS = (0.80, 0.95)
ELO_PER_LOG_ODDS = 400.0 / np.log(10.0)


@dataclass(frozen=True)
class StudyPlan:
    allocation: str
    level: float
    stopping_votes: np.ndarray  # (n_studies,) votes when the rule fired; inf: not by max_votes
    correct_order: np.ndarray  # (n_studies,) bool: stopped with the true order
    max_votes: int

    @property
    def n_studies(self) -> int:
        return self.stopping_votes.size

    def power(self, votes: float) -> float:
        """The share of simulated studies answered within ``votes`` votes."""
        return float((self.stopping_votes <= votes).mean())

    def votes_for_power(self, power: float) -> int | None:
        """The smallest budget answering a share ``power`` of the studies; None when more
        than ``max_votes`` would be needed."""
        if not 0.0 < power <= 1.0:
            raise ValueError("power must be in (0, 1]")
        ordered = np.sort(self.stopping_votes)
        needed = ordered[int(np.ceil(power * ordered.size)) - 1]
        return None if not np.isfinite(needed) else int(needed)

    @property
    def wrong_order_share(self) -> float:
        """Among the studies that stopped, the share that stopped on a wrong order."""
        stopped = np.isfinite(self.stopping_votes)
        return float((~self.correct_order[stopped]).mean()) if stopped.any() else 0.0


def spread_strengths(n_systems: int, spread_elo: float) -> np.ndarray:
    """``n_systems`` strengths (log-odds) evenly spaced over ``spread_elo`` Elo points
    from best to worst, mean 0: the assumed effect size."""
    if not 2 <= n_systems <= 200:
        raise ValueError("a study compares 2 to 200 systems")
    if not 0.0 < spread_elo <= 2000.0:
        raise ValueError("the spread is more than 0 and at most 2000 Elo points")
    return np.linspace(spread_elo / 2, -spread_elo / 2, n_systems) / ELO_PER_LOG_ODDS


def simulate_votes(
    strengths: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    tie_rate: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Votes on the pairs (first[k], second[k]) under the model: (winner, loser, tie).
    With one row of strengths per study, ``first`` and ``second`` have a row per study."""
    u = rng.random(first.shape)
    tie = u < tie_rate
    if strengths.ndim == 2:
        p = 1.0 / (
            1.0
            + np.exp(
                np.take_along_axis(strengths, second, -1) - np.take_along_axis(strengths, first, -1)
            )
        )
    else:
        p = 1.0 / (1.0 + np.exp(strengths[second] - strengths[first]))
    first_won = (u - tie_rate) / max(1.0 - tie_rate, 1e-12) < p
    return np.where(first_won, first, second), np.where(first_won, second, first), tie


def _check(strengths, tie_rate, level, allocation, n_studies, max_votes, min_batch, growth):
    theta = np.asarray(strengths, dtype=float)
    if theta.ndim == 2 and theta.shape[0] != n_studies:
        raise ValueError("strengths: one row per simulated study")
    if (
        theta.ndim not in (1, 2)
        or not 2 <= theta.shape[-1] <= 200
        or not np.all(np.isfinite(theta))
    ):
        raise ValueError("strengths: 2 to 200 finite numbers (or a row of them per study)")
    if not 0.0 <= tie_rate < 1.0:
        raise ValueError("the tie share is in [0, 1)")
    if not 0.5 <= level < 1.0:
        raise ValueError("the level is in [0.5, 1)")
    if allocation not in ALLOCATIONS:
        raise ValueError(f"allocation is one of {', '.join(ALLOCATIONS)}")
    if not 1 <= n_studies <= 10_000:
        raise ValueError("1 to 10,000 simulated studies")
    if not 1 <= max_votes <= 100_000_000:
        raise ValueError("max_votes is 1 to 100,000,000")
    if not 1 <= min_batch <= 100_000 or not 0.0 <= growth <= 1.0:
        raise ValueError("min_batch is 1 to 100,000 and growth in [0, 1]")
    theta = theta - theta.mean(axis=-1, keepdims=True)
    return np.broadcast_to(theta, (n_studies, theta.shape[-1]))


def plan_study(
    strengths: ArrayLike,
    *,
    tie_rate: float = 0.0,
    level: float = 0.95,
    allocation: str = UNIFORM,
    n_studies: int = 200,
    max_votes: int = 1_000_000,
    min_batch: int = 10,
    growth: float = 0.02,
    exploration: float = pg.DEFAULT_EXPLORATION,
    sharpness: float = pg.DEFAULT_SHARPNESS,
    prior_precision: float = pg.DEFAULT_PRIOR_PRECISION,
    seed: int | None = None,
) -> StudyPlan:
    """Run ``n_studies`` simulated studies (see the module docstring). ``strengths``: the
    systems' log-odds strengths, or one row of them per study (shape (n_studies, n))."""
    theta = _check(strengths, tie_rate, level, allocation, n_studies, max_votes, min_batch, growth)
    n = theta.shape[-1]
    z_star = pg._critical(level)
    rows, cols = np.triu_indices(n, 1)
    true_order = np.argsort(-theta, axis=-1, kind="stable")
    rng = np.random.default_rng(seed)
    # Every study gets batches of the same sizes (they depend on the votes so far only), so
    # the studies still running advance together, as arrays.
    wins = np.zeros((n_studies, n, n))
    strengths = np.zeros((n_studies, n))
    running = np.arange(n_studies)
    stopping = np.full(n_studies, np.inf)
    correct = np.zeros(n_studies, dtype=bool)
    votes = 0
    while votes < max_votes and running.size:
        size = min(max(min_batch, int(growth * votes)), max_votes - votes)
        theta_now = strengths[running]
        if allocation == ADAPTIVE:
            sigma = pg._covariance(theta_now, wins[running], prior_precision)
            first, second = _adaptive_pairs(
                theta_now, sigma, z_star, size, exploration, sharpness, rng
            )
        else:
            pair = rng.integers(rows.size, size=(running.size, size))
            first, second = rows[pair], cols[pair]
        winner, loser, tie = simulate_votes(theta[running], first, second, tie_rate, rng)
        share = np.where(tie, 0.5, 1.0)
        study = np.broadcast_to(running[:, None], winner.shape)
        np.add.at(wins, (study, winner, loser), share)
        np.add.at(wins, (study, loser, winner), 1.0 - share)
        votes += size
        strengths[running] = pg._newton(wins[running], theta_now.copy(), prior_precision)
        sigma = pg._covariance(strengths[running], wins[running], prior_precision)
        order, *_, separated = pg._separation_arrays(strengths[running], sigma, z_star)
        done = separated.all(axis=-1)
        stopping[running[done]] = votes
        correct[running[done]] = (order[done] == true_order[running[done]]).all(axis=-1)
        running = running[~done]
    return StudyPlan(allocation, level, stopping, correct, max_votes)


def _adaptive_pairs(theta, sigma, z_star, size, exploration, sharpness, rng):
    """``size`` pairs per study, drawn by the adaptive rule (equal owner weights)."""
    scores = pg._scores(theta, sigma, z_star)
    n = theta.shape[-1]
    upper = np.triu(np.ones((n, n)), 1)
    adaptive = upper * scores**sharpness
    total = adaptive.sum(axis=(-2, -1), keepdims=True)
    uniform = upper / upper.sum()
    probabilities = np.where(
        total > 0,
        (1.0 - exploration) * adaptive / np.where(total > 0, total, 1.0) + exploration * uniform,
        uniform,
    ).reshape(theta.shape[0], -1)
    cumulative = np.cumsum(probabilities, axis=-1)
    cumulative /= cumulative[:, -1:]
    draws = rng.random((theta.shape[0], size))
    cells = np.minimum((draws[:, :, None] > cumulative[:, None, :]).sum(axis=-1), n * n - 1)
    return np.divmod(cells, n)
