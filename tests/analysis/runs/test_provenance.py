"""A run's provenance names the libraries that computed its figures, and only those: every
library it lists is imported by the project's runtime code (read with ``ast``, tests and
benchmarks left out), and the statistics' test references are not listed."""

import ast
from pathlib import Path

import pytest

from analysis.runs import tasks
from analysis.runs.tasks import analyze_tournament
from tests.analysis import builders

ROOT = Path(__file__).resolve().parents[3]
NOT_RUNTIME = ("tests", "bench")
TEST_REFERENCES = ("trueskill", "lifelines", "krippendorff", "statsmodels", "sklearn")


def runtime_imports() -> set[str]:
    """The top-level names of every absolute import in the project's runtime packages,
    inside functions too (a function-local import is how a heavy library is loaded)."""
    names = set()
    for package in ROOT.iterdir():
        if package.name in NOT_RUNTIME or not (package / "__init__.py").is_file():
            continue
        for path in package.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names.add(node.module.split(".")[0])
    return names


def test_every_listed_library_is_imported_by_runtime_code():
    imported = runtime_imports()

    not_imported = [name for name in tasks._LIBRARIES if name not in imported]

    assert not_imported == []
    assert {"numpy", "scipy", "matplotlib"} <= imported  # the scan read the packages


def test_test_references_are_neither_listed_nor_imported_at_runtime():
    imported = runtime_imports()

    assert [name for name in TEST_REFERENCES if name in tasks._LIBRARIES] == []
    assert [name for name in TEST_REFERENCES if name in imported] == []


def test_matplotlib_is_listed_only_for_a_run_that_drew_plots():
    computed = tasks.library_versions()
    plotted = tasks.library_versions(plotted=True)

    assert set(computed) == {"numpy", "scipy", "evalhub"}
    assert set(plotted) == {"numpy", "scipy", "matplotlib", "evalhub"}
    assert plotted["scipy"] == computed["scipy"] and computed["scipy"]


@pytest.mark.django_db
def test_a_run_records_the_libraries_that_computed_it():
    tournament = builders.spot_the_bot_tournament()

    run = analyze_tournament(tournament, builders.FAST, synchronous=True)

    run.refresh_from_db()
    assert run.plots
    assert set(run.versions) == {"numpy", "scipy", "matplotlib", "evalhub"}
    assert "trueskill" not in run.versions and "lifelines" not in run.versions
