"""Prolific's hook: `POST /api/crowd/prolific/hooks/`, where Prolific sends each
`submission.status.change` of the workspace (subscribed at launch:
annotation/crowd/prolific.py).

Nobody signs in here: the request is Prolific's when its X-Prolific-Request-Signature is the
HMAC-SHA256 of its X-Prolific-Request-Timestamp and raw body under the workspace's hook secret
(compared in constant time), and that timestamp is within EVALHUB_PROLIFIC_HOOK_TOLERANCE
seconds. Anything else is refused with 403 in the one error shape, before the body is read
as JSON, and changes nothing. Requests are counted per address (EVALHUB_PROLIFIC_HOOKS_PER_MINUTE)
before the signature is checked, so a flood of forgeries is slowed too. No session, so no CSRF
token: the signature is the proof of origin.

An accepted event goes through the same code as the periodic sync, so an approval or a return
is applied once whether the hook, the sync, or both bring it; the answer says what this
request changed.
"""

import json
import time

from django.core.exceptions import PermissionDenied
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from evalhub.api.serializers import InputErrorsSerializer
from evalhub.api.throttles import ScopedRateThrottle
from evalhub.errors import UserInputError
from evalhub.permissions import Anyone, by_method

from ..campaigns import finish_if_complete
from ..crowd import get_provider
from ..crowd.prolific import HookRefused, verify_hook
from .crowd import CrowdSyncReportSerializer

SIGNATURE = "HTTP_X_PROLIFIC_REQUEST_SIGNATURE"
TIMESTAMP = "HTTP_X_PROLIFIC_REQUEST_TIMESTAMP"


class ProlificEventSerializer(serializers.Serializer):
    """Prolific's `submission.status.change` body (other event types are acknowledged and
    left alone)."""

    resource_id = serializers.CharField(max_length=64, help_text="The submission (SESSION_ID).")
    event_type = serializers.CharField(max_length=100)
    participant_id = serializers.CharField(max_length=64, required=False, default="")
    status = serializers.CharField(max_length=40, required=False, default="")


class ProlificHooks(APIView):
    # The signature, checked in `post`, is the authentication: no session, no token.
    authentication_classes = ()
    permission_classes = [by_method(POST=Anyone)]
    throttle_classes = [ScopedRateThrottle]
    throttle_scopes = {"post": "prolific_hooks"}  # evalhub/api/throttles.py

    @extend_schema(
        request=ProlificEventSerializer,
        responses={200: CrowdSyncReportSerializer, 400: InputErrorsSerializer},
        examples=[
            OpenApiExample(
                "An approval",
                value={
                    "resource_id": "60a7e8f4c1d2b3a4f5e6d7c8",
                    "event_type": "submission.status.change",
                    "participant_id": "5f9e8d7c6b5a4f3e2d1c0b9a",
                    "status": "APPROVED",
                },
                request_only=True,
            ),
            OpenApiExample(
                "Applied",
                value={
                    "submitted": 0,
                    "approved": 1,
                    "rejected": 0,
                    "returned": 0,
                    "expired": 0,
                    "unmatched": [],
                },
                response_only=True,
                status_codes=["200"],
            ),
        ],
    )
    def post(self, request):
        body = request.body
        try:
            verify_hook(
                body,
                request.META.get(SIGNATURE, ""),
                request.META.get(TIMESTAMP, ""),
                now=time.time(),
            )
        except HookRefused as refused:
            raise PermissionDenied(str(refused)) from refused
        try:
            event = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            raise UserInputError("The body is not JSON.") from None
        if not isinstance(event, dict):
            raise UserInputError("The body is not a JSON object.")
        valid = ProlificEventSerializer(data=event)
        valid.is_valid(raise_exception=True)
        campaign, report = get_provider("prolific").receive_hook(valid.validated_data)
        if campaign is not None:
            # A submission the hook decided may have completed the campaign, as after a sync.
            finish_if_complete(campaign)
        return Response(CrowdSyncReportSerializer(report).data)
