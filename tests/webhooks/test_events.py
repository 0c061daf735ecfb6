"""Each event owners subscribe to fires from where it happens (webhooks/events.py's
callers), reaches the owner's subscriptions that want it, once, and nobody else's."""

from decimal import Decimal

import pytest
from django.utils import timezone

from analysis.models import AnalysisRun
from analysis.runs.tasks import analyze_campaign
from annotation.allocation import NoWork, next_assignment
from annotation.campaigns import change_status, decide_launch, launch_campaign, request_launch
from annotation.models import Campaign, Worker
from arenas.models import Battle
from arenas.tasks import compute_leaderboard
from judging import execution
from tests import factories
from tests.analysis.dimensional_builders import FAST, imported_study
from tests.annotation.builders import ab_campaign
from tests.arenas.builders import arena
from tests.endpoints import openai_fake
from tests.judging import arena_builders
from tests.judging.test_execution import fast_client
from webhooks.events import emit
from webhooks.models import Delivery, EventType

from .builders import subscribe
from .subscriber import Subscriber

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _public_url(settings):
    settings.EVALHUB_PUBLIC_URL = "https://evalhub.example.org"
    settings.EVALHUB_PROLIFIC_TOKEN = "sekrit"  # a launch request asks for it; nothing is called


@pytest.fixture
def owner():
    return factories.user("owner")


@pytest.fixture
def server():
    with Subscriber() as subscriber:
        yield subscriber


def worker(name: str) -> Worker:
    return Worker.objects.create(provider="local", external_id=f"link:{name}")


def events(server, secret) -> list[str]:
    return [message["type"] for message in server.verified(secret)]


def test_a_campaign_launch_and_finish_are_delivered(
    owner, server, django_capture_on_commit_callbacks
):
    _, secret = subscribe(owner, server.url)
    c = ab_campaign(2, status="draft", owner=owner)
    with django_capture_on_commit_callbacks(execute=True):
        launch_campaign(c, actor=owner)
        change_status(c, "pause")
        change_status(c, "launch")  # a resume is not a launch
        change_status(c, "finish")
    assert events(server, secret) == ["campaign.launched", "campaign.finished"]
    finished = server.verified(secret)[1]["data"]["campaign"]
    assert (finished["slug"], finished["status"]) == (c.slug, "finished")
    assert finished["url"] == f"https://evalhub.example.org{c.get_absolute_url()}"


def test_a_campaign_over_budget_is_delivered_once(
    owner, server, django_capture_on_commit_callbacks
):
    _, secret = subscribe(owner, server.url, [EventType.CAMPAIGN_OVER_BUDGET])
    c = ab_campaign(
        4, batch_size=1, redundancy=1, reward_per_batch=Decimal("1.00"), budget=Decimal("1.00")
    )
    Campaign.objects.filter(pk=c.pk).update(owner=owner)
    c.refresh_from_db()
    next_assignment(c, worker("w1"))
    for name in ("w2", "w3"):
        with django_capture_on_commit_callbacks(execute=True), pytest.raises(NoWork):
            next_assignment(c, worker(name))
    [message] = server.verified(secret)
    assert message["type"] == "campaign.over_budget" and message["data"]["budget"] == "1.00"


def test_a_launch_request_decided_is_delivered(owner, server, django_capture_on_commit_callbacks):
    _, secret = subscribe(owner, server.url, [EventType.LAUNCH_REQUEST_DECIDED])
    c = ab_campaign(
        4,
        status="draft",
        provider="prolific",
        batch_size=2,
        redundancy=1,
        reward_per_batch=Decimal("1.00"),
        owner=owner,
    )
    request_launch(c, owner)
    with django_capture_on_commit_callbacks(execute=True):
        decide_launch(c, factories.user("boss", staff=True), False, "Pay is too low.")
    [message] = server.verified(secret)
    decided = message["data"]["launch_request"]
    assert (message["type"], decided["state"], decided["reason"]) == (
        "launch_request.decided",
        "declined",
        "Pay is too low.",
    )


