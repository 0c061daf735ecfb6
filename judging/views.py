"""The judges' pages: register a judge, manage rubrics, start, watch and pause runs.

Judges are private: only their owner and staff see them (404 for anyone else, so nothing
leaks), and only they start runs with them. Rubrics are prompts: every signed-in user
reads them and writes new ones; a version is revised by its author or staff.
"""

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from endpoints.calls import failure_summary
from endpoints.forms import ModelEndpointForm
from endpoints.probe import url_warning
from evalhub.errors import UserInputError, show_on_page
from evalhub.hf.bundle import dataset_response, refusal
from evalhub.hf.card import card_options

from . import export_parquet, judges, rubric_versions, runs
from .forms import JudgeForm, RubricForm, RubricReviseForm, RunForm
from .models import AutomaticJudgment, Judge, JudgeRun, Rubric

JUDGMENTS_PER_PAGE = 50


def managed_judge(request, slug) -> Judge:
    judge = get_object_or_404(Judge.objects.select_related("endpoint", "owner"), slug=slug)
    if not judge.is_managed_by(request.user):
        raise Http404("No such judge.")
    return judge


def managed_run(request, pk) -> JudgeRun:
    run = get_object_or_404(
        JudgeRun.objects.select_related(
            "judge__endpoint", "judge__owner", "rubric", "campaign", "arena"
        ),
        pk=pk,
    )
    if not run.is_managed_by(request.user):
        raise Http404("No such run.")
    return run


@login_required
def judge_list(request):
    judges = Judge.objects.managed_by(request.user).select_related("endpoint", "owner")
    return render(request, "judging/judge_list.html", {"judges": judges})


