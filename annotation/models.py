"""Campaigns, their items and batches, the workers who judge them and the judgments.

The unit of work is a Batch (a HIT): an ordered group of items one worker does in one
sitting. Each batch has `redundancy` Assignment rows created with it ("open slots"); a
worker is handed one open slot atomically (see allocation.py). Because every slot goes
to a different worker and every item sits in exactly one batch, every item ends with
exactly `redundancy` judgments from distinct workers. When an assignment expires, it is
kept for the record and a fresh open slot replaces it.
"""

import secrets
import uuid
from collections.abc import Callable
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Exists, OuterRef, Q
from django.urls import reverse
from django.utils import timezone

from evalhub import limits
from evalhub.declared import DeclaredInvalid, range_constraint, range_validators
from evalhub.fields import bounded_text
from evalhub.models import Conversation, Prompt, Response, System
from evalhub.slugs import validate_slug

from .campaign_settings import CampaignSettings
from .kinds import KIND_CHOICES
from .provider_settings import provider_config


def completion_code() -> str:
    return secrets.token_hex(4).upper()


class Study(models.Model):
    """A published study imported as finished campaigns (`campaigns`): one per task kind,
    and for ABC-Eval one per behaviour task, each judged by workers of provider "imported".
    An analysis of the study reads its campaigns by kind like any live campaign's."""

    class Source(models.TextChoices):
        ABC_EVAL = "abc-eval", "ABC-Eval (Finch et al., 2023)"

    slug = models.SlugField(max_length=80, unique=True, validators=[validate_slug])
    name = models.CharField(max_length=200)
    source = models.CharField(max_length=20, choices=Source.choices)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "studies"

    def __str__(self):
        return self.name


