"""The caller's own webhook subscriptions:

- `GET /api/webhooks/` lists them, `POST /api/webhooks/` (`{"url", "events",
  "description"}`) makes one and answers its `secret` this once (201);
- `GET /api/webhooks/<id>/` reads one, `DELETE` removes it (204);
- `GET /api/webhooks/<id>/deliveries/` is its delivery log, newest first, each message
  with its attempts (paginated);
- `POST /api/webhooks/<id>/test/` sends a `webhook.test` message (202, the delivery), at
  most EVALHUB_WEBHOOK_TESTS_PER_MINUTE a minute (429 with Retry-After).

Signed-in users only (401 otherwise); another account's subscription is "not found" (404),
staff's included: a subscription is its owner's alone.
"""

from django.db.models import Prefetch
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.response import Response

from evalhub.permissions import SignedIn, by_method

from ..models import Attempt, Delivery, EventType, Subscription
from ..services import create_subscription, owned, send_test


class SubscriptionSerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(source="public_id", read_only=True)
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=EventType.choices),
        allow_empty=False,
        max_length=len(EventType.values),
    )

    class Meta:
        model = Subscription
        fields = ["id", "url", "description", "events", "secret_left_out", "created"]
        read_only_fields = ["secret_left_out", "created"]


class NewSubscriptionSerializer(SubscriptionSerializer):
    secret = serializers.CharField(read_only=True, help_text="Shown this once, never again.")

    class Meta(SubscriptionSerializer.Meta):
        fields = [*SubscriptionSerializer.Meta.fields, "secret"]


class AttemptSerializer(serializers.ModelSerializer):
    class Meta:
        model = Attempt
        fields = ["number", "at", "outcome", "status_code", "latency_ms", "error"]
        read_only_fields = fields


class DeliverySerializer(serializers.ModelSerializer):
    attempts = AttemptSerializer(source="tries", many=True, read_only=True)

    class Meta:
        model = Delivery
        fields = [
            "message_id",
            "event",
            "status",
            "created",
            "next_attempt_at",
            "finished_at",
            "attempts",
        ]
        read_only_fields = fields


SUBSCRIPTION = {
    "id": "6f1c2a4e-8d7b-4a53-9b1e-2c3d4e5f6a7b",
    "url": "https://lab.example.org/evalhub-events",
    "description": "the lab's pipeline",
    "events": ["campaign.finished", "analysis.ready"],
    "secret_left_out": False,
    "created": "2026-11-27T10:30:00Z",
}
DELIVERY = {
    "message_id": "msg_0f3c9a1b2c3d4e5f60718293a4b5c6d7",
    "event": "campaign.finished",
    "status": "delivered",
    "created": "2026-11-27T11:00:00Z",
    "next_attempt_at": None,
    "finished_at": "2026-11-27T11:00:11Z",
    "attempts": [
        {
            "number": 1,
            "at": "2026-11-27T11:00:00Z",
            "outcome": "http_error",
            "status_code": 500,
            "latency_ms": 38,
            "error": "answered HTTP 500",
        },
        {
            "number": 2,
            "at": "2026-11-27T11:00:11Z",
            "outcome": "ok",
            "status_code": 200,
            "latency_ms": 41,
            "error": "",
        },
    ],
}


def _out(name, value, code="200"):
    return OpenApiExample(name, value=value, response_only=True, status_codes=[code])


@extend_schema_view(
    get=extend_schema(examples=[_out("Subscriptions", {"count": 1, "results": [SUBSCRIPTION]})]),
    post=extend_schema(
        request=SubscriptionSerializer,
        responses={201: NewSubscriptionSerializer},
        examples=[
            OpenApiExample(
                "Subscribe",
                value={k: SUBSCRIPTION[k] for k in ("url", "description", "events")},
                request_only=True,
            ),
            _out(
                "Made", {**SUBSCRIPTION, "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, "201"
            ),
        ],
    ),
)
class SubscriptionList(generics.ListCreateAPIView):
    serializer_class = SubscriptionSerializer
    permission_classes = [by_method(GET=SignedIn, POST=SignedIn)]
    throttle_scopes = {"post": "creations"}  # evalhub/api/throttles.py
    queryset = Subscription.objects.none()

    def get_queryset(self):
        return owned(self.request.user)

    def create(self, request, *args, **kwargs):
        asked = self.get_serializer(data=request.data)
        asked.is_valid(raise_exception=True)
        data = asked.validated_data
        made, secret = create_subscription(
            request.user, data["url"], data["events"], data.get("description", "")
        )
        made.secret = secret
        body = NewSubscriptionSerializer(made, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED)


class OwnedSubscriptionMixin:
    def owned_subscription(self) -> Subscription:
        return get_object_or_404(owned(self.request.user), public_id=self.kwargs["public_id"])


@extend_schema_view(get=extend_schema(examples=[_out("Subscription", SUBSCRIPTION)]))
class SubscriptionDetail(OwnedSubscriptionMixin, generics.GenericAPIView):
    serializer_class = SubscriptionSerializer
    permission_classes = [by_method(GET=SignedIn, DELETE=SignedIn)]
    queryset = Subscription.objects.none()

    def get(self, request, public_id):
        return Response(self.get_serializer(self.owned_subscription()).data)

    @extend_schema(responses={204: None})
    def delete(self, request, public_id):
        self.owned_subscription().delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema_view(get=extend_schema(examples=[_out("Log", {"count": 1, "results": [DELIVERY]})]))
class DeliveryList(OwnedSubscriptionMixin, generics.ListAPIView):
    """The subscription's messages, newest first, each with its attempts."""

    serializer_class = DeliverySerializer
    permission_classes = [by_method(GET=SignedIn)]
    queryset = Delivery.objects.none()

    def get_queryset(self):
        return self.owned_subscription().deliveries.prefetch_related(
            Prefetch("tries", queryset=Attempt.objects.order_by("number"))
        )


@extend_schema_view(
    post=extend_schema(
        request=None,
        responses={202: DeliverySerializer},
        examples=[_out("Queued", {**DELIVERY, "event": "webhook.test"}, "202")],
    )
)
class SubscriptionTest(OwnedSubscriptionMixin, generics.GenericAPIView):
    """Send a test event: a `webhook.test` message, signed like every other."""

    serializer_class = DeliverySerializer
    permission_classes = [by_method(POST=SignedIn)]
    queryset = Delivery.objects.none()

    def post(self, request, public_id):
        made = send_test(request.user, self.owned_subscription())
        made.refresh_from_db()
        return Response(self.get_serializer(made).data, status=status.HTTP_202_ACCEPTED)