@login_required
@require_http_methods(["GET", "POST"])
def judge_create(request):
    """The judge and its own endpoint, on one form: no system to register first."""
    form = JudgeForm(request.POST or None)
    endpoint_form = ModelEndpointForm(request.POST or None, owner=request.user)
    if request.method == "POST" and all([form.is_valid(), endpoint_form.is_valid()]):
        try:
            judge = judges.register(
                owner=request.user,
                slug=form.cleaned_data["slug"],
                name=form.cleaned_data["name"],
                endpoint=endpoint_form.save(commit=False),
            )
        except UserInputError as refused:
            show_on_page(request, refused, form)
        else:
            messages.success(request, f"Registered the judge {judge.name}.")
            if warning := url_warning(judge.endpoint.url):
                messages.warning(request, warning)
            return redirect(judge)
    status = 400 if request.method == "POST" else 200
    context = {"form": form, "endpoint_form": endpoint_form}
    return render(request, "judging/judge_form.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def judge_detail(request, slug):
    judge = managed_judge(request, slug)
    form = RunForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        try:
            run = runs.start(
                request.user,
                judge,
                form.cleaned_data["rubric"],
                form.cleaned_data["campaign"],
                arena=form.cleaned_data["arena"],
                concurrency=form.cleaned_data["concurrency"],
                max_attempts=form.cleaned_data["max_attempts"],
            )
        except UserInputError as error:
            for problem in error.problems:
                form.add_error(
                    problem.field if problem.field in form.fields else None, problem.message
                )
        else:
            _flash_started(request, run)
            return redirect(run)
    context = {
        "judge": judge,
        "form": form,
        "runs": runs.with_output_paths(judge.runs.select_related("campaign", "arena", "rubric")),
    }
    status = 400 if request.method == "POST" else 200
    return render(request, "judging/judge_detail.html", context, status=status)


@login_required
def rubric_list(request):
    rubrics = Rubric.objects.select_related("owner")
    return render(request, "judging/rubric_list.html", {"rubrics": rubrics})


@login_required
@require_http_methods(["GET", "POST"])
def rubric_create(request):
    initial = {}
    source = Rubric.objects.filter(pk=request.GET.get("from") or 0).first()
    if source is not None:
        initial = {"task_kind": source.task_kind, "instructions": source.instructions}
    form = RubricForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        rubric = form.save(request.user)
        if rubric is not None:
            messages.success(request, f"Saved {rubric}.")
            return redirect("judging:rubric-detail", pk=rubric.pk)
    status = 400 if request.method == "POST" else 200
    return render(request, "judging/rubric_form.html", {"form": form}, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def rubric_detail(request, pk):
    rubric = get_object_or_404(Rubric.objects.select_related("owner"), pk=pk)
    # Staff revise any rubric, a researcher the ones they wrote.
    may_revise = rubric.is_managed_by(request.user)
    form = RubricReviseForm(request.POST or None, initial={"instructions": rubric.instructions})
    if request.method == "POST":
        if not may_revise:
            raise PermissionDenied("Only the rubric's author and staff revise it.")
        if form.is_valid():
            revised = form.save(rubric, request.user)
            if revised is not None:
                if revised.pk == rubric.pk:
                    messages.success(request, f"Saved {revised}.")
                else:
                    messages.success(request, f"{rubric} is used by a run: saved as {revised}.")
                return redirect("judging:rubric-detail", pk=revised.pk)
    context = {
        "rubric": rubric,
        "form": form,
        "may_revise": may_revise,
        "used": rubric_versions.is_used(rubric),
        "versions": Rubric.objects.filter(task_kind=rubric.task_kind, name=rubric.name),
    }
    status = 400 if request.method == "POST" else 200
    return render(request, "judging/rubric_detail.html", context, status=status)


@login_required
def run_detail(request, pk):
    run = managed_run(request, pk)
    judgments = (
        AutomaticJudgment.objects.filter(run=run)
        .select_related("item", "battle")
        .order_by("item__position", "battle__started_at", "pk")
    )
    shown = request.GET.get("status")
    if shown in AutomaticJudgment.Status.values:
        judgments = judgments.filter(status=shown)
    page = Paginator(judgments, JUDGMENTS_PER_PAGE).get_page(request.GET.get("page"))
    for judgment in page:
        judgment.payload_json = json.dumps(judgment.payload, ensure_ascii=False)
    context = {
        "run": run,
        "progress": runs.progress(run),
        "paths": runs.output_paths(run),
        "page": page,
        "shown": shown,
        "query": f"status={shown}" if shown in AutomaticJudgment.Status.values else "",
        "endpoint_failures": failure_summary([run.judge.endpoint_id]),
    }
    return render(request, "judging/run_detail.html", context)


@login_required
@require_GET
def run_export_dataset(request, pk):
    """The run's automatic judgments as a Hugging Face dataset (Parquet and its card)."""
    run = managed_run(request, pk)
    try:
        license_id, citation = card_options(request.GET)
        return dataset_response(
            export_parquet.tables(run),
            export_parquet.card_text(run, license=license_id, citation=citation),
            f"judge-run-{run.pk}",
        )
    except UserInputError as error:
        return refusal(error)


@login_required
def run_progress(request, pk):
    """The numbers the run page's script refreshes (static/js/judge_progress.js)."""
    return JsonResponse(runs.progress(managed_run(request, pk)))


@login_required
@require_POST
def run_pause(request, pk):
    return _change(request, managed_run(request, pk), runs.pause, "Paused the run.")


@login_required
@require_POST
def run_resume(request, pk):
    return _change(request, managed_run(request, pk), runs.resume, "The run is queued again.")


def _change(request, run, change, done: str):
    try:
        change(run)
    except UserInputError as error:
        show_on_page(request, error)
    else:
        messages.success(request, done)
    return redirect(run)


def _flash_started(request, run: JudgeRun) -> None:
    """What became of a run just queued. Without a broker it ran inside this request, so it
    may already be over: say how it ended rather than "queued"."""
    run.refresh_from_db()
    if run.status == JudgeRun.Status.DONE:
        messages.success(
            request,
            f"The run finished: {run.items_done} judged, {run.items_failed} failed"
            f"{f', {run.items_skipped} skipped' if run.items_skipped else ''}.",
        )
    elif run.status in (JudgeRun.Status.FAILED, JudgeRun.Status.PAUSED):
        reason = f": {run.last_error}" if run.last_error else "."
        show_on_page(request, f"The run stopped ({run.get_status_display().lower()}){reason}")
    else:
        messages.success(request, "The run is queued.")
