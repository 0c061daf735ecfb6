"""Tournaments: competitions among systems that produce conversations and campaigns.

A Spot The Bot tournament collects (or imports) bot-bot conversations between the systems
of its pool, segments them, mixes in human-human controls and packs them into a campaign.
An A/B tournament compares a researcher's submission against chosen baselines on a prompt
set (ChatEval). Live collection follows a plan of PlannedDialogue rows, one per
conversation to collect, made by a schedule (tournaments/schedule.py).
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.urls import reverse

from annotation.models import Campaign
from evalhub import limits, permissions
from evalhub.declared import range_constraint, range_validators
from evalhub.fields import bounded_text
from evalhub.models import Conversation, PromptSet, Submission, System
from evalhub.slugs import validate_slug

from .tournament_settings import ABSettings, SpotTheBotSettings, settings_errors


def default_segment_lengths():
    return [2, 3, 5]


def default_features():
    return ["sensibleness", "specificity", "fluency"]


class PartnerSetQuerySet(models.QuerySet):
    def visible_to(self, user):
        """Partner sets all of whose systems `user` may see (a set has no owner: one naming
        a private system is its owner's, and staff's, to use)."""
        if permissions.is_staff(user):
            return self.all()
        hidden = System.objects.exclude(pk__in=System.objects.visible_to(user).values("pk"))
        return self.exclude(systems__in=hidden.values("pk"))


class PartnerSet(models.Model):
    """A named, versioned, fixed set of partner systems for bipartite-play, shared across
    tournaments so that results stay comparable (and nobody picks weak partners)."""

    slug = models.SlugField(max_length=80)
    version = models.PositiveIntegerField(default=1)
    name = models.CharField(max_length=limits.NAME_CHARS)
    description = bounded_text(limits.DESCRIPTION_CHARS, blank=True)
    systems = models.ManyToManyField(System, related_name="partner_sets")
    created = models.DateTimeField(auto_now_add=True)

    objects = PartnerSetQuerySet.as_manager()

    class Meta:
        ordering = ["slug", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["slug", "version"], name="partner_set_version")
        ]

    def __str__(self):
        return f"{self.name} v{self.version}"


def validate_segment_lengths(value):
    """The segment lengths as SpotTheBotSettings declares them (count and each length)."""
    problem = settings_errors("spot_the_bot", {"segment_lengths": value}).get("segment_lengths")
    if problem:
        raise ValidationError(problem)


class TournamentQuerySet(models.QuerySet):
    def visible_to(self, user):
        """Published tournaments, the user's own, and every one for staff."""
        return permissions.visible_to(self, user, public=Q(published=True))


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

    slug = models.SlugField(max_length=80, unique=True, validators=[validate_slug])
    name = models.CharField(max_length=limits.NAME_CHARS)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    description = bounded_text(limits.DESCRIPTION_CHARS, blank=True)
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

    # Spot The Bot. Ranges come from SpotTheBotSettings / ABSettings
    # (tournaments/tournament_settings.py): one source for the forms, the API and the database.
    segment_lengths = models.JSONField(
        default=default_segment_lengths, validators=[validate_segment_lengths]
    )
    conversations_per_pair = models.PositiveIntegerField(
        default=45, validators=range_validators(SpotTheBotSettings, "conversations_per_pair")
    )
    human_share = models.FloatField(
        default=0.1,
        validators=range_validators(SpotTheBotSettings, "human_share"),
        help_text="Share of human-human control segments among the items.",
    )
    features = models.JSONField(default=default_features)
    batch_size = models.PositiveSmallIntegerField(
        default=20, validators=range_validators(SpotTheBotSettings, "batch_size")
    )
    max_batches_per_worker = models.PositiveSmallIntegerField(
        default=3, validators=range_validators(SpotTheBotSettings, "max_batches_per_worker")
    )
    judgments_per_segment = models.PositiveSmallIntegerField(
        default=1, validators=range_validators(SpotTheBotSettings, "judgments_per_segment")
    )
    # Collection
    schedule = models.CharField(max_length=20, choices=Schedule.choices, default=Schedule.IMPORTED)
    partner_set = models.ForeignKey(
        PartnerSet, null=True, blank=True, on_delete=models.PROTECT, related_name="tournaments"
    )
    exchanges = models.PositiveSmallIntegerField(
        default=5,
        validators=range_validators(SpotTheBotSettings, "exchanges"),
        help_text="Exchanges to collect per conversation, after the seed exchange.",
    )
    seed = models.BigIntegerField(default=0)
    included_conversations = models.ManyToManyField(
        Conversation,
        blank=True,
        related_name="included_in",
        help_text="Imported bot-bot conversations judged besides the collected ones.",
    )
    show_seed = models.BooleanField(
        default=False,
        help_text="Show workers the seed exchange, marked as the opening given to both bots.",
    )

    # A/B (ChatEval)
    prompt_set = models.ForeignKey(
        PromptSet, null=True, blank=True, on_delete=models.PROTECT, related_name="tournaments"
    )
    submission = models.ForeignKey(
        Submission, null=True, blank=True, on_delete=models.PROTECT, related_name="tournaments"
    )
    baselines = models.ManyToManyField(System, related_name="baseline_in", blank=True)
    judgments_per_prompt = models.PositiveSmallIntegerField(
        default=3, validators=range_validators(ABSettings, "judgments_per_prompt")
    )
    prompts_per_batch = models.PositiveSmallIntegerField(
        default=10, validators=range_validators(ABSettings, "prompts_per_batch")
    )
    reward_per_judgment = models.DecimalField(
        max_digits=8,
        decimal_places=3,
        default=0,
        validators=range_validators(ABSettings, "reward_per_judgment"),
    )

    objects = TournamentQuerySet.as_manager()

    class Meta:
        ordering = ["-created"]
        constraints = [
            *(
                range_constraint(SpotTheBotSettings, name, prefix="tournament")
                for name in (
                    "conversations_per_pair",
                    "exchanges",
                    "human_share",
                    "batch_size",
                    "max_batches_per_worker",
                    "judgments_per_segment",
                )
            ),
            *(
                range_constraint(ABSettings, name, prefix="tournament")
                for name in ("judgments_per_prompt", "prompts_per_batch", "reward_per_judgment")
            ),
        ]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("tournaments:detail", args=[self.slug])

    def is_managed_by(self, user) -> bool:
        """Its owner and staff change it, launch it and see it before it is published."""
        return permissions.is_managed_by(user, self)

    def is_public(self) -> bool:
        return self.published

    def is_visible_to(self, user) -> bool:
        return permissions.may_see(user, self)


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
