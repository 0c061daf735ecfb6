"""What owners do with their subscriptions, for the pages and the API alike: make one (its
secret answered this once), delete one, send a test event, list their own."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.utils import timezone

from evalhub.errors import UserInputError
from evalhub.quotas import check_quota
from evalhub.ratelimit import Outage, allow_key

from .delivery import new_message_id, new_secret
from .events import body, queue_after_commit
from .models import TEST_EVENT, Delivery, EventType, Subscription


class TestsLimited(UserInputError):
    """Too many test events to one subscription this minute."""

    status_code = 429
    retry_after = 60


def owned(user):
    """The user's own subscriptions: nobody else's, staff's included (they see them in the
    admin)."""
    if not user.is_authenticated:
        return Subscription.objects.none()
    return Subscription.objects.filter(owner=user)


def clean_events(events) -> list[str]:
    """The chosen event types, each once, in EventType's order; UserInputError otherwise."""
    if not isinstance(events, list | tuple) or not events:
        raise UserInputError("Choose at least one event.", field="events")
    unknown = [str(e) for e in events if e not in EventType.values]
    if unknown:
        raise UserInputError(
            f"Unknown event {unknown[0]!r}; the events are {', '.join(EventType.values)}.",
            field="events",
        )
    return [e for e in EventType.values if e in events]


URL_RULE = URLValidator(schemes=["http", "https"])


def clean_url(url: str) -> str:
    """An http or https URL of at most Subscription.URL_CHARS; UserInputError otherwise."""
    url = (url or "").strip()
    if len(url) > Subscription.URL_CHARS:
        raise UserInputError(
            f"The URL has {len(url)} characters; at most {Subscription.URL_CHARS}.", field="url"
        )
    try:
        URL_RULE(url)
    except ValidationError:
        raise UserInputError("Give an http:// or https:// URL.", field="url") from None
    return url


def create_subscription(owner, url: str, events, description: str = "") -> tuple[Subscription, str]:
    """A new subscription of `owner` and its secret, which is never shown again."""
    url = clean_url(url)
    events = clean_events(events)
    check_quota(owner, Subscription)
    secret = new_secret()
    with transaction.atomic():
        made = Subscription.objects.create(
            owner=owner, url=url, events=events, description=description, secret=secret
        )
    return made, secret


def send_test(user, subscription: Subscription) -> Delivery:
    """Queue a `webhook.test` message to the subscription, whatever events it wants; at
    most EVALHUB_WEBHOOK_TESTS_PER_MINUTE a minute (TestsLimited)."""
    limit = settings.EVALHUB_WEBHOOK_TESTS_PER_MINUTE
    # A test is a real request to the subscriber: bounded per account and subscription.
    if not allow_key(
        f"webhook-test:{user.pk}:{subscription.pk}", limit, 60, on_outage=Outage.FAIL_OPEN
    ):
        raise TestsLimited(f"At most {limit} test events a minute: try again shortly.")
    now = timezone.now()
    data = {
        "subscription": str(subscription.public_id),
        "message": "A test event sent from EvalHub: your endpoint receives and verifies.",
    }
    with transaction.atomic():
        made = Delivery.objects.create(
            subscription=subscription,
            message_id=new_message_id(),
            event=TEST_EVENT,
            body=body(TEST_EVENT, data, now),
            next_attempt_at=now,
        )
        queue_after_commit([made])
    return made
