"""Public pages: home, prompt sets, comparison; and the accounts."""

import pytest
from django.core import mail
from django.urls import reverse

from evalhub.models import ApiToken
from tests import factories

pytestmark = pytest.mark.django_db


def test_home_lists_prompt_sets_and_public_systems(client):
    prompt_set = factories.prompt_set(2, slug="greetings")
    factories.system(None, name="Visible Bot")
    content = client.get(reverse("home")).content.decode()
    assert prompt_set.get_absolute_url() in content
    assert "Visible Bot" in content


def test_prompt_set_pages(client):
    prompt_set = factories.prompt_set(60, slug="greetings")
    system = factories.system(factories.user())
    factories.submission(system, prompt_set)
    listing = client.get(reverse("promptset-list")).content.decode()
    assert prompt_set.get_absolute_url() in listing
    detail = client.get(prompt_set.get_absolute_url()).content.decode()
    assert "hello number 50 ?" in detail and "hello number 51 ?" not in detail
    assert system.get_absolute_url() in detail
    assert (
        "hello number 51 ?"
        in client.get(prompt_set.get_absolute_url() + "?page=2").content.decode()
    )


def test_prompt_set_404(client):
    assert client.get(reverse("promptset-detail", args=["nope"])).status_code == 404


@pytest.fixture
def comparison():
    prompt_set = factories.prompt_set(30, slug="greetings")
    systems = [factories.system(factories.user(), slug=f"bot-{i}") for i in range(3)]
    for system in systems:
        factories.submission(system, prompt_set)
    return prompt_set, systems


def test_compare_side_by_side(client, comparison, django_assert_max_num_queries):
    prompt_set, systems = comparison
    with django_assert_max_num_queries(12):
        response = client.get(
            reverse("compare"),
            {"prompt_set": prompt_set.slug, "systems": [s.slug for s in systems]},
        )
    content = response.content.decode()
    assert "30 prompts" in content
    for system in systems:
        assert f"response 1 of {system.slug}" in content
        assert f"response 21 of {system.slug}" not in content  # 20 per page


def test_compare_filters_by_text(client, comparison):
    prompt_set, systems = comparison
    response = client.get(
        reverse("compare"),
        {
            "prompt_set": prompt_set.slug,
            "systems": [s.slug for s in systems[:2]],
            "q": "number 17 ?",
        },
    )
    content = response.content.decode()
    # The match is marked (issue 14).
    assert "1 prompt matching" in content and "hello <mark>number 17 ?</mark>" in content


def test_compare_filter_matches_responses(client, comparison):
    prompt_set, systems = comparison
    response = client.get(
        reverse("compare"),
        {
            "prompt_set": prompt_set.slug,
            "systems": [s.slug for s in systems[:2]],
            "q": "response 23 of bot-1",
        },
    )
    content = response.content.decode()
    assert "1 prompt matching" in content and "hello number 23 ?" in content


def test_compare_needs_two_to_five_systems(client, comparison):
    prompt_set, systems = comparison
    response = client.get(
        reverse("compare"), {"prompt_set": prompt_set.slug, "systems": [systems[0].slug]}
    )
    assert "Choose between two and five systems." in response.content.decode()


def test_compare_names_a_system_without_a_submission(client, comparison):
    prompt_set, systems = comparison
    lazy = factories.system(factories.user(), slug="lazy-bot", name="Lazy")
    factories.submission(lazy, factories.prompt_set(1))  # answered another set only
    response = client.get(
        reverse("compare"),
        {"prompt_set": prompt_set.slug, "systems": [systems[0].slug, "lazy-bot"]},
    )
    assert "Lazy has no submission for" in response.content.decode()


def test_signup_logs_in_and_leads_to_registering_a_system(client):
    response = client.post(
        reverse("signup"),
        {
            "username": "newbie",
            "email": "n@example.org",
            "password1": "A-long-pass-123",
            "password2": "A-long-pass-123",
        },
    )
    assert response.status_code == 302 and response["Location"] == reverse("system-create")
    assert client.get(reverse("account")).status_code == 200


def test_login_and_logout(client):
    factories.user("alice")
    response = client.post(reverse("login"), {"username": "alice", "password": "pw-for-tests-1"})
    assert response.status_code == 302
    assert client.get(reverse("account")).status_code == 200
    assert client.get(reverse("logout")).status_code == 405  # logging out is a POST
    client.post(reverse("logout"))
    assert client.get(reverse("account")).status_code == 302


def test_password_reset_sends_an_email(client):
    factories.user("alice")
    response = client.post(reverse("password_reset"), {"email": "alice@example.org"})
    assert response.status_code == 302
    assert len(mail.outbox) == 1 and "/accounts/reset/" in mail.outbox[0].body


def test_the_account_page_makes_shows_once_and_revokes_api_tokens(client):
    alice = factories.user("alice")
    client.force_login(alice)
    made = client.post(reverse("api-token-create"), {"name": "laptop"})
    assert made.status_code == 200 and "no-store" in made["Cache-Control"]
    token = made.context["new_token"]["token"]
    assert token in made.content.decode()
    (stored,) = ApiToken.objects.filter(user=alice)
    assert stored.name == "laptop" and token.startswith(stored.token_key)
    page = client.get(reverse("account")).content.decode()
    assert "laptop" in page and stored.token_key in page and token not in page  # shown once
    revoked = client.post(reverse("api-token-revoke", args=[stored.token_key]))
    assert revoked.status_code == 302
    assert not ApiToken.objects.exists()
    assert client.get(reverse("api-token-create")).status_code == 405


def test_the_systems_list_filters_by_owner_and_mine(client):
    from django.urls import reverse

    from tests import factories

    alice, bob = factories.user("alice"), factories.user("bob")
    factories.system(alice, slug="alice-bot", name="Alice bot")
    factories.system(bob, slug="bob-bot", name="Bob bot")
    client.force_login(bob)

    by_alice = client.get(reverse("system-list") + "?owner=alice").content.decode()
    mine = client.get(reverse("system-list") + "?owner=me").content.decode()

    assert "Alice bot" in by_alice and "Bob bot" not in by_alice
    assert "Bob bot" in mine and "Alice bot" not in mine
