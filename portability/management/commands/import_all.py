from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from portability.study_dump import DatabaseNotEmpty, DumpInvalid, import_study, read_manifest


class Command(BaseCommand):
    help = "Restore a directory written by export_all into an empty, migrated database."

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)

    def handle(self, directory: Path, **options):
        try:
            counts = import_study(directory)
        except (DatabaseNotEmpty, DumpInvalid) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"Restored {sum(counts.values())} rows of {len(counts)} tables.")
        left_out = read_manifest(directory).get("secrets_left_out", [])
        if left_out:
            self.stdout.write(
                f"{len(left_out)} secrets (endpoints' tokens) are not in a dump: each endpoint's "
                "page asks its owner to enter its token again."
            )