class Campaign(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        LIVE = "live", "Live"
        PAUSED = "paused", "Paused"
        FINISHED = "finished", "Finished"

    class Provider(models.TextChoices):
        LOCAL = "local", "Shareable link (logged-in users or external participant ids)"
        PROLIFIC = "prolific", "Prolific"
        MTURK = "mturk", "Amazon Mechanical Turk"

    slug = models.SlugField(max_length=80, unique=True, validators=[validate_slug])
    title = models.CharField(max_length=limits.NAME_CHARS)
    task_kind = models.CharField(max_length=30, choices=KIND_CHOICES)
    task_config = models.JSONField(default=dict, blank=True)
    instructions = bounded_text(limits.INSTRUCTIONS_CHARS, blank=True)
    # Ranges come from CampaignSettings (annotation/campaign_settings.py): one source.
    redundancy = models.PositiveSmallIntegerField(
        default=3,
        validators=range_validators(CampaignSettings, "redundancy"),
        help_text="Judgments wanted per item.",
    )
    batch_size = models.PositiveSmallIntegerField(
        default=10, validators=range_validators(CampaignSettings, "batch_size")
    )
    reward_per_batch = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        default=Decimal("0"),
        validators=range_validators(CampaignSettings, "reward_per_batch"),
    )
    budget = models.DecimalField(
        max_digits=10,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("10000000"))],
        help_text="What the campaign may spend in all (0 to 10,000,000); empty: no budget.",
    )
    max_batches_per_worker = models.PositiveSmallIntegerField(
        default=3, validators=range_validators(CampaignSettings, "max_batches_per_worker")
    )
    time_limit_minutes = models.PositiveIntegerField(
        default=60,
        validators=range_validators(CampaignSettings, "time_limit_minutes"),
        help_text="An assignment not submitted in this time expires.",
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    provider = models.CharField(max_length=10, choices=Provider.choices, default=Provider.LOCAL)
    provider_config = models.JSONField(default=dict, blank=True)
    completion_redirect_url = models.URLField(
        blank=True, help_text="Where to send a participant after the batch; {code} is replaced."
    )
    requires_training = models.BooleanField(default=False)
    training_threshold = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=range_validators(CampaignSettings, "training_threshold"),
        help_text="Qualify with fewer mistaken turns than this; empty: the task kind's default.",
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    study = models.ForeignKey(
        Study,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="campaigns",
        help_text="The imported study this campaign holds a part of; empty for live campaigns.",
    )
    created = models.DateTimeField(auto_now_add=True)
    launched_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The platform side (annotation/crowd/): which environment, and the platform's id for
    # the whole campaign (an MTurk HIT type id, a Prolific study id).
    platform_sandbox = models.BooleanField(
        default=True, help_text="MTurk: use the sandbox (no money moves)."
    )
    platform_ref = models.CharField(max_length=200, blank=True)

    # Pairing (issue 27): which slot a worker gets next, and the stopping rule
    # (annotation/pairing.py) --------------------------------------------------------------
    class Allocation(models.TextChoices):
        IN_ORDER = "in_order", "In order: the first open batch"
        ADAPTIVE = (
            "adaptive",
            (
                "Adaptive (A/B and comparative): mostly the batches whose pairs of systems "
                "narrow the ranking most"
            ),
        )

    allocation = models.CharField(
        max_length=10, choices=Allocation.choices, default=Allocation.IN_ORDER
    )
    separation_level = models.FloatField(
        default=0.95,
        validators=[MinValueValidator(0.5), MaxValueValidator(0.999)],
        help_text="The ranking question is answered when every pair of systems adjacent in "
        "the ranking is separated at this level (0.5 to 0.999).",
    )
    pause_when_answered = models.BooleanField(
        default=False,
        help_text="Pause the campaign once its ranking question is answered.",
    )
    # ---------------------------------------------------------------------------------------
    # Off by default: anyone can invent ids for `?worker=`, so a campaign that takes them
    # trusts whoever holds its link (the start link's new-identity limits still apply).
    allow_worker_param = models.BooleanField(
        default=False,
        help_text="Let anyone start with ?worker=<any id> on the start link (a shared link "
        "for a trusted group). Off: participants arrive through the crowd platform, an "
        "invitation link or their account.",
    )
    # The worker pages' language (docs/translating.md); researcher pages stay English.
    language = models.CharField(
        max_length=8,
        choices=settings.LANGUAGES,
        default="en",
        help_text="The language of the pages workers see (task, training, completion). "
        "The instructions, items and title are shown as written.",
    )
    follow_browser = models.BooleanField(
        default=False,
        help_text="Show the worker pages in the browser's language instead, when it is one "
        "of the languages above.",
    )

    class Meta:
        ordering = ["-created"]
        constraints = [
            *(
                range_constraint(CampaignSettings, name, prefix="campaign")
                for name in CampaignSettings.STORED
            ),
            models.CheckConstraint(
                condition=Q(separation_level__gte=0.5, separation_level__lte=0.999),
                name="campaign_separation_level_range",
            ),
        ]

    def __str__(self):
        return self.title

    def get_absolute_url(self):
        return reverse("annotation:manage-campaign", args=[self.slug])

    def clean(self):
        super().clean()
        try:
            provider_config(self.provider, self.provider_config)
        except DeclaredInvalid as invalid:
            raise ValidationError(
                {
                    "provider_config": [
                        f"{key}: {message}" if key else message
                        for key, message in invalid.errors.items()
                    ]
                }
            ) from None

    def start_url(self):
        return reverse("annotation:start", args=[self.slug])

    @property
    def kind(self):
        from .kinds import get_kind

        return get_kind(self.task_kind)

    @property
    def is_live(self) -> bool:
        return self.status == self.Status.LIVE

    def is_public(self, now=None) -> bool:
        """Anybody may see it listed: `private_q` (below) does not select it."""
        return not Campaign.objects.filter(pk=self.pk).filter(private_q(now)).exists()


class Batch(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="batches")
    position = models.PositiveIntegerField()
    platform_ref = models.CharField(
        max_length=200, blank=True, help_text="The platform's id for this batch (an MTurk HIT id)."
    )

    class Meta:
        ordering = ["campaign", "position"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "position"], name="batch_position")
        ]

    def __str__(self):
        return f"{self.campaign.slug} batch {self.position}"


