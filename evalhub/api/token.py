"""`POST /api/token/`: a new API token for a username and password, behind django-axes.

The answer is `{"token", "name", "expiry"}`: the token is shown this once (only its digest
is stored, evalhub/api_tokens.py). It replaces the account's token of the same name
("API login" unless the body names one), so a script that logs in at every run holds one
token, not one more per run. Axes refuses to authenticate a locked-out client and
marks the request; that answers 429 and why, not the 400 of a wrong password.
"""

from axes.helpers import get_lockout_message
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from ..api_tokens import create_token
from ..models import ApiToken
from ..permissions import Anyone, by_method
from .exceptions import error_body
from .parsers import PARSERS

DEFAULT_NAME = "API login"


class CredentialsSerializer(AuthTokenSerializer):
    """DRF's username and password check (through every authentication backend, axes's
    first), and an optional name for the token."""

    name = serializers.CharField(
        required=False, max_length=ApiToken.NAME_CHARS, default=DEFAULT_NAME, write_only=True
    )


class NewTokenSerializer(serializers.Serializer):
    """The answer's shape, for the schema."""

    token = serializers.CharField(help_text="The token: shown this once, never again.")
    name = serializers.CharField()
    expiry = serializers.DateTimeField()


class ObtainAuthTokenWithLockout(APIView):
    # The API's parsers: JSON nested too deep is a 400, as everywhere else.
    parser_classes = PARSERS
    permission_classes = [by_method(POST=Anyone)]
    throttle_scopes = {"post": "token"}  # evalhub/api/throttles.py
    serializer_class = CredentialsSerializer

    @extend_schema(
        request=CredentialsSerializer,
        responses={200: NewTokenSerializer},
        examples=[
            OpenApiExample(
                "Credentials",
                value={"username": "alice", "password": "correct horse battery"},
                request_only=True,
            ),
            OpenApiExample(
                "Token",
                value={
                    "token": "evh_3f5a0c9e1b7d24c68e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2",
                    "name": DEFAULT_NAME,
                    "expiry": "2027-02-25T09:30:00Z",
                },
                response_only=True,
            ),
        ],
    )
    def post(self, request, *args, **kwargs):
        credentials = CredentialsSerializer(data=request.data, context={"request": request})
        try:
            credentials.is_valid(raise_exception=True)
        except ValidationError:
            if getattr(request, "axes_locked_out", False):
                return Response(error_body(get_lockout_message()), status=429)
            raise
        made, token = create_token(
            credentials.validated_data["user"], credentials.validated_data["name"], replace=True
        )
        return Response({"token": token, "name": made.name, "expiry": made.expiry})


obtain_auth_token = ObtainAuthTokenWithLockout.as_view()
