from django.core.management.base import BaseCommand

from judging.defaults import install_default_rubrics


class Command(BaseCommand):
    help = "Store the shipped default judge rubrics (a new version where the text changed)."

    def handle(self, *args, **options):
        created = install_default_rubrics()
        for rubric in created:
            self.stdout.write(f"Installed {rubric.task_kind}/{rubric.name} v{rubric.version}")
        if not created:
            self.stdout.write("The default rubrics are up to date.")
