"""Chat campaigns' bots: annotation (annotation/chat_replies.py) streams the next turn of a
live chat from a system's BotEndpoint through this module, with the async client
(endpoints/streaming.py), and lists the systems a campaign may chat with.

A worker is watching, so a live chat's request is shorter than a collection's: the
endpoint's timeout capped at EVALHUB_CHAT_REPLY_TIMEOUT_SECONDS for the whole stream, one
attempt (the worker may ask again), and no long wait for a concurrency slot. The
endpoint's budget and address policy apply as everywhere, and chats spend only the
endpoint's chat share of its budget (endpoints/budget.py), so a crowd cannot use up what
the owner's tournaments and judges need. A campaign may use an endpoint its owner may
use: the system's owner's own, or any whose owner allows other owners (and gives chats a
share).
"""

from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, replace

from django.conf import settings
from django.db.models import Q

from endpoints.models import BotEndpoint, EndpointUsage
from evalhub.models import System

from .budget import chat_limit, today
from .client import (
    BotBusy,
    BotError,
    BotHTTPError,
    BotRefused,
    BotTimeout,
    BotUnreachable,
    BudgetExhausted,
    Endpoint,
)
from .streaming import AsyncBotClient, StreamResult

LIMIT_REACHED = (
    "This chatbot has answered all the messages it may answer today. End the conversation "
    "to go on: what you wrote is kept."
)

BOT_SPEAKER = 1


class ReplyFailed(Exception):
    """The bot gave no usable reply. `message` is for the worker; `detail` for the log."""

    def __init__(self, message: str, *, detail: str = "", transient: bool = True):
        super().__init__(message)
        self.message = message
        self.detail = detail or message
        self.transient = transient


def _may_use(endpoint: BotEndpoint, owner_id) -> bool:
    return endpoint.allow_other_owners or endpoint.manager_id == owner_id


def chat_systems(user):
    """Systems with an endpoint a campaign of `user` may call: the same rule as a
    tournament's (BotEndpoint.may_serve), for staff too, since the owner's consent is what
    lets somebody else's campaign spend their endpoint's budget; an endpoint whose chat
    share is 0 takes no chats."""
    with_endpoint = System.objects.filter(endpoint__isnull=False, endpoint__chat_share__gt=0)
    if user is None or not user.is_authenticated:
        return System.objects.none()
    return with_endpoint.filter(Q(owner=user) | Q(endpoint__allow_other_owners=True))


def _message(error: BotError) -> str:
    if isinstance(error, BotTimeout):
        return "The chatbot took too long to answer."
    if isinstance(error, BotHTTPError) and error.status == 429:
        wait = f" (it asks to wait {error.retry_after:g} s)" if error.retry_after else ""
        return f"The chatbot is busy right now{wait}."
    if isinstance(error, BudgetExhausted):
        return LIMIT_REACHED
    if isinstance(error, BotBusy):
        return "The chatbot cannot take more messages right now."
    # The worker is told what kind of failure it was (never the address or the upstream
    # body); the campaign's owner sees the details under "Latest endpoint errors".
    if isinstance(error, BotRefused | BotUnreachable):
        return "The chatbot cannot be reached right now, or broke off its answer."
    if isinstance(error, BotHTTPError):
        return f"The chatbot answered with an error (HTTP {error.status})."
    return "The chatbot did not give a usable answer."


def chat_endpoint(owner_id, system: System) -> Endpoint:
    """The call configuration of `system`'s endpoint for a chat campaign of `owner_id`, or
    ReplyFailed when the campaign may not (or can no longer) call it."""
    endpoint = BotEndpoint.objects.select_related("system").filter(system=system).first()
    if endpoint is None:
        raise ReplyFailed("This chatbot can no longer be reached.", transient=False)
    if not _may_use(endpoint, owner_id):
        raise ReplyFailed(
            "This chatbot can no longer be reached.",
            detail=f"{system.slug}'s endpoint does not allow other owners' campaigns",
            transient=False,
        )
    cap = settings.EVALHUB_CHAT_REPLY_TIMEOUT_SECONDS
    target = Endpoint.from_model(endpoint)
    # The whole stream, from connecting to its last event, fits in `cap`: a worker watches.
    return replace(target, timeout=min(target.timeout or cap, cap))


def failure(error: BotError) -> ReplyFailed:
    return ReplyFailed(
        _message(error), detail=f"{type(error).__name__}: {error}", transient=error.transient
    )


async def stream_reply(
    endpoint: Endpoint, conversation_id: str, turns: list[dict]
) -> AsyncIterator[str | StreamResult]:
    """The bot's next turn after `turns` ([{"speaker": 0 | 1, "text"}], the worker is
    speaker 0, the bot 1), piece by piece as it is written (OpenAI-compatible endpoints
    stream; EvalHub's protocol answers whole), then the StreamResult; or ReplyFailed with
    a message a worker can read. One attempt: what was shown cannot be taken back, and
    the worker may ask again. Chats spend the endpoint's chat share; a short wait for a
    concurrency slot, since a worker is watching."""
    cap = settings.EVALHUB_CHAT_REPLY_TIMEOUT_SECONDS
    try:
        client = AsyncBotClient(endpoint, slot_wait=0.1 * cap, purpose="chat")
        async with aclosing(client.stream_reply(conversation_id, turns, BOT_SPEAKER)) as chunks:
            async for chunk in chunks:
                yield chunk
    except BotError as error:
        raise failure(error) from error


@dataclass(frozen=True)
class ChatBudget:
    """Today's chat requests of one system's endpoint against its chat share."""

    system: str
    used: int
    limit: int
    budget_spent: bool  # the whole daily budget, which stops chats too

    @property
    def spent(self) -> bool:
        return self.budget_spent or self.used >= self.limit


def chat_budgets(system_slugs) -> list[ChatBudget]:
    """The chat budget of today of each named system that has an endpoint, by slug."""
    endpoints = BotEndpoint.objects.filter(system__slug__in=list(system_slugs)).select_related(
        "system"
    )
    usage = {
        row[0]: row[1:]
        for row in EndpointUsage.objects.filter(endpoint__in=endpoints, day=today()).values_list(
            "endpoint_id", "requests", "chat_requests"
        )
    }
    budgets = []
    for endpoint in sorted(endpoints, key=lambda e: e.system.slug):
        requests, chats = usage.get(endpoint.pk, (0, 0))
        budgets.append(
            ChatBudget(
                system=endpoint.system.slug,
                used=chats,
                limit=chat_limit(endpoint.daily_budget, endpoint.chat_share),
                budget_spent=requests >= endpoint.daily_budget,
            )
        )
    return budgets
