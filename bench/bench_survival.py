"""Benchmark 3: the Spot The Bot survival analysis on 6 systems x 100,000 judgments.

Data: 6 systems, 100,000 judgments each, segment lengths 2, 3 and 5 exchanges (PersonaChat
sized), exponential times to being spotted with a hazard per system and a proportional effect
of three feature preferences (coded +1 / 0 / -1), labels bot / human / unsure, seeded.

Ours, the whole analysis the Spot The Bot report runs (default parameters): aggregate the
judgments to interval counts (``spot_the_bot_intervals``), Turnbull's NPMLE per system
(``turnbull_by_group``), every pairwise generalized log-rank test with Holm's correction
(``pairwise_interval_logrank``) plus the 6-sample test, and the interval-censored Cox model
per system (``interval_cox_ph_by_system``).

Reference: lifelines' ``KaplanMeierFitter().fit_interval_censoring`` per system on the
per-judgment intervals (lifelines takes closed intervals: survival past k is [k + 1e-6, inf]).
Equality, asserted before timing: our Turnbull curves equal lifelines' at the segment lengths
within 1e-4 (lifelines' own convergence tolerance), and our Cox coefficients equal a
statsmodels complementary log-log binomial GLM on the per-judgment rows within 1e-6.

    python bench/bench_survival.py [--systems 6] [--judgments 100000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import harness  # noqa: I001  (sets BLAS threads before numpy loads)
import numpy as np
import statsmodels.api as sm
from lifelines import KaplanMeierFitter

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalstats.interval_cox import interval_cox_ph_by_system  # noqa: E402
from evalstats.interval_logrank import (  # noqa: E402
    interval_logrank_test,
    pairwise_interval_logrank,
)
from evalstats.intervals import spot_the_bot_intervals  # noqa: E402
from evalstats.pairwise import BOT, HUMAN, UNSURE  # noqa: E402
from evalstats.turnbull import turnbull_by_group  # noqa: E402

SEGMENT_LENGTHS = np.array([2.0, 3.0, 5.0])
FEATURES = ("fluency", "sensibleness", "specificity")
EFFECTS = np.array([-0.4, -0.25, -0.1])
EPS = 1e-6
TARGET_SECONDS = 2.0
SURVIVAL_TOLERANCE = 1e-4
COX_TOLERANCE = 1e-6


def simulate_study(n_systems: int, per_system: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    system = np.repeat(np.arange(n_systems), per_system)
    preferences = rng.choice([-1.0, 0.0, 1.0], size=(system.size, len(FEATURES)))
    rate = np.linspace(0.1, 0.6, n_systems)[system] * np.exp(preferences @ EFFECTS)
    k = rng.choice(SEGMENT_LENGTHS, system.size)
    spotted = rng.exponential(1.0 / rate) <= k
    label = np.where(spotted, BOT, rng.choice([HUMAN, UNSURE], system.size))
    return system, k, label, preferences


def survival_analysis(system, k, label, preferences):
    data = spot_the_bot_intervals(system, k, label)
    curves = turnbull_by_group(data, times=SEGMENT_LENGTHS)
    pairwise = pairwise_interval_logrank(data.left, data.right, data.counts, groups=data.groups)
    overall = interval_logrank_test(data.left, data.right, data.counts)
    cox = interval_cox_ph_by_system(system, k, label, preferences, names=FEATURES)
    return curves, pairwise, overall, cox


def lifelines_curves(system, k, label):
    spotted = label == BOT
    curves = {}
    for s in np.unique(system):
        mask = system == s
        lower = np.where(spotted[mask], 0.0, k[mask] + EPS)
        upper = np.where(spotted[mask], k[mask], np.inf)
        fitter = KaplanMeierFitter().fit_interval_censoring(lower, upper, timeline=SEGMENT_LENGTHS)
        # the survival function just after each segment length: S(k) = P(T > k)
        curves[int(s)] = fitter.survival_function_.iloc[:, 1].to_numpy()
    return curves


def statsmodels_cox(k, spotted, preferences):
    lengths = np.unique(k)
    design = np.column_stack([(k[:, None] == lengths[None, :]).astype(float), preferences])
    family = sm.families.Binomial(link=sm.families.links.CLogLog())
    return sm.GLM(spotted.astype(float), design, family=family).fit(tol=1e-12).params[3:]


def check_equal(system, k, label, preferences):
    curves, _, _, cox = survival_analysis(system, k, label, preferences)
    reference = lifelines_curves(system, k, label)
    survival_gap = max(float(np.abs(curves[s].survival - reference[s]).max()) for s in reference)
    spotted = label == BOT
    cox_gap = max(
        float(
            np.abs(
                cox[s].coef
                - statsmodels_cox(k[system == s], spotted[system == s], preferences[system == s])
            ).max()
        )
        for s in cox
    )
    print(
        f"equal results: max |ours - lifelines| survival {survival_gap:.1e} "
        f"(tolerance {SURVIVAL_TOLERANCE}), max |ours - statsmodels| Cox coefficient "
        f"{cox_gap:.1e} (tolerance {COX_TOLERANCE})"
    )
    assert survival_gap < SURVIVAL_TOLERANCE, "Turnbull curves differ from lifelines"
    assert cox_gap < COX_TOLERANCE, "Cox coefficients differ from statsmodels"
    return survival_gap, cox_gap


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=6)
    parser.add_argument("--judgments", type=int, default=100_000, help="per system")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--reference-repeats", type=int, default=1)
    args = parser.parse_args()

    load = harness.load_average()
    study = simulate_study(args.systems, args.judgments)
    system, k, label, preferences = study
    print(
        f"{args.systems} systems x {args.judgments:,} judgments, segment lengths "
        f"{SEGMENT_LENGTHS.astype(int).tolist()}, {len(FEATURES)} feature preferences; "
        f"load average {load:.2f}"
    )
    started = time.perf_counter()
    survival_analysis(*study)
    first_run = time.perf_counter() - started
    ours = harness.median_time(lambda: survival_analysis(*study), repeats=args.repeats)
    rss = harness.peak_rss_mb()
    parts = {
        "turnbull": lambda: turnbull_by_group(
            spot_the_bot_intervals(system, k, label), times=SEGMENT_LENGTHS
        ),
        "logrank": lambda: pairwise_interval_logrank(
            *_intervals(system, k, label), groups=range(args.systems)
        ),
        "cox": lambda: interval_cox_ph_by_system(system, k, label, preferences, names=FEATURES),
    }
    part_times = {name: harness.median_time(fn, repeats=args.repeats) for name, fn in parts.items()}
    survival_gap, cox_gap = check_equal(*study)
    reference = harness.median_time(
        lambda: lifelines_curves(system, k, label), repeats=args.reference_repeats, warmup=0
    )
    ratio = reference / part_times["turnbull"]
    print(
        f"ours, whole analysis        median {ours:.3f} s over {args.repeats} runs "
        f"(first run {first_run:.3f} s)"
    )
    for name, seconds in part_times.items():
        print(f"  {name:<26}median {seconds:.3f} s")
    print(
        f"lifelines KM, {args.systems} systems     median {reference:.3f} s "
        f"over {args.reference_repeats} run(s)"
    )
    print(f"ratio lifelines / our Turnbull   {ratio:.0f}x")
    print(f"peak RSS                    {rss:.0f} MiB")
    met = ours < TARGET_SECONDS
    print(f"target (whole analysis < {TARGET_SECONDS:g} s): {'met' if met else 'NOT met'}")
    harness.record(
        "survival",
        systems=args.systems,
        judgments_per_system=args.judgments,
        ours_s=round(ours, 4),
        parts_s={name: round(seconds, 4) for name, seconds in part_times.items()},
        lifelines_s=round(reference, 3),
        ratio_turnbull=round(ratio, 1),
        max_survival_gap=survival_gap,
        max_cox_gap=cox_gap,
        target_met=bool(met),
    )


def _intervals(system, k, label):
    data = spot_the_bot_intervals(system, k, label)
    return data.left, data.right, data.counts


if __name__ == "__main__":
    main()
