"""Benchmark 2: Spot The Bot's TrueSkill bootstrap, 1000 replicates of 50,000 matches.

Data: 10 systems, 50,000 matches between random distinct pairs (TrueSkill-style strengths,
~20% draws), seeded. Protocol (Spot The Bot / WMT): each replicate resamples the matches with
replacement, rates them in that order from the prior with the Spot The Bot environment
(``TrueSkillEnv.from_matches``: mu 0, sigma 0.5, tau 0, beta = 0.025 sigma^2 n, draw
probability = share of draws), then ranks the systems by mu.

Ours: ``evalstats.trueskill.trueskill_bootstrap`` (all replicates in lockstep).
Reference: the ``trueskill`` package (0.4.5), ``rate_1vs1`` match by match per replicate,
winner first, on exactly our replicates' orders. The package takes about a second per
replicate here, so it is timed on a sample of replicates and the time extrapolated linearly
to all of them (stated in the output): exact up to timing noise, since every replicate rates
the same number of matches. Our runs and the package's replicates alternate, so that both
sides see the same load on a shared machine.

Equality, asserted before timing: on every sampled replicate the package's mu equal ours
within 1e-9 and the per-replicate ranks are identical. Both the package's default
normal-distribution backend (what the Spot The Bot code ran) and ``backend="scipy"`` are run.

    python bench/bench_trueskill.py [--matches 50000] [--systems 10] [--replicates 1000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import harness  # noqa: I001  (sets BLAS threads before numpy loads)
import numpy as np
import trueskill

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalstats import trueskill as ts  # noqa: E402

TARGET_RATIO = 1000.0
MU_TOLERANCE = 1e-9


def tournament(n_systems: int, n_matches: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    strengths = np.linspace(1.5, -1.5, n_systems)
    a = rng.integers(0, n_systems, n_matches)
    b = (a + rng.integers(1, n_systems, n_matches)) % n_systems
    p_a = 1 / (1 + np.exp(strengths[b] - strengths[a]))
    outcome = np.where(rng.random(n_matches) < p_a, ts.A_WINS, ts.B_WINS).astype(np.int8)
    outcome[rng.random(n_matches) < 0.2] = ts.DRAW
    return a, b, outcome


def package_replicate(env, a, b, outcome, order, n_systems):
    """One replicate with the package: rate_1vs1 match by match, then mu per system."""
    ratings = [env.create_rating() for _ in range(n_systems)]
    for m in order:
        i, j = a[m], b[m]
        if outcome[m] == ts.A_WINS:
            ratings[i], ratings[j] = trueskill.rate_1vs1(ratings[i], ratings[j], env=env)
        elif outcome[m] == ts.B_WINS:
            ratings[j], ratings[i] = trueskill.rate_1vs1(ratings[j], ratings[i], env=env)
        else:
            ratings[i], ratings[j] = trueskill.rate_1vs1(ratings[i], ratings[j], True, env=env)
    return np.array([r.mu for r in ratings])


def package_env(env: ts.TrueSkillEnv) -> trueskill.TrueSkill:
    return trueskill.TrueSkill(
        mu=env.mu,
        sigma=env.sigma,
        beta=env.beta,
        tau=env.tau,
        draw_probability=env.draw_probability,
        backend="scipy" if env.backend == "scipy" else None,
    )


def interleaved_timings(env, a, b, outcome, args):
    """Our bootstrap and one package replicate timed in turn, so that both see the same load
    on a shared machine; the package replicates use the same resampled orders as ours (seed
    0) and must give equal mu and identical ranks. Returns our result, our peak RSS, the two
    medians (ours per bootstrap, the package per replicate) and the largest mu difference."""

    def ours():
        return ts.trueskill_bootstrap(a, b, outcome, env=env, n_replicates=args.replicates)

    result = ours()  # warm-up, and the replicates the package must reproduce
    rss = harness.peak_rss_mb()
    reference_env = package_env(env)
    # tolist(): the package works on Python numbers; indexing numpy arrays would slow it
    a_list, b_list, outcome_list = a.tolist(), b.tolist(), outcome.tolist()
    indices = ts.bootstrap_match_indices(outcome.size, args.replicates, seed=0, dtype=np.int32)[
        : args.sampled
    ].tolist()
    ours_times, package_times, largest = [], [], 0.0
    for turn in range(max(args.repeats, args.sampled)):
        if turn < args.repeats:
            started = time.perf_counter()
            ours()
            ours_times.append(time.perf_counter() - started)
        if turn < args.sampled:
            started = time.perf_counter()
            mu = package_replicate(
                reference_env, a_list, b_list, outcome_list, indices[turn], args.systems
            )
            package_times.append(time.perf_counter() - started)
            largest = max(largest, float(np.abs(mu - result.mu[turn]).max()))
            assert np.array_equal(ts.ranks_from_scores(mu), result.ranks[turn]), "ranks differ"
    assert largest < MU_TOLERANCE, f"mu differ by {largest}"
    return result, rss, statistics.median(ours_times), statistics.median(package_times), largest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--matches", type=int, default=50_000)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of ours")
    parser.add_argument(
        "--sampled", type=int, default=3, help="replicates run with the package, per backend"
    )
    args = parser.parse_args()

    load = harness.load_average()
    a, b, outcome = tournament(args.systems, args.matches)
    base_env = ts.TrueSkillEnv.from_matches(outcome)
    print(
        f"{args.matches:,} matches among {args.systems} systems, {args.replicates} replicates; "
        f"Spot The Bot environment (beta {base_env.beta:.1f}, draw probability "
        f"{base_env.draw_probability:.3f}); load average {load:.2f}"
    )
    figures = {}
    for backend, label in (("builtin", "package default backend"), ("scipy", "backend='scipy'")):
        env = ts.TrueSkillEnv.from_matches(outcome, backend=backend)
        _, rss, ours, per_replicate, largest = interleaved_timings(env, a, b, outcome, args)
        reference = per_replicate * args.replicates
        ratio = reference / ours
        print(f"{label}:")
        print(
            f"  equal results : {args.sampled} package replicates, max |mu diff| {largest:.1e}, "
            f"identical ranks"
        )
        print(f"  ours          : median {ours:.2f} s over {args.repeats} runs")
        print(
            f"  package       : {per_replicate:.2f} s per replicate x {args.replicates} = "
            f"{reference:.0f} s (extrapolated from {args.sampled} timed replicates)"
        )
        print(
            f"  ratio         : {ratio:.0f}x (target >= {TARGET_RATIO:g}x: "
            f"{'met' if ratio >= TARGET_RATIO else 'NOT met'})"
        )
        print(f"  peak RSS so far: {rss:.0f} MiB")
        figures[backend] = {
            "ours_s": round(ours, 3),
            "package_s_per_replicate": round(per_replicate, 4),
            "package_s_extrapolated": round(reference, 1),
            "sampled_replicates": args.sampled,
            "ratio": round(ratio, 1),
            "max_mu_diff": largest,
            "target_met": bool(ratio >= TARGET_RATIO),
        }
    harness.record(
        "trueskill",
        systems=args.systems,
        matches=args.matches,
        replicates=args.replicates,
        **figures,
    )


if __name__ == "__main__":
    main()
