"""One side's answer streamed from a fake OpenAI-compatible model on 127.0.0.1: pieces as
they come, then how it ended, as stored; the bad inputs (a stall mid-stream, malformed
events, a stream closed early, 429 with Retry-After); a voter who leaves or stops (the
upstream request is closed, the budget counts only what was used)."""

import asyncio
from contextlib import aclosing

import pytest
from asgiref.sync import sync_to_async

from arenas import battles
from arenas.answering import Piece, Settled, answer_events
from arenas.models import Battle
from endpoints.models import EndpointCall, EndpointUsage
from tests.arenas.streaming_setup import answer, battle_between, read
from tests.endpoints import sse_fake

# The stream reaches the database from worker threads (sync_to_async).
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def servers():
    with sse_fake.StreamingPool() as pool:
        yield pool.start


def usage(system_slug):
    row = EndpointUsage.objects.filter(endpoint__system__slug=system_slug).first()
    return row.requests if row else 0


def test_both_sides_stream_their_pieces_and_are_stored(servers):
    one = servers(sse_fake.words("The ", "sea ", "is ", "**deep**."))
    two = servers(sse_fake.words("# Sea\n", "- salty\n", "- wide"))
    battle = battle_between(one, two)
    items_a = read(answer(battle, "a").pk)
    items_b = read(answer(battle, "b").pk)
    assert [i.text for i in items_a if isinstance(i, Piece)] == ["The ", "sea ", "is ", "**deep**."]
    assert items_a[-1] == Settled("done", "The sea is **deep**.", "")
    assert items_b[-1].text == "# Sea\n- salty\n- wide"
    a = answer(battle, "a")
    # The fake reports one completion token per piece.
    assert (a.status, a.tokens, a.tokens_reported) == ("done", 4, True)
    assert a.first_token_ms is not None and a.latency_ms >= a.first_token_ms
    assert a.started_at <= a.finished_at
    battle.refresh_from_db()
    assert (battle.tokens_a, battle.tokens_b) == (4, 3)
    assert battle.style_a["bold_count"]["**"] == 1
    assert battle.style_b["header_count"]["h1"] == 1
    assert battle.style_b["list_count"]["unordered"] == 2
    # What each model was asked: the voter's turn, as the user.
    assert one.requests[0]["messages"][-1] == {"role": "user", "content": "Tell me about the sea."}
    assert one.requests[0]["stream"] is True
    calls = EndpointCall.objects.filter(purpose="arena", status="ok", streamed=True)
    assert calls.count() == 2
    assert (usage("model-one"), usage("model-two")) == (1, 1)


def test_the_arena_system_prompt_replaces_the_endpoints_own(servers):
    one, two = servers(sse_fake.words("a")), servers(sse_fake.words("b"))
    battle = battle_between(one, two, system_prompt="Answer in one word.")
    read(answer(battle, "a").pk)
    assert one.requests[0]["messages"][0] == {"role": "system", "content": "Answer in one word."}


def test_a_second_turn_carries_the_sides_own_history(servers):
    one = servers(sse_fake.words("first answer"))
    two = servers(sse_fake.words("other answer"))
    battle = battle_between(one, two)
    read(answer(battle, "a").pk)
    read(answer(battle, "b").pk)
    battles.add_turn(battle, "And the mountains?")
    read(answer(battle, "a", 2).pk)
    assert [m["content"] for m in one.requests[1]["messages"]] == [
        "Tell me about the sea.",
        "first answer",
        "And the mountains?",
    ]
    assert [m["role"] for m in one.requests[1]["messages"]] == ["user", "assistant", "user"]


def test_a_stall_mid_stream_fails_the_side_keeping_what_came(servers):
    one = servers(sse_fake.words("slow ", "and ", "slower", pause=2.0))
    battle = battle_between(one, servers(sse_fake.words("b")), timeout=1.0)
    items = read(answer(battle, "a").pk)
    assert items[-1].status == "failed"
    stored = answer(battle, "a")
    assert (stored.status, stored.text) == ("failed", "slow")
    assert stored.error == "This model took too long to answer."
    assert EndpointCall.objects.get(endpoint__system__slug="model-one").status == "timeout"


def test_a_malformed_event_fails_the_side(servers):
    events = (sse_fake.delta("fine "), '{"choices": [{"delta": ')
    one = servers(lambda payload: sse_fake.Stream(events))
    battle = battle_between(one, servers(sse_fake.words("b")))
    read(answer(battle, "a").pk)
    stored = answer(battle, "a")
    assert (stored.status, stored.text) == ("failed", "fine")
    assert stored.error == "This model did not give a usable answer."
    assert EndpointCall.objects.get(endpoint__system__slug="model-one").status == "invalid_json"


def test_a_stream_closed_early_fails_the_side(servers):
    cut = sse_fake.Stream((sse_fake.delta("half an "),), done=False, cut=True)
    one = servers(lambda payload: cut)
    battle = battle_between(one, servers(sse_fake.words("b")))
    read(answer(battle, "a").pk)
    stored = answer(battle, "a")
    assert (stored.status, stored.text) == ("failed", "half an")
    assert usage("model-one") == 1  # it was sent: it counts


