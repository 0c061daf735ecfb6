"""The client's HTTP layer (clients/python/src/evalhub_client/_transport.py): the API's
error shape, pagination and retries. Retries and odd answers are played by httpx's
MockTransport (in process, nothing listens); the error shape and the pages by the live
server."""

import httpx
import pytest

from evalhub.models import System
from evalhub_client import EvalHub, EvalHubError
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)


def scripted(*answers):
    """A client whose requests get `answers` in turn (status, headers, json); the requests
    it made are in `client.seen`."""
    queue = list(answers)
    seen = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        status, headers, body = queue.pop(0)
        return httpx.Response(status, headers=headers, json=body)

    client = EvalHub(
        "http://evalhub.test",
        token="t0k",
        retries=2,
        backoff=0,
        http=httpx.Client(transport=httpx.MockTransport(handle)),
    )
    client.seen = seen
    return client


def error(message, **locator):
    return {"errors": [{**locator, "message": message}], "error_count": 1}


SYSTEM = {"slug": "bot", "name": "Bot", "is_baseline": False, "created": "2026-01-01T00:00:00Z"}


def test_a_get_is_retried_after_a_5xx():
    client = scripted((503, {}, error("busy", line=None)), (200, {}, SYSTEM))

    assert client.systems.get("bot").slug == "bot"
    assert len(client.seen) == 2


def test_a_post_is_not_retried_after_a_5xx_since_it_may_have_taken_effect():
    client = scripted((502, {}, error("bad gateway", line=None)), (201, {}, SYSTEM))

    with pytest.raises(EvalHubError) as caught:
        client.systems.create("bot", "Bot")
    assert caught.value.status == 502
    assert len(client.seen) == 1


def test_a_429_is_retried_whatever_the_method_after_its_retry_after(monkeypatch):
    slept = []
    monkeypatch.setattr("tenacity.nap.time.sleep", slept.append)
    client = scripted((429, {"Retry-After": "2"}, error("slow down", line=None)), (201, {}, SYSTEM))

    assert client.systems.create("bot", "Bot").name == "Bot"
    assert slept == [2.0]


def test_a_429_that_asks_for_hours_is_answered_at_once_with_its_retry_after():
    client = scripted((429, {"Retry-After": "7200"}, error("daily uploads used", line=None)))

    with pytest.raises(EvalHubError) as caught:
        client.systems.get("bot")
    assert caught.value.retry_after == 7200
    assert len(client.seen) == 1


def test_the_retries_stop_after_the_number_given():
    client = scripted(*[(500, {}, error("crash", line=None))] * 3)

    with pytest.raises(EvalHubError) as caught:
        client.systems.get("bot")
    assert caught.value.status == 500
    assert len(client.seen) == 3  # the first try and two retries


def test_an_answer_not_in_the_api_shape_keeps_its_first_words():
    def handle(request):
        return httpx.Response(502, text="<html>Bad Gateway from the proxy</html>")

    client = EvalHub(
        "http://evalhub.test",
        token="t",
        retries=0,
        http=httpx.Client(transport=httpx.MockTransport(handle)),
    )
    with pytest.raises(EvalHubError) as caught:
        client.systems.get("bot")
    assert caught.value.messages == ["<html>Bad Gateway from the proxy</html>"]


def test_the_token_is_sent_in_the_authorization_header():
    client = scripted((200, {}, SYSTEM))

    client.systems.get("bot")
    assert client.seen[0].headers["Authorization"] == "Token t0k"


def test_a_path_parameter_is_quoted_as_one_segment():
    client = scripted((404, {}, error("Not found.", line=None)))

    with pytest.raises(EvalHubError):
        client.systems.get("../tokens")
    assert client.seen[0].url.raw_path == b"/api/systems/..%2Ftokens/"


def test_the_next_page_is_fetched_from_the_server_the_client_knows():
    page_1 = {"count": 2, "next": "http://internal:8000/api/systems/?page=2", "results": [SYSTEM]}
    page_2 = {"count": 2, "next": None, "results": [{**SYSTEM, "slug": "bot-2"}]}
    client = scripted((200, {}, page_1), (200, {}, page_2))

    assert [s.slug for s in client.systems.list()] == ["bot", "bot-2"]
    assert str(client.seen[1].url) == "http://evalhub.test/api/systems/?page=2"


def test_a_field_error_of_the_live_api_carries_its_field(hub_for):
    hub = hub_for(factories.user())

    with pytest.raises(EvalHubError) as caught:
        hub.systems.create("Not A Slug", "Bot")
    assert caught.value.status == 400
    assert {e["field"] for e in caught.value.errors} == {"slug"}
    assert "slug:" in str(caught.value)
    assert not System.objects.exists()


def test_a_missing_object_answers_404_for_the_request_as_a_whole(hub_for):
    with pytest.raises(EvalHubError) as caught:
        hub_for(factories.user()).systems.get("nobody-has-this")
    assert caught.value.status == 404
    assert caught.value.errors[0]["line"] is None


def test_signed_out_answers_401(hub_for):
    with pytest.raises(EvalHubError) as caught:
        hub_for(None).tokens.list().all()
    assert caught.value.status == 401


def test_a_list_walks_every_page_of_the_live_api(hub_for):
    owner = factories.user()
    for _ in range(53):  # the API's pages hold 50
        factories.system(owner, visibility="public")
    systems = hub_for(owner).systems.list()

    assert systems.count == 53
    assert [len(page) for page in systems.pages()] == [50, 3]
    assert {s.slug for s in systems} == set(System.objects.values_list("slug", flat=True))


def test_a_filter_reaches_the_api(hub_for):
    owner = factories.user()
    factories.system(owner, slug="alpha-bot", visibility="public")
    factories.system(owner, slug="beta-bot", visibility="public")

    assert [s.slug for s in hub_for(owner).systems.list(search="alpha")] == ["alpha-bot"]


def test_a_server_that_does_not_answer_is_an_error_without_a_status():
    client = EvalHub("http://127.0.0.1:9", token="t", retries=0, timeout=2)

    with pytest.raises(EvalHubError) as caught:
        client.systems.get("bot")
    assert caught.value.status is None
