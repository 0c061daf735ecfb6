"""/api/analysis-runs/ and the typed result contract: every key of a Spot The Bot and an
A/B report is described by the schema's serializers (a report goes through unchanged)."""

import json

import pytest
from rest_framework.test import APIClient

from analysis.api.serializers import ReportSerializer, ResultContractSerializer
from analysis.models import AnalysisRun
from analysis.pages.leaderboards import contract
from analysis.runs.tasks import analyze_tournament
from tests import factories
from tests.analysis import builders

pytestmark = pytest.mark.django_db


def api(user=None):
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def test_a_spot_the_bot_report_is_described_key_for_key():
    result, _ = builders.canned_result()
    assert ReportSerializer(result).data == result
    assert ReportSerializer(data=result).is_valid(), ReportSerializer(data=result).errors


def test_an_ab_report_is_described_key_for_key():
    tournament = builders.ab_tournament()
    run = analyze_tournament(tournament, builders.FAST, synchronous=True)
    assert run.status == AnalysisRun.Status.SUCCEEDED, run.error
    assert ReportSerializer(run.result).data == run.result
    assert "automatic_ties" in run.result and run.result["stability"] == {}


def test_the_results_endpoint_answers_what_its_schema_says():
    tournament = builders.bare_tournament()
    run = builders.stored_run(tournament)
    body = api().get(f"/api/tournaments/{tournament.slug}/results/").json()
    described = ResultContractSerializer(contract(run)).data
    assert body == {
        **described,
        "run": {**described["run"], "finished_at": body["run"]["finished_at"]},
    }


def test_the_schema_types_the_result_instead_of_a_free_object():
    schema = api().get("/api/schema/?format=json").json()
    results = schema["paths"]["/api/tournaments/{slug}/results/"]["get"]["responses"]["200"]
    ref = results["content"]["application/json"]["schema"]["$ref"]
    component = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert {"ranking", "survival", "agreement", "run"} <= set(component["properties"])
    assert "/api/analysis-runs/{id}/" in schema["paths"]


def test_runs_are_listed_only_where_their_tournament_is_visible():
    owner = factories.user()
    public = builders.stored_run(builders.bare_tournament(published=True))
    hidden = builders.stored_run(builders.bare_tournament(published=False))
    mine = builders.stored_run(builders.bare_tournament(owner, published=False))
    ids = {r["id"] for r in api(owner).get("/api/analysis-runs/").json()["results"]}
    assert ids == {public.pk, mine.pk}
    assert hidden.pk not in ids
    assert api(owner).get(f"/api/analysis-runs/{hidden.pk}/").status_code == 404


def test_a_run_is_read_with_its_result_and_filtered_by_tournament():
    tournament = builders.bare_tournament(slug="spring")
    run = builders.stored_run(tournament)
    builders.stored_run(builders.bare_tournament())
    rows = api().get("/api/analysis-runs/?tournament=spring").json()["results"]
    assert [r["id"] for r in rows] == [run.pk] and "result" not in rows[0]
    body = api().get(f"/api/analysis-runs/{run.pk}/").json()
    assert body["result"]["ranking"] == run.result["ranking"]


def test_staff_request_an_analysis_and_get_the_same_run_again():
    tournament = builders.spot_the_bot_tournament()
    staff = api(factories.user(staff=True))
    first = staff.post(
        "/api/analysis-runs/",
        {"tournament": tournament.slug, "parameters": builders.FAST},
        format="json",
    )
    assert first.status_code == 201, first.json()
    again = staff.post(
        "/api/analysis-runs/",
        {"tournament": tournament.slug, "parameters": builders.FAST},
        format="json",
    )
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    assert AnalysisRun.objects.filter(tournament=tournament).count() == 1


