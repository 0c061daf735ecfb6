"""The crowd and launch-approval REST API (annotation/api/crowd.py)."""

from decimal import Decimal

import boto3
import pytest
from botocore.stub import Stubber
from rest_framework.test import APIClient

from annotation.crowd import PROVIDERS
from annotation.crowd.mturk import MTurkProvider
from annotation.crowd.prolific import ProlificProvider
from annotation.models import Assignment, Campaign, LaunchRequest
from tests import factories
from tests.annotation.builders import ab_campaign
from tests.annotation.crowd.fake_prolific import FakeProlific
from tests.annotation.test_review_queue import assignments, submitted

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _public_url(settings):
    settings.EVALHUB_PUBLIC_URL = "https://evalhub.example.org"


@pytest.fixture
def stub(monkeypatch):
    client = boto3.client(
        "mturk", region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t"
    )
    monkeypatch.setitem(
        PROVIDERS, "mturk", MTurkProvider(client_factory=lambda s: client, sleep=lambda s: None)
    )
    with Stubber(client) as stubber:
        yield stubber
        stubber.assert_no_pending_responses()


@pytest.fixture
def fake(settings, monkeypatch):
    monkeypatch.setitem(PROVIDERS, "prolific", ProlificProvider(sleep=lambda s: None))
    with FakeProlific() as server:
        settings.EVALHUB_PROLIFIC_API_URL = server.url
        settings.EVALHUB_PROLIFIC_TOKEN = "sekrit"
        yield server


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def path(c, rest):
    return f"/api/campaigns/{c.slug}/{rest}"


@pytest.fixture
def boss():
    return factories.user("boss", staff=True)


@pytest.fixture
def owner():
    return factories.user("researcher")


def draft(owner=None, **fields):
    fields = {
        "status": "draft",
        "batch_size": 2,
        "redundancy": 2,
        "reward_per_batch": Decimal("0.40"),
        "owner": owner,
        **fields,
    }
    return ab_campaign(4, **fields)


def test_estimate_gives_the_owner_the_cost_without_the_operators_balance(stub, owner):
    c = draft(owner, provider="mturk")
    stub.add_response("get_account_balance", {"AvailableBalance": "1.00"}, {})
    body = api(owner).get(path(c, "crowd/estimate/")).json()
    assert (body["total"], body["balance"], body["affordable"]) == ("1.92", None, None)


def test_estimate_gives_staff_the_cost_and_the_balance(stub, boss):
    c = draft(None, provider="mturk")
    stub.add_response("get_account_balance", {"AvailableBalance": "1.00"}, {})
    answer = api(boss).get(path(c, "crowd/estimate/"))
    assert answer.status_code == 200
    body = answer.json()
    assert (body["places"], body["total"], body["balance"], body["affordable"]) == (
        4,
        "1.92",
        "1.00",
        False,
    )


def test_strangers_get_404_for_a_private_campaign_as_if_it_did_not_exist(owner):
    from annotation.models import Item

    c = draft(owner)
    hidden = factories.system(visibility="private")
    response = factories.submission(hidden, factories.prompt_set(1)).responses.get()
    Item.objects.filter(campaign=c, position=0).update(response_a=response)
    assert not c.is_public()  # it shows a private system's output
    stranger = api(factories.user("x"))
    not_found = {"errors": [{"line": None, "message": "Not found."}], "error_count": 1}
    for method, rest in [
        ("get", "crowd/estimate/"),
        ("post", "crowd/launch/"),
        ("get", "launch-request/"),
        ("post", "launch-request/"),
    ]:
        response = getattr(stranger, method)(path(c, rest), {}, format="json")
        assert (response.status_code, response.json()) == (404, not_found), rest
    assert not LaunchRequest.objects.exists()
    c.refresh_from_db()
    assert c.status == "draft"


def test_strangers_get_403_and_visitors_401(owner):
    c = draft(owner)
    assert api(factories.user("x")).get(path(c, "crowd/estimate/")).status_code == 403
    assert api().get(path(c, "crowd/estimate/")).status_code in (401, 403)
    assert api(owner).post(path(c, "crowd/sync/")).status_code == 403


