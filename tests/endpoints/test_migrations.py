"""The move of BotEndpoint and EndpointUsage from tournaments to endpoints loses no row: a
database filled before the move reads the same through endpoints.models after it (and after
the endpoints' later migrations: the chat share's default, no chat requests counted)."""

import datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [
    ("tournaments", "0005_numbers_in_range"),
    ("judging", "0002_default_rubrics"),
    ("evalhub", "0008_chat_turns"),
    ("contenttypes", "0002_remove_content_type_name"),
]
# The move, and the endpoints' own migrations since (today's model reads tokens encrypted).
AFTER = [("endpoints", "0007_encrypt_endpoint_tokens"), ("tournaments", "0006_endpoints_moved_out")]


def migrate(targets, *, unapply=()):
    """Migrate to `targets` (after unapplying the apps in `unapply`); the models then."""
    executor = MigrationExecutor(connection)
    executor.migrate([(app, None) for app in unapply] + targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


@pytest.fixture
def before_the_move():
    apps = migrate(BEFORE, unapply=["endpoints"])
    yield apps
    migrate(executor_leaf_nodes())


def executor_leaf_nodes():
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


@pytest.mark.django_db(transaction=True)
def test_endpoints_and_their_usage_are_read_through_endpoints_after_the_move(before_the_move):
    apps = before_the_move
    System = apps.get_model("evalhub", "System")
    OldEndpoint = apps.get_model("tournaments", "BotEndpoint")
    OldUsage = apps.get_model("tournaments", "EndpointUsage")
    system = System.objects.create(slug="moved-bot", name="Moved bot")
    old = OldEndpoint.objects.create(
        system=system,
        protocol="openai",
        url="https://bot.example/v1",
        model_name="m",
        auth_token="secret",
        timeout_seconds=12.0,
        max_concurrency=3,
        daily_budget=50,
        stop=["###"],
    )
    OldUsage.objects.create(endpoint=old, day=datetime.date(2026, 11, 1), requests=7)

    migrate(AFTER)
    migrate(executor_leaf_nodes())  # and the endpoints' later migrations, read as today

    from endpoints.models import BotEndpoint, EndpointUsage

    endpoint = BotEndpoint.objects.get(pk=old.pk)
    assert (endpoint.system.slug, endpoint.url, endpoint.auth_token) == (
        "moved-bot",
        "https://bot.example/v1",
        "secret",
    )
    assert (endpoint.timeout_seconds, endpoint.max_concurrency, endpoint.daily_budget) == (
        12.0,
        3,
        50,
    )
    assert endpoint.stop == ["###"]
    assert endpoint.chat_share == 50  # EVALHUB_BOT_CHAT_SHARE_PERCENT's default
    usage = EndpointUsage.objects.get(endpoint=endpoint)
    assert (usage.day, usage.requests, usage.chat_requests) == (datetime.date(2026, 11, 1), 7, 0)


@pytest.mark.django_db(transaction=True)
def test_the_content_types_follow_the_models(before_the_move):
    ContentType = before_the_move.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="endpoints").delete()
    ContentType.objects.get_or_create(app_label="tournaments", model="botendpoint")

    migrate(AFTER)

    from django.contrib.contenttypes.models import ContentType as CurrentContentType

    CurrentContentType.objects.clear_cache()
    moved = CurrentContentType.objects.get(app_label="endpoints", model="botendpoint")
    assert moved.model_class().__module__ == "endpoints.models"
    assert not CurrentContentType.objects.filter(
        app_label="tournaments", model="botendpoint"
    ).exists()


@pytest.mark.django_db(transaction=True)
def test_going_back_before_the_move_keeps_the_rows():
    from endpoints.models import BotEndpoint, EndpointUsage
    from tests import factories

    endpoint = BotEndpoint.objects.create(
        system=factories.system(None, slug="kept-bot"), url="https://bot.example/reply"
    )
    EndpointUsage.objects.create(endpoint=endpoint, day=datetime.date(2026, 11, 2), requests=4)
    try:
        apps = migrate(BEFORE, unapply=["endpoints"])
        old = apps.get_model("tournaments", "BotEndpoint").objects.get(pk=endpoint.pk)
        usage = apps.get_model("tournaments", "EndpointUsage").objects.get(endpoint=old)
        assert (old.url, usage.requests) == ("https://bot.example/reply", 4)
    finally:
        migrate(executor_leaf_nodes())


# Issue 23, finding 5: tokens stored before encryption are encrypted in place ---------------

PLAIN = [("endpoints", "0006_endpoint_token_left_out")]
ENCRYPTED = [("endpoints", "0007_encrypt_endpoint_tokens")]


def stored_tokens() -> dict[int, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, auth_token FROM tournaments_botendpoint")
        return dict(cursor.fetchall())


@pytest.mark.django_db(transaction=True)
def test_plain_text_tokens_are_encrypted_in_place_and_decrypted_on_the_way_back(settings):
    from cryptography.fernet import Fernet

    try:
        apps = migrate(PLAIN)
        System = apps.get_model("evalhub", "System")
        OldEndpoint = apps.get_model("endpoints", "BotEndpoint")
        with_token = OldEndpoint.objects.create(
            system=System.objects.create(slug="plain-bot", name="Plain bot"),
            url="https://bot.example/reply",
            auth_token="sk-plain-before",
        )
        without = OldEndpoint.objects.create(
            system=System.objects.create(slug="tokenless-bot", name="Tokenless bot"),
            url="https://bot.example/reply",
        )

        encrypted = migrate(ENCRYPTED)

        raw = stored_tokens()
        assert "sk-plain-before" not in raw[with_token.pk] and raw[without.pk] == ""
        first_key = Fernet(settings.EVALHUB_SECRET_KEYS[0])
        assert first_key.decrypt(raw[with_token.pk].encode()) == b"sk-plain-before"
        # The model as of that migration (today's may have columns added since).
        BotEndpoint = encrypted.get_model("endpoints", "BotEndpoint")
        assert BotEndpoint.objects.get(pk=with_token.pk).auth_token == "sk-plain-before"

        migrate(PLAIN)
        assert stored_tokens() == {with_token.pk: "sk-plain-before", without.pk: ""}
    finally:
        migrate(executor_leaf_nodes())
