"""docs/human-vs-automatic.md's result contract (between the versus-contract markers) is the
keys the report writes: each documented path has exactly the documented keys."""

import json
import re
from pathlib import Path

from analysis.reports import build_report
from tests.analysis.reports.test_human_vs_automatic import FAST, likert_world
from tests.analysis.test_contracts import resolve

DOC = Path(__file__).resolve().parents[2] / "docs" / "human-vs-automatic.md"


def documented() -> dict[str, set[str]]:
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"<!-- versus-contract -->\s*```\n(.*?)```", text, re.S).group(1)
    contracts = {}
    for line in block.strip().splitlines():
        path, _, keys = line.partition(": ")
        contracts[path] = {key.strip() for key in keys.split(",")}
    return contracts


def test_every_documented_path_has_exactly_the_documented_keys():
    report = json.loads(json.dumps(build_report(likert_world(), FAST)))
    contracts = documented()
    assert len(contracts) == 7
    for path, keys in contracts.items():
        rest = path.removeprefix("[human_vs_automatic]").removeprefix(".")
        found = resolve(report, rest.split(".") if rest else [])
        assert found, f"{path}: the report has no such path"
        for value in found:
            assert set(value) == keys, f"{path}: {sorted(set(value) ^ keys)}"
