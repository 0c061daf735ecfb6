"""The bot endpoint client against real HTTP servers on 127.0.0.1: protocol, typed errors,
retries with backoff, and the per-endpoint concurrency limit (local and Redis)."""

import email.utils
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from endpoints.client import (
    MAX_REPLY_BYTES,
    BotBadJSON,
    BotBadReply,
    BotBusy,
    BotClient,
    BotError,
    BotHTTPError,
    BotRefused,
    BotTimeout,
    BotUnreachable,
    Endpoint,
    LimiterUnavailable,
    LocalLimiter,
    RedisLimiter,
    RetryPolicy,
    default_limiter,
    refuses_parameter,
)
from endpoints.protocols import Sampling
from tests.endpoints import bots, openai_fake
from tests.services import required

ROOT = Path(__file__).resolve().parents[2]
TURNS = [{"speaker": 0, "text": "hello"}, {"speaker": 1, "text": "hi there"}]
FAST = RetryPolicy(attempts=3, base_delay=0.001, max_delay=0.004, jitter=False)


@pytest.fixture
def serve():
    with bots.BotPool() as pool:
        yield pool.start


def client(server, *, timeout=2.0, token="", limit=2, retry=FAST, limiter=None, **options):
    endpoint = Endpoint(f"test-{id(server)}-{limit}", server.url, token, timeout, limit)
    return BotClient(endpoint, retry=retry, limiter=limiter or LocalLimiter(), **options)


def test_it_sends_the_protocol_and_returns_the_text(serve):
    server = serve(bots.counting)
    assert client(server, token="s3cret").reply("cup/a--b--0", TURNS, 0) == "count 2 as 0"
    assert server.requests == [{"conversation_id": "cup/a--b--0", "turns": TURNS, "speaker": 0}]
    headers = server.headers[0]
    assert headers["Authorization"] == "Bearer s3cret"
    assert headers["Content-Type"] == "application/json"


def test_no_token_sends_no_authorization(serve):
    server = serve(bots.echo)
    assert client(server).reply("c", TURNS, 1) == "echo: hi there"
    assert "Authorization" not in server.headers[0]


@pytest.mark.parametrize(
    "failure",
    [bots.SERVER_ERROR, bots.BAD_JSON, bots.too_slow(0.4), bots.Reply(429, b"slow down")],
    ids=["http-500", "bad-json", "timeout", "http-429"],
)
def test_a_transient_failure_is_retried_after_a_backoff(serve, failure):
    server = serve(bots.fail_first(bots.counting, failure))
    sleeps = []
    bot = client(server, timeout=0.15, sleep=sleeps.append)
    assert bot.reply("c", TURNS, 1) == "count 2 as 1"
    assert len(server.requests) == 2
    assert sleeps == [0.001]


def test_it_gives_up_after_the_configured_attempts_with_exponential_backoff(serve):
    server = serve(bots.always(503))
    sleeps = []
    retry = RetryPolicy(attempts=4, base_delay=0.01, max_delay=0.025, jitter=False)
    with pytest.raises(BotHTTPError) as caught:
        client(server, retry=retry, sleep=sleeps.append).reply("c", TURNS, 0)
    assert sleeps == [0.01, 0.02, 0.025]
    assert len(server.requests) == 4
    error = caught.value
    assert error.status == 503 and error.transient and error.attempts == 4
    assert str(error) == f"{server.url}: answered HTTP 503: broken (gave up after 4 attempts)"


def test_jitter_keeps_the_delay_between_half_and_all_of_the_backoff():
    policy = RetryPolicy(attempts=5, base_delay=0.1, max_delay=10)
    delays = [policy.delay(3) for _ in range(200)]
    assert all(0.2 <= d <= 0.4 for d in delays)
    assert len(set(delays)) > 1


def test_the_retry_policy_comes_from_settings(settings):
    settings.EVALHUB_BOT_RETRY_ATTEMPTS = 7
    settings.EVALHUB_BOT_RETRY_BASE_DELAY = 0.25
    policy = RetryPolicy.from_settings()
    assert (policy.attempts, policy.base_delay) == (7, 0.25)


def test_a_client_error_is_not_retried(serve):
    server = serve(bots.always(404))
    with pytest.raises(BotHTTPError, match="answered HTTP 404: broken$") as caught:
        client(server).reply("c", TURNS, 0)
    assert caught.value.status == 404 and not caught.value.transient
    assert len(server.requests) == 1


