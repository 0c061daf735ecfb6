"""The result contracts the report modules' docstrings state (and the documentation site's
generated reference shows) are the keys the reports write: every documented object has
exactly the documented keys in real results."""

import json

import pytest

from analysis.pages.leaderboards import contract
from analysis.reports import build_report
from analysis.runs.tasks import analyze_campaign, analyze_study
from annotation.models import Campaign
from demo.simulation import ABModel, simulate_ab, simulate_spot_the_bot
from tests.analysis import builders
from tests.analysis.dimensional_builders import FAST, imported_study
from tests.analysis.documented_contracts import REPORTS, check, contract_block

pytestmark = pytest.mark.django_db

# "stability": the state of a stability curve computed after the report (None: with it).
PROVENANCE = {"id", "finished_at", "parameters", "inputs_digest", "versions", "stability"}


def stored_results() -> dict[str, dict]:
    """The stored results of a study and of each of its campaigns, as the API reads them."""
    study = imported_study()
    runs = {"study": analyze_study(study, FAST, synchronous=True)}
    for kind in ("abc_eval", "likert", "comparative"):
        campaign = Campaign.objects.filter(study=study, task_kind=kind).first()
        runs[kind] = analyze_campaign(campaign, FAST, synchronous=True)
    return {kind: contract(run) for kind, run in runs.items()}


def report(data) -> dict:
    return json.loads(json.dumps(build_report(data, FAST)))


def test_the_study_report_has_exactly_its_documented_keys():
    result = stored_results()["study"]
    assert set(result.pop("run")) == PROVENANCE
    assert result["behaviours"] and result["likert"] and result["comparative"]
    assert check("study", result) == []


@pytest.mark.parametrize("kind", ["abc_eval", "likert", "comparative"])
def test_each_dimensional_section_has_exactly_its_documented_keys(kind):
    results = stored_results()
    section, _ = contract_block(kind)
    for result in (results[kind], results["study"]):
        assert result[section], f"{kind}: no {section} section to check"
        assert check(kind, result) == []


def test_a_spot_the_bot_tournament_report_has_exactly_its_documented_keys():
    result = report(simulate_spot_the_bot(builders.small_spot_the_bot_model(), seed=3))
    assert result["survival"]["curves"] and result["stability"]
    assert check("__init__", result) == []


def test_the_chateval_section_of_an_ab_report_has_exactly_its_documented_keys():
    result = report(simulate_ab(ABModel(builders.STRENGTHS, prompts=8), seed=1))
    assert result["chateval"]["baselines"] and result["chateval"]["workers"]
    assert check("chateval", result) == []


def test_a_documented_key_the_report_lacks_is_caught():
    # The check itself: a result missing a documented key, or with an undocumented one,
    # is reported with its path.
    result = report(simulate_ab(ABModel(builders.STRENGTHS, prompts=8), seed=1))
    del result["chateval"]["baselines"][0]["wins"]
    result["chateval"]["kappa"]["extra"] = 1
    assert check("chateval", result) == [".baselines[0]: ['wins']", ".kappa: ['extra']"]


def test_every_report_kind_documents_a_contract():
    for module in ("__init__", "chateval", "abc_eval", "likert", "comparative", "study"):
        assert (REPORTS / f"{module}.py").is_file()
        _, block = contract_block(module)
        assert block.strip().startswith("{"), module
