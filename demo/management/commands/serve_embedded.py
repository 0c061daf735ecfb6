"""`make run`'s server: Django's development server, a real Celery worker (with beat) beside
it on the filesystem broker, and the demo's chatbot (demo/responder.py), so that background
work (collection, judges, analyses, plots) runs in the background as it does in production
instead of inside the click.

This process starts the three and waits: the server's autoreloader restarts only the
server on a code change, and the others stop with it.
"""

import signal
import subprocess
import sys
from pathlib import Path

from django.conf import settings
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
        # Three processes, this one their supervisor: the development server (with its own
        # autoreloader, which restarts only itself on a code change), the worker and the demo
        # bot. When the server stops, or this process is told to, the other two stop too.
        server = [sys.executable, str(settings.BASE_DIR / "manage.py"), "runserver", addrport]
        bot = [sys.executable, "-m", "demo.responder"]
        worker = worker_command(settings.EVALHUB_EMBEDDED_BROKER_DIR)
        processes = [subprocess.Popen(command) for command in (worker, bot)]
        self.stdout.write(
            f"Background worker (pid {processes[0].pid}) and demo bot "
            f"(127.0.0.1:{DEFAULT_PORT}) started."
        )
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
        try:
            processes.insert(0, subprocess.Popen(server))
            processes[0].wait()
        except KeyboardInterrupt:
            pass
        finally:
            for process in processes:
                # The worker's warm shutdown: its running tasks finish.
                process.send_signal(signal.SIGTERM)
            for process in processes:
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
