"""Sending a delivery: one signed POST per attempt, through the outbound guard of model
calls, and what the next attempt is.

Signing follows the Standard Webhooks specification (https://www.standardwebhooks.com/)
with its reference library, `standardwebhooks`: the headers `webhook-id` (the message's id,
the same on every attempt, so a subscriber drops a repeat), `webhook-timestamp` (this
attempt's Unix time) and `webhook-signature` (`v1,` and the base64 HMAC-SHA256 of
"id.timestamp.body" under the subscription's secret). A subscriber verifies with the same
library: `Webhook(secret).verify(body, headers)`.

The request goes through endpoints' guarded client (endpoints/outbound.py): the URL's host
is resolved once, every address judged by the operator's EVALHUB_OUTBOUND_ALLOW policy, and
a refused address is never connected to; no redirects, no proxies from the environment,
one total deadline (EVALHUB_WEBHOOK_TIMEOUT_SECONDS). Only the status is read: the
subscriber's body is neither read nor kept.

Retries: any answer but 2xx, a timeout or a connection failure is tried again after
EVALHUB_WEBHOOK_RETRY_BASE_SECONDS, doubling up to EVALHUB_WEBHOOK_RETRY_MAX_SECONDS, until
EVALHUB_WEBHOOK_MAX_ATTEMPTS requests were made. A refused address is not retried: only
the operator or the owner can change that.
"""

from __future__ import annotations

import base64
import logging
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from standardwebhooks import Webhook

from endpoints import outbound
from endpoints.client import http_client, settings_policy

from .models import Attempt, Delivery

logger = logging.getLogger(__name__)

USER_AGENT = "EvalHub-webhooks/1"
SECRET_PREFIX = "whsec_"
# How long past an attempt's deadline the delivery stays claimed: a worker that died in
# the middle of one leaves it due again after this.
IN_FLIGHT_MARGIN_SECONDS = 30

REFUSED = (
    "the URL's host resolves to an address this EvalHub may not reach (loopback, private, "
    "link-local, multicast or reserved); an operator allows internal ones with "
    "EVALHUB_OUTBOUND_ALLOW"
)
UNREACHABLE = "cannot connect (connection refused or reset, or the name does not resolve)"
NO_SECRET = (
    "the subscription's secret was lost (its encryption key was dropped): delete the "
    "subscription and make it again"
)


