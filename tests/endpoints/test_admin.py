"""Admin pages of the endpoints app: every model has one, list pages cost the same few
queries whatever the size, usage and calls are records, and the token never reaches a browser."""

from datetime import date

import pytest

from endpoints.models import BotEndpoint, EndpointCall, EndpointUsage
from tests import factories
from tests.admin_pages import (
    admin_url,
    assert_every_model_has_an_admin,
    assert_pages_answer,
    change_list_rows_with_flat_queries,
)

pytestmark = pytest.mark.django_db

MODELS = [BotEndpoint, EndpointUsage, EndpointCall]
TOKEN = "sk-very-secret-token-4711"


def populate(n=2, prefix="t"):
    """`n` systems, each with an endpoint holding a token, a day of usage and a call."""
    owner = factories.user()
    for i in range(n):
        system = factories.system(owner, slug=f"{prefix}-bot-{i}")
        endpoint = BotEndpoint.objects.create(
            system=system, url=f"http://127.0.0.1:9/{i}", auth_token=TOKEN
        )
        EndpointUsage.objects.create(endpoint=endpoint, day=date(2026, 1, 1 + i), requests=i)
        EndpointCall.objects.create(endpoint=endpoint, status="ok", latency_ms=10 + i)


@pytest.fixture
def superuser(client):
    user = factories.user("boss", staff=True)
    client.force_login(user)
    return user


def test_every_endpoints_model_has_an_admin():
    assert_every_model_has_an_admin("endpoints", MODELS)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_change_list_search_and_change_page_answer(client, superuser, model):
    populate()
    assert_pages_answer(client, model, search="t-")


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_change_lists_cost_the_same_queries_with_more_rows(
    client, superuser, model, django_assert_max_num_queries
):
    populate(1, prefix="a")
    rows, bigger = change_list_rows_with_flat_queries(
        client, model, lambda: populate(6, prefix="b"), django_assert_max_num_queries
    )
    assert bigger > rows


@pytest.mark.parametrize("page", ["changelist", "change", "history"])
def test_the_bot_token_never_appears(client, superuser, page):
    populate(1)
    endpoint = BotEndpoint.objects.get()
    args = () if page == "changelist" else (endpoint.pk,)
    response = client.get(admin_url(BotEndpoint, page, *args))
    assert response.status_code == 200
    assert TOKEN not in response.content.decode()


def test_saving_an_endpoint_without_typing_a_token_keeps_it(client, superuser):
    populate(1)
    endpoint = BotEndpoint.objects.get()
    response = client.post(
        admin_url(BotEndpoint, "change", endpoint.pk),
        {
            "system": endpoint.system_id,
            "url": "http://127.0.0.1:9/new",
            "auth_token": "",
            "timeout_seconds": 5,
            "max_concurrency": 1,
            "protocol": endpoint.protocol,
            "daily_budget": endpoint.daily_budget,
            "chat_share": endpoint.chat_share,
            "structured_output": endpoint.structured_output,
        },
    )
    endpoint.refresh_from_db()
    assert response.status_code == 302
    assert (endpoint.url, endpoint.auth_token) == ("http://127.0.0.1:9/new", TOKEN)
    assert TOKEN not in client.get(admin_url(BotEndpoint, "history", endpoint.pk)).content.decode()


def test_a_typed_token_replaces_the_stored_one_and_can_be_removed(client, superuser):
    populate(1)
    endpoint = BotEndpoint.objects.get()
    fields = {"system": endpoint.system_id, "url": endpoint.url, "timeout_seconds": 5}
    fields.update(max_concurrency=1, protocol=endpoint.protocol, daily_budget=endpoint.daily_budget)
    fields.update(chat_share=endpoint.chat_share, structured_output=endpoint.structured_output)
    client.post(
        admin_url(BotEndpoint, "change", endpoint.pk), {**fields, "auth_token": "new-token"}
    )
    endpoint.refresh_from_db()
    assert endpoint.auth_token == "new-token"
    client.post(admin_url(BotEndpoint, "change", endpoint.pk), {**fields, "clear_token": "on"})
    endpoint.refresh_from_db()
    assert endpoint.auth_token == ""


def test_a_token_typed_on_a_failed_form_is_not_sent_back(client, superuser):
    populate(1)
    endpoint = BotEndpoint.objects.get()
    response = client.post(
        admin_url(BotEndpoint, "change", endpoint.pk),
        {"system": endpoint.system_id, "url": "not a url", "auth_token": "typed-secret-99"},
    )
    assert response.status_code == 200
    assert "typed-secret-99" not in response.content.decode()
    endpoint.refresh_from_db()
    assert endpoint.auth_token == TOKEN
