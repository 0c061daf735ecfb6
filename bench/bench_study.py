"""Benchmark 4: a real Spot The Bot study end to end, ``manage.py analyze`` per domain.

Sets up Django on a temporary SQLite database (``DEBUG=1``, media in the same temporary
directory), migrates, and imports each domain of Deriu et al.'s released annotations from
``/work/shared/data/spot-the-bot`` (``--data``) with ``manage.py import_spotthebot``. Without
that data it says so and imports a synthetic study of the same shape instead (six systems,
45 conversations per pair, 300 human-human controls, ~5,100 judgments on segments of 2, 3 and
5 exchanges), written in the same interchange format.

Timed: ``manage.py analyze <domain>`` with default parameters - loading the judgments, every
section of the Spot The Bot report (win rates, TrueSkill clusters, Bradley-Terry, survival,
agreement, stability) and the ten SVG plots - after deleting the stored run each time so it is
recomputed; the first run (imports, URL resolver) is not counted. The report ranks the
stability analysis's subsamples in a forked process on the second core while it computes the
rest (``analysis.runs.background``); the time the report then still waits for them and the
plots are timed on their own inside those runs, and the subsamples are ranked once more in
this process to time them alone.

Reference, measured in the same run: the stability analysis as the Spot The Bot code does it
(``ranking_significance.repeat_ranking``) and as this project did before: every subsample
ranked in turn by its own ``trueskill_bootstrap``, with the same draws. Equality, asserted:
it gives the same reference ranking, the same shares and modal rankings as the report's.

    python bench/bench_study.py [--data DIR] [--repeats 3]
"""

from __future__ import annotations

import argparse
import io
import json
import os
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
    reproduced, modal_share, modal = [], [], []
    for n in n_grid:
        rng = np.random.default_rng(np.random.SeedSequence([seed, int(n)]))
        counts = Counter()
        for _ in range(n_subsamples):
            chosen = stability._draw_conversations(pair_of_conversation, int(n), rng)
            counts[rank(chosen[judgment_conversation], rng, n_replicates)] += 1
        ranking, count = counts.most_common(1)[0]
        reproduced.append(counts[reference] / n_subsamples)
        modal_share.append(count / n_subsamples)
        modal.append(ranking)
    return reference, np.array(reproduced), np.array(modal_share), tuple(modal)


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


def analyze_seconds(slug: str) -> float:
    from django.core.management import call_command

    from analysis.models import AnalysisRun

    AnalysisRun.objects.all().delete()
    output = Path(tempfile.gettempdir()) / f"bench-study-{slug}-{os.getpid()}.json"
    started = time.perf_counter()
    call_command("analyze", slug, json=str(output), stderr=io.StringIO())
    seconds = time.perf_counter() - started
    output.unlink()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--repeats", type=int, default=3)
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
    import analysis.reports.spot_the_bot as report_module
    import analysis.runs.tasks as tasks_module
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

    section_watch = Stopwatch(report_module, "stability_section")
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
        for watch in (section_watch, plots_watch):
            watch.seconds = 0.0
        runs = [analyze_seconds(domain) for _ in range(args.repeats)]
        whole = float(np.median(runs))
        waited_seconds = section_watch.seconds / args.repeats
        plots_seconds = plots_watch.seconds / args.repeats
        # What the report computed: the subsamples ranked in the other process, the section.
        (matches, params, _, _, part), _, section = section_watch.last_call
        names = list(matches.names)
        reported_reference = tuple(
            tuple(sorted(names.index(name) for name in cluster)) for cluster in section["reference"]
        )
        ours = part.subsamples.against(reported_reference)
        # The subsamples ranked again in this process, alone, for their time and arguments.
        subsamples_watch = Stopwatch(common_module, "subsample_rankings")
        common_module.stability_subsamples(matches, params)
        common_module.subsample_rankings = subsamples_watch.original
        stability_seconds = subsamples_watch.seconds
        call_args, call_kwargs, again = subsamples_watch.last_call
        assert again.rankings == part.subsamples.rankings, f"{domain}: subsamples differ"
        # The reference: the same stability analysis, one subsample after the other.
        started = time.perf_counter()
        reference = sequential_ranking_stability(
            *call_args,
            **call_kwargs,
            reference_replicates=params["replicates"],
            reference=reported_reference,
        )
        reference_seconds = time.perf_counter() - started
        equal = (
            ours.reference == reference[0]
            and np.array_equal(ours.share_reproduced, reference[1])
            and np.array_equal(ours.share_reproduced, section["share_reproduced"])
            and np.array_equal(ours.share_modal, reference[2])
            and ours.modal_rankings == reference[3]
        )
        assert equal, f"{domain}: stability differs from the sequential reference"
        n_judged = int(np.asarray(call_args[2]).size)
        print(
            f"{domain}: {n_judged:,} bot-bot judgments (import {imported:.1f} s); analyze median "
            f"{whole:.2f} s over {args.repeats} runs "
            f"({'met' if whole < TARGET_SECONDS else 'NOT met'}: target < {TARGET_SECONDS:g} s)"
        )
        print(
            f"  stability {stability_seconds:.2f} s alone (sequential reference "
            f"{reference_seconds:.2f} s, {reference_seconds / stability_seconds:.1f}x; same "
            f"rankings and shares), in the report on the second core, then waited for "
            f"{waited_seconds:.2f} s; plots {plots_seconds:.2f} s, "
            f"rest {whole - waited_seconds - plots_seconds:.2f} s"
        )
        figures[domain] = {
            "matches": n_judged,
            "analyze_s": round(whole, 3),
            "runs_s": [round(r, 3) for r in runs],
            "stability_s": round(stability_seconds, 3),
            "stability_waited_s": round(waited_seconds, 3),
            "stability_reference_s": round(reference_seconds, 3),
            "plots_s": round(plots_seconds, 3),
            "target_met": bool(whole < TARGET_SECONDS),
        }
    print(
        f"peak RSS {harness.peak_rss_mb():.0f} MiB, "
        f"of the forked stability processes {harness.peak_children_rss_mb():.0f} MiB"
    )
    harness.record(
        "study",
        data="real" if "synthetic" not in sources else "synthetic",
        domains=figures,
        forked_peak_rss_mb=round(harness.peak_children_rss_mb(), 1),
    )


if __name__ == "__main__":
    main()
