"""Automatic judges: a registered model answering a task kind's questions by a rubric.

A `Judge` is a model behind an OpenAI-compatible endpoint of its own (an
endpoints.BotEndpoint that belongs to no system: a judge is no chatbot, so it never appears
among the systems), under a name; a
`Rubric` is the versioned prompt for one task kind, frozen once a run used it (editing
makes version n + 1, as partner sets do: judging/rubric_versions.py); a `JudgeRun` judges
a campaign's task items in the background (judging/tasks.py) and stores one
`AutomaticJudgment` per item, whose payload has exactly the shape a human Judgment of the
kind has, produced by the kind's own parse_payload. Automatic judgments live in their own
table so that no human analysis can count them by accident.

A run targets either a campaign (its task items) or an arena (its voted battles, judged
pairwise on both sides' whole conversations: judging/battles.py); an arena run's judgments
refer to the battle instead of an item, and a battle that cannot be judged (imported
without its conversations) is recorded as skipped with the reason, never sent.
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.urls import reverse

from annotation.models import Campaign, Item
from arenas.models import Arena, Battle
from endpoints.models import BotEndpoint
from evalhub import limits, permissions
from evalhub.declared import range_constraint, range_validators
from evalhub.fields import bounded_text
from evalhub.slugs import validate_slug

from .rubrics import RUBRIC_KIND_CHOICES
from .run_settings import JudgeRunSettings

RUBRIC_VERSION_MAX = 100_000


class JudgeQuerySet(models.QuerySet):
    def managed_by(self, user):
        """Owners see and manage their judges; staff every one."""
        return permissions.managed_by(self, user)


class Judge(models.Model):
    """A model that judges items: its own OpenAI-compatible endpoint under a slug."""

    slug = models.SlugField(max_length=80, unique=True, validators=[validate_slug])
    name = models.CharField(max_length=limits.NAME_CHARS)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="judges"
    )
    # RESTRICT: the verdicts name the model that gave them, so the endpoint is not removed
    # under its judge; but a user deleted with their judges takes the judges' endpoints too.
    # Deleting the judge deletes its endpoint (judging/signals.py).
    endpoint = models.OneToOneField(
        BotEndpoint,
        on_delete=models.RESTRICT,
        related_name="judge",
        limit_choices_to={"protocol": BotEndpoint.Protocol.OPENAI, "system__isnull": True},
        help_text="The judge's own OpenAI-compatible chat completions endpoint.",
    )
    created = models.DateTimeField(auto_now_add=True)

    objects = JudgeQuerySet.as_manager()

    class Meta:
        ordering = ["slug"]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("judging:judge-detail", args=[self.slug])

    def clean(self):
        super().clean()
        if not self.endpoint_id:
            return
        if self.endpoint.protocol != BotEndpoint.Protocol.OPENAI:
            raise ValidationError(
                {"endpoint": "A judge needs an OpenAI-compatible chat completions endpoint."}
            )
        if self.endpoint.system_id:
            raise ValidationError(
                {"endpoint": "A judge has an endpoint of its own, not a system's."}
            )

    def is_managed_by(self, user) -> bool:
        """Owners alone (and staff) manage their judges and start runs with them."""
        return permissions.is_managed_by(user, self)

    def is_visible_to(self, user) -> bool:
        return self.is_managed_by(user)


class Rubric(models.Model):
    """The prompt a judge gets for one task kind; `instructions` is the template
    (judging/rubrics/). Versions of one (task_kind, name) are kept side by side: a run
    refers to the version it used, which never changes again."""

    task_kind = models.CharField(max_length=30, choices=RUBRIC_KIND_CHOICES)
    name = models.SlugField(max_length=80, validators=[validate_slug])
    version = models.PositiveIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(RUBRIC_VERSION_MAX)]
    )
    instructions = bounded_text(limits.INSTRUCTIONS_CHARS)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="rubrics",
        help_text="Who wrote this version; empty for the rubrics EvalHub ships.",
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task_kind", "name", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["task_kind", "name", "version"], name="rubric_version"),
            models.CheckConstraint(
                condition=Q(version__gte=1) & Q(version__lte=RUBRIC_VERSION_MAX),
                name="rubric_version_range",
            ),
        ]

    def __str__(self):
        return f"{self.task_kind}/{self.name} v{self.version}"

    def is_managed_by(self, user) -> bool:
        """Staff revise any rubric; a researcher the ones they wrote. Anyone signed in may
        make a new rubric, or a new version from any rubric under a name of their own."""
        return permissions.is_managed_by(user, self)


class JudgeRun(models.Model):
    """One judge answering one campaign's task items, or one arena's voted battles, with one
    rubric version."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        PAUSED = "paused", "Paused"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="runs")
    rubric = models.ForeignKey(Rubric, on_delete=models.PROTECT, related_name="runs")
    campaign = models.ForeignKey(
        Campaign, null=True, blank=True, on_delete=models.CASCADE, related_name="judge_runs"
    )
    arena = models.ForeignKey(
        Arena,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="judge_runs",
        help_text="Set instead of the campaign for a run over an arena's voted battles.",
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    # Ranges come from JudgeRunSettings (judging/run_settings.py): one source. The daily
    # budget is the endpoint's (endpoints/budget.py), shared with tournaments.
    concurrency = models.PositiveSmallIntegerField(
        default=2, validators=range_validators(JudgeRunSettings, "concurrency")
    )
    max_attempts = models.PositiveSmallIntegerField(
        default=3, validators=range_validators(JudgeRunSettings, "max_attempts")
    )
    items_total = models.PositiveIntegerField(default=0)
    items_done = models.PositiveIntegerField(default=0)
    items_failed = models.PositiveIntegerField(default=0)
    # Battles that cannot be judged (no conversation text): recorded with the reason, no request.
    items_skipped = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    created = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    # Which worker runs it: claiming a run increments `lease` (a fencing token), and only
    # the worker holding the current lease writes; `heartbeat` shows it is alive, so a run
    # whose worker died is claimed again (judging/tasks.py).
    lease = models.PositiveIntegerField(default=0)
    heartbeat = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        constraints = [
            *(
                range_constraint(JudgeRunSettings, name, prefix="judge_run")
                for name in JudgeRunSettings.STORED
            ),
            models.CheckConstraint(
                condition=Q(campaign__isnull=False, arena__isnull=True)
                | Q(campaign__isnull=True, arena__isnull=False),
                name="judge_run_one_target",
                violation_error_message="Choose a campaign or an arena to judge (one of them).",
            ),
        ]

    def __str__(self):
        return f"{self.judge} on {self.target} ({self.rubric})"

    def get_absolute_url(self):
        return reverse("judging:run-detail", args=[self.pk])

    def is_managed_by(self, user) -> bool:
        return self.judge.is_managed_by(user)

    @property
    def target(self):
        """What the run judges: its campaign or its arena."""
        return self.arena if self.arena_id else self.campaign

    @property
    def target_name(self) -> str:
        return f"the arena {self.arena.name}" if self.arena_id else self.campaign.title

    @property
    def items_finished(self) -> int:
        return self.items_done + self.items_failed + self.items_skipped

    @property
    def percent(self) -> int:
        if not self.items_total:
            return 100 if self.status == self.Status.DONE else 0
        return min(100, (100 * self.items_finished) // self.items_total)


class AutomaticJudgment(models.Model):
    """A judge's answer to one item, stored as a machine annotator's: flagged automatic by
    its table, never in annotation.Judgment. `payload` is what the kind's parse_payload
    made of the reply (the shape of a human payload), empty when it failed; `raw_text`
    keeps the last reply as the model wrote it."""

    class Status(models.TextChoices):
        OK = "ok", "OK"
        FAILED = "failed", "Failed"
        SKIPPED = "skipped", "Skipped"  # an arena battle with nothing to judge; `error` says why

    automatic = True

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="judgments")
    item = models.ForeignKey(
        Item,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="automatic_judgments",
    )
    battle = models.ForeignKey(
        Battle,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="automatic_judgments",
        help_text="The arena battle judged (an arena run), instead of an item.",
    )

    class OutputPath(models.TextChoices):
        STRUCTURED = "structured", "Structured output (the rubric's JSON schema)"
        PROMPT = "prompt", "The prompt alone, asked again while a reply did not parse"

    status = models.CharField(max_length=10, choices=Status.choices)
    # How the judge was asked (judging/answering.py); "" for a skipped battle (no request).
    output_path = models.CharField(max_length=10, choices=OutputPath.choices, blank=True)
    parse_failures = models.PositiveSmallIntegerField(
        default=0, help_text="Replies that did not parse or were in the wrong shape."
    )
    payload = models.JSONField(default=dict, blank=True)
    raw_text = models.TextField(blank=True)
    error = models.TextField(blank=True, help_text="Why the last attempt failed, if it did.")
    attempts = models.PositiveSmallIntegerField(default=1)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "item__position", "battle_id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "item"], name="automatic_judgment_once"),
            models.UniqueConstraint(
                fields=["run", "battle"], name="automatic_judgment_battle_once"
            ),
            models.CheckConstraint(
                condition=Q(item__isnull=False, battle__isnull=True)
                | Q(item__isnull=True, battle__isnull=False),
                name="automatic_judgment_one_unit",
            ),
        ]

    def __str__(self):
        unit = self.item_id if self.item_id else f"battle {self.battle_id}"
        return f"{self.run_id}/{unit}: {self.status}"
