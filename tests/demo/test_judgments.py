"""The demo's simulated crowd in its ABC-Eval, Likert, comparative and ranking campaigns."""

import pytest
from django.urls import reverse

from analysis.models import AnalysisRun
from annotation.allocation import next_assignment
from annotation.demo import load_annotation_demo
from annotation.models import SIMULATED_WORKER_PREFIX, Campaign, Judgment, Worker
from demo.judgments import DEMO_SLUGS, load_judgments_demo, simulate_judgments
from evalhub.demo import load_catalog_demo
from tests import factories

pytestmark = pytest.mark.django_db
FAST = {"alpha_resamples": 50, "seed": 1}


@pytest.fixture
def campaigns():
    accounts = load_catalog_demo()
    load_annotation_demo(accounts["admin"])
    return {c.task_kind: c for c in Campaign.objects.filter(slug__in=DEMO_SLUGS)}


def test_every_demo_campaign_gets_simulated_judgments_and_its_results(campaigns):
    runs = load_judgments_demo(FAST)

    assert set(runs) == set(DEMO_SLUGS)
    for campaign in campaigns.values():
        run = runs[campaign.slug]
        assert run.status == AnalysisRun.Status.SUCCEEDED, run.error
        assert run.result["judgments"] == campaign.judgments.count() > 0


def test_loading_twice_adds_no_judgment(campaigns):
    load_judgments_demo(FAST)
    stored = Judgment.objects.count()

    load_judgments_demo(FAST)

    assert Judgment.objects.count() == stored


def test_a_newcomer_still_finds_work_after_the_simulated_crowd(campaigns):
    load_judgments_demo(FAST)
    newcomer = Worker.objects.create(provider=Campaign.Provider.LOCAL, external_id="newcomer")

    for campaign in campaigns.values():
        assignment = next_assignment(campaign, newcomer)

        assert assignment.campaign == campaign


def test_every_simulated_judgment_is_by_a_simulated_worker_and_a_valid_payload(campaigns):
    stored = simulate_judgments(campaigns["likert"], workers=2)

    judgments = campaigns["likert"].judgments.select_related("worker")
    assert stored == judgments.count() > 0
    assert all(j.worker.external_id.startswith(SIMULATED_WORKER_PREFIX) for j in judgments)
    assert all(1 <= r <= 5 for j in judgments for r in j.payload["ratings"].values())


def test_the_better_system_is_rated_higher(campaigns):
    quality = {"persona-bot": 1.0, "seq2seq-baseline": 0.0}.get

    simulate_judgments(campaigns["likert"], workers=6, quality=lambda s: quality(s, 0.5))

    scores = {}
    for judgment in campaigns["likert"].judgments.select_related("item"):
        system = judgment.item.content["meta"]["system"]
        scores.setdefault(system, []).extend(judgment.payload["ratings"].values())
    mean = {system: sum(v) / len(v) for system, v in scores.items()}
    assert mean["persona-bot"] > mean["seq2seq-baseline"] + 2


def test_the_results_page_says_how_many_judgments_are_simulated(campaigns, client):
    load_judgments_demo(FAST)
    campaign = campaigns["comparative"]
    client.force_login(factories.user(staff=True))

    page = client.get(reverse("results:campaign", args=[campaign.slug])).content.decode()

    assert f"{campaign.judgments.count()} judgments of this campaign came from simulated" in page


def test_simulated_rankings_put_the_better_system_first_more_often(campaigns):
    quality = {"human-reference": 1.0, "seq2seq-baseline": 0.0}.get

    simulate_judgments(campaigns["ranking"], workers=6, quality=lambda s: quality(s, 0.5))

    judgments = campaigns["ranking"].judgments.select_related("item")
    places = {"human-reference": [], "seq2seq-baseline": []}
    for judgment in judgments:
        for systems, rank in zip(
            judgment.item.content["meta"]["systems"], judgment.payload["ranks"], strict=True
        ):
            for system in set(systems) & set(places):
                places[system].append(rank)
    assert judgments.count() > 0 and sorted(judgments[0].payload["ranks"]) == [1, 2, 3, 4]
    mean = {system: sum(ranks) / len(ranks) for system, ranks in places.items()}
    assert mean["human-reference"] + 1.5 < mean["seq2seq-baseline"]
