"""A researcher uploads human-human seed conversations for a domain (page and API): the domain
is then offered when creating a tournament; a system speaker is refused with its line;
anonymous uploads and too many uploads are refused; nothing is stored on refusal."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from evalhub.models import Conversation, Speaker, System
from tests import factories

pytestmark = pytest.mark.django_db

API = "/api/conversations/seeds/"
PAGE = "/conversations/seeds/upload/"


def seed(n: int, speakers=("human", "human"), **fields) -> dict:
    row = {
        "id": f"orchard-{n}",
        "domain": "orchard",
        "speakers": list(speakers),
        "turns": [{"speaker": p % 2, "text": f"talk {n} line {p}"} for p in range(4)],
    }
    row.update(fields)
    return row


def jsonl(*rows) -> SimpleUploadedFile:
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    return SimpleUploadedFile("seeds.jsonl", data, content_type="application/jsonl")


def api_as(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def test_a_researcher_uploads_seeds_and_the_domain_is_offered_for_tournaments(client):
    ada = factories.user("ada")
    response = api_as(ada).post(API, {"file": jsonl(seed(1), seed(2))}, format="multipart")
    assert response.status_code == 201, response.content
    assert response.json() == {"created": 2, "unchanged": 0, "systems_created": []}
    stored = Conversation.objects.filter(domain="orchard")
    assert stored.count() == 2
    assert set(stored.values_list("source", flat=True)) == {"human-human"}
    assert not Speaker.objects.filter(conversation__domain="orchard", system__isnull=False)

    client.force_login(ada)
    page = client.get("/tournaments/new/spot-the-bot/")
    assert '<option value="orchard">' in page.content.decode()


def test_the_upload_page_stores_seeds_for_a_signed_in_researcher(client):
    client.force_login(factories.user("ada"))
    response = client.post(PAGE, {"file": jsonl(seed(1))}, follow=True)
    assert response.status_code == 200
    assert "Stored 1 seed conversation" in response.content.decode()
    assert Conversation.objects.get(external_id="orchard-1").source == "human-human"


def test_a_bot_speaker_is_refused_with_its_line_and_nothing_is_stored(client):
    ada = factories.user("ada")
    upload = jsonl(seed(1), seed(2, speakers=("human", "parrot-bot")))
    response = api_as(ada).post(API, {"file": upload}, format="multipart")
    assert response.status_code == 400
    body = response.json()
    assert body["error_count"] == 1
    assert body["errors"][0]["line"] == 2
    assert "parrot-bot" in body["errors"][0]["message"]
    assert not Conversation.objects.exists() and not System.objects.exists()

    client.force_login(ada)
    page = client.post(PAGE, {"file": jsonl(seed(3, speakers=("bot-x", "human")))})
    assert page.status_code == 400
    assert "line 1:" in page.content.decode()
    assert not Conversation.objects.exists()


def test_a_line_claiming_another_source_is_refused(client):
    response = api_as(factories.user("ada")).post(
        API, {"file": jsonl(seed(1, source="self-play"))}, format="multipart"
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["line"] == 1
    assert not Conversation.objects.exists()


def test_anonymous_uploads_are_refused(client):
    response = api_as().post(API, {"file": jsonl(seed(1))}, format="multipart")
    assert response.status_code in (401, 403)
    page = client.post(PAGE, {"file": jsonl(seed(1))})
    assert page.status_code == 302 and "/accounts/login/" in page["Location"]
    assert not Conversation.objects.exists()


def test_uploads_past_the_hourly_limit_are_refused(settings, client):
    settings.EVALHUB_SEED_UPLOADS_PER_HOUR = 1
    ada = factories.user("ada")
    assert api_as(ada).post(API, {"file": jsonl(seed(1))}, format="multipart").status_code == 201
    refused = api_as(ada).post(API, {"file": jsonl(seed(2))}, format="multipart")
    assert refused.status_code == 429
    client.force_login(ada)
    assert client.post(PAGE, {"file": jsonl(seed(3))}).status_code == 429
    assert list(Conversation.objects.values_list("external_id", flat=True)) == ["orchard-1"]


# Issue 23, finding 2: seeds belong to their uploader ---------------------------------------


def test_uploaded_seeds_belong_to_their_uploader():
    ada = factories.user("ada")
    response = api_as(ada).post(API, {"file": jsonl(seed(1))}, format="multipart")
    assert response.status_code == 201
    assert Conversation.objects.get(external_id="orchard-1").owner == ada


def test_another_researchers_seed_domain_is_not_offered(client):
    api_as(factories.user("ada")).post(API, {"file": jsonl(seed(1))}, format="multipart")
    bob = factories.user("bob")
    client.force_login(bob)
    page = client.get("/tournaments/new/spot-the-bot/")
    assert page.status_code == 200
    assert '<option value="orchard">' not in page.content.decode()
    assert api_as(bob).get("/api/seed-domains/").json() == []
    assert Conversation.objects.get(external_id="orchard-1").owner.username == "ada"
