"""Test connection (endpoints/probe.py): one real request, its latency, and the reply or the
reason; and the warning at save for an address this deployment refuses."""

import pytest
from django.urls import reverse

from endpoints.models import BotEndpoint, EndpointCall
from endpoints.probe import probe, url_warning
from tests import factories
from tests.endpoints.bots import BotPool, always, echo

pytestmark = pytest.mark.django_db


@pytest.fixture
def bots():
    with BotPool() as pool:
        yield pool


@pytest.fixture
def owner():
    return factories.user("owner")


def endpoint_at(owner, url: str) -> BotEndpoint:
    system = factories.system(owner, slug="local-bot", name="Local bot")
    return BotEndpoint.objects.create(system=system, url=url)


def test_a_bot_that_answers_gives_its_reply_and_latency(bots, owner):
    endpoint = endpoint_at(owner, bots.start(echo).url)

    result = probe(endpoint)

    assert result.ok and result.status == "ok" and result.http_status == 200
    assert result.reply.startswith("echo: Hello! This is EvalHub testing the connection")
    assert result.latency_ms >= 0
    call = EndpointCall.objects.get(endpoint=endpoint)
    assert (call.purpose, call.status) == ("test", "ok")


def test_a_bot_answering_400_fails_with_evalhubs_reason_and_is_tried_once(bots, owner):
    bot = bots.start(always(400))
    endpoint = endpoint_at(owner, bot.url)

    result = probe(endpoint)

    assert not result.ok
    assert (result.status, result.http_status) == ("http_error", 400)
    assert "400" in result.message and result.reply == ""
    assert len(bot.requests) == 1
    assert EndpointCall.objects.get(endpoint=endpoint).status == "http_error"


def test_a_server_error_is_not_retried_either(bots, owner):
    bot = bots.start(always(503))

    result = probe(endpoint_at(owner, bot.url))

    assert not result.ok and result.http_status == 503
    assert len(bot.requests) == 1


def test_a_refused_address_says_so_without_naming_it(settings, owner):
    settings.EVALHUB_OUTBOUND_ALLOW = []
    endpoint = endpoint_at(owner, "http://127.0.0.1:8111/reply")

    result = probe(endpoint)

    assert not result.ok and result.status == "refused"
    assert "127.0.0.1" not in result.message


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8111/v1",
        "http://localhost:8111/v1",
        "http://10.0.0.5/v1",
        "http://[::1]:8000/",
    ],
)
def test_a_loopback_or_private_url_is_warned_about_when_not_allowed(settings, url):
    settings.EVALHUB_OUTBOUND_ALLOW = []

    assert "will refuse to call" in url_warning(url)


def test_an_allowed_or_public_url_gets_no_warning(settings):
    settings.EVALHUB_OUTBOUND_ALLOW = ["127.0.0.1:8111"]

    assert url_warning("http://127.0.0.1:8111/v1") == ""
    assert url_warning("https://models.example.org/v1") == ""
    assert url_warning("http://8.8.8.8/v1") == ""


# --- The endpoint page ----------------------------------------------------------------------


def test_the_page_test_button_flashes_the_reply(client, bots, owner):
    endpoint = endpoint_at(owner, bots.start(echo).url)
    client.force_login(owner)

    response = client.post(reverse("system-endpoint-test", args=["local-bot"]), follow=True)

    page = response.content.decode()
    assert response.status_code == 200
    assert "Connected in" in page and "echo: Hello!" in page
    assert EndpointCall.objects.filter(endpoint=endpoint, purpose="test").count() == 1


def test_the_page_test_button_flashes_the_failure(client, bots, owner):
    endpoint_at(owner, bots.start(always(400)).url)
    client.force_login(owner)

    response = client.post(reverse("system-endpoint-test", args=["local-bot"]), follow=True)

    assert "The connection test failed after" in response.content.decode()


def test_only_the_owner_tests_an_endpoint(client, bots, owner):
    bot = bots.start(echo)
    endpoint_at(owner, bot.url)
    client.force_login(factories.user("someone-else"))

    response = client.post(reverse("system-endpoint-test", args=["local-bot"]))

    assert response.status_code == 403
    assert bot.requests == [] and not EndpointCall.objects.exists()


def test_tests_past_the_rate_are_refused_without_a_request(client, bots, owner, settings):
    settings.EVALHUB_ENDPOINT_PROBES_PER_MINUTE = 2
    bot = bots.start(echo)
    endpoint_at(owner, bot.url)
    client.force_login(owner)
    url = reverse("system-endpoint-test", args=["local-bot"])

    for _ in range(3):
        response = client.post(url, follow=True)

    assert "At most 2 connection tests a minute" in response.content.decode()
    assert len(bot.requests) == 2


def test_saving_a_loopback_url_warns_on_the_page(client, owner, settings):
    settings.EVALHUB_OUTBOUND_ALLOW = []
    factories.system(owner, slug="local-bot", name="Local bot")
    client.force_login(owner)

    response = client.post(
        reverse("system-endpoint", args=["local-bot"]),
        {
            "protocol": "evalhub",
            "url": "http://127.0.0.1:8111/reply",
            "daily_budget": "100",
            "chat_share": "100",
            "max_concurrency": "4",
            "timeout_seconds": "20",
        },
        follow=True,
    )

    page = response.content.decode()
    assert BotEndpoint.objects.get(system__slug="local-bot").url == "http://127.0.0.1:8111/reply"
    assert "will refuse to call 127.0.0.1:8111" in page


# --- The API --------------------------------------------------------------------------------


def test_the_api_answers_the_probe_result(bots, owner):
    from tests.endpoints.test_api import client_for

    endpoint_at(owner, bots.start(echo).url)

    response = client_for(owner).post("/api/systems/local-bot/endpoint/test/")

    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True and body["reply"].startswith("echo: Hello!")
    assert set(body) == {"ok", "latency_ms", "status", "http_status", "reply", "message"}


def test_the_api_probe_is_403_for_another_researcher(bots, owner):
    from tests.endpoints.test_api import client_for

    bot = bots.start(echo)
    endpoint_at(owner, bot.url)

    response = client_for(factories.user("other")).post("/api/systems/local-bot/endpoint/test/")

    assert response.status_code == 403
    assert bot.requests == []


def test_the_api_endpoint_says_its_url_will_be_refused(owner, settings):
    from tests.endpoints.test_api import client_for

    settings.EVALHUB_OUTBOUND_ALLOW = []
    endpoint_at(owner, "http://127.0.0.1:8111/reply")

    body = client_for(owner).get("/api/systems/local-bot/endpoint/").json()

    assert "will refuse to call 127.0.0.1:8111" in body["url_warning"]
