"""The API tokens of DRF's `authtoken` app, which kept them in plain text, become hashed
knox tokens named "Token from before named tokens": a script using one keeps working until
it expires (EVALHUB_API_TOKEN_DAYS from now). The plain-text rows are then deleted. The
table is read with SQL, since `rest_framework.authtoken` is no longer installed; a database
that never had it has nothing to do. There is no way back: a digest cannot be undone.
"""

from datetime import timedelta

from django.conf import settings
from django.db import migrations
from django.utils import timezone
from knox.crypto import hash_token
from knox.settings import CONSTANTS

OLD_TABLE = "authtoken_token"
NAME = "Token from before named tokens"


def hash_old_tokens(apps, schema_editor):
    connection = schema_editor.connection
    if OLD_TABLE not in connection.introspection.table_names():
        return
    ApiToken = apps.get_model("evalhub", "ApiToken")
    table = schema_editor.quote_name(OLD_TABLE)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {schema_editor.quote_name('key')}, user_id FROM {table}")
        old = cursor.fetchall()
    expiry = timezone.now() + timedelta(days=settings.EVALHUB_API_TOKEN_DAYS)
    ApiToken.objects.bulk_create(
        ApiToken(
            digest=hash_token(key),
            token_key=key[: CONSTANTS.TOKEN_KEY_LENGTH],
            user_id=user_id,
            name=NAME,
            expiry=expiry,
        )
        for key, user_id in old
    )
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {table}")


class Migration(migrations.Migration):
    dependencies = [("evalhub", "0012_api_tokens")]

    operations = [migrations.RunPython(hash_old_tokens, migrations.RunPython.noop)]
