"""`POST /api/token/`: DRF's token for a username and password, behind django-axes.

Axes refuses to authenticate a locked-out address and marks the request; DRF would answer
that with the 400 of a wrong password, so this view says 429 and why instead.
"""

from axes.helpers import get_lockout_message
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from ..permissions import Anyone, by_method
from .exceptions import error_body
from .parsers import PARSERS


@extend_schema_view(
    post=extend_schema(
        examples=[
            OpenApiExample(
                "Credentials",
                value={"username": "alice", "password": "correct horse battery"},
                request_only=True,
            ),
            OpenApiExample(
                "Token",
                value={"token": "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"},
                response_only=True,
            ),
        ]
    )
)
class ObtainAuthTokenWithLockout(ObtainAuthToken):
    # ObtainAuthToken names DRF's parsers itself; these are the API's (JSON nested too deep: 400).
    parser_classes = PARSERS
    permission_classes = [by_method(POST=Anyone)]
    # DRF's ObtainAuthToken turns throttles off; the API's apply, with a scope of its own.
    throttle_classes = APIView.throttle_classes
    throttle_scopes = {"post": "token"}  # evalhub/api/throttles.py

    def post(self, request, *args, **kwargs):
        try:
            return super().post(request, *args, **kwargs)
        except ValidationError:
            if getattr(request, "axes_locked_out", False):
                return Response(error_body(get_lockout_message()), status=429)
            raise


obtain_auth_token = ObtainAuthTokenWithLockout.as_view()
