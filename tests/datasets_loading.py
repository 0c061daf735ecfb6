"""Opening an exported dataset (a zip of Parquet tables and README.md) as the Hugging Face
`datasets` library does, for the export tests of every app."""

import io
import os
import zipfile

import pytest
import yaml
from django.core.management import call_command
from django.db import transaction

# Local files only: `datasets` must never reach the Hub from the tests.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"


def unzip(content: bytes, into) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        archive.extractall(into)
        return {name: archive.read(name) for name in archive.namelist()}


def front_matter(readme: bytes) -> dict:
    text = readme.decode()
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n", 2)[1])


def load_table(folder, table: str, cache):
    """The table through `datasets.load_dataset("parquet", data_files=...)`."""
    import datasets

    return datasets.load_dataset(
        "parquet",
        data_files=str(folder / "data" / f"{table}.parquet"),
        split="train",
        cache_dir=str(cache),
    )


def download(response) -> bytes:
    assert response.status_code == 200, response.content[:500]
    assert response["Content-Type"] == "application/zip"
    return b"".join(response.streaming_content)


@pytest.fixture(scope="module")
def demo(django_db_setup, django_db_blocker):
    """The whole demo (every kind judged, a judge run, an arena, analyses), loaded once per
    module in a transaction rolled back after its last test: the tests only read it."""
    with django_db_blocker.unblock(), transaction.atomic():
        call_command("load_demo", stdout=io.StringIO())
        yield
        transaction.set_rollback(True)
