"""Checks for the real services that CI provides; they fail loudly when CI requires them."""

import os

import pytest
from django.conf import settings
from django.db import connection

from evalhub.celery import app as celery_app


def required(name: str) -> bool:
    return os.environ.get(name, "").lower() in {"1", "true", "yes"}


def require_celery_worker() -> None:
    """Skip (laptop) or fail (CI) unless a real broker and a worker process are there."""
    if not settings.CELERY_BROKER_URL:
        message = "needs CELERY_BROKER_URL and a running `celery worker` (.ci/run starts both)"
        if required("EVALHUB_REQUIRE_SERVICES"):
            pytest.fail(f"EVALHUB_REQUIRE_SERVICES is set but this test {message}")
        pytest.skip(message)
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=3)
    except Exception as error:  # kombu raises several kinds; all mean the same here
        pytest.fail(f"The Celery broker {settings.CELERY_BROKER_URL} is unreachable: {error}")
    if connection.vendor == "sqlite" or not required("EVALHUB_USE_EXISTING_DB"):
        pytest.fail(
            "A real Celery worker must share the test database: run with PostgreSQL and "
            "EVALHUB_USE_EXISTING_DB=1, as .ci/run does."
        )
    if not celery_app.control.ping(timeout=5):
        pytest.fail(f"No Celery worker answered a ping on {settings.CELERY_BROKER_URL}.")