def test_staff_launch_on_the_sandbox_places_and_launches(stub, boss):
    c = draft()
    stub.add_response(
        "create_qualification_type", {"QualificationType": {"QualificationTypeId": "B"}}, None
    )
    stub.add_response("create_hit_type", {"HITTypeId": "HT"}, None)
    stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "H1"}}, None)
    stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "H2"}}, None)
    answer = api(boss).post(
        path(c, "crowd/launch/"), {"provider": "mturk", "sandbox": True}, format="json"
    )
    assert answer.status_code == 200, answer.json()
    assert answer.json() == {
        "slug": c.slug,
        "status": "live",
        "provider": "mturk",
        "platform_sandbox": True,
        "platform_ref": "HT",
    }


def test_a_paid_launch_without_confirm_is_a_400_in_the_one_shape(fake, boss):
    c = draft(provider="prolific")
    answer = api(boss).post(path(c, "crowd/launch/"), {}, format="json")
    assert answer.status_code == 400
    assert answer.json()["error_count"] == 1 and "pays real money" in str(answer.json())
    c.refresh_from_db()
    assert (c.status, c.platform_ref) == ("draft", "")


def test_an_owner_cannot_launch_a_paid_campaign_before_approval(fake, owner):
    c = draft(owner, provider="prolific")
    answer = api(owner).post(path(c, "crowd/launch/"), {"confirm": True}, format="json")
    assert answer.status_code == 403
    assert Campaign.objects.get(pk=c.pk).status == "draft" and not fake.requests


def test_a_refused_launch_leaves_the_campaign_on_its_link(fake, owner):
    c = draft(owner)
    answer = api(owner).post(
        path(c, "crowd/launch/"), {"provider": "prolific", "confirm": True}, format="json"
    )
    assert answer.status_code == 403
    c.refresh_from_db()
    assert (c.provider, c.status) == ("local", "draft")


def test_request_then_decline_then_request_and_approve(fake, owner, boss):
    c = draft(owner)
    answer = api(owner).post(path(c, "launch-request/"), {"provider": "prolific"}, format="json")
    assert answer.status_code == 201
    assert answer.json()["state"] == "pending" and answer.json()["provider"] == "prolific"
    assert (
        api(owner).post(path(c, "launch-request/decision/"), {"approve": True}).status_code == 403
    )
    no_reason = api(boss).post(
        path(c, "launch-request/decision/"), {"approve": False}, format="json"
    )
    assert no_reason.status_code == 400 and no_reason.json()["errors"][0]["field"] == "reason"
    declined = api(boss).post(
        path(c, "launch-request/decision/"),
        {"approve": False, "reason": "Too little pay."},
        format="json",
    )
    assert declined.json()["state"] == "declined" and declined.json()["decided_by"] == "boss"
    assert api(owner).get(path(c, "launch-request/")).json()["reason"] == "Too little pay."
    api(owner).post(path(c, "launch-request/"), {}, format="json")
    approved = api(boss).post(path(c, "launch-request/decision/"), {"approve": True}, format="json")
    assert approved.status_code == 200
    assert approved.json()["state"] == "approved" and approved.json()["campaign_status"] == "live"
    assert LaunchRequest.objects.filter(campaign=c).count() == 2


def test_review_lists_and_approves_in_bulk(boss):
    c = submitted(2)
    rows = api(boss).get(path(c, "crowd/review/")).json()
    assert [r["platform_worker_id"] for r in rows] == ["w0", "w1"]
    assert rows[0]["agreement"] == {"hits": 2, "total": 2, "value": 1.0}
    ids = [r["assignment"] for r in rows]
    answer = api(boss).post(
        path(c, "crowd/review/"), {"action": "approve", "assignments": ids}, format="json"
    )
    assert answer.status_code == 200 and sorted(answer.json()["done"]) == sorted(ids)
    assert Assignment.objects.filter(campaign=c, status="approved").count() == 2


def test_review_reject_needs_a_reason(boss):
    c = submitted(1)
    ids = [str(assignments(c)[0].public_id)]
    answer = api(boss).post(
        path(c, "crowd/review/"), {"action": "reject", "assignments": ids}, format="json"
    )
    assert answer.status_code == 400 and answer.json()["errors"][0]["field"] == "reason"
    assert Assignment.objects.get(public_id=ids[0]).status == "submitted"


def test_pay_and_finish(boss):
    c = submitted(1)
    assert api(boss).post(path(c, "crowd/pay/"), {}, format="json").json() == {"approved": 1}
    finish = api(boss).post(path(c, "crowd/finish/")).json()
    assert finish == {"status": "finished", "waiting_for_review": 0, "cleaned_up": True}
