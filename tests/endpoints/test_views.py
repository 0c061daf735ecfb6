"""The bot endpoint pages: only the system's owner and staff register, edit and remove an
endpoint; the token is never shown again after saving."""

import pytest
from django.urls import reverse

from endpoints.models import BotEndpoint
from judging.models import Judge
from tests import factories

pytestmark = pytest.mark.django_db

SECRET = "sk-very-secret-key-123"


@pytest.fixture
def owner():
    return factories.user("owner")


@pytest.fixture
def system(owner):
    return factories.system(owner, slug="my-llm", name="My LLM")


def url(system):
    return reverse("system-endpoint", args=[system.slug])


def form(**fields):
    data = {
        "protocol": "openai",
        "url": "https://models.example.org/v1",
        "model_name": "my-llm-7b",
        "auth_token": SECRET,
        "system_prompt": "You are chatting with a stranger.",
        "temperature": "0.7",
        "top_p": "",
        "max_tokens": "128",
        "stop": "\\nUser:\nEND",
        "timeout_seconds": "20",
        "max_concurrency": "4",
        "daily_budget": "1000",
        "chat_share": "30",
        "allow_other_owners": "",
    }
    data.update(fields)
    return data


def register(client, system, **fields):
    return client.post(url(system), form(**fields))


def test_the_owner_registers_an_endpoint(client, owner, system):
    client.force_login(owner)
    response = register(client, system)
    assert response.status_code == 302 and response["Location"] == url(system)
    endpoint = BotEndpoint.objects.get(system=system)
    assert (endpoint.protocol, endpoint.url, endpoint.model_name) == (
        "openai",
        "https://models.example.org/v1",
        "my-llm-7b",
    )
    assert endpoint.auth_token == SECRET
    assert endpoint.stop == ["\nUser:", "END"]
    assert (endpoint.temperature, endpoint.top_p, endpoint.max_tokens) == (0.7, None, 128)
    assert (endpoint.max_concurrency, endpoint.daily_budget, endpoint.chat_share) == (4, 1000, 30)
    assert endpoint.allow_other_owners is False


def test_the_token_is_never_shown_again(client, owner, system):
    client.force_login(owner)
    register(client, system)
    for page in (url(system), system.get_absolute_url()):
        response = client.get(page)
        assert response.status_code == 200
        assert SECRET not in response.content.decode()
    assert "stored (hidden)" in client.get(url(system)).content.decode()


def test_a_blank_token_keeps_the_stored_one_and_clear_removes_it(client, owner, system):
    client.force_login(owner)
    register(client, system)
    register(client, system, auth_token="", model_name="my-llm-8b")
    endpoint = BotEndpoint.objects.get(system=system)
    assert (endpoint.model_name, endpoint.auth_token) == ("my-llm-8b", SECRET)
    register(client, system, auth_token="", clear_token="on")
    assert BotEndpoint.objects.get(system=system).auth_token == ""


def test_the_profile_links_the_owner_to_the_endpoint_form(client, owner, system):
    client.force_login(owner)
    page = client.get(system.get_absolute_url()).content.decode()
    assert "Register an endpoint" in page and url(system) in page


def test_others_do_not_see_the_endpoint_on_the_profile(client, owner, system):
    client.force_login(owner)
    register(client, system)
    client.force_login(factories.user("researcher"))
    page = client.get(system.get_absolute_url()).content.decode()
    assert "models.example.org" not in page and url(system) not in page


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"model_name": ""}, "model_name", "needs the model name"),
        ({"temperature": "2.5"}, "temperature", "less than or equal to 2.0"),
        ({"max_concurrency": "0"}, "max_concurrency", "greater than or equal to 1"),
        ({"daily_budget": "2000000"}, "daily_budget", "less than or equal to 1000000"),
        ({"chat_share": "101"}, "chat_share", "less than or equal to 100"),
        ({"chat_share": "-1"}, "chat_share", "greater than or equal to 0"),
        ({"timeout_seconds": "0.5"}, "timeout_seconds", "greater than or equal to 1.0"),
        ({"url": "ftp://models.example.org/v1"}, "url", "Enter a valid URL"),
        ({"stop": "a\nb\nc\nd\ne"}, "stop", "At most 4 stop sequences"),
    ],
)
def test_bad_settings_are_refused_naming_the_field(client, owner, system, fields, field, message):
    client.force_login(owner)
    response = register(client, system, **fields)
    assert response.status_code == 400
    assert message in " ".join(response.context["form"].errors[field])
    assert not BotEndpoint.objects.exists()


