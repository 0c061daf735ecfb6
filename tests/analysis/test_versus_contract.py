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
