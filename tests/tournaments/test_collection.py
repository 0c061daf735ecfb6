"""Live dialogue collection end to end: scripted bots on 127.0.0.1, the Celery tasks (eager),
the stored conversations, failures, retries, idempotency and the concurrency limit."""

import random
import threading

import pytest
from django.db import connection
from django.db.models import F

from annotation.models import Campaign
from endpoints import budget as endpoint_budget
from endpoints import calls as endpoint_calls
from endpoints.models import BotEndpoint, EndpointUsage
from evalhub import leases
from evalhub.models import Conversation, Lease, Speaker, Turn
from tests import factories
from tests.endpoints import bots, openai_fake
from tournaments import collection, tasks
from tournaments.collection import (
    CollectionError,
    DialogueFailed,
    NoSeedConversations,
    collect_dialogue,
)
from tournaments.models import PartnerSet, PlannedDialogue, Tournament
from tournaments.plan import PlanInvalid, make_plan

DOMAIN = "chitchat"


@pytest.fixture(autouse=True)
def fast_retries(settings):
    settings.EVALHUB_BOT_RETRY_ATTEMPTS = 3
    settings.EVALHUB_BOT_RETRY_BASE_DELAY = 0.001
    settings.EVALHUB_BOT_RETRY_MAX_DELAY = 0.004


@pytest.fixture
def serve():
    with bots.BotPool() as pool:
        yield pool.start


def conversation(external_id, texts, *, domain=DOMAIN, source="human-human"):
    c = Conversation.objects.create(external_id=external_id, domain=domain, source=source)
    Speaker.objects.bulk_create([Speaker(conversation=c, index=i) for i in (0, 1)])
    Turn.objects.bulk_create(
        Turn(conversation=c, position=p, speaker=p % 2, text=t) for p, t in enumerate(texts)
    )
    return c


@pytest.fixture
def seeds():
    """The seed pool of the domain (ids in external-id order), among decoys never picked."""
    pool = [
        conversation(f"hh-{i}", [f"hello {i}", f"hi {i}, how are you?", f"fine {i}"])
        for i in range(3)
    ]
    conversation("hh-short", ["just one turn"])
    conversation("news-0", ["other domain", "not a seed"], domain="news")
    conversation("bot-0", ["bot talk", "not a seed"], source="self-play")
    return [c.pk for c in pool]


def bot(slug, server, *, limit=2, timeout=2.0):
    system = factories.system(None, slug=slug)
    BotEndpoint.objects.create(
        system=system, url=server.url, timeout_seconds=timeout, max_concurrency=limit
    )
    return system


def tournament(kind, targets, *, partners=None, per_pair=1, exchanges=2, domain=DOMAIN):
    t = Tournament.objects.create(
        slug="cup",
        name="Cup",
        kind="spot_the_bot",
        schedule=kind,
        domain=domain,
        conversations_per_pair=per_pair,
        exchanges=exchanges,
        seed=7,
    )
    t.systems.set(targets)
    if partners is not None:
        partner_set = PartnerSet.objects.create(slug="partners", name="Partners")
        partner_set.systems.set(partners)
        t.partner_set = partner_set
        t.save()
    return t


def check_conversation(planned, seeds, scripts):
    """Shape, seed exchange, turn alternation, who said what, and metadata of one dialogue.

    The seed exchange is the conversation's seed (no bot's turn); the bots' turns are the
    Turn rows, from position 0. A scripted bot saw the seed too: its text counts it in."""
    c = planned.conversation
    t = planned.tournament
    assert c.external_id == f"{t.slug}/{planned.key}"
    assert (c.source, c.domain) == (t.schedule, t.domain)
    speakers = [s.system.slug for s in c.speakers.order_by("index")]
    assert speakers == planned.speakers
    turns = list(c.turns.order_by("position"))
    assert [t_.position for t_ in turns] == list(range(2 * t.exchanges))
    assert [t_.speaker for t_ in turns] == [p % 2 for p in range(len(turns))]
    seed = Conversation.objects.get(pk=random.Random(planned.seed).choice(seeds))
    assert c.metadata == {
        "tournament": t.slug,
        "planned_key": planned.key,
        "seed_conversation": seed.external_id,
        "plan_seed": planned.seed,
        "attempt": planned.attempts,
    }
    seed_texts = list(seed.turns.order_by("position").values_list("text", flat=True))
    assert c.seed_turns == [
        {"speaker": 0, "text": seed_texts[0]},
        {"speaker": 1, "text": seed_texts[1]},
    ]
    history = [turn["text"] for turn in c.seed_turns] + [t_.text for t_ in turns]
    for p in range(2, len(history)):
        kind = scripts[planned.speakers[p % 2]]
        if kind == "counting":
            assert history[p] == f"count {p} as {p % 2}"
        else:
            assert history[p] == f"echo: {history[p - 1]}"[:300]


