"""The per-day request budget of a bot endpoint: charged per request, retries included,
renewed each UTC day, never overspent by workers charging at once; chat campaigns spend
their share of it only, and tournaments and judges keep the rest."""

import datetime
import threading

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import QuerySet

from endpoints import budget as endpoint_budget
from endpoints.client import (
    BotClient,
    BudgetExhausted,
    ChatShareExhausted,
    Endpoint,
    LocalLimiter,
    RetryPolicy,
)
from endpoints.models import BotEndpoint, EndpointUsage
from tests import factories
from tests.endpoints import openai_fake

TURNS = [{"speaker": 0, "text": "hello"}, {"speaker": 1, "text": "hi"}]
FAST = RetryPolicy(attempts=3, base_delay=0.001, max_delay=0.001, jitter=False)


@pytest.fixture
def fake():
    with openai_fake.FakePool() as pool:
        yield pool.start


def stored(server, budget):
    return BotEndpoint.objects.create(
        system=factories.system(None),
        protocol="openai",
        url=server.base_url,
        model_name="m",
        daily_budget=budget,
    )


def bot(endpoint):
    return BotClient(Endpoint.from_model(endpoint), retry=FAST, limiter=LocalLimiter())


@pytest.mark.django_db
def test_requests_beyond_the_budget_are_refused_and_not_sent(fake):
    server = fake(openai_fake.counting)
    endpoint = stored(server, 2)
    client = bot(endpoint)
    client.reply("c", TURNS, 0)
    client.reply("c", TURNS, 1)
    with pytest.raises(BudgetExhausted, match="daily budget of 2 requests is spent") as caught:
        client.reply("c", TURNS, 0)
    assert not caught.value.transient and caught.value.attempts == 1
    assert len(server.requests) == 2
    assert EndpointUsage.objects.get(endpoint=endpoint).requests == 2


@pytest.mark.django_db
def test_retries_are_charged_too(fake):
    server = fake(openai_fake.then(openai_fake.MALFORMED, openai_fake.counting, times=2))
    endpoint = stored(server, 10)
    bot(endpoint).reply("c", TURNS, 0)
    assert len(server.requests) == 3
    assert endpoint_budget.used_today(endpoint.pk) == 3


@pytest.mark.django_db
def test_a_budget_spent_mid_retries_stops_them(fake):
    server = fake(lambda payload: openai_fake.MALFORMED)
    endpoint = stored(server, 2)
    with pytest.raises(BudgetExhausted):
        bot(endpoint).reply("c", TURNS, 0)
    assert len(server.requests) == 2


@pytest.mark.django_db
def test_the_budget_renews_each_utc_day(fake, monkeypatch):
    server = fake(openai_fake.counting)
    endpoint = stored(server, 1)
    monkeypatch.setattr(endpoint_budget, "today", lambda: datetime.date(2026, 1, 1))
    bot(endpoint).reply("c", TURNS, 0)
    with pytest.raises(BudgetExhausted):
        bot(endpoint).reply("c", TURNS, 0)
    monkeypatch.setattr(endpoint_budget, "today", lambda: datetime.date(2026, 1, 2))
    bot(endpoint).reply("c", TURNS, 0)
    assert sorted(EndpointUsage.objects.values_list("day", "requests")) == [
        (datetime.date(2026, 1, 1), 1),
        (datetime.date(2026, 1, 2), 1),
    ]


@pytest.mark.django_db
def test_the_default_budget_comes_from_settings(settings):
    settings.EVALHUB_BOT_DAILY_BUDGET = 77
    settings.EVALHUB_BOT_TIMEOUT_SECONDS = 12.0
    settings.EVALHUB_BOT_MAX_CONCURRENCY = 5
    endpoint = BotEndpoint.objects.create(system=factories.system(None), url="http://x.example/")
    assert (endpoint.daily_budget, endpoint.timeout_seconds, endpoint.max_concurrency) == (
        77,
        12.0,
        5,
    )


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_workers_charging_at_once_never_overspend():
    endpoint = BotEndpoint.objects.create(
        system=factories.system(None), url="http://x.example/", daily_budget=7
    )
    barrier = threading.Barrier(12)
    results = []

    def worker():
        try:
            barrier.wait()
            results.append(endpoint_budget.spend(endpoint.pk, 7))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 5 + [True] * 7
    assert EndpointUsage.objects.get(endpoint=endpoint).requests == 7


