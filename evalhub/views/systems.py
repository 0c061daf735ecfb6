"""A researcher's systems: register, edit, profile, and submitting responses."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from ..errors import UserInputError, show_on_page
from ..forms import SubmissionForm, SystemForm
from ..hf import catalog
from ..hf.bundle import dataset_response, refusal
from ..hf.card import card_options
from ..importers.problems import InvalidUpload
from ..models import Submission, System
from ..permissions import is_managed_by, manageable_or_403, visible_or_404
from ..profile import system_profile
from ..quotas import QuotaExceeded, check_quota
from ..services import read_upload, submit_responses
from ..uniqueness import SlugTaken, unique_slug


def visible_system_or_404(request, slug) -> System:
    system = get_object_or_404(System.objects.select_related("owner"), slug=slug)
    # Private and embargoed systems do not exist for those who may not see them.
    return visible_or_404(request.user, system, "No such system.")


def editable_system(request, slug) -> System:
    system = visible_system_or_404(request, slug)
    return manageable_or_403(request.user, system, "Only the owner of a system can change it.")


@login_required
@require_http_methods(["GET", "POST"])
def system_create(request):
    form = SystemForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        system = form.save(commit=False)
        system.owner = request.user
        try:
            check_quota(request.user, System)
            with unique_slug(System, system.slug):
                system.save()
        except QuotaExceeded as refused:
            show_on_page(request, refused, form)
        except SlugTaken as taken:
            form.add_error("slug", str(taken))
        else:
            messages.success(request, f"Registered {system.name}. Now submit its responses.")
            return redirect("system-submit", slug=system.slug)
    status = 400 if request.method == "POST" else 200
    return render(
        request, "evalhub/system_form.html", {"form": form, "creating": True}, status=status
    )


@login_required
@require_http_methods(["GET", "POST"])
def system_edit(request, slug):
    system = editable_system(request, slug)
    form = SystemForm(request.POST or None, instance=system)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, "Saved.")
        return redirect(system)
    return render(request, "evalhub/system_form.html", {"form": form, "system": system})


def system_detail(request, slug):
    system = visible_system_or_404(request, slug)
    profile = system_profile(system, request.GET.get("submission"))
    page = Paginator(profile.responses, 25).get_page(request.GET.get("page"))
    return render(
        request,
        "evalhub/system_detail.html",
        {
            "system": system,
            "profile": profile,
            "page": page,
            "can_edit": is_managed_by(request.user, system),
        },
    )


@require_http_methods(["GET"])
def submission_file(request, public_id):
    """The file as uploaded, to whoever may see its system (a private or embargoed
    system's: its owner and staff); there is no public URL for uploads."""
    submission = get_object_or_404(Submission.objects.select_related("system"), public_id=public_id)
    visible_or_404(request.user, submission.system, "No such submission.")
    if not submission.file:
        raise Http404("The file of this submission was not kept.")
    return FileResponse(
        submission.file.open("rb"),
        as_attachment=True,
        filename=submission.original_filename or submission.file.name.rsplit("/", 1)[-1],
        content_type="text/plain; charset=utf-8",
    )


@require_http_methods(["GET"])
def submission_dataset(request, public_id):
    """The responses as a Hugging Face dataset, to whoever may see the system (as the file)."""
    submission = get_object_or_404(
        Submission.objects.select_related("system", "prompt_set"), public_id=public_id
    )
    visible_or_404(request.user, submission.system, "No such submission.")
    try:
        license_id, citation = card_options(request.GET)
        return dataset_response(
            catalog.response_tables(submission),
            catalog.response_card(submission, license=license_id, citation=citation),
            f"{submission.system.slug}-{submission.prompt_set.slug}-responses",
        )
    except UserInputError as error:
        return refusal(error)


def empty_responses_notice(warnings: list[dict]) -> str:
    lines = ", ".join(str(w["line"]) for w in warnings[:20]) + (
        " ..." if len(warnings) > 20 else ""
    )
    count = len(warnings)
    return (
        f"{count} empty response{'s' if count != 1 else ''} (line{'s' if count != 1 else ''} "
        f"{lines}): stored, and counted as zero tokens in the metrics."
    )


@login_required
@require_http_methods(["GET", "POST"])
def system_submit(request, slug):
    system = editable_system(request, slug)
    form = SubmissionForm(
        request.POST or None, request.FILES or None, user=request.user, system=system
    )
    problems, status = None, 200
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            submission = submit_responses(
                system=system,
                prompt_set=form.cleaned_data["prompt_set"],
                data=read_upload(upload),
                filename=upload.name,
                fmt=form.cleaned_data["format"] or None,
                baselines=form.cleaned_data["baselines"],
                user=request.user,
                columns=form.cleaned_data["columns"],
            )
        except QuotaExceeded as refused:
            show_on_page(request, refused, form)
            status = refused.status_code
        except InvalidUpload as invalid:
            problems, status = invalid, 400
        else:
            messages.success(request, "Submission stored; automatic metrics are on their way.")
            if submission.warnings:
                messages.warning(request, empty_responses_notice(submission.warnings))
            return redirect(submission)
    return render(
        request,
        "evalhub/system_submit.html",
        {"system": system, "form": form, "problems": problems},
        status=status,
    )
