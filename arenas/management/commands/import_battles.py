"""`python manage.py import_battles ARENA FILE.jsonl [--create] [--user NAME]`."""

import time

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from arenas.interchange.writing import import_battles
from arenas.models import Arena
from evalhub.importers.problems import InvalidUpload
from evalhub.slugs import validate_slug


class Command(BaseCommand):
    help = (
        "Import battles in Chatbot Arena's clean-battle format (JSON lines) into an arena. "
        "The whole file is checked first, line by line in bounded memory; nothing is stored "
        "when any line has a problem. A battle the arena has (its question_id, or content) "
        "is skipped, so importing again adds nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("arena", help="The arena's slug.")
        parser.add_argument("file", help="clean battles, one JSON object a line")
        parser.add_argument(
            "--create",
            action="store_true",
            help="Create what is missing: the arena (owned by --user) and the systems the "
            "file names.",
        )
        parser.add_argument("--user", help="Owner of a new arena (and of its new systems).")

    def handle(self, *args, arena, file, create=False, user=None, **options):
        try:
            stream = open(file, "rb")  # noqa: SIM115 - closed below, read twice
        except OSError as error:
            raise CommandError(f"Cannot read {file}: {error.strerror}.") from None
        started = time.perf_counter()
        with stream:
            try:
                with transaction.atomic():
                    target = self._arena(arena, create, user)
                    result = import_battles(target, stream, create=create)
            except InvalidUpload as invalid:
                raise CommandError(invalid.refused_import(self.stderr.write)) from None
        seconds = time.perf_counter() - started
        self.stdout.write(
            self.style.SUCCESS(
                f"{result.created} battles stored, {result.unchanged} already in "
                f"{target.slug} ({seconds:.1f} s)."
            )
        )
        if result.systems_created:
            self.stdout.write(f"New systems: {', '.join(result.systems_created)}.")

    def _arena(self, slug: str, create: bool, username: str | None) -> Arena:
        arena = Arena.objects.filter(slug=slug).first()
        if arena is not None:
            return arena
        if not create:
            raise CommandError(f"No arena {slug!r}: use --create to create it.")
        try:
            validate_slug(slug)
        except Exception:
            raise CommandError(
                f"{slug!r} is not a slug (lowercase letters, digits, hyphens)."
            ) from None
        owner = None
        if username:
            owner = get_user_model().objects.filter(username=username).first()
            if owner is None:
                raise CommandError(f"No user named {username!r}.")
        return Arena.objects.create(slug=slug, name=slug, owner=owner)
