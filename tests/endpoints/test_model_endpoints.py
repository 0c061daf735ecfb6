"""Model endpoints of no system (a judge's): one owner kind, private pages and API for
their owner and staff (404 to anyone else), the key write-only, Test connection, and the
owner told of their failures by name."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from endpoints import calls
from endpoints.models import BotEndpoint, EndpointCall
from evalhub.models import Notice
from tests import factories
from tests.endpoints import openai_fake

pytestmark = pytest.mark.django_db

SECRET = "sk-model-secret-789"


@pytest.fixture
def owner():
    return factories.user("owner")


def model_endpoint(owner, url="https://llm.example.org/v1", **fields) -> BotEndpoint:
    return BotEndpoint.objects.create(
        owner=owner,
        name="Strict judge",
        protocol="openai",
        url=url,
        model_name="judge-7b",
        auth_token=SECRET,
        **fields,
    )


def page(endpoint) -> str:
    return reverse("model-endpoint", args=[endpoint.pk])


def api_for(user=None) -> APIClient:
    api = APIClient()
    if user is not None:
        api.force_authenticate(user)
    return api


def edit(**fields):
    data = {
        "url": "https://llm.example.org/v1",
        "model_name": "judge-7b",
        "timeout_seconds": "30",
        "max_concurrency": "2",
        "daily_budget": "100",
        "stop": "",
    }
    data.update(fields)
    return data


def test_the_owner_sees_the_page_without_the_key(client, owner):
    endpoint = model_endpoint(owner)
    client.force_login(owner)
    response = client.get(page(endpoint))
    text = response.content.decode()
    assert response.status_code == 200 and "Model endpoint of Strict judge" in text
    assert SECRET not in text and 'id="test-connection"' in text
    # Only what a judge's requests use: no protocol, system prompt or chat share.
    assert 'name="system_prompt"' not in text and 'name="chat_share"' not in text


def test_the_owner_edits_it_and_a_blank_key_keeps_the_stored_one(client, owner):
    endpoint = model_endpoint(owner)
    client.force_login(owner)
    response = client.post(page(endpoint), edit(daily_budget="42"))
    assert response.status_code == 302 and response["Location"] == page(endpoint)
    endpoint.refresh_from_db()
    assert (endpoint.daily_budget, endpoint.auth_token, endpoint.protocol) == (42, SECRET, "openai")
    assert (endpoint.system, endpoint.owner) == (None, owner)


def test_the_owner_turns_structured_output_off_on_the_page(client, owner):
    endpoint = model_endpoint(owner)
    client.force_login(owner)
    response = client.post(page(endpoint), edit(structured_output="off"))
    assert response.status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.structured_output == "off"


def test_the_api_turns_structured_output_off(owner):
    endpoint = model_endpoint(owner)
    changed = api_for(owner).patch(
        f"/api/endpoints/{endpoint.pk}/", {"structured_output": "off"}, format="json"
    )
    assert changed.status_code == 200 and changed.json()["structured_output"] == "off"
    endpoint.refresh_from_db()
    assert endpoint.structured_output == "off"


@pytest.mark.parametrize("who", ["another researcher", "anonymous"])
def test_others_find_no_page(client, owner, who):
    endpoint = model_endpoint(owner)
    if who == "anonymous":
        assert client.get(page(endpoint)).status_code == 302  # to the login page
    else:
        client.force_login(factories.user("mallory"))
        assert client.get(page(endpoint)).status_code == 404
        assert client.post(page(endpoint), edit(daily_budget="1")).status_code == 404
        test_url = reverse("model-endpoint-test", args=[endpoint.pk])
        assert client.post(test_url).status_code == 404
    endpoint.refresh_from_db()
    assert endpoint.daily_budget != 1 and not EndpointCall.objects.exists()


def test_staff_manage_it(client, owner):
    endpoint = model_endpoint(owner)
    client.force_login(factories.user("boss", staff=True))
    assert client.get(page(endpoint)).status_code == 200
    assert (
        api_for(factories.user("boss2", staff=True))
        .get(f"/api/endpoints/{endpoint.pk}/")
        .status_code
        == 200
    )


def test_a_systems_endpoint_has_no_model_endpoint_address(client, owner):
    system = factories.system(owner, slug="chatty")
    endpoint = BotEndpoint.objects.create(system=system, url="https://bot.example.org/reply")
    client.force_login(owner)
    assert client.get(page(endpoint)).status_code == 404
    assert api_for(owner).get(f"/api/endpoints/{endpoint.pk}/").status_code == 404


def test_the_api_reads_and_changes_it_and_never_returns_the_key(owner):
    endpoint = model_endpoint(owner)
    api = api_for(owner)
    read = api.get(f"/api/endpoints/{endpoint.pk}/")
    assert read.status_code == 200 and read.json()["has_token"] is True
    assert read.json()["name"] == "Strict judge" and SECRET not in read.content.decode()
    changed = api.patch(
        f"/api/endpoints/{endpoint.pk}/",
        {"auth_token": "sk-new-key", "daily_budget": 77, "protocol": "evalhub"},
        format="json",
    )
    assert changed.status_code == 200 and "sk-new-key" not in changed.content.decode()
    endpoint.refresh_from_db()
    assert (endpoint.auth_token, endpoint.daily_budget) == ("sk-new-key", 77)
    assert endpoint.protocol == "openai"  # read-only: a judge's model speaks OpenAI's


def test_the_api_is_404_to_others_and_401_to_anonymous(owner):
    endpoint = model_endpoint(owner)
    other = api_for(factories.user("mallory"))
    for path in ("", "calls/"):
        assert other.get(f"/api/endpoints/{endpoint.pk}/{path}").status_code == 404
    assert other.post(f"/api/endpoints/{endpoint.pk}/test/").status_code == 404
    assert other.patch(f"/api/endpoints/{endpoint.pk}/", {"daily_budget": 1}).status_code == 404
    assert api_for().get(f"/api/endpoints/{endpoint.pk}/").status_code == 401
    endpoint.refresh_from_db()
    assert endpoint.daily_budget != 1


@pytest.fixture
def model_server():
    with openai_fake.FakePool() as pool:
        yield pool.start(lambda payload: openai_fake.completion("Ready to judge."))


def test_test_connection_on_the_page_flashes_the_reply(client, owner, model_server):
    endpoint = model_endpoint(owner, url=model_server.base_url)
    client.force_login(owner)
    response = client.post(reverse("model-endpoint-test", args=[endpoint.pk]), follow=True)
    text = response.content.decode()
    assert "Connected in" in text and "Ready to judge." in text
    assert EndpointCall.objects.filter(endpoint=endpoint, purpose="test", status="ok").count() == 1


def test_test_connection_and_the_calls_in_the_api(owner, model_server):
    endpoint = model_endpoint(owner, url=model_server.base_url)
    api = api_for(owner)
    probed = api.post(f"/api/endpoints/{endpoint.pk}/test/")
    assert probed.status_code == 200 and probed.json()["ok"] is True
    assert probed.json()["reply"] == "Ready to judge."
    listed = api.get(f"/api/endpoints/{endpoint.pk}/calls/").json()
    assert [c["purpose"] for c in listed["results"]] == ["test"]


def test_its_failures_are_summarised_under_its_own_name(owner):
    endpoint = model_endpoint(owner)
    calls.record(endpoint.pk, purpose="judge", status="timeout", latency_ms=5)
    [row] = calls.failure_summary([endpoint.pk])
    assert (row["system"], row["system_name"], row["endpoint"]) == (
        None,
        "Strict judge",
        endpoint.pk,
    )


def test_its_owner_is_told_when_it_keeps_failing_with_a_link_to_its_page(owner):
    endpoint = model_endpoint(owner)
    for _ in range(calls.FAILING_AFTER):
        calls.record(endpoint.pk, purpose="judge", status="timeout", latency_ms=5)
    [notice] = Notice.objects.filter(user=owner, kind="endpoint_failing")
    assert "Strict judge failed its last 10 calls" in notice.text
    assert notice.url == page(endpoint)


def test_it_counts_against_its_owners_endpoint_quota(owner, settings):
    from evalhub.quotas import QuotaExceeded, check_quota

    settings.EVALHUB_QUOTA_ENDPOINTS = 1
    model_endpoint(owner)
    with pytest.raises(QuotaExceeded):
        check_quota(owner, BotEndpoint)
    assert BotEndpoint.objects.count() == 1
