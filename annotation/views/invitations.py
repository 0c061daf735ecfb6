"""Invitation links on the campaign page: create N, download the unused ones."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_GET, require_POST

from evalhub.errors import UserInputError, show_on_page
from evalhub.permissions import manageable_or_403

from ..invitations import create_invitations, invitation_lines
from ..models import Campaign


def _managed_campaign(request, slug) -> Campaign:
    campaign = get_object_or_404(Campaign, slug=slug)
    return manageable_or_403(request.user, campaign, "Only the campaign's owner or staff.")


@login_required
@require_POST
def create(request, slug):
    campaign = _managed_campaign(request, slug)
    try:
        count = int(request.POST.get("count", ""))
    except ValueError:
        count = 0
    try:
        made = create_invitations(campaign, count, request.user)
    except UserInputError as error:
        show_on_page(request, error)
    else:
        messages.success(
            request, f"{len(made)} invitation links created: download them below and hand out."
        )
    return redirect("annotation:manage-campaign", slug=campaign.slug)


@login_required
@require_GET
def download(request, slug):
    campaign = _managed_campaign(request, slug)
    base = request.build_absolute_uri("/").rstrip("/")
    response = HttpResponse(
        "".join(line + "\n" for line in invitation_lines(campaign, base)),
        content_type="text/plain; charset=utf-8",
    )
    response["Content-Disposition"] = f'attachment; filename="{campaign.slug}-invitations.txt"'
    return response
