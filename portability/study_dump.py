"""A whole study as JSON-lines files, and back (`manage.py export_all` / `import_all`).

Layout of the directory:

- ``manifest.json``: ``{"format": "evalhub-study", "version": 1, "tables": [...]}``, the
  tables in the order they are loaded, each ``{"model": "app_label.model", "file": ...,
  "rows": n}``;
- one ``<app_label>.<model>.jsonl`` per table: one row per line, Django's JSONL
  serialization ``{"model": "app_label.model", "pk": ..., "fields": {...}}``, foreign keys
  as primary keys (so the restored rows keep their ids, and links between them hold);
- ``media/``: the uploaded files the rows refer to (submissions' original files).

Secrets are never written: an endpoint's token is "" in the dump, its `token_left_out`
is true and the manifest's ``secrets_left_out`` lists it, so that the restored endpoint's
page asks its owner for the token again (evalhub/encryption.py).

Every model of the study apps (catalog, endpoints, annotation, tournaments, judging,
analysis) is written, but for the few named in `SITE_MODELS`, and the user accounts they
point at (username, e-mail, staff flags and password hashes: keep a dump as private as the
database). Sessions, login attempts and API tokens are not: they belong to the running
site, not to the study. tests/portability/test_study_dump.py fails when a model of a
project app is in neither list.

A new database has rows before anything is imported: the rubrics EvalHub ships, which
`migrate` installs (`SEEDED`). The import replaces them with the dump's own, which the
dump's judge runs point at, then installs whatever shipped text the dump lacks.
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
from django.db.models import Q

from evalhub.encryption import leave_out_secrets
from judging.defaults import DEFAULT_NAME as DEFAULT_RUBRIC_NAME
from judging.defaults import install_default_rubrics

FORMAT = "evalhub-study"
VERSION = 1
STUDY_APPS = (
    "evalhub",
    "endpoints",
    "annotation",
    "tournaments",
    "judging",
    "arenas",
    "analysis",
)
# Models of the study apps whose rows belong to the running site, not to the study.
SITE_MODELS = {
    # How the site's calls to endpoints went lately: a bounded log for the owner.
    "endpoints.endpointcall",
    # Who holds which piece of background work right now (evalhub/leases.py): meaningless
    # in another database, and a restored lease would block its work until it lapsed.
    "evalhub.lease",
    # Owners' webhook subscriptions and their delivery log (not a study app's, named here
    # so that leaving them out is a decision): a restored copy on another deployment must
    # not post to the owners' URLs, and exports never carry the secrets that sign for them.
    # Owners subscribe again on the restored site.
    "webhooks.subscription",
    "webhooks.delivery",
    "webhooks.attempt",
}
# Rows `migrate` creates in a new database, by table: replaced by the dump's own on import.
SEEDED = {"judging.rubric": Q(owner__isnull=True, name=DEFAULT_RUBRIC_NAME)}
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


def export_study(directory: Path) -> dict:
    """Write every study table into ``directory`` (created); the manifest."""
    directory.mkdir(parents=True, exist_ok=True)
    tables, left_out = [], []
    with transaction.atomic():  # one consistent snapshot on PostgreSQL
        for model in study_models():
            name = f"{_label(model)}.jsonl"
            rows = model._default_manager.order_by("pk")
            options = {"fields": USER_FIELDS} if _label(model) == "auth.user" else {}
            with open(directory / name, "w", encoding="utf-8") as stream:
                serializers.serialize(
                    "jsonl", _without_secrets(rows.iterator(), left_out), stream=stream, **options
                )
            tables.append({"model": _label(model), "file": name, "rows": rows.count()})
            _export_files(model, directory / "media")
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "tables": tables,
        "secrets_left_out": left_out,
    }
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def _without_secrets(rows, left_out: list[dict]):
    """The rows with their secrets blanked and flagged as left out (evalhub/encryption.py):
    a dump never carries one. Each left out is listed in `left_out`."""
    for obj in rows:
        for field in leave_out_secrets(obj):
            left_out.append({"model": _label(obj), "pk": obj.pk, "field": field})
        yield obj


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
    """Tables with rows other than those `migrate` seeds."""
    return [_label(m) for m in study_models() if _unseeded(m).exists()]


def _unseeded(model):
    rows = model._default_manager.all()
    seeded = SEEDED.get(_label(model))
    return rows.exclude(seeded) if seeded is not None else rows


def _clear_seeded(labels: set[str]) -> None:
    """The seeded rows of the tables the dump brings its own of."""
    for label, seeded in SEEDED.items():
        if label in labels:
            apps.get_model(label)._default_manager.filter(seeded).delete()


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
        _clear_seeded({table["model"] for table in manifest["tables"]})
        with connection.constraint_checks_disabled():
            for table in manifest["tables"]:
                counts[table["model"]] = _load_table(directory / table["file"], table["model"])
                loaded.append(apps.get_model(table["model"]))
        connection.check_constraints(table_names=[m._meta.db_table for m in loaded])
        _reset_sequences(loaded)
        install_default_rubrics()  # shipped text newer than the dump's (or a dump without)
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