def test_redirects_are_refused_not_followed(serve):
    target = serve(bots.counting)
    server = serve(lambda payload: bots.Reply(302, b"", headers=(("Location", target.url),)))
    with pytest.raises(BotHTTPError, match="HTTP 302 \\(redirects are not followed\\)"):
        client(server).reply("c", TURNS, 0)
    assert target.requests == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"text": ""}, '"text" is empty'),
        ({"text": "   "}, '"text" is empty'),
        ({"text": 5}, '"text" must be a string, not int'),
        ({"reply": "hello"}, 'the reply has no "text"'),
        (["hello"], 'the reply has no "text"'),
        ({"text": "x" * 51}, '"text" has 51 characters; the limit is 50'),
    ],
)
def test_a_reply_that_breaks_the_protocol_is_refused_at_once(serve, body, message):
    server = serve(lambda payload: bots.Reply(200, json.dumps(body).encode()))
    with pytest.raises(BotBadReply, match=message) as caught:
        client(server, max_reply_chars=50).reply("c", TURNS, 0)
    assert not caught.value.transient
    assert len(server.requests) == 1


def test_an_oversized_reply_is_refused(serve):
    huge = json.dumps({"text": "y" * (MAX_REPLY_BYTES + 10)}).encode()
    server = serve(lambda payload: bots.Reply(200, huge))
    with pytest.raises(BotBadReply, match=f"larger than {MAX_REPLY_BYTES} bytes"):
        client(server).reply("c", TURNS, 0)


def test_the_text_is_stripped(serve):
    server = serve(lambda payload: bots.text("  spaced out \n"))
    assert client(server).reply("c", TURNS, 0) == "spaced out"


def test_a_nul_in_the_reply_is_dropped_not_refused(serve):
    """PostgreSQL cannot store a NUL; a bot cannot be asked to take it back (evalhub/text.py)."""
    server = serve(lambda payload: bots.text("\u0000hi\u0000 there\u0000"))
    assert client(server).reply("c", TURNS, 0) == "hi there"


def test_a_reply_of_nothing_but_nul_is_an_empty_reply(serve):
    server = serve(lambda payload: bots.text("\u0000 \u0000"))
    with pytest.raises(BotBadReply, match='"text" is empty'):
        client(server).reply("c", TURNS, 0)


def test_an_error_quoting_the_body_holds_no_nul(serve):
    server = serve(lambda payload: bots.Reply(500, b"broken\x00 down"))
    with pytest.raises(BotHTTPError) as caught:
        client(server).reply("c", TURNS, 0)
    assert "broken down" in str(caught.value) and "\x00" not in str(caught.value)
    assert "\x00" not in caught.value.summary


def test_bad_json_is_a_typed_error_after_the_retries(serve):
    server = serve(lambda payload: bots.BAD_JSON)
    with pytest.raises(BotBadJSON, match="the reply is not JSON: '<html>proxy error</html>'"):
        client(server).reply("c", TURNS, 0)
    assert len(server.requests) == 3


def test_json_nested_deeper_than_python_reads_is_bad_json_not_a_crash(serve):
    # 100,000 brackets: 200 KB, under the reply size cap; json.loads raises RecursionError.
    server = serve(lambda payload: bots.Reply(200, b"[" * 100_000 + b"]" * 100_000))
    with pytest.raises(BotBadJSON, match="nested too deeply"):
        client(server).reply("c", TURNS, 0)
    assert len(server.requests) == 3


def test_a_slow_bot_times_out(serve):
    server = serve(lambda payload: bots.too_slow(0.5))
    with pytest.raises(BotTimeout, match="no reply within 0.1 s") as caught:
        client(server, timeout=0.1, retry=RetryPolicy(attempts=1, base_delay=0, max_delay=0)).reply(
            "c", TURNS, 0
        )
    assert caught.value.transient


def test_an_endpoint_nobody_listens_on_is_unreachable(serve):
    server = serve(bots.echo)
    server.stop()
    with pytest.raises(BotUnreachable, match="cannot connect") as caught:
        client(server).reply("c", TURNS, 0)
    assert caught.value.attempts == 3


def test_only_http_endpoints_are_accepted():
    with pytest.raises(BotError, match="only http and https endpoints are supported"):
        BotClient(Endpoint("k", "ftp://example.org/bot"), limiter=LocalLimiter())


