"""Endpoints' tokens encrypted at rest (evalhub/encryption.py).

The column becomes text first (a Fernet token is longer than the secret it holds), the
plain-text tokens are encrypted in place with the first key of EVALHUB_SECRET_KEYS, and
only then does the field read them as encrypted (a change of Django's state alone: the
column stays text). Going back decrypts them again.
"""

import django.core.validators
from django.db import migrations, models

import evalhub.encryption

HELP = "Sent as 'Authorization: Bearer <token>'. Never shown again after saving."


def _rewrite(apps, change):
    BotEndpoint = apps.get_model("endpoints", "BotEndpoint")
    stored = BotEndpoint.objects.exclude(auth_token="").values_list("pk", "auth_token")
    for pk, token in stored.iterator():
        BotEndpoint.objects.filter(pk=pk).update(auth_token=change(token))


def encrypt_tokens(apps, schema_editor):
    _rewrite(apps, evalhub.encryption.encrypt)


def decrypt_tokens(apps, schema_editor):
    _rewrite(apps, evalhub.encryption.decrypt)


class Migration(migrations.Migration):
    dependencies = [("endpoints", "0006_endpoint_token_left_out")]

    operations = [
        migrations.AlterField(
            model_name="botendpoint",
            name="auth_token",
            field=models.TextField(
                blank=True,
                help_text=HELP,
                max_length=500,
                validators=[django.core.validators.MaxLengthValidator(500)],
                verbose_name="token or API key",
            ),
        ),
        migrations.RunPython(encrypt_tokens, decrypt_tokens),
        migrations.AlterField(
            model_name="botendpoint",
            name="auth_token",
            field=evalhub.encryption.EncryptedTextField(
                blank=True,
                help_text=HELP,
                left_out_flag="token_left_out",
                max_length=500,
                validators=[django.core.validators.MaxLengthValidator(500)],
                verbose_name="token or API key",
            ),
        ),
    ]
