from pathlib import Path

from django.core.management.base import BaseCommand

from portability.study_dump import export_study


class Command(BaseCommand):
    help = (
        "Write every table a study needs (catalog, campaigns, items, batches, workers, "
        "assignments, judgments, tournaments, judges and their runs, analysis runs...) as JSON "
        "lines into DIR."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)

    def handle(self, directory: Path, **options):
        manifest = export_study(directory)
        tables = manifest["tables"]
        rows = sum(table["rows"] for table in tables)
        self.stdout.write(f"Wrote {rows} rows of {len(tables)} tables to {directory}.")
        if manifest["secrets_left_out"]:
            self.stdout.write(
                f"{len(manifest['secrets_left_out'])} secrets (endpoints' tokens) were left "
                "out, as always: after an import their owners enter them again."
            )
