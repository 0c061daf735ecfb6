"""The webhook API (webhooks/api/views.py): an owner subscribes (the secret answered once),
reads, lists and deletes their own subscriptions, reads the delivery log and sends a test
event; nobody else sees them; errors in the one shape."""

import pytest
from rest_framework.test import APIClient

from tests import factories
from webhooks.models import Delivery, Subscription

from .builders import subscribe
from .subscriber import Subscriber

pytestmark = pytest.mark.django_db

LIST = "/api/webhooks/"


def client_for(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {factories.api_token(user)}")
    return client


@pytest.fixture
def owner():
    return factories.user("owner")


def test_it_subscribes_and_answers_the_secret_once(owner):
    answer = client_for(owner).post(
        LIST,
        {"url": "https://hooks.example.org/in", "events": ["analysis.ready"]},
        format="json",
    )
    assert answer.status_code == 201
    made = Subscription.objects.get(owner=owner)
    assert answer.json()["secret"] == made.secret and made.secret.startswith("whsec_")
    assert (answer.json()["id"], made.events) == (str(made.public_id), ["analysis.ready"])
    again = client_for(owner).get(f"{LIST}{made.public_id}/")
    assert again.status_code == 200 and "secret" not in again.json()


def test_it_refuses_unknown_and_missing_events_in_the_one_shape(owner):
    api = client_for(owner)
    unknown = api.post(LIST, {"url": "https://h.example.org/", "events": ["nope"]}, format="json")
    empty = api.post(LIST, {"url": "https://h.example.org/", "events": []}, format="json")
    assert unknown.status_code == empty.status_code == 400
    assert unknown.json()["errors"][0]["field"] == "events.0"
    assert empty.json()["errors"][0]["field"] == "events"
    assert not Subscription.objects.exists()


def test_it_refuses_a_url_that_is_not_http(owner):
    answer = client_for(owner).post(
        LIST, {"url": "ftp://h.example.org/", "events": ["analysis.ready"]}, format="json"
    )
    assert answer.status_code == 400 and answer.json()["errors"][0]["field"] == "url"
    assert not Subscription.objects.exists()


def test_it_holds_the_quota(owner, settings):
    settings.EVALHUB_QUOTA_WEBHOOKS = 1
    subscribe(owner, "https://h.example.org/1")
    answer = client_for(owner).post(
        LIST, {"url": "https://h.example.org/2", "events": ["analysis.ready"]}, format="json"
    )
    assert answer.status_code == 400
    assert "EVALHUB_QUOTA_WEBHOOKS=1" in answer.json()["errors"][0]["message"]
    assert Subscription.objects.count() == 1


def test_it_lists_only_the_callers_own(owner):
    mine, _ = subscribe(owner, "https://h.example.org/mine")
    subscribe(factories.user("other"), "https://h.example.org/theirs")
    answer = client_for(owner).get(LIST)
    assert answer.status_code == 200
    assert [s["id"] for s in answer.json()["results"]] == [str(mine.public_id)]


def test_another_account_gets_404_even_staff(owner):
    made, _ = subscribe(owner, "https://h.example.org/mine")
    for stranger in (factories.user("other"), factories.user("boss", staff=True)):
        api = client_for(stranger)
        assert api.get(f"{LIST}{made.public_id}/").status_code == 404
        assert api.delete(f"{LIST}{made.public_id}/").status_code == 404
        assert api.get(f"{LIST}{made.public_id}/deliveries/").status_code == 404
        assert api.post(f"{LIST}{made.public_id}/test/").status_code == 404
    assert Subscription.objects.filter(pk=made.pk).exists()
    assert not Delivery.objects.exists()


def test_it_needs_a_signed_in_caller():
    answer = APIClient().get(LIST)
    assert answer.status_code == 401
    assert answer.json()["error_count"] == 1


def test_it_only_allows_its_methods(owner):
    made, _ = subscribe(owner, "https://h.example.org/mine")
    answer = client_for(owner).put(f"{LIST}{made.public_id}/", {}, format="json")
    assert answer.status_code == 405
    assert answer.json()["errors"][0]["message"]


def test_the_owner_deletes_it(owner):
    made, _ = subscribe(owner, "https://h.example.org/mine")
    assert client_for(owner).delete(f"{LIST}{made.public_id}/").status_code == 204
    assert not Subscription.objects.exists()


def test_a_test_event_is_sent_signed_and_logged(owner, django_capture_on_commit_callbacks):
    with Subscriber() as server:
        made, secret = subscribe(owner, server.url, ["analysis.ready"])
        with django_capture_on_commit_callbacks(execute=True):
            answer = client_for(owner).post(f"{LIST}{made.public_id}/test/")
    assert answer.status_code == 202
    [message] = server.verified(secret)
    assert message["type"] == "webhook.test"
    assert message["data"]["subscription"] == str(made.public_id)
    log = client_for(owner).get(f"{LIST}{made.public_id}/deliveries/").json()
    [entry] = log["results"]
    assert (entry["event"], entry["status"]) == ("webhook.test", "delivered")
    assert entry["message_id"] == answer.json()["message_id"]
    assert [(a["number"], a["outcome"], a["status_code"]) for a in entry["attempts"]] == [
        (1, "ok", 200)
    ]


def test_test_events_are_rate_limited(owner, settings):
    settings.EVALHUB_WEBHOOK_TESTS_PER_MINUTE = 2
    made, _ = subscribe(owner, "https://h.example.org/mine")
    api = client_for(owner)
    codes = [api.post(f"{LIST}{made.public_id}/test/").status_code for _ in range(3)]
    assert codes == [202, 202, 429]
    refused = api.post(f"{LIST}{made.public_id}/test/")
    assert refused["Retry-After"] == "60"
    assert "At most 2 test events a minute" in refused.json()["errors"][0]["message"]
    assert Delivery.objects.count() == 2
