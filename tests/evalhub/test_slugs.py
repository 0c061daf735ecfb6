"""One slug rule for forms and the API; blank slugs proposed from names, made unique."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from evalhub.models import PromptSet, System
from evalhub.slugs import propose_slug
from tests import factories

pytestmark = pytest.mark.django_db

BAD_SLUGS = ["Mixed_Case", "under_score", "-leading", "two--hyphens", "spa ce"]


@pytest.mark.parametrize("slug", BAD_SLUGS)
def test_the_api_refuses_what_the_help_text_forbids(slug):
    client = APIClient()
    client.force_authenticate(factories.user())
    response = client.post("/api/systems/", {"name": "Bot", "slug": slug}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "slug"
    assert not System.objects.exists()


@pytest.mark.parametrize("slug", BAD_SLUGS)
def test_the_page_form_refuses_the_same_slugs_with_the_same_message(client, slug):
    client.force_login(factories.user())
    response = client.post(
        reverse("system-create"), {"name": "Bot", "slug": slug, "visibility": "public"}
    )
    assert response.status_code == 400
    assert "lowercase letters, digits and single hyphens" in response.content.decode()
    assert not System.objects.exists()


def test_the_prompt_set_upload_uses_the_rule_too():
    client = APIClient()
    client.force_authenticate(factories.user(staff=True))
    data = {"slug": "Bad_Slug", "name": "Set", "file": _file()}
    response = client.post("/api/prompt-sets/", data, format="multipart")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "slug"
    assert not PromptSet.objects.exists()


def _file():
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("p.txt", b"hello there\n")


def test_a_blank_slug_is_proposed_from_the_name_and_made_unique(client):
    factories.system(slug="my-great-bot")
    client.force_login(factories.user())
    response = client.post(
        reverse("system-create"), {"name": "My Great Bot!", "slug": "", "visibility": "public"}
    )
    assert response.status_code == 302
    assert System.objects.filter(slug="my-great-bot-2", name="My Great Bot!").exists()


def test_editing_with_a_blank_slug_keeps_the_slug(client):
    owner = factories.user()
    system = factories.system(owner=owner, slug="kept", name="Kept")
    client.force_login(owner)
    data = {"name": "Renamed", "slug": "", "visibility": "public"}
    client.post(reverse("system-edit", args=["kept"]), data)
    system.refresh_from_db()
    assert (system.slug, system.name) == ("kept", "Renamed")


def test_proposals_are_lowercase_ascii_and_never_empty():
    assert propose_slug(System, "Ça Va  Bien 2") == "ca-va-bien-2"
    assert propose_slug(System, "!!!") == "system"
