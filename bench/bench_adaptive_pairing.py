"""Benchmark: adaptive versus uniform pairing, and the cost of one pairing decision.

1. Arena. 20 systems with Chatbot Arena-like ratings: the best at 0, each next one 20 +
   Exponential(mean 10) Elo points lower (adjacent gaps of 20-80 points, a spread of ~570
   points for 20 systems, as between the top and the middle of Chatbot Arena's published
   leaderboard; closer systems could not be separated in any arena's lifetime, and Chatbot
   Arena gives them a shared rank), one draw of ratings per simulated arena. Votes come 20
   at a time (20 voters at once: each batch drawn from the state after the previous one),
   no ties; the stopping rule (every adjacent pair separated at 95%, evalstats/pairing.py)
   is checked after each batch. Votes until it fires, adaptive against uniform, on the same
   arenas: median, interquartile range, and the median of the per-arena ratio.
2. A/B campaign. The same with 10 systems, a worker's batch of 10 items as the step, and
   20% ties (ChatEval's A/B answers allow a tie).
3. The decision after each vote at Chatbot Arena's scale: 130 systems, the state fitted
   from 1.6M simulated votes (strengths ~ N(0, 1)); per vote, the incremental update
   (`add_vote`) and the draw of the next pair (`choose_pair`), p50/p95 over 300 votes;
   and the decode of the stored state an arena reads before it draws (base64 of 130 x 130
   int32 counts). Wall and CPU time: the machine is shared, so the CPU time is what the
   decision costs and the wall time what it took among the other processes. Reference in
   the same run: the same decision without an incremental state - the stored votes counted
   again (`win_count_matrices`) and fitted (`state_from_counts`).

Sections 1 and 2 run every simulated study as arrays (evalstats/planner.py's `plan_study`,
the planner's own simulation with the engine's pick rule).

    python bench/bench_adaptive_pairing.py [--arenas 50] [--campaigns 50] [--decisions 300]
"""

from __future__ import annotations

import argparse
import base64
import sys
import time
from pathlib import Path

import harness  # noqa: I001  (sets BLAS threads before numpy loads)
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalstats import pairing as pg  # noqa: E402
from evalstats import planner as pl  # noqa: E402
from evalstats.pairwise import A_WINS, TIE, win_count_matrices  # noqa: E402

ELO = pl.ELO_PER_LOG_ODDS
TARGET_SAVING = 0.30
TARGET_P95_MS = 5.0


def arena_like_strengths(rng: np.random.Generator, studies: int, n: int) -> np.ndarray:
    gaps = 20.0 + rng.exponential(10.0, size=(studies, n - 1))
    ratings = np.concatenate([np.zeros((studies, 1)), -np.cumsum(gaps, axis=1)], axis=1)
    return (ratings - ratings.mean(axis=1, keepdims=True)) / ELO


def compare(name: str, n: int, studies: int, batch: int, tie_rate: float, seed: int) -> dict:
    strengths = arena_like_strengths(np.random.default_rng(seed), studies, n)
    votes = {}
    seconds = {}
    for allocation in pl.ALLOCATIONS:
        started = time.perf_counter()
        plan = pl.plan_study(
            strengths,
            tie_rate=tie_rate,
            allocation=allocation,
            n_studies=studies,
            min_batch=batch,
            growth=0.0,
            max_votes=2_000_000,
            seed=seed + 1,
        )
        seconds[allocation] = time.perf_counter() - started
        votes[allocation] = plan.stopping_votes
        print(
            f"{name} {allocation}: median {np.median(plan.stopping_votes):.0f} votes, "
            f"IQR {np.percentile(plan.stopping_votes, 25):.0f}-"
            f"{np.percentile(plan.stopping_votes, 75):.0f}, wrong order "
            f"{plan.wrong_order_share:.1%} ({seconds[allocation]:.1f} s)",
            flush=True,
        )
    ratio = votes["adaptive"] / votes["uniform"]
    saving = 1.0 - float(np.median(votes["adaptive"])) / float(np.median(votes["uniform"]))
    print(
        f"{name}: adaptive needs {saving:.0%} fewer votes (medians); per-{name} ratio median "
        f"{np.median(ratio):.2f}, IQR {np.percentile(ratio, 25):.2f}-"
        f"{np.percentile(ratio, 75):.2f}; target >= {TARGET_SAVING:.0%} fewer",
        flush=True,
    )
    return {
        "systems": n,
        "studies": studies,
        "batch": batch,
        "tie_rate": tie_rate,
        **{
            f"{allocation}_{stat}": float(np.percentile(votes[allocation], q))
            for allocation in pl.ALLOCATIONS
            for stat, q in (("p25", 25), ("median", 50), ("p75", 75))
        },
        "ratio_median": round(float(np.median(ratio)), 3),
        "saving_of_medians": round(saving, 3),
        "met": saving >= TARGET_SAVING,
        "seconds": {k: round(v, 1) for k, v in seconds.items()},
    }


