"""Scaling out: analysis runs completed per second by 1 and by 2 Celery worker processes.

Run: ``.venv/bin/python bench/bench_scale_out.py`` (``--runs``, ``--repeats``; needs
PostgreSQL and Redis: ``EVALHUB_BENCH_PG`` names the PostgreSQL server, ``EVALHUB_BENCH_REDIS``
the broker, default redis://127.0.0.1:6379/9, a database this benchmark empties).

Builds a fresh database holding one simulated Spot The Bot tournament (``demo.leaderboards``'s
builder, a known model judged by simulated workers), then ``--repeats`` times, alternately
with 1 and with 2 real ``celery -A evalhub worker -Q analysis --concurrency=1`` processes
(alternating, so that a change in the machine's load falls on both alike):

1. starts the workers and waits until each says it is ready (start-up is not timed);
2. the first time only, asserts equal results: the run of seed 0, computed by the workers,
   equals the same run computed in this process before any worker started;
3. requests ``--runs`` analysis runs of the tournament through
   ``analysis.runs.tasks.analyze_tournament`` (the path the staff page and the signal take: the
   run row, then the message on the ``analysis`` queue), each with its own bootstrap seed so
   that none is reused and all do the same work, and times until every run has succeeded;
4. stops the workers.

Prints the median throughput (runs per second) of each, their ratio, and appends a JSON line
to bench/results/scale_out.jsonl. Every worker process it started is stopped on the way
out, also when a step fails or the benchmark is interrupted. With 2 cores, 2 workers can
at most double the throughput, and less when other work shares the machine.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from harness import peak_rss_mb, record  # noqa: E402
from pg import fresh_database  # noqa: E402

BROKER = os.environ.get("EVALHUB_BENCH_REDIS", "redis://127.0.0.1:6379/9")
SLUG = "bench-scale-out"
# A moderate tournament: five systems, 8 conversations per pair, bootstraps cut so that one
# run takes seconds, not minutes.
PARAMETERS = {"replicates": 200, "bt_bootstrap": 200, "alpha_resamples": 200}
READY_TIMEOUT = 120
WORKER_STOP_TIMEOUT = 15


def environment(database_url: str, media_root: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "evalhub.settings",
        "DEBUG": "0",
        "SECRET_KEY": "bench-scale-out-not-a-secret-" + "x" * 40,
        "EVALHUB_SECRET_KEYS": "YmVuY2gtb25seS1ub3QtYS1zZWNyZXQtMDEyMzQ1Njc=",  # a Fernet key, not a secret
        "CELERY_BROKER_URL": BROKER,
        "EVALHUB_MEDIA_ROOT": media_root,
        "PYTHONPATH": str(ROOT),
    }


def check_redis() -> None:
    import redis

    try:
        redis.Redis.from_url(BROKER, socket_timeout=3).ping()
    except redis.RedisError as error:
        print(
            f"Redis is unreachable at {BROKER} ({error}); this benchmark needs a real broker. "
            "Start Redis or set EVALHUB_BENCH_REDIS.",
            file=sys.stderr,
        )
        raise SystemExit(2) from None


def empty_broker() -> None:
    import redis

    redis.Redis.from_url(BROKER, socket_timeout=3).flushdb()


class Workers:
    """``n`` worker processes, each in its own process group so that stopping it stops its
    pool child too; stopped by their ids, never by name."""

    def __init__(self, n: int, env: dict[str, str], log_dir: str):
        self.processes: list[subprocess.Popen] = []
        self.logs: list[Path] = []
        self.n, self.env, self.log_dir = n, env, log_dir

    def __enter__(self) -> Workers:
        try:
            self._start()
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        celery = str(Path(sys.executable).with_name("celery"))
        for i in range(self.n):
            log = Path(self.log_dir) / f"worker-{self.n}-{i}.log"
            self.logs.append(log)
            with log.open("w") as out:
                self.processes.append(
                    subprocess.Popen(
                        [
                            celery, "-A", "evalhub", "worker", "-Q", "analysis",
                            "--concurrency=1", "--pool=prefork", "-n", f"bench{i}-{os.getpid()}@%h",
                            "--without-gossip", "--without-mingle", "--loglevel=INFO",
                        ],
                        cwd=ROOT,
                        env=self.env,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                )  # fmt: skip

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            for process, log in zip(self.processes, self.logs, strict=True):
                if process.poll() is not None:
                    raise RuntimeError(
                        f"a worker exited ({process.returncode}):\n{log.read_text()}"
                    )
            if all(" ready." in log.read_text() for log in self.logs):
                return
            time.sleep(0.2)
        raise RuntimeError(f"the workers were not ready within {READY_TIMEOUT} s")

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + WORKER_STOP_TIMEOUT
        for process in self.processes:
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.processes.clear()


def configure_django(env: dict[str, str]) -> None:
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)


def build_tournament():
    from demo.leaderboards import DEMO_HAZARDS, build_spot_the_bot_tournament
    from demo.simulation import SpotTheBotModel

    model = SpotTheBotModel(DEMO_HAZARDS, conversations_per_pair=8, human_conversations=10)
    # Not finished: finishing would queue an analysis before any worker is measured.
    return build_spot_the_bot_tournament(model, SLUG, seed=1, finish=False)


def request_runs(tournament, seeds) -> list[int]:
    from analysis.runs.tasks import analyze_tournament

    return [analyze_tournament(tournament, {**PARAMETERS, "seed": s}).pk for s in seeds]


def wait_for(run_ids: list[int], timeout: float) -> None:
    from analysis.models import AnalysisRun

    deadline = time.monotonic() + timeout
    runs = AnalysisRun.objects.filter(pk__in=run_ids)
    while time.monotonic() < deadline:
        statuses = list(runs.values_list("status", flat=True))
        if AnalysisRun.Status.FAILED in statuses:
            errors = runs.filter(status=AnalysisRun.Status.FAILED).values_list("error", flat=True)
            raise RuntimeError(f"an analysis run failed: {errors[0]}")
        if statuses.count(AnalysisRun.Status.SUCCEEDED) == len(run_ids):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{len(run_ids)} runs did not finish within {timeout:.0f} s")


def check_equal(tournament, n_workers: int, args, reference) -> None:
    """The workers recompute seed 0 (its in-process run removed first) and must agree."""
    from analysis.models import AnalysisRun

    AnalysisRun.objects.filter(tournament=tournament, parameters__seed=0).delete()
    (check,) = request_runs(tournament, [0])
    wait_for([check], args.timeout)
    assert AnalysisRun.objects.get(pk=check).result == reference, (
        f"{n_workers} worker(s) computed a different result for seed 0"
    )


def timed_round(tournament, n_workers: int, args, seeds, repeat: int) -> float:
    batch = [next(seeds) for _ in range(args.runs)]
    started = time.perf_counter()
    run_ids = request_runs(tournament, batch)
    wait_for(run_ids, args.timeout)
    elapsed = time.perf_counter() - started
    print(
        f"  round {repeat + 1}, {n_workers} worker(s): {args.runs} runs in {elapsed:.1f} s "
        f"({args.runs / elapsed:.2f} runs/s); load average {os.getloadavg()[0]:.1f}"
    )
    return elapsed


def throughputs(tournament, args, env, log_dir, reference) -> dict[int, dict]:
    """Rounds alternate between 1 and 2 workers (workers started afresh for each round,
    start-up not timed), so that a change in the machine's load falls on both alike."""
    seeds = iter(range(1, 1_000_000))
    times: dict[int, list[float]] = {1: [], 2: []}
    for repeat in range(args.repeats):
        for n_workers in times:
            with Workers(n_workers, env, log_dir):
                if repeat == 0:
                    check_equal(tournament, n_workers, args, reference)
                times[n_workers].append(timed_round(tournament, n_workers, args, seeds, repeat))
    figures = {}
    for n_workers, rounds in times.items():
        seconds = statistics.median(rounds)
        figures[n_workers] = {
            "workers": n_workers,
            "seconds_per_round": round(seconds, 2),
            "rounds": [round(t, 2) for t in rounds],
            "runs_per_second": round(args.runs / seconds, 3),
        }
    return figures


