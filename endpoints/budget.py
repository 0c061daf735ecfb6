"""The per-day request budget of a bot endpoint, counted in the database, and the share of
it chat campaigns may spend.

One EndpointUsage row per endpoint and UTC day: `requests` counts every request,
`chat_requests` those of chat campaigns. A request is charged before it is sent by one
conditional UPDATE (`requests < budget` → `requests + 1`), which the database applies
atomically, so workers charging at once never overspend. Retries are requests too. The
async client (endpoints/streaming.py) gives back a request that never reached the endpoint.

Chat share. Crowdworkers chatting with a bot spend its owner's budget, and anyone who can
open a start link can become a crowdworker, so chat campaigns may spend at most
`chat_share` percent of the budget a day (`chat_limit`): a chat request must also fit
`chat_requests < chat_limit`, in the same UPDATE. Whatever the crowd does, tournaments and
judges keep at least the rest of the budget; they may also use what chats leave unused.
"""

from django.db.models import F
from django.utils import timezone

from .models import EndpointUsage


def today():
    return timezone.now().date()


def chat_limit(budget: int, chat_share: int) -> int:
    """Requests a day chat campaigns may spend: `chat_share` percent of `budget`, rounded
    down (a share too small for one request allows none)."""
    return budget * chat_share // 100


def spend(endpoint_id: int, budget: int, *, chat_limit: int | None = None) -> bool:
    """Charge one request to the endpoint's budget of today; False when it is spent. With
    `chat_limit`, the request is a chat campaign's and must fit the chat share too."""
    day = today()
    rows = EndpointUsage.objects.filter(endpoint_id=endpoint_id, day=day, requests__lt=budget)
    change = {"requests": F("requests") + 1}
    if chat_limit is not None:
        rows = rows.filter(chat_requests__lt=chat_limit)
        change["chat_requests"] = F("chat_requests") + 1
    if rows.update(**change):
        return True
    # Today's row may not exist yet (or another worker is creating it): once it does, the
    # conditional UPDATE decides again, never the row's absence.
    EndpointUsage.objects.get_or_create(endpoint_id=endpoint_id, day=day)
    return bool(rows.update(**change))


def refund(endpoint_id: int, day, *, chat: bool = False) -> None:
    """Give back one request charged on `day` that never reached the endpoint (the async
    client reserves before connecting; a refused address, a failed connection or a stream
    cancelled before it was sent used nothing)."""
    rows = EndpointUsage.objects.filter(endpoint_id=endpoint_id, day=day, requests__gt=0)
    change = {"requests": F("requests") - 1}
    if chat:
        rows = rows.filter(chat_requests__gt=0)
        change["chat_requests"] = F("chat_requests") - 1
    rows.update(**change)


def used_today(endpoint_id: int) -> int:
    usage = EndpointUsage.objects.filter(endpoint_id=endpoint_id, day=today()).first()
    return usage.requests if usage else 0


def chat_used_today(endpoint_id: int) -> int:
    usage = EndpointUsage.objects.filter(endpoint_id=endpoint_id, day=today()).first()
    return usage.chat_requests if usage else 0
