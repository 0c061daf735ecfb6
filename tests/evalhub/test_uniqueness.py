"""Two requests creating the same slug at once: one is created, the other answers 400.

On SQLite the race is simulated deterministically (the uniqueness check that both
requests pass is skipped for the second one); on PostgreSQL threads really race.
"""

import threading
from unittest import mock

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from evalhub.models import System
from tests import factories

pytestmark = pytest.mark.django_db

SYSTEM = {"name": "Twin", "slug": "twin", "description": "", "visibility": "public"}


def check_passed_before_the_other_commit():
    """What the second of two simultaneous requests sees: the slug looked free."""
    return mock.patch("django.forms.models.BaseModelForm.validate_unique", lambda form: None)


def test_a_system_slug_taken_meanwhile_is_a_field_error_on_the_page(client):
    owner = factories.user("owner")
    factories.system(owner, slug="twin")
    client.force_login(owner)
    with check_passed_before_the_other_commit():
        response = client.post(reverse("system-create"), SYSTEM)
    assert response.status_code == 400
    assert "already exists; choose another" in response.content.decode()
    assert System.objects.filter(slug="twin").count() == 1


def test_a_system_slug_taken_meanwhile_is_a_400_in_the_api():
    owner = factories.user("owner")
    factories.system(owner, slug="twin")
    api = APIClient()
    api.force_authenticate(owner)
    with mock.patch("rest_framework.validators.UniqueValidator.__call__", lambda *a: None):
        response = api.post("/api/systems/", SYSTEM, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "slug"
    assert "already exists" in response.json()["errors"][0]["message"]
    assert System.objects.filter(slug="twin").count() == 1


def test_a_tournament_slug_taken_meanwhile_is_a_400_in_the_api():
    from tournaments.models import Tournament

    owner = factories.user("owner")
    Tournament.objects.create(slug="cup", name="Cup", kind="spot_the_bot", owner=owner)
    for slug in ("a", "b"):
        factories.system(None, slug=slug)
    api = APIClient()
    api.force_authenticate(owner)
    data = {"kind": "spot_the_bot", "name": "Cup", "slug": "cup", "domain": "chat"}
    data["systems"] = ["a", "b"]
    with mock.patch("rest_framework.validators.UniqueValidator.__call__", lambda *a: None):
        response = api.post("/api/tournaments/", data, format="json")
    assert response.status_code == 400, response.content
    assert "already exists" in response.json()["errors"][0]["message"]
    assert Tournament.objects.filter(slug="cup").count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_parallel_creations_of_one_slug_give_one_system_and_no_500():
    owner = factories.user("owner")
    clients = []
    for _ in range(10):
        client = Client()
        client.force_login(owner)
        clients.append(client)
    statuses = []
    start = threading.Barrier(len(clients))

    def create(client):
        start.wait()
        try:
            statuses.append(client.post(reverse("system-create"), SYSTEM).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=create, args=(c,)) for c in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [302] + [400] * 9
    assert System.objects.filter(slug="twin").count() == 1
