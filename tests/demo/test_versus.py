"""The human-versus-automatic demo: a simulated judge on the demo tournament, compared."""

import pytest

from analysis.models import AnalysisRun
from demo.leaderboards import DEMO_HAZARDS, SPOT_THE_BOT_DEMO_SLUG, load_analysis_demo
from demo.simulation import ABModel
from demo.versus import VERSUS_DEMO_JUDGE, load_versus_demo
from evalhub.models import System
from judging.models import AutomaticJudgment, Judge, JudgeRun
from tests import factories
from tests.analysis import builders
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db

FAST = {"seed": 1, "judge_resamples": 100, "convergence_repeats": 30, "convergence_points": 3}


def test_nothing_is_made_without_the_demo_tournament():
    assert load_versus_demo(factories.user("admin")) is None
    assert not JudgeRun.objects.exists()


def test_the_simulated_judge_is_compared_with_the_crowd_once(django_capture_on_commit_callbacks):
    small = builders.small_spot_the_bot_model(hazards=DEMO_HAZARDS, conversations_per_pair=4)
    with django_capture_on_commit_callbacks(execute=False):
        load_analysis_demo(
            spot_the_bot=small,
            ab=ABModel({"a": 1.0, "b": 0.0}, prompts=6),
            parameters=builders.FAST,
        )
    admin = factories.user("admin")
    run = load_versus_demo(admin, model=small, parameters=FAST)
    assert run.status == AnalysisRun.Status.SUCCEEDED, run.error
    campaign = Tournament.objects.get(slug=SPOT_THE_BOT_DEMO_SLUG).campaign
    judge_run = JudgeRun.objects.get(judge__slug=VERSUS_DEMO_JUDGE)
    assert judge_run.campaign == campaign and judge_run.status == JudgeRun.Status.DONE
    items = campaign.items.filter(role="task").count()
    assert AutomaticJudgment.objects.filter(run=judge_run).count() == items == judge_run.items_done
    assert run.result["automatic_judgments"] == items
    assert set(run.result["systems"]) == set(DEMO_HAZARDS)
    assert run.result["dimensions"][0]["correlation"]["systems"] == len(DEMO_HAZARDS)

    assert judge_run.judge.owner == admin
    again = load_versus_demo(admin, model=small, parameters=FAST)
    assert again.pk == run.pk
    assert JudgeRun.objects.count() == 1
    assert AutomaticJudgment.objects.count() == items


def test_the_simulated_judge_is_no_system(client, django_capture_on_commit_callbacks):
    small = builders.small_spot_the_bot_model(hazards=DEMO_HAZARDS, conversations_per_pair=4)
    with django_capture_on_commit_callbacks(execute=False):
        load_analysis_demo(
            spot_the_bot=small,
            ab=ABModel({"a": 1.0, "b": 0.0}, prompts=6),
            parameters=builders.FAST,
        )
    load_versus_demo(factories.user("admin"), model=small, parameters=FAST)

    endpoint = Judge.objects.get(slug=VERSUS_DEMO_JUDGE).endpoint
    assert (endpoint.system, endpoint.owner.username) == (None, "admin")
    assert not System.objects.filter(name__icontains="judge").exists()
    pages = [client.get("/systems/").content.decode(), client.get("/api/systems/").content.decode()]
    for listed in pages:
        assert "Simulated judge" not in listed and VERSUS_DEMO_JUDGE not in listed
