"""The owner's webhook pages (webhooks/views.py): subscribe (the secret shown once),
the delivery log, "Send a test event" (rate limited), delete; only the owner sees them."""

import pytest
from django.urls import reverse

from tests import factories
from webhooks.models import Delivery, Subscription

from .builders import subscribe
from .subscriber import Subscriber

pytestmark = pytest.mark.django_db

LIST = reverse("webhooks:list")


@pytest.fixture
def owner():
    return factories.user("owner")


@pytest.fixture
def signed_in(client, owner):
    client.force_login(owner)
    return client


def test_it_subscribes_and_shows_the_secret_once(signed_in, owner):
    answer = signed_in.post(
        LIST, {"url": "https://hooks.example.org/in", "events": ["campaign.finished"]}
    )
    made = Subscription.objects.get(owner=owner)
    assert answer.status_code == 200
    assert made.secret in answer.content.decode()
    assert answer["Cache-Control"].startswith("max-age=0")
    again = signed_in.get(LIST)
    assert made.secret not in again.content.decode()
    assert "https://hooks.example.org/in" in again.content.decode()


def test_it_shows_what_is_wrong_with_the_form(signed_in):
    answer = signed_in.post(LIST, {"url": "ftp://hooks.example.org/", "events": []})
    assert answer.status_code == 400
    form = answer.context["form"]
    assert set(form.errors) == {"url", "events"}
    assert not Subscription.objects.exists()


def test_it_holds_the_quota_on_the_page(signed_in, owner, settings):
    settings.EVALHUB_QUOTA_WEBHOOKS = 0
    answer = signed_in.post(
        LIST, {"url": "https://hooks.example.org/in", "events": ["campaign.finished"]}
    )
    assert answer.status_code == 400
    assert "EVALHUB_QUOTA_WEBHOOKS=0" in answer.content.decode()
    assert not Subscription.objects.exists()


def test_the_list_shows_only_the_owners_subscriptions(signed_in, owner):
    subscribe(owner, "https://hooks.example.org/mine")
    subscribe(factories.user("other"), "https://hooks.example.org/theirs")
    page = signed_in.get(LIST).content.decode()
    assert "hooks.example.org/mine" in page and "hooks.example.org/theirs" not in page


def test_the_account_page_links_to_the_webhooks(signed_in):
    assert LIST in signed_in.get(reverse("account")).content.decode()


def test_a_stranger_gets_404_on_every_page_of_it(client, owner):
    made, _ = subscribe(owner, "https://hooks.example.org/mine")
    client.force_login(factories.user("boss", staff=True))
    for name, method in (("detail", "get"), ("test", "post"), ("delete", "post")):
        url = reverse(f"webhooks:{name}", args=[made.public_id])
        assert getattr(client, method)(url).status_code == 404
    assert Subscription.objects.filter(pk=made.pk).exists()
    assert not Delivery.objects.exists()


def test_a_visitor_is_sent_to_the_login_page(client):
    answer = client.get(LIST)
    assert answer.status_code == 302 and reverse("login") in answer["Location"]


def test_the_test_button_sends_a_signed_event_shown_in_the_log(
    signed_in, owner, django_capture_on_commit_callbacks
):
    with Subscriber(statuses=[500]) as server:
        made, secret = subscribe(owner, server.url)
        with django_capture_on_commit_callbacks(execute=True):
            answer = signed_in.post(reverse("webhooks:test", args=[made.public_id]))
    assert answer.status_code == 302 and answer["Location"] == made.get_absolute_url()
    [message] = server.verified(secret)
    assert message["type"] == "webhook.test"
    sent = Delivery.objects.get()
    assert (sent.status, sent.attempts) == ("pending", 1)  # the 500: tried again later
    page = signed_in.get(made.get_absolute_url()).content.decode()
    assert sent.message_id in page and "HTTP 500" in page


def test_the_test_button_is_rate_limited(signed_in, owner, settings):
    settings.EVALHUB_WEBHOOK_TESTS_PER_MINUTE = 1
    made, _ = subscribe(owner, "https://hooks.example.org/in")
    url = reverse("webhooks:test", args=[made.public_id])
    signed_in.post(url)
    answer = signed_in.post(url, follow=True)
    assert "At most 1 test events a minute" in answer.content.decode()
    assert Delivery.objects.count() == 1


def test_the_test_button_only_allows_post(signed_in, owner):
    made, _ = subscribe(owner, "https://hooks.example.org/in")
    assert signed_in.get(reverse("webhooks:test", args=[made.public_id])).status_code == 405
    assert not Delivery.objects.exists()


def test_the_owner_deletes_it(signed_in, owner):
    made, _ = subscribe(owner, "https://hooks.example.org/in")
    answer = signed_in.post(reverse("webhooks:delete", args=[made.public_id]))
    assert answer.status_code == 302 and answer["Location"] == LIST
    assert not Subscription.objects.exists()


def test_the_log_page_reads_a_bounded_number_of_queries(
    signed_in, owner, django_assert_max_num_queries
):
    made, _ = subscribe(owner, "https://hooks.example.org/in")
    for n in range(30):
        Delivery.objects.create(
            subscription=made, message_id=f"msg_{n}", event="webhook.test", body="{}"
        )
    with django_assert_max_num_queries(12):
        answer = signed_in.get(reverse("webhooks:detail", args=[made.public_id]))
    assert answer.status_code == 200 and "msg_29" in answer.content.decode()
