"""The human-versus-automatic page of a campaign, and the request to compare a judge run.

- ``/results/campaigns/<slug>/human-vs-automatic/`` (``?judge_run=<id>``): the campaign's
  judge runs and the latest comparison of the chosen one with the humans;
- ``.../compare/`` (POST, campaign or tournament managers): request that comparison
  (``analysis.runs.tasks.analyze_judge_run``).

Both are for those who manage the campaign or its tournament; others get 404.

- ``/results/arenas/<slug>/human-vs-automatic/`` (``?judge_run=<id>``) and ``.../compare/``:
  the same for an arena's judge runs, compared with its votes; for the arena's managers
  (owner and staff), 404 for anybody else, a private arena's existence included.
"""

from django.contrib import messages
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from analysis.models import AnalysisRun
from analysis.pages.comparisons import (
    arena_judge_runs,
    comparison_context,
    judge_runs_of,
    latest_comparison,
    may_compare,
    tournament_of,
)
from analysis.pages.results_views import REFRESH_SECONDS
from analysis.reports import NothingToAnalyse
from analysis.runs.tasks import analyze_judge_run
from annotation.models import Campaign
from arenas.models import Arena
from evalhub.errors import show_on_page
from judging.models import JudgeRun


def _campaign_or_404(request, slug) -> Campaign:
    campaign = get_object_or_404(Campaign, slug=slug)
    if not may_compare(request.user, campaign):
        raise Http404("Not found.")
    return campaign


def _chosen(runs: list[JudgeRun], wanted: str | None) -> JudgeRun | None:
    """The judge run asked for, else the newest finished one, else the newest."""
    if wanted and wanted.isdigit():
        for run in runs:
            if run.pk == int(wanted):
                return run
        raise Http404("No such judge run on this campaign.")
    done = [run for run in runs if run.status == JudgeRun.Status.DONE]
    return (done or runs or [None])[0]


@require_GET
def campaign_versus(request, slug):
    campaign = _campaign_or_404(request, slug)
    subject = {"campaign": campaign, "tournament": tournament_of(campaign)}
    return _versus_page(
        request, "analysis/human_vs_automatic.html", judge_runs_of(campaign), subject
    )


def _versus_page(request, template: str, runs, subject: dict):
    """A comparison page: the chosen judge run of `runs` (?judge_run=), its latest
    comparison, and one in progress or failed."""
    judge_run = _chosen(runs, request.GET.get("judge_run"))
    comparison = latest_comparison(judge_run) if judge_run else None
    latest = latest_comparison(judge_run, succeeded=False) if judge_run else None
    active = latest if latest is not None and latest.in_progress else None
    failed = latest if latest is not None and latest.status == AnalysisRun.Status.FAILED else None
    return render(
        request,
        template,
        {
            **comparison_context(comparison),
            **subject,
            "judge_runs": runs,
            "judge_run": judge_run,
            "active_run": active,
            "failed_run": failed,
            "refresh": REFRESH_SECONDS if active else None,
            # Runs start on a judge's page, where the campaign or arena is chosen.
            "start_judge_run_url": reverse("judging:judge-list"),
            "judge_run_url": judge_run.get_absolute_url() if judge_run else None,
        },
    )


@require_POST
def compare_view(request, slug):
    campaign = _campaign_or_404(request, slug)
    wanted = request.POST.get("judge_run", "")
    judge_run = get_object_or_404(
        JudgeRun.objects.select_related("judge", "rubric", "campaign"),
        pk=int(wanted) if wanted.isdigit() else -1,
        campaign=campaign,
    )
    exclude_blocked = request.POST.get("exclude_blocked") in ("on", "1", "true")
    _request_comparison(request, judge_run, {"exclude_blocked": exclude_blocked})
    url = reverse("results:versus", args=[campaign.slug])
    return redirect(f"{url}?judge_run={judge_run.pk}")


def _arena_or_404(request, slug) -> Arena:
    arena = get_object_or_404(Arena, slug=slug)
    if not arena.is_managed_by(request.user):
        raise Http404("Not found.")
    return arena


@require_GET
def arena_versus(request, slug):
    arena = _arena_or_404(request, slug)
    return _versus_page(
        request, "analysis/arena_versus.html", arena_judge_runs(arena), {"arena": arena}
    )


@require_POST
def arena_compare_view(request, slug):
    arena = _arena_or_404(request, slug)
    wanted = request.POST.get("judge_run", "")
    judge_run = get_object_or_404(
        JudgeRun.objects.select_related("judge", "rubric", "arena"),
        pk=int(wanted) if wanted.isdigit() else -1,
        arena=arena,
    )
    _request_comparison(request, judge_run, {})
    url = reverse("results:arena-versus", args=[arena.slug])
    return redirect(f"{url}?judge_run={judge_run.pk}")


def _request_comparison(request, judge_run: JudgeRun, parameters: dict) -> None:
    """Ask for the comparison and say on the page how it went."""
    try:
        run = analyze_judge_run(judge_run, parameters, user=request.user)
    except NothingToAnalyse as reason:
        show_on_page(request, reason, about=str(judge_run.judge))
        return
    # Without a broker (eager Celery) the run may have finished meanwhile.
    run.refresh_from_db(fields=["status", "error", "progress"])
    if run.status == AnalysisRun.Status.SUCCEEDED:
        messages.success(request, f"The comparison is up to date (analysis {run.pk}).")
    elif run.status == AnalysisRun.Status.FAILED:
        show_on_page(request, f"The comparison failed: {run.error}")
    else:
        messages.info(request, f"Comparison {run.pk} is under way.")
