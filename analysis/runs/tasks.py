"""Analysis runs: create or reuse one (``analyze_tournament``) and compute it (``run_analysis``).

Reuse. The inputs are loaded and digested when a run is requested; a run of the same
subject with the same inputs digest and parameters digest is returned instead of a new one
(a database constraint makes that true under concurrency too). A succeeded run is final; a
failed one is queued again, which is how an admin retries.

The task is idempotent and retryable: it computes a run while it holds the run's lease
("analysis-run:<pk>", evalhub/leases.py), so it does nothing for a run that has succeeded
or that a live worker is computing, and takes over a run whose worker died (its lease
lapsed, or its process is gone from this host: the message redelivered at once). Its
writes are fenced by the lease, so a worker thought dead writes nothing. It records every
failure with its message on the run instead of raising, so that in embedded mode (eager
Celery) a failing analysis shows its message on the page rather than a server error.
Database errors are the exception: the claim is handed back and Celery retries with
backoff.
"""

from __future__ import annotations

import logging
import tomllib
from datetime import timedelta
from functools import cache, partial
from importlib import metadata

from celery import shared_task
from django.conf import settings
from django.db import OperationalError, transaction
from django.db.models import F, Q
from django.utils import timezone

from analysis.inputs.automatic import judge_run_inputs
from analysis.inputs.judgments import InputsChanged, load_inputs
from analysis.models import AnalysisRun, StabilityState
from analysis.pages.plots import render_plots
from analysis.reports import NothingToAnalyse, build_report, canonical_digest
from analysis.runs import stability as stability_part
from analysis.runs.parameters import normalize_parameters
from annotation.models import Campaign, Study
from evalhub import leases
from evalhub.models import NoticeKind
from evalhub.notifications import notify
from evalhub.queueing import QUEUE_UNREACHABLE, enqueue
from tournaments.models import Tournament
from webhooks.events import emit
from webhooks.events import link as webhook_link
from webhooks.models import EventType

__all__ = [
    "InputsChanged",
    "analyze_campaign",
    "analyze_judge_run",
    "analyze_study",
    "analyze_tournament",
    "library_versions",
    "queue_run",
    "requeue_pending_analyses",
    "run_analysis",
]

logger = logging.getLogger(__name__)

# The lease a worker computing a run holds: "analysis-run:<pk>".
LEASE_PREFIX = "analysis-run"

# The libraries whose code computes a run's figures: numpy and scipy (through evalstats) for
# every report, matplotlib for its plots. Only libraries a runtime module imports belong
# here (tests/analysis/test_provenance.py reads the imports): trueskill and lifelines are the
# references the tests check evalstats against, never code a run executes.
COMPUTING_LIBRARIES = ("numpy", "scipy")
PLOTTING_LIBRARIES = ("matplotlib",)
_LIBRARIES = COMPUTING_LIBRARIES + PLOTTING_LIBRARIES


