"""Starting, pausing and resuming judge runs, and what their progress page shows.

A run judges a campaign's task items (gold, training and automatically decided items are
not judged: humans' analyses read task items only). Its work is recorded row by row, so a
run is resumable at any point: a resumed, reclaimed or re-sent run judges the items that
have no automatic judgment of this run yet (judging/execution.py).

A run over an arena (judging/battles.py) judges its voted battles with an arena rubric.
Only the arena's managers (its owner, staff) start one, with a judge of their own; a
private arena is not found for anybody else, a public one is refused with the reason.
"""

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Q, Sum
from django.db.models.functions import Coalesce

from annotation.models import Campaign
from arenas.models import Arena
from endpoints.budget import used_today
from endpoints.models import BotEndpoint
from evalhub import leases, permissions
from evalhub.declared import bounds
from evalhub.errors import UserInputError

from . import battles, sending
from .execution import LEASE_PREFIX
from .items import judgeable, judgeable_items, pending, pending_items
from .models import AutomaticJudgment, Judge, JudgeRun, Rubric
from .rubrics import ARENA_KIND, judgeable_kinds
from .run_settings import JudgeRunSettings

Status = JudgeRun.Status
ACTIVE = (Status.QUEUED, Status.RUNNING)

__all__ = [
    "LEASE_PREFIX",
    "RunInvalid",
    "check_settings",
    "check_startable",
    "judgeable_items",
    "output_paths",
    "pause",
    "pending_items",
    "progress",
    "resume",
    "start",
    "with_output_paths",
]


class RunInvalid(UserInputError):
    """A run that cannot start, pause or resume; the message says why."""


def check_settings(concurrency, max_attempts) -> None:
    problems = {}
    for name, value in (("concurrency", concurrency), ("max_attempts", max_attempts)):
        low, high = bounds(JudgeRunSettings.model_fields[name])
        if type(value) is not int or not low <= value <= high:
            problems[name] = f"{name} must be a whole number from {low} to {high}."
    if problems:
        raise RunInvalid.from_fields(problems)


def _check_judge(user, judge: Judge) -> None:
    if not judge.is_managed_by(user):
        raise RunInvalid("Only the judge's owner starts runs with it.", field="judge")
    if judge.endpoint.protocol != BotEndpoint.Protocol.OPENAI:
        raise RunInvalid(
            "The judge's endpoint must speak the OpenAI-compatible protocol.", field="judge"
        )


def check_arena_startable(user, judge: Judge, rubric: Rubric, arena: Arena) -> None:
    _check_judge(user, judge)
    if not arena.is_visible_to(user):
        raise RunInvalid(f"No arena '{arena.slug}'.", field="arena")
    if not arena.is_managed_by(user):
        raise RunInvalid(
            "You may only run a judge on the battles of arenas you manage.", field="arena"
        )
    if rubric.task_kind != ARENA_KIND:
        raise RunInvalid(
            f"The rubric is for {rubric.get_task_kind_display()} tasks; an arena's battles "
            "need an arena rubric.",
            field="rubric",
        )
    if not battles.judgeable_battles(arena).exists():
        raise RunInvalid("The arena has no voted battle to judge.", field="arena")


def check_startable(user, judge: Judge, rubric: Rubric, campaign: Campaign) -> None:
    _check_judge(user, judge)
    if not permissions.is_managed_by(user, campaign):
        raise RunInvalid("You may only run a judge on campaigns you manage.", field="campaign")
    if campaign.task_kind not in judgeable_kinds():
        raise RunInvalid(
            f"Judges do not answer {campaign.get_task_kind_display()} campaigns.",
            field="campaign",
        )
    if rubric.task_kind != campaign.task_kind:
        raise RunInvalid(
            f"The rubric is for {rubric.get_task_kind_display()} tasks, the campaign is "
            f"{campaign.get_task_kind_display()}.",
            field="rubric",
        )
    if not judgeable_items(campaign).exists():
        raise RunInvalid("The campaign has no task items to judge.", field="campaign")


