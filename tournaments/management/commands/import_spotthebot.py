"""`python manage.py import_spotthebot --name NAME CONVERSATIONS.jsonl JUDGMENTS.jsonl [--slug SLUG]`."""

import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from tournaments.importers.study import StudyInvalid, import_study


class Command(BaseCommand):
    help = (
        "Import a published Spot The Bot study (conversations and judgments in the "
        "interchange format) as a finished tournament. Both files are checked first; "
        "nothing is stored when any line has a problem. Importing again adds nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("conversations", help="conversations.jsonl")
        parser.add_argument("judgments", help="judgments.jsonl")
        parser.add_argument("--name", required=True, help="The tournament's name.")
        parser.add_argument("--slug", help="The tournament's slug (default: from the name).")
        parser.add_argument("--user", help="Owner of the tournament and of new systems.")
        parser.add_argument("--publish", action="store_true", help="List the tournament publicly.")

    def handle(self, *args, conversations, judgments, name, slug=None, user=None, **options):
        owner = None
        if user:
            owner = get_user_model().objects.filter(username=user).first()
            if owner is None:
                raise CommandError(f"No user named {user!r}.")
        started = time.perf_counter()
        data = {
            key: self._read(Path(path)) for key, path in (("c", conversations), ("j", judgments))
        }
        try:
            result = import_study(
                name=name,
                slug=slug,
                conversations=data["c"],
                conversations_filename=Path(conversations).name,
                judgments=data["j"],
                judgments_filename=Path(judgments).name,
                user=owner,
                published=options["publish"],
            )
        except StudyInvalid as invalid:
            raise CommandError(invalid.refused_import(self.stderr.write)) from None
        seconds = time.perf_counter() - started
        t = result.tournament
        if result.tournament_created:
            headline = f"Created the tournament {t.slug}"
        elif result.judgments or result.conversations_created:
            headline = f"Added to the tournament {t.slug}"
        else:
            headline = f"Nothing new for the tournament {t.slug}: it holds these files already"
        self.stdout.write(self.style.SUCCESS(f"{headline} ({seconds:.1f} s)."))
        self.stdout.write(
            f"Conversations: {result.conversations_created} created, "
            f"{result.conversations_unchanged} unchanged.\n"
            f"Judgments: {result.judgments} created, {result.judgments_unchanged} unchanged.\n"
            f"Batches: {result.batches}, items: {result.items}, workers: {result.workers}, "
            f"assignments: {result.assignments} created."
        )
        if result.systems_created:
            self.stdout.write(f"New systems: {', '.join(result.systems_created)}.")

    def _read(self, path: Path) -> bytes:
        try:
            size = path.stat().st_size
            if size > settings.EVALHUB_MAX_UPLOAD_BYTES:
                raise CommandError(
                    f"{path.name} is {size:,} bytes; the limit (EVALHUB_MAX_UPLOAD_BYTES) is "
                    f"{settings.EVALHUB_MAX_UPLOAD_BYTES:,}."
                )
            return path.read_bytes()
        except OSError as error:
            raise CommandError(f"Cannot read {path}: {error.strerror}.") from None
