"""Analyse a tournament automatically when its campaign finishes; likewise a live
campaign of kind abc_eval, likert or comparative (``analyze_campaign``). Imported studies'
campaigns are created finished and are analysed as a study, on request.

``pre_save`` remembers the campaign's stored status (one query, only when the campaign is
being saved as finished) so that ``post_save`` acts on the transition to finished only, not
on every later save of a finished campaign. The run is queued after the transaction commits
(``analyze_tournament``), so a worker never looks for a row that is not there yet.
"""

import logging

from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver

from analysis.inputs.judgments import NoCampaign
from analysis.reports import NothingToAnalyse
from annotation.models import Campaign
from tournaments.models import Tournament

logger = logging.getLogger(__name__)


@receiver(pre_save, sender=Campaign, dispatch_uid="analysis-campaign-previous-status")
def remember_previous_status(sender, instance, raw=False, **kwargs):
    instance._analysis_previous_status = None
    if raw or instance.pk is None or instance.status != Campaign.Status.FINISHED:
        return
    instance._analysis_previous_status = (
        Campaign.objects.filter(pk=instance.pk).values_list("status", flat=True).first()
    )


@receiver(post_save, sender=Campaign, dispatch_uid="analysis-campaign-finished")
def analyse_finished_campaign(sender, instance, created, raw=False, update_fields=None, **kwargs):
    if raw or instance.status != Campaign.Status.FINISHED:
        return
    if update_fields is not None and "status" not in update_fields:
        return
    if getattr(instance, "_analysis_previous_status", None) == Campaign.Status.FINISHED:
        return
    tournament = Tournament.objects.filter(campaign=instance).first()
    from analysis.pages.results import RESULT_KINDS
    from analysis.runs.tasks import analyze_campaign, analyze_tournament

    try:
        if tournament is not None:
            analyze_tournament(tournament)
        elif instance.task_kind in RESULT_KINDS and instance.study_id is None:
            analyze_campaign(instance)
    except (NothingToAnalyse, NoCampaign) as reason:
        logger.info("Campaign %s finished; no analysis: %s", instance.slug, reason)
