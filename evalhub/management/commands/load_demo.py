from django.core.management.base import BaseCommand

from evalhub.demo import load_demo


class Command(BaseCommand):
    help = "Create the demo data (idempotent) and print the demo accounts' passwords."

    def handle(self, *args, **options):
        passwords = load_demo()
        self.stdout.write(self.style.SUCCESS("Demo data is in place."))
        self.stdout.write(f"Staff account:      admin / {passwords['admin_password']}")
        self.stdout.write(f"Researcher account: researcher / {passwords['researcher_password']}")
