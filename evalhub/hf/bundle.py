"""A study as a Hugging Face dataset: a zip of Parquet tables under `data/` and the card
(README.md) at its root, the layout of a dataset repository, so that unzipping it and
uploading the folder (huggingface_hub's `upload_folder`) publishes it.

The zip is written to an anonymous temporary file, a row group at a time, then streamed from
disk: memory holds one row group whatever the study's size, and an error is known before the
response starts (a refusal, not a truncated download).
"""

from __future__ import annotations

import tempfile
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import chain

from django.http import FileResponse, HttpResponse

from ..errors import UserInputError
from . import card, parquet
from .arrow import pa


@dataclass(frozen=True)
class Table:
    name: str
    rows: Callable[[], Iterable[dict]]  # called once, when the table is written
    schema: pa.Schema | None = None  # None: inferred from the first row group
    about: str = ""

    @property
    def path(self) -> str:
        return f"data/{self.name}.parquet"


def write_dataset(tables: list[Table], text: card.CardText, sink) -> list[card.TableInfo]:
    """Write the tables and the card into `sink` (a binary file) as a zip; a table without
    rows is left out, and ExportError (409) when every one is empty."""
    infos = []
    with zipfile.ZipFile(sink, "w", zipfile.ZIP_STORED) as archive:
        for table in tables:
            rows = iter(table.rows())
            first = next(rows, None)
            if first is None:
                # `datasets` refuses a split without rows: an empty table is left out.
                continue
            # Parquet compresses its pages itself; force_zip64 because the size is unknown.
            with archive.open(table.path, "w", force_zip64=True) as out:
                written = parquet.write(chain([first], rows), out, schema=table.schema)
            infos.append(
                card.TableInfo(
                    name=table.name,
                    path=table.path,
                    rows=written.rows,
                    schema=written.schema,
                    json_columns=tuple(written.json_columns),
                    about=table.about,
                )
            )
        if not infos:
            raise parquet.ExportError("There is nothing to export yet: the tables have no rows.")
        archive.writestr("README.md", card.render(text, infos))
    return infos


def dataset_response(tables: list[Table], text: card.CardText, filename: str) -> FileResponse:
    """The zip as a download; parquet.ExportError propagates before anything is sent."""
    # Not a `with`: the response streams the file and closes it (which deletes it).
    sink = tempfile.TemporaryFile()  # noqa: SIM115
    try:
        write_dataset(tables, text, sink)
    except BaseException:
        sink.close()
        raise
    sink.seek(0)
    return FileResponse(
        sink, as_attachment=True, filename=f"{filename}.zip", content_type="application/zip"
    )


def refusal(error: UserInputError) -> HttpResponse:
    """A page's download refused: the problems as plain text, with the error's status (400
    for a bad licence or citation, 409 for a table with nothing to export)."""
    return HttpResponse(
        "\n".join(error.messages()),
        status=error.status_code,
        content_type="text/plain; charset=utf-8",
    )
