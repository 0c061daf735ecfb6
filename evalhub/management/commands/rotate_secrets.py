"""`python manage.py rotate_secrets`: every stored secret encrypted again with the first key
of EVALHUB_SECRET_KEYS, so that the others can be dropped (docs/production.md)."""

from django.core.management.base import BaseCommand, CommandError

from evalhub.encryption import SecretUnreadable, rotate_stored_secrets


class Command(BaseCommand):
    help = (
        "Encrypt every stored secret (endpoints' tokens) again with the first key of "
        "EVALHUB_SECRET_KEYS. Run it after putting a new key first; then drop the old key."
    )

    def handle(self, *args, **options):
        try:
            rotated = rotate_stored_secrets()
        except SecretUnreadable as unreadable:
            raise CommandError(f"{unreadable} Nothing was changed.") from None
        self.stdout.write(
            self.style.SUCCESS(
                f"{rotated} stored secrets are encrypted with the first key of "
                "EVALHUB_SECRET_KEYS; the other keys may now be dropped."
            )
        )
