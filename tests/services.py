"""Checks for the real services that CI provides; they fail loudly when CI requires them."""

import os
import shutil
import signal
import socket
import subprocess
import time

import pytest
import redis
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


class PrivateRedis:
    """A redis-server of the test's own on a free port, keeping nothing on disk, that a test
    may stop and start again: the shared Redis at 6379 (CI's broker) is never touched."""

    def __init__(self, executable: str, tmp_path):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.executable = executable
        self.directory = tmp_path
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.executable,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--dir",
                str(self.directory),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                return
            except redis.ConnectionError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    pytest.fail(f"A private redis-server did not start on port {self.port}.")
                time.sleep(0.05)

    def pause(self) -> None:
        """Hang it (SIGSTOP): connections are accepted and never answered, as in a partition."""
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # a paused one would not hear TERM
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None


def private_redis_server(tmp_path) -> PrivateRedis:
    """A started PrivateRedis; skip (laptop) or fail (CI) without redis-server."""
    executable = shutil.which("redis-server")
    if executable is None:
        message = "needs redis-server (Debian's redis-server package) to start a private Redis"
        if required("EVALHUB_REQUIRE_SERVICES"):
            pytest.fail(f"EVALHUB_REQUIRE_SERVICES is set but this test {message}")
        pytest.skip(message)
    server = PrivateRedis(executable, tmp_path)
    server.start()
    return server
