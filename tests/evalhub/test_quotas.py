"""Per-user quotas (evalhub/quotas.py): how many systems one account may own and how many
files it may upload a day, checked by pages and API alike; staff are exempt."""

import json
from datetime import UTC, datetime

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from evalhub.models import Conversation, Submission, System
from evalhub.quotas import QuotaExceeded, check_quota, count_upload
from tests import factories

pytestmark = pytest.mark.django_db


def api_as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def researcher():
    return factories.user("quota-researcher")


# The service ----------------------------------------------------------------------------------


def test_a_count_quota_refuses_the_row_past_it_and_names_the_setting(settings, researcher):
    settings.EVALHUB_QUOTA_SYSTEMS = 2
    factories.system(researcher)
    check_quota(researcher, System)  # the second is within the quota
    factories.system(researcher)
    with pytest.raises(QuotaExceeded) as refused:
        check_quota(researcher, System)
    assert refused.value.status_code == 400 and refused.value.retry_after is None
    assert str(refused.value) == (
        "You have 2 systems, the most one account may have (EVALHUB_QUOTA_SYSTEMS=2). "
        "Remove one, or ask staff to raise the quota."
    )


def test_a_count_quota_counts_only_the_user_s_own_rows(settings, researcher):
    settings.EVALHUB_QUOTA_SYSTEMS = 1
    factories.system(factories.user("someone-else"))
    factories.system(None)
    check_quota(researcher, System)


def test_staff_and_work_of_no_account_are_exempt(settings):
    settings.EVALHUB_QUOTA_SYSTEMS = 0
    settings.EVALHUB_QUOTA_UPLOADS_PER_DAY = 0
    staff = factories.user("quota-staff", staff=True)
    check_quota(staff, System)
    check_quota(None, System)
    count_upload(staff)
    count_upload(None)


def test_uploads_of_the_day_are_counted_and_the_next_day_starts_again(settings, researcher):
    settings.EVALHUB_QUOTA_UPLOADS_PER_DAY = 2
    evening = datetime(2026, 3, 1, 23, 0, tzinfo=UTC)
    count_upload(researcher, evening)
    count_upload(researcher, evening)
    with pytest.raises(QuotaExceeded) as refused:
        count_upload(researcher, evening)
    assert refused.value.status_code == 429
    assert refused.value.retry_after == 3600  # until midnight UTC
    count_upload(researcher, datetime(2026, 3, 2, 0, 0, 1, tzinfo=UTC))


# Systems: page and API ------------------------------------------------------------------------


def test_the_api_refuses_a_system_past_the_quota_in_the_error_shape(settings, researcher):
    settings.EVALHUB_QUOTA_SYSTEMS = 1
    factories.system(researcher, slug="first")
    response = api_as(researcher).post(
        "/api/systems/", {"slug": "second", "name": "Second"}, format="json"
    )
    assert response.status_code == 400
    assert response.json() == {
        "errors": [
            {
                "line": None,
                "message": "You have 1 systems, the most one account may have "
                "(EVALHUB_QUOTA_SYSTEMS=1). Remove one, or ask staff to raise the quota.",
            }
        ],
        "error_count": 1,
    }
    assert list(System.objects.values_list("slug", flat=True)) == ["first"]


def test_staff_create_systems_past_the_quota(settings):
    settings.EVALHUB_QUOTA_SYSTEMS = 0
    staff = factories.user("quota-staff", staff=True)
    response = api_as(staff).post("/api/systems/", {"slug": "s", "name": "S"}, format="json")
    assert response.status_code == 201
    assert System.objects.filter(owner=staff).count() == 1


def test_the_page_refuses_a_system_past_the_quota_with_a_message(settings, client, researcher):
    settings.EVALHUB_QUOTA_SYSTEMS = 1
    factories.system(researcher, slug="first")
    client.force_login(researcher)
    response = client.post(
        reverse("system-create"), {"name": "Second", "slug": "second", "visibility": "public"}
    )
    assert response.status_code == 400
    assert "the most one account may have (EVALHUB_QUOTA_SYSTEMS=1)" in response.content.decode()
    assert list(System.objects.values_list("slug", flat=True)) == ["first"]


# Uploads: responses and seed conversations, page and API --------------------------------------


def responses_upload(prompt_set):
    return {
        "prompt_set": prompt_set.slug,
        "file": SimpleUploadedFile("r.txt", factories.txt("hello .", "bye .")),
    }


def test_the_api_refuses_an_upload_past_the_day_s_quota_with_429_and_retry_after(
    settings, researcher
):
    settings.EVALHUB_QUOTA_UPLOADS_PER_DAY = 1
    prompt_set = factories.prompt_set(2)
    system = factories.system(researcher, slug="up-bot")
    url = f"/api/systems/{system.slug}/submissions/"
    client = api_as(researcher)
    assert client.post(url, responses_upload(prompt_set), format="multipart").status_code == 201
    response = client.post(url, responses_upload(prompt_set), format="multipart")
    assert response.status_code == 429
    assert 0 < int(response["Retry-After"]) <= 86_400
    (error,) = response.json()["errors"]
    assert error["line"] is None
    assert "EVALHUB_QUOTA_UPLOADS_PER_DAY=1" in error["message"]
    assert Submission.objects.count() == 1


def test_the_submit_page_refuses_an_upload_past_the_day_s_quota(settings, client, researcher):
    settings.EVALHUB_QUOTA_UPLOADS_PER_DAY = 0
    prompt_set = factories.prompt_set(2)
    system = factories.system(researcher, slug="up-bot")
    client.force_login(researcher)
    response = client.post(
        reverse("system-submit", args=[system.slug]), responses_upload(prompt_set)
    )
    assert response.status_code == 429
    assert "try again after midnight UTC" in response.content.decode()
    assert not Submission.objects.exists()


def seeds_file():
    row = {
        "id": "quota-seed-1",
        "domain": "orchard",
        "speakers": ["human", "human"],
        "turns": [{"speaker": p % 2, "text": f"line {p}"} for p in range(4)],
    }
    return SimpleUploadedFile("seeds.jsonl", (json.dumps(row) + "\n").encode())


def test_seed_uploads_count_against_the_same_quota(settings, client, researcher):
    settings.EVALHUB_QUOTA_UPLOADS_PER_DAY = 0
    response = api_as(researcher).post(
        "/api/conversations/seeds/", {"file": seeds_file()}, format="multipart"
    )
    assert response.status_code == 429
    client.force_login(researcher)
    page = client.post(reverse("seed-upload"), {"file": seeds_file()})
    assert page.status_code == 429
    assert "EVALHUB_QUOTA_UPLOADS_PER_DAY=0" in page.content.decode()
    assert not Conversation.objects.exists()
