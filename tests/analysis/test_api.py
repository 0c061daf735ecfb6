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
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=owner)
    response = client.get(url(tournament), HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 200


def test_it_only_allows_get(client):
    tournament = builders.bare_tournament()
    builders.stored_run(tournament)
    client.force_login(factories.user(staff=True))
    assert client.post(url(tournament)).status_code == 405
