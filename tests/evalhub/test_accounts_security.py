"""Accounts: login and token lockout (django-axes), sign-ups limited per address."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from evalhub.models import ApiToken
from tests import factories

pytestmark = pytest.mark.django_db


def test_repeated_failed_logins_lock_the_address_out(client, settings):
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


def test_repeated_failed_token_requests_lock_the_address_out(client, settings):
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
