"""A/B experiments: items per prompt and baseline, automatic ties, batches, cost."""

import threading
from decimal import Decimal

import pytest
from django.db import connection

from annotation.models import Assignment, Campaign, Item
from tests import factories
from tournaments import ab_experiment
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db


@pytest.fixture
def experiment():
    prompts = factories.prompt_set(5, slug="five")
    mine = factories.system(factories.user(), slug="mine")
    ours = factories.submission(mine, prompts, ["same", "a2", "a3", "a4", "a5"])
    base1 = factories.system(None, slug="base1", is_baseline=True)
    base2 = factories.system(None, slug="base2", is_baseline=True)
    factories.submission(base1, prompts, ["same", "b2", "b3", "b4", "b5"])
    factories.submission(base2, prompts, ["c1", "c2", "c3", "c4", "c5"])
    tournament = Tournament.objects.create(
        slug="mine-vs-baselines",
        name="Mine vs baselines",
        kind="ab",
        prompt_set=prompts,
        submission=ours,
        judgments_per_prompt=3,
        prompts_per_batch=4,
        reward_per_judgment=Decimal("0.05"),
        seed=3,
    )
    tournament.baselines.set([base1, base2])
    return tournament


def test_plan_counts_items_ties_batches_and_cost(experiment):
    plan = ab_experiment.plan(experiment)
    # 5 prompts × 2 baselines = 10 pairs; prompt 1 is identical for base1: 1 automatic tie.
    assert (plan.shown_items, plan.automatic_ties) == (9, 1)
    assert plan.batches == 3  # 9 items, 4 per batch
    assert plan.judgments == 27
    assert plan.cost == Decimal("1.35")  # 27 × 0.05


def test_build_campaign(experiment):
    campaign = ab_experiment.build_campaign(experiment)
    experiment.refresh_from_db()
    assert experiment.campaign == campaign and experiment.status == "ready"
    assert campaign.task_kind == "ab" and campaign.redundancy == 3 and campaign.batch_size == 4
    assert campaign.status == "draft"
    assert Item.objects.filter(campaign=campaign, batch__isnull=False).count() == 9
    assert Item.objects.filter(campaign=campaign, auto_payload__choice="tie").count() == 1
    assert Assignment.objects.filter(campaign=campaign, status="open").count() == 3 * 3
    systems = {
        tuple(sorted([i.content["meta"]["system_a"], i.content["meta"]["system_b"]]))
        for i in campaign.items.all()
    }
    assert systems == {("base1", "mine"), ("base2", "mine")}
    with pytest.raises(ab_experiment.ExperimentInvalid, match="already has its campaign"):
        ab_experiment.build_campaign(experiment)


def test_a_baseline_without_a_submission_is_named(experiment):
    experiment.baselines.add(factories.system(None, slug="lazy", is_baseline=True))
    with pytest.raises(ab_experiment.ExperimentInvalid, match="No submission on five from: lazy"):
        ab_experiment.plan(experiment)


def test_no_baseline(experiment):
    experiment.baselines.clear()
    with pytest.raises(ab_experiment.ExperimentInvalid, match="at least one baseline"):
        ab_experiment.plan(experiment)


def test_two_generate_clicks_at_once_build_one_campaign_and_refuse_the_other(experiment):
    """Both requests loaded the tournament before either stored its campaign."""
    first_view = Tournament.objects.get(pk=experiment.pk)
    second_view = Tournament.objects.get(pk=experiment.pk)
    ab_experiment.build_campaign(first_view)
    with pytest.raises(ab_experiment.ExperimentInvalid, match="already has its campaign"):
        ab_experiment.build_campaign(second_view)
    assert Campaign.objects.filter(slug="mine-vs-baselines-ab").count() == 1
    assert Assignment.objects.filter(campaign__slug="mine-vs-baselines-ab").exists()


def test_a_campaign_slug_taken_by_a_racing_generate_is_a_user_error(experiment):
    """Where rows cannot be locked (SQLite), the campaign's unique slug stops the second."""
    Campaign.objects.create(
        slug="mine-vs-baselines-ab", title="Raced", task_kind="ab", instructions="."
    )
    with pytest.raises(ab_experiment.ExperimentInvalid, match="already has its campaign"):
        ab_experiment.build_campaign(experiment)
    experiment.refresh_from_db()
    assert experiment.campaign_id is None


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_parallel_generate_clicks_build_one_campaign_and_no_error(experiment):
    outcomes = []
    start = threading.Barrier(6)

    def generate():
        view = Tournament.objects.get(pk=experiment.pk)
        start.wait()
        try:
            ab_experiment.build_campaign(view)
            outcomes.append("built")
        except ab_experiment.ExperimentInvalid:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=generate) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["built"] + ["refused"] * 5
    assert Campaign.objects.filter(task_kind="ab").count() == 1
