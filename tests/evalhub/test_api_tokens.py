"""API tokens (evalhub/api_tokens.py, evalhub/api/tokens.py): django-rest-knox's, stored as
digests, expiring, several per account under a name, revocable, shown once (issue 23,
finding 5)."""

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone
from rest_framework.test import APIClient

from evalhub.api_tokens import create_token
from evalhub.errors import UserInputError
from evalhub.models import ApiToken
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice():
    return factories.user("alice")


def client_with(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def signed_in(token: str) -> int:
    """The status of a request that needs a signed-in caller."""
    return client_with(token).get("/api/tokens/").status_code


def test_only_a_digest_of_the_token_is_stored(alice):
    made, token = create_token(alice, "laptop")
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM evalhub_apitoken")
        (row,) = cursor.fetchall()
    assert token not in [str(value) for value in row]
    assert token.startswith(made.token_key) and len(token) > len(made.token_key) + 40
    assert signed_in(token) == 200


def test_several_named_tokens_are_listed_without_the_tokens_themselves(alice):
    laptop, laptop_token = create_token(alice, "laptop")
    _, ci_token = create_token(alice, "ci")
    create_token(factories.user("bob"), "bob's")
    response = client_with(laptop_token).get("/api/tokens/")
    assert response.status_code == 200
    rows = response.json()["results"]
    assert [(r["name"], r["current"]) for r in rows] == [("ci", False), ("laptop", True)]
    assert rows[1]["starts_with"] == laptop.token_key and rows[1]["expiry"]
    assert laptop_token not in response.content.decode()
    assert ci_token not in response.content.decode()


def test_a_token_made_through_the_api_is_answered_once(alice):
    api = APIClient()
    api.force_authenticate(alice)
    made = api.post("/api/tokens/", {"name": "notebook"}, format="json")
    assert made.status_code == 201
    token = made.json()["token"]
    assert made.json()["name"] == "notebook" and signed_in(token) == 200
    assert "token" not in api.get("/api/tokens/").json()["results"][0]
    assert ApiToken.objects.get(user=alice).name == "notebook"


def test_a_token_expires(alice, settings):
    settings.EVALHUB_API_TOKEN_DAYS = 30
    made, token = create_token(alice, "laptop")
    assert timedelta(days=29) < made.expiry - timezone.now() <= timedelta(days=30)
    ApiToken.objects.filter(pk=made.pk).update(expiry=timezone.now() - timedelta(seconds=1))
    assert signed_in(token) == 401
    assert not ApiToken.objects.exists()  # knox deletes an expired token when it is shown


def test_a_revoked_token_stops_working_at_once(alice):
    made, token = create_token(alice, "leaked")
    _, other = create_token(alice, "kept")
    response = client_with(other).delete(f"/api/tokens/{made.token_key}/")
    assert response.status_code == 204
    assert signed_in(token) == 401 and signed_in(other) == 200
    assert list(ApiToken.objects.values_list("name", flat=True)) == ["kept"]


def test_nobody_revokes_another_account_s_token(alice):
    made, token = create_token(alice, "mine")
    _, bob_token = create_token(factories.user("bob"), "bob's")
    response = client_with(bob_token).delete(f"/api/tokens/{made.token_key}/")
    assert response.status_code == 404
    assert response.json()["errors"][0]["message"].startswith("You have no API token")
    assert signed_in(token) == 200


def test_an_account_holds_a_limited_number_of_tokens(alice, settings):
    settings.EVALHUB_API_TOKENS_PER_USER = 2
    expired, _ = create_token(alice, "old")
    ApiToken.objects.filter(pk=expired.pk).update(expiry=timezone.now() - timedelta(days=1))
    create_token(alice, "one")
    _, token = create_token(alice, "two")  # the expired one no longer counts
    refused = client_with(token).post("/api/tokens/", {"name": "three"}, format="json")
    assert refused.status_code == 400
    assert "revoke one" in refused.json()["errors"][0]["message"]
    assert sorted(ApiToken.objects.values_list("name", flat=True)) == ["one", "two"]


def test_a_token_needs_a_name(alice):
    with pytest.raises(UserInputError, match="Give the token a name"):
        create_token(alice, "   ")
    api = APIClient()
    api.force_authenticate(alice)
    refused = api.post("/api/tokens/", {"name": ""}, format="json")
    assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "name"
    assert not ApiToken.objects.exists()


def test_the_last_use_is_noted_at_most_once_a_minute(alice):
    made, token = create_token(alice, "laptop")
    assert made.last_used is None
    signed_in(token)
    first = ApiToken.objects.get().last_used
    assert first is not None
    signed_in(token)
    assert ApiToken.objects.get().last_used == first
    ApiToken.objects.update(last_used=first - timedelta(minutes=2))
    signed_in(token)
    assert ApiToken.objects.get().last_used > first


def test_anonymous_callers_list_and_make_no_tokens():
    api = APIClient()
    assert api.get("/api/tokens/").status_code == 401
    assert api.post("/api/tokens/", {"name": "x"}, format="json").status_code == 401
    assert not ApiToken.objects.exists()


# The migration from DRF's plain-text tokens ---------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_old_plain_text_tokens_become_hashed_tokens_that_still_work():
    executor = MigrationExecutor(connection)
    leaf = executor.loader.graph.leaf_nodes()
    owner = factories.user("scripted")
    old_key = "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"  # DRF's 40 hex characters
    try:
        executor.migrate([("evalhub", "0012_api_tokens")])
        with connection.cursor() as cursor:
            cursor.execute(
                "CREATE TABLE authtoken_token (key varchar(40) NOT NULL PRIMARY KEY, "
                "created timestamp NOT NULL, user_id integer NOT NULL UNIQUE)"
            )
            cursor.execute(
                "INSERT INTO authtoken_token VALUES (%s, %s, %s)",
                [old_key, timezone.now(), owner.pk],
            )
        executor = MigrationExecutor(connection)
        executor.migrate([("evalhub", "0013_hash_old_api_tokens")])

        with connection.cursor() as cursor:
            cursor.execute("SELECT COUNT(*) FROM authtoken_token")
            assert cursor.fetchone()[0] == 0  # no plain-text token is left
        (converted,) = ApiToken.objects.filter(user=owner)
        assert converted.name == "Token from before named tokens"
        assert converted.expiry > timezone.now() and old_key != converted.digest
        assert signed_in(old_key) == 200
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS authtoken_token")
        MigrationExecutor(connection).migrate(leaf)


def test_a_name_is_used_once_per_account_on_the_api_and_the_page(alice):
    create_token(alice, "laptop")
    api = APIClient()
    api.force_authenticate(alice)
    refused = api.post("/api/tokens/", {"name": "laptop"}, format="json")
    assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "name"
    assert ApiToken.objects.filter(user=alice).count() == 1
    create_token(factories.user("bob"), "laptop")  # another account's names are its own


def test_logging_in_again_replaces_the_token_of_that_name(alice):
    def log_in():
        body = {"username": "alice", "password": "pw-for-tests-1"}
        return APIClient().post("/api/token/", body, format="json").json()["token"]

    first, second = log_in(), log_in()
    assert signed_in(second) == 200 and signed_in(first) == 401
    assert list(ApiToken.objects.values_list("name", flat=True)) == ["API login"]
