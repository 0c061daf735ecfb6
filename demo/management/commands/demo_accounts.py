from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError

from evalhub.demo import DEMO_ACCOUNTS, demo_accounts

from ._accounts import account_lines


class Command(BaseCommand):
    help = (
        "Print the demo accounts and their passwords; --reset sets the demo passwords again "
        "(for accounts whose password was changed or forgotten)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--reset", action="store_true", help="set the demo accounts' passwords again"
        )

    def handle(self, *args, reset=False, **options):
        if not User.objects.filter(username__in=DEMO_ACCOUNTS).exists():
            raise CommandError("No demo accounts yet: run `manage.py load_demo` first.")
        accounts = demo_accounts(reset=reset)
        if reset:
            self.stdout.write(self.style.SUCCESS("Demo passwords set again."))
        for line in account_lines(accounts):
            self.stdout.write(line)
