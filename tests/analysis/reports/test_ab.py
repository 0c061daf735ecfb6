"""The A/B report: empty survival and stability, automatic ties."""

import json

from analysis.reports import ABData, build_report
from demo.simulation import ABModel, simulate_ab
from tests.analysis import builders


def test_ab_results_have_empty_survival_and_stability():
    data = simulate_ab(ABModel(builders.STRENGTHS, prompts=15), seed=2)
    result = build_report(data, builders.FAST)
    json.dumps(result, allow_nan=False)
    assert result["kind"] == "ab"
    assert result["systems"][0] == "ab-strong" and result["systems"][-1] == "ab-weak"
    assert result["survival"]["curves"] == {} and result["survival"]["cox"] == {}
    assert result["survival"]["logrank"] == [] and result["stability"] == {}
    assert result["automatic_ties"] == sum(data.automatic)
    assert result["judgments"] == len(data.choice) - sum(data.automatic)
    assert len(result["bradley_terry"]) == 3


def test_automatic_ties_count_as_ties_from_every_judge():
    data = ABData(
        subject="ties",
        item=(1, 2, 2, 3),
        worker=(-1, 5, 6, 5),
        system_a=("p", "p", "p", "p"),
        system_b=("q", "q", "q", "q"),
        choice=("tie", "a", "a", "b"),
        automatic=(True, False, False, False),
        automatic_weight=3,
    )
    result = build_report(data, builders.FAST)
    (pair,) = result["pairwise"]
    assert pair["ties"] == 3 and {pair["wins_a"], pair["wins_b"]} == {2, 1}
    assert result["judgments"] == 3 and result["automatic_ties"] == 1
