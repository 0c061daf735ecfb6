"""The analysis demo: simulated tournaments written through the models and analysed."""

import pytest

from analysis.models import AnalysisRun
from annotation.models import Judgment
from demo.leaderboards import (
    AB_DEMO_SLUG,
    DEMO_HAZARDS,
    DEMO_STRENGTHS,
    SPOT_THE_BOT_DEMO_SLUG,
    load_analysis_demo,
)
from demo.simulation import ABModel
from tests.analysis import builders
from tests.analysis.builders import assert_clusters_follow
from tournaments.models import Tournament


@pytest.mark.django_db
def test_the_demo_loads_analyses_and_is_idempotent(django_capture_on_commit_callbacks):
    small = builders.small_spot_the_bot_model(hazards=DEMO_HAZARDS, conversations_per_pair=8)
    ab = ABModel(DEMO_STRENGTHS, prompts=25)
    with django_capture_on_commit_callbacks(execute=False):
        runs = load_analysis_demo(spot_the_bot=small, ab=ab, parameters=builders.FAST)
    assert set(runs) == {SPOT_THE_BOT_DEMO_SLUG, AB_DEMO_SLUG}
    for slug, run in runs.items():
        tournament = Tournament.objects.get(slug=slug)
        assert tournament.published and tournament.status == Tournament.Status.FINISHED
        assert tournament.campaign.status == "finished"
        assert run.status == AnalysisRun.Status.SUCCEEDED, run.error
        assert tournament.analysis_runs.latest_succeeded() == run
        assert set(tournament.systems.values_list("slug", flat=True)) == set(run.result["systems"])
    assert_clusters_follow(small.order(), runs[SPOT_THE_BOT_DEMO_SLUG].result["ranking"])
    assert_clusters_follow(ab.order(), runs[AB_DEMO_SLUG].result["ranking"])
    stb = Tournament.objects.get(slug=SPOT_THE_BOT_DEMO_SLUG)
    judged = Judgment.objects.filter(campaign=stb.campaign).count()
    assert judged == runs[SPOT_THE_BOT_DEMO_SLUG].result["judgments"] > 0

    with django_capture_on_commit_callbacks(execute=False):
        again = load_analysis_demo(spot_the_bot=small, ab=ab, parameters=builders.FAST)
    assert {slug: run.pk for slug, run in again.items()} == {
        slug: run.pk for slug, run in runs.items()
    }
    assert Judgment.objects.filter(campaign=stb.campaign).count() == judged
    assert Tournament.objects.filter(slug__in=list(runs)).count() == 2