@pytest.mark.django_db
def test_all_play_all_end_to_end(serve, seeds):
    flaky = serve(bots.fail_first(bots.counting, bots.SERVER_ERROR))
    systems = [bot("echo", serve(bots.echo)), bot("counter", serve(bots.counting))]
    t = tournament("all-play-all", [*systems, bot("flaky", flaky)], per_pair=2, exchanges=2)

    result = tasks.collect_tournament.delay(t.pk).get()

    n = 3 * 2 * 2  # i × (i - 1) × j
    assert result == {"planned": n, "enqueued": n}
    plan = list(t.plan.select_related("conversation", "tournament"))
    assert len(plan) == n and {p.status for p in plan} == {"complete"}
    assert {p.attempts for p in plan} == {1}  # the flaky bot was retried within the attempt
    assert Conversation.objects.filter(source="all-play-all").count() == n
    scripts = {"echo": "echo", "counter": "counting", "flaky": "counting"}
    for planned in plan:
        check_conversation(planned, seeds, scripts)
    # The flaky bot is in 8 conversations, speaks twice in each and failed once in each.
    assert flaky.conversations() == {p.key for p in plan if "flaky" in p.speakers}
    assert len(flaky.requests) == 8 * (2 + 1)
    t.refresh_from_db()
    assert t.status == "ready"


@pytest.mark.django_db
def test_running_the_collection_again_adds_nothing(serve, seeds):
    servers = [serve(bots.counting), serve(bots.echo), serve(bots.counting)]
    t = tournament("all-play-all", [bot(s, x) for s, x in zip("abc", servers, strict=True)])
    tasks.collect_tournament.delay(t.pk).get()
    requests = sum(len(s.requests) for s in servers)
    conversations, turns = Conversation.objects.count(), Turn.objects.count()

    assert tasks.collect_tournament.delay(t.pk, retry_failed=True).get() == {
        "planned": 0,
        "enqueued": 0,
    }
    planned = t.plan.first()
    assert tasks.collect_planned_dialogue.delay(planned.pk).get() == "skipped"
    assert collect_dialogue(planned) is None
    assert sum(len(s.requests) for s in servers) == requests
    assert (Conversation.objects.count(), Turn.objects.count()) == (conversations, turns)
    assert t.plan.count() == 6 and set(t.plan.values_list("attempts", flat=True)) == {1}


@pytest.mark.django_db
def test_bipartite_play_end_to_end(serve, seeds):
    targets = [bot("t-echo", serve(bots.echo)), bot("t-count", serve(bots.counting))]
    partners = [
        bot("p-count", serve(bots.counting)),
        bot("p-flaky", serve(bots.fail_first(bots.echo, bots.BAD_JSON))),
    ]
    t = tournament("bipartite-play", targets, partners=partners, per_pair=1, exchanges=3)

    assert tasks.collect_tournament.delay(t.pk).get() == {"planned": 4, "enqueued": 4}

    plan = list(t.plan.select_related("conversation", "tournament"))
    assert len(plan) == 2 * 2 * 1  # i × k × j
    assert {(p.speakers[0], p.speakers[1]) for p in plan} == {
        (target, partner) for target in ("t-echo", "t-count") for partner in ("p-count", "p-flaky")
    }
    scripts = {"t-echo": "echo", "t-count": "counting", "p-count": "counting", "p-flaky": "echo"}
    for planned in plan:
        assert planned.status == "complete"
        check_conversation(planned, seeds, scripts)
    assert Conversation.objects.filter(source="bipartite-play").count() == 4
    t.refresh_from_db()
    assert t.status == "ready"


