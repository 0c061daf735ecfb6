"""Where EvalHub reaches a model: a system's bot endpoint, or a model endpoint of its own
(an automatic judge's: a model, not a chatbot, so no system), the requests charged to it
and the outcome of each call.

The client (endpoints/client.py) reads a BotEndpoint; the budget (endpoints/budget.py)
counts EndpointUsage; every request the client makes leaves an EndpointCall
(endpoints/calls.py). The tables keep the names they had under tournaments
(`db_table`), so moving the models here moved no data.
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import (
    MaxLengthValidator,
    MaxValueValidator,
    MinValueValidator,
    URLValidator,
)
from django.db import models, transaction
from django.db.models import ProtectedError, Q, RestrictedError
from django.urls import reverse
from django.utils import timezone

from evalhub import limits, permissions
from evalhub.encryption import EncryptedTextField
from evalhub.errors import UserInputError
from evalhub.fields import bounded_text
from evalhub.models import System


def default_bot_timeout():
    return settings.EVALHUB_BOT_TIMEOUT_SECONDS


def default_bot_concurrency():
    return settings.EVALHUB_BOT_MAX_CONCURRENCY


def default_bot_daily_budget():
    return settings.EVALHUB_BOT_DAILY_BUDGET


def default_bot_chat_share():
    return settings.EVALHUB_BOT_CHAT_SHARE_PERCENT


def validate_stop_sequences(value):
    if not isinstance(value, list) or not all(isinstance(s, str) and s for s in value):
        raise ValidationError("Stop sequences must be a list of non-empty strings.")
    if len(value) > BotEndpoint.MAX_STOP_SEQUENCES:
        raise ValidationError(f"At most {BotEndpoint.MAX_STOP_SEQUENCES} stop sequences.")
    if any(len(s) > BotEndpoint.MAX_STOP_CHARS for s in value):
        raise ValidationError(
            f"A stop sequence has at most {BotEndpoint.MAX_STOP_CHARS} characters."
        )


class BotEndpoint(models.Model):
    """Where EvalHub reaches a system live, in one of two protocols (endpoints/client.py):

    - EvalHub's: POST {"conversation_id", "turns", "speaker"} to `url`, expect {"text"};
    - OpenAI-compatible chat completions: POST {url}/chat/completions with `model`, the
      conversation as messages and the sampling settings; the reply is
      choices[0].message.content (vLLM, Ollama, llama.cpp's server, TGI, hosted APIs).

    An endpoint belongs to a system (`system`) or, when it reaches a model that is no chatbot
    (a judge's), to a user (`owner`) under its own `name`: exactly one of the two, which the
    database checks. Only the system's owner (or the endpoint's) and staff manage it
    (`is_managed_by`); the token is write-only
    (never shown again after saving). A tournament of another owner may call it only when
    `allow_other_owners` is on (`may_serve`); the client enforces `daily_budget` whoever calls,
    of which chat campaigns may spend `chat_share` percent (endpoints/budget.py).
    """

    class Protocol(models.TextChoices):
        EVALHUB = "evalhub", "EvalHub bot protocol"
        OPENAI = "openai", "OpenAI-compatible chat completions"

    MAX_STOP_SEQUENCES = 4  # the OpenAI API's own limit
    MAX_STOP_CHARS = 100

    system = models.OneToOneField(
        System, on_delete=models.CASCADE, related_name="endpoint", null=True, blank=True
    )
    # An endpoint of no system (a judge's model) is its owner's, under its own name; a
    # system's endpoint takes both from the system.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="model_endpoints",
        null=True,
        blank=True,
        help_text="The manager of an endpoint that belongs to no system (a judge's model).",
    )
    name = models.CharField(
        max_length=limits.NAME_CHARS,
        blank=True,
        help_text="What an endpoint of no system is called on its owner's pages.",
    )
    protocol = models.CharField(max_length=10, choices=Protocol.choices, default=Protocol.EVALHUB)
    url = models.URLField(
        "URL",
        max_length=500,
        validators=[URLValidator(schemes=["http", "https"])],
        help_text="EvalHub protocol: the URL to POST to. OpenAI-compatible: the base URL, "
        "e.g. https://host/v1 (EvalHub appends /chat/completions).",
    )
    model_name = models.CharField(
        max_length=200, blank=True, help_text="The `model` sent with OpenAI-compatible requests."
    )
    MAX_TOKEN_CHARS = 500

    # Encrypted in the database (evalhub/encryption.py); never in an export or a dump.
    auth_token = EncryptedTextField(
        "token or API key",
        blank=True,
        # Of the token as typed (the stored ciphertext is longer, in a text column).
        max_length=MAX_TOKEN_CHARS,
        validators=[MaxLengthValidator(MAX_TOKEN_CHARS)],
        left_out_flag="token_left_out",
        help_text="Sent as 'Authorization: Bearer <token>'. Never shown again after saving.",
    )
    token_left_out = models.BooleanField(
        default=False,
        editable=False,
        help_text="The endpoint had a token that an export left out (exports never carry "
        "secrets): its owner enters it again.",
    )
    system_prompt = bounded_text(
        limits.SYSTEM_PROMPT_CHARS,
        blank=True,
        help_text="OpenAI-compatible: sent first, as the system.",
    )
    temperature = models.FloatField(
        null=True, blank=True, validators=[MinValueValidator(0.0), MaxValueValidator(2.0)]
    )
    top_p = models.FloatField(
        "top p", null=True, blank=True, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)]
    )
    max_tokens = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1), MaxValueValidator(32768)]
    )
    stop = models.JSONField(
        "stop sequences", default=list, blank=True, validators=[validate_stop_sequences]
    )
    timeout_seconds = models.FloatField(
        default=default_bot_timeout,
        validators=[MinValueValidator(1.0), MaxValueValidator(600.0)],
        help_text="Total time allowed for one request, from connecting to the last byte.",
    )
    max_concurrency = models.PositiveSmallIntegerField(
        default=default_bot_concurrency,
        validators=[MinValueValidator(1), MaxValueValidator(64)],
        help_text="Requests in flight at once.",
    )
    daily_budget = models.PositiveIntegerField(
        default=default_bot_daily_budget,
        validators=[MinValueValidator(1), MaxValueValidator(1_000_000)],
        help_text="Requests per day (UTC) at most, retries included, from every tournament.",
    )
    chat_share = models.PositiveSmallIntegerField(
        "chat share (%)",
        default=default_bot_chat_share,
        validators=[MinValueValidator(0), MaxValueValidator(100)],
        help_text="The part of the daily budget chat campaigns may spend, in percent; "
        "tournaments and judges always keep the rest. 0: no chats.",
    )

    class StructuredOutput(models.TextChoices):
        AUTO = "auto", "Ask for it (switched off by itself if the endpoint refuses it)"
        OFF = "off", "Never ask: the prompt alone, asked again while a reply does not parse"

    structured_output = models.CharField(
        "structured output",
        max_length=4,
        choices=StructuredOutput.choices,
        default=StructuredOutput.AUTO,
        help_text="OpenAI-compatible: whether judges send the rubric's JSON schema as "
        "`response_format` (json_schema, strict). A 400 naming response_format sets it to "
        "off; set it back once the server supports it.",
    )
    allow_other_owners = models.BooleanField(
        "allow other owners' tournaments",
        default=False,
        help_text="Let tournaments of other researchers call this endpoint, within the budget.",
    )
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "tournaments_botendpoint"
        constraints = [
            models.CheckConstraint(
                condition=(Q(system__isnull=False) & Q(owner__isnull=True))
                | (Q(system__isnull=True) & Q(owner__isnull=False)),
                name="bot_endpoint_one_owner",
                violation_error_message="An endpoint belongs to a system or to a user, not both.",
            ),
            models.CheckConstraint(
                condition=Q(timeout_seconds__gte=1.0) & Q(timeout_seconds__lte=600.0),
                name="bot_endpoint_timeout_range",
            ),
            models.CheckConstraint(
                condition=Q(max_concurrency__gte=1) & Q(max_concurrency__lte=64),
                name="bot_endpoint_concurrency_range",
            ),
            models.CheckConstraint(
                condition=Q(daily_budget__gte=1) & Q(daily_budget__lte=1_000_000),
                name="bot_endpoint_budget_range",
            ),
            models.CheckConstraint(
                condition=Q(chat_share__gte=0) & Q(chat_share__lte=100),
                name="bot_endpoint_chat_share_range",
            ),
            models.CheckConstraint(
                condition=Q(temperature__isnull=True)
                | (Q(temperature__gte=0.0) & Q(temperature__lte=2.0)),
                name="bot_endpoint_temperature_range",
            ),
            models.CheckConstraint(
                condition=Q(top_p__isnull=True) | (Q(top_p__gte=0.0) & Q(top_p__lte=1.0)),
                name="bot_endpoint_top_p_range",
            ),
            models.CheckConstraint(
                condition=Q(max_tokens__isnull=True)
                | (Q(max_tokens__gte=1) & Q(max_tokens__lte=32768)),
                name="bot_endpoint_max_tokens_range",
            ),
        ]

    def __str__(self):
        return f"{self.label} at {self.url}"

    def get_absolute_url(self) -> str:
        """The page where its managers edit and test it."""
        if self.system_id:
            return reverse("system-endpoint", args=[self.system.slug])
        return reverse("model-endpoint", args=[self.pk])

    @property
    def label(self) -> str:
        """What its owner calls it: the system's name, or the endpoint's own."""
        return self.system.name if self.system_id else self.name

    @property
    def manager(self):
        """The user it belongs to: the system's owner (None for a system nobody owns), or
        the endpoint's own owner."""
        return self.system.owner if self.system_id else self.owner

    @property
    def manager_id(self):
        return self.system.owner_id if self.system_id else self.owner_id

    def clean(self):
        super().clean()
        if self.protocol == self.Protocol.OPENAI and not self.model_name:
            raise ValidationError(
                {"model_name": "An OpenAI-compatible endpoint needs the model name."}
            )

    def replace_token(self, token: str) -> None:
        """A token its manager typed (or "" to remove it): whatever an import left out is
        settled either way. Saved with the endpoint."""
        self.auth_token = token
        self.token_left_out = False

    def is_managed_by(self, user) -> bool:
        """The system's owner (or the endpoint's) and staff register, edit and remove it
        (and its token)."""
        if self.system_id:
            return self.system.is_managed_by(user)
        return permissions.is_managed_by(user, self)

    def is_visible_to(self, user) -> bool:
        """A model endpoint is private to its managers (404 to anyone else); a system's is
        seen by who sees the system (its managers alone change it)."""
        if self.system_id:
            return permissions.sees(user, self.system)
        return self.is_managed_by(user)

    def remove(self) -> None:
        """Delete the endpoint, or say what still needs it: a judge's verdicts name the model
        that gave them, so a judge protects its endpoint (and whatever else a higher layer
        protects, named the same way, without this app knowing them)."""
        try:
            with transaction.atomic():
                self.delete()
        except (ProtectedError, RestrictedError) as refused:
            kept_by = getattr(refused, "protected_objects", None) or refused.restricted_objects
            users = sorted({str(obj) for obj in kept_by})
            raise UserInputError(
                f"The endpoint is still used by {', '.join(users[:5])}"
                f"{' and others' if len(users) > 5 else ''}: remove those first."
            ) from None

    def may_serve(self, tournament) -> bool:
        """Whether `tournament` may call this endpoint: its owner's own tournaments (and, for
        a system nobody owns, tournaments nobody owns: the admin's), or any tournament once
        the owner allows other owners'."""
        return self.allow_other_owners or self.manager_id == tournament.owner_id


class EndpointUsage(models.Model):
    """Requests sent to an endpoint on one UTC day, counted against its daily budget:
    `requests` all of them, `chat_requests` those of chat campaigns (within the chat share)."""

    endpoint = models.ForeignKey(BotEndpoint, on_delete=models.CASCADE, related_name="usage")
    day = models.DateField()
    requests = models.PositiveIntegerField(default=0)
    chat_requests = models.PositiveIntegerField(default=0)

    class Meta:
        db_table = "tournaments_endpointusage"
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "day"], name="endpoint_usage_day")
        ]

    def __str__(self):
        return f"{self.endpoint.label} {self.day}: {self.requests} ({self.chat_requests} chat)"