@pytest.mark.django_db
def test_a_row_another_worker_creates_meanwhile_is_charged_not_taken_for_spent(monkeypatch):
    """The first UPDATE finds no row of today; before this worker looks again, another one
    creates it. The request is charged to that row (it used to be refused as over budget)."""
    endpoint = BotEndpoint.objects.create(
        system=factories.system(None), url="http://x.example/", daily_budget=5
    )
    original = QuerySet.update
    first = []

    def update_then_another_worker_creates_the_row(self, **fields):
        updated = original(self, **fields)
        if not first:
            first.append(updated)
            EndpointUsage.objects.create(endpoint=endpoint, day=endpoint_budget.today(), requests=1)
        return updated

    monkeypatch.setattr(QuerySet, "update", update_then_another_worker_creates_the_row)
    assert endpoint_budget.spend(endpoint.pk, 5) is True
    assert first == [0]
    assert EndpointUsage.objects.get(endpoint=endpoint).requests == 2


# The chat share ---------------------------------------------------------------------------


def an_endpoint(budget, chat_share=50):
    return BotEndpoint.objects.create(
        system=factories.system(None),
        url="http://x.example/",
        daily_budget=budget,
        chat_share=chat_share,
    )


@pytest.mark.parametrize(
    ("budget", "share", "limit"),
    [(100, 50, 50), (5, 40, 2), (3, 50, 1), (1, 50, 0), (7, 0, 0), (7, 100, 7)],
)
def test_the_chat_limit_is_the_share_of_the_budget_rounded_down(budget, share, limit):
    assert endpoint_budget.chat_limit(budget, share) == limit


@pytest.mark.django_db
def test_chats_beyond_their_share_are_refused_while_the_rest_stays_for_others():
    endpoint = an_endpoint(4)
    chats = [endpoint_budget.spend(endpoint.pk, 4, chat_limit=2) for _ in range(3)]
    others = [endpoint_budget.spend(endpoint.pk, 4) for _ in range(3)]
    assert (chats, others) == ([True, True, False], [True, True, False])
    usage = EndpointUsage.objects.get(endpoint=endpoint)
    assert (usage.requests, usage.chat_requests) == (4, 2)


@pytest.mark.django_db
def test_others_may_use_what_chats_leave_unused_and_then_chats_get_nothing():
    endpoint = an_endpoint(3)
    assert [endpoint_budget.spend(endpoint.pk, 3) for _ in range(3)] == [True] * 3
    assert endpoint_budget.spend(endpoint.pk, 3, chat_limit=1) is False
    assert EndpointUsage.objects.get(endpoint=endpoint).chat_requests == 0


@pytest.mark.django_db
def test_a_refunded_chat_request_is_given_back_to_both_counts():
    endpoint = an_endpoint(4)
    endpoint_budget.spend(endpoint.pk, 4, chat_limit=2)
    endpoint_budget.spend(endpoint.pk, 4)
    endpoint_budget.refund(endpoint.pk, endpoint_budget.today(), chat=True)
    usage = EndpointUsage.objects.get(endpoint=endpoint)
    assert (usage.requests, usage.chat_requests) == (1, 0)
    assert endpoint_budget.chat_used_today(endpoint.pk) == 0


@pytest.mark.django_db
def test_a_chat_client_is_charged_to_the_share_and_a_tournament_client_is_not(fake):
    server = fake(openai_fake.counting)
    endpoint = stored(server, 4)
    endpoint.chat_share = 25  # one request
    endpoint.save()
    chat = BotClient(
        Endpoint.from_model(endpoint), retry=FAST, limiter=LocalLimiter(), purpose="chat"
    )
    chat.reply("c", TURNS, 0)
    with pytest.raises(ChatShareExhausted, match=r"share of the daily budget \(1 of 4"):
        chat.reply("c", TURNS, 0)
    bot(endpoint).reply("c", TURNS, 0)
    assert len(server.requests) == 2
    assert endpoint_budget.chat_used_today(endpoint.pk) == 1


@pytest.mark.django_db
def test_the_default_chat_share_comes_from_settings(settings):
    settings.EVALHUB_BOT_CHAT_SHARE_PERCENT = 30
    endpoint = BotEndpoint.objects.create(system=factories.system(None), url="http://x.example/")
    assert endpoint.chat_share == 30


@pytest.mark.django_db
@pytest.mark.parametrize("share", [-1, 101])
def test_a_chat_share_out_of_range_is_refused_by_the_database(share):
    with pytest.raises(IntegrityError), transaction.atomic():
        an_endpoint(10, share)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_chats_charging_at_once_never_overspend_their_share():
    endpoint = an_endpoint(10, 30)
    barrier = threading.Barrier(8)
    results = []

    def worker():
        try:
            barrier.wait()
            results.append(endpoint_budget.spend(endpoint.pk, 10, chat_limit=3))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 5 + [True] * 3
    usage = EndpointUsage.objects.get(endpoint=endpoint)
    assert (usage.requests, usage.chat_requests) == (3, 3)
