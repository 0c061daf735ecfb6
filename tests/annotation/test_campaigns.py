"""Launching on a crowd platform and staff approval of launches that pay crowdworkers
(annotation/campaigns.py: request_launch, decide_launch, launch_campaign, may_launch), and
the campaign page's side of it for owners and staff."""

from decimal import Decimal

import pytest
from django.urls import reverse

from annotation.campaigns import (
    LaunchNotAllowed,
    TransitionRefused,
    decide_launch,
    launch_campaign,
    may_launch,
    place_on_platform,
    request_launch,
)
from annotation.crowd import PROVIDERS
from annotation.crowd.prolific import ProlificProvider
from annotation.models import Campaign, LaunchRequest
from tests import factories
from tests.annotation.builders import ab_campaign

from .crowd.fake_prolific import FakeProlific

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _public_url(settings):
    settings.EVALHUB_PUBLIC_URL = "https://evalhub.example.org"
    settings.EVALHUB_PROLIFIC_TOKEN = "sekrit"


@pytest.fixture
def fake(settings, monkeypatch):
    monkeypatch.setitem(PROVIDERS, "prolific", ProlificProvider(sleep=lambda s: None))
    with FakeProlific() as server:
        settings.EVALHUB_PROLIFIC_API_URL = server.url
        settings.EVALHUB_PROLIFIC_TOKEN = "sekrit"
        yield server


@pytest.fixture
def owner():
    return factories.user("researcher")


@pytest.fixture
def boss():
    return factories.user("boss", staff=True)


def paid(owner, **fields) -> Campaign:
    fields = {
        "status": "draft",
        "provider": "prolific",
        "batch_size": 2,
        "redundancy": 1,
        "reward_per_batch": Decimal("1.00"),
        "owner": owner,
        **fields,
    }
    return ab_campaign(4, **fields)


def test_an_owner_requests_a_paid_launch_once(owner):
    c = paid(owner)
    first = request_launch(c, owner)
    again = request_launch(c, owner)
    assert first.pk == again.pk
    assert (first.state, first.provider, first.places, first.requested_by) == (
        "pending",
        "prolific",
        2,
        owner,
    )
    assert LaunchRequest.objects.filter(campaign=c).count() == 1
    assert not may_launch(owner, c)


def test_someone_elses_campaign_cannot_be_requested(owner):
    c = paid(owner)
    with pytest.raises(LaunchNotAllowed):
        request_launch(c, factories.user("stranger"))
    assert not LaunchRequest.objects.exists()


def test_an_unpaid_campaign_needs_no_request_and_its_owner_launches_it(owner):
    c = paid(owner, provider="local")
    with pytest.raises(TransitionRefused, match="pays no crowdworkers"):
        request_launch(c, owner)
    assert may_launch(owner, c)
    sandbox = paid(owner, provider="mturk", platform_sandbox=True)
    assert may_launch(owner, sandbox)


def test_staff_decline_with_a_reason_the_owner_reads(owner, boss):
    c = paid(owner)
    request_launch(c, owner)
    with pytest.raises(TransitionRefused, match="Say why"):
        decide_launch(c, boss, False, "  ")
    assert LaunchRequest.objects.get().state == "pending"
    declined = decide_launch(c, boss, False, "The reward is below the minimum wage.")
    assert (declined.state, declined.decided_by, declined.reason) == (
        "declined",
        boss,
        "The reward is below the minimum wage.",
    )
    c.refresh_from_db()
    assert c.status == "draft" and not may_launch(owner, c)


def test_only_staff_decide(owner):
    c = paid(owner)
    request_launch(c, owner)
    with pytest.raises(LaunchNotAllowed):
        decide_launch(c, owner, True)
    assert LaunchRequest.objects.get().state == "pending"


def test_approval_launches_the_campaign_on_its_platform(owner, boss, fake):
    c = paid(owner)
    request_launch(c, owner)
    approved = decide_launch(c, boss, True)
    c.refresh_from_db()
    assert approved.state == "approved" and approved.decided_at is not None
    assert (c.status, c.platform_ref) == ("live", "study1")
    assert fake.calls("POST", "studies/study1/transition/")
    assert may_launch(owner, c)


