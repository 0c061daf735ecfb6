"""REST API of a system's bot endpoint: owner and staff only, the token write-only."""

import json

import pytest
from rest_framework.test import APIClient

from endpoints.models import BotEndpoint
from tests import factories

pytestmark = pytest.mark.django_db

SECRET = "sk-api-secret-456"
BODY = {
    "protocol": "openai",
    "url": "https://models.example.org/v1",
    "model_name": "my-llm-7b",
    "auth_token": SECRET,
    "temperature": 0.2,
    "stop": ["\nUser:"],
    "daily_budget": 500,
}


def client_for(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        token = factories.api_token(user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


@pytest.fixture
def owner():
    return factories.user("owner")


@pytest.fixture
def system(owner):
    return factories.system(owner, slug="my-llm")


def url(system):
    return f"/api/systems/{system.slug}/endpoint/"


def test_the_owner_registers_reads_changes_and_removes(owner, system):
    api = client_for(owner)
    created = api.put(url(system), BODY, format="json")
    assert created.status_code == 201
    data = created.json()
    assert data["has_token"] is True and "auth_token" not in data
    assert (data["protocol"], data["model_name"], data["stop"]) == (
        "openai",
        "my-llm-7b",
        ["\nUser:"],
    )
    endpoint = BotEndpoint.objects.get(system=system)
    assert (endpoint.auth_token, endpoint.daily_budget) == (SECRET, 500)

    patched = api.patch(url(system), {"allow_other_owners": True}, format="json")
    assert patched.status_code == 200 and patched.json()["allow_other_owners"] is True
    endpoint.refresh_from_db()
    assert endpoint.allow_other_owners and endpoint.auth_token == SECRET  # kept

    read = api.get(url(system))
    assert read.status_code == 200 and read.json()["used_today"] == 0

    assert api.delete(url(system)).status_code == 204
    assert not BotEndpoint.objects.exists()
    assert api.get(url(system)).status_code == 404


def test_the_token_is_in_no_response(owner, system):
    api = client_for(owner)
    responses = [
        api.put(url(system), BODY, format="json"),
        api.patch(url(system), {"temperature": 0.3}, format="json"),
        api.get(url(system)),
        api.put(url(system), {**BODY, "auth_token": "sk-second"}, format="json"),
        api.get("/api/schema/"),
    ]
    for response in responses:
        body = response.content.decode()
        assert SECRET not in body and "sk-second" not in body
    assert BotEndpoint.objects.get().auth_token == "sk-second"


def test_an_empty_token_removes_it(owner, system):
    api = client_for(owner)
    api.put(url(system), BODY, format="json")
    response = api.patch(url(system), {"auth_token": ""}, format="json")
    assert response.json()["has_token"] is False
    assert BotEndpoint.objects.get().auth_token == ""


def test_another_researcher_gets_403(owner, system):
    client_for(owner).put(url(system), BODY, format="json")
    other = client_for(factories.user("researcher"))
    assert other.get(url(system)).status_code == 403
    assert (
        other.patch(url(system), {"url": "https://evil.example.org"}, format="json").status_code
        == 403
    )
    assert other.delete(url(system)).status_code == 403
    assert BotEndpoint.objects.get().url == BODY["url"]


def test_a_private_system_is_404_for_others(owner):
    private = factories.system(owner, slug="hidden", visibility="private")
    other = client_for(factories.user("researcher"))
    assert other.put(url(private), BODY, format="json").status_code == 404
    assert not BotEndpoint.objects.exists()


def test_anonymous_callers_get_401(owner, system):
    client_for(owner).put(url(system), BODY, format="json")
    anonymous = client_for()
    assert anonymous.get(url(system)).status_code == 401
    assert anonymous.put(url(system), BODY, format="json").status_code == 401
    assert BotEndpoint.objects.count() == 1


def test_staff_manage_any_endpoint(system):
    staff = client_for(factories.user("boss", staff=True))
    assert staff.put(url(system), BODY, format="json").status_code == 201
    assert staff.get(url(system)).status_code == 200


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"model_name": ""}, "model_name"),
        ({"top_p": 1.5}, "top_p"),
        ({"max_concurrency": 0}, "max_concurrency"),
        ({"daily_budget": 0}, "daily_budget"),
        ({"chat_share": 101}, "chat_share"),
        ({"chat_share": -5}, "chat_share"),
        ({"stop": ["a", "b", "c", "d", "e"]}, "stop"),
        ({"protocol": "smoke-signals"}, "protocol"),
        ({"url": "file:///etc/passwd"}, "url"),
    ],
)
def test_bad_settings_are_refused_naming_the_field(owner, system, change, field):
    response = client_for(owner).put(url(system), {**BODY, **change}, format="json")
    assert response.status_code == 400
    assert field in {error.get("field") for error in json.loads(response.content)["errors"]}
    assert not BotEndpoint.objects.exists()


# Issue 23, finding 5: a token an import left out is asked for again -------------------------


def test_the_api_says_a_token_was_left_out_until_one_is_sent(owner, system):
    BotEndpoint.objects.create(
        system=system,
        protocol="openai",
        url="https://models.example.org/v1",
        model_name="my-llm-7b",
        token_left_out=True,
    )
    api = client_for(owner)
    assert api.get(url(system)).json()["token_left_out"] is True
    changed = api.patch(url(system), {"daily_budget": 200}, format="json").json()
    assert changed["token_left_out"] is True
    sent = api.patch(url(system), {"auth_token": SECRET}, format="json").json()
    assert (sent["token_left_out"], sent["has_token"]) == (False, True)
    endpoint = BotEndpoint.objects.get()
    assert (endpoint.auth_token, endpoint.token_left_out) == (SECRET, False)


# Issue 23, finding 9: quotas ---------------------------------------------------------------


def test_a_new_endpoint_past_the_quota_is_refused_and_a_change_is_not(settings, owner, system):
    settings.EVALHUB_QUOTA_ENDPOINTS = 1
    api = client_for(owner)
    assert api.put(url(system), BODY, format="json").status_code == 201
    second = factories.system(owner, slug="my-other-llm")
    refused = api.put(url(second), BODY, format="json")
    assert refused.status_code == 400
    assert "(EVALHUB_QUOTA_ENDPOINTS=1)" in refused.json()["errors"][0]["message"]
    assert not BotEndpoint.objects.filter(system=second).exists()
    # Replacing the endpoint one has is no new endpoint.
    changed = api.put(url(system), {**BODY, "daily_budget": 42}, format="json")
    assert changed.status_code == 200
    assert BotEndpoint.objects.get(system=system).daily_budget == 42
