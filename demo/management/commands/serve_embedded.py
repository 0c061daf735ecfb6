"""`make run`'s server: Django's development server, a real Celery worker (with beat) beside
it on the filesystem broker, and the demo's chatbot (demo/responder.py), so that background work (collection, judges, analyses,
plots) runs in the background as it does in production instead of inside the click.

The worker is started once, by the outer process: the development server's autoreloader
runs the server in a child (RUN_MAIN=true) that it restarts on every code change, and the
worker must not be started again each time. The worker stops with the server.
"""

import os
import signal
import subprocess
import sys
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from demo.responder import DEFAULT_PORT

QUEUES = "collection,analysis,celery"


def worker_command(broker_dir: str) -> list[str]:
    # The filesystem transport has no broadcast: no gossip, mingle or remote control.
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "evalhub",
        "worker",
        "--beat",
        f"--schedule={Path(broker_dir) / 'beat-schedule'}",
        f"--queues={QUEUES}",
        "--concurrency=4",
        "--loglevel=WARNING",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]


class Command(BaseCommand):
    help = (
        "Serve EvalHub for `make run`: the development server and a Celery worker with beat "
        "on the filesystem broker (CELERY_BROKER_URL=filesystem://)."
    )

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")

    def handle(self, *args, addrport, **options):
        if not settings.CELERY_BROKER_URL.startswith("filesystem://"):
            raise CommandError(
                "serve_embedded runs its worker on the filesystem broker: set "
                "CELERY_BROKER_URL=filesystem:// (make run does)."
            )
        helpers = []
        if os.environ.get("RUN_MAIN") != "true":
            helpers.append(subprocess.Popen(worker_command(settings.EVALHUB_EMBEDDED_BROKER_DIR)))
            # The demo's chatbot (demo/responder.py), which the demo chat campaign talks to.
            helpers.append(subprocess.Popen([sys.executable, "-m", "demo.responder"]))
            self.stdout.write(
                f"Background worker (pid {helpers[0].pid}) and demo bot "
                f"(127.0.0.1:{DEFAULT_PORT}) started."
            )
        # A SIGTERM (a supervisor, `kill`) ends the server through the finally below, so
        # the worker does not outlive it.
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
        try:
            call_command("runserver", addrport)
        finally:
            for helper in helpers:
                helper.send_signal(signal.SIGTERM)  # the worker's warm shutdown: tasks finish
            for helper in helpers:
                try:
                    helper.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    helper.kill()