# Concurrency ----------------------------------------------------------------------------


def hammer(make_client, n_threads: int = 6, requests_each: int = 2) -> list:
    """Requests from several threads at once; the errors raised, if any."""
    barrier = threading.Barrier(n_threads)
    errors = []

    def run():
        bot = make_client()
        barrier.wait()
        try:
            for i in range(requests_each):
                bot.reply(f"c{threading.get_ident()}-{i}", TURNS, 0)
        except Exception as error:
            errors.append(error)

    threads = [threading.Thread(target=run) for _ in range(n_threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


@pytest.mark.parametrize(("limit", "expected"), [(1, 1), (3, 3)])
def test_the_local_limit_caps_requests_in_flight(serve, limit, expected):
    server = serve(bots.slow(bots.counting, 0.04))
    limiter = LocalLimiter()
    errors = hammer(lambda: client(server, limit=limit, limiter=limiter))
    assert errors == []
    assert len(server.requests) == 12
    assert server.max_in_flight == expected


def test_waiting_too_long_for_a_slot_is_busy(serve):
    server = serve(bots.counting)
    limiter = LocalLimiter()
    bot = client(server, limit=1, limiter=limiter, slot_wait=0.05)
    held = limiter.slot(bot.endpoint.key, 1, wait=1, lease=10)
    with held, pytest.raises(BotBusy, match="no free slot among 1") as caught:
        bot.reply("c", TURNS, 0)
    assert caught.value.attempts == 1  # not retried: it already waited
    assert server.requests == []
    assert bot.reply("c", TURNS, 0) == "count 2 as 0"  # the slot is back


def test_the_default_limiter_follows_the_broker(settings):
    settings.CELERY_BROKER_URL = ""
    assert isinstance(default_limiter(), LocalLimiter)
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/3"
    limiter = default_limiter()
    assert isinstance(limiter, RedisLimiter) and default_limiter() is limiter


def test_an_unreachable_redis_is_a_typed_error(serve):
    server = serve(bots.counting)
    limiter = RedisLimiter.from_url("redis://127.0.0.1:1/0")
    with pytest.raises(LimiterUnavailable, match="the Redis concurrency limiter failed"):
        client(
            server, limiter=limiter, retry=RetryPolicy(attempts=1, base_delay=0, max_delay=0)
        ).reply("c", TURNS, 0)
    assert server.requests == []


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    """The CI broker when it is Redis, else a throwaway redis-server on a unix socket."""
    broker = django_settings.CELERY_BROKER_URL or ""
    if broker.startswith(("redis://", "rediss://")):
        yield broker
        return
    binary = shutil.which("redis-server")
    if binary is None:
        message = "needs Redis: a redis:// CELERY_BROKER_URL or redis-server on the PATH"
        if required("EVALHUB_REQUIRE_SERVICES"):
            pytest.fail(f"EVALHUB_REQUIRE_SERVICES is set but this test {message}")
        pytest.skip(message)
    # Unix sockets have a short path limit; tmp_path_factory's paths can be too long.
    socket = Path(f"/tmp/evalhub-test-redis-{os.getpid()}.sock")
    process = subprocess.Popen(
        [binary, "--port", "0", "--unixsocket", str(socket), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    url = f"unix://{socket}"
    limiter = RedisLimiter.from_url(url)
    deadline = time.monotonic() + 5
    while True:
        try:
            limiter.client.ping()
            break
        except Exception:
            if time.monotonic() > deadline:
                process.kill()
                pytest.fail("redis-server did not start within 5 s")
            time.sleep(0.02)
    yield url
    process.terminate()
    process.wait(timeout=5)


def test_the_redis_limit_is_shared_by_separate_connections(serve, redis_url):
    server = serve(bots.slow(bots.counting, 0.04))
    # One RedisLimiter (connection pool) per thread: only Redis is shared, as between
    # worker processes.
    errors = hammer(lambda: client(server, limit=1, limiter=RedisLimiter.from_url(redis_url)))
    assert errors == []
    assert len(server.requests) == 12
    assert server.max_in_flight == 1


def test_the_redis_limit_holds_across_processes(serve, redis_url):
    server = serve(bots.slow(bots.counting, 0.03))
    script = f"""
from endpoints.client import BotClient, Endpoint, RedisLimiter, RetryPolicy
bot = BotClient(
    Endpoint("cross-process", {server.url!r}, "", 2.0, 1),
    retry=RetryPolicy(attempts=1, base_delay=0, max_delay=0), limiter=RedisLimiter.from_url({redis_url!r}),
    max_reply_chars=100, slot_wait=10,
)
for i in range(4):
    bot.reply("p", [{{"speaker": 0, "text": "hi"}}], 1)
"""
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            env={**os.environ, "EVALHUB_OUTBOUND_ALLOW": "127.0.0.1"},
        )
        for _ in range(3)
    ]
    for process in processes:
        _, stderr = process.communicate(timeout=30)
        assert process.returncode == 0, stderr.decode()
    assert len(server.requests) == 12
    assert server.max_in_flight == 1


def test_a_redis_lease_expires_when_its_holder_dies(redis_url):
    limiter = RedisLimiter.from_url(redis_url)
    key = f"lease-test-{os.getpid()}-{time.monotonic_ns()}"
    crashed = limiter.slot(key, 1, wait=1, lease=0.2)
    crashed.__enter__()  # a worker killed mid-request never releases its slot
    with pytest.raises(BotBusy), limiter.slot(key, 1, wait=0.05, lease=0.2):
        pass
    time.sleep(0.25)
    with limiter.slot(key, 1, wait=0.05, lease=0.2):
        assert limiter.client.zcard(RedisLimiter.prefix + key) == 1
    assert limiter.client.zcard(RedisLimiter.prefix + key) == 0


# The OpenAI-compatible protocol ---------------------------------------------------------


@pytest.fixture
def fake():
    with openai_fake.FakePool() as pool:
        yield pool.start


def openai_client(server, *, sampling=None, timeout=2.0, token="", retry=FAST, **options):
    endpoint = Endpoint(
        f"openai-{id(server)}",
        server.base_url,
        token,
        timeout,
        2,
        protocol="openai",
        sampling=sampling or Sampling(model="tiny-chat"),
    )
    return BotClient(endpoint, retry=retry, limiter=LocalLimiter(), **options)


SEEDED = [*TURNS, {"speaker": 0, "text": "what do you do?"}]


def test_openai_it_posts_chat_completions_with_the_bot_as_assistant(fake):
    server = fake(openai_fake.counting)
    sampling = Sampling(
        model="tiny-chat",
        system_prompt="Be brief.",
        temperature=0.7,
        top_p=0.9,
        max_tokens=64,
        stop=("\nUser:",),
    )
    bot = openai_client(server, sampling=sampling, token="sk-test")
    assert bot.reply("cup/a--b--0", SEEDED, 1) == "tiny-chat: heard 3, 1 mine"
    assert server.paths == ["/v1/chat/completions"]
    assert server.requests == [
        {
            "model": "tiny-chat",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "hello"},
                {"role": "assistant", "content": "hi there"},
                {"role": "user", "content": "what do you do?"},
            ],
            "n": 1,
            "stream": False,
            "temperature": 0.7,
            "top_p": 0.9,
            "max_tokens": 64,
            "stop": ["\nUser:"],
        }
    ]
    assert server.headers[0]["Authorization"] == "Bearer sk-test"