def test_another_researcher_gets_403_and_changes_nothing(client, owner, system):
    client.force_login(owner)
    register(client, system)
    client.force_login(factories.user("researcher"))
    assert client.get(url(system)).status_code == 403
    assert register(client, system, url="https://evil.example.org/v1").status_code == 403
    delete = client.post(reverse("system-endpoint-delete", args=[system.slug]))
    assert delete.status_code == 403
    assert BotEndpoint.objects.get(system=system).url == "https://models.example.org/v1"


def test_a_private_system_endpoint_is_404_for_others(client, owner):
    private = factories.system(owner, slug="secret-llm", visibility="private")
    client.force_login(factories.user("researcher"))
    assert client.get(url(private)).status_code == 404
    assert register(client, private).status_code == 404
    assert not BotEndpoint.objects.exists()


def test_anonymous_visitors_are_sent_to_log_in(client, system):
    response = register(client, system)
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert client.get(url(system)).status_code == 302
    assert not BotEndpoint.objects.exists()


def test_staff_manage_any_endpoint(client, owner, system):
    client.force_login(factories.user("boss", staff=True))
    assert register(client, system).status_code == 302
    assert BotEndpoint.objects.filter(system=system).exists()


def test_the_owner_removes_the_endpoint(client, owner, system):
    client.force_login(owner)
    register(client, system)
    response = client.post(reverse("system-endpoint-delete", args=[system.slug]))
    assert response.status_code == 302
    assert not BotEndpoint.objects.exists()


def test_the_owner_allows_other_owners_tournaments(client, owner, system):
    client.force_login(owner)
    register(client, system, allow_other_owners="on")
    assert BotEndpoint.objects.get(system=system).allow_other_owners is True


def test_removing_needs_post(client, owner, system):
    client.force_login(owner)
    register(client, system)
    assert client.get(reverse("system-endpoint-delete", args=[system.slug])).status_code == 405
    assert BotEndpoint.objects.exists()


def test_the_admin_never_renders_the_token(client, owner, system):
    client.force_login(owner)
    register(client, system)
    client.force_login(factories.user("boss", staff=True))
    endpoint = BotEndpoint.objects.get(system=system)
    page = client.get(reverse("admin:endpoints_botendpoint_change", args=[endpoint.pk]))
    assert page.status_code == 200
    assert SECRET not in page.content.decode()


# Issue 23, finding 5: a token an import left out is asked for again -------------------------


def left_out_endpoint(system) -> BotEndpoint:
    """As import_all restores an endpoint that had a token: none, and flagged."""
    return BotEndpoint.objects.create(
        system=system,
        protocol="openai",
        url="https://models.example.org/v1",
        model_name="my-llm-7b",
        token_left_out=True,
    )


def test_the_pages_ask_again_for_a_token_an_import_left_out(client, owner, system):
    left_out_endpoint(system)
    judge_endpoint = BotEndpoint.objects.create(
        owner=owner,
        name="Strict",
        protocol="openai",
        url="https://models.example.org/v1",
        model_name="judge-7b",
        token_left_out=True,
    )
    judge = Judge.objects.create(slug="strict", name="Strict", owner=owner, endpoint=judge_endpoint)
    client.force_login(owner)
    pages = (url(system), system.get_absolute_url(), judge.get_absolute_url())
    for page in (*pages, judge_endpoint.get_absolute_url()):
        text = client.get(page).content.decode()
        assert "was left out when its data was imported" in text, page
    form_page = client.get(url(system))
    assert "type it again, or say it needs none" in form_page.content.decode()


def test_entering_the_token_again_settles_it(client, owner, system):
    left_out_endpoint(system)
    client.force_login(owner)
    assert register(client, system).status_code == 302
    endpoint = BotEndpoint.objects.get(system=system)
    assert (endpoint.auth_token, endpoint.token_left_out) == (SECRET, False)
    assert "was left out" not in client.get(url(system)).content.decode()


def test_saying_it_needs_no_token_settles_it_too(client, owner, system):
    left_out_endpoint(system)
    client.force_login(owner)
    register(client, system, auth_token="", clear_token="on")
    endpoint = BotEndpoint.objects.get(system=system)
    assert (endpoint.auth_token, endpoint.token_left_out) == ("", False)


def test_saving_other_fields_keeps_asking(client, owner, system):
    left_out_endpoint(system)
    client.force_login(owner)
    register(client, system, auth_token="", model_name="my-llm-8b")
    endpoint = BotEndpoint.objects.get(system=system)
    assert (endpoint.model_name, endpoint.token_left_out) == ("my-llm-8b", True)


def test_the_page_refuses_a_new_endpoint_past_the_quota(settings, client, owner, system):
    settings.EVALHUB_QUOTA_ENDPOINTS = 0
    client.force_login(owner)
    response = register(client, system)
    assert response.status_code == 400
    assert "(EVALHUB_QUOTA_ENDPOINTS=0)" in response.content.decode()
    assert not BotEndpoint.objects.exists()
