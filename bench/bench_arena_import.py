"""Importing Chatbot Arena's clean battles (issue 26): 1,000,000 lines into PostgreSQL.

Run: ``.venv/bin/python bench/bench_arena_import.py`` (``--lines``, ``--small``,
``--reference-lines``, ``--repeats``; needs PostgreSQL, ``EVALHUB_BENCH_PG`` names the
server, default postgres@127.0.0.1:5432). ``--smoke`` runs every step on tiny files and a
SQLite database, to show the script works (tests/bench runs it); its times mean nothing.

Writes seeded synthetic files of clean-battle lines (the published format: question_id,
model_a / model_b among 130 model names with Arena-like skewed counts, winner, judge, turn,
anony, language, tstamp, conv_metadata with token and style counts, is_code, dedup_tag,
category_tag; one line in a hundred without a question_id, so the content hash is the key)
into a temporary directory (``--data-dir``, never the repository), creates a fresh
database, and runs every import in a child process of its own, so that each one's peak RSS
is its own (``resource.getrusage`` in the child):

1. equality: the reference-size file imported by ``import_battles`` and by the reference
   (the same import one battle per statement: ``writing.CHUNK = 1``, i.e. one existence
   query and one INSERT per battle, as a per-row ORM create would) stores the same battles;
2. the 1,000,000-line file and the 100,000-line file imported ``--repeats`` times each
   (the table emptied before each), and the small file again into the same arena
   (idempotence: nothing stored, timed too);
3. the reference on ``--reference-lines`` lines, extrapolated linearly to the large file
   (stated in the output: a per-row import of a million lines would take far too long).

Prints medians, the ratio to the reference, peak RSS at both sizes (bounded memory: the
1,000,000-line peak must not be ~10x the 100,000-line one), and appends a JSON line to
bench/results/arena_import.jsonl.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

TARGET_SECONDS = 60.0
FORMAT_VERSION = 1  # bump when the generated lines change: cached files are regenerated
OWNER = "bench-importer"
LANGUAGES = ["English"] * 14 + ["Chinese", "Russian", "German", "Spanish", "French", "Japanese"]
FAMILIES = [
    "gpt-4",
    "gpt-4o",
    "gpt-3.5-turbo",
    "claude-3",
    "claude-3-5",
    "gemini-1.5",
    "llama-3.1",
    "llama-2",
    "mistral",
    "mixtral",
    "qwen2",
    "yi",
    "vicuna",
]
VARIANTS = ["chat", "instruct", "pro", "flash", "large", "small", "0613", "1106", "preview", "beta"]


def model_names(n: int = 130) -> list[str]:
    """`n` distinct model names in Chatbot Arena's style ("llama-3.1-70b-instruct")."""
    names = []
    for i in range(n):
        family = FAMILIES[i % len(FAMILIES)]
        variant = VARIANTS[(i // len(FAMILIES)) % len(VARIANTS)]
        names.append(f"{family}-{7 + (i * 13) % 400}b-{variant}")
    assert len(set(names)) == n
    return names


def _counts(rng: random.Random) -> tuple[dict, dict, dict]:
    headers = {f"h{level}": (rng.random() < 0.2) * rng.randint(0, 4) for level in range(1, 7)}
    lists = {"ordered": rng.randint(0, 8) * (rng.random() < 0.4), "unordered": rng.randint(0, 9)}
    bold = {"**": rng.randint(0, 6), "__": 0}
    return headers, lists, bold


def battle_line(rng: random.Random, names: list[str], weights: list[float], n: int) -> str:
    a, b = rng.choices(range(len(names)), weights, k=2)
    while b == a:
        b = rng.choices(range(len(names)), weights)[0]
    ha, la, ba = _counts(rng)
    hb, lb, bb = _counts(rng)
    row = {
        "question_id": f"{rng.getrandbits(128):032x}",
        "model_a": names[a],
        "model_b": names[b],
        "winner": rng.choices(["model_a", "model_b", "tie", "tie (bothbad)"], [35, 35, 12, 18])[0],
        "judge": f"arena_user_{rng.randint(1, 200_000)}",
        "turn": rng.choices([1, 2, 3, 4], [80, 12, 5, 3])[0],
        "anony": rng.random() < 0.9,
        "language": rng.choice(LANGUAGES),
        "tstamp": round(1_682_351_591.5 + n * 20.0 + rng.random(), 4),
        "conv_metadata": {
            "sum_user_tokens": rng.randint(3, 400),
            "sum_assistant_a_tokens": rng.randint(1, 1500),
            "sum_assistant_b_tokens": rng.randint(1, 1500),
            "context_a_tokens": rng.randint(3, 400),
            "context_b_tokens": rng.randint(3, 400),
            "turns": 1,
            "header_count_a": ha,
            "list_count_a": la,
            "bold_count_a": ba,
            "header_count_b": hb,
            "list_count_b": lb,
            "bold_count_b": bb,
        },
        "is_code": rng.random() < 0.2,
        "dedup_tag": {"high_freq": rng.random() < 0.05, "sampled": True},
        "category_tag": {
            "criteria_v0.1": {
                key: rng.random() < 0.3
                for key in (
                    "specificity",
                    "domain_knowledge",
                    "complexity",
                    "problem_solving",
                    "creativity",
                    "technical_accuracy",
                    "real_world",
                )
            },
            "if_v0.1": {"if": rng.random() < 0.2, "score": rng.randint(0, 5)},
            "math_v0.1": {"math": rng.random() < 0.1},
        },
    }
    if n % 100 == 99:
        del row["question_id"]  # known by its content hash
    return json.dumps(row)


def write_battles(path: Path, lines: int, seed: int = 26) -> Path:
    """`lines` seeded battle lines at `path` (kept: the same arguments give the same file)."""
    if path.exists():
        return path
    rng = random.Random(seed)
    names = model_names()
    # Skewed like the published battles: the most asked model ~20x the least asked.
    weights = [1.0 / (1 + i / 7) for i in range(len(names))]
    rng.shuffle(weights)
    partial = path.with_suffix(".partial")
    with partial.open("w") as out:
        for n in range(lines):
            out.write(battle_line(rng, names, weights, n) + "\n")
    partial.rename(path)
    return path


# The child: one import, its own process ------------------------------------------------------


def configure_django(database_url: str) -> None:
    os.environ.update(
        DATABASE_URL=database_url,
        DJANGO_SETTINGS_MODULE="evalhub.settings",
        DEBUG="0",
        SECRET_KEY="bench-arena-import-not-a-secret-" + "x" * 40,
        EVALHUB_SECRET_KEYS="YmVuY2gtb25seS1ub3QtYS1zZWNyZXQtMDEyMzQ1Njc=",  # not a secret
        # The leaderboard's message stays in this process: queueing is one message.
        CELERY_BROKER_URL="memory://localhost/",
        ALLOWED_HOSTS="127.0.0.1",
    )
    import django

    django.setup()


def child(args) -> None:
    """Import `args.file` into the arena `args.arena` (created with the owner if missing)
    and print {"seconds", "created", "unchanged", "peak_rss_mb"} as one JSON line."""
    configure_django(args.database)
    from django.contrib.auth import get_user_model
    from django.db import connection

    from arenas.interchange import writing
    from arenas.models import Arena

    if args.mode == "reference":
        writing.CHUNK = 1  # one existence query and one INSERT per battle
    owner, _ = get_user_model().objects.get_or_create(username=OWNER)
    if args.empty:
        with connection.cursor() as cursor:
            cursor.execute(_empty_sql(connection.vendor))
    arena, _ = Arena.objects.get_or_create(
        slug=args.arena, defaults={"name": args.arena, "owner": owner}
    )
    started = time.perf_counter()
    with open(args.child, "rb") as stream:
        result = writing.import_battles(arena, stream, create=True)
    seconds = time.perf_counter() - started
    peak = peak_rss_of_this_process_mb()
    print(
        json.dumps(
            {
                "seconds": seconds,
                "created": result.created,
                "unchanged": result.unchanged,
                "peak_rss_mb": round(peak, 1),
            }
        )
    )


def peak_rss_of_this_process_mb() -> float:
    """The process's own peak RSS: /proc's VmHWM, which starts again at exec. (getrusage's
    ru_maxrss does not: a child keeps the peak of the parent it was forked from.)"""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _empty_sql(vendor: str) -> str:
    tables = "arenas_battleanswer, arenas_battleturn, arenas_battle"
    if vendor == "postgresql":
        # CASCADE: other apps' rows point at battles (judging's automatic judgments).
        return f"TRUNCATE {tables} CASCADE"
    return "DELETE FROM arenas_battle"


def run_child(database: str, file: Path, arena: str, mode: str = "ours", empty=False) -> dict:
    command = [sys.executable, __file__, "--child", str(file), "--database", database]
    command += ["--arena", arena, "--mode", mode]
    if empty:
        command.append("--empty")
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the import of {file.name} ({mode}) failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# The parent ----------------------------------------------------------------------------------


def stored_battles(arena_slug: str) -> list[tuple]:
    from arenas.models import Battle

    fields = (
        "question_id",
        "system_a__slug",
        "system_b__slug",
        "vote",
        "voted_at",
        "started_at",
        "voter_ref",
        "language",
        "turns",
        "anonymous",
        "tokens_a",
        "tokens_b",
        "style_a",
        "style_b",
        "extra",
        "source",
        "voter_platform",
    )
    rows = Battle.objects.filter(arena__slug=arena_slug).values_list(*fields)
    return sorted(json.dumps(row, sort_keys=True, default=str) for row in rows)


def migrate(database: str) -> None:
    configure_django(database)
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000, help="the large file")
    parser.add_argument("--small", type=int, default=100_000, help="the small file (memory)")
    parser.add_argument(
        "--reference-lines", type=int, default=20_000, help="lines imported by the reference"
    )
    parser.add_argument("--repeats", type=int, default=1, help="imports of each file")
    parser.add_argument("--data-dir", default=os.path.join(tempfile.gettempdir(), "arena-bench"))
    parser.add_argument("--smoke", action="store_true", help="tiny files on SQLite: it runs")
    parser.add_argument("--label", default="")
    # The child's arguments.
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--database", help=argparse.SUPPRESS)
    parser.add_argument("--arena", help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="ours", help=argparse.SUPPRESS)
    parser.add_argument("--empty", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.smoke:
        args.lines, args.small, args.reference_lines, args.repeats = 3000, 1000, 200, 1
    return args


def measure(args, database: str, data: Path) -> dict:
    big = write_battles(data / f"battles-v{FORMAT_VERSION}-{args.lines}.jsonl", args.lines)
    small = write_battles(data / f"battles-v{FORMAT_VERSION}-{args.small}.jsonl", args.small)
    sample = write_battles(
        data / f"battles-v{FORMAT_VERSION}-{args.reference_lines}.jsonl", args.reference_lines
    )
    migrate(database)

    # 1. The same battles stored by both.
    ours_sample = run_child(database, sample, "equal-ours")
    reference = run_child(database, sample, "equal-reference", mode="reference")
    assert ours_sample["created"] == reference["created"] == args.reference_lines, (
        ours_sample,
        reference,
    )
    assert stored_battles("equal-ours") == stored_battles("equal-reference"), "not the same"
    print(f"equal: {args.reference_lines:,} lines stored alike by both imports")

    # 2. Ours, large and small, each on an emptied table; then the small one again.
    runs = {"large": [], "small": []}
    for _ in range(args.repeats):
        runs["large"].append(run_child(database, big, "large", empty=True))
        assert runs["large"][-1]["created"] == args.lines, runs["large"][-1]
        runs["small"].append(run_child(database, small, "small", empty=True))
        assert runs["small"][-1]["created"] == args.small, runs["small"][-1]
    again = run_child(database, small, "small")
    assert again == {**again, "created": 0, "unchanged": args.small}, again

    # 3. The reference on its sample, at the scale of the large file.
    per_line = reference["seconds"] / args.reference_lines
    large = statistics.median(r["seconds"] for r in runs["large"])
    small_s = statistics.median(r["seconds"] for r in runs["small"])
    extrapolated = per_line * args.lines
    return {
        "lines": args.lines,
        "small_lines": args.small,
        "seconds": round(large, 2),
        "lines_per_second": round(args.lines / large),
        "small_seconds": round(small_s, 2),
        "again_seconds": round(again["seconds"], 2),
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs["large"]),
        "small_peak_rss_mb": max(r["peak_rss_mb"] for r in runs["small"]),
        "reference_lines": args.reference_lines,
        "reference_seconds": round(reference["seconds"], 2),
        "ours_on_reference_lines_seconds": round(ours_sample["seconds"], 2),
        "reference_extrapolated_seconds": round(extrapolated, 1),
        "ratio": round(extrapolated / large, 1),
    }


def report(figures: dict, database: str) -> None:
    met = "met" if figures["seconds"] < TARGET_SECONDS else "NOT met"
    print(
        f"import_battles, {figures['lines']:,} lines on {database}: {figures['seconds']} s "
        f"({figures['lines_per_second']:,} lines/s), peak RSS {figures['peak_rss_mb']} MiB; "
        f"target < {TARGET_SECONDS:.0f} s: {met}"
    )
    print(
        f"  {figures['small_lines']:,} lines: {figures['small_seconds']} s, peak RSS "
        f"{figures['small_peak_rss_mb']} MiB; the same file again (nothing new): "
        f"{figures['again_seconds']} s"
    )
    print(
        f"  reference (one battle per statement): {figures['reference_lines']:,} lines in "
        f"{figures['reference_seconds']} s (ours: {figures['ours_on_reference_lines_seconds']} s)"
        f", extrapolated to {figures['lines']:,}: {figures['reference_extrapolated_seconds']} s"
        f" -> ours is {figures['ratio']}x faster"
    )


def main() -> None:
    args = arguments()
    if args.child:
        child(args)
        return
    from harness import load_average, record

    data = Path(args.data_dir)
    data.mkdir(parents=True, exist_ok=True)
    load = load_average()
    if args.smoke:
        database = f"sqlite:///{data / f'smoke-{os.getpid()}.sqlite3'}"
        try:
            figures = measure(args, database, data)
        finally:
            Path(database.removeprefix("sqlite:///")).unlink(missing_ok=True)
        report(figures, "SQLite (smoke run: times mean nothing)")
        return
    from pg import fresh_database

    with fresh_database("evalhub_bench_arena_import") as database:
        figures = measure(args, database, data)
    report(figures, "PostgreSQL")
    print(f"load average at the start {load:.2f}, at the end {load_average():.2f}")
    record("arena_import", label=args.label, load_at_start=round(load, 2), **figures)


if __name__ == "__main__":
    main()
