"""Ingest: a 100,000-response submission validated and stored on PostgreSQL.

Run: ``.venv/bin/python bench/bench_ingest.py`` (``--rows``, ``--repeats``; needs PostgreSQL,
``EVALHUB_BENCH_PG`` names the server, default postgres@127.0.0.1:5432).

Creates a fresh database, migrates it, builds prompt sets of 1k, 10k and 100k prompts and a
JSON lines file answering each (the documented upload format, docs/examples/responses.jsonl;
shuffled, one response in a thousand empty so that warnings are stored too), then:

1. counts the SQL statements of ``evalhub.services.submit_responses`` (the service the system
   page and ``POST /api/systems/<slug>/submissions/`` call) at 1k, 10k and 100k rows and
   asserts the count is the same at every size;
2. stores the 100k file once through the service and once row by row (the same validation,
   then ``Response.objects.create`` per row inside one transaction) and asserts both stored
   the same rows and warnings;
3. times both, interleaved so that the machine's load falls on both alike: the median of
   ``--repeats`` runs each (the row-by-row baseline at most 3 runs, it is slow), each run on
   an emptied table, and says whether the service's median is under the 3 s target (a
   verdict, not a failure: on a shared machine the database's share of the cores decides).

The file is kept and the metrics task queued after the commit, as in production; the
broker is Celery's in-memory transport, so queueing is one message and no worker runs.
Prints the medians, their ratio, the query counts and peak RSS, and appends a JSON line to
bench/results/ingest.jsonl.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from harness import peak_rss_mb, record  # noqa: E402
from pg import fresh_database  # noqa: E402

TARGET_SECONDS = 3.0
TARGET_ROWS = 100_000
SIZES = (1_000, 10_000, 100_000)
SENTENCE = (
    "i am fine thanks and you what do you like to do in your free time that sounds lovely "
    "watercolours are nice start with cheap paper do you want to talk about it sorry"
)
WORDS = SENTENCE.split(" ")


def configure_django(database_url: str, media_root: str) -> None:
    os.environ.update(
        DATABASE_URL=database_url,
        DJANGO_SETTINGS_MODULE="evalhub.settings",
        DEBUG="0",
        SECRET_KEY="bench-ingest-not-a-secret-" + "x" * 40,
        EVALHUB_SECRET_KEYS="YmVuY2gtb25seS1ub3QtYS1zZWNyZXQtMDEyMzQ1Njc=",  # a Fernet key, not a secret
        # Messages stay in this process: queueing costs what sending one message costs.
        CELERY_BROKER_URL="memory://localhost/",
        EVALHUB_MEDIA_ROOT=media_root,
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)


def build_prompt_set(n: int):
    from evalhub.models import Prompt, PromptSet

    prompt_set = PromptSet.objects.create(slug=f"bench-{n}", name=f"Bench {n}")
    Prompt.objects.bulk_create(
        (
            Prompt(
                prompt_set=prompt_set,
                position=i,
                external_id=f"q{i}",
                context=[f"prompt number {i} ?"],
            )
            for i in range(1, n + 1)
        ),
        batch_size=5_000,
    )
    return prompt_set


def response_file(n: int, seed: int = 0) -> bytes:
    rng = random.Random(seed)
    order = list(range(1, n + 1))
    rng.shuffle(order)
    lines = []
    for i in order:
        text = "" if i % 1000 == 0 else " ".join(rng.choices(WORDS, k=rng.randint(4, 16)))
        lines.append(json.dumps({"prompt": f"q{i}", "response": text}))
    return ("\n".join(lines) + "\n").encode()


def ingest(system, prompt_set, data: bytes):
    from evalhub.services import submit_responses

    return submit_responses(
        system=system, prompt_set=prompt_set, data=data, filename="responses.jsonl"
    )


def row_by_row(system, prompt_set, data: bytes):
    """The baseline: the service's validation, then one INSERT per response."""
    from django.conf import settings
    from django.db import transaction

    from evalhub.importers.responses import PromptRef, parse_responses
    from evalhub.models import Response, Submission
    from evalhub.services import queue_metrics, store_file

    prompts = list(
        prompt_set.prompts.order_by("position").values_list("id", "position", "external_id")
    )
    refs = [PromptRef(position, external_id) for _, position, external_id in prompts]
    parsed = parse_responses(data, None, "responses.jsonl", refs, settings.EVALHUB_MAX_UPLOAD_BYTES)
    prompt_ids = {position: pk for pk, position, _ in prompts}
    with transaction.atomic():
        submission = Submission.objects.create(
            system=system,
            prompt_set=prompt_set,
            status=Submission.Status.VALIDATED,
            format="jsonl",
            original_filename="responses.jsonl",
            warnings=[warning.as_dict() for warning in parsed.warnings],
        )
        for position, text in parsed.texts.items():
            Response.objects.create(
                submission=submission, prompt_id=prompt_ids[position], text=text
            )

        def after_commit():
            store_file(submission, "responses.jsonl", data)
            queue_metrics(submission.pk)

        transaction.on_commit(after_commit)
    return submission


def stored(submission) -> tuple[list, list]:
    rows = sorted(submission.responses.values_list("prompt_id", "text"))
    return rows, submission.warnings


