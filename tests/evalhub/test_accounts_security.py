"""Accounts: login and token lockout (django-axes) per username and client address,
sign-ups limited per client address (behind the trusted proxies, the address it forwarded)."""

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from evalhub.models import ApiToken
from tests import factories

pytestmark = pytest.mark.django_db


def test_repeated_failed_logins_lock_the_username_out_from_that_address(client, settings):
    settings.AXES_ENABLED = True
    user = factories.user("victim")
    url = reverse("login")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post(url, {"username": "victim", "password": "wrong"})
    user.set_password("right")
    user.save()
    locked = client.post(url, {"username": "victim", "password": "right"})
    assert locked.status_code == 429
    assert "_auth_user_id" not in client.session


def test_repeated_failed_token_requests_lock_the_username_out_from_that_address(client, settings):
    settings.AXES_ENABLED = True
    user = factories.user("victim")
    user.set_password("right")
    user.save()
    url = reverse("api-token")
    assert client.post(url, {"username": "victim", "password": "wrong"}).status_code == 400
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        client.post(url, {"username": "victim", "password": "wrong"})
    locked = client.post(url, {"username": "victim", "password": "right"})
    assert locked.status_code == 429 and "token" not in locked.json()
    assert locked.json()["error_count"] == 1  # the one error shape
    assert not ApiToken.objects.filter(user=user).exists()


def signup(client, username):
    return client.post(
        reverse("signup"),
        {
            "username": username,
            "email": f"{username}@example.org",
            "password1": "A-long-pass-123",
            "password2": "A-long-pass-123",
        },
    )


def test_signups_are_limited_per_address(client, settings):
    settings.EVALHUB_SIGNUPS_PER_HOUR = 2
    assert signup(client, "first").status_code == 302
    client.logout()
    assert signup(client, "second").status_code == 302
    client.logout()
    refused = signup(client, "third")
    assert refused.status_code == 429
    assert "Too many sign-ups" in refused.content.decode()
    assert set(User.objects.values_list("username", flat=True)) == {"first", "second"}


# Lockouts per username and address, behind a proxy -------------------------------------------

PROXY = "10.0.0.2"


def behind_proxy(address):
    """A browser whose requests reach EvalHub through the one trusted proxy."""
    return Client(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=address)


def log_in(client, username, password):
    return client.post(reverse("login"), {"username": username, "password": password})


def token(client, username, password):
    return client.post(
        reverse("api-token"),
        {"username": username, "password": password},
        content_type="application/json",
    )


@pytest.fixture
def lockouts_behind_a_proxy(settings):
    settings.AXES_ENABLED = True
    settings.EVALHUB_TRUSTED_PROXY_COUNT = 1
    for name in ("alice", "bob"):
        factories.user(name, password=f"{name}-right-pass")


def test_a_lockout_of_one_user_from_one_address_locks_nobody_else(lockouts_behind_a_proxy):
    attacker = behind_proxy("203.0.113.66")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        log_in(attacker, "alice", "wrong")
    assert log_in(attacker, "alice", "alice-right-pass").status_code == 429
    # Another user from the same address, and the same user from elsewhere, log in.
    assert log_in(behind_proxy("203.0.113.66"), "bob", "bob-right-pass").status_code == 302
    elsewhere = behind_proxy("198.51.100.20")
    assert log_in(elsewhere, "alice", "alice-right-pass").status_code == 302
    assert elsewhere.session["_auth_user_id"] == str(User.objects.get(username="alice").pk)
    assert AccessAttempt.objects.get().username == "alice"
    assert AccessAttempt.objects.get().ip_address == "203.0.113.66"


def test_a_forged_forwarded_address_does_not_escape_the_lockout(lockouts_behind_a_proxy):
    # The client sends an X-Forwarded-For of its own; the proxy appends the real address.
    for n in range(settings.AXES_FAILURE_LIMIT):
        log_in(behind_proxy(f"192.0.2.{n}, 203.0.113.66"), "alice", "wrong")
    forged = behind_proxy("192.0.2.99, 203.0.113.66")
    assert log_in(forged, "alice", "alice-right-pass").status_code == 429
    assert "_auth_user_id" not in forged.session


def test_token_requests_with_many_usernames_lock_no_real_account(lockouts_behind_a_proxy):
    # A fuzzer (or an attacker) tries many usernames from one address.
    fuzzer = behind_proxy("203.0.113.66")
    for n in range(3 * settings.AXES_FAILURE_LIMIT):
        assert token(fuzzer, f"nobody{n}", "wrong").status_code == 400
    for _ in range(settings.AXES_FAILURE_LIMIT):
        token(fuzzer, "alice", "wrong")
    assert token(fuzzer, "alice", "alice-right-pass").status_code == 429
    answer = token(behind_proxy("203.0.113.66"), "bob", "bob-right-pass")
    assert answer.status_code == 200 and "token" in answer.json()
    assert ApiToken.objects.filter(user__username="bob").exists()
    assert not ApiToken.objects.filter(user__username="alice").exists()


def test_two_clients_behind_one_proxy_have_their_own_sign_up_limits(settings):
    settings.EVALHUB_TRUSTED_PROXY_COUNT = 1
    settings.EVALHUB_SIGNUPS_PER_HOUR = 1
    assert signup(behind_proxy("203.0.113.1"), "first").status_code == 302
    assert signup(behind_proxy("203.0.113.2"), "second").status_code == 302
    assert signup(behind_proxy("203.0.113.1"), "third").status_code == 429
    assert set(User.objects.values_list("username", flat=True)) == {"first", "second"}