def test_an_approval_covers_only_the_pay_it_was_given_for(owner, boss, fake):
    c = paid(owner)
    request_launch(c, owner)
    decide_launch(c, boss, True)
    Campaign.objects.filter(pk=c.pk).update(reward_per_batch=Decimal("0.10"))
    c.refresh_from_db()
    assert not may_launch(owner, c)


def test_a_changed_campaign_cannot_be_approved_on_an_old_request(owner, boss):
    c = paid(owner)
    request_launch(c, owner)
    Campaign.objects.filter(pk=c.pk).update(reward_per_batch=Decimal("9.00"))
    c.refresh_from_db()
    with pytest.raises(TransitionRefused, match="changed since the request"):
        decide_launch(c, boss, True)
    assert LaunchRequest.objects.get().state == "pending"


def test_a_campaign_live_on_its_link_keeps_it_and_gains_the_platform(client, fake, boss):
    c = ab_campaign(4, batch_size=2, redundancy=1, reward_per_batch=Decimal("1.00"))
    assert c.status == "live"
    c = place_on_platform(c, "prolific", None)
    c = launch_campaign(c, actor=boss, confirm=True)
    assert (c.status, c.provider, c.platform_ref) == ("live", "prolific", "study1")
    # Its link still hands out work to a participant who comes by it.
    assert client.get(c.start_url() + "?worker=by-link").status_code == 302
    assert c.assignments.filter(worker__external_id="link:by-link").exists()


# The campaign page ------------------------------------------------------------------------


def url(name, *args):
    return reverse(f"annotation:{name}", args=args)


def test_the_owner_sees_their_campaign_page_and_others_do_not(client, owner):
    c = paid(owner, provider="local")
    client.force_login(owner)
    assert client.get(url("manage-campaign", c.slug)).status_code == 200
    other = paid(factories.user("someone-else"), provider="local")
    assert client.get(url("manage-campaign", other.slug)).status_code == 403


def test_the_owner_launches_an_unpaid_campaign_from_the_page(client, owner):
    c = paid(owner, provider="local")
    client.force_login(owner)
    client.post(url("manage-campaign-launch", c.slug), {"confirmed": "yes"})
    c.refresh_from_db()
    assert c.status == "live"


def test_the_owner_cannot_launch_a_paid_campaign_but_requests_it(client, owner):
    c = paid(owner)
    client.force_login(owner)
    page = client.get(url("manage-campaign", c.slug)).content.decode()
    assert "Request launch" in page
    response = client.post(url("manage-campaign-launch", c.slug), {"confirmed": "yes"}, follow=True)
    assert "request a launch" in response.content.decode()
    c.refresh_from_db()
    assert c.status == "draft"
    client.post(url("manage-campaign-launch-request", c.slug))
    assert LaunchRequest.objects.get(campaign=c).state == "pending"
    page = client.get(url("manage-campaign", c.slug)).content.decode()
    assert "Waiting for staff" in page and "Approve and launch" not in page


def test_staff_approve_on_the_page_only_with_the_confirmation(client, owner, boss, fake):
    c = paid(owner)
    request_launch(c, owner)
    client.force_login(boss)
    page = client.get(url("manage-campaign", c.slug)).content.decode()
    assert "Approve and launch" in page and "total: 2.86 GBP" in page
    client.post(url("manage-campaign-launch-decision", c.slug), {"decision": "approve"})
    assert LaunchRequest.objects.get().state == "pending"
    client.post(
        url("manage-campaign-launch-decision", c.slug), {"decision": "approve", "confirm": "yes"}
    )
    c.refresh_from_db()
    assert LaunchRequest.objects.get().state == "approved" and c.status == "live"


def test_a_researcher_cannot_post_a_decision(client, owner):
    c = paid(owner)
    request_launch(c, owner)
    client.force_login(owner)
    response = client.post(
        url("manage-campaign-launch-decision", c.slug), {"decision": "approve", "confirm": "yes"}
    )
    assert response.status_code == 403
    assert LaunchRequest.objects.get().state == "pending"


def test_a_production_mturk_launch_by_staff_needs_the_confirmation(client, boss):
    c = paid(None, provider="mturk", platform_sandbox=False)
    client.force_login(boss)
    response = client.post(url("manage-campaign-launch", c.slug), {"confirmed": "yes"}, follow=True)
    assert "confirm it" in response.content.decode()
    c.refresh_from_db()
    assert (c.status, c.platform_ref) == ("draft", "")


