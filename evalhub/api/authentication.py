"""The API's token authentication: django-rest-knox's (the token is looked up by its first
characters and compared by SHA-512 digest; an expired one is deleted and refused), noting
when each token was last used so that its owner can tell a forgotten one from a live one."""

from datetime import timedelta

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from knox.auth import TokenAuthentication as KnoxTokenAuthentication

# Last use to the minute: a token used for every request writes at most once a minute.
LAST_USED_PRECISION = timedelta(minutes=1)


class TokenAuthentication(KnoxTokenAuthentication):
    def validate_user(self, auth_token):
        user, token = super().validate_user(auth_token)
        now = timezone.now()
        if token.last_used is None or now - token.last_used >= LAST_USED_PRECISION:
            type(token).objects.filter(pk=token.pk).update(last_used=now)
            token.last_used = now
        return user, token


class TokenScheme(OpenApiAuthenticationExtension):
    """How the OpenAPI schema (and Swagger UI's "Authorize") describes these tokens."""

    target_class = TokenAuthentication
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": 'An API token after "Token ": `Authorization: Token evh_…`. Make '
            "one on your account page, with `POST /api/tokens/`, or with `POST /api/token/` "
            "and your username and password.",
        }
