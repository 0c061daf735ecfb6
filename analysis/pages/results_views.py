"""Result pages of campaigns and imported studies. They read stored runs only.

- ``/studies/<slug>/``: a study's campaigns and the results of its latest analysis;
- ``/results/campaigns/<slug>/``: an abc_eval, likert or comparative campaign's results;
- ``.../analyze/`` (POST, staff): request an analysis of the study or campaign;
- ``/results/runs/<run>/plots/<name>.svg``: a stored plot of any run the viewer may see.
"""

from django.db.models.fields.json import KeyTextTransform
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_GET, require_POST

from analysis.models import AnalysisRun
from analysis.pages.comparisons import campaign_comparisons
from analysis.pages.results import RESULT_KINDS, dimensional_context, latest_run, may_see_run
from analysis.pages.run_messages import flash_run
from analysis.reports import NothingToAnalyse
from analysis.runs import export_parquet
from analysis.runs.drawing import plots_pending
from analysis.runs.tasks import analyze_campaign, analyze_study
from annotation.models import SIMULATED_WORKER_PREFIX, Campaign, Study
from evalhub.errors import UserInputError, show_on_page
from evalhub.hf.bundle import dataset_response, refusal
from evalhub.hf.card import card_options
from evalhub.permissions import is_managed_by, is_staff, staff_required

REFRESH_SECONDS = 3


def _managed_or_404(request, model, slug, **filters):
    subject = get_object_or_404(model, slug=slug, **filters)
    if not is_managed_by(request.user, subject):
        raise Http404("Not found.")
    return subject


def _page(request, template: str, subject, extra: dict):
    run = latest_run(subject)
    latest = latest_run(subject, succeeded=False) if is_managed_by(request.user, subject) else None
    active = latest if latest is not None and latest.in_progress else None
    failed = latest if latest is not None and latest.status == AnalysisRun.Status.FAILED else None
    context = dimensional_context(run)
    drawing = plots_pending(run)
    if drawing:
        context["plots"] = []  # no broken images: the page reloads until they exist
    return render(
        request,
        template,
        {
            **context,
            **extra,
            "active_run": active,
            "failed_run": failed,
            "plots_pending": drawing,
            "refresh": REFRESH_SECONDS if active or drawing else None,
            "can_run": is_staff(request.user),
        },
    )


@require_GET
def study_detail(request, slug):
    study = _managed_or_404(request, Study, slug)
    campaigns = list(study.campaigns.order_by("task_kind", "slug"))
    return _page(
        request, "analysis/study_detail.html", study, {"study": study, "campaigns": campaigns}
    )


@require_GET
def campaign_results(request, slug):
    campaign = _managed_or_404(request, Campaign, slug, task_kind__in=RESULT_KINDS)
    simulated = campaign.judgments.filter(
        worker__external_id__startswith=SIMULATED_WORKER_PREFIX
    ).count()
    extra = {
        "campaign": campaign,
        "comparisons": campaign_comparisons(campaign),
        "simulated_judgments": simulated,
    }
    return _page(request, "analysis/campaign_results.html", campaign, extra)


def _request(request, subject, analyze, target: str):
    exclude_blocked = request.POST.get("exclude_blocked") in ("on", "1", "true")
    name = str(subject)
    try:
        run = analyze(subject, {"exclude_blocked": exclude_blocked}, user=request.user)
    except NothingToAnalyse as reason:
        show_on_page(request, reason, about=name)
    else:
        flash_run(request, name, run)
    return redirect(target, slug=subject.slug)


@require_POST
@staff_required
def analyze_study_view(request, slug):
    study = get_object_or_404(Study, slug=slug)
    return _request(request, study, analyze_study, "results:study")


@require_POST
@staff_required
def analyze_campaign_view(request, slug):
    campaign = get_object_or_404(Campaign, slug=slug, task_kind__in=RESULT_KINDS)
    return _request(request, campaign, analyze_campaign, "results:campaign")


@require_GET
def run_dataset(request, run_id):
    """The run's results as a Hugging Face dataset (Parquet and its card), for whoever may
    see them."""
    run = get_object_or_404(
        AnalysisRun.objects.select_related(
            "tournament", "campaign", "study", "judge_run__arena"
        ).defer("plots"),
        pk=run_id,
        status=AnalysisRun.Status.SUCCEEDED,
    )
    if not may_see_run(request.user, run):
        raise Http404("No such run.")
    try:
        license_id, citation = card_options(request.GET)
        return dataset_response(
            export_parquet.tables(run),
            export_parquet.card_text(run, license=license_id, citation=citation),
            f"analysis-run-{run.pk}",
        )
    except UserInputError as error:
        return refusal(error)


@require_GET
def run_plot(request, run_id, name):
    run = get_object_or_404(
        AnalysisRun.objects.select_related("tournament", "campaign", "study").defer(
            "result", "plots"
        ),
        pk=run_id,
        status=AnalysisRun.Status.SUCCEEDED,
    )
    if not may_see_run(request.user, run):
        raise Http404("No such plot.")
    svg = (
        AnalysisRun.objects.filter(pk=run.pk)
        .annotate(svg=KeyTextTransform(name, "plots"))
        .values_list("svg", flat=True)
        .first()
    )
    if not svg:
        raise Http404("No such plot.")
    response = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    # The plots are matplotlib's; no script belongs in them, so none may run.
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    public = run.tournament_id is not None and run.tournament.published
    patch_cache_control(response, public=public, private=not public, max_age=3600)
    return response
