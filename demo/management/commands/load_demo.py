from django.core.management.base import BaseCommand

from demo.loader import load_demo

from ._accounts import account_lines


class Command(BaseCommand):
    help = (
        "Create the demo data (idempotent; existing accounts keep their passwords) and print "
        "the demo accounts."
    )

    def handle(self, *args, **options):
        accounts = load_demo()
        self.stdout.write(self.style.SUCCESS("Demo data is in place."))
        for line in account_lines(accounts):
            self.stdout.write(line)
