"""`python manage.py export_tournament SLUG OUTDIR`."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from tournaments.exporters import export_tournament
from tournaments.models import Tournament


class Command(BaseCommand):
    help = (
        "Write a tournament's conversations.jsonl and judgments.jsonl (the interchange "
        "format that import_spotthebot reads), tournament.json and systems.json to OUTDIR."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="The tournament's slug.")
        parser.add_argument("outdir", help="Directory to write to (created if missing).")

    def handle(self, *args, slug, outdir, **options):
        tournament = (
            Tournament.objects.select_related("campaign", "partner_set", "prompt_set", "submission")
            .filter(slug=slug)
            .first()
        )
        if tournament is None:
            raise CommandError(f"No tournament with the slug {slug!r}.")
        try:
            counts = export_tournament(tournament, Path(outdir))
        except OSError as error:
            raise CommandError(f"Cannot write to {outdir}: {error.strerror}.") from None
        self.stdout.write(
            self.style.SUCCESS(
                f"Wrote {counts['conversations']} conversations, {counts['judgments']} judgments "
                f"and {counts['systems']} systems to {outdir}."
            )
        )
