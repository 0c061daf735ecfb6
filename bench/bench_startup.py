"""Benchmark 8: start-up, the wall time of a whole ``manage.py`` process, process start included.

Two commands, each in a fresh subprocess per run, as a shell, gunicorn or a Celery worker
pays them:

- ``manage.py check``: settings, app loading (models, admin, signals) and the URL checks,
  which import the root URLconf and every view module. Target: median under 1.0 s.
- ``manage.py analyze <domain>`` of the largest real Spot The Bot domain (the one with the
  most judgments in ``/work/shared/data/spot-the-bot``, ``--data``), imported first with
  ``manage.py import_spotthebot`` into a throwaway SQLite database made by this script
  (``DEBUG=1``, media in the same temporary directory). Timed twice over: the first call,
  which computes the run (the stored runs are deleted before each, untimed), and the second,
  which finds the stored run for the same judgments and settings and only writes it out.
  Target: median under 2.0 s for both. The command writes the result contract without
  waiting for the stability curve, a part of the run computed after it
  (``analysis.runs.stability``; ``analyze --wait`` would wait for it): with no broker here
  nothing computes it during the benchmark.

The targets are wall times; the CPU time of each command (user + system, with any process
it forked) is printed beside them, as it moves less than
the wall time when other jobs share the cores.

The reference is the target itself (there is no other implementation of start-up to compare
with); ``--project DIR`` runs the same measurement on another checkout of the project (e.g.
``git worktree add /tmp/startup-base <commit>``) to give the "before" figures, with this
checkout's virtualenv; ``--python`` runs the commands with another interpreter (a
virtualenv with ``requirements.txt`` only is the production image's shape: the dev
virtualenv adds libraries that DRF, drf-spectacular, Django and httpx import when they are
installed, such as markdown, jinja2, requests, colorama and rich). Nothing is asserted equal here: the results of ``analyze`` are
pinned by tests/analysis, this only times it. Without the real data the script says so and
exits with status 2 (a synthetic study would not be the issue's measurement).

    python bench/bench_startup.py [--data DIR] [--repeats 5] [--project DIR] [--python PATH]
                                  [--param NAME=VALUE ...]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness

ROOT = Path(__file__).resolve().parents[1]
DATA = Path("/work/shared/data/spot-the-bot")
CHECK_TARGET_SECONDS = 1.0
ANALYZE_TARGET_SECONDS = 2.0


def largest_domain(data: Path) -> tuple[str, Path, Path] | None:
    """(domain, conversations, judgments) of the domain with the most judgments, or None."""
    domains = []
    for directory in sorted(p for p in data.iterdir() if p.is_dir()) if data.is_dir() else []:
        conversations = directory / "conversations.jsonl"
        judgments = directory / "judgments.jsonl"
        if conversations.is_file() and judgments.is_file():
            with judgments.open("rb") as lines:
                count = sum(1 for _ in lines)
            domains.append((count, directory.name, conversations, judgments))
    if not domains:
        return None
    _, name, conversations, judgments = max(domains)
    return name, conversations, judgments


class Project:
    """``manage.py`` of one checkout, on the temporary database, run as a fresh process."""

    def __init__(self, root: Path, workdir: Path, python: Path):
        self.manage = root / "manage.py"
        self.root = root
        self.python = python
        self.cpu: list[float] = []
        self.environment = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "evalhub.settings",
            "DEBUG": "1",
            "DATABASE_URL": f"sqlite:///{workdir / 'db.sqlite3'}",
            "EVALHUB_MEDIA_ROOT": str(workdir / "media"),
            # Bytecode cached, as a deployed process has it (the image compiles it once),
            # in this run's directory so the checkout stays clean: without it every run
            # compiles the project's modules anew (about 0.25 s here).
            "PYTHONPYCACHEPREFIX": str(workdir / "pycache"),
        }
        self.environment.pop("PYTHONDONTWRITEBYTECODE", None)

    def run(self, *arguments: str) -> float:
        """Run ``manage.py arguments`` and return its wall time in seconds; its CPU time
        (user + system, with the processes it forked) is added to ``self.cpu``."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(
            [str(self.python), str(self.manage), *arguments],
            cwd=self.root,
            env=self.environment,
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            raise SystemExit(f"manage.py {' '.join(arguments)} failed:\n{done.stderr[-3000:]}")
        return seconds

    def forget_runs(self) -> None:
        self.run(
            "shell",
            "-c",
            "from analysis.models import AnalysisRun; AnalysisRun.objects.all().delete()",
        )


