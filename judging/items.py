"""Which items a judge run judges: a campaign's task items (gold, training and
automatically decided items are not judged: humans' analyses read task items only), and of
those the ones this run has no automatic judgment of yet (what a resumed, taken-over or
continued run still has to do). A run over an arena judges its voted battles instead
(judging/battles.py); `judgeable` and `pending` answer for either target."""

from annotation.models import Campaign, Item

from . import battles
from .models import JudgeRun


def judgeable_items(campaign: Campaign):
    return Item.objects.filter(
        campaign=campaign, role=Item.Role.TASK, auto_payload__isnull=True
    ).order_by("position")


def pending_items(run: JudgeRun):
    return judgeable_items(run.campaign).exclude(automatic_judgments__run=run)


def judgeable(run: JudgeRun):
    """The run's units: the campaign's task items, or the arena's voted battles."""
    if run.arena_id:
        return battles.judgeable_battles(run.arena)
    return judgeable_items(run.campaign)


def pending(run: JudgeRun):
    """The units this run has no judgment of yet."""
    if run.arena_id:
        return battles.pending_battles(run)
    return pending_items(run)
