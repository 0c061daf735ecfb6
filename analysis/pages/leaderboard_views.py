"""Leaderboard pages. They read stored runs only: nothing is computed in a request.

- ``/leaderboards/``: the tournaments the user may see, with their latest analysis;
- ``/leaderboards/<slug>/``: one tournament's results (public once published; owner and
  staff always), with the progress of a run being computed (the page reloads itself);
- ``/leaderboards/<slug>/plots/<run>/<name>.svg``: a stored plot;
- ``/leaderboards/<slug>/analyze/`` (POST, owner or staff): request an analysis with the
  settings of ``AnalysisSettingsForm`` (a preset, e.g. Spot The Bot "as published");
- ``/leaderboards/manage/runs/`` (staff): every tournament with its latest run.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models.fields.json import KeyTextTransform
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import patch_cache_control
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from analysis.models import AnalysisRun
from analysis.pages.leaderboards import (
    PLOT_TITLES,
    latest_runs,
    latest_succeeded_run,
    results_context,
)
from analysis.pages.results import result_links
from analysis.pages.run_messages import flash_run
from analysis.pages.settings_form import AnalysisSettingsForm
from analysis.runs import stability as stability_part
from analysis.runs.drawing import plots_pending
from analysis.runs.tasks import analyze_tournament
from evalhub.errors import UserInputError, show_on_page
from evalhub.listing import list_page
from evalhub.permissions import (
    is_managed_by,
    manageable_or_403,
    staff_required,
    visible_or_404,
)
from tournaments.models import Tournament
from tournaments.sorting import TOURNAMENT_SORTS

# Seconds between reloads of a page that shows a run in progress.
REFRESH_SECONDS = 3


def _visible_tournament(request, slug) -> Tournament:
    tournament = get_object_or_404(Tournament.objects.select_related("owner"), slug=slug)
    # Unpublished results do not exist for those who may not see them.
    return visible_or_404(request.user, tournament, "No such tournament.")


@require_GET
def leaderboard_list(request):
    context = list_page(
        request,
        Tournament.objects.visible_to(request.user),
        search=["name", "slug", "description", "domain"],
        sorts=TOURNAMENT_SORTS,
        default="-created",
    )
    tournaments = list(context["page"])
    runs = latest_runs(t.pk for t in tournaments)  # of this page's tournaments only
    context["rows"] = [{"tournament": t, "run": runs.get(t.pk)} for t in tournaments]
    # Dimensional results (staff and owners): imported studies and live campaigns.
    context["studies"], context["campaigns"] = result_links(request.user)
    return render(request, "analysis/leaderboard_list.html", context)


@require_GET
def leaderboard_detail(request, slug):
    tournament = _visible_tournament(request, slug)
    run = latest_succeeded_run(tournament)
    latest = None
    if is_managed_by(request.user, tournament):
        latest = tournament.analysis_runs.defer("result", "plots").order_by("-created").first()
    active = latest if latest is not None and latest.in_progress else None
    failed = latest if latest is not None and latest.status == AnalysisRun.Status.FAILED else None
    context = results_context(tournament, run)
    # Queued first: in the embedded mode the curve is computed here, and its plot after it.
    computing = stability_part.pending(run)
    drawing = plots_pending(run)
    if drawing:
        context["plots"] = set()  # no broken images: the page reloads until they exist
    return render(
        request,
        "analysis/leaderboard_detail.html",
        {
            **context,
            "active_run": active,
            "failed_run": failed,
            "plots_pending": drawing,
            "stability_pending": computing,
            "refresh": REFRESH_SECONDS if active or drawing or computing else None,
            "can_run": is_managed_by(request.user, tournament),
            "settings_form": AnalysisSettingsForm(),
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


@require_POST
@login_required
def request_analysis(request, slug):
    tournament = get_object_or_404(Tournament, slug=slug)
    manageable_or_403(request.user, tournament, "Only the tournament's owner and staff analyse it.")
    form = AnalysisSettingsForm(request.POST)
    if not form.is_valid():
        show_on_page(request, UserInputError.from_fields(form.errors), about=tournament.name)
    else:
        try:
            # DeclaredInvalid, NoCampaign and NothingToAnalyse are UserInputErrors.
            run = analyze_tournament(tournament, form.parameters(), user=request.user)
        except UserInputError as refused:
            show_on_page(request, refused, about=tournament.name)
        else:
            flash_run(request, tournament.name, run)
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = "analysis:detail"
        return redirect(target, slug=tournament.slug)
    return redirect(target)


@require_POST
@login_required
def retry_stability(request, slug, run_id):
    """Compute a run's failed stability curve again (the tournament's owner and staff)."""
    tournament = get_object_or_404(Tournament, slug=slug)
    manageable_or_403(request.user, tournament, "Only the tournament's owner and staff analyse it.")
    run = get_object_or_404(
        AnalysisRun.objects.defer("result", "plots"),
        pk=run_id,
        tournament=tournament,
        status=AnalysisRun.Status.SUCCEEDED,
    )
    if stability_part.retry(run):
        messages.info(request, f"{tournament.name}: the stability curve is computed again.")
    else:
        show_on_page(
            request,
            f"the stability curve of analysis {run.pk} has not failed",
            about=tournament.name,
        )
    return redirect("analysis:detail", slug=tournament.slug)


@require_GET
@staff_required
def overview(request):
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
