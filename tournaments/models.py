"""Tournaments: competitions among systems that produce conversations and campaigns.

A Spot The Bot tournament collects (or imports) bot-bot conversations between the systems
of its pool, segments them, mixes in human-human controls and packs them into a campaign.
An A/B tournament compares a researcher's submission against chosen baselines on a prompt
set (ChatEval). Live collection follows a plan of PlannedDialogue rows, one per
conversation to collect, made by a schedule (tournaments/schedule.py).
"""

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.urls import reverse

from annotation.models import Campaign
from evalhub.models import Conversation, PromptSet, Submission, System


def default_segment_lengths():
    return [2, 3, 5]


def default_features():
    return ["sensibleness", "specificity", "fluency"]


class PartnerSet(models.Model):
    """A named, versioned, fixed set of partner systems for bipartite-play, shared across
    tournaments so that results stay comparable (and nobody picks weak partners)."""

    slug = models.SlugField(max_length=80)
    version = models.PositiveIntegerField(default=1)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    systems = models.ManyToManyField(System, related_name="partner_sets")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["slug", "version"], name="partner_set_version")
        ]

    def __str__(self):
        return f"{self.name} v{self.version}"


class BotEndpoint(models.Model):
    """Where EvalHub reaches a system live: POST {"conversation_id", "turns", "speaker"}
    and expect {"text": "..."}."""

    system = models.OneToOneField(System, on_delete=models.CASCADE, related_name="endpoint")
    url = models.URLField()
    auth_token = models.CharField(
        max_length=200, blank=True, help_text="Sent as 'Authorization: Bearer <token>'."
    )
    timeout_seconds = models.FloatField(default=15.0, validators=[MinValueValidator(0.1)])
    max_concurrency = models.PositiveSmallIntegerField(
        default=2, validators=[MinValueValidator(1)], help_text="Requests in flight at once."
    )

    def __str__(self):
        return f"{self.system.slug} at {self.url}"


class TournamentQuerySet(models.QuerySet):
    def visible_to(self, user):
        """Published tournaments, the user's own, and every one for staff."""
        if user.is_authenticated and user.is_staff:
            return self.all()
        if user.is_authenticated:
            return self.filter(Q(published=True) | Q(owner=user))
        return self.filter(published=True)


class Tournament(models.Model):
    class Kind(models.TextChoices):
        SPOT_THE_BOT = "spot_the_bot", "Spot The Bot"
        AB = "ab", "A/B experiment (ChatEval)"

    class Schedule(models.TextChoices):
        IMPORTED = "imported", "Conversations imported, not collected"
        SELF_PLAY = "self-play", "Self-play"
        ALL_PLAY_ALL = "all-play-all", "All-play-all"
        BIPARTITE_PLAY = "bipartite-play", "Bipartite-play"

    class Status(models.TextChoices):
        PLANNING = "planning", "Planning"
        COLLECTING = "collecting", "Collecting conversations"
        READY = "ready", "Ready for annotation"
        ANNOTATING = "annotating", "Being annotated"
        FINISHED = "finished", "Finished"

    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    description = models.TextField(blank=True)
    domain = models.CharField(max_length=100, blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    systems = models.ManyToManyField(System, related_name="tournaments", blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PLANNING)
    published = models.BooleanField(default=False, help_text="Results are public once published.")
    campaign = models.OneToOneField(
        Campaign, null=True, blank=True, on_delete=models.SET_NULL, related_name="tournament"
    )
    created = models.DateTimeField(auto_now_add=True)

    # Spot The Bot
    segment_lengths = models.JSONField(default=default_segment_lengths)
    conversations_per_pair = models.PositiveIntegerField(default=45)
    human_share = models.FloatField(
        default=0.1,
        validators=[MinValueValidator(0.0), MaxValueValidator(0.9)],
        help_text="Share of human-human control segments among the items.",
    )
    features = models.JSONField(default=default_features)
    batch_size = models.PositiveSmallIntegerField(default=20)
    max_batches_per_worker = models.PositiveSmallIntegerField(default=3)
    judgments_per_segment = models.PositiveSmallIntegerField(default=1)
    # Collection
    schedule = models.CharField(max_length=20, choices=Schedule.choices, default=Schedule.IMPORTED)
    partner_set = models.ForeignKey(
        PartnerSet, null=True, blank=True, on_delete=models.PROTECT, related_name="tournaments"
    )
    exchanges = models.PositiveSmallIntegerField(
        default=5, help_text="Exchanges to collect per conversation, after the seed exchange."
    )
    seed = models.BigIntegerField(default=0)

    # A/B (ChatEval)
    prompt_set = models.ForeignKey(
        PromptSet, null=True, blank=True, on_delete=models.PROTECT, related_name="tournaments"
    )
    submission = models.ForeignKey(
        Submission, null=True, blank=True, on_delete=models.PROTECT, related_name="tournaments"
    )
    baselines = models.ManyToManyField(System, related_name="baseline_in", blank=True)
    judgments_per_prompt = models.PositiveSmallIntegerField(default=3)
    prompts_per_batch = models.PositiveSmallIntegerField(default=10)
    reward_per_judgment = models.DecimalField(max_digits=8, decimal_places=3, default=0)

    objects = TournamentQuerySet.as_manager()

    class Meta:
        ordering = ["-created"]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("tournaments:detail", args=[self.slug])

    def is_managed_by(self, user) -> bool:
        """Its owner and staff change it, launch it and see it before it is published."""
        if not user.is_authenticated:
            return False
        return user.is_staff or (self.owner_id is not None and self.owner_id == user.pk)

    def is_visible_to(self, user) -> bool:
        return self.published or self.is_managed_by(user)


class PlannedDialogue(models.Model):
    """One conversation of a collection plan; stored as a Conversation only when complete."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        COMPLETE = "complete", "Complete"
        FAILED = "failed", "Failed"

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="plan")
    key = models.CharField(max_length=300)
    speakers = models.JSONField(help_text="System slugs; the first speaks first.")
    index = models.PositiveIntegerField()
    seed = models.BigIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    conversation = models.OneToOneField(
        Conversation, null=True, blank=True, on_delete=models.SET_NULL, related_name="planned"
    )
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["tournament", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["tournament", "key"], name="planned_dialogue_key")
        ]
        indexes = [models.Index(fields=["tournament", "status"])]

    def __str__(self):
        return f"{self.tournament.slug}: {self.key} ({self.status})"