class EndpointCall(models.Model):
    """The outcome of one request to an endpoint (a retry is another request), so that its
    owner can see why calls fail. `message` is EvalHub's own short account of the failure,
    never the bot's reply: an upstream body may carry anything, even another user's data or
    an internal service's page. `detail` is the longer account for staff, which may quote
    the start of that body: shown in the admin only, never on the owner's pages or the API.
    A bounded history: the maintenance beat keeps the newest EVALHUB_ENDPOINT_CALLS_KEPT
    per endpoint, none older than EVALHUB_ENDPOINT_CALLS_MAX_AGE_DAYS."""

    class Status(models.TextChoices):
        OK = "ok", "answered"
        HTTP_ERROR = "http_error", "HTTP error"
        TIMEOUT = "timeout", "timed out"
        UNREACHABLE = "unreachable", "unreachable"
        REFUSED = "refused", "address refused"
        INVALID_JSON = "invalid_json", "not JSON"
        INVALID_REPLY = "invalid_reply", "unusable reply"
        BUSY = "busy", "no concurrency slot"
        BUDGET_EXHAUSTED = "budget_exhausted", "daily budget spent"
        LIMITER_UNAVAILABLE = "limiter_unavailable", "limiter unavailable"
        CANCELLED = "cancelled", "cancelled by EvalHub"
        ERROR = "error", "other error"

    class Purpose(models.TextChoices):
        COLLECTION = "collection", "tournament collection"
        CHAT = "chat", "chat campaign"
        JUDGE = "judge", "automatic judge"
        ARENA = "arena", "arena battle"
        TEST = "test", "connection test"
        OTHER = "other", "other"

    MESSAGE_CHARS = 200
    DETAIL_CHARS = 500

    endpoint = models.ForeignKey(BotEndpoint, on_delete=models.CASCADE, related_name="calls")
    at = models.DateTimeField(default=timezone.now)
    purpose = models.CharField(max_length=12, choices=Purpose.choices, default=Purpose.OTHER)
    status = models.CharField(max_length=20, choices=Status.choices)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField()
    streamed = models.BooleanField(default=False)
    # Streamed calls: when the first text arrived; any call: the tokens the server reported.
    first_token_ms = models.PositiveIntegerField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    error_class = models.CharField(max_length=40, blank=True)
    message = models.CharField(max_length=MESSAGE_CHARS, blank=True)
    detail = models.CharField(
        max_length=DETAIL_CHARS,
        blank=True,
        help_text="Staff only: EvalHub's full account, which may quote the upstream body.",
    )

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["endpoint", "-at"], name="endpoint_call_recent")]

    def __str__(self):
        return f"{self.endpoint_id} {self.at:%Y-%m-%d %H:%M:%S} {self.status}"
