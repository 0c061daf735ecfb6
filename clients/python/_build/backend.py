"""The package's build backend (PEP 517, with PEP 660's editable installs), in the tree.

Why not setuptools or hatchling: a backend named in build-system.requires has to be fetched
from an index when pip builds in isolation, and the shared venvs here carry a setuptools
too old to build a wheel on its own. This backend needs nothing but the standard library, so
`pip install ./clients/python` works offline, in CI's tests and on a laptop. It builds
exactly this package: the modules under src/evalhub_client, the metadata from pyproject.toml.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "evalhub_client"
TAG = "py3-none-any"


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _dist_name(project: dict) -> str:
    return project["name"].replace("-", "_").lower()


def _metadata(project: dict) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project.get('requires-python', '>=3.11')}",
    ]
    if "license" in project:
        lines.append(f"License: {project['license']['text']}")
    lines += [f"Requires-Dist: {requirement}" for requirement in project.get("dependencies", [])]
    readme = ROOT / project.get("readme", "README.md")
    body = ""
    if readme.exists():
        lines.append("Description-Content-Type: text/markdown")
        body = "\n" + readme.read_text(encoding="utf-8")
    return "\n".join(lines) + "\n" + body


def _entry_points(project: dict) -> str:
    scripts = project.get("scripts", {})
    if not scripts:
        return ""
    return "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in scripts.items())


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _write_wheel(directory: str, files: dict[str, bytes]) -> str:
    project = _project()
    name = _dist_name(project)
    info = f"{name}-{project['version']}.dist-info"
    files = {
        **files,
        f"{info}/METADATA": _metadata(project).encode(),
        f"{info}/WHEEL": (
            f"Wheel-Version: 1.0\nGenerator: evalhub_client _build\nRoot-Is-Purelib: true\n"
            f"Tag: {TAG}\n"
        ).encode(),
    }
    entry_points = _entry_points(project)
    if entry_points:
        files[f"{info}/entry_points.txt"] = entry_points.encode()
    record = "".join(f"{path},{_digest(data)},{len(data)}\n" for path, data in files.items())
    record += f"{info}/RECORD,,\n"
    filename = f"{name}-{project['version']}-{TAG}.whl"
    with zipfile.ZipFile(Path(directory) / filename, "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in files.items():
            wheel.writestr(path, data)
        wheel.writestr(f"{info}/RECORD", record)
    return filename


def _package_files() -> dict[str, bytes]:
    source = ROOT / "src" / PACKAGE
    return {
        f"{PACKAGE}/{path.relative_to(source).as_posix()}": path.read_bytes()
        for path in sorted(source.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # The source directory on sys.path: edits take effect without reinstalling.
    pth = f"{(ROOT / 'src').as_posix()}\n".encode()
    return _write_wheel(wheel_directory, {f"{PACKAGE}_editable.pth": pth})


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    base = f"{_dist_name(project)}-{project['version']}"
    filename = f"{base}.tar.gz"
    with tarfile.open(Path(sdist_directory) / filename, "w:gz") as sdist:
        for path in sorted(ROOT.rglob("*")):
            relative = path.relative_to(ROOT)
            if not path.is_file() or "__pycache__" in relative.parts:
                continue
            if relative.parts[0] not in ("src", "_build") and relative.name not in (
                "pyproject.toml",
                "README.md",
            ):
                continue
            sdist.add(path, arcname=f"{base}/{relative.as_posix()}")
        info = _metadata(project).encode()
        entry = tarfile.TarInfo(f"{base}/PKG-INFO")
        entry.size = len(info)
        entry.mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
        sdist.addfile(entry, io.BytesIO(info))
    return filename
