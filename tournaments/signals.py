"""A tournament follows its campaign: being annotated once it is live (whoever launched
it), finished when the campaign finishes (by itself once
every batch is judged, annotation.campaigns.finish_if_complete, or by staff). The analysis
then runs from analysis.runs.signals, on the same transition.

A partner set a tournament used is frozen (tournaments/partner_sets.py): saving a change
to its composition or identity, or to its systems, is refused here, whoever tries.
"""

from django.db.models.signals import m2m_changed, post_save, pre_save
from django.dispatch import receiver

from annotation.models import Campaign

from .models import PartnerSet, Tournament
from .partner_sets import refuse_change_when_used

# What identifies a set's composition; the name and description may be corrected.
FROZEN_FIELDS = ("slug", "version")


@receiver(post_save, sender=Campaign, dispatch_uid="tournaments-campaign-finished")
def finish_tournament(sender, instance, raw=False, **kwargs):
    if raw or instance.status != Campaign.Status.FINISHED:
        return
    Tournament.objects.filter(
        campaign=instance,
        status__in=[Tournament.Status.READY, Tournament.Status.ANNOTATING],
    ).update(status=Tournament.Status.FINISHED)


@receiver(post_save, sender=Campaign, dispatch_uid="tournaments-campaign-live")
def annotate_tournament(sender, instance, raw=False, **kwargs):
    # A launch that staff approved on the campaign's page (not the tournament's Launch
    # button) still moves its tournament on to being annotated.
    if raw or instance.status != Campaign.Status.LIVE:
        return
    Tournament.objects.filter(campaign=instance, status=Tournament.Status.READY).update(
        status=Tournament.Status.ANNOTATING
    )


@receiver(pre_save, sender=PartnerSet, dispatch_uid="tournaments-partner-set-frozen")
def keep_used_partner_set(sender, instance, raw=False, update_fields=None, **kwargs):
    if raw or instance.pk is None:
        return
    stored = PartnerSet.objects.filter(pk=instance.pk).values(*FROZEN_FIELDS).first()
    if stored and any(stored[f] != getattr(instance, f) for f in FROZEN_FIELDS):
        refuse_change_when_used(instance)


@receiver(m2m_changed, sender=PartnerSet.systems.through, dispatch_uid="tournaments-partners")
def keep_used_partner_systems(sender, instance, action, reverse, **kwargs):
    if action not in ("pre_add", "pre_remove", "pre_clear"):
        return
    if reverse:
        # system.partner_sets.add(...): check every set that is touched.
        sets = PartnerSet.objects.filter(pk__in=kwargs.get("pk_set") or [])
        if action == "pre_clear":
            sets = instance.partner_sets.all()
        for partner_set in sets:
            refuse_change_when_used(partner_set)
    elif action != "pre_add" or kwargs.get("pk_set"):
        refuse_change_when_used(instance)
