"""A tournament follows its campaign to the end: a complete campaign finishes itself, its
tournament moves to finished and its analysis runs."""

import pytest

from analysis.models import AnalysisRun
from annotation.campaigns import change_status
from annotation.models import Assignment, Campaign
from annotation.tasks import finish_campaign_if_complete
from tests.analysis import builders
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db


def annotating_ab_tournament() -> Tournament:
    tournament = builders.ab_tournament(finish=False)
    Tournament.objects.filter(pk=tournament.pk).update(status=Tournament.Status.ANNOTATING)
    return tournament


def test_a_fully_judged_ab_experiment_finishes_and_is_analysed(
    django_capture_on_commit_callbacks,
):
    tournament = annotating_ab_tournament()
    campaign = tournament.campaign
    assert not campaign.assignments.exclude(status=Assignment.Status.SUBMITTED).exists()
    with django_capture_on_commit_callbacks(execute=True):
        assert finish_campaign_if_complete(campaign.pk) is True
    campaign.refresh_from_db()
    tournament.refresh_from_db()
    assert campaign.status == Campaign.Status.FINISHED
    assert tournament.status == Tournament.Status.FINISHED
    run = AnalysisRun.objects.get(tournament=tournament)
    assert run.status == AnalysisRun.Status.SUCCEEDED and run.result["kind"] == "ab"
    # Idempotent: a second call finds it finished and does nothing.
    assert finish_campaign_if_complete(campaign.pk) is False
    assert AnalysisRun.objects.filter(tournament=tournament).count() == 1


def test_a_campaign_with_an_open_slot_stays_live():
    tournament = annotating_ab_tournament()
    slot = tournament.campaign.assignments.first()
    Assignment.objects.filter(pk=slot.pk).update(status=Assignment.Status.STARTED)
    assert finish_campaign_if_complete(tournament.campaign_id) is False
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.ANNOTATING
    assert tournament.campaign.status == Campaign.Status.LIVE
    assert not AnalysisRun.objects.filter(tournament=tournament).exists()


def test_staff_finishing_the_campaign_finishes_the_tournament():
    tournament = annotating_ab_tournament()
    change_status(tournament.campaign, "finish")
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED


def test_a_ready_tournament_is_being_annotated_once_its_campaign_goes_live():
    # E.g. staff approved the launch on the campaign's page, not the tournament's button.
    tournament = builders.ab_tournament(finish=False)
    Tournament.objects.filter(pk=tournament.pk).update(status=Tournament.Status.READY)
    Campaign.objects.filter(pk=tournament.campaign_id).update(status=Campaign.Status.DRAFT)
    campaign = Campaign.objects.get(pk=tournament.campaign_id)
    campaign.status = Campaign.Status.LIVE
    campaign.save(update_fields=["status"])
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.ANNOTATING
