"""Stored secrets are encrypted at rest (evalhub/encryption.py): endpoints' tokens are
Fernet tokens in the database, the first of EVALHUB_SECRET_KEYS encrypts and every one
decrypts, `rotate_secrets` moves every secret to the first key, and a secret never leaves
through serialization (issue 23, finding 5)."""

import io
import json

import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command
from django.db import connection, models
from django.test.utils import isolate_apps

from endpoints.models import BotEndpoint
from evalhub.encryption import EncryptedTextField, SecretUnreadable
from tests import factories

pytestmark = pytest.mark.django_db

OLD_KEY = Fernet.generate_key().decode()
NEW_KEY = Fernet.generate_key().decode()
TOKEN = "sk-live-0123456789abcdef"


def endpoint_with_token(token=TOKEN, slug="secret-bot") -> BotEndpoint:
    return BotEndpoint.objects.create(
        system=factories.system(factories.user(), slug=slug),
        url="https://bot.example/reply",
        auth_token=token,
    )


def stored(endpoint) -> str:
    """The column as the database holds it."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT auth_token FROM tournaments_botendpoint WHERE id = %s", [endpoint.pk]
        )
        return cursor.fetchone()[0]


def test_a_token_is_stored_encrypted_with_the_first_key_and_read_back_plain(settings):
    settings.EVALHUB_SECRET_KEYS = [NEW_KEY, OLD_KEY]
    endpoint = endpoint_with_token()
    raw = stored(endpoint)
    assert TOKEN not in raw
    assert Fernet(NEW_KEY).decrypt(raw.encode()).decode() == TOKEN
    assert BotEndpoint.objects.get(pk=endpoint.pk).auth_token == TOKEN


def test_no_token_stays_empty_so_has_token_still_reads_false(settings):
    endpoint = endpoint_with_token(token="")
    assert stored(endpoint) == ""
    assert BotEndpoint.objects.get(pk=endpoint.pk).auth_token == ""


def test_a_token_under_an_older_key_is_read_while_that_key_is_listed(settings):
    settings.EVALHUB_SECRET_KEYS = [OLD_KEY]
    endpoint = endpoint_with_token()
    settings.EVALHUB_SECRET_KEYS = [NEW_KEY, OLD_KEY]
    assert BotEndpoint.objects.get(pk=endpoint.pk).auth_token == TOKEN
    settings.EVALHUB_SECRET_KEYS = [NEW_KEY]
    with pytest.raises(SecretUnreadable, match="rotate_secrets"):
        BotEndpoint.objects.get(pk=endpoint.pk)


def test_rotate_secrets_moves_every_secret_to_the_first_key(settings):
    settings.EVALHUB_SECRET_KEYS = [OLD_KEY]
    first, second = endpoint_with_token(), endpoint_with_token("sk-other", slug="other-bot")
    endpoint_with_token("", slug="no-token-bot")
    settings.EVALHUB_SECRET_KEYS = [NEW_KEY, OLD_KEY]
    out = io.StringIO()
    call_command("rotate_secrets", stdout=out)
    assert "2 stored secrets" in out.getvalue()
    settings.EVALHUB_SECRET_KEYS = [NEW_KEY]  # the old key dropped
    assert BotEndpoint.objects.get(pk=first.pk).auth_token == TOKEN
    assert BotEndpoint.objects.get(pk=second.pk).auth_token == "sk-other"
    assert Fernet(NEW_KEY).decrypt(stored(first).encode()).decode() == TOKEN


def test_rotate_secrets_changes_nothing_when_a_secret_is_unreadable(settings):
    settings.EVALHUB_SECRET_KEYS = [OLD_KEY]
    readable = endpoint_with_token()
    before = stored(readable)
    settings.EVALHUB_SECRET_KEYS = [Fernet.generate_key().decode()]
    lost = endpoint_with_token("sk-lost", slug="lost-bot")
    settings.EVALHUB_SECRET_KEYS = [NEW_KEY, OLD_KEY]  # the key of `lost` is gone
    with pytest.raises(CommandError, match=f"BotEndpoint {lost.pk}.*Nothing was changed"):
        call_command("rotate_secrets", stdout=io.StringIO())
    assert stored(readable) == before


def test_dumpdata_never_writes_a_secret(settings):
    endpoint = endpoint_with_token()
    out = io.StringIO()
    call_command("dumpdata", "endpoints.botendpoint", stdout=out)
    text = out.getvalue()
    assert TOKEN not in text and stored(endpoint) not in text
    (row,) = json.loads(text)
    assert row["fields"]["auth_token"] == ""


@isolate_apps("evalhub")
def test_an_encrypted_field_must_name_a_boolean_left_out_flag():
    class Broken(models.Model):  # noqa: DJ008 (a model for one check)
        secret = EncryptedTextField(blank=True, left_out_flag="missing")

        class Meta:
            app_label = "evalhub"

    class Sound(models.Model):  # noqa: DJ008
        secret = EncryptedTextField(blank=True, left_out_flag="secret_left_out")
        secret_left_out = models.BooleanField(default=False)

        class Meta:
            app_label = "evalhub"

    assert [e.id for e in Broken._meta.get_field("secret").check()] == ["evalhub.E101"]
    assert Sound._meta.get_field("secret").check() == []


def test_rotate_secrets_can_forget_secrets_whose_key_is_lost(settings):
    settings.EVALHUB_SECRET_KEYS = [Fernet.generate_key().decode()]
    lost = endpoint_with_token("sk-lost", slug="lost-bot")
    settings.EVALHUB_SECRET_KEYS = [OLD_KEY]
    kept = endpoint_with_token()
    out = io.StringIO()
    call_command("rotate_secrets", "--forget-unreadable", stdout=out)
    assert "1 unreadable secrets were blanked" in out.getvalue()
    forgotten = BotEndpoint.objects.get(pk=lost.pk)
    assert (forgotten.auth_token, forgotten.token_left_out) == ("", True)
    assert BotEndpoint.objects.get(pk=kept.pk).auth_token == TOKEN
