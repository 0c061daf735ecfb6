"""Time 1000 bootstrap TrueSkill replicates: analysis.stats.trueskill vs the trueskill package.

Run from the repository root: ``.venv/bin/python bench/bench_trueskill.py [--help]``.

The tournament is Spot The Bot sized: 6 systems, all 15 pairs, 45 conversations per pair and
5 judgments per conversation (3,375 matches, ~20% draws). The vectorised code runs all
replicates; the package, being ~1000 times slower, is timed on a subset of the same replicates
(each a ``rate_1vs1`` pass over the same resampled order) and extrapolated linearly, which is
exact up to timing noise because every replicate has the same number of matches.
"""

import argparse
import statistics
import sys
import time
from itertools import combinations
from pathlib import Path

import numpy as np
import trueskill

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.stats import trueskill as ts  # noqa: E402  (needs the repository on sys.path)


def tournament(n_systems, conversations_per_pair, judgments_per_conversation, seed=0):
    rng = np.random.default_rng(seed)
    strengths = np.linspace(1.5, -1.5, n_systems)
    pairs = np.array(list(combinations(range(n_systems), 2)))
    per_pair = conversations_per_pair * judgments_per_conversation
    a = np.repeat(pairs[:, 0], per_pair)
    b = np.repeat(pairs[:, 1], per_pair)
    p_a = 1 / (1 + np.exp(strengths[b] - strengths[a]))
    outcome = np.where(rng.random(a.size) < p_a, ts.A_WINS, ts.B_WINS)
    outcome[rng.random(a.size) < 0.2] = ts.DRAW
    return a, b, outcome


def package_replicate(env, a, b, outcome, order, n_systems):
    """One replicate with the package: rate_1vs1 match by match, then rank by mu."""
    ratings = [env.create_rating() for _ in range(n_systems)]
    for m in order:
        i, j = a[m], b[m]
        if outcome[m] == ts.A_WINS:
            ratings[i], ratings[j] = trueskill.rate_1vs1(ratings[i], ratings[j], env=env)
        elif outcome[m] == ts.B_WINS:
            ratings[j], ratings[i] = trueskill.rate_1vs1(ratings[j], ratings[i], env=env)
        else:
            ratings[i], ratings[j] = trueskill.rate_1vs1(ratings[i], ratings[j], True, env=env)
    mu = np.array([r.mu for r in ratings])
    return mu, ts.ranks_from_scores(mu)


def time_vectorised(a, b, outcome, env, replicates, repeats):
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = ts.trueskill_bootstrap(a, b, outcome, env=env, n_replicates=replicates)
        timings.append(time.perf_counter() - start)
    return result, timings


def time_package(env, a, b, outcome, result, timed, n_systems):
    """Seconds per replicate of the package on the first ``timed`` replicates of ``result``
    (same resampled orders: trueskill_bootstrap's default seed), and the largest |mu|
    difference from the vectorised replicates."""
    package_env = trueskill.TrueSkill(
        mu=env.mu,
        sigma=env.sigma,
        beta=env.beta,
        tau=env.tau,
        draw_probability=env.draw_probability,
        backend="scipy" if env.backend == "scipy" else None,
    )
    indices = ts.bootstrap_match_indices(outcome.size, result.mu.shape[0], seed=0)
    largest_difference = 0.0
    start = time.perf_counter()
    for row in range(timed):
        mu, ranks = package_replicate(package_env, a, b, outcome, indices[row], n_systems)
        largest_difference = max(largest_difference, float(np.abs(mu - result.mu[row]).max()))
        assert np.array_equal(ranks, result.ranks[row]), "replicate ranks differ"
    return (time.perf_counter() - start) / timed, largest_difference


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5, help="timed runs of the vectorised code")
    parser.add_argument(
        "--reference-replicates",
        type=int,
        default=10,
        help="replicates timed with the package's default backend (then extrapolated)",
    )
    parser.add_argument(
        "--scipy-reference-replicates",
        type=int,
        default=3,
        help="replicates timed with the package's (slower) scipy backend",
    )
    parser.add_argument("--systems", type=int, default=6)
    parser.add_argument("--conversations-per-pair", type=int, default=45)
    parser.add_argument("--judgments-per-conversation", type=int, default=5)
    args = parser.parse_args()

    a, b, outcome = tournament(
        args.systems, args.conversations_per_pair, args.judgments_per_conversation
    )
    print(
        f"tournament: {args.systems} systems, {args.systems * (args.systems - 1) // 2} pairs, "
        f"{outcome.size} matches, Spot The Bot environment "
        f"(beta {ts.TrueSkillEnv.from_matches(outcome).beta:.2f}, "
        f"draw probability {ts.TrueSkillEnv.from_matches(outcome).draw_probability:.3f})"
    )
    print(f"{args.replicates} bootstrap replicates; package times extrapolated linearly\n")
    runs = [
        ("builtin", "package default backend (backend=None)", args.reference_replicates),
        ("scipy", "package backend='scipy'", args.scipy_reference_replicates),
    ]
    for backend, package_label, timed in runs:
        env = ts.TrueSkillEnv.from_matches(outcome, backend=backend)
        result, timings = time_vectorised(a, b, outcome, env, args.replicates, args.repeats)
        vectorised = statistics.median(timings)
        single_pass = statistics.median(time_vectorised(a, b, outcome, env, 1, args.repeats)[1])
        timed = min(timed, args.replicates)
        per_replicate, difference = time_package(env, a, b, outcome, result, timed, args.systems)
        package_total = per_replicate * args.replicates
        how = "measured" if timed == args.replicates else f"{timed} timed, extrapolated"
        print(f"backend={backend!r}")
        print(
            f"  vectorised : median {vectorised:.3f} s over {args.repeats} runs "
            f"(min {min(timings):.3f}, max {max(timings):.3f}); one replicate alone "
            f"{single_pass:.3f} s, so {args.replicates} cost {vectorised / single_pass:.1f} passes"
        )
        print(
            f"  {package_label}: {per_replicate:.3f} s per replicate -> "
            f"{package_total:.1f} s ({how})"
        )
        print(f"  ratio      : {package_total / vectorised:.0f}x")
        print(
            f"  check      : {timed} package replicates equal the vectorised ones "
            f"(max |mu diff| {difference:.1e}, identical ranks)"
        )


if __name__ == "__main__":
    main()
