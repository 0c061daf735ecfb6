"""Analysis runs: create or reuse one (``analyze_tournament``) and compute it (``run_analysis``).

Reuse. The inputs are loaded and digested when a run is requested; a run of the same
subject with the same inputs digest and parameters digest is returned instead of a new one
(a database constraint makes that true under concurrency too). A succeeded run is final; a
failed one is queued again, which is how an admin retries.

The task is idempotent and retryable: it claims the run atomically (pending, failed, or
running for longer than ``STALE_AFTER``, i.e. a worker died), does nothing for a run that
has succeeded or that another worker is computing, and records every failure with its
message on the run instead of raising, so that in embedded mode (eager Celery) a failing
analysis shows its message on the page rather than a server error. Database errors are
the exception: the claim is handed back and Celery retries with backoff.
"""

from __future__ import annotations

import logging
import tomllib
from datetime import timedelta
from functools import partial
from importlib import metadata

from celery import shared_task
from django.conf import settings
from django.db import OperationalError, transaction
from django.db.models import F, Q
from django.utils import timezone

from annotation.models import Campaign
from tournaments.models import Tournament

from .inputs import load_inputs
from .models import AnalysisRun
from .plots import render_plots
from .report import NothingToAnalyse, build_report, canonical_digest, normalize_parameters

__all__ = [
    "STALE_AFTER",
    "InputsChanged",
    "analyze_campaign",
    "analyze_tournament",
    "library_versions",
    "run_analysis",
]

logger = logging.getLogger(__name__)

# A run "running" for longer than this lost its worker (acks_late redelivers the message).
STALE_AFTER = timedelta(hours=1)
_LIBRARIES = ("numpy", "scipy", "lifelines", "trueskill", "matplotlib")


class InputsChanged(RuntimeError):
    """The judgments changed between the request and the computation of a run."""


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


def library_versions() -> dict[str, str | None]:
    """Versions of the libraries whose numbers a run depends on, and EvalHub's own."""
    versions: dict[str, str | None] = {}
    for name in _LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    versions["evalhub"] = _evalhub_version()
    return versions


def _has_judgments(inputs) -> bool:
    rows = inputs.judgment if hasattr(inputs, "judgment") else inputs.choice
    return len(rows) > 0


def _request(subject: dict, parameters, user, synchronous: bool) -> AnalysisRun:
    params = normalize_parameters(parameters)
    inputs = load_inputs(
        subject["tournament"],
        campaign=subject["campaign"],
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
        return run
    if synchronous:
        run_analysis(run.pk)
        run.refresh_from_db()
    else:
        # After commit: a worker must find the row. Outside a transaction this runs now.
        transaction.on_commit(partial(run_analysis.delay, run.pk))
    return run


def analyze_tournament(
    tournament: Tournament,
    parameters: dict | None = None,
    *,
    user=None,
    synchronous: bool = False,
) -> AnalysisRun:
    """The run of ``tournament`` for its current judgments and ``parameters``.

    Returns the existing run when one matches (succeeded, pending or running); otherwise
    creates one, or re-queues a failed one, and queues ``run_analysis`` (or, with
    ``synchronous``, computes it before returning). Raises NoCampaign or NothingToAnalyse
    when there is nothing to analyse, ValueError for bad parameters.
    """
    subject = {"tournament": tournament, "campaign": tournament.campaign}
    return _request(subject, parameters, user, synchronous)


def analyze_campaign(
    campaign: Campaign,
    parameters: dict | None = None,
    *,
    user=None,
    synchronous: bool = False,
) -> AnalysisRun:
    """``analyze_tournament`` for a Spot The Bot or A/B campaign outside any tournament."""
    return _request({"tournament": None, "campaign": campaign}, parameters, user, synchronous)


def _update(run_id: int, only_if: str, **fields) -> int:
    """Update the run if it is still in status ``only_if`` (never a run finished meanwhile)."""
    return AnalysisRun.objects.filter(pk=run_id, status=only_if).update(**fields)


def _claim(run_id: int) -> bool:
    now = timezone.now()
    claimable = Q(status__in=[AnalysisRun.Status.PENDING, AnalysisRun.Status.FAILED]) | Q(
        status=AnalysisRun.Status.RUNNING, started_at__lt=now - STALE_AFTER
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


def _write_progress(run_id: int, text: str) -> None:
    _update(run_id, AnalysisRun.Status.RUNNING, progress=text[:200])


@shared_task(autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5, acks_late=True)
def run_analysis(run_id: int) -> str:
    """Compute one run: "succeeded", "failed", "skipped" (done or being done) or "missing"."""
    run = AnalysisRun.objects.select_related("tournament", "campaign").filter(pk=run_id).first()
    if run is None:
        logger.warning("Analysis run %s vanished before it ran", run_id)
        return "missing"
    if run.status == AnalysisRun.Status.SUCCEEDED or not _claim(run_id):
        return "skipped"
    running = AnalysisRun.Status.RUNNING
    try:
        inputs = load_inputs(
            run.tournament,
            campaign=None if run.tournament_id else run.campaign,
            exclude_blocked=run.parameters["exclude_blocked"],
        )
        if canonical_digest(inputs) != run.inputs_digest:
            raise InputsChanged(
                "The judgments changed after this analysis was requested; run a new analysis."
            )
        result = build_report(inputs, run.parameters, progress=partial(_write_progress, run_id))
        _write_progress(run_id, "Drawing plots")
        plots = render_plots(result)
    except OperationalError:
        # Hand the claim back so that Celery's retry can take it again.
        _update(run_id, running, status=AnalysisRun.Status.PENDING, progress="Retrying")
        raise
    except Exception as error:
        logger.exception("Analysis run %s failed", run_id)
        _update(
            run_id,
            running,
            status=AnalysisRun.Status.FAILED,
            finished_at=timezone.now(),
            progress="",
            error=f"{type(error).__name__}: {error}"[:2000],
        )
        return "failed"
    _update(
        run_id,
        running,
        status=AnalysisRun.Status.SUCCEEDED,
        result=result,
        plots=plots,
        versions=library_versions(),
        finished_at=timezone.now(),
        progress="Done",
    )
    return "succeeded"
