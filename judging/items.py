"""Which items a judge run judges: a campaign's task items (gold, training and
automatically decided items are not judged: humans' analyses read task items only), and of
those the ones this run has no automatic judgment of yet (what a resumed, taken-over or
continued run still has to do)."""

from annotation.models import Campaign, Item

from .models import JudgeRun


def judgeable_items(campaign: Campaign):
    return Item.objects.filter(
        campaign=campaign, role=Item.Role.TASK, auto_payload__isnull=True
    ).order_by("position")


def pending_items(run: JudgeRun):
    return judgeable_items(run.campaign).exclude(automatic_judgments__run=run)