def report(name: str, timed: list[tuple[float, float]], target: float) -> dict:
    """Print and return the median wall time of ``timed`` (wall, CPU) runs against ``target``."""
    times = [wall for wall, _ in timed]
    cpu = statistics.median(c for _, c in timed)
    median = statistics.median(times)
    verdict = "met" if median < target else "NOT met"
    print(
        f"{name}: median {median:.2f} s over {len(times)} runs "
        f"(min {min(times):.2f}, max {max(times):.2f}; CPU {cpu:.2f} s); "
        f"{median / target:.2f}x the target < {target:g} s ({verdict})"
    )
    return {
        "median_s": round(median, 3),
        "runs_s": [round(t, 3) for t in times],
        "median_cpu_s": round(cpu, 3),
        "target_s": target,
        "target_met": bool(median < target),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="Spot The Bot data directory")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs of each command")
    parser.add_argument(
        "--project", type=Path, default=ROOT, help="the checkout to measure (default: this one)"
    )
    parser.add_argument(
        "--python",
        type=Path,
        default=Path(sys.executable),
        help="the interpreter that runs manage.py (default: this one, the dev virtualenv); "
        "e.g. one of a virtualenv with requirements.txt only, the production image's shape",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an analysis parameter passed on to `manage.py analyze` (e.g. the stability "
        "curve's former cost: --param stability_subsamples=10 --param stability_precision=0.5)",
    )
    args = parser.parse_args()

    domain = largest_domain(args.data)
    if domain is None:
        print(
            f"No Spot The Bot data in {args.data} (a directory per domain with "
            "conversations.jsonl and judgments.jsonl): pass --data DIR.",
            file=sys.stderr,
        )
        raise SystemExit(2)
    name, conversations, judgments = domain

    load = harness.load_average()
    workdir = Path(tempfile.mkdtemp(prefix="evalhub-bench-startup-"))
    try:
        project = Project(args.project.resolve(), workdir, args.python)
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=project.root,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        print(
            f"load average {load:.2f}; project {project.root} ({commit}); python {args.python}; "
            f"database in {workdir}"
        )
        project.run("migrate", "--verbosity", "0")
        project.run(
            "import_spotthebot",
            str(conversations),
            str(judgments),
            "--name",
            f"Spot The Bot {name}",
            "--slug",
            name,
        )
        output = str(workdir / "report.json")
        analyze = ("analyze", name, "--json", output)
        for param in args.param:
            analyze += ("--param", param)

        project.run("check")  # the first run writes the bytecode caches of a fresh checkout
        check = [(project.run("check"), project.cpu[-1]) for _ in range(args.repeats)]
        computing, stored = [], []
        for _ in range(args.repeats):
            project.forget_runs()
            computing.append((project.run(*analyze), project.cpu[-1]))
            stored.append((project.run(*analyze), project.cpu[-1]))

        print(f"{name}: {sum(1 for _ in judgments.open('rb')):,} judgments")
        figures = {
            "check": report("manage.py check", check, CHECK_TARGET_SECONDS),
            "analyze_first": report(
                f"manage.py analyze {name}, computing", computing, ANALYZE_TARGET_SECONDS
            ),
            "analyze_stored": report(
                f"manage.py analyze {name}, stored run", stored, ANALYZE_TARGET_SECONDS
            ),
        }
        print(f"peak RSS of the commands {harness.peak_children_rss_mb():.0f} MiB")
        harness.record(
            "startup",
            project_commit=commit,
            python=str(args.python),
            domain=name,
            params=args.param,
            children_peak_rss_mb=round(harness.peak_children_rss_mb(), 1),
            **figures,
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
