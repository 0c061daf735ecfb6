"""The client's in-tree build backend (clients/python/_build/backend.py): the wheel holds
the package and the metadata pip needs, with a RECORD that matches; the editable wheel
points at the source; the sdist holds what builds the wheel again."""

import base64
import csv
import hashlib
import importlib.util
import io
import tarfile
import zipfile
from pathlib import Path

import pytest

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "python"


@pytest.fixture(scope="module")
def backend():
    spec = importlib.util.spec_from_file_location(
        "client_backend", CLIENT / "_build" / "backend.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_wheel_holds_the_package_its_metadata_and_its_command(backend, tmp_path):
    name = backend.build_wheel(str(tmp_path))

    assert name == "evalhub_client-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(tmp_path / name) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read("evalhub_client-0.1.0.dist-info/METADATA").decode()
        entry_points = wheel.read("evalhub_client-0.1.0.dist-info/entry_points.txt").decode()
    assert {
        "evalhub_client/__init__.py",
        "evalhub_client/cli.py",
        "evalhub_client/py.typed",
    } <= names
    assert not any("__pycache__" in n for n in names)
    assert "Name: evalhub-client" in metadata
    assert "Requires-Dist: typer>=0.12,<1" in metadata
    assert "evalhub = evalhub_client.cli:main" in entry_points


def test_the_wheels_record_lists_each_file_with_its_hash_and_size(backend, tmp_path):
    name = backend.build_wheel(str(tmp_path))

    with zipfile.ZipFile(tmp_path / name) as wheel:
        record = wheel.read("evalhub_client-0.1.0.dist-info/RECORD").decode()
        rows = list(csv.reader(io.StringIO(record)))
        for path, digest, size in rows:
            if path.endswith("RECORD"):
                assert (digest, size) == ("", "")
                continue
            data = wheel.read(path)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest == "sha256=" + expected.decode(), path
            assert int(size) == len(data), path
        assert {row[0] for row in rows} == set(wheel.namelist())


def test_the_editable_wheel_puts_the_source_on_the_path(backend, tmp_path):
    name = backend.build_editable(str(tmp_path))

    with zipfile.ZipFile(tmp_path / name) as wheel:
        pth = wheel.read("evalhub_client_editable.pth").decode().strip()
    assert Path(pth) == CLIENT / "src"


def test_the_sdist_holds_the_sources_the_backend_and_the_metadata(backend, tmp_path):
    name = backend.build_sdist(str(tmp_path))

    with tarfile.open(tmp_path / name) as sdist:
        names = set(sdist.getnames())
    base = "evalhub_client-0.1.0"
    assert {
        f"{base}/pyproject.toml",
        f"{base}/PKG-INFO",
        f"{base}/README.md",
        f"{base}/_build/backend.py",
        f"{base}/src/evalhub_client/client.py",
    } <= names
