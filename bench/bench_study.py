"""Benchmark 4: a real Spot The Bot study end to end, ``manage.py analyze`` per domain.

Sets up Django on a temporary SQLite database (``DEBUG=1``, media in the same temporary
directory), migrates, and imports each domain of Deriu et al.'s released annotations from
``/work/shared/data/spot-the-bot`` (``--data``) with ``manage.py import_spotthebot``. Without
that data it says so and imports a synthetic study of the same shape instead (six systems,
45 conversations per pair, 300 human-human controls, ~5,100 judgments on segments of 2, 3 and
5 exchanges), written in the same interchange format.

Timed: ``manage.py analyze <domain>`` with default parameters - loading the judgments and
every section of the Spot The Bot report (win rates, TrueSkill clusters, Bradley-Terry,
survival, agreement) - after deleting the stored run each time so it is recomputed; the
first run (imports, URL resolver) is not counted. The command stores the contract and
leaves the stability curve to the run's part of its own (``analysis.runs.stability``) and
the plots to theirs; the stability part is then timed once on its own (wall and CPU time),
with as many subsamples per point as its precision needs.

Reference, measured in the same run: the stability analysis as the Spot The Bot code does it
(``ranking_significance.repeat_ranking``) and as this project did before: every subsample
ranked in turn by its own ``trueskill_bootstrap``, with the same draws, at
``--reference-subsamples`` per point (10, the curve's former default; ours is timed at the
same count beside it). Equality, asserted: the same reference ranking, shares and modal
rankings, and the first subsamples of each point of the part's adaptive curve are ranked
as the reference ranks them.

    python bench/bench_study.py [--data DIR] [--repeats 3] [--reference-subsamples 10]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from collections import Counter
from itertools import combinations
from pathlib import Path

import harness  # noqa: I001  (sets BLAS threads before numpy loads)
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = Path("/work/shared/data/spot-the-bot")
DOMAINS = ("dailydialog", "empathetic", "personachat")
TARGET_SECONDS = 2.0


def setup_django(directory: Path) -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "evalhub.settings"
    os.environ["DEBUG"] = "1"
    os.environ["DATABASE_URL"] = f"sqlite:///{directory / 'db.sqlite3'}"
    os.environ["EVALHUB_MEDIA_ROOT"] = str(directory / "media")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


# --- a synthetic study in the interchange format (only when the real data is absent) ---------

SYNTHETIC_SYSTEMS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")
FEATURES = ("fluency", "sensibleness", "specificity")


def write_synthetic_study(directory: Path, seed: int = 0) -> tuple[Path, Path]:
    """Personachat-shaped: 6 systems, 45 conversations per pair, 300 human-human controls."""
    rng = np.random.default_rng(seed)
    humanlike = dict(zip(SYNTHETIC_SYSTEMS, np.linspace(0.15, 0.6, 6), strict=True))
    conversations, judgments = [], []
    speakers = [pair for pair in combinations(SYNTHETIC_SYSTEMS, 2) for _ in range(45)]
    speakers += [("human", "human")] * 300
    for number, pair in enumerate(speakers):
        cid = f"synthetic-{number:04d}"
        turns = [{"speaker": t % 2, "text": f"turn {t} of {cid}"} for t in range(10)]
        conversations.append(
            {"id": cid, "domain": "synthetic", "speakers": list(pair), "turns": turns}
        )
        if pair[0] == "human" and rng.random() < 0.6:
            continue
        for _ in range(int(rng.integers(6, 9))):
            exchanges = int(rng.choice([2, 3, 5]))
            labels = []
            for speaker in pair:
                # spotted within k exchanges with a per-exchange chance of 1 - humanlike
                p_bot = 0.05 if speaker == "human" else 1 - humanlike[speaker] ** exchanges
                spotted = rng.random() < p_bot
                labels.append("bot" if spotted else str(rng.choice(["human", "unsure"])))
            better = {
                f: (None if rng.random() < 0.4 else int(rng.integers(0, 2))) for f in FEATURES
            }
            judgments.append(
                {
                    "conversation": cid,
                    "worker": f"w{int(rng.integers(0, 120)):04d}",
                    "batch": f"b{number // 20:04d}",
                    "exchanges": exchanges,
                    "labels": labels,
                    "better": better,
                    "started_at_ms": 1589459205478 + 60_000 * len(judgments),
                    "duration_ms": int(rng.integers(20_000, 90_000)),
                }
            )
    paths = directory / "conversations.jsonl", directory / "judgments.jsonl"
    for path, rows in zip(paths, (conversations, judgments), strict=True):
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return paths


# --- the reference: each stability subsample ranked in turn ---------------------------------


def sequential_ranking_stability(
    player_a,
    player_b,
    outcome,
    conversation_id,
    pair_id,
    n_grid,
    *,
    n_subsamples,
    n_replicates,
    reference_replicates,
    seed,
    coverage,
    env_options=None,
    reference=None,
):
    """Spot The Bot's ``repeat_ranking`` loop with this project's TrueSkill bootstrap: the same
    draws as ``ranking_stability`` (conversations, then bootstrap indices, per subsample).
    The reference ranking is always computed here; a ``reference`` the report passed (its
    own TrueSkill bootstrap) must equal it."""
    from evalstats import stability
    from evalstats.trueskill import TrueSkillEnv, trueskill_bootstrap

    player_a, player_b, outcome = (np.asarray(x) for x in (player_a, player_b, outcome))
    _, pair_of_conversation, judgment_conversation = stability._conversation_pairs(
        conversation_id, pair_id
    )

    def rank(mask, rng, replicates):
        a, b = player_a[mask], player_b[mask]
        systems, compact = np.unique(np.concatenate([a, b]), return_inverse=True)
        result = trueskill_bootstrap(
            compact[: a.size],
            compact[a.size :],
            outcome[mask],
            n_players=systems.size,
            env=TrueSkillEnv.from_matches(outcome[mask], **dict(env_options or {})),
            n_replicates=replicates,
            seed=rng,
            coverage=coverage,
        )
        return tuple(tuple(sorted(int(systems[p]) for p in c)) for c in result.clusters)

    everything = np.ones(outcome.size, dtype=bool)
    computed = rank(everything, np.random.default_rng(seed), reference_replicates)
    assert reference is None or reference == computed, "the report's reference ranking differs"
    reference = computed
    reproduced, modal_share, modal, per_point = [], [], [], []
    for n in n_grid:
        rng = np.random.default_rng(np.random.SeedSequence([seed, int(n)]))
        rankings = []
        for _ in range(n_subsamples):
            chosen = stability._draw_conversations(pair_of_conversation, int(n), rng)
            rankings.append(rank(chosen[judgment_conversation], rng, n_replicates))
        counts = Counter(rankings)
        ranking, count = counts.most_common(1)[0]
        reproduced.append(counts[reference] / n_subsamples)
        modal_share.append(count / n_subsamples)
        modal.append(ranking)
        per_point.append(tuple(rankings))
    return reference, np.array(reproduced), np.array(modal_share), tuple(modal), per_point


class Stopwatch:
    """Wraps a module attribute to add up its wall time and keep its last call."""

    def __init__(self, module, name):
        self.module, self.name = module, name
        self.original = getattr(module, name)
        self.seconds = 0.0
        self.last_call = None
        setattr(module, name, self)

    def __call__(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            result = self.original(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - started
        self.last_call = (args, kwargs, result)
        return result


def analyze_seconds(slug: str) -> tuple[float, float]:
    """Wall and CPU seconds of one ``analyze`` that computes the run."""
    from django.core.management import call_command

    from analysis.models import AnalysisRun

    AnalysisRun.objects.all().delete()
    output = Path(tempfile.gettempdir()) / f"bench-study-{slug}-{os.getpid()}.json"
    cpu, started = cpu_seconds(), time.perf_counter()
    call_command("analyze", slug, json=str(output), stderr=io.StringIO())
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    output.unlink()
    return seconds, cpu


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--reference-subsamples",
        type=int,
        default=10,
        help="subsamples per point of the sequential reference (and of ours beside it)",
    )
    args = parser.parse_args()

    load = harness.load_average()
    workdir = Path(tempfile.mkdtemp(prefix="evalhub-bench-study-"))
    try:
        run(args, load, workdir)
    finally:
        from django.db import connections

        connections.close_all()
        shutil.rmtree(workdir, ignore_errors=True)


def run(args, load: float, workdir: Path) -> None:
    setup_django(workdir)
    from django.core.management import call_command

    import analysis.reports.common as common_module
    import analysis.runs.tasks as tasks_module
    from analysis.models import AnalysisRun
    from analysis.runs import stability as stability_part
    from tournaments.models import Tournament

    sources = {}
    for domain in DOMAINS:
        conversations = args.data / domain / "conversations.jsonl"
        judgments = args.data / domain / "judgments.jsonl"
        if conversations.is_file() and judgments.is_file():
            sources[domain] = (conversations, judgments)
    if not sources:
        print(
            f"NOTE: no Spot The Bot data in {args.data}: analysing a SYNTHETIC study of the "
            "same shape instead (6 systems, 45 conversations per pair, ~5,100 judgments)"
        )
        sources["synthetic"] = write_synthetic_study(workdir)
    print(f"load average {load:.2f}; temporary database and media in {workdir}")

    plots_watch = Stopwatch(tasks_module, "render_plots")
    figures = {}
    for domain, (conversations, judgments) in sources.items():
        started = time.perf_counter()
        call_command(
            "import_spotthebot",
            str(conversations),
            str(judgments),
            name=f"Spot The Bot {domain}",
            slug=domain,
            stdout=io.StringIO(),
        )
        imported = time.perf_counter() - started
        Tournament.objects.get(slug=domain)  # imported
        analyze_seconds(domain)  # first run: imports, URL resolver, caches
        plots_watch.seconds = 0.0
        timed = [analyze_seconds(domain) for _ in range(args.repeats)]
        runs = [wall for wall, _ in timed]
        whole = float(np.median(runs))
        whole_cpu = float(np.median([cpu for _, cpu in timed]))
        plots_seconds = plots_watch.seconds / args.repeats
        # The stability curve, the run's part of its own, computed once on the last run.
        run = AnalysisRun.objects.get(tournament__slug=domain)
        assert run.result["stability"] is None, f"{domain}: analyze waited for the curve"
        subsamples_watch = Stopwatch(common_module, "subsample_rankings")
        cpu, started = cpu_seconds(), time.perf_counter()
        assert stability_part.compute_stability_now(run.pk) == "done"
        part_seconds, part_cpu = time.perf_counter() - started, cpu_seconds() - cpu
        common_module.subsample_rankings = subsamples_watch.original
        call_args, call_kwargs, adaptive = subsamples_watch.last_call
        run.refresh_from_db()
        section = run.result["stability"]
        names = run.result["systems"]  # only to label; indices come from the part itself
        assert list(section["subsamples_drawn"]) == list(adaptive.drawn)
        # Ours and the reference at a fixed number of subsamples per point (the curve's
        # former default), and the adaptive curve's first subsamples of each point, which
        # come from the same draws.
        fixed = {
            "n_subsamples": args.reference_subsamples,
            "n_replicates": call_kwargs["n_replicates"],
            "seed": call_kwargs["seed"],
            "coverage": call_kwargs["coverage"],
        }
        started = time.perf_counter()
        ours = common_module.subsample_rankings(*call_args, **fixed).against(adaptive.reference)
        stability_seconds = time.perf_counter() - started
        started = time.perf_counter()
        reference = sequential_ranking_stability(
            *call_args,
            **fixed,
            reference_replicates=call_kwargs["reference_replicates"],
            reference=adaptive.reference,
        )
        reference_seconds = time.perf_counter() - started
        equal = (
            ours.reference == reference[0]
            and np.array_equal(ours.share_reproduced, reference[1])
            and np.array_equal(ours.share_modal, reference[2])
            and ours.modal_rankings == reference[3]
            and all(
                adaptive.rankings[start : start + args.reference_subsamples] == prefix
                for start, prefix in zip(
                    np.cumsum((0, *adaptive.drawn[:-1])).tolist(), reference[4], strict=True
                )
            )
        )
        assert equal, f"{domain}: stability differs from the sequential reference"
        n_judged = int(np.asarray(call_args[2]).size)
        print(
            f"{domain}: {n_judged:,} bot-bot judgments among {len(names)} systems (import "
            f"{imported:.1f} s); analyze (the contract, the stability curve after it) median "
            f"{whole:.2f} s (CPU {whole_cpu:.2f} s) over {args.repeats} runs "
            f"({'met' if whole < TARGET_SECONDS else 'NOT met'}: target < {TARGET_SECONDS:g} s)"
        )
        print(
            f"  stability curve, the run's part after it: {part_seconds:.2f} s "
            f"(CPU {part_cpu:.2f} s; {', '.join(map(str, adaptive.drawn))} subsamples per point); "
            f"at {args.reference_subsamples} per point {stability_seconds:.2f} s against the "
            f"sequential reference's {reference_seconds:.2f} s "
            f"({reference_seconds / stability_seconds:.1f}x; same rankings and shares); "
            f"plots {plots_seconds:.2f} s"
        )
        figures[domain] = {
            "matches": n_judged,
            "analyze_s": round(whole, 3),
            "runs_s": [round(r, 3) for r in runs],
            "analyze_cpu_s": round(whole_cpu, 3),
            "stability_part_s": round(part_seconds, 3),
            "stability_part_cpu_s": round(part_cpu, 3),
            "stability_drawn": list(adaptive.drawn),
            "stability_fixed_s": round(stability_seconds, 3),
            "stability_fixed_subsamples": args.reference_subsamples,
            "stability_reference_s": round(reference_seconds, 3),
            "plots_s": round(plots_seconds, 3),
            "target_met": bool(whole < TARGET_SECONDS),
        }
    print(
        f"peak RSS {harness.peak_rss_mb():.0f} MiB, "
        f"of forked processes {harness.peak_children_rss_mb():.0f} MiB"
    )
    harness.record(
        "study",
        data="real" if "synthetic" not in sources else "synthetic",
        domains=figures,
        forked_peak_rss_mb=round(harness.peak_children_rss_mb(), 1),
    )


if __name__ == "__main__":
    main()