def test_a_429_says_busy_with_its_retry_after_and_is_asked_once(servers):
    limited = sse_fake.Stream(
        status=429, body=b'{"error": "slow down"}', headers=(("Retry-After", "7"),)
    )
    one = servers(lambda payload: limited)
    battle = battle_between(one, servers(sse_fake.words("b")))
    read(answer(battle, "a").pk)
    stored = answer(battle, "a")
    assert stored.status == "failed"
    assert stored.error == "This model is busy right now (it asks to wait 7 s)."
    assert len(one.requests) == 1
    call = EndpointCall.objects.get(endpoint__system__slug="model-one")
    assert (call.status, call.http_status) == ("http_error", 429)


def test_a_failed_side_keeps_the_battle_from_being_voted(servers):
    limited = sse_fake.Stream(status=429, body=b"{}")
    battle = battle_between(servers(lambda p: limited), servers(sse_fake.words("b")))
    read(answer(battle, "a").pk)
    read(answer(battle, "b").pk)
    with pytest.raises(battles.BattleRefused, match="no usable answer"):
        battles.cast_vote(battle, "b_better")
    assert Battle.objects.get().vote == ""


def test_a_voter_who_leaves_mid_stream_closes_the_upstream_request(servers):
    pieces = [f"w{i} " for i in range(100)]
    one = servers(sse_fake.words(*pieces, pause=0.05))
    battle = battle_between(one, servers(sse_fake.words("b")))
    seen = []
    answer_id = answer(battle, "a").pk

    async def leave_after_three_pieces():
        async with aclosing(answer_events(answer_id)) as events:
            async for item in events:
                seen.append(item)
                if len(seen) == 3:
                    break  # the browser closed the tab: the relay closes the stream

    asyncio.run(leave_after_three_pieces())
    assert one.disconnected.wait(3), "the model kept being asked to write"
    stored = answer(battle, "a")
    assert (stored.status, stored.text) == ("stopped", "w0 w1 w2")
    call = EndpointCall.objects.get(endpoint__system__slug="model-one")
    assert call.status == "cancelled"
    # The side that was streaming counts one request; the side never opened, none.
    assert (usage("model-one"), usage("model-two")) == (1, 0)
    assert answer(battle, "b").status == "pending"


def test_a_cancelled_relay_settles_the_answer_as_stopped(servers):
    one = servers(sse_fake.words(*[f"x{i} " for i in range(100)], pause=0.05))
    battle = battle_between(one, servers(sse_fake.words("b")))
    answer_id = answer(battle, "a").pk

    async def cancelled_while_waiting():
        seen = []

        async def relay():
            async for item in answer_events(answer_id):
                seen.append(item)

        task = asyncio.create_task(relay())
        while len(seen) < 2:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled_while_waiting())
    assert one.disconnected.wait(3)
    stored = answer(battle, "a")
    assert stored.status == "stopped" and stored.text.startswith("x0 x1")


def test_stop_pressed_mid_stream_stops_that_side_only(servers):
    one = servers(sse_fake.words(*[f"y{i} " for i in range(200)], pause=0.05))
    two = servers(sse_fake.words("whole", " answer"))
    battle = battle_between(one, two)
    streaming = answer(battle, "a")

    async def stop_after_a_few():
        items = []
        async with aclosing(answer_events(streaming.pk)) as events:
            async for item in events:
                items.append(item)
                if len(items) == 3:
                    await sync_to_async(battles.request_stop)(streaming)
        return items

    items = asyncio.run(stop_after_a_few())
    assert items[-1].status == "stopped"
    assert one.disconnected.wait(3)
    assert answer(battle, "a").status == "stopped"
    assert len(items) < 50
    read(answer(battle, "b").pk)
    assert answer(battle, "b").status == "done"


def test_stop_before_the_stream_starts_asks_nothing(servers):
    one = servers(sse_fake.words("never"))
    battle = battle_between(one, servers(sse_fake.words("b")))
    battles.request_stop(answer(battle, "a"))
    items = read(answer(battle, "a").pk)
    assert items == [Settled("stopped", "", "")]
    assert one.requests == [] and usage("model-one") == 0


def test_a_settled_answer_is_given_back_without_asking_again(servers):
    one = servers(sse_fake.words("once"))
    battle = battle_between(one, servers(sse_fake.words("b")))
    read(answer(battle, "a").pk)
    again = read(answer(battle, "a").pk)
    assert again == [Piece("once"), Settled("done", "once", "")]
    assert len(one.requests) == 1 and usage("model-one") == 1


def test_an_address_the_guard_refuses_fails_and_costs_nothing(servers, settings):
    settings.EVALHUB_OUTBOUND_ALLOW = []  # loopback, where the fake models listen, refused
    one = servers(sse_fake.words("never"))
    battle = battle_between(one, servers(sse_fake.words("b")))
    read(answer(battle, "a").pk)
    stored = answer(battle, "a")
    assert stored.status == "failed" and one.requests == []
    assert usage("model-one") == 0
    assert EndpointCall.objects.get(endpoint__system__slug="model-one").status == "refused"


def test_a_model_naming_itself_flags_the_battle(servers):
    one = servers(sse_fake.words("I am model-one, ", "happy to help."))
    battle = battle_between(one, servers(sse_fake.words("Hello.")))
    read(answer(battle, "a").pk)
    read(answer(battle, "b").pk)
    battle.refresh_from_db()
    assert battle.flags == [Battle.FLAG_NAME_IN_ANSWER]
