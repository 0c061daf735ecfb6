"""The per-day request budget of a bot endpoint, counted in the database.

One EndpointUsage row per endpoint and UTC day. A request is charged before it is sent by
one conditional UPDATE (`requests < budget` → `requests + 1`), which the database applies
atomically, so workers charging at once never overspend. Retries are requests too. The
async client (endpoints/streaming.py) gives back a request that never reached the endpoint.
"""

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from .models import EndpointUsage


def today():
    return timezone.now().date()


def spend(endpoint_id: int, budget: int) -> bool:
    """Charge one request to the endpoint's budget of today; False when it is spent."""
    day = today()
    rows = EndpointUsage.objects.filter(endpoint_id=endpoint_id, day=day, requests__lt=budget)
    if rows.update(requests=F("requests") + 1):
        return True
    if not EndpointUsage.objects.filter(endpoint_id=endpoint_id, day=day).exists():
        try:
            with transaction.atomic():
                EndpointUsage.objects.create(endpoint_id=endpoint_id, day=day, requests=1)
            return budget >= 1
        except IntegrityError:
            pass  # another worker created today's row first
    # Today's row exists, possibly created by another worker after the first UPDATE looked
    # (it saw no row, then the row was there): charging it again decides, never its absence.
    return bool(rows.update(requests=F("requests") + 1))


def refund(endpoint_id: int, day) -> None:
    """Give back one request charged on `day` that never reached the endpoint (the async
    client reserves before connecting; a refused address, a failed connection or a stream
    cancelled before it was sent used nothing)."""
    EndpointUsage.objects.filter(endpoint_id=endpoint_id, day=day, requests__gt=0).update(
        requests=F("requests") - 1
    )


def used_today(endpoint_id: int) -> int:
    usage = EndpointUsage.objects.filter(endpoint_id=endpoint_id, day=today()).first()
    return usage.requests if usage else 0
