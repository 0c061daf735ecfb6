"""A used rubric never changes in place (judging/rubric_versions.py); a judge's endpoint is
the judge's own: named after it, and deleted with it."""

from django.db.models.signals import post_delete, post_save, pre_save
from django.dispatch import receiver

from endpoints.models import BotEndpoint

from .models import Judge, Rubric
from .rubric_versions import FROZEN_FIELDS, refuse_change_when_used


@receiver(pre_save, sender=Rubric, dispatch_uid="judging-rubric-frozen")
def keep_used_rubric(sender, instance, raw=False, update_fields=None, **kwargs):
    if raw or instance.pk is None:
        return
    stored = Rubric.objects.filter(pk=instance.pk).values(*FROZEN_FIELDS).first()
    if stored and any(stored[f] != getattr(instance, f) for f in FROZEN_FIELDS):
        refuse_change_when_used(instance)


@receiver(post_delete, sender=Judge, dispatch_uid="judging-judge-endpoint")
def remove_judge_endpoint(sender, instance, **kwargs):
    # Nothing else may use it (a judge's endpoint belongs to no system), so it would be
    # left behind, reachable by nobody's pages, still holding its token.
    BotEndpoint.objects.filter(pk=instance.endpoint_id, system__isnull=True).delete()


@receiver(post_save, sender=Judge, dispatch_uid="judging-judge-endpoint-name")
def name_judge_endpoint(sender, instance, raw=False, **kwargs):
    # The endpoint's owner knows it by the judge's name (its page, failures, notices).
    if raw:
        return
    BotEndpoint.objects.filter(pk=instance.endpoint_id, system__isnull=True).exclude(
        name=instance.name
    ).update(name=instance.name)