def run(args, env, log_dir) -> dict:
    from analysis.runs.tasks import analyze_tournament
    from annotation.models import Judgment

    tournament = build_tournament()
    started = time.perf_counter()
    reference = analyze_tournament(tournament, {**PARAMETERS, "seed": 0}, synchronous=True)
    assert reference.status == reference.Status.SUCCEEDED, reference.error
    one_run = time.perf_counter() - started
    judgments = Judgment.objects.filter(item__campaign=tournament.campaign).count()
    print(
        f"Tournament: {tournament.campaign.items.count()} items, {judgments} judgments; "
        f"one run in this process {one_run:.1f} s; {args.runs} runs per round"
    )
    figures = throughputs(tournament, args, env, log_dir, reference.result)
    one, two = figures[1], figures[2]
    ratio = two["runs_per_second"] / one["runs_per_second"]
    load = os.getloadavg()
    print(
        f"analysis throughput: 1 worker {one['runs_per_second']:.2f} runs/s, 2 workers "
        f"{two['runs_per_second']:.2f} runs/s (medians of {args.repeats} rounds of "
        f"{args.runs} runs): {ratio:.2f}x on {os.cpu_count()} cores; load average "
        f"{load[0]:.1f}; peak RSS of this process {peak_rss_mb():.0f} MiB"
    )
    return {
        "runs_per_round": args.runs,
        "one_worker": one,
        "two_workers": two,
        "ratio": round(ratio, 2),
        "single_run_in_process_seconds": round(one_run, 2),
        "parameters": PARAMETERS,
        "load_average_1m": round(load[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=16, help="analysis runs per timed round")
    parser.add_argument("--repeats", type=int, default=3, help="timed rounds per worker count")
    parser.add_argument("--timeout", type=float, default=900, help="seconds a round may take")
    args = parser.parse_args()
    check_redis()
    # SIGTERM ends the benchmark like Ctrl-C, through the finally blocks that stop workers.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with (
        tempfile.TemporaryDirectory() as scratch,
        fresh_database("evalhub_bench_scale_out") as url,
    ):
        env = environment(url, scratch)
        empty_broker()
        try:
            configure_django(env)
            figures = run(args, env, scratch)
        finally:
            empty_broker()
    record("scale_out", **figures)


if __name__ == "__main__":
    main()
