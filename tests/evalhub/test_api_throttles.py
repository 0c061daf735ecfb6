"""The API's request rates (evalhub/api/throttles.py): per account, per address signed out,
and per scope for creations, uploads and token requests; a refused request answers 429 with
Retry-After in the one error shape. The counts live in the project's cache."""

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from redis.exceptions import ConnectionError as RedisConnectionError
from rest_framework.test import APIClient

from evalhub import settings as project_settings
from evalhub.api import throttles
from evalhub.models import ApiToken, Submission, System
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def rates(settings):
    """Set some rates (scope -> "n/period"); the others stay out of reach."""

    def set_rates(**scopes):
        current = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
        settings.REST_FRAMEWORK = {
            **settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": {**current, **scopes},
        }
        cache.clear()

    return set_rates


def api_as(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def assert_throttled(response):
    assert response.status_code == 429
    assert 0 < int(response["Retry-After"]) <= 60
    (error,) = response.json()["errors"]
    assert error["line"] is None
    assert error["message"].startswith("Request was throttled.")
    assert response.json()["error_count"] == 1


def test_the_declared_rates_stop_200_rapid_calls_of_one_account(settings):
    settings.REST_FRAMEWORK = project_settings.REST_FRAMEWORK  # as deployed, not the tests'
    client = api_as(factories.user("rapid"))
    codes = [client.get("/api/systems/").status_code for _ in range(200)]
    allowed = project_settings.env.EVALHUB_API_USER_PER_MINUTE
    assert codes == [200] * allowed + [429] * (200 - allowed)


def test_an_account_past_its_rate_gets_429_with_retry_after(rates):
    rates(user="3/minute")
    client = api_as(factories.user("busy"))
    assert [client.get("/api/systems/").status_code for _ in range(3)] == [200] * 3
    assert_throttled(client.get("/api/systems/"))
    # Another account has its own count.
    assert api_as(factories.user("calm")).get("/api/systems/").status_code == 200


def test_signed_out_callers_are_counted_per_address(rates):
    rates(anon="2/minute")
    client = api_as()
    assert [client.get("/api/systems/").status_code for _ in range(2)] == [200, 200]
    assert_throttled(client.get("/api/systems/"))
    other_address = client.get("/api/systems/", REMOTE_ADDR="192.0.2.7")
    assert other_address.status_code == 200


def test_creations_have_a_scope_of_their_own_and_reads_do_not_count(rates):
    rates(creations="2/minute")
    client = api_as(factories.user("maker"))
    for n in range(2):
        body = {"slug": f"bot-{n}", "name": f"Bot {n}"}
        assert client.post("/api/systems/", body, format="json").status_code == 201
    assert_throttled(client.post("/api/systems/", {"slug": "bot-2", "name": "B"}, format="json"))
    assert System.objects.count() == 2
    assert client.get("/api/systems/").status_code == 200  # reads are the user rate's


def test_uploads_have_a_scope_of_their_own(rates):
    rates(uploads="1/hour")
    owner = factories.user("uploader")
    prompt_set = factories.prompt_set(2)
    system = factories.system(owner, slug="up-bot")
    client = api_as(owner)

    def submit():
        upload = SimpleUploadedFile("r.txt", factories.txt("a .", "b ."))
        return client.post(
            f"/api/systems/{system.slug}/submissions/",
            {"prompt_set": prompt_set.slug, "file": upload},
            format="multipart",
        )

    assert submit().status_code == 201
    refused = submit()
    assert refused.status_code == 429 and int(refused["Retry-After"]) <= 3600
    assert Submission.objects.count() == 1


def test_token_requests_have_a_scope_of_their_own(rates):
    rates(token="2/minute")
    factories.user("alice", password="right-password-1")
    client = api_as()
    body = {"username": "alice", "password": "right-password-1"}
    assert [client.post("/api/token/", body).status_code for _ in range(2)] == [200, 200]
    assert_throttled(client.post("/api/token/", body))


def test_making_tokens_through_the_api_counts_in_that_scope_too(rates):
    rates(token="2/minute")
    client = api_as(factories.user("maker"))
    made = [client.post("/api/tokens/", {"name": f"t{n}"}).status_code for n in range(2)]
    assert made == [201, 201]
    assert_throttled(client.post("/api/tokens/", {"name": "t3"}))
    assert ApiToken.objects.filter(user__username="maker").count() == 2


def test_the_counts_live_in_the_project_s_cache(rates):
    rates(user="5/minute")
    user = factories.user("counted")
    api_as(user).get("/api/systems/")
    assert len(cache.get(f"throttle_user_{user.pk}")) == 1


def test_a_cache_that_cannot_be_reached_lets_requests_through(rates, monkeypatch, caplog):
    rates(user="1/minute")

    def unreachable(*args, **kwargs):
        raise RedisConnectionError("Connection refused")

    monkeypatch.setattr(throttles.UserRateThrottle.cache, "get", unreachable)
    client = api_as(factories.user("offline"))
    assert [client.get("/api/systems/").status_code for _ in range(3)] == [200] * 3
    assert "the cache is unreachable" in caplog.text