def new_secret() -> str:
    """A fresh signing secret in the specification's form: whsec_ and 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def new_message_id() -> str:
    return f"msg_{secrets.token_hex(16)}"


def signed_headers(secret: str, message_id: str, at: datetime, body: str) -> dict[str, str]:
    """The Standard Webhooks headers of `body` sent at `at`."""
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": Webhook(secret).sign(message_id, at, body),
    }


def retry_delay(attempts_made: int) -> float:
    """Seconds before the next attempt, after `attempts_made` failed ones (1, 2, ...)."""
    base = settings.EVALHUB_WEBHOOK_RETRY_BASE_SECONDS
    return min(base * 2 ** (attempts_made - 1), settings.EVALHUB_WEBHOOK_RETRY_MAX_SECONDS)


@dataclass(frozen=True)
class Result:
    outcome: str
    latency_ms: int
    status_code: int | None = None
    error: str = ""
    final: bool = False  # no later attempt could do better

    @property
    def ok(self) -> bool:
        return self.outcome == Attempt.Outcome.OK


def claim(delivery_id: int, now: datetime) -> Delivery | None:
    """The delivery, claimed for one attempt, when it is pending and due; else None (done,
    not due yet, or another worker's attempt in flight)."""
    in_flight = settings.EVALHUB_WEBHOOK_TIMEOUT_SECONDS + IN_FLIGHT_MARGIN_SECONDS
    with transaction.atomic():
        delivery = (
            Delivery.objects.select_for_update()
            .filter(pk=delivery_id, status=Delivery.Status.PENDING, next_attempt_at__lte=now)
            .first()
        )
        if delivery is None:
            return None
        if delivery.attempts >= settings.EVALHUB_WEBHOOK_MAX_ATTEMPTS:
            # Its last attempt's worker died before recording it: no attempt is left.
            delivery.status = Delivery.Status.FAILED
            delivery.next_attempt_at, delivery.finished_at = None, now
            delivery.save(update_fields=["status", "next_attempt_at", "finished_at"])
            return None
        delivery.attempts += 1
        delivery.next_attempt_at = now + timedelta(seconds=in_flight)
        delivery.save(update_fields=["attempts", "next_attempt_at"])
    return Delivery.objects.select_related("subscription").get(pk=delivery.pk)


def post(delivery: Delivery) -> Result:
    """One signed request of the delivery; never raises for what the subscriber does."""
    subscription = delivery.subscription
    if not subscription.secret:
        return Result(Attempt.Outcome.ERROR, 0, error=NO_SECRET, final=True)
    timeout = settings.EVALHUB_WEBHOOK_TIMEOUT_SECONDS
    headers = {
        **signed_headers(subscription.secret, delivery.message_id, timezone.now(), delivery.body),
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
    }
    client = http_client(policy=settings_policy())
    started = time.monotonic()

    def took() -> int:
        return int((time.monotonic() - started) * 1000)

    try:
        # Streamed and closed unread: only the status matters, and a subscriber's body
        # could be anything, of any size.
        request = client.stream(
            "POST",
            subscription.url,
            content=delivery.body.encode(),
            headers=headers,
            timeout=timeout,
        )
        with outbound.deadline(timeout), request as response:
            code = response.status_code
    except httpx.TimeoutException:
        return Result(Attempt.Outcome.TIMEOUT, took(), error=f"no answer within {timeout:g} s")
    except httpx.ConnectError as error:
        if isinstance(error.__cause__, outbound.AddressRefused):
            logger.warning("Webhook %s refused: %s", delivery.message_id, error)
            return Result(Attempt.Outcome.REFUSED, took(), error=REFUSED, final=True)
        return Result(Attempt.Outcome.UNREACHABLE, took(), error=UNREACHABLE)
    except httpx.HTTPError as error:
        logger.info("Webhook %s failed: %r", delivery.message_id, error)
        return Result(
            Attempt.Outcome.ERROR, took(), error=f"the request failed ({type(error).__name__})"
        )
    if 200 <= code < 300:
        return Result(Attempt.Outcome.OK, took(), status_code=code)
    note = " (redirects are not followed)" if 300 <= code < 400 else ""
    return Result(
        Attempt.Outcome.HTTP_ERROR, took(), status_code=code, error=f"answered HTTP {code}{note}"
    )


def record(delivery: Delivery, result: Result, at: datetime) -> float | None:
    """Log the attempt and settle the delivery: delivered, failed for good, or due again;
    the seconds until the next attempt, or None when there is none."""
    fields: dict = {"next_attempt_at": None, "finished_at": at}
    delay = None
    if result.ok:
        fields["status"] = Delivery.Status.DELIVERED
    elif result.final or delivery.attempts >= settings.EVALHUB_WEBHOOK_MAX_ATTEMPTS:
        fields["status"] = Delivery.Status.FAILED
    else:
        delay = retry_delay(delivery.attempts)
        fields = {"next_attempt_at": at + timedelta(seconds=delay)}
    with transaction.atomic():
        Attempt.objects.create(
            delivery=delivery,
            number=delivery.attempts,
            at=at,
            outcome=result.outcome,
            status_code=result.status_code,
            latency_ms=result.latency_ms,
            error=result.error[: Attempt.ERROR_CHARS],
        )
        # Fenced by the attempt count: a worker that claimed it since (this one was thought
        # dead) settles it instead.
        Delivery.objects.filter(pk=delivery.pk, attempts=delivery.attempts).update(**fields)
    return delay


def attempt(delivery_id: int, now: datetime | None = None) -> tuple[str, float | None]:
    """Make the delivery's next attempt if it is due: ("delivered" | "failed" | "retry" |
    "skipped", seconds until the next attempt or None). Idempotent: a copy of the task
    finds the delivery claimed or done and skips it."""
    delivery = claim(delivery_id, now or timezone.now())
    if delivery is None:
        return "skipped", None
    result = post(delivery)
    delay = record(delivery, result, timezone.now())
    if delay is not None:
        return "retry", delay
    return ("delivered" if result.ok else "failed"), None
