"""The outcome of every request the client makes (EndpointCall), and how long it is kept.

The blocking and the async client both record through `record` after each request, retries
included, whatever happened: answered, refused by the address policy, over budget, timed
out. Only endpoints stored in the database have outcomes. Recording never fails a call: a
database error here is logged and the reply is returned all the same.

The message is the client's own summary of the failure (`BotError.summary`), cut to one
line of EndpointCall.MESSAGE_CHARS: never the upstream body, which may be a proxy's page,
a stack trace, an internal service's answer or somebody else's data, and never the token.
The client's full account (`BotError.message`, which may quote the body's start) goes to
`detail`, which only staff read (the admin).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DatabaseError
from django.db.models import Count, Max
from django.utils import timezone

from .models import BotEndpoint, EndpointCall

logger = logging.getLogger(__name__)


def one_line(text: str, limit: int) -> str:
    """`text` on one line of printable characters (no NUL), within `limit` characters."""
    line = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def safe_message(summary: str) -> str:
    """`summary` on one line, within EndpointCall.MESSAGE_CHARS."""
    return one_line(summary, EndpointCall.MESSAGE_CHARS)


def staff_detail(error: BaseException | None) -> str:
    """The client's full account of a failure, for staff; "" when it says no more than the
    summary."""
    message = getattr(error, "message", "")
    if not message or message == getattr(error, "summary", ""):
        return ""
    return one_line(message, EndpointCall.DETAIL_CHARS)


def record(
    endpoint_id: int | None,
    *,
    purpose: str,
    status: str,
    latency_ms: float,
    http_status: int | None = None,
    error: BaseException | None = None,
    streamed: bool = False,
    first_token_ms: float | None = None,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
) -> EndpointCall | None:
    """Store one request's outcome (nothing for an endpoint that is not stored)."""
    if endpoint_id is None:
        return None
    summary = getattr(error, "summary", "") if error is not None else ""
    if isinstance(error, asyncio.CancelledError):
        summary = "the caller stopped reading the stream"
    try:
        call = EndpointCall.objects.create(
            endpoint_id=endpoint_id,
            purpose=purpose,
            status=status,
            http_status=http_status,
            latency_ms=max(0, round(latency_ms)),
            streamed=streamed,
            first_token_ms=None if first_token_ms is None else max(0, round(first_token_ms)),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            error_class=type(error).__name__ if error is not None else "",
            message=safe_message(summary),
            detail=staff_detail(error),
        )
        if status != EndpointCall.Status.OK:
            _tell_if_failing(endpoint_id, call)
        return call
    except DatabaseError:
        # The endpoint may have been removed meanwhile, or the database is away: the call's
        # own result stands either way.
        logger.warning("Could not record a call's outcome for endpoint %s", endpoint_id)
        return None


# An endpoint whose last this many calls all failed is "failing": its owner hears it once a
# day, with the latest reason, instead of finding 90 failures on a tournament's page.
FAILING_AFTER = 10


def _tell_if_failing(endpoint_id: int, call: EndpointCall) -> None:
    latest = list(
        EndpointCall.objects.filter(endpoint_id=endpoint_id)
        .order_by("-at", "-id")
        .values_list("status", flat=True)[:FAILING_AFTER]
    )
    if len(latest) < FAILING_AFTER or EndpointCall.Status.OK in latest:
        return

    from evalhub.models import NoticeKind
    from evalhub.notifications import notify

    endpoint = BotEndpoint.objects.select_related("system__owner", "owner").get(pk=endpoint_id)
    notify(
        endpoint.manager,
        NoticeKind.ENDPOINT_FAILING,
        f"The endpoint of {endpoint.label} failed its last {FAILING_AFTER} calls; the "
        f"latest: {call.get_status_display()}{f' ({call.message})' if call.message else ''}.",
        endpoint.get_absolute_url(),
        once_key=f"endpoint_failing:{endpoint_id}:{timezone.now():%Y-%m-%d}",
    )


# The async client records from the event loop; the ORM is synchronous.
arecord = sync_to_async(record, thread_sensitive=True)


def recent(endpoint, limit: int = 20):
    """The endpoint's newest outcomes, newest first."""
    return EndpointCall.objects.filter(endpoint=endpoint).order_by("-at", "-id")[:limit]


def prune(*, keep: int | None = None, max_age_days: float | None = None) -> int:
    """Delete outcomes older than `max_age_days`, and beyond the newest `keep` of each
    endpoint; the number deleted."""
    keep = settings.EVALHUB_ENDPOINT_CALLS_KEPT if keep is None else keep
    if max_age_days is None:
        max_age_days = settings.EVALHUB_ENDPOINT_CALLS_MAX_AGE_DAYS
    cutoff = timezone.now() - timedelta(days=max_age_days)
    deleted, _ = EndpointCall.objects.filter(at__lt=cutoff).delete()
    crowded = (
        EndpointCall.objects.values("endpoint_id")
        .annotate(n=Count("id"))
        .filter(n__gt=keep)
        .values_list("endpoint_id", flat=True)
    )
    for endpoint_id in crowded:
        calls = EndpointCall.objects.filter(endpoint_id=endpoint_id).order_by("-at", "-id")
        oldest_kept = calls.values_list("at", "id")[keep - 1] if keep else None
        if oldest_kept is None:
            extra = calls
        else:
            at, pk = oldest_kept
            extra = calls.filter(at__lte=at).exclude(at=at, id__gte=pk)
        n, _ = extra.delete()
        deleted += n
    return deleted


def failure_summary(endpoint_ids, *, days: int = 7, limit: int = 10) -> list[dict]:
    """The endpoints' failures of the last `days`, one row per endpoint and kind of failure
    (status and EvalHub's message): what failed, how often, when last, for the pages that
    start work on those endpoints (a tournament, a judge run, a chat campaign). Never the
    staff detail: these rows are read by owners."""
    since = timezone.now() - timedelta(days=days)
    rows = (
        EndpointCall.objects.filter(endpoint_id__in=list(endpoint_ids), at__gte=since)
        .exclude(status=EndpointCall.Status.OK)
        .values(
            "endpoint_id",
            "endpoint__system__name",
            "endpoint__system__slug",
            "endpoint__name",
            "status",
            "message",
        )
        .annotate(count=Count("pk"), last=Max("at"))
        .order_by("-last")[:limit]
    )
    labels = dict(EndpointCall.Status.choices)
    return [
        {
            # None for an endpoint of no system (a judge's model), named by its own name.
            "system": row["endpoint__system__slug"],
            "system_name": row["endpoint__system__name"] or row["endpoint__name"],
            "endpoint": row["endpoint_id"],
            "status": row["status"],
            "outcome": labels.get(row["status"], row["status"]),
            "message": row["message"],
            "count": row["count"],
            "last": row["last"],
        }
        for row in rows
    ]
