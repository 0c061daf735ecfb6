"""`python manage.py rotate_secrets`: every stored secret encrypted again with the first key
of EVALHUB_SECRET_KEYS, so that the others can be dropped (docs/production.md)."""

from django.core.management.base import BaseCommand, CommandError

from evalhub.encryption import SecretUnreadable, rotate_stored_secrets


class Command(BaseCommand):
    help = (
        "Encrypt every stored secret (endpoints' tokens) again with the first key of "
        "EVALHUB_SECRET_KEYS. Run it after putting a new key first; then drop the old key."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--forget-unreadable",
            action="store_true",
            help="Blank the secrets no listed key decrypts (their key is lost for good) and "
            "flag them, so that their owners are asked for them again.",
        )

    def handle(self, *args, forget_unreadable=False, **options):
        try:
            rotated, forgotten = rotate_stored_secrets(forget_unreadable=forget_unreadable)
        except SecretUnreadable as unreadable:
            raise CommandError(
                f"{unreadable} Nothing was changed. List the lost key again, or run with "
                "--forget-unreadable to blank those secrets and ask their owners for them."
            ) from None
        self.stdout.write(
            self.style.SUCCESS(
                f"{rotated} stored secrets are encrypted with the first key of "
                "EVALHUB_SECRET_KEYS; the other keys may now be dropped."
            )
        )
        if forgotten:
            self.stdout.write(
                f"{len(forgotten)} unreadable secrets were blanked, their owners will be "
                f"asked for them again: {', '.join(forgotten[:20])}."
            )