class Item(models.Model):
    """What one judgment is about. `content` is everything the page shows (never the gold
    answer); the foreign keys say which catalog objects it came from, for analysis."""

    class Role(models.TextChoices):
        TASK = "task", "Task item"
        GOLD = "gold", "Gold / attention check"
        TRAINING = "training", "Training"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField()
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.TASK)
    batch = models.ForeignKey(
        Batch, null=True, blank=True, on_delete=models.SET_NULL, related_name="items"
    )
    order_in_batch = models.PositiveSmallIntegerField(default=0)
    content = models.JSONField()
    group_key = models.CharField(
        max_length=200,
        blank=True,
        db_index=True,
        help_text="Items sharing a key never go to the same worker (e.g. one conversation's segments).",
    )
    prompt = models.ForeignKey(Prompt, null=True, blank=True, on_delete=models.SET_NULL)
    response_a = models.ForeignKey(
        Response, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    response_b = models.ForeignKey(
        Response, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    conversation = models.ForeignKey(
        Conversation, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    conversation_b = models.ForeignKey(
        Conversation, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    segment_length = models.PositiveSmallIntegerField(null=True, blank=True)
    shown_responses = models.ManyToManyField(
        Response,
        blank=True,
        related_name="+",
        help_text="Every response a k-way ranking shows (a and b hold only two).",
    )
    shown_conversations = models.ManyToManyField(
        Conversation,
        blank=True,
        related_name="+",
        help_text="Every conversation a k-way ranking of conversations shows.",
    )
    gold = models.JSONField(
        null=True,
        blank=True,
        help_text="Gold answer and explanations; never sent before submission.",
    )
    auto_payload = models.JSONField(
        null=True,
        blank=True,
        help_text="A judgment recorded without showing the item (e.g. identical responses tie).",
    )

    class Meta:
        ordering = ["campaign", "position"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "position"], name="item_position")
        ]
        indexes = [
            models.Index(fields=["batch", "order_in_batch"]),
            # Allocation finds the batches holding a group the worker has met.
            models.Index(fields=["campaign", "group_key"], name="item_campaign_group"),
        ]

    def __str__(self):
        return f"{self.campaign.slug} item {self.position}"


# Workers whose answers come from a known model, not a person (the demo's simulated crowd):
# results pages say how many of their judgments are simulated.
SIMULATED_WORKER_PREFIX = "simulated-"


class Worker(models.Model):
    """One person as a crowd provider knows them; never addressed by a sequential id."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    # Workers of a published study brought in by import_spotthebot come from no provider.
    PROVIDERS = [*Campaign.Provider.choices, ("imported", "Imported from a published study")]

    provider = models.CharField(max_length=10, choices=PROVIDERS)
    external_id = models.CharField(max_length=200)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    blocked = models.BooleanField(default=False)
    blocked_reason = bounded_text(limits.REASON_CHARS, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    last_seen = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["provider", "external_id"], name="worker_identity")
        ]

    def __str__(self):
        return f"{self.provider}:{self.external_id}"


class Qualification(models.Model):
    """A worker's standing on one training-and-screening key, e.g. `abc_eval:empathy`."""

    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="qualifications")
    key = models.CharField(max_length=60)
    passed = models.BooleanField(default=False)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_mistakes = models.PositiveSmallIntegerField(null=True, blank=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["worker", "key"], name="one_qualification")]

    def __str__(self):
        return f"{self.worker} {self.key} {'passed' if self.passed else 'not passed'}"