def test_openai_unset_sampling_settings_are_left_to_the_server(fake):
    server = fake(openai_fake.echo)
    assert openai_client(server).reply("c", TURNS, 0) == "echo: hi there"
    assert server.requests == [
        {
            "model": "tiny-chat",
            "messages": [
                {"role": "assistant", "content": "hello"},
                {"role": "user", "content": "hi there"},
            ],
            "n": 1,
            "stream": False,
        }
    ]
    assert "Authorization" not in server.headers[0]


def test_openai_a_trailing_slash_in_the_base_url_is_fine(fake):
    server = fake(openai_fake.echo)
    endpoint = Endpoint(
        "slash", server.base_url + "/", protocol="openai", sampling=Sampling(model="m")
    )
    BotClient(endpoint, retry=FAST, limiter=LocalLimiter()).reply("c", TURNS, 0)
    assert server.paths == ["/v1/chat/completions"]


def test_openai_connections_are_reused(fake):
    server = fake(openai_fake.echo)
    bot = openai_client(server)
    for _ in range(3):
        bot.reply("c", TURNS, 0)
    assert len(server.ports) == 3 and len(set(server.ports)) == 1


def test_openai_a_429_is_retried_after_its_retry_after(fake):
    server = fake(openai_fake.then(openai_fake.rate_limited("2"), openai_fake.counting))
    sleeps = []
    assert openai_client(server, sleep=sleeps.append).reply("c", TURNS, 0) == (
        "tiny-chat: heard 2, 1 mine"
    )
    assert sleeps == [2.0]  # the server's Retry-After, not the backoff (0.001)
    assert len(server.requests) == 2


