"""The bot's reply in a chat campaign, asked and relayed as it streams (no thread waits on it).

`reply_events(assignment, item)` is an async generator of `Piece`s (text as the bot writes
it) and one final `Settled` (how the reply ended, as stored, with the conversation's state
for the page to redraw), relayed to the browser as server-sent events by endpoints/relay.py
(the arena's relay) from an async view served over ASGI (annotation/views/chat.py). It
claims the reply the worker's message made due (annotation/chat.py: once, so a second
stream of it asks nothing and relays the first one's outcome), asks the system's endpoint
through endpoints/chat.py (the async streaming client, the endpoint's chat share, its
address policy and call records: OpenAI-compatible endpoints stream, EvalHub-protocol bots
answer whole) and stores the reply when the stream ends, however it ends:

- the bot finished: the whole turn, with its latency;
- the bot failed (timeout, refused, 429, malformed or cut stream): no turn, a message for
  the worker, who may ask again or end the conversation;
- the worker went away (the browser closed the stream: Django cancels the view, or the
  WSGI server closes the response): the upstream request is closed at once, no turn is
  stored, and the worker reads on return that the reply was interrupted. The endpoint's
  budget keeps the one request that reached it (and is given it back when the request
  never left: endpoints/streaming.py), as in the arena.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import aclosing

from django.utils import translation
from django.utils.translation import gettext_noop

from endpoints import chat as endpoint_chat
from endpoints.dbcalls import database
from endpoints.relay import Piece, Settled
from endpoints.streaming import StreamResult

from . import chat
from .chat import ChatState, ReplyJob
from .models import Assignment, Item

logger = logging.getLogger(__name__)

POLL_SECONDS = 0.5
DONE, FAILED, IDLE = "done", "failed", "idle"
UNUSABLE = gettext_noop("The chatbot did not give a usable answer.")


def _settled(state: ChatState, language: str | None = None) -> Settled:
    """The end event of a reply as the conversation now stands, its words in the worker's
    `language` (the stream outlives the view that knew it)."""
    last = state.turns[-1] if state.turns else None
    text = last.text if last is not None and last.speaker == chat.BOT else ""
    status = FAILED if state.error else DONE if text else IDLE
    with translation.override(language or translation.get_language()):
        return Settled(status, text, state.shown_error, {"state": state.as_json()})


async def _db(function, *args):
    return await database(function, *args)


async def _outcome_elsewhere(assignment: Assignment, item: Item, language: str | None) -> Settled:
    """The reply as another stream stores it (or as it stands when none is asking)."""
    deadline = time.monotonic() + chat.reply_lease_seconds()
    while True:
        state = await _db(chat.chat_state, assignment, item)
        if not state.streaming or time.monotonic() > deadline:
            return _settled(state, language)
        await asyncio.sleep(POLL_SECONDS)


async def reply_events(
    assignment: Assignment, item: Item, language: str | None = None
) -> AsyncIterator[Piece | Settled]:
    """The reply's pieces as the bot writes them, then how it ended (see the module), in
    the worker's `language`."""
    job: ReplyJob | None = await _db(chat.claim_reply, assignment, item)
    if job is None:
        yield await _outcome_elsewhere(assignment, item, language)
        return
    if job.endpoint is None:
        state = await _db(chat.settle_reply, assignment, item, job, "", 0, job.refusal)
        yield _settled(state, language)
        return
    started = time.monotonic()
    result: StreamResult | None = None
    error = ""
    try:
        stream = endpoint_chat.stream_reply(job.endpoint, job.key, list(job.turns))
        async with aclosing(stream) as chunks:
            async for chunk in chunks:
                if isinstance(chunk, StreamResult):
                    result = chunk
                else:
                    yield Piece(chunk)
    except endpoint_chat.ReplyFailed as failed:
        logger.warning("Chat %s: no reply: %s", job.key, failed.detail)
        error = failed.message
    except Exception:  # a bug must not leave the reply claimed until its lease runs out
        logger.exception("Chat %s: the reply's stream failed", job.key)
        error = UNUSABLE
    finally:
        # Reached with neither a result nor an error only when the worker went away.
        if result is None and not error:
            error = chat.INTERRUPTED_MESSAGE
        latency = round((time.monotonic() - started) * 1000)
        text = result.text if result is not None and not error else ""
        settling = asyncio.ensure_future(
            _db(chat.settle_reply, assignment, item, job, text, latency, error)
        )
        # Shielded: a second cancellation must not lose the stored outcome.
        state = await asyncio.shield(settling)
    yield _settled(state, language)
