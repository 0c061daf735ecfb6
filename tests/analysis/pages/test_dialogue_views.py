"""The Alexa metrics page: the metric table and the three unified rankings, by visibility."""

import pytest
from django.urls import reverse

from analysis.pages import dialogue_views
from tests import factories
from tests.analysis.dialogue_world import build_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return build_world()


def url(scope, name):
    return reverse("analysis:dialogue-metrics", args=[scope, name])


def test_a_domain_page_shows_the_metric_table_and_the_rankings(client, world):
    page = client.get(url("domain", "chitchat"))
    html = page.content.decode()
    assert page.status_code == 200
    assert 'data-testid="metric-table"' in html
    for key in ("stack", "winners_circle", "confidence_bands"):
        assert f'data-testid="ranking-{key}"' in html
    result = page.context["result"]
    # Anonymous visitors see the public systems only: 4 of the 5 system-conversations.
    assert [s["system"] for s in result["systems"]] == ["alpha", "beta"]
    assert result["conversations"] == 4 and "secret" not in html
    alpha = next(s for s in result["systems"] if s["system"] == "alpha")
    assert alpha["median_duration"]["value"] == 60  # h-alpha; bb-1 has no timestamps
    assert "Coherence: response error rate" in html and "Total score" in html


def test_the_page_says_each_metrics_method_and_checks_them_against_ratings(client, world):
    page = client.get(url("domain", "chitchat"))
    html = page.content.decode()
    validity = page.context["validity"]
    assert page.status_code == 200
    assert 'data-testid="methods"' in html and "fine-grained topical keywords" in html
    assert 'data-testid="validity"' in html and "Unified totals (Table 4)" in html
    # Two rated systems: no per-system correlation has the three points it needs.
    assert all(row["n"] <= 2 and row["pearson"] is None for row in validity["systems"])
    assert [row["label"] for row in validity["unified"]][0] == "Stack ranking"


def test_the_page_shows_the_bots_text_metrics_of_the_visible_systems(client, world):
    page = client.get(url("domain", "chitchat"))
    html = page.content.decode()
    assert 'data-testid="text-table"' in html
    rows = page.context["text_rows"]
    assert [r["system"] for r in rows] == ["alpha", "beta"]  # not the private one
    # Every bot turn of the world's conversations says one of MUSIC's lines.
    assert all(r["mean_turn_length"] > 0 and 0 < r["distinct_1"] <= 1 for r in rows)


def test_staff_see_private_systems_too(client, world):
    client.force_login(factories.user("boss", staff=True))
    result = client.get(url("domain", "chitchat")).context["result"]
    assert [s["system"] for s in result["systems"]] == ["alpha", "beta", "secret"]


def test_the_owner_sees_their_private_system(client, world):
    owner = factories.user("owner")
    world["secret"].owner = owner
    world["secret"].save()
    client.force_login(owner)
    result = client.get(url("domain", "chitchat")).context["result"]
    assert "secret" in [s["system"] for s in result["systems"]]


def test_studies_and_campaigns_are_for_staff(client, world):
    assert client.get(url("study", "abc-study")).status_code == 404
    client.force_login(factories.user("boss", staff=True))
    page = client.get(url("study", "abc-study"))
    assert page.status_code == 200
    assert page.context["result"]["scope"] == {"kind": "study", "name": "abc-study"}


def test_an_unpublished_tournament_is_hidden(client, world):
    from tournaments.models import Tournament

    Tournament.objects.filter(slug="stb").update(published=False)
    assert client.get(url("tournament", "stb")).status_code == 404
    Tournament.objects.filter(slug="stb").update(published=True)
    assert client.get(url("tournament", "stb")).status_code == 200


@pytest.mark.parametrize(("scope", "name"), [("domain", "nowhere"), ("galaxy", "x")])
def test_unknown_scopes_are_404(client, world, scope, name):
    assert client.get(url(scope, name)).status_code == 404


def test_a_set_too_large_points_to_the_command(client, world, monkeypatch):
    monkeypatch.setattr(dialogue_views, "MAX_CONVERSATIONS", 2)
    html = client.get(url("domain", "chitchat")).content.decode()
    assert 'data-testid="too-many"' in html and "analyze_dialogues domain chitchat" in html


def test_a_scope_of_only_private_systems_has_nothing_to_show(client, world):
    from evalhub.models import System

    System.objects.filter(slug="alpha").update(visibility="private")
    html = client.get(url("domain", "elsewhere")).content.decode()
    assert 'data-testid="nothing"' in html and "alpha" not in html.split("<main")[-1]
