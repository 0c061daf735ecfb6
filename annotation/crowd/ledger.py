"""Calls that move people or money, made once per idempotency key and logged.

A call is recorded as `pending` before it is sent and `done` (with the platform's answer)
or `failed` after. A key that is `done` is never sent again: its stored answer is returned.
A `failed` key may be retried. A `pending` key means the process stopped while the
platform was answering (or another process is sending it right now): it is refused with
a message, because only the platform can tell whether the money moved.
"""

import json
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.utils import timezone

from ..models import CrowdAction
from .base import CrowdError, PlatformRefused

State = CrowdAction.State


def jsonable(value):
    """The platform's answer as JSON (boto3 answers carry datetimes)."""
    return json.loads(json.dumps(value, default=str))


class CallInDoubt(CrowdError):
    pass


def once(
    *,
    campaign,
    action: str,
    key: str,
    request: dict,
    call,
    actor=None,
    assignment=None,
    worker=None,
    amount: Decimal | None = None,
    safe_to_retry: bool = True,
):
    """Run `call()` unless `key` already succeeded; return the platform's answer.

    `safe_to_retry`: whether a call that failed without a definite answer from the
    platform (a timeout, a dropped connection) may be sent again, which holds when the
    platform itself deduplicates (MTurk's UniqueRequestToken). Otherwise such a failure
    leaves the key pending, for a human to check.
    """
    fields = {
        "campaign": campaign,
        "provider": campaign.provider,
        "action": action,
        "actor": actor if getattr(actor, "is_authenticated", False) else None,
        "assignment": assignment,
        "worker": worker,
        "amount": amount,
        "request": jsonable(request),
    }
    record = CrowdAction.objects.filter(idempotency_key=key).first()
    if record is not None and record.state == State.DONE:
        return record.response
    if record is None:
        try:
            with transaction.atomic():
                record = CrowdAction.objects.create(idempotency_key=key, **fields)
        except IntegrityError as clash:
            raise CallInDoubt(f"{action} ({key}) is being sent by another process.") from clash
    else:
        claimed = CrowdAction.objects.filter(pk=record.pk, state=State.FAILED).update(
            state=State.PENDING, error="", **{k: v for k, v in fields.items() if k != "campaign"}
        )
        if not claimed:
            raise CallInDoubt(
                f"{action} ({key}) was sent on {record.created:%Y-%m-%d %H:%M} UTC and its "
                "answer was never recorded: check the platform before doing it again."
            )
    try:
        response = call()
    except Exception as error:
        definite = isinstance(error, PlatformRefused)
        state = State.FAILED if (definite or safe_to_retry) else State.PENDING
        CrowdAction.objects.filter(pk=record.pk).update(
            state=state, error=str(error)[:2000], finished=timezone.now()
        )
        raise
    CrowdAction.objects.filter(pk=record.pk).update(
        state=State.DONE, response=jsonable(response), finished=timezone.now()
    )
    return response
