"""The webhooks' periodic tasks (webhooks/tasks.py): deliveries whose message was lost are
queued again and sent; the log keeps EVALHUB_WEBHOOK_LOG_DAYS."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests import factories
from webhooks.models import Delivery
from webhooks.tasks import prune_webhook_deliveries, requeue_lost_deliveries

from .builders import subscribe
from .subscriber import Subscriber

pytestmark = pytest.mark.django_db


def delivery(subscription, n, **fields) -> Delivery:
    return Delivery.objects.create(
        subscription=subscription, message_id=f"msg_{n}", event="webhook.test", body="{}", **fields
    )


def test_a_lost_delivery_is_queued_again_and_sent():
    owner = factories.user()
    with Subscriber() as server:
        made, secret = subscribe(owner, server.url)
        long_ago = timezone.now() - timedelta(minutes=5)
        lost = delivery(made, 1, next_attempt_at=long_ago)
        # Due in a moment, or claimed by a worker still in its attempt: left alone.
        soon = delivery(made, 2, next_attempt_at=timezone.now() + timedelta(seconds=30))
        assert requeue_lost_deliveries() == 1
    lost.refresh_from_db()
    soon.refresh_from_db()
    assert (lost.status, lost.attempts) == ("delivered", 1)
    assert (soon.status, soon.attempts) == ("pending", 0)
    headers, _ = server.received[0]
    assert headers["webhook-id"] == "msg_1"


def test_the_log_keeps_its_days_and_every_pending_delivery(settings):
    settings.EVALHUB_WEBHOOK_LOG_DAYS = 30
    made, _ = subscribe(factories.user(), "https://hooks.example.org/in")
    old = delivery(made, 1, status="delivered")
    old_pending = delivery(made, 2, status="pending")
    recent = delivery(made, 3, status="failed")
    long_ago = timezone.now() - timedelta(days=31)
    Delivery.objects.filter(pk__in=[old.pk, old_pending.pk]).update(created=long_ago)
    assert prune_webhook_deliveries() == 1
    assert set(Delivery.objects.values_list("pk", flat=True)) == {old_pending.pk, recent.pk}
