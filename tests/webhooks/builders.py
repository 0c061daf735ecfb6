"""Subscriptions for the tests, made the way owners make them (webhooks/services.py)."""

from webhooks.models import EventType
from webhooks.services import create_subscription


def subscribe(owner, url: str, events=None):
    """(subscription, secret) of `owner` for `events` (default: every event)."""
    return create_subscription(owner, url, list(events or EventType.values), "tests")
