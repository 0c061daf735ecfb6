"""One side's answer to one turn, asked of its model and relayed as it streams.

`answer_events(answer_id)` is an async generator of `Piece`s (text as it arrives) and one
final `Settled` (how the answer ended, as stored). It claims the answer first (once: a
second stream of the same answer, or a browser that reconnects after it settled, gets the
stored answer back and asks nothing), asks the system's endpoint through the async
streaming client of `endpoints` (its budget, concurrency limit, outbound guard and call
records), and settles the answer in the database when the stream ends, however it ends:

- the model finished: ``done``, with the tokens the server reported (or counted);
- the voter pressed stop (`stop_requested`, looked at every `POLL_SECONDS` by the
  loop's one stop watcher, arenas/stopping.py) or went away
  (the caller closed or cancelled this generator): ``stopped``, keeping the text so far;
  the upstream request is closed at once, so the model stops generating;
- the model failed (timeout, refused, 429, malformed or cut stream): ``failed``, with a
  message for the voter and the text so far.

The endpoint's budget is charged one request when the stream starts, and given back when
nothing reached the endpoint (endpoints/streaming.py), so a side that was never asked, or
whose request never left, costs nothing.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, replace

from django.conf import settings
from django.utils.translation import gettext, gettext_noop

from endpoints.client import (
    BotBusy,
    BotError,
    BotHTTPError,
    BotTimeout,
    BudgetExhausted,
    Endpoint,
)
from endpoints.dbcalls import database
from endpoints.models import BotEndpoint
from endpoints.relay import Piece, Settled
from endpoints.streaming import AsyncBotClient, StreamResult

from . import battles, stopping
from .battles import Outcome
from .models import BattleAnswer

logger = logging.getLogger(__name__)

POLL_SECONDS = stopping.POLL_SECONDS
BOT_SPEAKER, VOTER_SPEAKER = 1, 0


@dataclass(frozen=True)
class Job:
    """What one stream needs, read from the database before it starts."""

    answer_id: int
    conversation_id: str
    turns: tuple[dict, ...]  # {"speaker": 0 | 1, "text"}: the voter is 0, the model 1
    endpoint: Endpoint | None
    refusal: str = ""  # why the model cannot be asked (its endpoint is gone or closed)


# What the voter reads when a model fails; never the model's name. Stored in English (the
# stream that stores it serves no page) and translated where it is shown (`shown_error`).
TOO_SLOW = gettext_noop("This model took too long to answer.")
BUSY = gettext_noop("This model is busy right now.")
BUSY_WAIT = gettext_noop("This model is busy right now (it asks to wait %(seconds)s s).")
FULL = gettext_noop("This model cannot take more messages right now.")
UNUSABLE = gettext_noop("This model did not give a usable answer.")
UNREACHABLE = gettext_noop("This model can no longer be reached.")
_FIXED = {TOO_SLOW, BUSY, FULL, UNUSABLE, UNREACHABLE}
_BUSY_WAIT = re.compile(r"This model is busy right now \(it asks to wait (?P<seconds>\S+) s\)\.")


def voter_message(error: BaseException) -> str:
    """What the voter reads when a model fails, as stored."""
    if isinstance(error, BotTimeout):
        return TOO_SLOW
    if isinstance(error, BotHTTPError) and error.status == 429:
        if error.retry_after:
            return BUSY_WAIT % {"seconds": f"{error.retry_after:g}"}
        return BUSY
    if isinstance(error, BotBusy | BudgetExhausted):
        return FULL
    return UNUSABLE


def shown_error(stored: str) -> str:
    """A stored failure in the language of the page (an older or unknown text as it is)."""
    if stored in _FIXED:
        return gettext(stored)
    if waited := _BUSY_WAIT.fullmatch(stored):
        return gettext(BUSY_WAIT) % {"seconds": waited["seconds"]}
    return stored


def prepare(answer_id: int) -> Job | Settled:
    """Claim the answer and read what asking it needs; or the stored answer when it is
    already settled or being streamed by another request."""
    answer = BattleAnswer.objects.select_related(
        "turn__battle__arena", "turn__battle__system_a", "turn__battle__system_b"
    ).get(pk=answer_id)
    battle = answer.turn.battle
    system = battle.system(answer.side)
    endpoint = BotEndpoint.objects.filter(system=system).first()
    timeout = endpoint.timeout_seconds if endpoint else settings.EVALHUB_BOT_TIMEOUT_SECONDS
    lease = timeout + settings.EVALHUB_BOT_LEASE_MARGIN_SECONDS + POLL_SECONDS
    if not battles.claim(answer_id, lease):
        answer.refresh_from_db()
        return Settled(answer.status, answer.text, answer.error)
    history = []
    earlier = BattleAnswer.objects.filter(
        turn__battle=battle, side=answer.side, turn__number__lt=answer.turn.number
    ).select_related("turn")
    for previous in earlier.order_by("turn__number"):
        history.append({"speaker": VOTER_SPEAKER, "text": previous.turn.prompt})
        if previous.text:
            history.append({"speaker": BOT_SPEAKER, "text": previous.text})
    history.append({"speaker": VOTER_SPEAKER, "text": answer.turn.prompt})
    key = f"arena-{battle.public_id}-{answer.side}"
    if endpoint is None:
        return Job(answer_id, key, tuple(history), None, UNREACHABLE)
    if not endpoint.allow_other_owners and system.owner_id != battle.arena.owner_id:
        return Job(answer_id, key, tuple(history), None, UNREACHABLE)
    target = Endpoint.from_model(endpoint)
    if battle.arena.system_prompt:
        target = replace(
            target, sampling=replace(target.sampling, system_prompt=battle.arena.system_prompt)
        )
    return Job(answer_id, key, tuple(history), target)


_END = object()
_STOP = object()


class _Progress:
    def __init__(self):
        self.started = time.monotonic()
        self.first_token: float | None = None
        self.parts: list[str] = []
        self.result: StreamResult | None = None
        self.error: BaseException | None = None

    def take(self, piece: str) -> None:
        if self.first_token is None:
            self.first_token = time.monotonic()
        self.parts.append(piece)

    def outcome(self, stopped: bool) -> Outcome:
        if self.result is not None and self.error is None:
            return Outcome(
                status=BattleAnswer.Status.DONE,
                text=self.result.text,
                first_token_ms=self.result.first_token_ms,
                latency_ms=self.result.latency_ms,
                reported_tokens=self.result.usage.completion_tokens,
            )
        text = "".join(self.parts).strip()
        first = (
            None if self.first_token is None else round((self.first_token - self.started) * 1000)
        )
        latency = round((time.monotonic() - self.started) * 1000)
        if self.error is not None and not stopped:
            return Outcome(
                BattleAnswer.Status.FAILED, text, first, latency, error=voter_message(self.error)
            )
        return Outcome(BattleAnswer.Status.STOPPED, text, first, latency)


def make_client(endpoint: Endpoint) -> AsyncBotClient:
    return AsyncBotClient(endpoint, purpose="arena")


async def _produce(job: Job, queue: asyncio.Queue) -> None:
    """Read the model's stream into the queue: pieces, then the result or the error."""
    try:
        client = make_client(job.endpoint)
        stream = client.stream_reply(job.conversation_id, list(job.turns), BOT_SPEAKER)
        async with aclosing(stream) as chunks:
            async for chunk in chunks:
                queue.put_nowait(chunk)
    except asyncio.CancelledError:
        raise
    except BotError as error:
        queue.put_nowait(error)
    except Exception as error:  # a bug must not leave the answer streaming forever
        logger.exception("The arena stream of answer %s failed", job.answer_id)
        queue.put_nowait(error)
    finally:
        queue.put_nowait(_END)


