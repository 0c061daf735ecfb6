"""Sending deliveries (webhooks/delivery.py, webhooks/tasks.py) to a local subscriber on
127.0.0.1: signed per Standard Webhooks and verified with its library, tried again with
backoff after a failure, refused addresses never called, each attempt logged."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from standardwebhooks import Webhook, WebhookVerificationError

from tests import factories
from webhooks import delivery
from webhooks.events import emit
from webhooks.models import Attempt, Delivery, EventType, Subscription
from webhooks.tasks import deliver_webhook

from .builders import subscribe
from .subscriber import Subscriber

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return factories.user("owner")


def fire(owner, capture, key="campaign.finished:1"):
    with capture(execute=True):
        return emit(owner, EventType.CAMPAIGN_FINISHED, {"campaign": {"slug": "c"}}, key=key)


def test_a_subscriber_receives_a_signed_event_it_verifies(
    owner, django_capture_on_commit_callbacks
):
    with Subscriber() as server:
        _, secret = subscribe(owner, server.url)
        [made] = fire(owner, django_capture_on_commit_callbacks)
    [message] = server.verified(secret)
    assert message["type"] == "campaign.finished"
    assert message["data"] == {"campaign": {"slug": "c"}}
    headers, _ = server.received[0]
    assert headers["webhook-id"] == made.message_id
    assert headers["Content-Type"] == "application/json"
    made.refresh_from_db()
    assert (made.status, made.attempts, made.next_attempt_at) == ("delivered", 1, None)
    [attempt] = made.tries.all()
    assert (attempt.number, attempt.outcome, attempt.status_code) == (1, "ok", 200)


def test_another_secret_does_not_verify(owner, django_capture_on_commit_callbacks):
    with Subscriber() as server:
        subscribe(owner, server.url)
        fire(owner, django_capture_on_commit_callbacks)
    headers, body = server.received[0]
    with pytest.raises(WebhookVerificationError):
        Webhook(delivery.new_secret()).verify(body, headers)


def test_the_secret_is_encrypted_at_rest(owner):
    made, secret = subscribe(owner, "https://hooks.example.org/in")
    assert secret.startswith("whsec_")
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM webhooks_subscription WHERE id = %s", [made.pk])
        stored = cursor.fetchone()[0]
    assert secret not in stored and stored
    assert Subscription.objects.get(pk=made.pk).secret == secret


def test_a_500_is_tried_again_after_the_backoff_then_delivered(
    owner, settings, django_capture_on_commit_callbacks
):
    settings.EVALHUB_WEBHOOK_RETRY_BASE_SECONDS = 10
    with Subscriber(statuses=[500]) as server:
        _, secret = subscribe(owner, server.url)
        [made] = fire(owner, django_capture_on_commit_callbacks)
        made.refresh_from_db()
        assert (made.status, made.attempts) == ("pending", 1)
        [first] = made.tries.all()
        assert (first.outcome, first.status_code, first.error) == (
            "http_error",
            500,
            "answered HTTP 500",
        )
        assert made.next_attempt_at == first.at + timedelta(seconds=10)
        # Not due yet: a copy of the task (or one arriving early) makes no request.
        assert delivery.attempt(made.pk) == ("skipped", None)
        assert len(server.received) == 1
        assert delivery.attempt(made.pk, now=made.next_attempt_at)[0] == "delivered"
    first_message, second_message = server.verified(secret)
    assert first_message == second_message
    ids = {headers["webhook-id"] for headers, _ in server.received}
    assert ids == {made.message_id}  # the same message: the subscriber drops a repeat
    made.refresh_from_db()
    assert (made.status, made.attempts) == ("delivered", 2)
    assert [a.outcome for a in made.tries.all()] == ["http_error", "ok"]


def test_the_waits_double_up_to_the_longest(settings):
    settings.EVALHUB_WEBHOOK_RETRY_BASE_SECONDS = 10
    settings.EVALHUB_WEBHOOK_RETRY_MAX_SECONDS = 60
    assert [delivery.retry_delay(n) for n in range(1, 6)] == [10, 20, 40, 60, 60]


def test_it_gives_up_after_the_last_attempt(owner, settings, django_capture_on_commit_callbacks):
    settings.EVALHUB_WEBHOOK_MAX_ATTEMPTS = 2
    with Subscriber(statuses=[503, 503, 503]) as server:
        subscribe(owner, server.url)
        [made] = fire(owner, django_capture_on_commit_callbacks)
        made.refresh_from_db()
        assert delivery.attempt(made.pk, now=made.next_attempt_at) == ("failed", None)
    made.refresh_from_db()
    assert (made.status, made.attempts, made.next_attempt_at) == ("failed", 2, None)
    assert made.finished_at is not None
    assert len(server.received) == 2


def test_a_refused_address_is_logged_and_never_called(
    owner, settings, django_capture_on_commit_callbacks
):
    settings.EVALHUB_OUTBOUND_ALLOW = []
    with Subscriber() as server:
        subscribe(owner, server.url)
        [made] = fire(owner, django_capture_on_commit_callbacks)
    assert server.received == []
    made.refresh_from_db()
    assert (made.status, made.attempts) == ("failed", 1)  # not retried: nothing would change
    [attempt] = made.tries.all()
    assert attempt.outcome == Attempt.Outcome.REFUSED and attempt.status_code is None
    assert "EVALHUB_OUTBOUND_ALLOW" in attempt.error
    assert "127.0.0.1" not in attempt.error  # the owner is not told internal addresses


def test_an_unreachable_subscriber_is_tried_again(owner, django_capture_on_commit_callbacks):
    server = Subscriber().start()
    url = server.url
    server.stop()  # nothing listens on the port any more
    subscribe(owner, url)
    [made] = fire(owner, django_capture_on_commit_callbacks)
    made.refresh_from_db()
    assert (made.status, made.attempts) == ("pending", 1)
    assert made.tries.get().outcome == "unreachable"


def test_a_redirect_is_not_followed(owner, django_capture_on_commit_callbacks):
    with Subscriber(statuses=[302]) as server:
        subscribe(owner, server.url)
        [made] = fire(owner, django_capture_on_commit_callbacks)
    assert len(server.received) == 1
    attempt = Delivery.objects.get(pk=made.pk).tries.get()
    assert attempt.error == "answered HTTP 302 (redirects are not followed)"


def test_a_delivered_message_is_not_sent_again_by_a_copy_of_its_task(
    owner, django_capture_on_commit_callbacks
):
    with Subscriber() as server:
        subscribe(owner, server.url)
        [made] = fire(owner, django_capture_on_commit_callbacks)
        assert deliver_webhook(made.pk) == "skipped"
    assert len(server.received) == 1
    assert Delivery.objects.get(pk=made.pk).attempts == 1


def test_a_lost_secret_sends_nothing(owner, django_capture_on_commit_callbacks):
    with Subscriber() as server:
        made, _ = subscribe(owner, server.url)
        Subscription.objects.filter(pk=made.pk).update(secret="", secret_left_out=True)
        [sent] = fire(owner, django_capture_on_commit_callbacks)
    assert server.received == []
    sent.refresh_from_db()
    assert sent.status == "failed"
    assert "secret was lost" in sent.tries.get().error


def test_a_delivery_whose_last_attempt_was_lost_fails_without_another(owner, settings):
    settings.EVALHUB_WEBHOOK_MAX_ATTEMPTS = 2
    with Subscriber() as server:
        made, _ = subscribe(owner, server.url)
        # Its second attempt was claimed, and its worker died before recording it.
        lost = Delivery.objects.create(
            subscription=made,
            message_id="msg_lost",
            event="webhook.test",
            body="{}",
            attempts=2,
            next_attempt_at=timezone.now() - timedelta(minutes=5),
        )
        assert deliver_webhook(lost.pk) == "skipped"
    assert server.received == []
    lost.refresh_from_db()
    assert (lost.status, lost.attempts, lost.next_attempt_at) == ("failed", 2, None)
