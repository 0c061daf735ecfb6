"""`make run`'s server (demo/management/commands/serve_embedded.py): a real Celery worker
beside the development server on the filesystem broker, so background work runs in the
background; and the Makefile's PORT."""

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from demo.management.commands.serve_embedded import QUEUES, worker_command
from evalhub.celery import app

ROOT = Path(__file__).resolve().parents[2]

SUBMIT = """
from django.contrib.auth.models import User
from evalhub.models import System
from evalhub.services import create_prompt_set, submit_responses
owner = User.objects.create_user("owner")
prompts = create_prompt_set(slug="p", name="P", data=b"hello ?\\nhow are you ?\\n", filename="p.txt", user=owner)
system = System.objects.create(slug="bot", name="Bot", owner=owner)
submit_responses(system=system, prompt_set=prompts, data=b"hi\\nfine\\n", filename="r.txt", user=owner)
"""


def test_the_worker_consumes_every_queue_a_task_is_routed_to():
    routed = {route["queue"] for route in app.conf.task_routes.values()}

    assert routed | {"celery"} == set(QUEUES.split(","))


def test_the_server_refuses_to_start_without_the_filesystem_broker(settings):
    settings.CELERY_BROKER_URL = ""

    with pytest.raises(CommandError, match="CELERY_BROKER_URL=filesystem://"):
        call_command("serve_embedded", "127.0.0.1:0")


def test_make_run_serves_on_the_port_it_is_given():
    dry = subprocess.run(
        ["make", "-n", "run", "PORT=8123"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout

    assert "manage.py serve_embedded 127.0.0.1:8123" in dry


def _status(db: Path) -> str:
    with sqlite3.connect(db) as connection:
        return connection.execute("select status from evalhub_submission").fetchone()[0]


def test_a_queued_task_waits_for_the_worker_and_the_worker_runs_it(tmp_path):
    db = tmp_path / "db.sqlite3"
    env = {
        **os.environ,
        "DEBUG": "1",
        "DATABASE_URL": f"sqlite:///{db}",
        "CELERY_BROKER_URL": "filesystem://",
        "EVALHUB_EMBEDDED_BROKER_DIR": str(tmp_path / "broker"),
        "EVALHUB_MEDIA_ROOT": str(tmp_path / "media"),
    }
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run([*manage, "shell", "-c", SUBMIT], cwd=ROOT, env=env, check=True)
    # Queued, not run inside the upload as the eager mode would.
    assert _status(db) == "validated"
    assert list((tmp_path / "broker").glob("*.msg"))

    worker = subprocess.Popen(
        worker_command(str(tmp_path / "broker")),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 90
        while _status(db) == "validated" and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        worker.terminate()
        worker.wait(timeout=30)

    assert _status(db) == "scored"
