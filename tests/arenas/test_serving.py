"""The arena's streams served for real, over sockets: by uvicorn (ASGI, the production
`arena` service) and by Django's development server (WSGI: `make run`'s runserver, whose
server classes pytest-django's live server uses). Either way each event reaches the
browser while the model is still writing, and a browser that closes the connection closes
the model's request."""

import time

import httpx
import pytest

from arenas.models import BattleAnswer
from tests.arenas.streaming_setup import answer, battle_between
from tests.endpoints import sse_fake
from tests.local_server import UvicornThread

pytestmark = pytest.mark.django_db(transaction=True)
PIECES = [f"word{i} " for i in range(6)]
PAUSE = 0.4  # between the model's pieces: about 2.4 s for the whole answer


@pytest.fixture
def servers():
    with sse_fake.StreamingPool() as pool:
        yield pool.start


@pytest.fixture
def uvicorn_server():
    with UvicornThread() as server:
        yield server.url


def session_of(client, user) -> dict:
    client.force_login(user)
    return {"sessionid": client.cookies["sessionid"].value}


def read_stream(base_url, path, cookies, *, leave: bool):
    """(arrival time of each piece, every line read) of one stream; `leave`: close the
    connection after the first piece, as a browser tab closed mid-answer."""
    arrivals, lines = [], []
    with (
        httpx.Client(base_url=base_url, cookies=cookies, timeout=15) as http,
        http.stream("GET", path) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            lines.append(line)
            if line == "event: piece":
                arrivals.append(time.monotonic())
            if leave and line.startswith("data:") and arrivals:
                break
    return arrivals, lines


def stream_path(battle, side="a"):
    from arenas.presenting import stream_url

    return stream_url(battle, 1, side)


def check_streams_while_the_model_writes(base_url, client, servers):
    one = servers(sse_fake.words(*PIECES, pause=PAUSE))
    battle = battle_between(one, servers(sse_fake.words("b")))
    cookies = session_of(client, battle.voter)
    arrivals, lines = read_stream(base_url, stream_path(battle), cookies, leave=False)
    assert len(arrivals) == len(PIECES) and "event: end" in lines
    # The model wrote for (pieces - 1) x PAUSE seconds: relayed as written, the pieces
    # arrive spread over about that long; buffered, they would arrive together at the end.
    spread = arrivals[-1] - arrivals[0]
    assert spread > (len(PIECES) - 1) * PAUSE / 2, f"all pieces came within {spread:.2f} s"
    assert answer(battle, "a").status == BattleAnswer.Status.DONE


def check_leaving_closes_the_models_request(base_url, client, servers):
    one = servers(sse_fake.words(*[f"w{i} " for i in range(100)], pause=0.05))
    battle = battle_between(one, servers(sse_fake.words("b")))
    cookies = session_of(client, battle.voter)
    read_stream(base_url, stream_path(battle), cookies, leave=True)
    assert one.disconnected.wait(10), "the model was left writing to nobody"
    deadline = time.monotonic() + 10
    while answer(battle, "a").status == "streaming" and time.monotonic() < deadline:
        time.sleep(0.05)
    stored = answer(battle, "a")
    assert stored.status == "stopped" and stored.text.startswith("w0")


def test_uvicorn_relays_each_event_as_it_comes(uvicorn_server, client, servers):
    check_streams_while_the_model_writes(uvicorn_server, client, servers)


def test_uvicorn_closes_the_models_request_when_the_browser_leaves(uvicorn_server, client, servers):
    check_leaving_closes_the_models_request(uvicorn_server, client, servers)


def test_the_development_server_relays_each_event_as_it_comes(live_server, client, servers):
    check_streams_while_the_model_writes(live_server.url, client, servers)


def test_the_development_server_closes_the_models_request_when_the_browser_leaves(
    live_server, client, servers
):
    check_leaving_closes_the_models_request(live_server.url, client, servers)
