"""REST API of a system's bot endpoint: `GET/PUT/PATCH/DELETE /api/systems/<slug>/endpoint/`,
and its calls' outcomes, newest first: `GET /api/systems/<slug>/endpoint/calls/` (paginated;
read-only, the same readers); `POST .../test/` tests its connection.

A model endpoint of no system (a judge's, registered with the judge: POST /api/judges/) is
`GET/PATCH /api/endpoints/<id>/`, `GET /api/endpoints/<id>/calls/` and
`POST /api/endpoints/<id>/test/`: for its owner and staff only, 404 to anyone else.

Only the system's owner and staff (System.is_managed_by) read or change it: others who
can see the system get 403, those who cannot see it 404, anonymous callers 401. The token
is write-only: `auth_token` is accepted (omitted keeps the stored one, "" removes it) and
never returned; `has_token` says whether one is stored, `token_left_out` whether an import
left out the one it had (exports never carry secrets). `chat_share` is the percent of
`daily_budget` chat campaigns may spend; `used_today` counts today's requests and
`chat_used_today` the chat campaigns' among them. `structured_output` ("auto" or "off") says
whether judges send the rubric's JSON schema as `response_format`. PUT registers or replaces, PATCH
changes some fields, DELETE removes.
"""

from django.db import transaction
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.response import Response

from evalhub.models import System
from evalhub.permissions import IsManager, by_method
from evalhub.quotas import check_quota

from ..budget import chat_used_today, used_today
from ..models import BotEndpoint, EndpointCall
from ..probe import probe, url_warning


class BotEndpointSerializer(serializers.ModelSerializer):
    system = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    auth_token = serializers.CharField(
        write_only=True, required=False, allow_blank=True, max_length=BotEndpoint.MAX_TOKEN_CHARS
    )
    has_token = serializers.SerializerMethodField()
    token_left_out = serializers.BooleanField(
        read_only=True,
        help_text="An import left out the token this endpoint had (exports never carry "
        'secrets): send `auth_token` again, or "" if it needs none.',
    )
    used_today = serializers.SerializerMethodField()
    chat_used_today = serializers.SerializerMethodField()
    url_warning = serializers.SerializerMethodField(
        help_text="Why this deployment will refuse to call the URL (a loopback or private "
        'address it does not allow), or "".'
    )
    stop = serializers.ListField(
        child=serializers.CharField(max_length=BotEndpoint.MAX_STOP_CHARS, trim_whitespace=False),
        max_length=BotEndpoint.MAX_STOP_SEQUENCES,
        required=False,
    )

    class Meta:
        model = BotEndpoint
        fields = [
            "system",
            "protocol",
            "url",
            "model_name",
            "auth_token",
            "has_token",
            "token_left_out",
            "system_prompt",
            "temperature",
            "top_p",
            "max_tokens",
            "stop",
            "timeout_seconds",
            "max_concurrency",
            "daily_budget",
            "chat_share",
            "structured_output",
            "allow_other_owners",
            "used_today",
            "chat_used_today",
            "url_warning",
            "updated",
        ]
        read_only_fields = ["system", "updated"]

    def get_has_token(self, endpoint) -> bool:
        return bool(endpoint.auth_token)

    def get_used_today(self, endpoint) -> int:
        return used_today(endpoint.pk)

    def get_chat_used_today(self, endpoint) -> int:
        return chat_used_today(endpoint.pk)

    def get_url_warning(self, endpoint) -> str:
        return url_warning(endpoint.url)

    def save(self, **kwargs):
        # A token sent (even "") replaces the stored one and settles one an import left out,
        # as BotEndpoint.replace_token does.
        if "auth_token" in self.validated_data:
            kwargs["token_left_out"] = False
        return super().save(**kwargs)

    def validate(self, data):
        current = self.instance or BotEndpoint()
        protocol = data.get("protocol", current.protocol)
        model_name = data.get("model_name", current.model_name)
        if protocol == BotEndpoint.Protocol.OPENAI and not model_name:
            raise serializers.ValidationError(
                {"model_name": "An OpenAI-compatible endpoint needs the model name."}
            )
        return data


