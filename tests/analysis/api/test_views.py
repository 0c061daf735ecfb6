"""GET /api/tournaments/<slug>/results/: the latest successful run's result contract."""

import pytest
from django.urls import reverse

from analysis.models import AnalysisRun
from tests import factories
from tests.analysis import builders

pytestmark = pytest.mark.django_db


def url(tournament):
    return reverse("api-tournament-results", args=[tournament.slug])


def test_it_returns_the_latest_successful_result(client):
    tournament = builders.bare_tournament()
    builders.stored_run(tournament)
    latest = builders.stored_run(tournament)
    builders.stored_run(tournament, status=AnalysisRun.Status.FAILED, error="later failure")
    response = client.get(url(tournament))
    assert response.status_code == 200
    body = response.json()
    assert body["run"]["id"] == latest.pk
    assert body["run"]["inputs_digest"] == latest.inputs_digest
    assert body["run"]["parameters"]["replicates"] == 100
    assert body["tournament"] == tournament.slug
    assert body["ranking"] == latest.result["ranking"]
    assert set(body) >= {"systems", "judgments", "pairwise", "bradley_terry", "survival"}


def test_it_handles_a_tournament_without_results(client):
    tournament = builders.bare_tournament()
    builders.stored_run(tournament, status=AnalysisRun.Status.RUNNING)
    assert client.get(url(tournament)).status_code == 404


def test_it_handles_a_missing_tournament(client):
    assert client.get("/api/tournaments/no-such-thing/results/").status_code == 404


@pytest.mark.parametrize(
    ("who", "status"), [("anonymous", 404), ("researcher", 404), ("owner", 200), ("staff", 200)]
)
def test_it_keeps_unpublished_results_private(client, who, status):
    owner = factories.user()
    tournament = builders.bare_tournament(owner, published=False)
    builders.stored_run(tournament)
    if who != "anonymous":
        user = {
            "owner": owner,
            "researcher": factories.user(),
            "staff": factories.user(staff=True),
        }[who]
        client.force_login(user)
    assert client.get(url(tournament)).status_code == status


def test_it_accepts_a_token(client):
    owner = factories.user()
    tournament = builders.bare_tournament(owner, published=False)
    builders.stored_run(tournament)

    token = factories.api_token(owner)
    response = client.get(url(tournament), HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 200


def test_it_only_allows_get(client):
    tournament = builders.bare_tournament()
    builders.stored_run(tournament)
    client.force_login(factories.user(staff=True))
    assert client.post(url(tournament)).status_code == 405


def analyses_url(tournament):
    return reverse("api-tournament-analyses", args=[tournament.slug])


def test_the_analysis_settings_list_the_presets_and_parameters(client):
    tournament = builders.bare_tournament()
    body = client.get(analyses_url(tournament)).json()
    assert body["presets"]["as-published"]["parameters"]["pair_test"] == "chi-square-2x2"
    assert body["presets"]["defaults"]["parameters"]["logrank_variance"] == "permutation"
    assert "logrank_imputations" in {row["name"] for row in body["parameters"]}


def test_the_owner_requests_the_published_preset_through_the_api(
    client, django_capture_on_commit_callbacks
):
    owner = factories.user("owner")
    tournament = builders.spot_the_bot_tournament(owner=owner)
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(
            analyses_url(tournament),
            {"preset": "as-published", "parameters": {"seed": 5}},
            content_type="application/json",
        )
    assert response.status_code == 202
    run = AnalysisRun.objects.get(pk=response.json()["id"])
    assert run.parameters["pair_test"] == "chi-square-2x2" and run.parameters["seed"] == 5
    assert response.json()["parameters"] == run.parameters


def test_a_wrong_parameter_is_answered_with_its_name(client):
    owner = factories.user("owner")
    tournament = builders.spot_the_bot_tournament(owner=owner)
    client.force_login(owner)
    response = client.post(
        analyses_url(tournament),
        {"preset": "as-published", "parameters": {"logrank_variance": "guess"}},
        content_type="application/json",
    )
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert error["field"] == "parameters.logrank_variance"
    assert not AnalysisRun.objects.exists()


def test_others_may_not_request_an_analysis(client):
    tournament = builders.spot_the_bot_tournament(owner=factories.user("owner"))
    assert client.post(
        analyses_url(tournament), {}, content_type="application/json"
    ).status_code in (401, 403)
    client.force_login(factories.user("someone"))
    response = client.post(analyses_url(tournament), {}, content_type="application/json")
    assert response.status_code == 404  # unpublished: it does not exist for them
    tournament.published = True
    tournament.save(update_fields=["published"])
    response = client.post(analyses_url(tournament), {}, content_type="application/json")
    assert response.status_code == 403
    assert not AnalysisRun.objects.exists()
