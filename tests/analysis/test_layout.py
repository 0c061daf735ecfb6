"""analysis/ is filed by stage (inputs, runs, reports, pages, api): no module name repeats
at another level, so that a name says which module it is (the flat drawer had
``report_card.py``, ``reports/report_card.py`` and ``report_card_views.py``)."""

from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Names Django or Python give a fixed meaning in every package.
EXPECTED_EVERYWHERE = {"__init__", "apps", "admin", "models", "urls"}


def repeated_names(paths: list[str]) -> dict[str, list[str]]:
    """Module and package names that occur at more than one place, with where."""
    places = defaultdict(list)
    for path in paths:
        parts = Path(path).with_suffix("").parts
        if "migrations" in parts:
            continue
        for depth, name in enumerate(parts):
            if name not in EXPECTED_EVERYWHERE:
                places[name].append("/".join(parts[: depth + 1]))
    return {name: sorted(set(where)) for name, where in places.items() if len(set(where)) > 1}


def test_no_module_name_repeats_in_analysis():
    paths = [str(p.relative_to(ROOT)) for p in (ROOT / "analysis").rglob("*.py")]
    assert len(paths) > 40
    assert repeated_names(paths) == {}


def test_a_repeated_name_is_found_at_any_level():
    paths = ["analysis/runs/tasks.py", "analysis/api/runs.py", "analysis/pages/plots.py"]
    assert repeated_names(paths) == {"runs": ["analysis/api/runs", "analysis/runs"]}


def test_the_names_every_package_may_have_are_not_repeats():
    paths = ["analysis/urls.py", "analysis/api/urls.py", "analysis/api/__init__.py"]
    assert repeated_names(paths) == {}