class ModelEndpointSerializer(BotEndpointSerializer):
    """A model endpoint of no system (a judge's): OpenAI-compatible, named after what uses
    it; no system prompt, chat share or other owners (endpoints/forms.py ModelEndpointForm)."""

    protocol = serializers.CharField(read_only=True)
    model_name = serializers.CharField(max_length=200)
    system = None
    chat_used_today = None

    class Meta(BotEndpointSerializer.Meta):
        fields = [
            "id",
            "name",
            "protocol",
            "url",
            "model_name",
            "auth_token",
            "has_token",
            "token_left_out",
            "temperature",
            "top_p",
            "max_tokens",
            "stop",
            "timeout_seconds",
            "max_concurrency",
            "daily_budget",
            "structured_output",
            "used_today",
            "url_warning",
            "updated",
        ]
        read_only_fields = ["id", "name", "protocol", "updated"]

    def validate(self, data):
        return data

    def save(self, **kwargs):
        kwargs.setdefault("protocol", BotEndpoint.Protocol.OPENAI)
        return super().save(**kwargs)


ENDPOINT = {
    "system": "my-bot",
    "protocol": "openai",
    "url": "https://bots.example.org/v1/chat/completions",
    "model_name": "my-bot-7b",
    "has_token": True,
    "token_left_out": False,
    "system_prompt": "You are a friendly conversation partner.",
    "temperature": 0.7,
    "top_p": 1.0,
    "max_tokens": 128,
    "stop": ["\nUser:"],
    "timeout_seconds": 30,
    "max_concurrency": 2,
    "daily_budget": 500,
    "chat_share": 50,
    "structured_output": "auto",
    "allow_other_owners": False,
    "used_today": 37,
    "chat_used_today": 12,
    "updated": "2026-11-20T09:30:00Z",
}
ENDPOINT_IN = {
    "protocol": "openai",
    "url": ENDPOINT["url"],
    "model_name": "my-bot-7b",
    "auth_token": "sk-example-token",
    "temperature": 0.7,
    "max_tokens": 128,
    "daily_budget": 500,
}


def _out(name, value, code="200"):
    return OpenApiExample(name, value=value, response_only=True, status_codes=[code])


class ManagedSystemMixin:
    """The system named in the URL, for its managers only: 404 to who may not see it, 403 to
    who sees it but does not manage it (the view declares `IsManager`)."""

    def managed_system(self) -> System:
        system = get_object_or_404(System, slug=self.kwargs["slug"])
        self.check_object_permissions(self.request, system)
        return system

    def managed_endpoint(self) -> BotEndpoint:
        endpoint = BotEndpoint.objects.filter(system=self.managed_system()).first()
        if endpoint is None:
            raise Http404("The system has no bot endpoint.")
        return endpoint


