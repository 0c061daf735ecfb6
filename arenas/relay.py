"""One side's answer relayed to the voter's browser as server-sent events, by the relay
that chat campaigns share (endpoints/relay.py: the events, keep-alives, and serving under
ASGI or WSGI): the events are `answer_events`' (arenas/answering.py)."""

from __future__ import annotations

from django.http import StreamingHttpResponse

from endpoints import relay

from .answering import answer_events


def event_stream_response(request, answer_id: int) -> StreamingHttpResponse:
    return relay.event_stream_response(request, lambda: answer_events(answer_id))
