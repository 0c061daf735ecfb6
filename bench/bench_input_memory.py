"""Memory of the analysis inputs (issue #15): an A/B study of ``--rows`` judgments as
``ABData``, built as ``analysis.inputs.judgments`` builds it from the database.

The rows come from JSON text, one payload and one item meta per judgment, so that every
slug and choice is its own ``str`` object and every id its own ``int``, as the database
driver hands them over; the columns are then passed as tuples (as the loader did before
the inputs became arrays; the dataclass now turns them into arrays). Measured, with
``tracemalloc``:

* ``retained_mb``: what the inputs hold once the rows are gone (the dataclass alone);
* ``peak_mb``: the most allocated at once while building them;
* ``objects``: distinct Python objects reachable from the dataclass's fields;
* ``digest_s``: the time of ``canonical_digest`` of the inputs.

With ``--report``, also the A/B report on the inputs (few bootstrap replicates, so that
the per-row work dominates), in a fresh process that unpickles the inputs first (so that
building them does not set the peak): its time, the RSS once the inputs are loaded and the
process's peak RSS.

    python bench/bench_input_memory.py [--rows 1600000] [--systems 20] [--report]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import fields
from pathlib import Path

import harness  # noqa: F401, I001  (sets BLAS threads before numpy loads)
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# The reports import the project's settings (through its Celery app), nothing more.
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")

from analysis.reports import build_report, canonical_digest  # noqa: E402
from analysis.reports.data import ABData  # noqa: E402


def loaded_columns(n_rows: int, n_systems: int, seed: int = 0) -> dict[str, tuple]:
    """The loader's columns of ``n_rows`` judgments, values decoded from JSON one by one."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_systems, n_rows)
    b = (a + rng.integers(1, n_systems, n_rows)) % n_systems
    choices = rng.choice(["a", "b", "tie"], n_rows, p=[0.45, 0.45, 0.1]).tolist()
    automatic = rng.random(n_rows) < 0.02
    item, worker, system_a, system_b, choice = [], [], [], [], []
    for row in range(n_rows):
        meta = json.loads(
            f'{{"system_a": "system-{a[row]:03d}", "system_b": "system-{b[row]:03d}"}}'
        )
        payload = json.loads(f'{{"choice": "{"tie" if automatic[row] else choices[row]}"}}')
        item.append(int(f"{1_000_000 + row // 3}"))
        worker.append(-1 if automatic[row] else int(f"{1000 + row % 997}"))
        system_a.append(meta["system_a"])
        system_b.append(meta["system_b"])
        choice.append(payload["choice"])
    return {
        "item": tuple(item),
        "worker": tuple(worker),
        "system_a": tuple(system_a),
        "system_b": tuple(system_b),
        "choice": tuple(choice),
        "automatic": tuple(bool(flag) for flag in automatic),
    }


def reachable_objects(data) -> int:
    """Distinct Python objects the dataclass's fields reach (an array is one object, plus
    its elements when they are Python objects)."""
    seen: set[int] = set()
    stack = [getattr(data, field.name) for field in fields(data)]
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, tuple | list):
            stack.extend(value)
        elif isinstance(value, np.ndarray) and value.dtype == object:
            stack.extend(value.tolist())
    return len(seen)


def measure_inputs(n_rows: int, n_systems: int) -> tuple[ABData, dict]:
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    columns = loaded_columns(n_rows, n_systems)
    data = ABData(subject="memory", automatic_weight=3, **columns)
    del columns
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    started = time.perf_counter()
    digest = canonical_digest(data)
    figures = {
        "rows": n_rows,
        "retained_mb": round((current - base) / 2**20, 1),
        "peak_mb": round((peak - base) / 2**20, 1),
        "objects": reachable_objects(data),
        "digest_s": round(time.perf_counter() - started, 2),
        "digest": digest,
    }
    return data, figures


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def analyse_pickle(path: str) -> dict:
    """In this (fresh) process: unpickle the inputs, then run the report on them."""
    with open(path, "rb") as file:
        data = pickle.load(file)
    loaded = rss_mb()
    params = {"replicates": 5, "bt_bootstrap": 5, "alpha_resamples": 5}
    started = time.perf_counter()
    result = build_report(data, params)
    return {
        "report_s": round(time.perf_counter() - started, 1),
        "rss_with_inputs_mb": round(loaded, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "result_digest": canonical_digest(result),
    }


def measure_report(data: ABData) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".pickle") as file:
        pickle.dump(data, file, protocol=pickle.HIGHEST_PROTOCOL)
        file.flush()
        command = [sys.executable, __file__, "--analyse-pickle", file.name]
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_600_000)
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--report", action="store_true")
    parser.add_argument("--analyse-pickle", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.analyse_pickle:
        print(json.dumps(analyse_pickle(args.analyse_pickle)))
        return
    data, figures = measure_inputs(args.rows, args.systems)
    if args.report:
        figures |= measure_report(data)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