def test_openai_a_503_retry_after_may_be_an_http_date(fake):
    when = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    unavailable = openai_fake.Reply(503, b"overloaded", (("Retry-After", when),))
    server = fake(openai_fake.then(unavailable, openai_fake.echo))
    sleeps = []
    openai_client(server, sleep=sleeps.append).reply("c", TURNS, 0)
    assert len(sleeps) == 1 and 25 <= sleeps[0] <= 30


def test_openai_a_retry_after_beyond_the_cap_ends_the_retries(fake):
    server = fake(openai_fake.then(openai_fake.rate_limited("3600"), openai_fake.echo))
    sleeps = []
    with pytest.raises(BotHTTPError, match="HTTP 429.*Retry-After 3600 s") as caught:
        openai_client(server, sleep=sleeps.append).reply("c", TURNS, 0)
    assert caught.value.retry_after == 3600 and caught.value.transient
    assert sleeps == [] and len(server.requests) == 1


def test_the_retry_after_cap_comes_from_settings(settings):
    settings.EVALHUB_BOT_RETRY_AFTER_MAX_SECONDS = 12
    assert RetryPolicy.from_settings().max_retry_after == 12


def test_openai_a_trickling_bot_is_cut_off_at_the_total_deadline(fake):
    # 200 bytes at one every 20 ms would take 4 s; each read is quick, only the total is not.
    server = fake(openai_fake.trickle(openai_fake.counting, 0.02))
    bot = openai_client(
        server, timeout=0.5, retry=RetryPolicy(attempts=1, base_delay=0, max_delay=0)
    )
    started = time.monotonic()
    with pytest.raises(BotTimeout, match="no reply within 0.5 s"):
        bot.reply("c", TURNS, 0)
    assert time.monotonic() - started < 1.0


def test_openai_malformed_json_is_bad_json_after_the_retries(fake):
    server = fake(lambda payload: openai_fake.MALFORMED)
    with pytest.raises(BotBadJSON, match="the reply is not JSON") as caught:
        openai_client(server).reply("c", TURNS, 0)
    assert caught.value.attempts == 3 and len(server.requests) == 3


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (openai_fake.EMPTY_CHOICES, '"choices" is empty'),
        (openai_fake.NULL_CONTENT, "choices\\[0\\].message.content must be a string, not null"),
        (openai_fake.completion("  "), "choices\\[0\\].message.content is empty"),
        (openai_fake.Reply(200, b'{"text": "wrong protocol"}'), 'the reply has no "choices"'),
    ],
    ids=["empty-choices", "null-content", "blank", "evalhub-shape"],
)
def test_openai_a_reply_of_the_wrong_shape_is_refused_at_once(fake, reply, message):
    server = fake(lambda payload: reply)
    with pytest.raises(BotBadReply, match=message) as caught:
        openai_client(server).reply("c", TURNS, 0)
    assert not caught.value.transient and len(server.requests) == 1


# Chat messages for judges (judging/) -----------------------------------------------------


JUDGE_MESSAGES = [
    {"role": "system", "content": "You judge chatbots."},
    {"role": "user", "content": "Which is better?"},
]


def test_chat_sends_the_messages_as_given_and_returns_the_usage(fake):
    server = fake(lambda payload: openai_fake.completion('{"better": "1"}'))
    sampling = Sampling(model="judge-7b", system_prompt="You are a bot.", temperature=0.0)
    answer = openai_client(server, sampling=sampling).chat(JUDGE_MESSAGES)
    assert answer.text == '{"better": "1"}'
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (1, 1)
    sent = server.requests[0]
    # The rubric's messages alone: the endpoint's own system prompt is not added.
    assert sent["messages"] == JUDGE_MESSAGES
    assert (sent["model"], sent["temperature"]) == ("judge-7b", 0.0)


