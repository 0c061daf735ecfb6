"""The demo opens one live campaign of each task kind, linked from the home page."""

import pytest
from django.core.management import call_command

from annotation.models import Assignment, Campaign, Item
from annotation.tasks import KIND_KEYS

pytestmark = pytest.mark.django_db


def test_one_live_campaign_per_kind_linked_from_home(client):
    call_command("load_demo")
    # The analysis demo adds finished (simulated) campaigns; the open ones are these.
    campaigns = Campaign.objects.filter(status="live")
    assert sorted(c.task_kind for c in campaigns) == sorted(KIND_KEYS)
    assert all(c.provider == "local" for c in campaigns)
    home = client.get("/").content.decode()
    for campaign in campaigns:
        assert campaign.start_url() in home
        assert Item.objects.filter(campaign=campaign, batch__isnull=False).exists()


def test_demo_campaigns_are_created_once(capsys):
    call_command("load_demo")
    counts = (Campaign.objects.count(), Item.objects.count(), Assignment.objects.count())
    call_command("load_demo")
    assert (Campaign.objects.count(), Item.objects.count(), Assignment.objects.count()) == counts


def test_a_newcomer_can_open_each_demo_campaign(client):
    call_command("load_demo")
    for kind in KIND_KEYS:
        campaign = Campaign.objects.get(task_kind=kind, status="live")
        response = client.get(campaign.start_url() + "?worker=newcomer")
        assert response.status_code == 302, kind
        page = client.get(response["Location"])
        assert page.status_code == 200 and "Item 1 of" in page.content.decode(), kind
