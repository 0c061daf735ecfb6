"""One side's answer relayed to the voter's browser as server-sent events, by the relay
that chat campaigns share (endpoints/relay.py: the events, keep-alives, and serving under
ASGI or WSGI): the events are `answer_events`' (arenas/answering.py)."""

from __future__ import annotations

from contextlib import aclosing
from dataclasses import replace

from django.http import StreamingHttpResponse
from django.utils import translation

from endpoints import relay

from .answering import answer_events, shown_error


def event_stream_response(request, answer_id: int) -> StreamingHttpResponse:
    # The events are sent after the view has returned, and its language with it: a failure
    # is put in the voter's language (a crowd campaign's) as it was when the stream opened.
    language = translation.get_language()

    async def events():
        # Closed with the response (a voter who leaves), as the relay closes its events.
        async with aclosing(answer_events(answer_id)) as inner:
            async for event in inner:
                if isinstance(event, relay.Settled) and event.error:
                    with translation.override(language):
                        event = replace(event, error=shown_error(event.error))
                yield event

    return relay.event_stream_response(request, events)
