"""Production settings, in a subprocess (the test process runs embedded, DEBUG on)."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[2]


def manage(tmp_path, *args, **env):
    # Production-like: nothing the test run set (the browser tests set
    # DJANGO_ALLOW_ASYNC_UNSAFE, which the deploy check rightly refuses).
    dropped = {"DEBUG", "SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE", "ALLOWED_HOSTS"}
    base = {
        k: v for k, v in os.environ.items() if k not in dropped and not k.startswith("EVALHUB_")
    }
    base.update(
        DATABASE_URL=f"sqlite:///{tmp_path / 'fresh.sqlite3'}",
        CELERY_BROKER_URL="",
        **env,
    )
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=base,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_without_debug_and_secret_key_the_server_refuses_to_start(tmp_path):
    result = manage(tmp_path, "check")
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


def test_without_keys_for_stored_secrets_the_server_refuses_to_start(tmp_path):
    result = manage(tmp_path, "check", SECRET_KEY=secrets.token_urlsafe(50))
    assert result.returncode != 0
    assert "EVALHUB_SECRET_KEYS is not set" in result.stderr


def test_deploy_check_is_clean_on_a_fresh_database(tmp_path):
    env = {
        "SECRET_KEY": secrets.token_urlsafe(50),
        "EVALHUB_SECRET_KEYS": Fernet.generate_key().decode(),
        "ALLOWED_HOSTS": "evalhub.example.org",
    }
    migrated = manage(tmp_path, "migrate", "--noinput", "-v0", **env)
    assert migrated.returncode == 0, migrated.stderr
    result = manage(tmp_path, "check", "--deploy", "--fail-level", "WARNING", **env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout
