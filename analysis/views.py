"""Leaderboard pages. They read stored runs only: nothing is computed in a request.

- ``/leaderboards/``: the tournaments the user may see, with their latest analysis;
- ``/leaderboards/<slug>/``: one tournament's results (public once published; owner and
  staff always), with the progress of a run being computed (the page reloads itself);
- ``/leaderboards/<slug>/plots/<run>/<name>.svg``: a stored plot;
- ``/leaderboards/<slug>/analyze/`` (POST, staff): request an analysis;
- ``/leaderboards/manage/runs/`` (staff): every tournament with its latest run.
"""

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db.models.fields.json import KeyTextTransform
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import patch_cache_control
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from tournaments.models import Tournament

from .inputs import NoCampaign
from .leaderboards import (
    PLOT_TITLES,
    can_run_analysis,
    latest_runs,
    latest_succeeded_run,
    results_context,
)
from .models import AnalysisRun
from .report import NothingToAnalyse
from .tasks import analyze_tournament

# Seconds between reloads of a page that shows a run in progress.
REFRESH_SECONDS = 3


def _visible_tournament(request, slug) -> Tournament:
    tournament = get_object_or_404(Tournament.objects.select_related("owner"), slug=slug)
    if not tournament.is_visible_to(request.user):
        # Unpublished results do not exist for those who may not see them.
        raise Http404("No such tournament.")
    return tournament


@require_GET
def leaderboard_list(request):
    tournaments = list(Tournament.objects.visible_to(request.user).order_by("-created"))
    runs = latest_runs(t.pk for t in tournaments)
    rows = [{"tournament": t, "run": runs.get(t.pk)} for t in tournaments]
    return render(request, "analysis/leaderboard_list.html", {"rows": rows})


@require_GET
def leaderboard_detail(request, slug):
    tournament = _visible_tournament(request, slug)
    run = latest_succeeded_run(tournament)
    latest = None
    if tournament.is_managed_by(request.user):
        latest = tournament.analysis_runs.defer("result", "plots").order_by("-created").first()
    active = latest if latest is not None and latest.in_progress else None
    failed = latest if latest is not None and latest.status == AnalysisRun.Status.FAILED else None
    return render(
        request,
        "analysis/leaderboard_detail.html",
        {
            **results_context(tournament, run),
            "active_run": active,
            "failed_run": failed,
            "refresh": REFRESH_SECONDS if active else None,
            "can_run": can_run_analysis(request.user),
        },
    )


@require_GET
def plot(request, slug, run_id, name):
    tournament = _visible_tournament(request, slug)
    svg = (
        AnalysisRun.objects.filter(
            pk=run_id, tournament=tournament, status=AnalysisRun.Status.SUCCEEDED
        )
        .annotate(svg=KeyTextTransform(name, "plots"))
        .values_list("svg", flat=True)
        .first()
    )
    if not svg:
        raise Http404("No such plot.")
    response = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    # The plots are matplotlib's; no script belongs in them, so none may run.
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    # A run never changes, so its plots can be cached; private results only privately.
    if tournament.published:
        patch_cache_control(response, public=True, max_age=86400)
    else:
        patch_cache_control(response, private=True, max_age=3600)
    return response


def _staff_only(request):
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if not can_run_analysis(request.user):
        raise PermissionDenied("Only staff run analyses.")
    return None


@require_POST
def request_analysis(request, slug):
    refused = _staff_only(request)
    if refused is not None:
        return refused
    tournament = get_object_or_404(Tournament, slug=slug)
    exclude_blocked = request.POST.get("exclude_blocked") in ("on", "1", "true")
    try:
        run = analyze_tournament(
            tournament, {"exclude_blocked": exclude_blocked}, user=request.user
        )
    except (NoCampaign, NothingToAnalyse) as reason:
        messages.error(request, f"{tournament.name}: {reason}")
    else:
        if run.status == AnalysisRun.Status.SUCCEEDED:
            messages.success(
                request, f"{tournament.name}: the results are up to date (analysis {run.pk})."
            )
        elif run.status == AnalysisRun.Status.FAILED:
            messages.error(request, f"{tournament.name}: the analysis failed: {run.error}")
        else:
            messages.info(request, f"{tournament.name}: analysis {run.pk} is under way.")
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = "analysis:detail"
        return redirect(target, slug=tournament.slug)
    return redirect(target)


@require_GET
def overview(request):
    refused = _staff_only(request)
    if refused is not None:
        return refused
    tournaments = list(Tournament.objects.select_related("campaign").order_by("-created"))
    ids = [t.pk for t in tournaments]
    latest = latest_runs(ids, succeeded_only=False)
    succeeded = latest_runs(ids)
    rows = [
        {"tournament": t, "latest": latest.get(t.pk), "succeeded": succeeded.get(t.pk)}
        for t in tournaments
    ]
    busy = any(row["latest"] is not None and row["latest"].in_progress for row in rows)
    return render(
        request,
        "analysis/overview.html",
        {"rows": rows, "refresh": REFRESH_SECONDS if busy else None, "titles": PLOT_TITLES},
    )