class Assignment(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", "Open (no worker yet)"
        STARTED = "started", "Started"
        SUBMITTED = "submitted", "Submitted"
        EXPIRED = "expired", "Expired"
        RETURNED = "returned", "Returned"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"

    # Statuses that hold a slot: the batch counts them towards its redundancy.
    HOLDING = (Status.STARTED, Status.SUBMITTED, Status.APPROVED, Status.REJECTED)
    DONE = (Status.SUBMITTED, Status.APPROVED, Status.REJECTED)
    # Slots still waiting for their judgments: a campaign with none left is complete.
    PENDING = (Status.OPEN, Status.STARTED)

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="assignments")
    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="assignments")
    worker = models.ForeignKey(
        Worker, null=True, blank=True, on_delete=models.PROTECT, related_name="assignments"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    started_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    completion_code = models.CharField(max_length=16, blank=True)
    provider_ref = models.CharField(
        max_length=200, blank=True, help_text="The provider's id, e.g. an MTurk assignment id."
    )

    class Meta:
        ordering = ["campaign", "batch__position"]
        constraints = [
            models.UniqueConstraint(
                fields=["batch", "worker"],
                condition=Q(worker__isnull=False),
                name="one_assignment_per_worker_and_batch",
            )
        ]
        indexes = [
            models.Index(fields=["campaign", "status"]),
            models.Index(fields=["campaign", "status", "expires_at"]),
            models.Index(fields=["worker", "campaign", "status"]),
            # Allocation walks a campaign's open slots in batch order and takes the first
            # free one: read in index order, it stops there instead of sorting them all.
            models.Index(
                fields=["campaign", "batch", "id"],
                condition=Q(status="open"),
                name="assignment_open_slots",
            ),
        ]

    def __str__(self):
        return f"{self.batch} for {self.worker or 'nobody'} ({self.status})"

    def get_absolute_url(self):
        return reverse("annotation:assignment", args=[self.public_id])


class Judgment(models.Model):
    """One worker's validated answer on one item. (assignment, item) is unique, which makes
    a double-clicked or replayed submit store exactly one judgment."""

    # No index of their own for assignment and campaign: the unique (assignment, item)
    # constraint and the (campaign, worker) index lead with them, and every judgment
    # stored updates each index of the table.
    assignment = models.ForeignKey(
        Assignment, on_delete=models.CASCADE, related_name="judgments", db_index=False
    )
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="judgments")
    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="judgments")
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="judgments", db_index=False
    )
    payload = models.JSONField()
    started_at = models.DateTimeField()
    submitted_at = models.DateTimeField(auto_now_add=True)
    client_duration_ms = models.PositiveIntegerField(null=True, blank=True)
    gold_correct = models.BooleanField(null=True, blank=True)
    gold_mistakes = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["campaign", "submitted_at"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "item"], name="one_judgment_per_item")
        ]
        indexes = [models.Index(fields=["campaign", "worker"])]

    def __str__(self):
        return f"{self.worker} on {self.item}"

    @property
    def seconds(self) -> float:
        if self.client_duration_ms is not None:
            return self.client_duration_ms / 1000
        return (self.submitted_at - self.started_at).total_seconds()


class TrainingAnswer(models.Model):
    """A worker's answer on a training item; feedback is shown right after it is stored."""

    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="training_answers")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="training_answers")
    attempt = models.PositiveSmallIntegerField(default=1)
    payload = models.JSONField()
    mistakes = models.PositiveSmallIntegerField()
    feedback = models.JSONField(default=list)
    submitted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["worker", "item", "attempt"], name="one_training_answer"
            )
        ]

    def __str__(self):
        return f"{self.worker} training on {self.item} (attempt {self.attempt})"