@extend_schema_view(
    get=extend_schema(examples=[_out("Endpoint", ENDPOINT)]),
    put=extend_schema(
        examples=[
            OpenApiExample("OpenAI-compatible endpoint", value=ENDPOINT_IN, request_only=True),
            _out("Created", ENDPOINT, "201"),
            _out("Replaced", ENDPOINT),
        ]
    ),
    patch=extend_schema(
        examples=[
            OpenApiExample("Lower the budget", value={"daily_budget": 200}, request_only=True),
            _out("Changed", {**ENDPOINT, "daily_budget": 200}),
        ]
    ),
)
class BotEndpointView(ManagedSystemMixin, generics.GenericAPIView):
    serializer_class = BotEndpointSerializer
    throttle_scopes = {"put": "creations"}  # evalhub/api/throttles.py
    permission_classes = [
        by_method(GET=IsManager, PUT=IsManager, PATCH=IsManager, DELETE=IsManager)
    ]
    queryset = BotEndpoint.objects.none()

    def get_object(self) -> BotEndpoint:
        return self.managed_endpoint()

    def get(self, request, slug):
        return Response(self.get_serializer(self.get_object()).data)

    @extend_schema(responses={200: BotEndpointSerializer, 201: BotEndpointSerializer})
    def put(self, request, slug):
        system = self.managed_system()
        endpoint = BotEndpoint.objects.filter(system=system).first()
        serializer = self.get_serializer(endpoint, data=request.data)
        serializer.is_valid(raise_exception=True)
        if endpoint is None:
            check_quota(request.user, BotEndpoint)
        with transaction.atomic():
            saved = serializer.save(system=system)
        created = endpoint is None
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(self.get_serializer(saved).data, status=code)

    def patch(self, request, slug):
        serializer = self.get_serializer(self.get_object(), data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        with transaction.atomic():
            saved = serializer.save()
        return Response(self.get_serializer(saved).data)

    def delete(self, request, slug):
        self.get_object().remove()  # a UserInputError (400) when a judge still uses it
        return Response(status=status.HTTP_204_NO_CONTENT)


class EndpointCallSerializer(serializers.ModelSerializer):
    class Meta:
        model = EndpointCall
        fields = [
            "at",
            "purpose",
            "status",
            "http_status",
            "latency_ms",
            "streamed",
            "first_token_ms",
            "prompt_tokens",
            "completion_tokens",
            "error_class",
            "message",
        ]
        read_only_fields = fields


CALL = {
    "at": "2026-11-20T09:31:02Z",
    "purpose": "collection",
    "status": "http_error",
    "http_status": 429,
    "latency_ms": 84,
    "streamed": False,
    "first_token_ms": None,
    "prompt_tokens": None,
    "completion_tokens": None,
    "error_class": "BotHTTPError",
    "message": "answered HTTP 429 (Retry-After 3 s)",
}


@extend_schema_view(get=extend_schema(examples=[_out("Calls", {"count": 1, "results": [CALL]})]))
class EndpointCallList(ManagedSystemMixin, generics.ListAPIView):
    """The outcomes of the endpoint's latest calls (endpoints/calls.py), for the system's
    owner and staff only: the same readers as the endpoint itself."""

    serializer_class = EndpointCallSerializer
    permission_classes = [by_method(GET=IsManager)]
    queryset = EndpointCall.objects.none()

    def get_queryset(self):
        endpoint = self.managed_endpoint()
        return EndpointCall.objects.filter(endpoint=endpoint).order_by("-at", "-id")


class ProbeSerializer(serializers.Serializer):
    ok = serializers.BooleanField(help_text="The bot gave a usable answer.")
    latency_ms = serializers.IntegerField()
    status = serializers.ChoiceField(choices=EndpointCall.Status.choices)
    http_status = serializers.IntegerField(allow_null=True)
    reply = serializers.CharField(help_text="The start of the bot's answer.")
    message = serializers.CharField(help_text="Why it failed, in EvalHub's words.")


PROBE_FAILED = {
    "ok": False,
    "latency_ms": 3,
    "status": "refused",
    "http_status": None,
    "reply": "",
    "message": "the endpoint's address is not allowed (a loopback address)",
}


@extend_schema_view(
    post=extend_schema(
        request=None,
        responses={200: ProbeSerializer},
        examples=[
            _out(
                "Answered",
                {
                    **PROBE_FAILED,
                    "ok": True,
                    "status": "ok",
                    "http_status": 200,
                    "reply": "Hello! Connection works.",
                    "message": "",
                    "latency_ms": 412,
                },
            ),
            _out("Failed", PROBE_FAILED),
        ],
    )
)
class EndpointProbe(ManagedSystemMixin, generics.GenericAPIView):
    """Test connection: one real request to the endpoint (on its daily budget, recorded
    among its calls with the purpose "test"): its latency, and the bot's answer or why it
    failed. 200 whatever the bot did; the body says."""

    serializer_class = ProbeSerializer
    permission_classes = [by_method(POST=IsManager)]
    throttle_scopes = {"post": "probes"}  # evalhub/api/throttles.py
    queryset = BotEndpoint.objects.none()

    def post(self, request, slug):
        return Response(probe(self.managed_endpoint()).as_dict())


MODEL_ENDPOINT = {
    "id": 42,
    "name": "Qwen 2.5 7B judge",
    "protocol": "openai",
    "url": "https://llm.example.org/v1",
    "model_name": "qwen2.5-7b-instruct",
    "has_token": True,
    "token_left_out": False,
    "temperature": 0.0,
    "top_p": None,
    "max_tokens": 256,
    "stop": [],
    "timeout_seconds": 60,
    "max_concurrency": 4,
    "daily_budget": 5000,
    "used_today": 125,
    "url_warning": "",
    "updated": "2026-11-20T09:30:00Z",
}


class ManagedModelEndpointMixin:
    """The model endpoint (of no system) named in the URL, for its managers only: 404 to
    anyone else (the view declares `IsManager`; the endpoint is private)."""

    def managed_endpoint(self) -> BotEndpoint:
        endpoint = get_object_or_404(
            BotEndpoint.objects.select_related("owner"), pk=self.kwargs["pk"], system__isnull=True
        )
        self.check_object_permissions(self.request, endpoint)
        return endpoint


@extend_schema_view(
    get=extend_schema(examples=[_out("Model endpoint", MODEL_ENDPOINT)]),
    patch=extend_schema(
        examples=[
            OpenApiExample(
                "A new key and budget",
                value={"auth_token": "sk-new-key", "daily_budget": 2000},
                request_only=True,
            ),
            _out("Changed", {**MODEL_ENDPOINT, "daily_budget": 2000}),
        ]
    ),
)
class ModelEndpointView(ManagedModelEndpointMixin, generics.GenericAPIView):
    """A model endpoint of no system: read and change it. It is registered with what uses
    it (a judge) and goes with it."""

    serializer_class = ModelEndpointSerializer
    permission_classes = [by_method(GET=IsManager, PATCH=IsManager)]
    queryset = BotEndpoint.objects.none()

    def get(self, request, pk):
        return Response(self.get_serializer(self.managed_endpoint()).data)

    def patch(self, request, pk):
        serializer = self.get_serializer(self.managed_endpoint(), data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        with transaction.atomic():
            saved = serializer.save()
        return Response(self.get_serializer(saved).data)


@extend_schema_view(get=extend_schema(examples=[_out("Calls", {"count": 1, "results": [CALL]})]))
class ModelEndpointCallList(ManagedModelEndpointMixin, generics.ListAPIView):
    """The outcomes of the model endpoint's latest calls, for its owner and staff only."""

    serializer_class = EndpointCallSerializer
    permission_classes = [by_method(GET=IsManager)]
    queryset = EndpointCall.objects.none()

    def get_queryset(self):
        endpoint = self.managed_endpoint()
        return EndpointCall.objects.filter(endpoint=endpoint).order_by("-at", "-id")


@extend_schema_view(
    post=extend_schema(
        request=None, responses={200: ProbeSerializer}, examples=[_out("Failed", PROBE_FAILED)]
    )
)
class ModelEndpointProbe(ManagedModelEndpointMixin, generics.GenericAPIView):
    """Test connection of a model endpoint, as for a system's (EndpointProbe)."""

    serializer_class = ProbeSerializer
    permission_classes = [by_method(POST=IsManager)]
    throttle_scopes = {"post": "probes"}  # evalhub/api/throttles.py
    queryset = BotEndpoint.objects.none()

    def post(self, request, pk):
        return Response(probe(self.managed_endpoint()).as_dict())