def start(
    user,
    judge: Judge,
    rubric: Rubric,
    campaign: Campaign | None = None,
    *,
    arena: Arena | None = None,
    concurrency=2,
    max_attempts=3,
) -> JudgeRun:
    """A new queued run over a campaign or an arena, sent to the worker after the commit."""
    check_settings(concurrency, max_attempts)
    if (campaign is None) == (arena is None):
        raise RunInvalid("Choose a campaign or an arena to judge (one of them).", field="campaign")
    if arena is not None:
        check_arena_startable(user, judge, rubric, arena)
    else:
        check_startable(user, judge, rubric, campaign)
    with transaction.atomic():
        run = JudgeRun(
            judge=judge,
            rubric=rubric,
            campaign=campaign,
            arena=arena,
            concurrency=concurrency,
            max_attempts=max_attempts,
        )
        run.items_total = judgeable(run).count()
        run.save()
        transaction.on_commit(lambda: sending.send(run))
    return run


def pause(run: JudgeRun) -> JudgeRun:
    """Stop taking new items; the requests in flight finish and are recorded."""
    changed = JudgeRun.objects.filter(pk=run.pk, status__in=ACTIVE).update(status=Status.PAUSED)
    run.refresh_from_db()
    if not changed:
        raise RunInvalid(f"A {run.get_status_display().lower()} run cannot be paused.")
    return run


def resume(run: JudgeRun) -> JudgeRun:
    """Queue a paused, failed or done run again, or an active one whose worker died (its
    lease lapsed: resumed at once, not after a timeout); it judges the items it has not
    judged (a done run only when items were added since)."""
    resumable = Q(status__in=(Status.PAUSED, Status.FAILED)) | Q(
        leases.lapsed(LEASE_PREFIX), status=Status.RUNNING
    )
    if run.status == Status.DONE:
        if not pending(run).exists():
            noun = "voted battle of the arena" if run.arena_id else "item of the campaign"
            raise RunInvalid(f"Every {noun} is judged by this run already.")
        resumable |= Q(status=Status.DONE)
    with transaction.atomic():
        changed = (
            JudgeRun.objects.filter(pk=run.pk)
            .filter(resumable)
            .update(status=Status.QUEUED, last_error="", finished_at=None, heartbeat=None)
        )
        if changed:
            transaction.on_commit(lambda: sending.send(run))
    run.refresh_from_db()
    if not changed:
        raise RunInvalid(f"A {run.get_status_display().lower()} run cannot be resumed.")
    return run


def progress(run: JudgeRun) -> dict:
    """The numbers the run page and the API show (and the page's script refreshes)."""
    endpoint = run.judge.endpoint
    return {
        "id": run.pk,
        "status": run.status,
        "status_display": run.get_status_display(),
        "items_total": run.items_total,
        "items_done": run.items_done,
        "items_failed": run.items_failed,
        "items_skipped": run.items_skipped,
        "percent": run.percent,
        "prompt_tokens": run.prompt_tokens,
        "completion_tokens": run.completion_tokens,
        "requests_today": used_today(endpoint.pk),
        "daily_budget": endpoint.daily_budget,
        "last_error": run.last_error,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
    }


Path = AutomaticJudgment.OutputPath
SENT = ~Q(judgments__status=AutomaticJudgment.Status.SKIPPED)
# How a run's judges were asked, per run: judgments per path, replies received (every
# attempt of a judgment that was sent), and those that did not parse.
PATH_FIGURES = {
    "structured": Count("judgments", filter=Q(judgments__output_path=Path.STRUCTURED)),
    "prompted": Count("judgments", filter=Q(judgments__output_path=Path.PROMPT)),
    "replies": Coalesce(Sum("judgments__attempts", filter=SENT), 0),
    "parse_failures": Coalesce(Sum("judgments__parse_failures", filter=SENT), 0),
}


@dataclass(frozen=True)
class OutputPaths:
    """Which path a run's judgments took (structured output, or the prompt with re-asks)
    and how often a reply failed to parse."""

    structured: int
    prompted: int
    replies: int
    parse_failures: int

    @property
    def parse_failure_percent(self) -> float | None:
        """Of the replies received, the percentage that did not parse (None: no reply)."""
        return 100 * self.parse_failures / self.replies if self.replies else None


def output_paths(run: JudgeRun) -> OutputPaths:
    return OutputPaths(**JudgeRun.objects.filter(pk=run.pk).aggregate(**PATH_FIGURES))


def with_output_paths(queryset):
    """Runs with their `output_paths` figures, in the one query that lists them."""
    runs = list(queryset.annotate(**{f"path_{name}": f for name, f in PATH_FIGURES.items()}))
    for run in runs:
        run.output_paths = OutputPaths(
            **{name: getattr(run, f"path_{name}") for name in PATH_FIGURES}
        )
    return runs