def discard(submission) -> None:
    """Remove a run's rows and file, vacuum, and write the dirty pages out, so that every
    run meets the same table and no run pays for the previous one's writes (the row-by-row
    baseline leaves far more WAL behind than the service)."""
    from django.db import DatabaseError, connection

    from evalhub.models import Response

    if submission.file:
        submission.file.delete(save=False)
    submission.delete()
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {Response._meta.db_table}")
        # CHECKPOINT needs a superuser (or pg_checkpoint); without, runs share the writes.
        with contextlib.suppress(DatabaseError):
            cursor.execute("CHECKPOINT")


def count_queries(fn) -> int:
    """SQL statements ``fn`` sends (counted by an execute wrapper: CaptureQueriesContext keeps
    only the last 9,000, fewer than the baseline sends)."""
    from django.db import connection

    count = 0

    def counting(execute, sql, params, many, context):
        nonlocal count
        count += 1
        return execute(sql, params, many, context)

    with connection.execute_wrapper(counting):
        submission = fn()
    discard(submission)
    return count


def timed(fn) -> tuple[float, float]:
    """(wall seconds, this process's CPU seconds) of one run: the CPU time is what the
    Python side costs whatever else the machine is doing; the rest is waiting for the
    database (itself sharing the cores)."""
    started, cpu = time.perf_counter(), time.process_time()
    submission = fn()
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    discard(submission)
    return elapsed, cpu


def run(args) -> dict:
    from django.db import connection

    from evalhub.models import System

    system = System.objects.create(slug="bench-system", name="Bench system")
    sizes = sorted({*SIZES, args.rows})
    prompt_sets = {n: build_prompt_set(n) for n in sizes}
    files = {n: response_file(n) for n in sizes}
    big_set, big_file = prompt_sets[args.rows], files[args.rows]
    print(
        f"PostgreSQL {connection.pg_version // 10000}; {args.rows:,} responses, "
        f"{len(big_file) / 1e6:.1f} MB of JSON lines; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )

    queries = {
        n: count_queries(lambda n=n: ingest(system, prompt_sets[n], files[n])) for n in sizes
    }
    print(
        "SQL statements per upload (service):", ", ".join(f"{n:,}: {q}" for n, q in queries.items())
    )
    assert len(set(queries.values())) == 1, f"the query count grows with the file: {queries}"
    baseline_queries = {
        n: count_queries(lambda n=n: row_by_row(system, prompt_sets[n], files[n]))
        for n in sizes
        if n <= 10_000
    }
    print(
        "SQL statements per upload (row by row):",
        ", ".join(f"{n:,}: {q}" for n, q in baseline_queries.items()),
    )

    # Equal results before any timing.
    ours = ingest(system, big_set, big_file)
    theirs = row_by_row(system, big_set, big_file)
    assert stored(ours) == stored(theirs), "the service and the baseline stored different rows"
    assert len(stored(ours)[0]) == args.rows
    discard(ours)
    discard(theirs)

    service_runs, baseline_runs = [], []
    for i in range(args.repeats):
        service_runs.append(timed(lambda: ingest(system, big_set, big_file)))
        line = f"  run {i + 1}: service {service_runs[-1][0]:.2f} s"
        if i < args.baseline_repeats:
            baseline_runs.append(timed(lambda: row_by_row(system, big_set, big_file)))
            line += f", row by row {baseline_runs[-1][0]:.2f} s"
        print(line + f"; load average {os.getloadavg()[0]:.1f}")
    service = statistics.median(wall for wall, _ in service_runs)
    service_cpu = statistics.median(cpu for _, cpu in service_runs)
    baseline = statistics.median(wall for wall, _ in baseline_runs)
    baseline_cpu = statistics.median(cpu for _, cpu in baseline_runs)
    load = os.getloadavg()
    # The target is the issue's: 100,000 responses under 3 s.
    meets_target = service < TARGET_SECONDS if args.rows == TARGET_ROWS else None
    print(
        f"ingest of {args.rows:,} responses: service {service:.2f} s (median of "
        f"{len(service_runs)}; {service_cpu:.2f} s CPU in this process), row by row "
        f"{baseline:.2f} s (median of {len(baseline_runs)}; {baseline_cpu:.2f} s CPU), "
        f"{baseline / service:.1f}x faster; peak RSS {peak_rss_mb():.0f} MiB; load average "
        f"{load[0]:.2f} on {os.cpu_count()} cores"
    )
    verdict = {
        True: "met",
        False: "NOT met (see the load average: the database shares the cores)",
        None: f"applies to {TARGET_ROWS:,} rows",
    }[meets_target]
    print(f"target < {TARGET_SECONDS:.0f} s for {TARGET_ROWS:,} responses: {verdict}")
    return {
        "rows": args.rows,
        "file_mb": round(len(big_file) / 1e6, 2),
        "service_seconds": round(service, 3),
        "service_cpu_seconds": round(service_cpu, 3),
        "service_runs": [round(wall, 3) for wall, _ in service_runs],
        "row_by_row_seconds": round(baseline, 3),
        "row_by_row_cpu_seconds": round(baseline_cpu, 3),
        "row_by_row_runs": [round(wall, 3) for wall, _ in baseline_runs],
        "speedup": round(baseline / service, 1),
        "queries_by_rows": {str(n): q for n, q in queries.items()},
        "row_by_row_queries_by_rows": {str(n): q for n, q in baseline_queries.items()},
        "target_seconds": TARGET_SECONDS,
        "meets_target": meets_target,
        "database": f"PostgreSQL {connection.pg_version // 10000}",
        "load_average_1m": round(load[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline-repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as media, fresh_database("evalhub_bench_ingest") as url:
        configure_django(url, media)
        figures = run(args)
    record("ingest", **figures)


if __name__ == "__main__":
    main()
