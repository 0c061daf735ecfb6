"""CI must fail loudly, never skip, when a service it requires is missing."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_integration(**env):
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "CELERY_BROKER_URL"} and not k.startswith("EVALHUB_")
    }
    clean.update(env)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/evalhub/test_integration.py",
        ],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_unreachable_broker_fails_with_a_clear_message(tmp_path):
    result = run_integration(
        CELERY_BROKER_URL="redis://127.0.0.1:1/0",
        EVALHUB_REQUIRE_SERVICES="1",
        EVALHUB_USE_EXISTING_DB="1",
        DATABASE_URL=f"sqlite:///{tmp_path / 'guard.sqlite3'}",
    )
    assert result.returncode != 0
    assert "The Celery broker redis://127.0.0.1:1/0 is unreachable" in result.stdout


def test_missing_broker_skips_with_a_reason_on_a_laptop():
    result = run_integration()
    assert result.returncode == 0
    assert "needs CELERY_BROKER_URL and a running `celery worker`" in result.stdout
    assert "1 skipped" in result.stdout


def test_missing_broker_fails_when_ci_requires_it():
    result = run_integration(EVALHUB_REQUIRE_SERVICES="1")
    assert result.returncode != 0
    assert "EVALHUB_REQUIRE_SERVICES is set but this test needs CELERY_BROKER_URL" in result.stdout


def run_with_no_redis_server(**env):
    """The private-Redis test, on a machine where no redis-server is on the PATH."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "PATH"} and not k.startswith("EVALHUB_")
    }
    clean.update(PATH=str(ROOT / "no-such-directory"), **env)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "tests/evalhub/test_ratelimit.py::test_a_limit_counts_per_key_in_redis",
        ],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_missing_redis_server_skips_with_a_reason_on_a_laptop():
    result = run_with_no_redis_server()
    assert result.returncode == 0
    assert "needs redis-server" in result.stdout and "1 skipped" in result.stdout


def test_missing_redis_server_fails_when_ci_requires_it():
    result = run_with_no_redis_server(EVALHUB_REQUIRE_SERVICES="1")
    assert result.returncode != 0
    assert "EVALHUB_REQUIRE_SERVICES is set but this test needs redis-server" in result.stdout
