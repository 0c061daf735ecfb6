"""A ranking campaign from workers' submitted rankings to its results page."""

import json

import pytest
from django.urls import reverse

from analysis.runs.tasks import analyze_campaign
from annotation.campaigns import ResponsePairs, create_campaign
from annotation.models import Assignment, Campaign, Judgment
from evalstats.plackett_luce import bootstrap_plackett_luce
from tests import factories

pytestmark = pytest.mark.django_db
PARAMS = {"bt_bootstrap": 60, "seed": 2}
# Each worker's order of the three systems, best first.
PREFERENCES = {
    "w1": ["bot-0", "bot-1", "bot-2"],
    "w2": ["bot-1", "bot-0", "bot-2"],
    "w3": ["bot-2", "bot-0", "bot-1"],
}


def ranking_campaign():
    prompts = factories.prompt_set(3)
    systems = []
    for n in range(3):
        system = factories.system(None, slug=f"bot-{n}")
        factories.submission(system, prompts)
        systems.append(system)
    campaign = Campaign(
        task_kind="ranking",
        slug="rank",
        title="Rank the answers",
        status="live",
        allow_worker_param=True,
        batch_size=3,
        redundancy=3,
    )
    create_campaign(campaign, ResponsePairs(prompts, systems[0], systems[1:]), gold_per_batch=0)
    return campaign


def rank_batch(client, campaign, worker):
    client.get(f"{reverse('annotation:start', args=[campaign.slug])}?worker={worker}")
    assignment = Assignment.objects.get(worker__external_id=f"link:{worker}")
    for item in assignment.batch.items.order_by("order_in_batch"):
        order = PREFERENCES[worker]
        ranks = {
            f"rank_{n}": str(order.index(systems[0]) + 1)
            for n, systems in enumerate(item.content["meta"]["systems"], 1)
        }
        url = reverse("annotation:submit-item", args=[assignment.public_id, item.pk])
        client.post(url, ranks)


def test_worker_rankings_become_plackett_luce_ratings_on_the_results_page(client):
    campaign = ranking_campaign()
    for worker in PREFERENCES:
        rank_batch(client, campaign, worker)
    assert Judgment.objects.filter(campaign=campaign).count() == 9
    campaign.refresh_from_db()
    run = analyze_campaign(campaign, PARAMS, synchronous=True)
    assert run.status == "succeeded", run.error
    names = ["bot-0", "bot-1", "bot-2"]
    rankings = [
        [[names.index(s)] for s in PREFERENCES[worker]] for worker in PREFERENCES for _ in range(3)
    ]
    expected = bootstrap_plackett_luce(rankings, 3, n_bootstrap=60, seed=2)
    rows = {row["system"]: row for row in run.result["plackett_luce"]}
    for index, name in enumerate(names):
        assert rows[name]["rating"] == pytest.approx(expected.ratings[index])
        assert rows[name]["ci"][0] == pytest.approx(expected.confidence_interval.low[index])
    assert run.result["systems"][0] == "bot-0" and run.result["judgments"] == 9

    staff = factories.user(staff=True)
    client.force_login(staff)
    page = client.get(reverse("results:campaign", args=[campaign.slug])).content.decode()
    assert 'class="ranking plackett-luce"' in page
    best = rows["bot-0"]
    assert f"{best['rating']:.0f} [{best['ci'][0]:.0f}, {best['ci'][1]:.0f}]" in page
    # The leaderboards page lists the campaign's results with the other campaigns'.
    listing = client.get(reverse("analysis:list")).content.decode()
    assert reverse("results:campaign", args=[campaign.slug]) in listing


def conversation_ranking_campaign():
    from annotation.campaigns import ConversationFiles

    rows = []
    for n in range(3):
        factories.system(None, slug=f"bot-{n}")
    for persona in range(3):
        for n in range(3):
            turns = [{"speaker": i % 2, "text": f"line {i}"} for i in range(4)]
            rows.append(
                {
                    "id": f"p{persona}-bot-{n}",
                    "domain": f"persona-{persona}",
                    "speakers": ["human", f"bot-{n}"],
                    "turns": turns,
                }
            )
    data = "".join(json.dumps(row) + "\n" for row in rows).encode()
    campaign = Campaign(
        task_kind="conversation_ranking",
        slug="rank-talks",
        title="Rank the conversations",
        status="live",
        allow_worker_param=True,
        batch_size=3,
        redundancy=3,
    )
    create_campaign(campaign, ConversationFiles(data, "talks.jsonl"), gold_per_batch=0)
    return campaign


def test_conversation_rankings_are_analysed_by_the_same_model_and_page(client):
    campaign = conversation_ranking_campaign()
    for worker in PREFERENCES:
        rank_batch(client, campaign, worker)
    assert Judgment.objects.filter(campaign=campaign).count() == 9
    run = analyze_campaign(campaign, PARAMS, synchronous=True)
    assert run.status == "succeeded", run.error
    names = ["bot-0", "bot-1", "bot-2"]
    rankings = [
        [[names.index(s)] for s in PREFERENCES[worker]] for worker in PREFERENCES for _ in range(3)
    ]
    expected = bootstrap_plackett_luce(rankings, 3, n_bootstrap=60, seed=2)
    rows = {row["system"]: row for row in run.result["plackett_luce"]}
    for index, name in enumerate(names):
        assert rows[name]["rating"] == pytest.approx(expected.ratings[index])
        assert rows[name]["ci"][1] == pytest.approx(expected.confidence_interval.high[index])
    client.force_login(factories.user(staff=True))
    page = client.get(reverse("results:campaign", args=[campaign.slug])).content.decode()
    assert 'class="ranking plackett-luce"' in page


def test_the_results_header_shows_the_ranking_runs_settings_only(client):
    campaign = ranking_campaign()
    for worker in PREFERENCES:
        rank_batch(client, campaign, worker)
    run = analyze_campaign(campaign, PARAMS, synchronous=True)
    assert run.status == "succeeded", run.error
    client.force_login(factories.user(staff=True))
    page = client.get(reverse("results:campaign", args=[campaign.slug])).content.decode()
    header = page.split('<p class="meta">Analysis ', 1)[1].split("</p>", 1)[0]
    assert "bootstrap resamples: 60" in header and "seed: 2" in header
    assert "coverage: 95" in header
    # The dimensional tests' settings mean nothing for a ranking.
    assert "correction" not in header and "BCa" not in header
