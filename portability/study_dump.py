"""A whole study as JSON-lines files, and back (`manage.py export_all` / `import_all`).

Layout of the directory:

- ``manifest.json``: ``{"format": "evalhub-study", "version": 1, "tables": [...]}``, the
  tables in the order they are loaded, each ``{"model": "app_label.model", "file": ...,
  "rows": n}``;
- one ``<app_label>.<model>.jsonl`` per table: one row per line, Django's JSONL
  serialization ``{"model": "app_label.model", "pk": ..., "fields": {...}}``, foreign keys
  as primary keys (so the restored rows keep their ids, and links between them hold);
- ``media/``: the uploaded files the rows refer to (submissions' original files).

Every model of the study apps (catalog, endpoints, annotation, tournaments, analysis) is
written (but for the endpoints' recent call outcomes, which belong to the site), and
the user accounts they point at (username, e-mail, staff flags and password hashes: keep a
dump as private as the database). Sessions, login attempts and API tokens are not: they
belong to the running site, not to the study.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from django.apps import apps
from django.core import serializers
from django.core.files.storage import default_storage
from django.core.management.color import no_style
from django.db import connection, models, transaction

FORMAT = "evalhub-study"
VERSION = 1
STUDY_APPS = ("evalhub", "endpoints", "annotation", "tournaments", "arenas", "analysis")
# Rows of the running site, not of the study: how its calls to endpoints went lately.
SITE_MODELS = {"endpoints.endpointcall"}
USER_FIELDS = [
    "password",
    "last_login",
    "is_superuser",
    "username",
    "first_name",
    "last_name",
    "email",
    "is_staff",
    "is_active",
    "date_joined",
]


class DatabaseNotEmpty(Exception):
    """import_all restores into an empty database only."""


class DumpInvalid(Exception):
    """The directory is not an EvalHub study dump this version can read."""


def study_models() -> list[type[models.Model]]:
    """The tables of a study, each after the tables its rows point at."""
    user_model = apps.get_model("auth", "User")
    chosen = [user_model] + [
        model
        for label in STUDY_APPS
        for model in apps.get_app_config(label).get_models()
        if model._meta.label_lower not in SITE_MODELS
    ]
    by_app: dict = {}
    for model in chosen:
        by_app.setdefault(model._meta.app_config, []).append(model)
    return serializers.sort_dependencies(by_app.items(), allow_cycles=True)


def _label(model) -> str:
    return model._meta.label_lower


def _file_fields(model) -> list[str]:
    return [f.name for f in model._meta.get_fields() if isinstance(f, models.FileField)]


def export_study(directory: Path) -> list[dict]:
    """Write every study table into ``directory`` (created); the manifest's tables."""
    directory.mkdir(parents=True, exist_ok=True)
    tables = []
    with transaction.atomic():  # one consistent snapshot on PostgreSQL
        for model in study_models():
            name = f"{_label(model)}.jsonl"
            rows = model._default_manager.order_by("pk")
            options = {"fields": USER_FIELDS} if _label(model) == "auth.user" else {}
            with open(directory / name, "w", encoding="utf-8") as stream:
                serializers.serialize("jsonl", rows.iterator(), stream=stream, **options)
            tables.append({"model": _label(model), "file": name, "rows": rows.count()})
            _export_files(model, directory / "media")
    manifest = {"format": FORMAT, "version": VERSION, "tables": tables}
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return tables


def _export_files(model, media: Path) -> None:
    for field in _file_fields(model):
        for name in model._default_manager.exclude(**{field: ""}).values_list(field, flat=True):
            if not default_storage.exists(name):
                continue
            target = media / name
            target.parent.mkdir(parents=True, exist_ok=True)
            with default_storage.open(name, "rb") as source, open(target, "wb") as out:
                shutil.copyfileobj(source, out)


def read_manifest(directory: Path) -> dict:
    path = directory / "manifest.json"
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError:
        raise DumpInvalid(
            f"{path} is missing: is this a directory written by export_all?"
        ) from None
    except json.JSONDecodeError as error:
        raise DumpInvalid(f"{path} is not valid JSON: {error}") from None
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise DumpInvalid(
            f"{path} is not an {FORMAT} dump of version {VERSION} "
            f"(format {manifest.get('format')!r}, version {manifest.get('version')!r})."
        )
    return manifest


def non_empty_tables() -> list[str]:
    return [_label(m) for m in study_models() if m._default_manager.exists()]


def import_study(directory: Path) -> dict[str, int]:
    """Restore a dump into an empty database; rows per table. All or nothing."""
    manifest = read_manifest(directory)
    occupied = non_empty_tables()
    if occupied:
        raise DatabaseNotEmpty(
            "import_all restores into an empty database, and these tables have rows: "
            + ", ".join(occupied)
            + ". Create a new database and run `manage.py migrate` first."
        )
    counts: dict[str, int] = {}
    loaded = []
    with transaction.atomic():
        with connection.constraint_checks_disabled():
            for table in manifest["tables"]:
                counts[table["model"]] = _load_table(directory / table["file"], table["model"])
                loaded.append(apps.get_model(table["model"]))
        connection.check_constraints(table_names=[m._meta.db_table for m in loaded])
        _reset_sequences(loaded)
    _import_files(directory / "media")
    return counts


def _load_table(path: Path, label: str) -> int:
    count = 0
    with open(path, encoding="utf-8") as stream:
        for line_number, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            try:
                (obj,) = serializers.deserialize("jsonl", line)
            except Exception as error:
                raise DumpInvalid(f"{path.name}, line {line_number}: {error}") from None
            if obj.object._meta.label_lower != label:
                raise DumpInvalid(f"{path.name}, line {line_number}: a row of another table.")
            obj.save()
            count += 1
    return count


def _reset_sequences(models_: list) -> None:
    """Ids were given explicitly; the next new row must not reuse one (PostgreSQL)."""
    statements = connection.ops.sequence_reset_sql(no_style(), models_)
    with connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def _import_files(media: Path) -> None:
    if not media.is_dir():
        return
    for path in sorted(p for p in media.rglob("*") if p.is_file()):
        name = path.relative_to(media).as_posix()
        if not default_storage.exists(name):
            with open(path, "rb") as source:
                default_storage.save(name, source)
