"""The campaign events owners subscribe to (webhooks/events.py), fired where the campaign
changes: launched and finished (campaigns.change_status, whoever asks), over its budget
(allocation.tell_budget_reached), a launch request decided (campaigns.decide_launch)."""

from webhooks.events import emit, link
from webhooks.models import EventType

from .models import Campaign, LaunchRequest


def campaign_data(campaign: Campaign) -> dict:
    """The campaign as every campaign event carries it (built only for a subscriber)."""
    return {
        "slug": campaign.slug,
        "title": campaign.title,
        "task_kind": campaign.task_kind,
        "status": campaign.status,
        "provider": campaign.provider,
        "launched_at": campaign.launched_at,
        "finished_at": campaign.finished_at,
        "url": link(campaign.get_absolute_url()),
    }


def launched(campaign: Campaign) -> None:
    emit(
        campaign.owner,
        EventType.CAMPAIGN_LAUNCHED,
        lambda: {"campaign": campaign_data(campaign)},
        key=f"campaign.launched:{campaign.pk}",
    )


def finished(campaign: Campaign) -> None:
    emit(
        campaign.owner,
        EventType.CAMPAIGN_FINISHED,
        lambda: {"campaign": campaign_data(campaign)},
        key=f"campaign.finished:{campaign.pk}",
    )


def over_budget(campaign: Campaign) -> None:
    emit(
        campaign.owner,
        EventType.CAMPAIGN_OVER_BUDGET,
        lambda: {"campaign": campaign_data(campaign), "budget": str(campaign.budget)},
        # A budget raised and reached again is another event.
        key=f"campaign.over_budget:{campaign.pk}:{campaign.budget}",
    )


def launch_decided(campaign: Campaign, request: LaunchRequest) -> None:
    emit(
        campaign.owner,
        EventType.LAUNCH_REQUEST_DECIDED,
        lambda: {
            "campaign": campaign_data(campaign),
            "launch_request": {
                "id": request.pk,
                "state": request.state,
                "reason": request.reason,
                "decided_at": request.decided_at,
                "provider": request.provider,
                "places": request.places,
                "reward_per_batch": str(request.reward_per_batch),
            },
        },
        key=f"launch_request.decided:{request.pk}",
    )
