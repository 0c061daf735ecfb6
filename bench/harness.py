"""What every benchmark shares: medians of repeated runs, peak memory, and one JSON line per
run appended to ``bench/results/<benchmark>.jsonl`` so that figures can be compared over time.

A benchmark script imports this module (``sys.path`` already holds ``bench/`` when a script in
it runs), asserts that its code and the reference agree, then times both with ``median_time``
and calls ``record``.
"""

import json
import os
import platform
import resource
import statistics
import subprocess
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"

# Every benchmark times batches of small matrix problems (130 x 130 solves, 10 x 10 updates).
# OpenBLAS's threads only add start-up and contention cost to those, badly so when other
# processes share the cores; a Celery worker should run with one BLAS thread for the same
# reason. Set before any script imports numpy (scripts import this module first).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")


def load_average() -> float:
    """The 1-minute load average when the run started: timings on a shared machine are noisy."""
    return os.getloadavg()[0]


def median_time(fn: Callable[[], object], repeats: int = 5, warmup: int = 1) -> float:
    """The median wall time of ``fn()`` in seconds over ``repeats`` runs after ``warmup``."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def peak_rss_mb() -> float:
    """This process's peak resident set size so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def peak_children_rss_mb() -> float:
    """The largest peak resident set size of this process's finished children, in MiB."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def machine() -> dict:
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "processor": _cpu_model(),
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=RESULTS.parent,
            check=False,
        )
        return out.stdout.strip()
    except OSError:
        return ""


def record(benchmark: str, **figures) -> dict:
    """Append one JSON line of ``figures`` (plus time, commit, machine, peak RSS) and return it."""
    line = {
        "benchmark": benchmark,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": _commit(),
        "machine": machine(),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "load_average": round(load_average(), 2),
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        **figures,
    }
    RESULTS.mkdir(exist_ok=True)
    with (RESULTS / f"{benchmark}.jsonl").open("a") as out:
        out.write(json.dumps(line) + "\n")
    return line
