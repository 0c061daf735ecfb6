"""An arena's leaderboard from its battles, as Chatbot Arena computes it.

Chatbot Arena (Chiang et al. 2024, "Chatbot Arena: An Open Platform for Evaluating LLMs by
Human Preference", section 5; FastChat's ``fastchat/serve/monitor/elo_analysis.py``) fits a
Bradley-Terry model to the votes by logistic regression, a tie (``tie`` and ``tie
(bothbad)``) counting as half a win for each side, reports it on an Elo-like scale (400
points for 10:1 odds), takes 95% intervals from the percentiles of fits to bootstrap
resamples of the battles, and ranks each model 1 + the number of models whose lower bound
is above its upper bound. Here that fit is `evalstats.bradley_terry` (Newton on the same
likelihood, the mean rating anchored at 1000; a constant shift of every rating changes
nothing else); this module adds what the arena's page shows with it:

- ``battles``: the battles each system was in (ties included);
- ``pair_battles[i, j]``: the battles between i and j (symmetric, ties included);
- ``win_rate[i, j]``: the share of the decisive battles between i and j that i won
  (FastChat's ``compute_pairwise_win_fraction`` on the battles without ties); NaN where
  they had none.

With style features per side, `arena_style_leaderboard` fits Chatbot Arena's
style-controlled model instead (`evalstats.style_control`), and `provisional_ranks` applies
the arena's provisional rule (few battles or a wide interval: shown apart, never first).

Pure: numpy and the other evalstats modules only. Outcomes are `pairwise`'s codes
(``A_WINS``, ``B_WINS``, ``TIE``); "both are bad" is a ``TIE``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from evalstats.bradley_terry import bootstrap_bradley_terry
from evalstats.pairwise import win_count_matrices, win_rate_matrix
from evalstats.style_control import StyleControlResult, style_controlled_bradley_terry

__all__ = ["ArenaLeaderboard", "arena_leaderboard", "arena_style_leaderboard", "provisional_ranks"]


@dataclass(frozen=True)
class ArenaLeaderboard:
    ratings: np.ndarray  # (n,) Elo-like, mean 1000
    lower: np.ndarray  # (n,) bootstrap percentile bounds of the ratings
    upper: np.ndarray
    ranks: np.ndarray  # (n,) 1 + systems whose lower bound exceeds this one's upper bound
    battles: np.ndarray  # (n,) battles each system was in
    pair_battles: np.ndarray  # (n, n)
    win_rate: np.ndarray  # (n, n), NaN where no decisive battle
    n_bootstrap: int
    confidence: float
    warnings: tuple[str, ...]
    style: StyleControlResult | None = None  # the style-controlled fit, when it is one


def arena_leaderboard(
    system_a: ArrayLike,
    system_b: ArrayLike,
    outcome: ArrayLike,
    n_systems: int,
    *,
    n_bootstrap: int = 100,
    confidence: float = 0.95,
    seed: int | None = None,
    labels: list[str] | None = None,
) -> ArenaLeaderboard:
    """The leaderboard of `n_systems` systems from battles (a, b, outcome), one per row."""
    wins, ties = win_count_matrices(system_a, system_b, outcome, n_systems)
    pair_battles = wins + wins.T + ties
    fit = bootstrap_bradley_terry(
        wins, ties, n_bootstrap=n_bootstrap, confidence=confidence, seed=seed, labels=labels
    )
    return ArenaLeaderboard(
        ratings=fit.ratings,
        lower=np.asarray(fit.confidence_interval.low),
        upper=np.asarray(fit.confidence_interval.high),
        ranks=fit.ranks,
        battles=pair_battles.sum(axis=1),
        pair_battles=pair_battles,
        win_rate=win_rate_matrix(wins),
        n_bootstrap=n_bootstrap,
        confidence=confidence,
        warnings=fit.warnings,
    )


def arena_style_leaderboard(
    system_a: ArrayLike,
    system_b: ArrayLike,
    outcome: ArrayLike,
    style_a: ArrayLike,
    style_b: ArrayLike,
    n_systems: int,
    *,
    n_bootstrap: int = 100,
    confidence: float = 0.95,
    seed: int | None = None,
) -> ArenaLeaderboard:
    """The style-controlled leaderboard: ratings, intervals and ranks from
    `style_controlled_bradley_terry` (style columns: tokens, headers, list items, bold);
    battle counts and win rates as `arena_leaderboard` counts them."""
    wins, ties = win_count_matrices(system_a, system_b, outcome, n_systems)
    pair_battles = wins + wins.T + ties
    fit = style_controlled_bradley_terry(
        system_a,
        system_b,
        outcome,
        style_a,
        style_b,
        n_systems,
        n_bootstrap=n_bootstrap,
        confidence=confidence,
        seed=seed,
    )
    return ArenaLeaderboard(
        ratings=fit.ratings,
        lower=fit.lower,
        upper=fit.upper,
        ranks=fit.ranks,
        battles=pair_battles.sum(axis=1),
        pair_battles=pair_battles,
        win_rate=win_rate_matrix(wins),
        n_bootstrap=n_bootstrap,
        confidence=confidence,
        warnings=fit.warnings,
        style=fit,
    )


def provisional_ranks(
    ranks: ArrayLike,
    battles: ArrayLike,
    lower: ArrayLike,
    upper: ArrayLike,
    *,
    min_battles: int,
    max_width: float,
) -> tuple[np.ndarray, np.ndarray]:
    """(provisional, ranks): a system is provisional while it has fewer than `min_battles`
    battles or an interval wider than `max_width` points; a provisional system's rank is at
    least 2, so that it is never ranked first."""
    provisional = (np.asarray(battles) < min_battles) | (
        np.asarray(upper, dtype=float) - np.asarray(lower, dtype=float) > max_width
    )
    adjusted = np.where(provisional, np.maximum(np.asarray(ranks), 2), ranks)
    return provisional, adjusted
