"""The human-versus-automatic result contract that ``analysis/reports/human_vs_automatic.py``
documents (and the documentation site's generated reference shows) is the keys the report
writes: every documented object has exactly the documented keys."""

import json

from analysis.reports import build_report
from tests.analysis.documented_contracts import check
from tests.analysis.reports.test_human_vs_automatic import FAST, likert_world


def test_the_report_has_exactly_its_documented_keys():
    report = json.loads(json.dumps(build_report(likert_world(), FAST)))
    assert report["dimensions"] and report["dimensions"][0]["convergence"]
    assert report["dimensions"][0]["correlation"] is not None
    assert check("human_vs_automatic", report) == []


def test_an_arenas_report_has_exactly_its_documented_keys():
    from analysis.reports import HumanVsAutomaticData

    battles = [("1", "x", "y", "a", "a"), ("2", "y", "z", "b", "tie"), ("3", "z", "x", "a", "b")]
    battles += [("4", "x", "z", "tie", "a"), ("5", "y", "x", "b", "b")]
    data = HumanVsAutomaticData(
        subject="an-arena",
        task_kind="arena",
        level="nominal",
        judge_run=1,
        judge="judge",
        human_judgments=len(battles),
        automatic_judgments=len(battles),
        human_labels=tuple(("choice", u, 0, vote) for u, _, _, vote, _ in battles),
        judge_labels=tuple(("choice", u, verdict) for u, _, _, _, verdict in battles),
        human_scores=(),
        judge_scores=(),
        battles=tuple((u, a, b) for u, a, b, _, _ in battles),
    )
    report = json.loads(json.dumps(build_report(data, FAST)))
    assert report["bradley_terry"]["systems"]
    assert check("human_vs_automatic", report) == []
