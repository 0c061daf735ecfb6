"""Benchmark: style-controlled Bradley-Terry at Chatbot Arena scale, fit + 100 bootstrap rounds.

Data: 1.6 million synthetic battles among 130 systems, seeded. Strengths drawn like Chatbot
Arena's leaderboard (ratings ~ N(1000, 100) Elo: log10-odds sd 0.25), Dirichlet-skewed
popularity so some pairs meet rarely; each system has its own verbosity and markdown habits
(answer tokens lognormal around a per-system median of 150 to 900, headers, list items and
bold spans Poisson around per-system means), and votes follow the style-controlled model
with the effects the "Does style matter?" blog (LMSYS, August 2024) reported in magnitude:
length 0.25 log-odds per SD, markdown 0.02 to 0.03; 20% ties.

Ours: ``evalstats.style_control.style_controlled_bradley_terry`` (Newton on the battles
sorted by pair; bootstrap ``auto``: one Newton step per round from the full-data fit at this
size, a refit per round below ``REFIT_LIMIT`` battles x rounds).

Reference, Chatbot Arena's published method as FastChat's ``elo_analysis.py`` computes it
(``construct_style_matrices``, ``fit_mle_elo``, ``get_bootstrap_result_style_control``):
a dense design of every battle twice (a tie won once by each side), scikit-learn's
``LogisticRegression(fit_intercept=False)`` per round, rounds in a ``multiprocessing.Pool``
of ``os.cpu_count()`` processes, each round ``np.random.randint(0, n, n)`` battles (and their
duplicates). Its dense design is 3.4 GB at 1.6M battles and one fit takes minutes there, so it
is timed on a fraction (``--reference-battles``, ``--reference-rounds``) against ours on the
same fraction and rounds, in the same run; the ratio is the one measured there.

Equality, asserted before timing, on the fraction: our point ratings against the
reference's fit run to convergence (tol 1e-12) within 0.01 Elo; and our one-step rounds
against refitted rounds on the same draws (the linearised bootstrap's error, reported), on
the fraction and at full size (``--full-check-rounds`` rounds, refitted: ~1 s each).

    python bench/bench_style_control.py [--battles 1600000] [--systems 130] [--rounds 100]
        [--reference-battles 100000] [--reference-rounds 10]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

import harness  # noqa: I001  (sets BLAS threads before numpy loads)
import numpy as np
from scipy.special import expit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalstats.pairwise import A_WINS, B_WINS, TIE  # noqa: E402
from evalstats.style_control import (  # noqa: E402
    REFIT_LIMIT,
    normalised_style_differences,
    style_controlled_bradley_terry,
)

ELO_TOLERANCE = 0.01
TARGET_SECONDS = 2.0
TARGET_RATIO = 10.0
EFFECTS = np.array([0.25, 0.03, 0.02, 0.02])  # length, headers, lists, bold (log-odds per SD)


def simulated_battles(n_systems: int, n_battles: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    beta = rng.normal(0.0, 0.25, n_systems)  # log10-odds: ratings sd 100
    popularity = rng.dirichlet(np.full(n_systems, 2.0))
    a = rng.choice(n_systems, n_battles, p=popularity)
    b = rng.choice(n_systems, n_battles, p=popularity)
    clash = a == b
    b[clash] = (a[clash] + rng.integers(1, n_systems, clash.sum())) % n_systems
    median_tokens = rng.uniform(150, 900, n_systems)
    markdown = rng.uniform(0.2, 4.0, (n_systems, 3))

    def side(system):
        tokens = rng.lognormal(np.log(median_tokens[system]), 0.6).astype(np.int64)
        counts = rng.poisson(markdown[system])
        return np.column_stack([tokens, counts])

    style_a, style_b = side(a), side(b)
    d = normalised_style_differences(style_a, style_b)
    z = (d - d.mean(0)) / d.std(0)
    p_a = expit(np.log(10) * (beta[a] - beta[b]) + z @ EFFECTS)
    tie = rng.random(n_battles) < 0.2
    outcome = np.where(tie, TIE, np.where(rng.random(n_battles) < p_a, A_WINS, B_WINS))
    return a, b, outcome, style_a, style_b


# --- the reference: FastChat's sklearn style control ----------------------------------------


def construct_style_matrices(a, b, outcome, style_a, style_b, n_systems):
    """FastChat's ``construct_style_matrices``: every battle twice, +-log(10) for the models,
    the standardised (a - b) / (a + b + 1) style columns; a tie is won by a in the first
    copy only."""
    n = a.size
    diff = (style_a - style_b) / (style_a + style_b + 1.0)
    z = (diff - diff.mean(axis=0)) / diff.std(axis=0)
    x = np.zeros((2 * n, n_systems + z.shape[1]))
    rows = np.arange(2 * n)
    x[rows, np.tile(a, 2)] = np.log(10)
    x[rows, np.tile(b, 2)] = -np.log(10)
    x[:, n_systems:] = np.tile(z, (2, 1))
    y = np.zeros(2 * n)
    y[np.r_[outcome == A_WINS, outcome == A_WINS]] = 1.0
    y[np.r_[outcome == TIE, np.zeros(n, bool)]] = 1.0
    return x, y


_SHARED: dict = {}


def fit_mle_elo(indices=None, n_systems=None, tol=1e-4, max_iter=100):
    """FastChat's ``fit_mle_elo``: sklearn's default penalty (C = 1) and solver settings."""
    from sklearn.linear_model import LogisticRegression

    x, y = _SHARED["x"], _SHARED["y"]
    if indices is not None:
        x, y = x[indices], y[indices]
    model = LogisticRegression(fit_intercept=False, tol=tol, max_iter=max_iter).fit(x, y)
    return 1000 + 400 * model.coef_[0][:n_systems]


def _round(args):
    indices, n_systems = args
    return fit_mle_elo(indices, n_systems)


def reference(battles, n_systems, rounds, seed=0):
    """Fit + bootstrap as FastChat does (the pool's workers inherit the design by fork)."""
    _SHARED["x"], _SHARED["y"] = construct_style_matrices(*battles, n_systems)
    n = battles[0].size
    point = fit_mle_elo(None, n_systems)
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(rounds):
        idx = rng.integers(0, n, n)
        draws.append((np.r_[idx, idx + n], n_systems))
    with mp.get_context("fork").Pool(os.cpu_count()) as pool:
        rounds_ratings = pool.map(_round, draws)
    return point, np.array(rounds_ratings)


def ours(battles, n_systems, rounds, bootstrap="auto", seed=1):
    return style_controlled_bradley_terry(
        *battles, n_systems, n_bootstrap=rounds, seed=seed, bootstrap=bootstrap
    )


def check_equal(battles, n_systems, rounds):
    result = ours(battles, n_systems, rounds, bootstrap="refit")
    _SHARED["x"], _SHARED["y"] = construct_style_matrices(*battles, n_systems)
    converged = fit_mle_elo(None, n_systems, tol=1e-12, max_iter=100_000)
    point_gap = float(np.abs(result.ratings - converged).max())
    step = ours(battles, n_systems, rounds, bootstrap="one_step")
    step_gap = float(np.abs(result.bootstrap_ratings - step.bootstrap_ratings).max())
    bound_gap = float(
        max(np.abs(result.lower - step.lower).max(), np.abs(result.upper - step.upper).max())
    )
    width = float(np.median(result.upper - result.lower))
    print(
        f"equal results ({battles[0].size:,} battles): max |ours - reference| "
        f"{point_gap:.5f} Elo (tolerance {ELO_TOLERANCE}); one-step vs refit rounds: "
        f"max {step_gap:.3f} Elo, interval bounds {bound_gap:.3f} Elo "
        f"(median interval width {width:.1f})"
    )
    assert point_gap < ELO_TOLERANCE, "ratings differ"
    return point_gap, step_gap, bound_gap, width


def one_step_gap(battles, n_systems, rounds):
    """One-step rounds against refitted ones on the same draws, at full size."""
    refit = ours(battles, n_systems, rounds, bootstrap="refit")
    step = ours(battles, n_systems, rounds, bootstrap="one_step")
    gap = np.abs(refit.bootstrap_ratings - step.bootstrap_ratings)
    print(
        f"one-step vs refit, {battles[0].size:,} battles, {rounds} rounds: max "
        f"{gap.max():.3f} Elo, median {np.median(gap):.4f} Elo"
    )
    return float(gap.max())


def timed(fn):
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=130)
    parser.add_argument("--battles", type=int, default=1_600_000)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of ours")
    parser.add_argument("--reference-battles", type=int, default=100_000)
    parser.add_argument("--reference-rounds", type=int, default=10)
    parser.add_argument("--full-check-rounds", type=int, default=6)
    args = parser.parse_args()

    load = harness.load_average()
    battles = simulated_battles(args.systems, args.battles)
    fraction = tuple(column[: args.reference_battles] for column in battles)
    print(
        f"{args.battles:,} battles among {args.systems} systems; fit + {args.rounds} "
        f"bootstrap rounds; load average {load:.2f} on {os.cpu_count()} cores"
    )
    gaps = check_equal(fraction, args.systems, args.reference_rounds)
    full_gap = one_step_gap(battles, args.systems, args.full_check_rounds)
    full_seconds = harness.median_time(
        lambda: ours(battles, args.systems, args.rounds), repeats=args.repeats
    )
    method = "refit" if args.battles * args.rounds <= REFIT_LIMIT else "one_step"
    rss = harness.peak_rss_mb()
    small_seconds = harness.median_time(
        lambda: ours(fraction, args.systems, args.reference_rounds), repeats=args.repeats
    )
    reference_seconds, _ = timed(lambda: reference(fraction, args.systems, args.reference_rounds))
    ratio = reference_seconds / small_seconds
    print(f"ours, full size ({method})   median {full_seconds:8.3f} s over {args.repeats} runs")
    print(
        f"on {args.reference_battles:,} battles, {args.reference_rounds} rounds: ours "
        f"{small_seconds:.3f} s, reference (sklearn, pool of {os.cpu_count()}) "
        f"{reference_seconds:.3f} s: ratio {ratio:.1f}x (target >= {TARGET_RATIO:g}x)"
    )
    print(f"peak RSS {rss:.0f} MiB; load average at the end {harness.load_average():.2f}")
    met = full_seconds < TARGET_SECONDS and ratio >= TARGET_RATIO
    print(f"target (< {TARGET_SECONDS} s and >= {TARGET_RATIO:g}x): {'met' if met else 'NOT met'}")
    harness.record(
        "style_control",
        systems=args.systems,
        battles=args.battles,
        rounds=args.rounds,
        bootstrap=method,
        ours_s=round(full_seconds, 3),
        reference_battles=args.reference_battles,
        reference_rounds=args.reference_rounds,
        ours_on_fraction_s=round(small_seconds, 3),
        reference_on_fraction_s=round(reference_seconds, 3),
        ratio=round(ratio, 1),
        max_point_gap_elo=gaps[0],
        one_step_round_gap_elo=gaps[1],
        one_step_bound_gap_elo=gaps[2],
        median_interval_width_elo=gaps[3],
        full_size_one_step_round_gap_elo=full_gap,
        target_met=bool(met),
    )


if __name__ == "__main__":
    main()
