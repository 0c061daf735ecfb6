"""A used rubric never changes in place (judging/rubric_versions.py)."""

from django.db.models.signals import pre_save
from django.dispatch import receiver

from .models import Rubric
from .rubric_versions import FROZEN_FIELDS, refuse_change_when_used


@receiver(pre_save, sender=Rubric, dispatch_uid="judging-rubric-frozen")
def keep_used_rubric(sender, instance, raw=False, update_fields=None, **kwargs):
    if raw or instance.pk is None:
        return
    stored = Rubric.objects.filter(pk=instance.pk).values(*FROZEN_FIELDS).first()
    if stored and any(stored[f] != getattr(instance, f) for f in FROZEN_FIELDS):
        refuse_change_when_used(instance)
