"""Private stays private (issue 9 point 4): a campaign showing a private or embargoed
system's output, or an unpublished tournament's, is listed nowhere public and serves items
only to workers its platform sends (or who already hold one of its batches)."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.crowd.base import Arrival
from annotation.invitations import create_invitations
from annotation.models import Assignment, Batch, Campaign, Item
from annotation.visibility import (
    arrives_through_platform,
    is_public,
    public_campaigns,
    visible_campaigns,
)
from evalhub.models import System
from tests import factories
from tests.annotation.builders import ab_campaign
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db


def showing(system: System, **fields) -> Campaign:
    """A live campaign whose first item shows one of `system`'s responses."""
    c = ab_campaign(2, **fields)
    prompts = factories.prompt_set(1)
    submission = factories.submission(system, prompts)
    Item.objects.filter(campaign=c, position=0).update(response_a=submission.responses.get())
    return c


def test_a_campaign_of_public_systems_is_public():
    c = showing(factories.system())
    assert is_public(c) and c.is_public()
    assert list(public_campaigns()) == [c]


def test_a_private_systems_output_makes_the_campaign_private():
    c = showing(factories.system(visibility=System.Visibility.PRIVATE))
    assert not is_public(c)
    assert list(public_campaigns()) == []


def test_an_embargo_keeps_it_private_until_it_ends():
    system = factories.system(embargo_until=timezone.now() + timedelta(days=1))
    c = showing(system)
    assert not is_public(c)
    assert is_public(c, now=timezone.now() + timedelta(days=2))


def test_a_private_speaker_of_a_conversation_makes_it_private():
    c = ab_campaign(2)
    hidden = factories.system(visibility=System.Visibility.PRIVATE)
    talk = factories.conversation("conv-1", [None, hidden], ["hi", "hello"])
    Item.objects.filter(campaign=c, position=1).update(conversation=talk)
    assert not is_public(c)


def test_an_unpublished_tournaments_campaign_is_private_until_published():
    c = ab_campaign(2)
    tournament = Tournament.objects.create(
        slug="t", name="t", kind="spot_the_bot", domain="garden", campaign=c
    )
    assert not is_public(c)
    Tournament.objects.filter(pk=tournament.pk).update(published=True)
    assert is_public(c)


def test_lists_show_private_campaigns_to_their_owner_and_staff_only():
    owner = factories.user("owner")
    public = showing(factories.system())
    private = showing(factories.system(visibility="private"), owner=owner)
    assert list(visible_campaigns(None)) == [public]
    assert list(visible_campaigns(factories.user("other"))) == [public]
    assert set(visible_campaigns(owner)) == {public, private}
    assert set(visible_campaigns(factories.user("boss", staff=True))) == {public, private}


def test_the_home_page_lists_public_live_campaigns_only(client):
    open_one = showing(factories.system(), title="Open to all")
    showing(factories.system(visibility="private"), title="Secret bot test")
    html = client.get(reverse("home")).content.decode()
    assert "Open to all" in html and open_one.start_url() in html
    assert "Secret bot test" not in html


# Serving items -------------------------------------------------------------------------


def private_campaign(**fields) -> Campaign:
    return showing(factories.system(visibility=System.Visibility.PRIVATE), **fields)


def test_a_made_up_worker_id_gets_no_item_of_a_private_campaign(client):
    c = private_campaign()
    response = client.get(c.start_url() + "?worker=curious")
    assert response.status_code == 403
    assert "open only to participants invited" in response.content.decode()
    assert not Assignment.objects.filter(campaign=c).exclude(status="open").exists()


def test_a_logged_in_user_gets_no_item_of_a_private_campaign(client):
    c = private_campaign()
    client.force_login(factories.user("passer-by"))
    assert client.get(c.start_url()).status_code == 403
    assert not Assignment.objects.filter(campaign=c, worker__isnull=False).exists()


def test_an_invited_worker_is_served_and_may_come_back(client):
    c = private_campaign()
    (invitation,) = create_invitations(c, 1)
    response = client.get(invitation.get_absolute_url())
    assignment = Assignment.objects.get(campaign=c, worker__invitation=invitation)
    assert response.status_code == 302 and response["Location"] == assignment.get_absolute_url()
    # Back on the plain start link in the same browser: the invited worker resumes.
    assert client.get(c.start_url()).status_code == 302