class CrowdAction(models.Model):
    """One call to a crowd platform that moves people or money, kept for the record.

    `idempotency_key` is unique: a call whose key already succeeded is never sent again
    (a retried launch or bonus never pays twice), and a call left `pending` (the process
    died while the platform was answering) is refused until someone checks the platform.
    """

    class State(models.TextChoices):
        PENDING = "pending", "Sent, answer not recorded"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="crowd_actions")
    provider = models.CharField(max_length=10, choices=Campaign.Provider.choices)
    action = models.CharField(max_length=40)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        help_text="Who asked for it; empty for the periodic sync.",
    )
    assignment = models.ForeignKey(
        "Assignment", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    worker = models.ForeignKey(
        Worker, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    amount = models.DecimalField(
        max_digits=10,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="Money this call spends, fees included, in the platform's currency.",
    )
    idempotency_key = models.CharField(max_length=200, unique=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    request = models.JSONField(default=dict, help_text="What was asked (no credentials).")
    response = models.JSONField(null=True, blank=True, help_text="What the platform answered.")
    error = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        indexes = [models.Index(fields=["campaign", "action"])]

    def __str__(self):
        return f"{self.provider} {self.action} ({self.state})"


def invitation_token() -> str:
    return secrets.token_urlsafe(24)


class Invitation(models.Model):
    """A single-use start link: the first browser to open it becomes its worker, and only
    that worker, in that browser session, may come back through it."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="invitations")
    token = models.CharField(max_length=64, unique=True, default=invitation_token, editable=False)
    created = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    worker = models.OneToOneField(
        Worker, null=True, blank=True, on_delete=models.SET_NULL, related_name="invitation"
    )
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["pk"]

    def __str__(self):
        return f"invitation {self.pk} to {self.campaign.slug}"

    def get_absolute_url(self):
        return f"{self.campaign.start_url()}?invite={self.token}"


class LaunchRequest(models.Model):
    """A researcher's request to launch a campaign that pays crowdworkers, and staff's
    decision (annotation/campaigns.py: request_launch, decide_launch). The request names
    the platform and pay it was made for: an approval holds only while they are unchanged."""

    class State(models.TextChoices):
        PENDING = "pending", "Waiting for staff"
        APPROVED = "approved", "Approved"
        DECLINED = "declined", "Declined"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="launch_requests")
    provider = models.CharField(max_length=10, choices=Campaign.Provider.choices)
    platform_sandbox = models.BooleanField()
    reward_per_batch = models.DecimalField(max_digits=8, decimal_places=2)
    places = models.PositiveIntegerField(help_text="Paid submissions: batches x redundancy.")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    requested_at = models.DateTimeField(auto_now_add=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    reason = bounded_text(
        limits.REASON_CHARS, blank=True, help_text="Why it was declined (shown to the owner)."
    )

    class Meta:
        ordering = ["-requested_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign"],
                condition=Q(state="pending"),
                name="one_pending_launch_request",
            ),
            models.CheckConstraint(
                condition=~Q(state="declined") | ~Q(reason=""),
                name="declined_launch_has_reason",
            ),
        ]

    def __str__(self):
        return f"launch of {self.campaign.slug} on {self.provider} ({self.state})"


# Which campaigns are private (annotation/visibility.py applies it to lists and start pages).
# Each returns a Q over Campaign selecting the campaigns it makes private.
_PRIVATE_RULES: list[Callable[[], Q]] = []


def register_private_rule(rule: Callable[[], Q]) -> None:
    """Let a higher layer mark campaigns private (e.g. an unpublished tournament's)."""
    if rule not in _PRIVATE_RULES:
        _PRIVATE_RULES.append(rule)


def _hidden_systems(now):
    return System.objects.filter(
        Q(visibility=System.Visibility.PRIVATE) | Q(embargo_until__gt=now)
    ).values("pk")


# How an item shows a system's output.
_OUTPUT_PATHS = (
    "response_a__submission__system__in",
    "response_b__submission__system__in",
    "conversation__speakers__system__in",
    "conversation_b__speakers__system__in",
)


def _shows_hidden_output(now) -> Q:
    # The hidden systems are read first (the catalog's systems, a small table): with none,
    # nothing is private for this reason and no item is read. The EXISTS over every item of
    # a campaign cost 0.2 s at 50,000 items on each start link.
    hidden = list(_hidden_systems(now).values_list("pk", flat=True))
    if not hidden:
        return Q(pk__in=[])
    condition = Q()
    for path in _OUTPUT_PATHS:
        condition |= Q(Exists(Item.objects.filter(campaign=OuterRef("pk"), **{path: hidden})))
    return condition


def private_q(now=None) -> Q:
    """Campaigns that are private now, as a filter."""
    condition = _shows_hidden_output(now or timezone.now())
    for rule in _PRIVATE_RULES:
        condition |= rule()
    return condition
