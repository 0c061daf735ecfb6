"""Webhook subscriptions, their deliveries and each delivery's attempts (the delivery log).

A `Subscription` is an owner's URL with the events it wants and the secret its messages
are signed with (Standard Webhooks: webhooks/delivery.py). Every event an owner's object
goes through (webhooks/events.py) becomes one `Delivery` per subscription that wants it:
the message as sent (its id and body never change between attempts, as the specification
asks), and one `Attempt` per request made, with what the subscriber answered.
"""

import uuid

from django.conf import settings
from django.core.validators import MaxLengthValidator, URLValidator
from django.db import models
from django.db.models import Q
from django.urls import reverse

from evalhub.encryption import EncryptedTextField


class EventType(models.TextChoices):
    """What an owner may subscribe to; the value is the message's `type`."""

    CAMPAIGN_LAUNCHED = "campaign.launched", "A campaign of mine was launched"
    CAMPAIGN_FINISHED = "campaign.finished", "A campaign of mine finished"
    CAMPAIGN_OVER_BUDGET = "campaign.over_budget", "A campaign of mine reached its budget"
    ANALYSIS_READY = "analysis.ready", "An analysis of mine is ready"
    LAUNCH_REQUEST_DECIDED = (
        "launch_request.decided",
        "Staff approved or declined a launch of my campaign",
    )
    JUDGE_RUN_FINISHED = "judge_run.finished", "A judge run of mine finished or failed"
    ARENA_LEADERBOARD_UPDATED = (
        "arena.leaderboard_updated",
        "The leaderboard of an arena of mine was computed again",
    )


# The message "Send a test event" sends; nobody subscribes to it, every subscription gets it.
TEST_EVENT = "webhook.test"


class Subscription(models.Model):
    """An owner's URL that receives the events it lists, signed with its secret. Only its
    owner sees it (pages and API): a stranger's id is answered 404."""

    URL_CHARS = 500
    DESCRIPTION_CHARS = 200

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhook_subscriptions"
    )
    # In URLs: an opaque id, not the sequential one.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    url = models.URLField(
        "URL",
        max_length=URL_CHARS,
        validators=[URLValidator(schemes=["http", "https"])],
        help_text="Where EvalHub POSTs the events (HTTPS in production).",
    )
    description = models.CharField(max_length=DESCRIPTION_CHARS, blank=True)
    events = models.JSONField(
        default=list, help_text="The event types (EventType values) this URL receives."
    )
    # Encrypted in the database (evalhub/encryption.py); shown once, when it is made.
    SECRET_CHARS = 100
    secret = EncryptedTextField(
        # Of the secret itself (the stored ciphertext is longer, in a text column).
        max_length=SECRET_CHARS,
        validators=[MaxLengthValidator(SECRET_CHARS)],
        left_out_flag="secret_left_out",
        help_text="The whsec_ secret the messages are signed with.",
    )
    secret_left_out = models.BooleanField(
        default=False,
        editable=False,
        help_text="The secret could not be kept (its key was lost): nothing is sent until "
        "the subscription is made again.",
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created", "-pk"]

    def __str__(self):
        return f"{self.owner} · {self.url}"

    def get_absolute_url(self):
        return reverse("webhooks:detail", args=[self.public_id])

    def wants(self, event: str) -> bool:
        return event in self.events

    @property
    def event_labels(self) -> list[str]:
        return [EventType(event).label for event in self.events if event in EventType.values]


class Delivery(models.Model):
    """One message for one subscription, sent until the subscriber answers 2xx or the
    attempts run out. `next_attempt_at` is when it is due; while an attempt is in flight
    it is pushed past that attempt's deadline, so a second copy of the task skips it and a
    worker that died leaves it due again (webhooks/tasks.py sweeps those)."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed"

    MESSAGE_ID_CHARS = 40

    subscription = models.ForeignKey(
        Subscription, on_delete=models.CASCADE, related_name="deliveries"
    )
    message_id = models.CharField(max_length=MESSAGE_ID_CHARS, unique=True)
    event = models.CharField(max_length=40)
    # The event's identity: the same event (a retried task that fires it again) is
    # delivered once per subscription. Empty for test events.
    event_key = models.CharField(max_length=200, blank=True)
    body = models.TextField(help_text="The JSON body, byte for byte as signed.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-pk"]
        indexes = [models.Index(fields=["status", "next_attempt_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["subscription", "event_key"],
                condition=~Q(event_key=""),
                name="webhook_event_once_per_subscription",
            ),
            models.CheckConstraint(
                condition=Q(attempts__lte=20), name="webhook_delivery_attempts_range"
            ),
        ]

    def __str__(self):
        return f"{self.event} → {self.subscription.url} ({self.status})"


class Attempt(models.Model):
    """One request of a delivery: what the subscriber answered, how fast, or EvalHub's own
    short account of why there was no answer (never the subscriber's body)."""

    class Outcome(models.TextChoices):
        OK = "ok", "accepted"
        HTTP_ERROR = "http_error", "HTTP error"
        TIMEOUT = "timeout", "timed out"
        UNREACHABLE = "unreachable", "unreachable"
        REFUSED = "refused", "address refused"
        ERROR = "error", "other error"

    ERROR_CHARS = 300

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="tries")
    number = models.PositiveSmallIntegerField()
    at = models.DateTimeField()
    outcome = models.CharField(max_length=12, choices=Outcome.choices)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField()
    error = models.CharField(max_length=ERROR_CHARS, blank=True)

    class Meta:
        ordering = ["delivery", "number"]
        constraints = [
            models.UniqueConstraint(fields=["delivery", "number"], name="webhook_attempt_number"),
            models.CheckConstraint(
                condition=Q(number__gte=1) & Q(number__lte=20), name="webhook_attempt_range"
            ),
        ]

    def __str__(self):
        return f"{self.delivery_id} #{self.number}: {self.outcome}"
