"""Analysis runs: immutable records of one analysis of one tournament, campaign or study.

A run names what it analysed (a tournament; a campaign; or an imported study, whose
campaigns are analysed together), how (``parameters``), exactly which
data (``inputs_digest``, the sha256 of the canonical input rows) and with which code
(``versions``). The same inputs with the same parameters give the same run: the pair of
digests is unique per subject, and ``analysis.runs.tasks.analyze_tournament`` looks it up
before creating a new one. A run with a ``judge_run`` compares that automatic judge run with its
campaign's human judgments (``analysis.reports.human_vs_automatic``): its subject is the
campaign, never the tournament, so that no leaderboard or human result page reads it; a
judge run over an arena (``JudgeRun.arena``) compares it with the arena's votes, and its
run has no campaign, tournament or study: the judge run is its subject.
Once a run has succeeded its report is never changed again, but for the two parts that
follow it: its plots (``analysis.runs.drawing``) and, for a Spot The Bot run, its stability
section (``analysis.runs.stability``, its state in ``stability_state``), each written once
by its own task. A failed run keeps its message and can be run again (a retry reuses the
row); so can a failed stability part.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.models import Campaign, Study
from judging.models import JudgeRun
from tournaments.models import Tournament


class RunIsFinal(Exception):
    """A succeeded run is a record: it is not edited, a new analysis makes a new run."""


class AnalysisRunQuerySet(models.QuerySet):
    def succeeded(self):
        return self.filter(status=AnalysisRun.Status.SUCCEEDED)

    def latest_succeeded(self):
        return self.succeeded().order_by("-finished_at", "-pk").first()


class StabilityState(models.TextChoices):
    """How far a run's stability part is (``analysis.runs.stability``)."""

    WITH_REPORT = "", "With the report"
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class AnalysisRun(models.Model):
    StabilityState = StabilityState

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    tournament = models.ForeignKey(
        Tournament,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="analysis_runs",
    )
    campaign = models.ForeignKey(
        Campaign,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="analysis_runs",
    )
    study = models.ForeignKey(
        Study,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="analysis_runs",
        help_text="An imported study analysed as a whole (tournament and campaign empty).",
    )
    judge_run = models.ForeignKey(
        JudgeRun,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="analysis_runs",
        help_text="Set for a comparison of this automatic judge run with the campaign's "
        "human judgments, or with an arena's votes (human versus automatic); empty for every "
        "human analysis.",
    )
    parameters = models.JSONField(
        help_text="Every parameter, defaults filled in (analysis.parameters.DEFAULT_PARAMETERS)."
    )
    parameters_digest = models.CharField(max_length=64)
    inputs_digest = models.CharField(max_length=64, help_text="sha256 of the canonical input rows.")
    versions = models.JSONField(default=dict, help_text="Library versions the run used.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    progress = models.CharField(max_length=200, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    plots = models.JSONField(default=dict, blank=True, help_text="Plot name -> SVG text.")
    error = models.TextField(blank=True)
    stability_state = models.CharField(
        max_length=10,
        choices=StabilityState.choices,
        blank=True,
        default=StabilityState.WITH_REPORT,
        help_text="The stability curve computed apart from the report "
        "(analysis.runs.stability); empty: it came with the report, or there is none.",
    )
    stability_error = models.TextField(blank=True)

    objects = AnalysisRunQuerySet.as_manager()

    class Meta:
        ordering = ["-created", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(tournament__isnull=False)
                | Q(campaign__isnull=False)
                | Q(study__isnull=False)
                | Q(judge_run__isnull=False),
                name="analysis_run_has_a_subject",
            ),
            # A campaign's judge run: of its campaign alone; an arena's: of nothing else.
            models.CheckConstraint(
                condition=Q(judge_run__isnull=True)
                | Q(tournament__isnull=True, study__isnull=True),
                name="analysis_run_of_a_judge_run_is_of_its_campaign",
            ),
            models.UniqueConstraint(
                fields=["tournament", "inputs_digest", "parameters_digest"],
                condition=Q(tournament__isnull=False),
                name="one_run_per_tournament_inputs_and_parameters",
            ),
            models.UniqueConstraint(
                fields=["campaign", "inputs_digest", "parameters_digest"],
                condition=Q(tournament__isnull=True),
                name="one_run_per_campaign_inputs_and_parameters",
            ),
            models.UniqueConstraint(
                fields=["study", "inputs_digest", "parameters_digest"],
                condition=Q(study__isnull=False),
                name="one_run_per_study_inputs_and_parameters",
            ),
            models.UniqueConstraint(
                fields=["judge_run", "inputs_digest", "parameters_digest"],
                condition=Q(campaign__isnull=True, judge_run__isnull=False),
                name="one_run_per_arena_judge_run_inputs_and_parameters",
            ),
        ]
        indexes = [
            models.Index(fields=["tournament", "status", "-finished_at"]),
        ]

    def __str__(self):
        return f"analysis {self.pk} of {self.subject_slug} ({self.status})"

    def save(self, *args, **kwargs):
        if getattr(self, "_stored_status", None) == self.Status.SUCCEEDED:
            raise RunIsFinal(f"Analysis run {self.pk} has succeeded and is a fixed record.")
        super().save(*args, **kwargs)
        self._stored_status = self.status

    @classmethod
    def from_db(cls, db, field_names, values):
        run = super().from_db(db, field_names, values)
        run._stored_status = run.status if "status" in field_names else None
        return run

    @property
    def subject_slug(self) -> str:
        if self.tournament_id:
            return self.tournament.slug
        if self.campaign_id:
            return self.campaign.slug
        if self.judge_run_id:
            return self.judge_run.arena.slug
        return self.study.slug if self.study_id else "?"

    @property
    def subject_kind(self) -> str:
        """ "tournament", "campaign", "study" or "judge_run" (human versus automatic)."""
        if self.judge_run_id:
            return "judge_run"
        if self.tournament_id:
            return "tournament"
        return "campaign" if self.campaign_id else "study"

    @property
    def in_progress(self) -> bool:
        return self.status in (self.Status.PENDING, self.Status.RUNNING)

    @property
    def seconds(self) -> float | None:
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None