@pytest.mark.parametrize(
    "usage", [None, {"prompt_tokens": "12"}, {"prompt_tokens": -1, "completion_tokens": 3.5}]
)
def test_chat_usage_the_server_does_not_report_is_none(fake, usage):
    body = {"choices": [{"message": {"role": "assistant", "content": "ok"}}]}
    if usage is not None:
        body["usage"] = usage
    server = fake(lambda payload: openai_fake.Reply(200, json.dumps(body).encode()))
    answer = openai_client(server).chat(JUDGE_MESSAGES)
    assert answer.text == "ok"
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (None, None)


def test_chat_sends_a_response_format_as_given(fake):
    server = fake(lambda payload: openai_fake.completion('{"better": "1"}'))
    wanted = {"type": "json_schema", "json_schema": {"name": "ab_answer", "schema": {}}}
    openai_client(server).chat(JUDGE_MESSAGES, response_format=wanted)
    openai_client(server).chat(JUDGE_MESSAGES)
    assert server.requests[0]["response_format"] == wanted
    assert "response_format" not in server.requests[1]


def test_a_400_naming_response_format_is_a_refusal_of_it_and_not_retried(fake):
    server = fake(openai_fake.refusing_response_format(openai_fake.echo))
    with pytest.raises(BotHTTPError) as caught:
        openai_client(server).chat(JUDGE_MESSAGES, response_format={"type": "json_schema"})
    assert refuses_parameter(caught.value, "response_format")
    assert not refuses_parameter(caught.value, "temperature")
    assert caught.value.summary == "answered HTTP 400"  # the body stays out of the summary
    assert len(server.requests) == 1


def test_chat_retries_a_429_after_its_retry_after(fake):
    server = fake(openai_fake.then(openai_fake.rate_limited("1"), openai_fake.echo))
    sleeps = []
    answer = openai_client(server, sleep=sleeps.append).chat(JUDGE_MESSAGES)
    assert answer.text == "echo: Which is better?"
    assert sleeps == [1.0] and len(server.requests) == 2


def test_chat_drops_the_nul_of_an_answer(fake):
    server = fake(lambda payload: openai_fake.completion('{"better": "1"}\u0000'))
    assert openai_client(server).chat([{"role": "user", "content": "?"}]).text == '{"better": "1"}'


def test_chat_needs_an_openai_endpoint(serve):
    server = serve(bots.echo)
    with pytest.raises(BotError, match="only OpenAI-compatible endpoints"):
        client(server).chat(JUDGE_MESSAGES)
    assert server.requests == []


# Address policy -------------------------------------------------------------------------