@pytest.mark.django_db
def test_a_broken_bot_fails_its_dialogues_and_the_others_complete(serve, seeds):
    broken = serve(bots.always(500))
    a, b = bot("a", serve(bots.counting)), bot("b", serve(bots.counting))
    t = tournament("all-play-all", [a, b, bot("broken", broken)], exchanges=2)
    seed_turns = Turn.objects.count()

    assert tasks.collect_tournament.delay(t.pk).get() == {"planned": 6, "enqueued": 6}

    failed = t.plan.filter(status="failed")
    assert set(failed.values_list("key", flat=True)) == {
        "a--broken--0",
        "b--broken--0",
        "broken--a--0",
        "broken--b--0",
    }
    assert set(t.plan.filter(status="complete").values_list("key", flat=True)) == {
        "a--b--0",
        "b--a--0",
    }
    first = failed.get(key="a--broken--0")
    assert first.attempts == 1 and first.conversation is None
    assert first.last_error == (
        f"turn 3 by broken: BotHTTPError: {broken.url}: answered HTTP 500: broken "
        "(gave up after 3 attempts)"
    )
    assert failed.get(key="broken--a--0").last_error.startswith("turn 2 by broken: ")
    # Nothing partial: only the two complete conversations and their 6 turns each.
    assert Conversation.objects.filter(source="all-play-all").count() == 2
    assert Turn.objects.count() == seed_turns + 2 * 4
    t.refresh_from_db()
    assert t.status == "collecting"

    broken.script = bots.counting  # the bot's owner fixes it
    assert tasks.collect_tournament.delay(t.pk).get()["enqueued"] == 0  # failed wait for a retry
    assert tasks.collect_tournament.delay(t.pk, retry_failed=True).get()["enqueued"] == 4
    assert set(t.plan.values_list("status", flat=True)) == {"complete"}
    for planned in t.plan.filter(key__contains="broken").select_related("conversation"):
        assert planned.attempts == 2 and planned.last_error == ""
        check_conversation(planned, seeds, {"a": "counting", "b": "counting", "broken": "counting"})
    t.refresh_from_db()
    assert t.status == "ready"


# Issue 23, finding 12: a bot's NUL characters (PostgreSQL stores none: a DataError there) --


def with_nul(payload: dict) -> bots.Reply:
    """The counting bot's reply, between two NULs."""
    return bots.text(f"\u0000count {len(payload['turns'])} as {payload['speaker']}\u0000")


@pytest.mark.django_db
def test_a_bot_replying_with_nul_characters_is_collected_without_them(serve, seeds):
    t = tournament("all-play-all", [bot("nul", serve(with_nul)), bot("b", serve(bots.counting))])

    assert tasks.collect_tournament.delay(t.pk).get() == {"planned": 2, "enqueued": 2}

    plan = list(t.plan.select_related("conversation", "tournament"))
    assert {p.status for p in plan} == {"complete"}
    for planned in plan:
        check_conversation(planned, seeds, {"nul": "counting", "b": "counting"})
    # (in Python: a query for a NUL is the very thing PostgreSQL refuses)
    assert not [text for text in Turn.objects.values_list("text", flat=True) if "\x00" in text]
    t.refresh_from_db()
    assert t.status == "ready"


@pytest.mark.django_db
def test_a_bot_whose_error_page_holds_a_nul_fails_its_dialogue_with_the_error_stored(serve, seeds):
    broken = serve(lambda payload: bots.Reply(500, b"\x00broken\x00"))
    t = tournament("self-play", [bot("broken", broken)])

    assert tasks.collect_tournament.delay(t.pk).get() == {"planned": 1, "enqueued": 1}

    planned = t.plan.get()
    assert planned.status == "failed" and "answered HTTP 500" in planned.last_error
    assert "\x00" not in planned.last_error


@pytest.mark.django_db
def test_collect_dialogue_records_the_failure_and_raises(serve, seeds):
    t = tournament("self-play", [bot("mute", serve(lambda payload: bots.text("")))])
    make_plan(t)
    planned = t.plan.get()
    with pytest.raises(DialogueFailed, match='cup/mute--mute--0 \\(attempt 1\\).*"text" is empty'):
        collect_dialogue(planned)
    planned.refresh_from_db()
    assert planned.status == "failed" and planned.attempts == 1
    assert "BotBadReply" in planned.last_error
    assert tasks.collect_planned_dialogue.delay(planned.pk).get() == "failed"
    planned.refresh_from_db()
    assert planned.attempts == 2


