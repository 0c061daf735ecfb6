"""The README's result contracts (between the result-contracts markers) are the keys the
reports write: each documented path has exactly the documented keys in real results."""

import re
from pathlib import Path

import pytest

from analysis.pages.leaderboards import contract
from analysis.reports import build_report
from analysis.runs.tasks import analyze_campaign, analyze_study
from annotation.models import Campaign
from demo.simulation import ABModel, simulate_ab
from tests.analysis import builders
from tests.analysis.dimensional_builders import FAST, imported_study

pytestmark = pytest.mark.django_db

README = Path(__file__).resolve().parents[2] / "README.md"


def documented() -> dict[str, set[str]]:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"<!-- result-contracts -->\s*```\n(.*?)```", text, re.S).group(1)
    contracts = {}
    for line in block.strip().splitlines():
        path, _, keys = line.partition(": ")
        contracts[path] = {key.strip() for key in keys.split(",")}
    return contracts


def resolve(value, steps: list[str]):
    """Every value at the path (lists expanded by `[]`), skipping nulls."""
    values = [value]
    for step in steps:
        many = step.endswith("[]")
        name = step.removesuffix("[]")
        values = [v[name] for v in values if isinstance(v, dict) and v.get(name) is not None]
        if many:
            values = [element for v in values for element in v]
    return values


def results() -> dict[str, dict]:
    study = imported_study()
    runs = {"study": analyze_study(study, FAST, synchronous=True)}
    for kind in ("abc_eval", "likert", "comparative"):
        campaign = Campaign.objects.filter(study=study, task_kind=kind).first()
        runs[kind] = analyze_campaign(campaign, FAST, synchronous=True)
    reports = {kind: contract(run) for kind, run in runs.items()}
    reports["ab"] = build_report(simulate_ab(ABModel(builders.STRENGTHS, prompts=8), seed=1), FAST)
    return reports


def test_every_documented_path_has_exactly_the_documented_keys():
    reports = results()
    for path, keys in documented().items():
        match = re.match(r"\[(\w+)\]\.?(.*)", path)
        if match:
            kind, rest = match.groups()
            targets = [reports[kind]]
            steps = rest.split(".") if rest else []
        else:
            targets = list(reports.values())
            steps = path.split(".")
        found = [v for target in targets for v in resolve(target, steps)]
        assert found, f"{path}: no report has it"
        for value in found:
            assert set(value) == keys, f"{path}: {sorted(set(value) ^ keys)}"


def test_every_report_kind_is_documented():
    kinds = {path[1:].split("]")[0] for path in documented() if path.startswith("[")}
    assert {"abc_eval", "likert", "comparative", "study", "ab"} <= kinds
