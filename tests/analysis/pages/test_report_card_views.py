"""A system's report card on its profile, and the evidence page of its flagged turns."""

import pytest
from django.urls import reverse
from django.utils import timezone

from analysis.models import AnalysisRun
from evalhub.models import System
from tests import factories
from tests.analysis.dialogue_world import build_world
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db

BEHAVIOURS = {
    "rates": [
        {"system": "alpha", "label": "self contradiction", "group": "undesirable", "rate": 0.01,
         "low": 0.0, "high": 0.05, "n_turns": 80},
        {"system": "beta", "label": "self contradiction", "group": "undesirable", "rate": 0.30,
         "low": 0.2, "high": 0.4, "n_turns": 80},
    ]
}  # fmt: skip


def succeeded_run(**subject):
    result = subject.pop("result")
    return AnalysisRun.objects.create(
        **subject,
        parameters={},
        parameters_digest="p",
        inputs_digest=f"i{AnalysisRun.objects.count()}",
        status=AnalysisRun.Status.SUCCEEDED,
        finished_at=timezone.now(),
        result=result,
    )


@pytest.fixture
def world():
    world = build_world()
    succeeded_run(
        campaign=world["campaign"],
        result={"kind": "abc_eval", "systems": ["alpha", "beta"], "behaviours": BEHAVIOURS},
    )
    features = {"win_rates": {"alpha": {"fluency": {"win_rate": 0.9, "wins": 18, "losses": 2}}}}
    succeeded_run(
        tournament=Tournament.objects.get(slug="stb"),
        result={
            "kind": "spot_the_bot",
            "systems": ["alpha", "beta"],
            "ranking": [{"system": "alpha", "win_rate": 0.8, "rank_range": [1, 1], "cluster": 1}],
            "bradley_terry": [],
            "features": features,
        },
    )
    return world


def profile(client, slug="alpha"):
    return client.get(reverse("system-detail", args=[slug]))


def test_visitors_see_published_tournaments_only(client, world):
    page = profile(client)
    html = page.content.decode()
    assert page.status_code == 200 and 'data-testid="report-card"' in html
    assert html.count('data-testid="evaluation"') == 1
    assert "STB" in html and "fluency" in html and 'data-verdict="strength"' in html
    assert "self contradiction" not in html  # the campaign's results are for its managers


def test_staff_see_the_campaign_with_behaviours_linked_to_the_evidence(client, world):
    client.force_login(factories.user("boss", staff=True))
    html = profile(client).content.decode()
    assert html.count('data-testid="evaluation"') == 2
    evidence = reverse("analysis:behaviour-evidence", args=["alpha", "self contradiction"])
    assert f'href="{evidence}"' in html


def test_a_beta_weakness_shows_on_betas_card(client, world):
    client.force_login(factories.user("boss", staff=True))
    html = profile(client, "beta").content.decode()
    assert 'data-verdict="weakness"' in html


def test_a_system_without_analyses_says_so(client, world):
    factories.system(slug="lonely")
    html = profile(client, "lonely").content.decode()
    assert "No analysed evaluation of this system" in html


def test_the_evidence_lists_the_flagged_bot_turns(client, world):
    client.force_login(factories.user("boss", staff=True))
    page = client.get(reverse("analysis:behaviour-evidence", args=["beta", "self contradiction"]))
    turns = page.context["turns"]
    assert page.status_code == 200 and page.context["total"] == 1
    assert (turns[0].conversation, turns[0].position) == ("h-beta", 1)
    assert (turns[0].flagged, turns[0].annotations) == (1, 1)
    assert turns[0].text in page.content.decode()


def test_the_evidence_is_empty_for_those_who_may_not_see_the_campaign(client, world):
    page = client.get(reverse("analysis:behaviour-evidence", args=["beta", "self contradiction"]))
    assert page.status_code == 200 and page.context["turns"] == []
    assert 'data-testid="no-evidence"' in page.content.decode()


def test_the_evidence_of_a_private_system_is_404_for_others(client, world):
    url = reverse("analysis:behaviour-evidence", args=["secret", "redundant"])
    assert client.get(url).status_code == 404
    client.force_login(factories.user("boss", staff=True))
    assert client.get(url).status_code == 200
    assert System.objects.get(slug="secret").visibility == "private"
