"""`python manage.py import_abceval --name NAME --slug SLUG CONVERSATIONS BEHAVIOURS
[--likert FILE] [--comparative FILE] [--user USERNAME]`."""

import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation.importers.abceval.study import StudyInvalid, import_abceval


class Command(BaseCommand):
    help = (
        "Import a published ABC-Eval study (conversations, behaviour labels, and optionally "
        "Likert and comparative scores, as JSON lines) as finished campaigns. Every file is "
        "checked first; nothing is stored when any line has a problem. Importing again adds "
        "nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("conversations", help="conversations.jsonl")
        parser.add_argument("behaviours", help="behaviours.jsonl")
        parser.add_argument("--likert", help="likert.jsonl: dialogue-level Likert scores")
        parser.add_argument("--comparative", help="comparative.jsonl: side-by-side scores")
        parser.add_argument("--name", required=True, help="The study's name.")
        parser.add_argument("--slug", required=True, help="The study's slug.")
        parser.add_argument("--user", help="Owner of the study and of new systems.")

    def handle(self, *args, name, slug, user=None, **options):
        owner = None
        if user:
            owner = get_user_model().objects.filter(username=user).first()
            if owner is None:
                raise CommandError(f"No user named {user!r}.")
        started = time.perf_counter()
        files = {
            key: self._read(Path(options[key])) if options.get(key) else None
            for key in ("conversations", "behaviours", "likert", "comparative")
        }
        try:
            result = import_abceval(name=name, slug=slug, user=owner, **files)
        except StudyInvalid as invalid:
            raise CommandError(invalid.refused_import(self.stderr.write)) from None
        seconds = time.perf_counter() - started
        study = result.study
        if result.study_created:
            headline = f"Created the study {study.slug}"
        elif result.judgments or result.conversations_created or result.dialogues_without_text:
            headline = f"Added to the study {study.slug}"
        else:
            headline = f"Nothing new for the study {study.slug}: it holds these files already"
        self.stdout.write(self.style.SUCCESS(f"{headline} ({seconds:.1f} s)."))
        self.stdout.write(
            f"Conversations: {result.conversations_created} created, "
            f"{result.conversations_unchanged} unchanged; dialogues without text: "
            f"{result.dialogues_without_text} created.\n"
            f"Workers: {result.workers} created. Judgments: {result.judgments} created, "
            f"{result.judgments_unchanged} unchanged."
        )
        for slug_, counts in result.campaigns.items():
            self.stdout.write(
                f"  {slug_}: {counts.items} items, {counts.judgments} judgments created, "
                f"{counts.judgments_unchanged} unchanged."
            )
        if result.systems_created:
            self.stdout.write(f"New systems: {', '.join(result.systems_created)}.")

    def _read(self, path: Path) -> tuple[str, bytes]:
        try:
            size = path.stat().st_size
            if size > settings.EVALHUB_MAX_UPLOAD_BYTES:
                raise CommandError(
                    f"{path.name} is {size:,} bytes; the limit (EVALHUB_MAX_UPLOAD_BYTES) is "
                    f"{settings.EVALHUB_MAX_UPLOAD_BYTES:,}."
                )
            return path.name, path.read_bytes()
        except OSError as error:
            raise CommandError(f"Cannot read {path}: {error.strerror}.") from None
