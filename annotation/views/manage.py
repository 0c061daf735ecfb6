"""Staff pages for campaigns: list, create, detail with launch/pause/finish, preview, export."""

import json

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from .. import export, progress
from ..campaigns import (
    ACTIONS,
    SetupInvalid,
    TransitionRefused,
    allowed_actions,
    change_status,
    create_campaign,
)
from ..crowd import PROVIDERS
from ..forms import CampaignForm, kind_summaries
from ..models import Campaign, Item
from ..tasks.base import PayloadInvalid
from .access import staff_required
from .worker import task_page_context


@staff_required
@require_GET
def campaign_list(request):
    campaigns = progress.with_progress(Campaign.objects.order_by("-created"))
    page = Paginator(campaigns, 50).get_page(request.GET.get("page"))
    return render(request, "annotation/manage/campaign_list.html", {"page": page})


@staff_required
@require_http_methods(["GET", "POST"])
def campaign_create(request):
    form = CampaignForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        campaign = form.save(commit=False)
        campaign.task_config = form.cleaned_data["task_config"]
        campaign.owner = request.user
        campaign.status = Campaign.Status.DRAFT
        try:
            setup = create_campaign(
                campaign,
                form.source,
                gold_per_batch=form.cleaned_data["gold_per_batch"],
                user=request.user,
            )
        except SetupInvalid as invalid:
            for field, problems in invalid.errors.items():
                for problem in problems:
                    form.add_error(field if field in form.fields else None, problem)
        else:
            messages.success(request, _summary(setup))
            return redirect(setup.campaign)
    status = 400 if form.errors else 200
    return render(
        request,
        "annotation/manage/campaign_form.html",
        {"form": form, "kinds": kind_summaries()},
        status=status,
    )


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _summary(setup) -> str:
    parts = [
        f"Created “{setup.campaign.title}” as a draft: {_count(setup.shown, 'item', 'items')} "
        f"in {_count(setup.batches, 'batch', 'batches')}"
    ]
    if setup.gold_copies:
        parts.append(f"{_count(setup.gold_copies, 'gold copy', 'gold copies')} mixed in")
    parts.append(_count(setup.automatic, "automatic item", "automatic items"))
    if setup.training:
        parts.append(_count(setup.training, "training item", "training items"))
    if setup.imported is not None:
        parts.append(
            f"{_count(setup.skipped_conversations, 'conversation', 'conversations')} skipped "
            f"(no item); {setup.imported.created} imported, "
            f"{setup.imported.unchanged} already in the catalog"
        )
    return ", ".join(parts) + f". Cost when every slot is paid: {setup.cost:.2f}."


@staff_required
@require_GET
def campaign_detail(request, slug):
    campaign = get_object_or_404(Campaign.objects.select_related("owner"), slug=slug)
    return render(
        request,
        "annotation/manage/campaign_detail.html",
        {
            "campaign": campaign,
            "composition": progress.composition(campaign),
            "progress": progress.progress(campaign),
            "shapes": progress.item_shapes(campaign),
            "actions": allowed_actions(campaign),
            "start_link": request.build_absolute_uri(campaign.start_url()),
            "provider_installed": campaign.provider in PROVIDERS,
            "config_json": json.dumps(campaign.task_config, indent=2, ensure_ascii=False),
        },
    )


@staff_required
@require_POST
def campaign_action(request, slug, action):
    campaign = get_object_or_404(Campaign, slug=slug)
    if action not in ACTIONS:
        return HttpResponse(status=404)
    try:
        campaign = change_status(campaign, action)
    except TransitionRefused as refused:
        messages.error(request, str(refused))
    else:
        messages.success(request, f"The campaign is now {campaign.get_status_display().lower()}.")
    return redirect(campaign)


@staff_required
@require_http_methods(["GET", "POST"])
def campaign_preview(request, slug, position):
    """One item as a worker sees it. Submitting checks the answer and stores nothing."""
    campaign = get_object_or_404(Campaign, slug=slug)
    item = get_object_or_404(Item, campaign=campaign, position=position)
    kind = campaign.kind
    config = kind.clean_config(campaign.task_config)
    context = {"campaign": campaign, "item": item}
    if item.auto_payload is not None:
        context["auto_json"] = json.dumps(item.auto_payload, indent=2, ensure_ascii=False)
        return render(request, "annotation/manage/preview_result.html", context)
    if request.method == "POST":
        try:
            payload = kind.parse_payload(item, config, request.POST)
        except PayloadInvalid as invalid:
            return _preview_page(request, campaign, item, request.POST, invalid.errors, status=400)
        gold = kind.score_gold(item, payload) if item.gold else None
        return render(
            request,
            "annotation/manage/preview_result.html",
            {
                **context,
                "payload_json": json.dumps(payload, indent=2, ensure_ascii=False),
                "gold_result": gold,
            },
        )
    return _preview_page(request, campaign, item)


def _preview_page(request, campaign, item, values=None, errors=None, status=200):
    if item.batch_id is not None:
        total = Item.objects.filter(batch_id=item.batch_id).count()
        position = item.order_in_batch + 1
    else:
        total = position = 1
    context = task_page_context(campaign, item, position, total, values=values, errors=errors)
    # The worker's page, but its answers come back here, where they are checked and never
    # stored.
    context["form_action"] = reverse(
        "annotation:manage-campaign-preview", args=[campaign.slug, item.position]
    )
    return render(request, "annotation/assignment.html", context, status=status)


@staff_required
@require_GET
def campaign_export(request, slug, fmt):
    campaign = get_object_or_404(Campaign, slug=slug)
    rows = export.export_rows(campaign)
    if fmt == "csv":
        lines, content_type = export.csv_lines(rows), "text/csv; charset=utf-8"
    else:
        lines, content_type = export.jsonl_lines(rows), "application/x-ndjson; charset=utf-8"
    response = StreamingHttpResponse(lines, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{campaign.slug}-judgments.{fmt}"'
    return response
