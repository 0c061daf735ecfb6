"""Celery tasks of the annotation app: the periodic sync with crowd platforms, and
finishing a campaign once its last batch is judged, and granting MTurk's training
qualification."""

import logging

from celery import shared_task
from django.db import transaction
from django.db.models import Q

from evalhub.queueing import enqueue

from .campaigns import finish_if_complete
from .crowd import get_provider
from .crowd.base import PlatformRefused
from .crowd.ledger import CallInDoubt
from .models import Assignment, Campaign, Worker

log = logging.getLogger(__name__)


def campaigns_to_sync():
    """Campaigns on a platform that is still recruiting, or finished with work to review."""
    S = Campaign.Status
    return (
        Campaign.objects.filter(provider__in=["mturk", "prolific"])
        .exclude(platform_ref="")
        .filter(
            Q(status__in=[S.LIVE, S.PAUSED])
            | Q(status=S.FINISHED, assignments__status=Assignment.Status.SUBMITTED)
        )
        .distinct()
    )


@shared_task
def sync_crowd_campaigns() -> int:
    """Queue one sync per campaign on a platform (Celery beat runs this periodically)."""
    pks = list(campaigns_to_sync().values_list("pk", flat=True))
    for pk in pks:
        sync_crowd_campaign.delay(pk)
    return len(pks)


@shared_task(
    bind=True,
    autoretry_for=(Exception,),
    dont_autoretry_for=(PlatformRefused, CallInDoubt),
    retry_backoff=True,
    max_retries=5,
)
def sync_crowd_campaign(self, campaign_pk: int) -> str:
    """Idempotent: a sync only moves assignments towards what the platform says."""
    campaign = Campaign.objects.filter(pk=campaign_pk).first()
    if campaign is None:
        return "gone"
    report = get_provider(campaign.provider).sync(campaign)
    log.info("crowd sync %s: %s", campaign.slug, report)
    # Submissions the platform reported may have completed the campaign.
    finish_if_complete(campaign)
    return str(report)


@shared_task
def finish_campaign_if_complete(campaign_pk: int) -> bool:
    """Finish the campaign if every slot has its judgments (idempotent); True if it did."""
    campaign = Campaign.objects.filter(pk=campaign_pk).first()
    return campaign is not None and finish_if_complete(campaign)


@shared_task(
    bind=True,
    autoretry_for=(Exception,),
    dont_autoretry_for=(PlatformRefused,),
    retry_backoff=True,
    max_retries=5,
)
def grant_training_qualification(self, campaign_pk: int, worker_pk: int) -> str:
    """Tell MTurk that a worker passed the campaign's training (its custom qualification,
    which the HIT type may require). Idempotent: granting twice sets the same value."""
    from .crowd.mturk import MTurkProvider

    campaign = Campaign.objects.filter(pk=campaign_pk).first()
    worker = Worker.objects.filter(pk=worker_pk).first()
    provider = get_provider("mturk")
    if campaign is None or worker is None or not isinstance(provider, MTurkProvider):
        return "gone"
    provider.grant_training(worker, campaign=campaign)
    return "granted"


def training_passed(campaign: Campaign, worker: Worker) -> None:
    """Called when a worker passes a campaign's training: an MTurk worker of a campaign on
    MTurk gets the campaign's training qualification, once the pass is committed."""
    if campaign.provider != Campaign.Provider.MTURK or worker.provider != "mturk":
        return
    transaction.on_commit(lambda: enqueue(grant_training_qualification, campaign.pk, worker.pk))


# Pairing (issue 27) --------------------------------------------------------------------------


@shared_task
def pause_campaign_if_answered(campaign_id: int) -> bool:
    """Pause the campaign once its ranking question is answered (annotation/pairing.py)."""
    from .pairing import pause_if_answered

    return pause_if_answered(campaign_id)