def test_an_analysis_ready_is_delivered(owner, server, django_capture_on_commit_callbacks):
    _, secret = subscribe(owner, server.url, [EventType.ANALYSIS_READY])
    campaign = Campaign.objects.get(study=imported_study(), task_kind="likert")
    Campaign.objects.filter(pk=campaign.pk).update(owner=owner)
    campaign.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        run = analyze_campaign(campaign, FAST, synchronous=True)
    assert run.status == AnalysisRun.Status.SUCCEEDED, run.error
    [message] = server.verified(secret)
    ready = message["data"]["analysis_run"]
    assert (ready["id"], ready["subject_kind"], ready["subject_slug"]) == (
        run.pk,
        "campaign",
        campaign.slug,
    )
    assert ready["url"] == f"https://evalhub.example.org/api/analysis-runs/{run.pk}/"


def test_a_judge_run_finished_is_delivered(owner, server, django_capture_on_commit_callbacks):
    _, secret = subscribe(owner, server.url, [EventType.JUDGE_RUN_FINISHED])
    with openai_fake.FakePool() as pool:
        judge = pool.start(arena_builders.marked_judge())
        made = arena_builders.arena(owner)
        x, y, _ = arena_builders.systems_of(made)
        arena_builders.battle(made, x, y, "a_better", best="a")
        run = arena_builders.arena_run(judge, made)
        with django_capture_on_commit_callbacks(execute=True):
            assert execution.execute(run.pk, client_factory=fast_client()) == "done"
    [message] = server.verified(secret)
    finished = message["data"]["judge_run"]
    assert (finished["id"], finished["status"], finished["items_done"]) == (run.pk, "done", 1)
    assert finished["target_slug"] == made.slug


def test_an_arena_leaderboard_update_is_delivered(
    owner, server, django_capture_on_commit_callbacks
):
    _, secret = subscribe(owner, server.url, [EventType.ARENA_LEADERBOARD_UPDATED])
    one, two = factories.system(owner, slug="one"), factories.system(owner, slug="two")
    made = arena(owner, systems=[one, two], provisional_battles=0)
    Battle.objects.create(
        arena=made,
        system_a=one,
        system_b=two,
        voter_platform="site",
        question_id="q1",
        vote="a_better",
        voted_at=timezone.now(),
    )
    with django_capture_on_commit_callbacks(execute=True):
        compute_leaderboard(made.pk)
    [message] = server.verified(secret)
    assert message["type"] == "arena.leaderboard_updated"
    assert (message["data"]["arena"]["slug"], message["data"]["battles"]) == (made.slug, 1)


def test_only_the_events_a_subscription_wants_reach_it(
    owner, server, django_capture_on_commit_callbacks
):
    subscribe(owner, server.url, [EventType.ANALYSIS_READY])
    c = ab_campaign(2, status="draft", owner=owner)
    with django_capture_on_commit_callbacks(execute=True):
        launch_campaign(c, actor=owner)
    assert server.received == []
    assert not Delivery.objects.exists()


def test_another_owners_event_does_not_reach_a_subscription(
    owner, server, django_capture_on_commit_callbacks
):
    subscribe(owner, server.url)
    c = ab_campaign(2, status="draft", owner=factories.user("someone-else"))
    with django_capture_on_commit_callbacks(execute=True):
        launch_campaign(c, actor=c.owner)
    assert server.received == []
    assert not Delivery.objects.exists()


def test_the_same_event_fired_twice_is_delivered_once(
    owner, server, django_capture_on_commit_callbacks
):
    subscribe(owner, server.url)
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            emit(owner, EventType.CAMPAIGN_FINISHED, {"campaign": {}}, key="campaign.finished:7")
    assert len(server.received) == 1
    assert Delivery.objects.count() == 1


def test_an_event_rolled_back_sends_nothing(owner, server, django_capture_on_commit_callbacks):
    from django.db import transaction

    subscribe(owner, server.url)
    capture = django_capture_on_commit_callbacks(execute=True)
    with capture, pytest.raises(RuntimeError), transaction.atomic():
        emit(owner, EventType.CAMPAIGN_FINISHED, {"campaign": {}}, key="campaign.finished:8")
        raise RuntimeError("the event's transaction fails")
    assert server.received == []
    assert not Delivery.objects.exists()
