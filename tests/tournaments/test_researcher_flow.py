"""A researcher runs a tournament without the admin: seed domains, partner sets, and the
collect / generate / launch / progress steps in the API, each refused to others."""

import pytest
from django.urls import reverse

from annotation.crowd.local import LocalProvider
from endpoints.models import BotEndpoint
from evalhub import limits
from evalhub.errors import UserInputError
from evalhub.models import System
from tests import factories
from tests.tournaments.test_api import client_for
from tests.tournaments.test_views import conversation, load, spot
from tournaments.models import PartnerSet
from tournaments.researcher_flow import (
    create_partner_set,
    request_tournament_launch,
    seed_domains,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return factories.user("owner")


@pytest.fixture
def other():
    return factories.user("other")


def api(tournament, step):
    return f"/api/tournaments/{tournament.slug}/{step}/"


# Seed domains ---------------------------------------------------------------------------


def test_seed_domains_are_those_with_human_human_conversations():
    load(
        [
            conversation("g1", ["human", "human"], domain="garden"),
            conversation("g2", ["human", "human"], domain="garden"),
            conversation("k1", ["human", "human"], domain="kitchen"),
            # Bot-bot conversations seed nothing.
            conversation("b1", ["a", "b"], domain="bots-only"),
        ]
    )
    expected = [{"domain": "garden", "conversations": 2}, {"domain": "kitchen", "conversations": 1}]
    assert seed_domains(None) == expected
    assert client_for().get("/api/seed-domains/").json() == expected


def test_the_form_offers_the_seed_domains(client, owner):
    load([conversation("g1", ["human", "human"], domain="garden")])
    client.force_login(owner)
    page = client.get(reverse("tournaments:create-spot-the-bot")).content.decode()
    assert 'list="seed-domains"' in page and '<option value="garden">' in page


# Partner sets ---------------------------------------------------------------------------


def test_a_researcher_creates_a_partner_set_of_visible_systems(owner):
    public = [factories.system(None, slug=s) for s in ("p1", "p2")]
    partner_set = create_partner_set(
        user=owner, name="Partners", slug="partners", systems=["p1", "p2"]
    )
    assert partner_set.version == 1
    assert sorted(partner_set.systems.values_list("slug", flat=True)) == ["p1", "p2"]
    assert set(partner_set.systems.all()) == set(public)


@pytest.mark.parametrize(
    ("systems", "field", "message"),
    [
        (["p1"], "systems", "from 2 to 50 partner systems, not 1"),
        (["p1", "nope"], "systems", "No such system: nope."),
        (["p1", "private"], "systems", "No such system: private."),
    ],
)
def test_partner_set_problems_name_their_field(owner, other, systems, field, message):
    factories.system(None, slug="p1")
    factories.system(other, slug="private", visibility=System.Visibility.PRIVATE)
    with pytest.raises(UserInputError) as raised:
        create_partner_set(user=owner, name="P", slug="p", systems=systems)
    (problem,) = raised.value.shown
    assert problem.field == field and message in problem.message
    assert not PartnerSet.objects.exists()


def test_partner_sets_through_the_api(owner):
    for s in ("p1", "p2"):
        factories.system(None, slug=s)
    body = {"name": "Partners", "slug": "partners", "systems": ["p1", "p2"]}
    assert client_for().post("/api/partner-sets/", body, format="json").status_code in (401, 403)
    response = client_for(owner).post("/api/partner-sets/", body, format="json")
    assert response.status_code == 201
    assert response.json() == {
        "slug": "partners",
        "version": 1,
        "name": "Partners",
        "description": "",
        "systems": ["p1", "p2"],
    }
    again = client_for(owner).post("/api/partner-sets/", body, format="json")
    assert again.status_code == 400
    assert again.json()["errors"][0]["field"] == "slug"
    assert PartnerSet.objects.count() == 1
    assert [s["slug"] for s in client_for().get("/api/partner-sets/").json()] == ["partners"]


def test_the_partner_set_page(client, owner):
    for s in ("p1", "p2"):
        factories.system(None, slug=s)
    client.force_login(owner)
    url = reverse("tournaments:create-partner-set")
    assert client.get(url).status_code == 200
    refused = client.post(url, {"name": "P", "slug": "p", "systems": ["p1"]})
    assert refused.status_code == 400 and "not 1" in refused.content.decode()
    response = client.post(url, {"name": "P", "slug": "p", "systems": ["p1", "p2"]})
    assert response.status_code == 302
    assert PartnerSet.objects.get(slug="p").systems.count() == 2


# The tournament's steps in the API -------------------------------------------------------


def test_the_owner_collects_through_the_api_and_others_are_refused(owner, other, monkeypatch):
    from tournaments import tasks

    queued = []
    monkeypatch.setattr(tasks.collect_tournament, "delay", lambda pk: queued.append(pk))
    t = spot(owner, schedule="all-play-all", conversations_per_pair=2)
    load([conversation("seed-0", ["human", "human"])])
    for system in t.systems.all():
        BotEndpoint.objects.create(
            system=system, url="http://127.0.0.1:9/", allow_other_owners=True
        )
    assert client_for(other).post(api(t, "collect")).status_code == 404  # unpublished
    t.published = True
    t.save(update_fields=["published"])
    assert client_for(other).post(api(t, "collect")).status_code == 403
    assert queued == []
    response = client_for(owner).post(api(t, "collect"))
    assert response.status_code == 202 and queued == [t.pk]
    progress = client_for(owner).get(api(t, "progress"))
    assert progress.status_code == 200
    # The queued task writes the plan; until it runs nothing is collected.
    assert progress.json()["collection"] == {
        "pending": 0,
        "running": 0,
        "complete": 0,
        "failed": 0,
        "total": 0,
    }
    assert progress.json()["campaign"] is None
    assert client_for(other).get(api(t, "progress")).status_code == 403


def test_collect_problems_come_back_as_errors(owner, monkeypatch):
    from tournaments import tasks

    monkeypatch.setattr(tasks.collect_tournament, "delay", lambda pk: pytest.fail("queued"))
    t = spot(owner, schedule="all-play-all")
    response = client_for(owner).post(api(t, "collect"))
    assert response.status_code == 400
    assert "no bot endpoint" in response.json()["errors"][0]["message"]


def test_the_owner_generates_and_launches_through_the_api(owner, other, monkeypatch):
    launched = []
    monkeypatch.setattr(
        LocalProvider, "launch", lambda self, campaign, **kw: launched.append(campaign.slug)
    )
    t = spot(owner, published=True)
    assert client_for(other).post(api(t, "generate")).status_code == 403
    response = client_for(owner).post(api(t, "generate"))
    assert response.status_code == 201
    t.refresh_from_db()
    assert t.campaign is not None and response.json()["campaign"] == t.campaign.slug
    assert client_for(other).post(api(t, "launch")).status_code == 403
    response = client_for(owner).post(api(t, "launch"))
    assert response.status_code == 200 and response.json()["status"] == "annotating"
    t.refresh_from_db()
    assert t.campaign.status == "live" and launched == [t.campaign.slug]
    progress = client_for(owner).get(api(t, "progress")).json()
    assert progress["campaign"]["judgments"] == 0 and progress["campaign"]["items_needed"] > 0


def test_launch_before_generating_is_refused(owner):
    t = spot(owner)
    response = client_for(owner).post(api(t, "launch"))
    assert response.status_code == 400
    assert "Generate the campaign" in response.json()["errors"][0]["message"]


def test_launch_files_a_request_where_staff_approve_launches(owner, monkeypatch):
    """The hook: with launch approval (annotation.campaigns.may_launch / request_launch), a
    researcher who may not launch gets a pending request and the campaign stays a draft."""
    from annotation import campaigns
    from tournaments import spot_the_bot_campaign

    t = spot(owner)
    spot_the_bot_campaign.generate_campaign(t)
    t.refresh_from_db()
    requests = []
    monkeypatch.setattr(campaigns, "may_launch", lambda user, campaign: False, raising=False)
    monkeypatch.setattr(
        campaigns,
        "request_launch",
        lambda campaign, user: requests.append((campaign.slug, user)) or "pending",
        raising=False,
    )
    outcome = request_tournament_launch(t, owner)
    assert not outcome.launched and outcome.request == "pending"
    assert requests == [(t.campaign.slug, owner)]
    t.campaign.refresh_from_db()
    assert t.campaign.status == "draft"


@pytest.mark.parametrize(
    ("field", "limit"), [("name", limits.NAME_CHARS), ("description", limits.DESCRIPTION_CHARS)]
)
def test_a_partner_set_text_over_its_limit_is_refused(owner, field, limit):
    for s in ("p1", "p2"):
        factories.system(None, slug=s)
    texts = {"name": "Partners", "description": "", field: "x" * (limit + 1)}
    with pytest.raises(UserInputError) as raised:
        create_partner_set(user=owner, slug="partners", systems=["p1", "p2"], **texts)
    (problem,) = raised.value.shown
    assert problem.field == field
    assert problem.message == f"At most {limit:,} characters ({limit + 1:,} given)."
    assert not PartnerSet.objects.exists()


def test_the_api_refuses_a_partner_set_description_over_its_limit(owner):
    for s in ("p1", "p2"):
        factories.system(None, slug=s)
    body = {
        "name": "Partners",
        "slug": "partners",
        "description": "x" * (limits.DESCRIPTION_CHARS + 1),
        "systems": ["p1", "p2"],
    }
    response = client_for(owner).post("/api/partner-sets/", body, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "description"
    assert not PartnerSet.objects.exists()


def test_generate_through_the_api_refuses_a_campaign_past_the_quota(settings, owner):
    settings.EVALHUB_QUOTA_CAMPAIGNS = 0
    t = spot(owner, published=True)
    response = client_for(owner).post(api(t, "generate"))
    assert response.status_code == 400
    assert "(EVALHUB_QUOTA_CAMPAIGNS=0)" in response.json()["errors"][0]["message"]
    t.refresh_from_db()
    assert t.campaign is None