# --- A launch that can happen (#24) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "value", "missing"),
    [
        ("EVALHUB_PROLIFIC_TOKEN", "", "EVALHUB_PROLIFIC_TOKEN"),
        ("EVALHUB_PUBLIC_URL", "http://127.0.0.1:8000", "EVALHUB_PUBLIC_URL"),
    ],
)
def test_a_request_is_refused_naming_the_deployments_missing_setting(
    owner, settings, setting, value, missing
):
    setattr(settings, setting, value)
    c = paid(owner)

    with pytest.raises(TransitionRefused, match=missing):
        request_launch(c, owner)

    assert not LaunchRequest.objects.exists()


def test_a_request_without_a_reward_is_refused_and_nothing_stored(owner):
    c = paid(owner, reward_per_batch=Decimal("0.00"))

    with pytest.raises(TransitionRefused, match="reward per batch above 0"):
        request_launch(c, owner)

    assert not LaunchRequest.objects.exists()


def test_a_request_over_budget_is_refused_with_the_cost(owner):
    c = paid(owner, budget=Decimal("1.00"))

    with pytest.raises(TransitionRefused, match="more than the budget of 1.00"):
        request_launch(c, owner)

    assert not LaunchRequest.objects.exists()


def test_a_request_notifies_every_staff_member_once(owner, boss):
    from evalhub.models import Notice

    c = paid(owner)
    request_launch(c, owner)
    request_launch(c, owner)

    [notice] = Notice.objects.filter(user=boss, kind="launch_requested")
    assert c.title in notice.text and notice.url == c.get_absolute_url()


def test_an_approval_the_platform_refuses_changes_nothing(owner, boss, fake):
    from annotation.campaigns import decide_launch

    c = paid(owner)
    request = request_launch(c, owner)
    fake.fail("POST", "studies/", 400)  # Prolific refuses to create the study

    with pytest.raises(TransitionRefused):
        decide_launch(c, boss, approve=True)

    request.refresh_from_db()
    c.refresh_from_db()
    assert request.state == "pending" and c.status == "draft"
    assert not owner.notices.exists()


def test_an_approval_launches_and_tells_the_owner(owner, boss, fake):
    from annotation.campaigns import decide_launch

    c = paid(owner)
    request_launch(c, owner)

    decided = decide_launch(c, boss, approve=True)

    c.refresh_from_db()
    assert decided.state == "approved" and c.status == "live"
    [notice] = owner.notices.filter(kind="launch_decided")
    assert "approved and launched" in notice.text


def test_a_decline_tells_the_owner_why(owner, boss):
    from annotation.campaigns import decide_launch

    c = paid(owner)
    request_launch(c, owner)

    decide_launch(c, boss, approve=False, reason="Lower the reward first.")

    [notice] = owner.notices.filter(kind="launch_decided")
    assert notice.text.endswith("declined: Lower the reward first.")


# A launch over the campaign's budget (the provider's estimate, fees included) -------------


def test_a_launch_over_budget_is_refused_before_the_platform_hears_of_it(fake, boss, settings):
    settings.EVALHUB_PROLIFIC_SERVICE_FEE = 0.5
    c = paid(boss, budget=Decimal("2.99"))  # 2 places x 1.00, plus 50%: 3.00
    with pytest.raises(TransitionRefused, match="would cost 3.00 GBP .* budget of 2.99"):
        launch_campaign(c, actor=boss, confirm=True)
    c.refresh_from_db()
    assert c.status == "draft" and c.platform_ref == "" and fake.requests == []
    Campaign.objects.filter(pk=c.pk).update(budget=Decimal("3.00"))
    c.refresh_from_db()
    assert launch_campaign(c, actor=boss, confirm=True).status == "live"


def test_a_request_over_budget_is_refused_and_nothing_waits_for_staff(owner, settings):
    settings.EVALHUB_PROLIFIC_SERVICE_FEE = 0.5
    c = paid(owner, budget=Decimal("1.00"))
    with pytest.raises(TransitionRefused, match="more than the budget"):
        request_launch(c, owner)
    assert not LaunchRequest.objects.exists()


def test_the_mturk_sandbox_pays_nobody_and_is_not_priced_against_the_budget(owner):
    from annotation.campaigns import budget_problem

    c = paid(owner, provider="mturk", platform_sandbox=True, budget=Decimal("0.01"))
    assert budget_problem(c) is None
