"""The relay the arena and the chat campaigns share: an answer's pieces and its end as
server-sent events, keep-alives while the model is silent, a whole answer read without
relaying it, and the WSGI bridge that cancels the answer when the browser leaves."""

import asyncio
import threading

from endpoints import relay
from endpoints.relay import Piece, Settled


def answer(*items, pause=0.0, finished=None):
    async def events():
        try:
            for item in items:
                await asyncio.sleep(pause)
                yield item
        finally:
            if finished is not None:
                finished.set()

    return events


async def collect(stream) -> list[bytes]:
    return [chunk async for chunk in stream]


def test_pieces_and_the_end_are_events_of_one_json_object_each():
    make = answer(Piece("Hel"), Piece("lo"), Settled("done", "Hello", "", {"state": {"n": 2}}))
    chunks = asyncio.run(collect(relay.event_stream(make)))
    assert chunks == [
        b'event: piece\ndata: {"text": "Hel"}\n\n',
        b'event: piece\ndata: {"text": "lo"}\n\n',
        b'event: end\ndata: {"state": {"n": 2}, "status": "done", "text": "Hello", '
        b'"error": ""}\n\n',
    ]


def test_the_end_event_keeps_its_own_fields_over_the_extra_ones():
    chunk = relay.end_event(Settled("failed", "", "Too slow.", {"status": "forged"}))
    assert b'"status": "failed"' in chunk and b"forged" not in chunk


def test_a_silent_model_gets_keep_alives(monkeypatch):
    monkeypatch.setattr(relay, "KEEPALIVE_SECONDS", 0.05)
    make = answer(Piece("late"), Settled("done", "late"), pause=0.3)
    chunks = asyncio.run(collect(relay.event_stream(make)))
    assert chunks[0] == relay.KEEPALIVE
    assert chunks[-1].startswith(b"event: end\n")


def test_drain_reads_the_whole_answer_and_answers_how_it_ended():
    settled = Settled("done", "whole")
    assert asyncio.run(relay.drain(answer(Piece("who"), Piece("le"), settled))) == settled
    assert asyncio.run(relay.drain(answer(Piece("cut")))) is None


def test_closing_the_threaded_bridge_cancels_the_answer():
    finished = threading.Event()
    make = answer(*[Piece(f"w{i}") for i in range(1000)], pause=0.01, finished=finished)
    events = relay.ThreadedEvents(lambda: relay.event_stream(make))
    assert next(events).startswith(b"event: piece\n")
    events.close()  # the WSGI server is done: the browser left
    assert finished.wait(5)
