"""Firing an event: one delivery per subscription of the object's owner that wants it.

`emit(owner, event, data, key=...)` is the one entry point; the apps whose objects go
through the events call it where the event happens, next to their notices
(evalhub.notifications): a campaign launched or finished and a launch request decided
(annotation.campaigns), a campaign over its budget (annotation.allocation), an analysis
ready (analysis.runs.tasks), a judge run finished (judging.execution), an arena's
leaderboard computed (arenas.tasks). Each builds its own `data`; the message is

    {"type": "campaign.finished", "timestamp": "2026-11-27T10:30:00Z", "data": {...}}

Called inside the event's transaction: the deliveries are written with it and their tasks
queued once it commits, so an event rolled back sends nothing. `key` names the event, so
that a task retried after firing it does not deliver it twice.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import IntegrityError, transaction
from django.utils import timezone

from .delivery import new_message_id
from .models import Delivery, EventType, Subscription
from .tasks import queue


def link(path: str) -> str:
    """The absolute URL of a path on this site, for a message's `url` fields."""
    return f"{settings.EVALHUB_PUBLIC_URL}{path}"


def body(event: str, data: dict, at: datetime) -> str:
    message = {"type": event, "timestamp": at.isoformat().replace("+00:00", "Z"), "data": data}
    return json.dumps(message, cls=DjangoJSONEncoder, separators=(",", ":"))


def emit(owner, event: str, data: dict | Callable[[], dict], *, key: str) -> list[Delivery]:
    """Deliver `event` to every subscription of `owner` that wants it, once per `key`; the
    deliveries made. `data` may be a function, called only when somebody subscribes."""
    event = EventType(event)  # an unknown event is a programming error
    if owner is None or not owner.is_active or not key:
        return []
    wanting = [s for s in Subscription.objects.filter(owner=owner) if s.wants(event)]
    if not wanting:
        return []
    if callable(data):
        data = data()
    now = timezone.now()
    made = []
    for subscription in wanting:
        try:
            with transaction.atomic():
                made.append(
                    Delivery.objects.create(
                        subscription=subscription,
                        message_id=new_message_id(),
                        event=event,
                        event_key=key[:200],
                        body=body(event, data, now),
                        next_attempt_at=now,
                    )
                )
        except IntegrityError:
            continue  # fired before (a retried task): delivered once
    queue_after_commit(made)
    return made


def queue_after_commit(deliveries: list[Delivery]) -> None:
    ids = [d.pk for d in deliveries]
    if ids:
        transaction.on_commit(lambda: [queue(pk) for pk in ids])
