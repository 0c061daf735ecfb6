import pytest

from analysis.inputs.automatic import judge_run_inputs
from analysis.inputs.comparable import compare_payload
from annotation.models import Campaign, Judgment
from tests.analysis.dimensional_builders import imported_study
from tests.analysis.judge_builders import bipartite_tournament, judge_run

pytestmark = pytest.mark.django_db


def likert_campaign():
    return (
        Campaign.objects.filter(study=imported_study(), task_kind="likert").order_by("pk").first()
    )


def first_human_payload(item):
    judgment = Judgment.objects.filter(item=item).order_by("pk").first()
    return None if judgment is None else judgment.payload


def test_the_judges_and_the_humans_payloads_become_comparable_rows():
    campaign = likert_campaign()
    run = judge_run(campaign, first_human_payload)
    data = judge_run_inputs(run)
    humans = Judgment.objects.filter(campaign=campaign).select_related("item").order_by("pk")
    expected_labels, expected_scores = [], []
    for judgment in humans:
        labels, scores = compare_payload(
            "likert", judgment.item_id, judgment.payload, judgment.item.content
        )
        expected_labels += [(d, u, judgment.worker_id, v) for d, u, v in labels]
        expected_scores += scores
    assert data.human_labels == tuple(expected_labels)
    assert data.human_scores == tuple(expected_scores)
    assert data.human_judgments == humans.count() == 24
    assert data.automatic_judgments == 12
    assert data.level == "ordinal" and data.task_kind == "likert"
    assert data.judge_run == run.pk
    assert data.judge == f"LLM judge (likert/default v1, run {run.pk})"
    # The judge copied one human: its labels are that human's, unit for unit.
    first = {u: v for d, u, w, v in data.human_labels if d == "quality" and w == min_worker(data)}
    judged = {u: v for d, u, v in data.judge_labels if d == "quality"}
    assert {u: judged[u] for u in first} == first


def min_worker(data):
    return min(w for _, _, w, _ in data.human_labels)


def test_failed_automatic_judgments_are_left_out():
    campaign = likert_campaign()
    item = campaign.items.filter(role="task").order_by("pk").first()
    run = judge_run(campaign, first_human_payload, failed=[item.pk])
    data = judge_run_inputs(run)
    assert data.automatic_judgments == 11
    assert not [u for _, u, _ in data.judge_labels if u == str(item.pk)]
    assert run.judgments.filter(status="failed").count() == 1


def test_a_bipartite_play_tournaments_partners_come_with_the_inputs():
    tournament = bipartite_tournament()
    run = judge_run(tournament.campaign, first_human_payload)
    data = judge_run_inputs(run)
    assert data.partners == ("partner-one", "partner-two")
    assert data.task_kind == "spot_the_bot"


def test_the_inputs_take_a_fixed_number_of_queries(django_assert_max_num_queries):
    tournament = bipartite_tournament()
    run = judge_run(tournament.campaign, first_human_payload)
    run = type(run).objects.select_related("judge", "rubric", "campaign").get(pk=run.pk)
    # Human judgments, automatic judgments, the tournament, its partners: whatever the size.
    with django_assert_max_num_queries(4):
        data = judge_run_inputs(run)
    assert data.automatic_judgments > 50


def test_blocked_workers_are_left_out_when_asked():
    from annotation.models import Worker

    campaign = likert_campaign()
    run = judge_run(campaign, first_human_payload)
    blocked = Judgment.objects.filter(campaign=campaign).order_by("pk").first().worker
    Worker.objects.filter(pk=blocked.pk).update(blocked=True)
    everyone = judge_run_inputs(run)
    careful = judge_run_inputs(run, exclude_blocked=True)
    assert (
        careful.human_judgments
        == everyone.human_judgments
        - Judgment.objects.filter(campaign=campaign, worker=blocked).count()
    )
    assert blocked.pk not in {w for _, _, w, _ in careful.human_labels}
    assert careful.judge_labels == everyone.judge_labels


def test_items_the_platform_answered_itself_are_not_compared():
    from demo.simulation import ABModel
    from tests.analysis import builders

    tournament = builders.ab_tournament(
        model=ABModel(builders.STRENGTHS, prompts=12, identical_share=0.3, workers=6)
    )
    automatic = list(
        tournament.campaign.items.filter(auto_payload__isnull=False).values_list("pk", flat=True)
    )
    assert automatic
    run = judge_run(tournament.campaign, lambda item: {"choice": "a", "left": "a"})
    data = judge_run_inputs(run)
    assert data.task_kind == "ab" and data.level == "nominal"
    assert not {u for _, u, _ in data.judge_labels} & {str(pk) for pk in automatic}
    assert data.automatic_judgments == run.judgments.count() - len(automatic)
