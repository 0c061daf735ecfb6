"""Every request leaves its outcome (EndpointCall) for the endpoint's owner: one row per
request with the right status, a short message of EvalHub's own that never quotes the
reply, a bounded history, and nobody but the owner and staff reads it."""

from dataclasses import replace
from datetime import timedelta

import pytest
from django.db import DatabaseError
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from endpoints import calls, tasks
from endpoints.client import (
    BotBadJSON,
    BotClient,
    BotError,
    BotHTTPError,
    BotRefused,
    BotTimeout,
    BudgetExhausted,
    Endpoint,
    LocalLimiter,
    RetryPolicy,
)
from endpoints.models import BotEndpoint, EndpointCall
from evalhub.outbound_policy import Policy
from tests import factories
from tests.endpoints import bots

pytestmark = pytest.mark.django_db

TURNS = [{"speaker": 0, "text": "hello"}]
ONCE = RetryPolicy(attempts=1, base_delay=0, max_delay=0, jitter=False)
TWICE = RetryPolicy(attempts=2, base_delay=0.001, max_delay=0.001, jitter=False)
UPSTREAM_SECRET = "upstream-body-with-someone-elses-data-7731"


@pytest.fixture
def serve():
    with bots.BotPool() as pool:
        yield pool.start


@pytest.fixture
def owner():
    return factories.user("owner")


def stored(server_url, owner=None, **fields) -> BotEndpoint:
    system = factories.system(owner, slug=f"bot-{BotEndpoint.objects.count()}")
    return BotEndpoint.objects.create(system=system, url=server_url, timeout_seconds=5, **fields)


def client(endpoint: BotEndpoint, *, retry=ONCE, timeout=None, **options) -> BotClient:
    target = Endpoint.from_model(endpoint)
    if timeout is not None:
        target = replace(target, timeout=timeout)
    return BotClient(target, retry=retry, limiter=LocalLimiter(), purpose="collection", **options)


def test_an_answered_request_leaves_one_ok_row(serve, owner):
    endpoint = stored(serve(bots.echo).url, owner)
    assert client(endpoint).reply("c", TURNS, 1) == "echo: hello"
    call = EndpointCall.objects.get()
    assert (call.endpoint, call.status, call.http_status, call.purpose) == (
        endpoint,
        "ok",
        200,
        "collection",
    )
    assert (call.error_class, call.message, call.streamed) == ("", "", False)
    assert call.latency_ms >= 0


def test_an_http_400_leaves_one_http_error_row_without_the_body(serve, owner):
    endpoint = stored(serve(lambda p: bots.Reply(400, UPSTREAM_SECRET.encode())).url, owner)
    with pytest.raises(BotHTTPError) as raised:
        client(endpoint).reply("c", TURNS, 1)
    assert UPSTREAM_SECRET in str(raised.value)  # the log may quote it; the record may not
    call = EndpointCall.objects.get()
    assert (call.status, call.http_status, call.error_class) == ("http_error", 400, "BotHTTPError")
    assert call.message == "answered HTTP 400"


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (bots.Reply(500, f"<pre>{UPSTREAM_SECRET}\x00</pre>".encode()), "answered HTTP 500"),
        (bots.Reply(200, f"<html>{UPSTREAM_SECRET}\x00</html>".encode()), "the reply is not JSON"),
    ],
    ids=["http-500", "not-json"],
)
def test_the_upstream_excerpt_is_kept_for_staff_apart_from_the_message(
    serve, owner, reply, message
):
    endpoint = stored(serve(lambda p: reply).url, owner)
    with pytest.raises(BotError):
        client(endpoint).reply("c", TURNS, 1)
    call = EndpointCall.objects.get()
    assert call.message == message
    assert call.detail.startswith(message) and UPSTREAM_SECRET in call.detail
    assert "\x00" not in call.detail  # one printable line, storable on PostgreSQL too


def test_a_timeout_leaves_one_timeout_row(serve, owner):
    endpoint = stored(serve(bots.slow(bots.echo, 1.0)).url, owner)
    with pytest.raises(BotTimeout):
        client(endpoint, timeout=0.2).reply("c", TURNS, 1)
    call = EndpointCall.objects.get()
    assert (call.status, call.http_status, call.error_class) == ("timeout", None, "BotTimeout")
    assert 150 <= call.latency_ms < 1000