async def answer_events(answer_id: int) -> AsyncIterator[Piece | Settled]:
    """The answer's pieces as the model writes them, then how it ended (see the module)."""
    job = await database(prepare, answer_id)
    if isinstance(job, Settled):
        if job.text:
            yield Piece(job.text)
        yield job
        return
    progress = _Progress()
    if job.endpoint is None:
        outcome = Outcome(BattleAnswer.Status.FAILED, "", error=job.refusal)
        answer = await database(battles.settle, answer_id, outcome)
        yield Settled(answer.status, answer.text, answer.error)
        return
    # One reader task per stream fills the queue; the stop watcher (arenas/stopping.py)
    # drops `_STOP` into it. Waiting on the queue needs no timer and no task per token.
    queue: asyncio.Queue = asyncio.Queue()
    producer = asyncio.create_task(_produce(job, queue))
    stopping.watch(answer_id, lambda: queue.put_nowait(_STOP))
    stopped = False
    try:
        while True:
            item = await queue.get()
            if item is _END:
                break
            if item is _STOP:
                stopped = True
                break
            if isinstance(item, str):
                progress.take(item)
                yield Piece(item)
            elif isinstance(item, StreamResult):
                progress.result = item
            elif isinstance(item, BaseException):
                progress.error = item
    except (asyncio.CancelledError, GeneratorExit):
        stopped = True  # the voter went away: what they saw is what the model said
        raise
    finally:
        stopping.unwatch(answer_id)
        if not producer.done():
            producer.cancel()
        await asyncio.gather(producer, return_exceptions=True)
        settling = asyncio.ensure_future(
            database(battles.settle, answer_id, progress.outcome(stopped))
        )
        # Shielded: a second cancellation must not lose the stored answer.
        answer = await asyncio.shield(settling)
    yield Settled(answer.status, answer.text, answer.error)
