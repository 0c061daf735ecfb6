"""A researcher's systems: register, edit, profile, and submitting responses."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from ..forms import SubmissionForm, SystemForm
from ..importers.problems import InvalidUpload
from ..models import System
from ..profile import system_profile
from ..services import read_upload, submit_responses


def visible_system_or_404(request, slug) -> System:
    system = get_object_or_404(System.objects.select_related("owner"), slug=slug)
    if not system.is_visible_to(request.user):
        # Private and embargoed systems do not exist for those who may not see them.
        raise Http404("No such system.")
    return system


def editable_system(request, slug) -> System:
    system = visible_system_or_404(request, slug)
    if not system.is_editable_by(request.user):
        raise PermissionDenied("Only the owner of a system can change it.")
    return system


@login_required
@require_http_methods(["GET", "POST"])
def system_create(request):
    form = SystemForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        system = form.save(commit=False)
        system.owner = request.user
        system.save()
        messages.success(request, f"Registered {system.name}. Now submit its responses.")
        return redirect("system-submit", slug=system.slug)
    return render(request, "evalhub/system_form.html", {"form": form, "creating": True})


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
            "can_edit": system.is_editable_by(request.user),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def system_submit(request, slug):
    system = editable_system(request, slug)
    form = SubmissionForm(
        request.POST or None, request.FILES or None, user=request.user, system=system
    )
    problems = None
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
            )
        except InvalidUpload as invalid:
            problems = invalid
        else:
            messages.success(request, "Submission stored; automatic metrics are on their way.")
            return redirect(submission)
    status = 400 if problems else 200
    return render(
        request,
        "evalhub/system_submit.html",
        {"system": system, "form": form, "problems": problems},
        status=status,
    )
