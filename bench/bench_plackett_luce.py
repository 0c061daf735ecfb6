"""Benchmark: Plackett-Luce on k-way rankings, fit + 1,000 bootstrap rounds (issue 27, pt 6).

Data: 5,000 four-way rankings among 20 systems (strengths ~ N(0, 1), four systems drawn
uniformly per ranking, ordered by Gumbel-perturbed strengths: exact Plackett-Luce draws), no
ties, seeded.

Ours: ``evalstats.plackett_luce.bootstrap_plackett_luce`` (rankings collapsed to unique
rankings with counts, the choices gathered by choice set and grouped by width, sparse maps
from counts to set weights built once; each replicate a multinomial draw of the counts, the
replicates refitted by one batched Newton warm-started at the full-data fit).

Reference, run in the same process: ``choix.ilsr_rankings`` (Maystre & Grossglauser 2015,
the independent implementation the tests compare with), on the same rankings and, for the
bootstrap, on each replicate's resampled rankings (our multinomial draws, expanded into
rows); its bootstrap is timed on ``--choix-rounds`` replicates and extrapolated to
``--rounds`` (stated in the output).

Equality, asserted before timing: the point strengths and the first ``--checked`` bootstrap
rounds (choix run to convergence on our resamples) agree within 0.01 Elo.

Timing: medians of ``--repeats`` runs, wall and CPU (``time.process_time``: the shared
machine is often loaded, and CPU time is what the fit itself costs).

    python bench/bench_plackett_luce.py [--systems 20] [--rankings 5000] [--k 4] [--rounds 1000]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import harness  # noqa: I001  (sets BLAS threads before numpy loads)
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import choix  # noqa: E402  (numpy through it: after harness)

from evalstats.bradley_terry import multinomial_rounds  # noqa: E402
from evalstats.plackett_luce import (  # noqa: E402
    _unique_rankings,
    bootstrap_plackett_luce,
    fit_plackett_luce,
)

ELO = 400.0 / math.log(10.0)
ELO_TOLERANCE = 0.01
SEED = 7


def simulated_rankings(n_systems: int, n_rankings: int, k: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.0, n_systems)
    rankings = []
    for _ in range(n_rankings):
        shown = rng.choice(n_systems, k, replace=False)
        noisy = theta[shown] + rng.gumbel(size=k)
        rankings.append([[int(s)] for s in shown[np.argsort(-noisy)]])
    return rankings


def choix_ratings(orders: list, n: int, tol: float) -> np.ndarray:
    strengths = choix.ilsr_rankings(n, orders, alpha=0.0, tol=tol, max_iter=10_000)
    return ELO * (strengths - strengths.mean())


def replicate_orders(unique: list, draw: np.ndarray) -> list:
    """The rankings of one bootstrap replicate (a multinomial draw of the unique rankings'
    counts) as choix's rows: each unique ranking repeated as often as drawn."""
    orders = []
    for ranking, times in zip(unique, draw.astype(int).tolist(), strict=True):
        orders += [[tier[0] for tier in ranking]] * times
    return orders


def timed(fn, repeats: int) -> tuple[float, float, object]:
    """Median wall and CPU seconds of ``fn()`` over ``repeats`` runs, and its last result."""
    walls, cpus = [], []
    result = None
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--rankings", type=int, default=5000)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--choix-rounds", type=int, default=10)
    parser.add_argument("--checked", type=int, default=5)
    args = parser.parse_args()
    n = args.systems
    rankings = simulated_rankings(n, args.rankings, args.k)
    orders = [[tier[0] for tier in ranking] for ranking in rankings]
    load = harness.load_average()

    # Equality first: the point fit, then bootstrap rounds on exactly our resamples.
    ours = bootstrap_plackett_luce(rankings, n, n_bootstrap=args.rounds, seed=SEED)
    point_gap = np.abs(ours.ratings - 1000.0 - choix_ratings(orders, n, 1e-13)).max()
    assert point_gap < ELO_TOLERANCE, f"point ratings differ from choix by {point_gap:.4f} Elo"
    unique, counts = _unique_rankings(rankings, n)
    total = int(counts.sum())
    draws = multinomial_rounds(total, counts / total, args.rounds, SEED)
    round_gap = 0.0
    for b in range(args.checked):
        reference = choix_ratings(replicate_orders(unique, draws[b]), n, 1e-13)
        round_gap = max(round_gap, np.abs(ours.bootstrap_ratings[b] - 1000.0 - reference).max())
    assert round_gap < ELO_TOLERANCE, f"bootstrap rounds differ from choix by {round_gap:.4f} Elo"
    print(
        f"equal: point ratings within {point_gap:.2e} Elo of choix, the first {args.checked} "
        f"bootstrap rounds within {round_gap:.2e} Elo"
    )

    fit_wall, fit_cpu, _ = timed(lambda: fit_plackett_luce(rankings, n), args.repeats)
    ours_wall, ours_cpu, _ = timed(
        lambda: bootstrap_plackett_luce(rankings, n, n_bootstrap=args.rounds, seed=SEED),
        args.repeats,
    )
    # choix at its default tolerance (1e-8), as a user would run it.
    ref_fit_wall, ref_fit_cpu, _ = timed(lambda: choix_ratings(orders, n, 1e-8), args.repeats)
    resamples = [replicate_orders(unique, draws[b]) for b in range(args.choix_rounds)]
    ref_rounds_wall, ref_rounds_cpu, _ = timed(
        lambda: [choix_ratings(rows, n, 1e-8) for rows in resamples], 1
    )
    scale = args.rounds / args.choix_rounds
    ref_wall = ref_fit_wall + scale * ref_rounds_wall
    ref_cpu = ref_fit_cpu + scale * ref_rounds_cpu
    print(
        f"{n} systems, {args.rankings} {args.k}-way rankings, {args.rounds} bootstrap rounds "
        f"(load {load:.1f})"
    )
    print(f"  ours, fit alone:        wall {fit_wall:.3f} s, CPU {fit_cpu:.3f} s")
    print(f"  ours, fit + bootstrap:  wall {ours_wall:.3f} s, CPU {ours_cpu:.3f} s")
    print(f"  choix, fit alone:       wall {ref_fit_wall:.3f} s, CPU {ref_fit_cpu:.3f} s")
    print(
        f"  choix, fit + bootstrap: wall {ref_wall:.1f} s, CPU {ref_cpu:.1f} s "
        f"({args.choix_rounds} rounds timed, extrapolated to {args.rounds})"
    )
    print(
        f"  ratio (choix / ours): fit {ref_fit_cpu / fit_cpu:.1f}x CPU, "
        f"fit + bootstrap {ref_cpu / ours_cpu:.0f}x CPU ({ref_wall / ours_wall:.0f}x wall)"
    )
    harness.record(
        "plackett_luce",
        systems=n,
        rankings=args.rankings,
        k=args.k,
        rounds=args.rounds,
        repeats=args.repeats,
        ours_fit_wall_s=round(fit_wall, 4),
        ours_fit_cpu_s=round(fit_cpu, 4),
        ours_wall_s=round(ours_wall, 4),
        ours_cpu_s=round(ours_cpu, 4),
        choix_fit_wall_s=round(ref_fit_wall, 4),
        choix_fit_cpu_s=round(ref_fit_cpu, 4),
        choix_rounds_timed=args.choix_rounds,
        choix_wall_s=round(ref_wall, 2),
        choix_cpu_s=round(ref_cpu, 2),
        point_gap_elo=float(point_gap),
        round_gap_elo=float(round_gap),
    )


if __name__ == "__main__":
    main()