@pytest.mark.django_db
def test_a_domain_without_seed_conversations_is_refused(serve, seeds):
    server = serve(bots.counting)
    t = tournament("self-play", [bot("solo", server)], domain="empty-domain")
    with pytest.raises(NoSeedConversations, match='in the domain "empty-domain"'):
        tasks.collect_tournament.delay(t.pk).get()
    assert server.requests == []
    assert set(t.plan.values_list("status", flat=True)) == {"pending"}
    with pytest.raises(DialogueFailed, match="No human-human conversation"):
        collect_dialogue(t.plan.get())
    assert t.plan.get().status == "failed"


@pytest.mark.django_db
def test_a_tournament_under_annotation_is_not_collected(serve, seeds):
    t = tournament("self-play", [bot("solo", serve(bots.counting))])
    t.status = "annotating"
    t.save()
    with pytest.raises(CollectionError, match="cup is being annotated"):
        tasks.collect_tournament.delay(t.pk).get()
    assert not t.plan.exists()


@pytest.mark.django_db
def test_a_running_dialogue_is_left_alone_while_its_lease_is_live(serve, seeds):
    server = serve(bots.counting)
    t = tournament("self-play", [bot("solo", server)])
    make_plan(t)
    planned = t.plan.get()
    PlannedDialogue.objects.filter(pk=planned.pk).update(status="running", attempts=1)
    factories.lease(f"collection:{planned.pk}")
    assert collect_dialogue(planned) is None
    assert tasks.collect_tournament.delay(t.pk, retry_failed=True).get()["enqueued"] == 0
    assert server.requests == []
    planned.refresh_from_db()
    assert planned.status == "running" and planned.attempts == 1


@pytest.mark.django_db
def test_a_retry_takes_a_dead_worker_s_dialogue_over_at_once_and_collects_it_once(serve, seeds):
    server = serve(bots.counting)
    t = tournament("self-play", [bot("solo", server)])
    make_plan(t)
    planned = t.plan.get()
    PlannedDialogue.objects.filter(pk=planned.pk).update(status="running", attempts=1)
    factories.lease(f"collection:{planned.pk}", lapsed=True)
    assert tasks.collect_tournament.delay(t.pk, retry_failed=True).get()["enqueued"] == 1
    planned.refresh_from_db()
    assert planned.status == "complete" and planned.attempts == 2
    assert Conversation.objects.filter(external_id=f"cup/{planned.key}").count() == 1
    assert not Lease.objects.exists()  # released once stored
    assert tasks.collect_tournament.delay(t.pk, retry_failed=True).get()["enqueued"] == 0


@pytest.mark.django_db
def test_a_worker_that_lost_its_claim_stores_nothing(serve, seeds, monkeypatch):
    t = tournament("self-play", [bot("solo", serve(bots.counting))], exchanges=2)
    make_plan(t)
    planned = t.plan.get()
    reply = collection.BotClient.reply
    calls = []

    def reply_then_get_overtaken(self, *args):
        calls.append(args)
        if len(calls) == 3:  # another worker took the row over, thinking this one dead
            PlannedDialogue.objects.filter(pk=planned.pk).update(attempts=F("attempts") + 1)
        return reply(self, *args)

    monkeypatch.setattr(collection.BotClient, "reply", reply_then_get_overtaken)
    assert collect_dialogue(planned) is None
    assert len(calls) == 3  # it stopped at the first heartbeat after the takeover
    assert not Conversation.objects.filter(external_id__startswith="cup/").exists()
    planned.refresh_from_db()
    assert (planned.status, planned.attempts) == ("running", 2)  # the new owner's


@pytest.mark.django_db
def test_the_task_tolerates_a_vanished_row():
    assert tasks.collect_planned_dialogue.delay(10**9).get() == "missing"


@pytest.fixture
def database_steps_serialized_on_sqlite(monkeypatch):
    """SQLite's shared-cache test database fails a concurrent writer at once ("database
    table is locked") instead of making it wait, so there the database steps of a
    collection take turns; the bot requests between them still overlap. PostgreSQL runs
    everything concurrently, claims included."""
    if connection.vendor != "sqlite":
        return
    lock = threading.RLock()
    steps = ["_claim_dialogue", "_load", "pick_seed", "clients_for", "_heartbeat", "_store"]
    # The daily budget is charged with an UPDATE before each bot request, from the threads.
    targets = [(collection, name) for name in [*steps, "_record_failure"]]
    targets.append((endpoint_budget, "spend"))
    # The lease is taken, renewed and released, and each request's outcome recorded, from
    # the threads too.
    targets += [(leases, name) for name in ("acquire", "renew", "release")]
    targets.append((endpoint_calls, "record"))
    for module, name in targets:
        original = getattr(module, name)

        def serialized(*args, _original=original, **kwargs):
            with lock:
                return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, serialized)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("database_steps_serialized_on_sqlite")
