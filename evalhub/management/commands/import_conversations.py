"""`python manage.py import_conversations FILE.jsonl [--user USERNAME] [--source SOURCE]`;
FILE.parquet, or `--columns` with a .jsonl, reads the Hugging Face layout."""

import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from evalhub.importers.problems import InvalidUpload, check_size
from evalhub.models import Conversation
from evalhub.services import import_conversations


class Command(BaseCommand):
    help = (
        "Import conversations in the interchange format (JSON lines). The whole file is "
        "checked first; nothing is stored when any line has a problem."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "file", help="A .jsonl file, one conversation per line, or a .parquet file."
        )
        parser.add_argument("--user", help="Owner of the systems the file introduces.")
        parser.add_argument(
            "--source",
            choices=Conversation.Source.values,
            help="Source of lines that name none (default: imported, or human-human).",
        )
        parser.add_argument(
            "--columns",
            help="The Hugging Face layout's column mapping, e.g. 'id=conversation_id, "
            "messages=conversation' (docs/hf-datasets.md).",
        )

    def handle(self, *args, file, user=None, source=None, columns=None, **options):
        path = Path(file)
        owner = None
        if user:
            owner = get_user_model().objects.filter(username=user).first()
            if owner is None:
                raise CommandError(f"No user named {user!r}.")
        started = time.perf_counter()
        try:
            # Refuse an oversized file before reading it into memory.
            check_size(path.stat().st_size, settings.EVALHUB_MAX_UPLOAD_BYTES)
            result = import_conversations(
                data=path.read_bytes(),
                filename=path.name,
                user=owner,
                source=source,
                columns=columns,
            )
        except OSError as error:
            raise CommandError(f"Cannot read {path}: {error.strerror}.") from None
        except InvalidUpload as invalid:
            summary = invalid.refused_import(self.stderr.write, prefix=f"{path.name}: ")
            raise CommandError(summary) from None
        seconds = time.perf_counter() - started
        self.stdout.write(
            self.style.SUCCESS(
                f"{result.created} conversations created, {result.unchanged} unchanged "
                f"({seconds:.1f} s)."
            )
        )
        if result.systems_created:
            self.stdout.write(f"New systems: {', '.join(result.systems_created)}.")