def _evalhub_version() -> str:
    try:
        return metadata.version("evalhub")
    except metadata.PackageNotFoundError:
        pass
    try:
        with open(settings.BASE_DIR / "pyproject.toml", "rb") as file:
            return str(tomllib.load(file)["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "unknown"


def library_versions(*, plotted: bool = False) -> dict[str, str | None]:
    """Versions of the libraries that computed a run's figures, matplotlib's only when it
    drew the run's plots (``plotted``), and EvalHub's own."""
    installed = _installed_versions()
    names = COMPUTING_LIBRARIES + (PLOTTING_LIBRARIES if plotted else ())
    return {name: installed[name] for name in (*names, "evalhub")}


@cache
def _installed_versions() -> dict[str, str | None]:
    """Read once per process (each lookup scans the installed distributions): the code a
    process runs is the code it imported, whatever is installed later."""
    versions: dict[str, str | None] = {}
    for name in _LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    versions["evalhub"] = _evalhub_version()
    return versions


def _stored_inputs(run: AnalysisRun):
    """The inputs of a stored ``run``, loaded again; InputsChanged if they are no longer the
    ones the run was requested with."""
    inputs = _inputs(
        run.tournament,
        None if run.tournament_id else run.campaign,
        run.study,
        run.judge_run,
        exclude_blocked=run.parameters["exclude_blocked"],
    )
    if canonical_digest(inputs) != run.inputs_digest:
        raise InputsChanged(
            "The judgments changed after this analysis was requested; run a new analysis."
        )
    return inputs


def _has_judgments(inputs) -> bool:
    if hasattr(inputs, "is_empty"):
        return not inputs.is_empty()
    rows = inputs.judgment if hasattr(inputs, "judgment") else inputs.choice
    return len(rows) > 0


def _inputs(tournament, campaign, study, judge_run, *, exclude_blocked: bool):
    """A run's inputs: a judge run beside its campaign's humans, or human judgments only."""
    if judge_run is not None:
        return judge_run_inputs(judge_run, exclude_blocked=exclude_blocked)
    return load_inputs(tournament, campaign=campaign, study=study, exclude_blocked=exclude_blocked)


def _request(
    subject: dict, parameters, user, synchronous: bool, plots: bool = True, stability: bool = True
) -> AnalysisRun:
    params = normalize_parameters(parameters)
    inputs = _inputs(
        subject.get("tournament"),
        subject.get("campaign"),
        subject.get("study"),
        subject.get("judge_run"),
        exclude_blocked=params["exclude_blocked"],
    )
    if not _has_judgments(inputs):
        raise NothingToAnalyse("There are no judgments to analyse yet.")
    run, created = AnalysisRun.objects.get_or_create(
        **subject,
        inputs_digest=canonical_digest(inputs),
        parameters_digest=canonical_digest(params),
        defaults={
            "parameters": params,
            "versions": library_versions(),
            "requested_by": user if user is not None and user.is_authenticated else None,
        },
    )
    if run.status == AnalysisRun.Status.SUCCEEDED:
        # Asking again for a run whose stability part failed is how that part is retried;
        # a synchronous caller without workers (``analyze``) computes it or leaves it queued
        # for the next page, as it would a new part.
        stability_part.retry(run, send=stability_part.apart() or not synchronous)
        return run
    if synchronous:
        _compute(run.pk, inputs=inputs, plots=plots, stability=stability)
        run.refresh_from_db()
    else:
        # After commit: a worker must find the row. Outside a transaction this runs now.
        transaction.on_commit(partial(queue_run, run.pk))
    return run


def queue_run(run_id: int) -> bool:
    """Queue the run; with the broker down, say so on the run (beat re-queues it)."""
    if enqueue(run_analysis, run_id):
        return True
    AnalysisRun.objects.filter(pk=run_id, status=AnalysisRun.Status.PENDING).update(
        progress=QUEUE_UNREACHABLE
    )
    return False


# Task names are those of the old analysis/tasks.py: queued messages and beat name them.
@shared_task(name="analysis.tasks.requeue_pending_analyses")
def requeue_pending_analyses() -> int:
    """Queue again the runs left pending (their message was never sent) or running with
    a lapsed lease (their worker died); how many were queued."""
    now = timezone.now()
    waiting = Q(
        status=AnalysisRun.Status.PENDING,
        created__lt=now - timedelta(seconds=settings.EVALHUB_MAINTENANCE_INTERVAL_SECONDS),
    ) | Q(status=AnalysisRun.Status.RUNNING)
    ids = (
        AnalysisRun.objects.filter(waiting)
        .filter(leases.lapsed(LEASE_PREFIX))
        .values_list("pk", flat=True)
    )
    return sum(queue_run(pk) for pk in ids)


def analyze_tournament(
    tournament: Tournament,
    parameters: dict | None = None,
    *,
    user=None,
    synchronous: bool = False,
    plots: bool = True,
    stability: bool = True,
) -> AnalysisRun:
    """The run of ``tournament`` for its current judgments and ``parameters``.

    Returns the existing run when one matches (succeeded, pending or running); otherwise
    creates one, or re-queues a failed one, and queues ``run_analysis`` (or, with
    ``synchronous``, computes it before returning; without ``plots`` a synchronous run is
    stored without its plots, which ``analysis.runs.drawing`` draws later; without
    ``stability`` it is stored without its stability curve, which
    ``analysis.runs.stability`` computes as a part of its own). Raises
    NoCampaign or NothingToAnalyse when there is nothing to analyse, ValueError for bad
    parameters.
    """
    subject = {"tournament": tournament, "campaign": tournament.campaign}
    return _request(subject, parameters, user, synchronous, plots, stability)


def analyze_campaign(
    campaign: Campaign,
    parameters: dict | None = None,
    *,
    user=None,
    synchronous: bool = False,
    plots: bool = True,
    stability: bool = True,
) -> AnalysisRun:
    """The run of one campaign (abc_eval, likert, comparative, or a tournament's campaign
    analysed on its own); as ``analyze_tournament`` otherwise."""
    subject = {"tournament": None, "campaign": campaign}
    return _request(subject, parameters, user, synchronous, plots, stability)


def analyze_study(
    study: Study,
    parameters: dict | None = None,
    *,
    user=None,
    synchronous: bool = False,
    plots: bool = True,
    stability: bool = True,
) -> AnalysisRun:
    """The run of an imported study, its campaigns analysed together; as
    ``analyze_tournament`` otherwise."""
    subject = {"tournament": None, "campaign": None, "study": study}
    return _request(subject, parameters, user, synchronous, plots, stability)


def analyze_judge_run(
    judge_run,
    parameters: dict | None = None,
    *,
    user=None,
    synchronous: bool = False,
    plots: bool = True,
    stability: bool = True,
) -> AnalysisRun:
    """The human-versus-automatic run of a judge run (``judging.models.JudgeRun``) against
    its campaign's human judgments, or against its arena's votes; as ``analyze_tournament``
    otherwise. The run's subject is the campaign alone (never its tournament), so human
    results never show it; an arena's judge run has no campaign: the judge run alone."""
    subject = {"tournament": None, "campaign": judge_run.campaign, "judge_run": judge_run}
    return _request(subject, parameters, user, synchronous, plots, stability)


def _update(held: leases.Held, run_id: int, only_if: str, **fields) -> int:
    """Update the run if it is still in status ``only_if`` (never a run finished meanwhile)
    and this worker still holds its lease."""
    return held.fence(AnalysisRun.objects.filter(pk=run_id, status=only_if)).update(**fields)


def _start_run_if_claimable(run_id: int) -> bool:
    """Set the run running for this worker, which holds its lease: pending, failed, or
    running (its previous worker died: holding the lease proves nobody else computes it)."""
    now = timezone.now()
    claimable = Q(
        status__in=[
            AnalysisRun.Status.PENDING,
            AnalysisRun.Status.FAILED,
            AnalysisRun.Status.RUNNING,
        ]
    )
    return bool(
        AnalysisRun.objects.filter(claimable, pk=run_id).update(
            status=AnalysisRun.Status.RUNNING,
            started_at=now,
            finished_at=None,
            progress="Loading judgments",
            error="",
            attempts=F("attempts") + 1,
        )
    )


def _write_progress(held: leases.Held, run_id: int, text: str) -> None:
    """A checkpoint: the lease is renewed here if no heartbeat thread does it."""
    try:
        held.beat()
    except leases.LeaseLost:
        return  # the fenced final write will do nothing; the new owner reports progress
    _update(held, run_id, AnalysisRun.Status.RUNNING, progress=text[:200])


@shared_task(
    name="analysis.tasks.run_analysis",
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=5,
    acks_late=True,
    reject_on_worker_lost=True,
)
def run_analysis(run_id: int) -> str:
    """Compute one run: "succeeded", "failed", "skipped" (done or being done) or "missing".
    Where workers exist, a Spot The Bot run's stability curve is queued as a part of its own
    once the report is stored (``analysis.runs.stability``)."""
    apart = stability_part.apart()
    outcome = _compute(run_id, stability=not apart)
    if apart and outcome == "succeeded":
        stability_part.queue_if_pending(run_id)
    return outcome


def _compute(run_id: int, *, inputs=None, plots: bool = True, stability: bool = True) -> str:
    """``run_analysis``'s work. ``inputs`` are the run's inputs when the caller has just
    loaded and digested them (a synchronous request); otherwise they are loaded again and
    must still have the digest the run was requested with. Without ``plots`` the run is
    stored without them (``analysis.runs.drawing`` draws them when a page shows the run);
    without ``stability`` a Spot The Bot run is stored without its stability curve, its
    ``stability_state`` pending (``analysis.runs.stability`` computes it)."""
    run = (
        AnalysisRun.objects.select_related(
            "tournament", "campaign", "study", "judge_run__judge", "judge_run__rubric"
        )
        .filter(pk=run_id)
        .first()
    )
    if run is None:
        logger.warning("Analysis run %s vanished before it ran", run_id)
        return "missing"
    if run.status == AnalysisRun.Status.SUCCEEDED:
        return "skipped"
    with leases.holding(leases.key_for(LEASE_PREFIX, run_id)) as held:
        if held is None or not _start_run_if_claimable(run_id):
            return "skipped"
        return _compute_held(run, held, inputs, plots, stability)


def _compute_held(
    run: AnalysisRun, held: leases.Held, inputs, draw: bool, stability: bool = True
) -> str:
    run_id = run.pk
    running = AnalysisRun.Status.RUNNING
    update = partial(_update, held, run_id, running)
    try:
        if inputs is None:
            inputs = _stored_inputs(run)
        progress = partial(_write_progress, held, run_id)
        result = build_report(inputs, run.parameters, progress=progress, stability=stability)
        plots = {}
        if draw:
            progress("Drawing plots")
            plots = render_plots(result)
    except OperationalError:
        # Hand the claim back so that Celery's retry can take it again.
        update(status=AnalysisRun.Status.PENDING, progress="Retrying")
        raise
    except Exception as error:
        logger.exception("Analysis run %s failed", run_id)
        update(
            status=AnalysisRun.Status.FAILED,
            finished_at=timezone.now(),
            progress="",
            error=f"{type(error).__name__}: {error}"[:2000],
        )
        _tell_failed(run_id)
        return "failed"
    apart = result.get("stability", {}) is None
    if not update(
        status=AnalysisRun.Status.SUCCEEDED,
        result=result,
        stability_state=StabilityState.PENDING if apart else StabilityState.WITH_REPORT,
        stability_error="",
        plots=plots,
        versions=library_versions(plotted=draw),
        finished_at=timezone.now(),
        progress="Done",
    ):
        return "lost"  # another worker took the run over and writes it
    _tell_results_ready(run)
    _emit_ready(run_id)
    return "succeeded"


def _tell_failed(run_id: int) -> None:
    """Whoever asked for the run (else its subject's owner) hears that it failed, once per
    failure; the message is on the results page."""
    run = AnalysisRun.objects.select_related(
        "requested_by", "tournament__owner", "campaign__owner"
    ).get(pk=run_id)
    subject = run.tournament or run.campaign
    who = run.requested_by or getattr(subject, "owner", None)
    if who is None:
        return
    name = subject.name if run.tournament else (subject.title if subject else f"run {run.pk}")
    notify(
        who,
        NoticeKind.ANALYSIS_FAILED,
        f"The analysis of {name} failed: {run.error[:300]}",
        subject.get_absolute_url() if subject is not None else "",
        once_key=f"analysis_failed:{run.pk}:{run.finished_at:%Y%m%d%H%M%S%f}",
    )


def _emit_ready(run_id: int) -> None:
    """The subject's owner's webhooks (else the requester's) hear that the run is ready."""
    run = AnalysisRun.objects.select_related(
        "tournament__owner", "campaign__owner", "study__owner", "judge_run__judge__owner"
    ).get(pk=run_id)
    subject = run.tournament or run.campaign or run.study
    owner = getattr(subject, "owner", None)
    if owner is None and run.judge_run is not None:
        owner = run.judge_run.judge.owner

    def data() -> dict:
        # Built only for a subscriber: reverse() imports the whole URLconf.
        from django.urls import reverse

        return {
            "analysis_run": {
                "id": run.pk,
                "subject_kind": run.subject_kind,
                "subject_slug": run.subject_slug,
                "finished_at": run.finished_at,
                "url": webhook_link(reverse("api-analysis-run-detail", args=[run.pk])),
            }
        }

    emit(owner or run.requested_by, EventType.ANALYSIS_READY, data, key=f"analysis.ready:{run.pk}")


def _tell_results_ready(run: AnalysisRun) -> None:
    """The tournament's owner hears that its results are ready (once per run)."""
    tournament = run.tournament
    if tournament is None or tournament.owner is None:
        # Nobody to tell (an imported study has no owner); the link below would import the
        # whole URLconf, a third of a second of `manage.py analyze`, for nothing.
        return
    notify(
        tournament.owner,
        NoticeKind.TOURNAMENT_RESULTS,
        f"The results of the tournament {tournament.name} are ready.",
        tournament.get_absolute_url(),
        once_key=f"tournament_results:{run.pk}",
    )
