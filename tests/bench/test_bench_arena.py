"""The arena's benchmarks run (bench/bench_arena_streams.py, bench/bench_arena_import.py):
each in its smoke mode, tiny sizes on SQLite, checks what it measures and prints its
figures. Their times mean nothing here; the benchmarks themselves are run by hand
(`make bench`), never timed in a test."""

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def smoke(script: str, *arguments: str) -> str:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--smoke", *arguments],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_streams_benchmark_relays_every_token_and_counts_the_votes():
    out = smoke("bench_arena_streams.py")
    assert re.search(r"^ASGI \(uvicorn, 2 workers\): 8/8 streams whole", out, re.M), out
    assert re.search(r"^threads \(gunicorn 3 x 8\): 8/8 streams whole", out, re.M), out
    assert "stored: 8 answers whole of 8, 4 votes of 4 battles" in out, out
    assert re.search(r"model chunk -> browser event: p50 [\d.]+ / p95 [\d.]+", out), out


def test_the_import_benchmark_compares_both_imports_and_reimports_nothing(tmp_path):
    out = smoke("bench_arena_import.py", "--data-dir", str(tmp_path))
    assert "equal: 200 lines stored alike by both imports" in out, out
    assert re.search(r"import_battles, 3,000 lines on SQLite .*: [\d.]+ s", out), out
    assert "the same file again (nothing new)" in out, out
    assert not list(tmp_path.glob("*.sqlite3"))  # the smoke database is removed