def test_bad_parameters_are_named():
    tournament = builders.spot_the_bot_tournament()
    response = api(factories.user(staff=True)).post(
        "/api/analysis-runs/",
        {"tournament": tournament.slug, "parameters": {"replicates": -1}},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "parameters.replicates"
    assert not AnalysisRun.objects.exists()


# One action, one rule: POST /api/analysis-runs/ and POST /api/tournaments/<slug>/analyses/
# both let the tournament's owner and staff request an analysis, and nobody else.
REQUESTS = {
    "runs": lambda t: ("/api/analysis-runs/", {"tournament": t.slug, "parameters": builders.FAST}),
    "analyses": lambda t: (f"/api/tournaments/{t.slug}/analyses/", {"parameters": builders.FAST}),
}


@pytest.mark.parametrize("entry", REQUESTS)
def test_the_tournaments_owner_requests_its_analysis_through_either_entry(entry):
    owner = factories.user()
    tournament = builders.spot_the_bot_tournament(owner=owner)
    AnalysisRun.objects.all().delete()  # the builder's own, if it queued one
    url, body = REQUESTS[entry](tournament)
    response = api(owner).post(url, body, format="json")
    assert response.status_code in (200, 201, 202), response.json()
    assert AnalysisRun.objects.filter(tournament=tournament).count() == 1


@pytest.mark.parametrize("entry", REQUESTS)
def test_another_researcher_is_refused_through_either_entry(entry):
    tournament = builders.spot_the_bot_tournament(owner=factories.user(), finish=True)
    assert tournament.published
    AnalysisRun.objects.all().delete()
    url, body = REQUESTS[entry](tournament)
    response = api(factories.user()).post(url, body, format="json")
    assert response.status_code == 403
    assert response.json()["error_count"] == 1
    assert not AnalysisRun.objects.exists()


@pytest.mark.parametrize("entry", REQUESTS)
def test_an_unpublished_tournament_is_not_found_by_others_through_either_entry(entry):
    tournament = builders.spot_the_bot_tournament(owner=factories.user())
    assert not tournament.published
    AnalysisRun.objects.all().delete()
    url, body = REQUESTS[entry](tournament)
    response = api(factories.user()).post(url, body, format="json")
    assert response.status_code == 404
    assert response.json() == {
        "errors": [{"line": None, "message": "Not found."}],
        "error_count": 1,
    }
    assert not AnalysisRun.objects.exists()


def test_a_bipartite_report_with_partners_is_described_key_for_key():
    from analysis.reports import SpotTheBotData, build_report
    from tests.analysis.reports.test_spot_the_bot import spot_the_bot_data

    data = spot_the_bot_data(
        [
            (
                f"{t}-{p}-{n}",
                n,
                [t, p],
                2,
                ["human", "bot"] if t == "good" else ["bot", "human"],
                {},
            )
            for t in ("good", "poor")
            for p in ("alpha", "beta")
            for n in range(4)
        ]
    )
    data = SpotTheBotData(**{**data.__dict__, "partners": ("alpha", "beta")})
    result = json.loads(json.dumps(build_report(data, builders.FAST)))
    assert {row["system"] for row in result["partners"]} == {"alpha", "beta"}
    assert ReportSerializer(result).data == result


# Issue 23, finding 11: a campaign's run is read without a server error ----------------------


def test_a_campaign_run_is_read_with_its_own_result():
    from analysis.runs.tasks import analyze_campaign
    from annotation.models import Campaign
    from tests.analysis.dimensional_builders import imported_study

    owner = factories.user("likert-owner")
    study = imported_study()
    campaign = Campaign.objects.get(study=study, task_kind="likert")
    Campaign.objects.filter(pk=campaign.pk).update(owner=owner)
    run = analyze_campaign(campaign, builders.FAST, synchronous=True)
    assert run.status == AnalysisRun.Status.SUCCEEDED, run.error
    response = api(owner).get(f"/api/analysis-runs/{run.pk}/")
    assert response.status_code == 200
    body = response.json()
    assert (body["tournament"], body["campaign"]) == (None, campaign.slug)
    assert body["result"] == json.loads(json.dumps(run.result))
    assert AnalysisRun.objects.get(pk=run.pk).result["kind"] == "likert"