def test_an_mturk_worker_sent_by_one_of_its_hits_is_served(client):
    c = private_campaign(provider="mturk")
    batch = c.batches.first()
    Batch.objects.filter(pk=batch.pk).update(platform_ref="HIT1")
    url = c.start_url() + f"?batch={batch.pk}&assignmentId=A1&hitId=HIT1&workerId=AW1"
    response = client.get(url)
    assert response.status_code == 302
    assignment = Assignment.objects.get(campaign=c, worker__external_id="AW1")
    assert response["Location"] == assignment.get_absolute_url()
    # Back in the same browser, without the platform's parameters: still theirs.
    assert client.get(assignment.get_absolute_url()).status_code == 200


def test_an_mturk_arrival_naming_another_hit_is_refused(client):
    c = private_campaign(provider="mturk")
    Batch.objects.filter(campaign=c).update(platform_ref="HIT1")
    url = c.start_url() + "?assignmentId=A1&hitId=OTHER&workerId=AW1"
    assert client.get(url).status_code == 403
    assert not Assignment.objects.filter(campaign=c, worker__isnull=False).exists()


def test_prolific_arrivals_must_name_the_campaigns_study():
    c = private_campaign(provider="prolific", platform_ref="study1")
    theirs = Arrival("prolific", "P1", {"study_id": "study1", "session_id": "S1"})
    forged = Arrival("prolific", "P1", {"study_id": "guess", "session_id": "S1"})
    assert arrives_through_platform(c, theirs)
    assert not arrives_through_platform(c, forged)
    assert not arrives_through_platform(c, Arrival("local", "link:P1"))


def test_the_mturk_preview_of_a_private_campaign_shows_no_item(client):
    c = private_campaign(provider="mturk")
    item = c.batches.first().items.order_by("order_in_batch").first()
    url = c.start_url() + "?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=HIT1"
    html = client.get(url).content.decode()
    assert "shown once you accept" in html
    assert item.content["left"] not in html and item.content["right"] not in html


def test_the_mturk_preview_of_a_public_campaign_shows_the_first_item(client):
    c = showing(factories.system(), provider="mturk")
    item = c.batches.first().items.order_by("order_in_batch").first()
    url = c.start_url() + "?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=HIT1"
    assert item.content["left"] in client.get(url).content.decode()


# Issue 23, finding 14: a private campaign's start page does not name it ---------------------

SECRET_TITLE = "Unreleased parrot-9 study"


def test_a_private_campaigns_start_page_hides_its_title_from_a_stranger(client):
    c = private_campaign(title=SECRET_TITLE)
    for query in ("", "?worker=curious"):
        response = client.get(c.start_url() + query)
        assert response.status_code in (200, 403)
        assert SECRET_TITLE not in response.content.decode()
    client.force_login(factories.user("passer-by"))
    response = client.get(c.start_url())
    assert response.status_code == 403
    assert SECRET_TITLE not in response.content.decode()
    assert not Assignment.objects.filter(campaign=c, worker__isnull=False).exists()


def test_a_private_campaigns_owner_sees_its_title_on_the_start_page(client):
    owner = factories.user("owner")
    c = private_campaign(title=SECRET_TITLE, owner=owner, allow_worker_param=False)
    client.force_login(owner)
    response = client.get(c.start_url() + "?worker=me")
    assert response.status_code == 403
    assert SECRET_TITLE in response.content.decode()
    assert not Assignment.objects.filter(campaign=c, worker__isnull=False).exists()


def test_a_public_campaigns_start_page_shows_its_title(client):
    c = showing(factories.system(), title="Open garden study")
    response = client.get(c.start_url())
    assert response.status_code == 200
    assert "Open garden study" in response.content.decode()
    assert not Assignment.objects.filter(campaign=c, worker__isnull=False).exists()


# --- What the pages say about the ways in (ways_in) ------------------------------------------


def test_a_public_campaign_with_worker_ids_offers_the_link_ids_and_invitations():
    from annotation.visibility import ways_in
    from tests.annotation.builders import ab_campaign

    ways = ways_in(ab_campaign(2, allow_worker_param=True))

    assert [w.split(":")[0] for w in ways] == [
        "The start link",
        "The start link with ?worker=<participant id>",
        "Invitation links",
    ]


def test_a_private_campaign_offers_no_start_link_nor_worker_ids(monkeypatch):
    from annotation import visibility
    from tests.annotation.builders import ab_campaign

    monkeypatch.setattr(visibility, "is_public", lambda campaign, now=None: False)

    ways = visibility.ways_in(ab_campaign(2, allow_worker_param=True, provider="prolific"))

    assert not any(w.startswith("The start link") for w in ways)
    assert any(w.startswith("Participants Prolific sends") for w in ways)
    assert ways[-1].startswith("Invitation links")
