"""Invitation links on the campaign page: staff or the owner create them and download the
unused ones; nobody else may."""

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Invitation
from tests import factories
from tests.annotation.builders import ab_campaign

pytestmark = pytest.mark.django_db


def create_url(c):
    return reverse("annotation:manage-campaign-invitations", args=[c.slug])


def download_url(c):
    return reverse("annotation:manage-campaign-invitations-download", args=[c.slug])


def test_staff_create_links_and_download_the_unused_ones(client):
    c = ab_campaign(4, batch_size=2, allow_worker_param=False)
    client.force_login(factories.user(staff=True))
    response = client.post(create_url(c), {"count": "3"})
    assert response.status_code == 302
    assert Invitation.objects.filter(campaign=c).count() == 3
    links = client.get(download_url(c)).content.decode().split()
    assert len(links) == 3
    assert all(link.startswith("http://testserver/work/" + c.slug + "/?invite=") for link in links)
    # A participant uses one; it is no longer handed out.
    participant = Client()
    assert participant.get(links[0].removeprefix("http://testserver")).status_code == 302
    assert Assignment.objects.filter(worker__invitation__isnull=False).count() == 1
    assert client.get(download_url(c)).content.decode().split() == links[1:]
    page = client.get(reverse("annotation:manage-campaign", args=[c.slug])).content.decode()
    assert "2 unused, 1 used." in page


def test_the_campaign_owner_may_create_links(client):
    owner = factories.user("owner")
    c = ab_campaign(2, owner=owner)
    client.force_login(owner)
    assert client.post(create_url(c), {"count": "2"}).status_code == 302
    assert Invitation.objects.filter(campaign=c).count() == 2
    assert client.get(download_url(c)).status_code == 200


def test_others_may_neither_create_nor_download(client):
    c = ab_campaign(2, owner=factories.user("owner"))
    Invitation.objects.create(campaign=c)
    client.force_login(factories.user("stranger"))
    assert client.post(create_url(c), {"count": "2"}).status_code == 403
    assert client.get(download_url(c)).status_code == 403
    assert Invitation.objects.filter(campaign=c).count() == 1


def test_a_count_out_of_range_creates_nothing_and_says_so(client):
    c = ab_campaign(2)
    client.force_login(factories.user(staff=True))
    page = client.post(create_url(c), {"count": "5000"}, follow=True).content.decode()
    assert "between 1 and 1000" in page
    assert not Invitation.objects.exists()


def test_creating_links_needs_csrf():
    c = ab_campaign(2)
    client = Client(enforce_csrf_checks=True)
    client.force_login(factories.user(staff=True))
    assert client.post(create_url(c), {"count": "2"}).status_code == 403
    assert not Invitation.objects.exists()
