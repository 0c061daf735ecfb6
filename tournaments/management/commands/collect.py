"""`python manage.py collect SLUG [--retry-failed]`."""

from django.core.management.base import BaseCommand, CommandError

from evalhub.errors import UserInputError
from tournaments.models import Tournament
from tournaments.spot_the_bot_campaign import check_retry_allowed, collection_progress
from tournaments.tasks import collect_tournament


class Command(BaseCommand):
    help = (
        "Plan a tournament's conversations and collect those still missing from its bots "
        "(in the collection workers when a broker is configured, here otherwise). With "
        "--retry-failed, also the failed dialogues and those whose worker died."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="The tournament's slug.")
        parser.add_argument(
            "--retry-failed",
            action="store_true",
            help="Collect failed and stalled dialogues again (a new attempt from the seed).",
        )

    def handle(self, *args, slug, retry_failed, **options):
        tournament = Tournament.objects.filter(slug=slug).first()
        if tournament is None:
            raise CommandError(f"No tournament with the slug {slug!r}.")
        try:
            if retry_failed:
                check_retry_allowed(tournament)
            result = collect_tournament(tournament.pk, retry_failed)
        except UserInputError as problem:
            raise CommandError(str(problem)) from None
        progress = collection_progress(tournament)
        self.stdout.write(
            self.style.SUCCESS(
                f"{tournament.slug}: {result['planned']} newly planned, {result['enqueued']} "
                f"queued; {progress['complete']} of {progress['total']} collected, "
                f"{progress['failed']} failed."
            )
        )
