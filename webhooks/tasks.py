"""Background work of webhooks: one task per delivery attempt, the sweep that queues again
the deliveries whose message was lost (or whose worker died mid-attempt), and the pruning
of the delivery log (schedule in evalhub/celery.py)."""

import logging
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnreachable

from . import delivery
from .models import Delivery

logger = logging.getLogger(__name__)

# A delivery due this long ago whose attempt did not start: its message was lost.
LOST_AFTER_SECONDS = 60
SWEEP_BATCH = 500


@shared_task(name="webhooks.tasks.deliver_webhook")
def deliver_webhook(delivery_id: int) -> str:
    """One attempt of a delivery (webhooks/delivery.py), and the next one queued after its
    backoff. A copy of the message, or one arriving early, skips."""
    outcome, delay = delivery.attempt(delivery_id)
    if delay is not None:
        queue(delivery_id, countdown=delay)
    return outcome


def queue(delivery_id: int, countdown: float | None = None) -> bool:
    """Send the delivery's task; False, logged, when the broker cannot be reached (the
    delivery stays due and the sweep sends it again)."""
    try:
        deliver_webhook.apply_async((delivery_id,), countdown=countdown)
    except BrokerUnreachable as error:
        logger.warning("Could not queue webhook delivery %s: %s", delivery_id, error)
        return False
    return True


@shared_task(name="webhooks.tasks.requeue_lost_deliveries")
def requeue_lost_deliveries() -> int:
    """Queue again the pending deliveries due for a while that nobody is attempting; how
    many."""
    lost = timezone.now() - timedelta(seconds=LOST_AFTER_SECONDS)
    ids = list(
        Delivery.objects.filter(status=Delivery.Status.PENDING, next_attempt_at__lte=lost)
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:SWEEP_BATCH]
    )
    return sum(1 for pk in ids if queue(pk))


@shared_task(name="webhooks.tasks.prune_webhook_deliveries")
def prune_webhook_deliveries() -> int:
    """Drop the settled deliveries older than EVALHUB_WEBHOOK_LOG_DAYS (their attempts go
    with them); how many deliveries went."""
    cutoff = timezone.now() - timedelta(days=settings.EVALHUB_WEBHOOK_LOG_DAYS)
    old = Delivery.objects.filter(created__lt=cutoff).exclude(status=Delivery.Status.PENDING)
    return old.delete()[1].get(Delivery._meta.label, 0)
