"""Benchmark: Bradley-Terry bootstrap (batched Newton) against statsmodels GLM per replicate.

Both sides do the same work: collapse the judgments to counts, draw multinomial counts over
the unique outcomes for each replicate (Chatbot Arena's bootstrap) and refit. Ours fits all
replicates as one batch; the reference refits ``sm.GLM(..., family=Binomial())`` on the
x_i - x_j design once per replicate.

    python bench/bench_bradley_terry.py [--systems 8] [--judgments 5000] [--replicates 1000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import statsmodels.api as sm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.stats.bradley_terry import (  # noqa: E402
    bootstrap_bradley_terry,
    fit_bradley_terry,
    to_elo_scale,
)
from analysis.stats.pairwise import A_WINS, B_WINS, TIE, win_count_matrices  # noqa: E402


def simulated_counts(n_systems: int, n_judgments: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    theta = np.linspace(-1.0, 1.0, n_systems)
    system_a = rng.integers(0, n_systems, n_judgments)
    system_b = (system_a + rng.integers(1, n_systems, n_judgments)) % n_systems
    p_a = 1.0 / (1.0 + np.exp(theta[system_b] - theta[system_a]))
    u = rng.random(n_judgments)
    outcome = np.where(u < 0.9 * p_a, A_WINS, np.where(u < 0.9, B_WINS, TIE))
    return win_count_matrices(system_a, system_b, outcome, n_systems)


def glm_fit(effective: np.ndarray) -> np.ndarray:
    n = effective.shape[0]
    rows, cols = np.triu_indices(n, k=1)
    keep = effective[rows, cols] + effective[cols, rows] > 0
    rows, cols = rows[keep], cols[keep]
    design = np.zeros((rows.size, n))
    design[np.arange(rows.size), rows] = 1.0
    design[np.arange(rows.size), cols] = -1.0
    endog = np.column_stack([effective[rows, cols], effective[cols, rows]])
    params = sm.GLM(endog, design[:, 1:], family=sm.families.Binomial()).fit().params
    theta = np.concatenate([[0.0], params])
    return theta - theta.mean()


def glm_bootstrap(wins: np.ndarray, ties: np.ndarray, replicates: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = wins.shape[0]
    win_cells = np.flatnonzero(wins)
    tie_cells = np.flatnonzero(np.triu(ties, k=1))
    counts = np.concatenate([wins.ravel()[win_cells], ties.ravel()[tie_cells]])
    draws = rng.multinomial(counts.sum(), counts / counts.sum(), size=replicates)
    tie_rows, tie_cols = np.unravel_index(tie_cells, (n, n))
    estimates = np.empty((replicates, n))
    for r in range(replicates):
        effective = np.zeros((n, n))
        effective.ravel()[win_cells] = draws[r, : win_cells.size]
        # A tie is half a win for each side.
        effective[tie_rows, tie_cols] += draws[r, win_cells.size :] / 2.0
        effective[tie_cols, tie_rows] += draws[r, win_cells.size :] / 2.0
        estimates[r] = glm_fit(effective)
    return estimates


def _max_gap(ours: np.ndarray, reference: np.ndarray) -> str:
    return f"{np.abs(ours - reference).max():.1e} rating points"


def median_seconds(function, repeats: int) -> float:
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=8)
    parser.add_argument("--judgments", type=int, default=5000)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7, help="timing runs of ours")
    parser.add_argument("--glm-repeats", type=int, default=3, help="timing runs of the GLM")
    args = parser.parse_args()

    wins, ties = simulated_counts(args.systems, args.judgments, seed=0)
    ours_point = fit_bradley_terry(wins, ties).strengths
    glm_point = glm_fit(wins + ties / 2.0)
    print(
        f"{args.systems} systems, {args.judgments} judgments, {args.replicates} replicates; "
        f"max |ours - GLM| point estimate: {np.abs(ours_point - glm_point).max():.1e}"
    )

    # Same seed and cell order as bootstrap_bradley_terry, hence the same multinomial draws:
    # the two bootstrap distributions must agree, not just resemble each other.
    ours_ratings = bootstrap_bradley_terry(wins, ties, n_bootstrap=200, seed=1).bootstrap_ratings
    glm_ratings = to_elo_scale(glm_bootstrap(wins, ties, 200, seed=1))
    print(f"max |ours - GLM| over 200 bootstrap replicates: {_max_gap(ours_ratings, glm_ratings)}")

    ours = median_seconds(
        lambda: bootstrap_bradley_terry(wins, ties, n_bootstrap=args.replicates, seed=1),
        args.repeats,
    )
    glm = median_seconds(
        lambda: glm_bootstrap(wins, ties, args.replicates, seed=1), args.glm_repeats
    )
    print(f"ours (batched Newton)  median {ours * 1e3:9.1f} ms over {args.repeats} runs")
    print(f"statsmodels GLM loop   median {glm * 1e3:9.1f} ms over {args.glm_repeats} runs")
    print(f"ratio GLM / ours       {glm / ours:9.1f}x")


if __name__ == "__main__":
    main()