def decisions(n: int, votes: int, count: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.0, n)
    first = rng.integers(n, size=votes)
    second = (first + rng.integers(1, n, size=votes)) % n
    winner, loser, tie = pl.simulate_votes(theta, first, second, 0.2, rng)
    wins, ties = np.zeros((n, n)), np.zeros((n, n))
    np.add.at(wins, (winner[~tie], loser[~tie]), 1)
    np.add.at(ties, (winner[tie], loser[tie]), 1)
    ties = ties + ties.T
    state = pg.state_from_counts(wins, ties)
    # As arenas/pairing_state.py stores it: base64 of the doubled wins as int32.
    stored = base64.b64encode(np.rint(2 * state.wins).astype("<i4").tobytes()).decode()
    generator = np.random.default_rng(seed + 1)
    incremental, cpu, refit, decode = [], [], [], []
    for _ in range(count):
        started, started_cpu = time.perf_counter(), time.process_time()
        choice = pg.choose_pair(state, generator)
        p = 1.0 / (1.0 + np.exp(theta[choice.j] - theta[choice.i]))
        won = generator.random() < p
        a, b = (choice.i, choice.j) if won else (choice.j, choice.i)
        state = pg.add_vote(state, a, b)
        incremental.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
        started = time.perf_counter()
        np.frombuffer(base64.b64decode(stored), dtype="<i4").reshape(n, n).astype(float)
        decode.append(time.perf_counter() - started)
    for _ in range(max(count // 30, 5)):
        # Without an incremental state: the stored votes counted again, then fitted.
        started = time.perf_counter()
        counts, tie_counts = win_count_matrices(winner, loser, np.where(tie, TIE, A_WINS), n)
        fresh = pg.state_from_counts(counts, tie_counts)
        pg.choose_pair(fresh, generator)
        refit.append(time.perf_counter() - started)
    figures = {
        "systems": n,
        "stored_votes": votes,
        "decisions": count,
        "incremental_p50_ms": round(1000 * float(np.percentile(incremental, 50)), 3),
        "incremental_p95_ms": round(1000 * float(np.percentile(incremental, 95)), 3),
        "incremental_cpu_p50_ms": round(1000 * float(np.percentile(cpu, 50)), 3),
        "incremental_cpu_p95_ms": round(1000 * float(np.percentile(cpu, 95)), 3),
        "decode_p95_ms": round(1000 * float(np.percentile(decode, 95)), 3),
        "refit_p50_ms": round(1000 * float(np.percentile(refit, 50)), 3),
    }
    figures["refit_ratio"] = round(figures["refit_p50_ms"] / figures["incremental_p50_ms"], 2)
    figures["met_wall"] = figures["incremental_p95_ms"] + figures["decode_p95_ms"] < TARGET_P95_MS
    figures["met_cpu"] = figures["incremental_cpu_p95_ms"] < TARGET_P95_MS
    print(
        f"decision ({n} systems, {votes:,} votes): update + draw p50 "
        f"{figures['incremental_p50_ms']} ms, p95 {figures['incremental_p95_ms']} ms (CPU "
        f"p50 {figures['incremental_cpu_p50_ms']} ms, p95 {figures['incremental_cpu_p95_ms']} ms); "
        f"decoding the stored state p95 {figures['decode_p95_ms']} ms; a full refit + draw "
        f"p50 {figures['refit_p50_ms']} ms (x{figures['refit_ratio']}); target p95 < "
        f"{TARGET_P95_MS} ms",
        flush=True,
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arenas", type=int, default=50)
    parser.add_argument("--campaigns", type=int, default=50)
    parser.add_argument("--decisions", type=int, default=300)
    parser.add_argument("--votes", type=int, default=1_600_000)
    parser.add_argument("--skip-simulations", action="store_true")
    args = parser.parse_args()
    load = harness.load_average()
    print(f"load average at start: {load:.2f} ({harness.machine()['cpus']} cpus)", flush=True)
    figures = {"load_at_start": load}
    figures["decision"] = decisions(130, args.votes, args.decisions, seed=7)
    if not args.skip_simulations:
        figures["arena"] = compare("arena", 20, args.arenas, 20, 0.0, seed=1)
        figures["ab_campaign"] = compare("campaign", 10, args.campaigns, 10, 0.2, seed=2)
    harness.record("adaptive_pairing", **figures)


if __name__ == "__main__":
    main()
