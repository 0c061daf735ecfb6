"""A chat campaign's results: the workers' closing ratings, analysed as dialogue-level
Likert ratings of the system each worker talked with; incomplete chats carry none."""

import statistics

import pytest
from django.urls import reverse
from django.utils import timezone

from analysis.inputs.judgments import load_inputs
from analysis.models import AnalysisRun
from analysis.runs.tasks import analyze_campaign
from annotation.items import add_items
from annotation.kinds.base import ItemSpec
from annotation.models import Assignment, Campaign, Judgment, Worker
from tests import factories
from tests.analysis.dimensional_builders import FAST
from tests.annotation.builders import campaign

pytestmark = pytest.mark.django_db
RATINGS = {"good-bot": [5, 4, 5, 4], "poor-bot": [2, 1, 2, 2]}


def chat_campaign_with_ratings(*, one_incomplete: bool = False) -> Campaign:
    c = campaign("chat", batch_size=1, redundancy=1)
    slots = [(system, score) for system, scores in RATINGS.items() for score in scores]
    if one_incomplete:
        slots.append(("poor-bot", None))  # the worker ended it early: nothing was rated
    add_items(c, [ItemSpec(content={"meta": {"system": system}}) for system, _ in slots])
    for n, (item, (_, score)) in enumerate(zip(c.items.order_by("position"), slots, strict=True)):
        worker = Worker.objects.create(provider="local", external_id=f"talker-{n}")
        assignment = Assignment.objects.create(
            campaign=c, batch=item.batch, worker=worker, status=Assignment.Status.SUBMITTED
        )
        payload = {"conversation": f"chat-{c.slug}-{n}", "complete": score is not None}
        if score is not None:
            payload["ratings"] = {"quality": score, "engaging": score}
        Judgment.objects.create(
            assignment=assignment,
            item=item,
            worker=worker,
            campaign=c,
            payload=payload,
            started_at=timezone.now(),
        )
    return c


def test_the_closing_ratings_are_dialogue_level_likert_entries_of_the_system():
    c = chat_campaign_with_ratings()

    data = load_inputs(campaign=c)

    assert data.kind == "likert"
    assert len(data.annotation) == 2 * sum(len(s) for s in RATINGS.values())
    assert set(data.turn) == {None}
    quality = [
        (system, score)
        for system, dimension, score in zip(data.system, data.dimension, data.score, strict=True)
        if dimension == "quality"
    ]
    assert sorted(quality) == sorted((s, x) for s, xs in RATINGS.items() for x in xs)


def test_an_incomplete_chat_adds_no_rating():
    c = chat_campaign_with_ratings(one_incomplete=True)

    data = load_inputs(campaign=c)

    assert c.judgments.count() == 9
    assert len(data.annotation) == 2 * 8  # the eight complete chats, two dimensions each
    assert f"chat-{c.slug}-8" not in data.conversation


def test_a_chat_campaign_run_reports_each_systems_mean_rating():
    c = chat_campaign_with_ratings()

    run = analyze_campaign(c, FAST, synchronous=True)

    assert run.status == AnalysisRun.Status.SUCCEEDED, run.error
    assert run.result["kind"] == "likert" and run.campaign == c
    means = {(r["system"], r["dimension"]): r for r in run.result["likert"]["means"]}
    for system, scores in RATINGS.items():
        assert means[(system, "quality")]["mean"] == pytest.approx(statistics.mean(scores))
        assert means[(system, "quality")]["n"] == len(scores)


def test_staff_read_a_chat_campaigns_ratings_on_its_results_page(client):
    client.force_login(factories.user(staff=True))
    c = chat_campaign_with_ratings()
    run = analyze_campaign(c, FAST, synchronous=True)

    response = client.get(reverse("results:campaign", args=[c.slug]))

    assert response.status_code == 200
    page = response.content.decode()
    assert "good-bot" in page and "poor-bot" in page
    assert reverse("results:plot", args=[run.pk, "likert-dialogue"]) in page
