"""A chat's reply served for real, over sockets: by uvicorn (ASGI, the production `arena`
service that deploy/nginx.conf sends the chat's paths to) and by Django's development
server (WSGI: `make run`'s runserver, whose server classes pytest-django's live server
uses). Either way each piece reaches the browser while the bot is still writing, a browser
that closes the connection closes the bot's request, and a form post without JavaScript
waits for the whole reply and comes back to the page."""

import re
import time

import httpx
import pytest

from annotation import chat
from evalhub.models import Turn
from tests.annotation.chat_setup import bot_system, chat_campaign, items, say, start, url
from tests.endpoints import sse_fake
from tests.local_server import UvicornThread

pytestmark = pytest.mark.django_db(transaction=True)
PIECES = [f"word{i} " for i in range(6)]
PAUSE = 0.4  # between the bot's pieces: about 2.4 s for the whole reply


@pytest.fixture
def servers():
    with sse_fake.StreamingPool() as pool:
        yield pool.start


@pytest.fixture
def uvicorn_server():
    with UvicornThread() as server:
        yield server.url


def chatting(client, server):
    """A worker (the test client's session) in a conversation with `server`'s bot."""
    campaign = chat_campaign([bot_system(server, slug="streamer")], batch_size=1)
    assignment = start(client, campaign)
    return assignment, items(assignment)[0], {"sessionid": client.cookies["sessionid"].value}


def read_stream(base_url, path, cookies, *, leave: bool):
    """(arrival time of each piece, every line read); `leave`: close the connection after
    the first piece, as a browser tab closed mid-reply."""
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


def check_streams_while_the_bot_writes(base_url, client, servers):
    server = servers(sse_fake.words(*PIECES, pause=PAUSE))
    assignment, item, cookies = chatting(client, server)
    say(client, assignment, item, "Hello", 0, json=True)
    arrivals, lines = read_stream(base_url, url("stream", assignment, item), cookies, leave=False)
    assert len(arrivals) == len(PIECES) and "event: end" in lines
    # Relayed as written, the pieces arrive spread over about as long as the bot wrote;
    # buffered, they would arrive together at the end.
    spread = arrivals[-1] - arrivals[0]
    assert spread > (len(PIECES) - 1) * PAUSE / 2, f"all pieces came within {spread:.2f} s"
    assert list(Turn.objects.filter(speaker=1).values_list("text", flat=True)) == [
        "".join(PIECES).strip()
    ]


def check_leaving_closes_the_bots_request(base_url, client, servers):
    server = servers(sse_fake.words(*[f"w{i} " for i in range(100)], pause=0.05))
    assignment, item, cookies = chatting(client, server)
    say(client, assignment, item, "Hello", 0, json=True)
    read_stream(base_url, url("stream", assignment, item), cookies, leave=True)
    assert server.disconnected.wait(10), "the bot was left writing to nobody"
    deadline = time.monotonic() + 10
    while chat.chat_state(assignment, item).streaming and time.monotonic() < deadline:
        time.sleep(0.05)
    state = chat.chat_state(assignment, item)
    assert state.error == chat.INTERRUPTED_MESSAGE and not Turn.objects.filter(speaker=1)


def test_uvicorn_relays_each_piece_as_it_comes(uvicorn_server, client, servers):
    check_streams_while_the_bot_writes(uvicorn_server, client, servers)


def test_uvicorn_closes_the_bots_request_when_the_browser_leaves(uvicorn_server, client, servers):
    check_leaving_closes_the_bots_request(uvicorn_server, client, servers)


def test_the_development_server_relays_each_piece_as_it_comes(live_server, client, servers):
    check_streams_while_the_bot_writes(live_server.url, client, servers)


def test_the_development_server_closes_the_bots_request_when_the_browser_leaves(
    live_server, client, servers
):
    check_leaving_closes_the_bots_request(live_server.url, client, servers)


def test_without_javascript_the_post_waits_for_the_whole_reply_under_uvicorn(
    uvicorn_server, client, servers
):
    server = servers(sse_fake.words("whole ", "reply", pause=0.2))
    assignment, item, cookies = chatting(client, server)
    with httpx.Client(base_url=uvicorn_server, cookies=cookies, timeout=15) as http:
        page = http.get(assignment.get_absolute_url())
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        sent = http.post(
            url("send", assignment, item),
            data={"text": "Hello", "position": "0", "csrfmiddlewaretoken": token},
        )
        assert sent.status_code == 302 and sent.headers["location"].endswith(
            assignment.get_absolute_url()
        )
        assert "whole reply" in http.get(assignment.get_absolute_url()).text
    assert list(Turn.objects.values_list("speaker", "text")) == [(0, "Hello"), (1, "whole reply")]
