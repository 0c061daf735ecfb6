"""The demo opens one live campaign of each task kind, linked from the home page."""

import pytest
from django.core.management import call_command

from annotation.kinds import KIND_KEYS, get_kind
from annotation.models import Assignment, Campaign, Item

pytestmark = pytest.mark.django_db
# Every kind a campaign is created as (the arena's crowd kind is launched from an arena);
# the chat campaign talks to the demo bot that `make run` starts (demo/responder.py).
DEMO_KINDS = [key for key in KIND_KEYS if get_kind(key).standalone]


def test_one_live_campaign_per_kind_linked_from_home(client):
    call_command("load_demo")
    # The analysis demo adds finished (simulated) campaigns; the open ones are these.
    campaigns = Campaign.objects.filter(status="live")
    assert sorted(c.task_kind for c in campaigns) == sorted(DEMO_KINDS)
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
    for kind in DEMO_KINDS:
        campaign = Campaign.objects.get(task_kind=kind, status="live")
        response = client.get(campaign.start_url() + "?worker=newcomer")
        assert response.status_code == 302, kind
        page = client.get(response["Location"])
        # The ABC-Eval campaign trains a newcomer first (see the test below).
        expected = {"abc_eval": "Begin the training", "chat": "Conversation 1 of"}.get(
            kind, "Item 1 of"
        )
        assert page.status_code == 200 and expected in page.content.decode(), kind


def test_the_demo_abc_eval_campaign_trains_and_screens_newcomers(client):
    from annotation.training import training_threshold

    call_command("load_demo")
    campaign = Campaign.objects.get(slug="demo-abc-eval")
    assert campaign.requires_training and campaign.status == "live"
    training = list(campaign.items.filter(role="training").order_by("position"))
    assert [item.conversation.external_id for item in training] == [
        "demo-train-grandmother",
        "demo-train-new-job",
        "demo-train-sick-cat",
    ]
    assert all(item.gold["explanations"] for item in training)
    assert training_threshold(campaign) == 3
    response = client.get(f"/work/{campaign.slug}/?worker=newcomer")
    assert response.status_code == 302 and "training" in response["Location"]
    page = client.get(response["Location"]).content.decode()
    assert "annotate 3 training conversations" in page and "fewer than 3 mistakes" in page
    # The screening conversation has one turn of each kind to get right.
    assert training[-1].gold["labels"] == {"empathetic": [1, 0, 0], "lack of empathy": [0, 0, 1]}