def test_a_body_that_is_not_json_leaves_one_invalid_json_row(serve, owner):
    body = f"<html>{UPSTREAM_SECRET}</html>".encode()
    endpoint = stored(serve(lambda p: bots.Reply(200, body)).url, owner)
    with pytest.raises(BotBadJSON):
        client(endpoint).reply("c", TURNS, 1)
    call = EndpointCall.objects.get()
    assert (call.status, call.http_status, call.message) == (
        "invalid_json",
        200,
        "the reply is not JSON",
    )


def test_each_retry_is_a_row_of_its_own(serve, owner):
    endpoint = stored(serve(bots.fail_first(bots.echo, bots.SERVER_ERROR)).url, owner)
    assert client(endpoint, retry=TWICE).reply("c", TURNS, 1) == "echo: hello"
    rows = list(EndpointCall.objects.order_by("id").values_list("status", "http_status"))
    assert rows == [("http_error", 500), ("ok", 200)]


def test_a_spent_budget_is_recorded_though_nothing_was_sent(serve, owner):
    server = serve(bots.echo)
    endpoint = stored(server.url, owner, daily_budget=1)
    client(endpoint).reply("c", TURNS, 1)
    with pytest.raises(BudgetExhausted):
        client(endpoint).reply("c", TURNS, 1)
    assert len(server.requests) == 1
    last = EndpointCall.objects.order_by("-id").first()
    assert (last.status, last.http_status) == ("budget_exhausted", None)


def test_a_refused_address_is_recorded_without_naming_it(serve, owner):
    endpoint = stored(serve(bots.echo).url, owner)
    with pytest.raises(BotRefused) as raised:
        client(endpoint, policy=Policy()).reply("c", TURNS, 1)
    assert "127.0.0.1" in str(raised.value)
    call = EndpointCall.objects.get()
    assert call.status == "refused" and "127.0.0.1" not in call.message


def test_an_endpoint_not_stored_leaves_no_row(serve):
    server = serve(bots.echo)
    target = Endpoint("unsaved", server.url, timeout=2)
    assert BotClient(target, retry=ONCE, limiter=LocalLimiter()).reply("c", TURNS, 1)
    assert not EndpointCall.objects.exists()


def test_a_failed_record_does_not_fail_the_call(serve, owner, monkeypatch):
    endpoint = stored(serve(bots.echo).url, owner)

    def broken(**fields):
        raise DatabaseError("database away")

    monkeypatch.setattr(EndpointCall.objects, "create", broken)
    assert client(endpoint).reply("c", TURNS, 1) == "echo: hello"
    monkeypatch.undo()
    assert not EndpointCall.objects.exists()


def test_the_message_is_one_short_line():
    message = calls.safe_message("line one\nline two " + "x" * 500)
    assert "\n" not in message and len(message) == EndpointCall.MESSAGE_CHARS


def test_pruning_keeps_the_newest_per_endpoint_and_drops_old_ones(owner):
    busy, quiet = stored("http://127.0.0.1:9/a", owner), stored("http://127.0.0.1:9/b", owner)
    now = timezone.now()
    for i in range(5):
        EndpointCall.objects.create(
            endpoint=busy, at=now - timedelta(minutes=i), status="ok", latency_ms=i
        )
    EndpointCall.objects.create(endpoint=quiet, at=now, status="ok", latency_ms=1)
    EndpointCall.objects.create(
        endpoint=quiet, at=now - timedelta(days=30), status="timeout", latency_ms=2
    )
    assert calls.prune(keep=3, max_age_days=14) == 3
    kept = sorted(EndpointCall.objects.filter(endpoint=busy).values_list("latency_ms", flat=True))
    assert kept == [0, 1, 2]
    assert list(EndpointCall.objects.filter(endpoint=quiet).values_list("status", flat=True)) == [
        "ok"
    ]


def test_the_beat_task_prunes_with_the_settings(owner, settings):
    settings.EVALHUB_ENDPOINT_CALLS_KEPT = 1
    endpoint = stored("http://127.0.0.1:9/a", owner)
    for i in range(3):
        EndpointCall.objects.create(endpoint=endpoint, status="ok", latency_ms=i)
    assert tasks.prune_endpoint_calls() == 2
    assert EndpointCall.objects.count() == 1


# Who reads them ---------------------------------------------------------------------------


