"""Settings come from the environment: embedded with DEBUG=1 (what `make run` sets),
production shape otherwise; without DEBUG a SECRET_KEY is required."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json
from django.conf import settings
print(json.dumps({
    "engine": settings.DATABASES["default"]["ENGINE"],
    "name": str(settings.DATABASES["default"]["NAME"]),
    "eager": settings.CELERY_TASK_ALWAYS_EAGER,
    "broker": settings.CELERY_BROKER_URL,
    "debug": settings.DEBUG,
    "secret": settings.SECRET_KEY,
    "secret_keys": settings.EVALHUB_SECRET_KEYS,
    "hosts": settings.ALLOWED_HOSTS,
    "secure_cookies": getattr(settings, "SESSION_COOKIE_SECURE", False) and getattr(settings, "CSRF_COOKIE_SECURE", False),
    "hsts": getattr(settings, "SECURE_HSTS_SECONDS", 0),
    "ssl_redirect": getattr(settings, "SECURE_SSL_REDIRECT", False),
    "max_upload": settings.EVALHUB_MAX_UPLOAD_BYTES,
    "conn_health_checks": settings.DATABASES["default"]["CONN_HEALTH_CHECKS"],
}))
"""

SWITCHES = ("DATABASE_URL", "CELERY_BROKER_URL", "SECRET_KEY", "ALLOWED_HOSTS", "DEBUG")
FERNET_KEY = "YmVuY2gtb25seS1ub3QtYS1zZWNyZXQtMDEyMzQ1Njc="  # not a secret


def settings_with(**env):
    clean = {
        k: v for k, v in os.environ.items() if k not in SWITCHES and not k.startswith("EVALHUB_")
    }
    clean.update(DJANGO_SETTINGS_MODULE="evalhub.settings", **env)
    out = subprocess.run(
        [sys.executable, "-c", "import django; django.setup();" + PROBE],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_embedded_with_debug():
    s = settings_with(DEBUG="1")
    assert s["engine"] == "django.db.backends.sqlite3" and s["name"].endswith("db.sqlite3")
    assert s["eager"] is True and s["broker"] == ""
    assert s["debug"] is True
    assert len(s["secret"]) >= 50
    assert s["max_upload"] == 20 * 1024 * 1024
    assert (
        settings_with(DEBUG="1")["secret"] == s["secret"]
    )  # generated once, then kept in .secret_key


def test_production_shape():
    s = settings_with(
        DATABASE_URL="postgres://u:p@db.example:5432/evalhub",
        CELERY_BROKER_URL="redis://cache.example:6379/0",
        SECRET_KEY="x" * 60,
        EVALHUB_SECRET_KEYS=FERNET_KEY,
        ALLOWED_HOSTS="evalhub.example,www.evalhub.example",
        DEBUG="0",
    )
    assert s["engine"] == "django.db.backends.postgresql" and s["name"] == "evalhub"
    assert s["eager"] is False and s["broker"] == "redis://cache.example:6379/0"
    assert s["debug"] is False
    assert s["secret"] == "x" * 60
    assert s["secret_keys"] == [FERNET_KEY]
    assert s["hosts"] == ["evalhub.example", "www.evalhub.example"]
    assert s["secure_cookies"] is True and s["hsts"] >= 31536000 and s["ssl_redirect"] is True
    # A persistent connection is checked before reuse: a database restart fails no request.
    assert s["conn_health_checks"] is True


def test_upload_limit_is_configurable():
    assert settings_with(DEBUG="1", EVALHUB_MAX_UPLOAD_BYTES="1000")["max_upload"] == 1000


def test_debug_is_off_unless_set():
    assert settings_with(SECRET_KEY="x" * 60, EVALHUB_SECRET_KEYS=FERNET_KEY)["debug"] is False


def test_debug_without_keys_derives_a_fernet_key_from_the_secret_key():
    from cryptography.fernet import Fernet

    first = settings_with(DEBUG="1", SECRET_KEY="a" * 60)["secret_keys"]
    assert first == settings_with(DEBUG="1", SECRET_KEY="a" * 60)["secret_keys"]  # stable
    assert first != settings_with(DEBUG="1", SECRET_KEY="b" * 60)["secret_keys"]
    (key,) = first
    assert Fernet(key).decrypt(Fernet(key).encrypt(b"sk")) == b"sk"