@pytest.fixture
def resolver(monkeypatch):
    """Makes bot.example.test resolve to the addresses set in the returned dict."""
    answers = {"bot.example.test": ["127.0.0.1"]}
    calls = []
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host not in answers:
            return real(host, port, *args, **kwargs)
        calls.append(host)
        return [
            (
                socket.AF_INET6 if ":" in a else socket.AF_INET,
                socket.SOCK_STREAM,
                6,
                "",
                (a, port, 0, 0) if ":" in a else (a, port),
            )
            for a in answers[host]
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    answers["calls"] = calls
    return answers


def test_a_host_name_resolving_to_loopback_is_refused(fake, resolver, settings):
    settings.EVALHUB_OUTBOUND_ALLOW = []
    server = fake(openai_fake.echo)
    endpoint = Endpoint(
        "named",
        f"http://bot.example.test:{server.port}/v1",
        protocol="openai",
        sampling=Sampling(model="m"),
    )
    with pytest.raises(
        BotRefused, match="resolves to 127.0.0.1, a loopback address that no EVALHUB_OUTBOUND_ALLOW"
    ) as caught:
        BotClient(endpoint, retry=FAST, limiter=LocalLimiter()).reply("c", TURNS, 0)
    assert not caught.value.transient and caught.value.attempts == 1
    assert server.requests == []


def test_every_resolved_address_is_checked(fake, resolver, settings):
    settings.EVALHUB_OUTBOUND_ALLOW = []
    resolver["bot.example.test"] = ["93.184.216.34", "10.0.0.7"]
    endpoint = Endpoint("named", "http://bot.example.test:8080/reply")
    with pytest.raises(BotRefused, match="resolves to 10.0.0.7, a private address"):
        BotClient(endpoint, retry=FAST, limiter=LocalLimiter()).reply("c", TURNS, 0)


def test_a_name_that_does_not_resolve_is_unreachable_and_retried(resolver):
    resolver["nowhere.example.test"] = []
    endpoint = Endpoint("nowhere", "http://nowhere.example.test/reply")
    with pytest.raises(BotUnreachable, match="resolves to no address") as caught:
        BotClient(endpoint, retry=FAST, limiter=LocalLimiter()).reply("c", TURNS, 0)
    assert caught.value.transient and caught.value.attempts == 3


def test_a_literal_private_address_is_refused_too(serve, settings):
    settings.EVALHUB_OUTBOUND_ALLOW = []
    server = serve(bots.echo)
    with pytest.raises(BotRefused, match="127.0.0.1, a loopback address"):
        client(server).reply("c", TURNS, 0)
    assert server.requests == []


def test_the_connection_goes_to_the_address_that_was_checked(fake, resolver):
    # Resolved once per connection: a second answer (DNS rebinding) is never asked for.
    server = fake(openai_fake.echo)
    endpoint = Endpoint(
        "named",
        f"http://bot.example.test:{server.port}/v1",
        protocol="openai",
        sampling=Sampling(model="m"),
    )
    assert BotClient(endpoint, retry=FAST, limiter=LocalLimiter()).reply("c", TURNS, 0) == (
        "echo: hi there"
    )
    assert resolver["calls"] == ["bot.example.test"]
    assert server.headers[0]["Host"] == f"bot.example.test:{server.port}"


def test_an_allow_listed_address_is_reached_on_its_port_only(settings):
    with bots.BotPool() as pool:
        allowed, other = pool.start(bots.echo), pool.start(bots.echo)
        settings.EVALHUB_OUTBOUND_ALLOW = [f"127.0.0.1:{allowed.port}"]
        assert client(allowed).reply("c", TURNS, 1) == "echo: hi there"
        with pytest.raises(BotRefused, match=f"127.0.0.1, a loopback address .* port {other.port}"):
            client(other).reply("c", TURNS, 1)
        assert other.requests == []


def test_a_host_name_entry_reaches_what_that_name_resolves_to(fake, resolver, settings):
    server = fake(openai_fake.echo)
    resolver["other.example.test"] = ["127.0.0.1"]
    settings.EVALHUB_OUTBOUND_ALLOW = [f"bot.example.test:{server.port}"]

    def named(host):
        url = f"http://{host}:{server.port}/v1"
        endpoint = Endpoint(host, url, protocol="openai", sampling=Sampling(model="m"))
        return BotClient(endpoint, retry=FAST, limiter=LocalLimiter())

    assert named("bot.example.test").reply("c", TURNS, 0) == "echo: hi there"
    with pytest.raises(BotRefused):
        named("other.example.test").reply("c", TURNS, 0)
    assert len(server.requests) == 1


@pytest.mark.parametrize("answer", ["2002:7f00:1::1", "::ffff:127.0.0.1", "64:ff9b::7f00:1"])
def test_an_ipv6_answer_carrying_loopback_is_refused(resolver, settings, answer):
    settings.EVALHUB_OUTBOUND_ALLOW = []
    resolver["bot.example.test"] = [answer]
    endpoint = Endpoint("named", "http://bot.example.test:8080/reply")
    with pytest.raises(BotRefused, match="carrying 127.0.0.1|resolves to 127.0.0.1"):
        BotClient(endpoint, retry=FAST, limiter=LocalLimiter()).reply("c", TURNS, 0)


@pytest.mark.parametrize("answer", ["169.254.169.254", "fd00:ec2::254", "2002:a9fe:a9fe::1"])
def test_the_metadata_address_is_refused_whatever_the_allow_list_says(resolver, settings, answer):
    settings.EVALHUB_OUTBOUND_ALLOW = ["0.0.0.0/0", "::/0", "bot.example.test"]
    resolver["bot.example.test"] = [answer]
    endpoint = Endpoint("named", "http://bot.example.test:80/latest/meta-data/")
    with pytest.raises(BotRefused, match="never reached, even when allow-listed"):
        BotClient(endpoint, retry=FAST, limiter=LocalLimiter()).reply("c", TURNS, 0)


def test_the_token_is_not_in_an_endpoints_repr():
    assert "s3cret" not in repr(Endpoint("k", "http://bot.example.org/", "s3cret"))