def api_for(user) -> APIClient:
    api = APIClient()
    if user is not None:
        api.credentials(HTTP_AUTHORIZATION=f"Token {factories.api_token(user)}")
    return api


@pytest.fixture
def failing(owner):
    endpoint = stored("http://127.0.0.1:9/v1", owner)
    EndpointCall.objects.create(
        endpoint=endpoint,
        status="http_error",
        http_status=429,
        latency_ms=84,
        error_class="BotHTTPError",
        message="answered HTTP 429 (Retry-After 3 s)",
        detail=f"answered HTTP 429: '{UPSTREAM_SECRET}' (Retry-After 3 s)",
    )
    return endpoint


def calls_url(endpoint):
    return f"/api/systems/{endpoint.system.slug}/endpoint/calls/"


def test_the_owner_reads_the_calls_in_the_api(owner, failing):
    response = api_for(owner).get(calls_url(failing))
    assert response.status_code == 200
    [call] = response.json()["results"]
    assert (call["status"], call["http_status"], call["message"]) == (
        "http_error",
        429,
        "answered HTTP 429 (Retry-After 3 s)",
    )
    assert "detail" not in call and UPSTREAM_SECRET not in response.content.decode()


def test_staff_read_the_upstream_excerpt_in_the_admin_only(client, failing):
    client.force_login(factories.user("staff", staff=True))
    call = EndpointCall.objects.get()
    page = client.get(reverse("admin:endpoints_endpointcall_change", args=[call.pk]))
    assert page.status_code == 200 and UPSTREAM_SECRET in page.content.decode()
    listed = api_for(factories.user("staff2", staff=True)).get(calls_url(failing))
    assert UPSTREAM_SECRET not in listed.content.decode()


def test_staff_read_the_calls_in_the_api(failing):
    response = api_for(factories.user("staff", staff=True)).get(calls_url(failing))
    assert response.status_code == 200 and response.json()["count"] == 1


def test_another_user_cannot_read_the_calls(failing):
    response = api_for(factories.user("other")).get(calls_url(failing))
    assert response.status_code == 403
    assert "BotHTTPError" not in response.content.decode()


def test_an_anonymous_caller_cannot_read_the_calls(failing):
    assert api_for(None).get(calls_url(failing)).status_code == 401


def test_the_calls_are_read_only(owner, failing):
    assert api_for(owner).post(calls_url(failing), {}, format="json").status_code == 405
    assert EndpointCall.objects.count() == 1


def test_the_endpoint_page_shows_its_owner_the_latest_calls(client, owner, failing):
    client.force_login(owner)
    page = client.get(reverse("system-endpoint", args=[failing.system.slug]))
    assert page.status_code == 200
    assert "answered HTTP 429 (Retry-After 3 s)" in page.content.decode()
    assert UPSTREAM_SECRET not in page.content.decode()
    assert [c.status for c in page.context["calls"]] == ["http_error"]


def test_another_user_does_not_see_the_endpoint_page(client, failing):
    client.force_login(factories.user("other"))
    page = client.get(reverse("system-endpoint", args=[failing.system.slug]))
    assert page.status_code == 403
    assert "Retry-After" not in page.content.decode()


# --- An endpoint that keeps failing (#24) ----------------------------------------------------


def _endpoint(owner):
    system = factories.system(owner, slug="flaky", name="Flaky bot")
    return BotEndpoint.objects.create(system=system, url="https://bot.example.org/reply")


def test_ten_failures_in_a_row_tell_the_owner_once_a_day(owner):
    from evalhub.models import Notice

    endpoint = _endpoint(owner)
    for _ in range(calls.FAILING_AFTER + 3):
        calls.record(endpoint.pk, purpose="collection", status="timeout", latency_ms=5)

    [notice] = Notice.objects.filter(user=owner, kind="endpoint_failing")
    assert "Flaky bot failed its last 10 calls" in notice.text and "timed out" in notice.text


def test_a_success_among_the_last_calls_tells_nobody(owner):
    from evalhub.models import Notice

    endpoint = _endpoint(owner)
    for n in range(calls.FAILING_AFTER + 3):
        status = "ok" if n == 5 else "timeout"
        calls.record(endpoint.pk, purpose="collection", status=status, latency_ms=5)

    assert not Notice.objects.filter(kind="endpoint_failing").exists()
