"""`python manage.py export_battles ARENA FILE.jsonl`."""

from django.core.management.base import BaseCommand, CommandError

from arenas.interchange.export import export_lines
from arenas.models import Arena


class Command(BaseCommand):
    help = (
        "Write an arena's voted battles in Chatbot Arena's clean-battle format (JSON lines), "
        "with EvalHub's own fields under 'evalhub'."
    )

    def add_arguments(self, parser):
        parser.add_argument("arena", help="The arena's slug.")
        parser.add_argument("file", help="Where to write (- for the standard output).")

    def handle(self, *args, arena, file, **options):
        target = Arena.objects.filter(slug=arena).first()
        if target is None:
            raise CommandError(f"No arena {arena!r}.")
        count = 0
        if file == "-":
            for line in export_lines(target):
                self.stdout.write(line, ending="")
                count += 1
            return
        with open(file, "w", encoding="utf-8") as out:
            for line in export_lines(target):
                out.write(line)
                count += 1
        self.stdout.write(self.style.SUCCESS(f"Wrote {count} battles to {file}."))