@pytest.mark.parametrize(("limit", "most"), [(1, 1), (4, 4)])
def test_workers_collecting_at_once_respect_the_endpoint_limit(serve, seeds, limit, most):
    server = serve(bots.slow(bots.counting, 0.08))
    t = tournament("self-play", [bot("solo", server, limit=limit)], per_pair=4, exchanges=1)
    make_plan(t)
    plan = list(t.plan.all())
    barrier = threading.Barrier(len(plan) * 2)
    results, errors = [], []

    def worker(planned):
        try:
            barrier.wait()
            results.append(collect_dialogue(planned))
        except Exception as error:
            errors.append(error)
        finally:
            connection.close()

    # Two workers per dialogue: each dialogue is run by exactly one of them.
    threads = [threading.Thread(target=worker, args=(p,)) for p in plan for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sum(r is not None for r in results) == len(plan)
    assert set(t.plan.values_list("status", "attempts")) == {("complete", 1)}
    assert len(server.requests) == len(plan) * 2
    assert server.max_in_flight == most


# Real models: OpenAI-compatible endpoints --------------------------------------------------


@pytest.fixture
def fake():
    with openai_fake.FakePool() as pool:
        yield pool.start


def model_bot(slug, server, *, owner=None, allow_other_owners=False, **fields):
    system = factories.system(owner, slug=slug)
    BotEndpoint.objects.create(
        system=system,
        protocol="openai",
        url=server.base_url,
        model_name=f"model-{slug}",
        auth_token=f"sk-{slug}",
        allow_other_owners=allow_other_owners,
        **fields,
    )
    return system


def check_model_conversation(planned, seeds):
    """The seed, then each turn p by speaker p % 2 reading "<its model>: heard p,
    p//2 mine": the whole history arrived, with the bot's own turns as the assistant's."""
    stored = list(planned.conversation.turns.order_by("position"))
    t = planned.tournament
    assert len(stored) == 2 * t.exchanges  # the bots' turns only
    seed = Conversation.objects.get(pk=random.Random(planned.seed).choice(seeds))
    assert [x["text"] for x in planned.conversation.seed_turns] == list(
        seed.turns.order_by("position").values_list("text", flat=True)[:2]
    )
    for q, turn in enumerate(stored):
        p = q + 2  # its place in what the bots were sent, after the seed
        assert turn.speaker == p % 2
        assert turn.text == f"model-{planned.speakers[p % 2]}: heard {p}, {p // 2} mine"


@pytest.mark.django_db
def test_self_play_with_an_openai_endpoint_end_to_end(fake, seeds):
    server = fake(openai_fake.counting)
    t = tournament("self-play", [model_bot("llm", server, temperature=0.5)], per_pair=2)

    assert tasks.collect_tournament.delay(t.pk).get() == {"planned": 2, "enqueued": 2}

    plan = list(t.plan.select_related("conversation", "tournament"))
    assert {p.status for p in plan} == {"complete"}
    for planned in plan:
        assert planned.speakers == ["llm", "llm"]
        check_model_conversation(planned, seeds)
    assert len(server.requests) == 2 * 2 * 2  # dialogues × exchanges × speakers
    assert {r["model"] for r in server.requests} == {"model-llm"}
    assert {r["temperature"] for r in server.requests} == {0.5}
    assert {h["Authorization"] for h in server.headers} == {"Bearer sk-llm"}
    t.refresh_from_db()
    assert t.status == "ready"


@pytest.mark.django_db
def test_all_play_all_with_openai_endpoints_end_to_end(fake, seeds):
    rate_limited = fake(openai_fake.then(openai_fake.rate_limited("0"), openai_fake.counting))
    malformed_once = fake(openai_fake.then(openai_fake.MALFORMED, openai_fake.counting))
    systems = [
        model_bot("alpha", fake(openai_fake.counting)),
        model_bot("beta", rate_limited),
        model_bot("gamma", malformed_once),
    ]
    t = tournament("all-play-all", systems, per_pair=1, exchanges=2)

    assert tasks.collect_tournament.delay(t.pk).get() == {"planned": 6, "enqueued": 6}

    plan = list(t.plan.select_related("conversation", "tournament"))
    assert {(p.status, p.attempts) for p in plan} == {("complete", 1)}
    assert {tuple(p.speakers) for p in plan} == {
        (a, b) for a in ("alpha", "beta", "gamma") for b in ("alpha", "beta", "gamma") if a != b
    }
    for planned in plan:
        check_model_conversation(planned, seeds)
    # beta and gamma speak 2 × 2 turns in each of their 4 conversations, plus one retry.
    assert len(rate_limited.requests) == len(malformed_once.requests) == 4 * 2 + 1
    assert Conversation.objects.filter(source="all-play-all").count() == 6


@pytest.mark.django_db
def test_bipartite_play_with_openai_endpoints_end_to_end(fake, seeds):
    targets = [
        model_bot("t-one", fake(openai_fake.counting)),
        model_bot("t-two", fake(openai_fake.counting)),
    ]
    partners = [
        model_bot("p-one", fake(openai_fake.counting)),
        model_bot("p-two", fake(openai_fake.counting)),
    ]
    t = tournament("bipartite-play", targets, partners=partners, per_pair=1, exchanges=3)

    assert tasks.collect_tournament.delay(t.pk).get() == {"planned": 4, "enqueued": 4}

    plan = list(t.plan.select_related("conversation", "tournament"))
    assert {tuple(p.speakers) for p in plan} == {
        (target, partner) for target in ("t-one", "t-two") for partner in ("p-one", "p-two")
    }
    for planned in plan:
        assert planned.status == "complete"
        check_model_conversation(planned, seeds)
    t.refresh_from_db()
    assert t.status == "ready"


@pytest.mark.django_db
def test_a_trickling_model_fails_its_dialogue_at_the_deadline(fake, seeds):
    server = fake(openai_fake.trickle(openai_fake.counting, 0.05))
    t = tournament("self-play", [model_bot("drip", server, timeout_seconds=1.0)], exchanges=1)
    tasks.collect_tournament.delay(t.pk).get()
    planned = t.plan.get()
    assert planned.status == "failed" and planned.conversation is None
    assert "BotTimeout" in planned.last_error and "no reply within 1 s" in planned.last_error


# Whose endpoints a tournament may call -------------------------------------------------------


@pytest.mark.django_db
def test_another_owners_endpoint_is_refused_without_their_consent(fake, seeds):
    researcher, other = factories.user("researcher"), factories.user("other")
    server = fake(openai_fake.counting)
    mine = model_bot("mine", server, owner=researcher)
    theirs = model_bot("theirs", server, owner=other)
    t = tournament("all-play-all", [mine, theirs])
    t.owner = researcher
    t.save()

    with pytest.raises(PlanInvalid, match="The owners of theirs do not let other owners'"):
        tasks.collect_tournament.delay(t.pk).get()
    assert server.requests == [] and not t.plan.exists()

    BotEndpoint.objects.filter(system=theirs).update(allow_other_owners=True)
    assert tasks.collect_tournament.delay(t.pk).get()["enqueued"] == 2
    assert set(t.plan.values_list("status", flat=True)) == {"complete"}


@pytest.mark.django_db
def test_consent_withdrawn_after_planning_fails_the_dialogues(fake, seeds):
    researcher, other = factories.user("researcher"), factories.user("other")
    server = fake(openai_fake.counting)
    theirs = model_bot("theirs", server, owner=other, allow_other_owners=True)
    t = tournament("self-play", [theirs])
    t.owner = researcher
    t.save()
    make_plan(t)
    BotEndpoint.objects.filter(system=theirs).update(allow_other_owners=False)

    with pytest.raises(PlanInvalid, match="do not let other owners'"):
        tasks.collect_tournament.delay(t.pk).get()
    planned = t.plan.get()
    # A dialogue already enqueued checks again when it runs.
    assert tasks.collect_planned_dialogue.delay(planned.pk).get() == "failed"
    planned.refresh_from_db()
    assert planned.status == "failed" and server.requests == []
    assert "the owners of theirs do not let other owners' tournaments" in planned.last_error


@pytest.mark.django_db
def test_a_spent_daily_budget_fails_the_dialogue_and_sends_nothing_more(fake, seeds):
    server = fake(openai_fake.counting)
    t = tournament("self-play", [model_bot("thrifty", server, daily_budget=3)], exchanges=2)
    tasks.collect_tournament.delay(t.pk).get()
    planned = t.plan.get()
    assert planned.status == "failed" and len(server.requests) == 3
    assert "BudgetExhausted" in planned.last_error
    assert "daily budget of 3 requests is spent" in planned.last_error
    assert EndpointUsage.objects.get().requests == 3


# Retrying failed dialogues: the tournament page and `manage.py collect` --------------------


def broken_tournament(serve):
    broken = serve(bots.always(500))
    t = tournament("self-play", [bot("good", serve(bots.counting)), bot("broken", broken)])
    tasks.collect_tournament.delay(t.pk).get()
    assert dict(t.plan.values_list("key", "status")) == {
        "good--good--0": "complete",
        "broken--broken--0": "failed",
    }
    broken.script = bots.counting  # its owner fixes it
    return t


@pytest.mark.django_db
def test_staff_retry_the_failed_dialogues_from_the_tournament_page(client, serve, seeds):
    t = broken_tournament(serve)
    researcher = factories.user()
    client.force_login(researcher)
    # Unpublished and not theirs: the page does not exist for them, nor the action.
    assert client.post(f"/tournaments/{t.slug}/retry/").status_code == 404
    assert t.plan.get(key="broken--broken--0").status == "failed"
    client.force_login(factories.user(staff=True))
    page = client.get(f"/tournaments/{t.slug}/").content.decode()
    assert "Retry 1 failed or stalled dialogue" in page
    assert client.get(f"/tournaments/{t.slug}/retry/").status_code == 405
    page = client.post(f"/tournaments/{t.slug}/retry/", follow=True).content.decode()
    # Without a broker the retry ran inside the click: the page says how it ended.
    assert "Collection finished:" in page and "being collected again" not in page
    assert set(t.plan.values_list("status", flat=True)) == {"complete"}
    assert t.plan.get(key="broken--broken--0").attempts == 2
    t.refresh_from_db()
    assert t.status == "ready"


@pytest.mark.django_db
def test_the_retry_needs_the_csrf_token(serve, seeds):
    from django.test import Client

    t = broken_tournament(serve)
    client = Client(enforce_csrf_checks=True)
    client.force_login(factories.user(staff=True))
    assert client.post(f"/tournaments/{t.slug}/retry/").status_code == 403
    assert t.plan.get(key="broken--broken--0").status == "failed"


@pytest.mark.django_db
def test_collect_command_retries_failed_dialogues_only_when_asked(serve, seeds):
    from io import StringIO

    from django.core.management import call_command

    t = broken_tournament(serve)
    out = StringIO()
    call_command("collect", t.slug, stdout=out)
    assert "0 queued; 1 of 2 collected, 1 failed" in out.getvalue()
    call_command("collect", t.slug, "--retry-failed", stdout=out)
    assert "1 queued; 2 of 2 collected, 0 failed" in out.getvalue()
    assert set(t.plan.values_list("status", flat=True)) == {"complete"}


@pytest.mark.django_db
def test_no_retry_once_the_campaign_is_generated(serve, seeds):
    from django.core.management import CommandError, call_command

    t = broken_tournament(serve)
    t.campaign = Campaign.objects.create(slug="cup-campaign", title="Cup", task_kind="ab")
    t.save()
    with pytest.raises(CommandError, match="already has its campaign"):
        call_command("collect", t.slug, "--retry-failed")
    assert t.plan.get(key="broken--broken--0").attempts == 1


@pytest.mark.django_db
def test_a_collected_segment_holds_k_turns_of_each_bot_and_shows_the_seed_if_asked(serve, seeds):
    from annotation.models import Item
    from tournaments.spot_the_bot_campaign import generate_campaign

    t = tournament("self-play", [bot("solo", serve(bots.counting))], exchanges=2)
    Tournament.objects.filter(pk=t.pk).update(segment_lengths=[2], human_share=0, show_seed=True)
    tasks.collect_tournament.delay(t.pk).get()
    planned = t.plan.select_related("conversation").get()
    generate_campaign(Tournament.objects.get(pk=t.pk))
    item = Item.objects.get(campaign__tournament=t)
    # Two exchanges after the seed: each bot turn is the counting bot's, none a human's.
    assert [turn["text"] for turn in item.content["turns"]] == [
        f"count {p} as {p % 2}" for p in range(2, 6)
    ]
    assert item.content["seed"] == planned.conversation.seed_turns
    assert item.content["meta"]["exchanges"] == 2
