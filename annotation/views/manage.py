"""Campaign pages: list and create (staff); detail with launch/pause/finish, preview and
export (staff and the campaign's owner); launch requests and staff's decisions."""

import json
from dataclasses import replace
from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from evalhub.errors import UserInputError, show_on_page
from evalhub.hf.bundle import dataset_response, refusal
from evalhub.hf.card import card_options
from evalhub.listing import Sort, list_page
from evalhub.permissions import is_staff, manageable_or_403, managed_by, staff_required
from evalhub.quotas import QuotaExceeded, check_quota

from .. import export, export_parquet, progress
from ..campaigns import (
    ACTIONS,
    PLATFORMS,
    SetupInvalid,
    TransitionRefused,
    allowed_actions,
    change_status,
    create_campaign,
    decide_launch,
    launch_campaign,
    may_launch,
    pays_crowdworkers,
    request_launch,
)
from ..chat import chatbot_health
from ..costs import amount_paid, campaign_costs, campaign_figures
from ..crowd import PROVIDERS, get_provider
from ..crowd.base import CrowdError
from ..forms import CampaignForm, CrowdSettingsForm, kind_summaries
from ..invitations import invitation_counts
from ..kinds.base import PayloadInvalid
from ..launch_checks import launch_problems
from ..models import Campaign, Item, Judgment
from ..oversight import confirm_context, oversight, preview_nav
from ..services import safe_score
from ..visibility import is_public, ways_in
from .worker import task_page_context

CAMPAIGN_SORTS = {
    "created": Sort("Created", ("created",)),
    "title": Sort("Title", ("title",)),
    "status": Sort("Status", ("status",)),
    "judgments": Sort("Judgments", ("n_judgments",)),
}

JUDGMENT_SORTS = {
    "submitted": Sort("Submitted", ("submitted_at",)),
    "worker": Sort("Worker", ("worker__external_id",)),
    "position": Sort("Item", ("item__position",)),
    "gold": Sort("Gold correct", ("gold_correct",)),
}


def campaign_manager_required(view):
    """Staff, or the campaign's owner (a researcher running their own campaign); anonymous
    visitors go to the login page, others get 403. The view receives the campaign."""

    @wraps(view)
    def wrapper(request, slug, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        campaign = get_object_or_404(Campaign.objects.select_related("owner"), slug=slug)
        manageable_or_403(request.user, campaign, "Only staff and the campaign's owner may.")
        return view(request, campaign, *args, **kwargs)

    return wrapper


@login_required
@require_GET
def campaign_list(request):
    """Every campaign for staff; a researcher's own ("My campaigns")."""
    context = list_page(
        request,
        progress.with_progress(managed_by(Campaign.objects.all(), request.user)),
        search=["title", "slug", "task_kind", "status"],
        sorts=CAMPAIGN_SORTS,
        default="-created",
    )
    context["mine"] = not is_staff(request.user)
    return render(request, "annotation/manage/campaign_list.html", context)


@campaign_manager_required
@require_GET
def campaign_judgments(request, campaign):
    """The campaign's judgments, searchable by worker id, item position and the systems the
    item shows (its `meta`: system slugs, conversation ids); one query for the page's rows
    whatever the campaign's size."""
    judgments = Judgment.objects.filter(campaign=campaign).select_related("worker", "item")
    context = list_page(
        request,
        judgments,
        search=["worker__external_id", "item__position", "item__content__meta"],
        sorts=JUDGMENT_SORTS,
        default="-submitted",
    )
    context["campaign"] = campaign
    return render(request, "annotation/manage/judgments.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def campaign_create(request):
    """Any researcher creates a campaign of any kind over what they may see (their own
    systems, submissions and conversations, and public ones); launching one that pays
    crowdworkers still waits for staff (a launch request)."""
    form = CampaignForm(request.POST or None, request.FILES or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        campaign = form.save(commit=False)
        campaign.task_config = form.cleaned_data["task_config"]
        campaign.owner = request.user
        campaign.status = Campaign.Status.DRAFT
        try:
            check_quota(request.user, Campaign)
            setup = create_campaign(
                campaign,
                form.source,
                gold_per_batch=form.cleaned_data["gold_per_batch"],
                user=request.user,
            )
        except (QuotaExceeded, SetupInvalid) as refused:
            show_on_page(request, refused, form)
        else:
            messages.success(request, _summary(setup))
            return redirect(setup.campaign)
    status = 400 if form.errors else 200
    return render(
        request,
        "annotation/manage/campaign_form.html",
        {"form": form, "kinds": kind_summaries(), "files_sent": len(request.FILES)},
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


def _platform_estimate(campaign, user):
    """The cost on the campaign's platform with the account balance (staff only: the
    account is the operator's), or why there is none. This asks the platform, so only for
    a campaign on one that is not finished."""
    if campaign.provider not in PLATFORMS or campaign.status == Campaign.Status.FINISHED:
        return None, ""
    try:
        estimate = get_provider(campaign.provider).estimate(campaign)
    except CrowdError as problem:
        return None, str(problem)
    return (estimate if is_staff(user) else replace(estimate, balance=None)), ""


def _launch_problems(campaign, estimate) -> list[str]:
    """What a campaign on a platform still lacks, listed before anyone clicks Launch."""
    if campaign.provider not in PLATFORMS or campaign.status not in (
        Campaign.Status.DRAFT,
        Campaign.Status.PAUSED,
    ):
        return []
    return launch_problems(campaign, estimate)


@require_GET
@campaign_manager_required
def campaign_detail(request, campaign):
    estimate, estimate_problem = _platform_estimate(campaign, request.user)
    public = is_public(campaign)
    done = progress.progress(campaign)
    # One query of paid batches and bonuses serves both the oversight and the cost panel.
    figures = campaign_figures(campaign)
    budgets, failures = chatbot_health(campaign)
    return render(
        request,
        "annotation/manage/campaign_detail.html",
        {
            "campaign": campaign,
            "composition": progress.composition(campaign),
            "progress": done,
            "oversight": oversight(campaign, done=done, paid=amount_paid(campaign, figures)),
            "costs": campaign_costs(campaign, figures),
            "shapes": progress.item_shapes(campaign),
            "actions": allowed_actions(campaign),
            "start_link": request.build_absolute_uri(campaign.start_url()),
            "provider_installed": campaign.provider in PROVIDERS,
            "config_json": json.dumps(campaign.task_config, indent=2, ensure_ascii=False),
            **invitation_counts(campaign),
            "estimate": estimate,
            "estimate_problem": estimate_problem,
            "pays": pays_crowdworkers(campaign),
            "may_launch": may_launch(request.user, campaign),
            "is_staff": is_staff(request.user),
            **pairing_context(request, campaign),
            "launch_request": campaign.launch_requests.select_related(
                "requested_by", "decided_by"
            ).first(),
            "public": public,
            "ways_in": ways_in(campaign, public=public),
            "settings_form": (
                CrowdSettingsForm(instance=campaign)
                if campaign.status == Campaign.Status.DRAFT
                else None
            ),
            "launch_problems": _launch_problems(campaign, estimate),
            "chat_budgets": budgets,
            "endpoint_failures": failures,
        },
    )


@require_POST
@campaign_manager_required
def campaign_action(request, campaign, action):
    if action not in ACTIONS:
        return HttpResponse(status=404)
    if request.POST.get("confirmed") != "yes":
        # The page's button asks first; the confirmation posts again with confirmed=yes,
        # carrying the ticked "spends real money" (or asking for it there).
        context = confirm_context(campaign, action)
        context["spends_money"] = action == "launch" and pays_crowdworkers(campaign)
        context["money_confirmed"] = request.POST.get("confirm") == "yes"
        return render(request, "annotation/manage/confirm_action.html", context)
    try:
        if action == "launch" and not may_launch(request.user, campaign):
            raise TransitionRefused(
                "This campaign pays crowdworkers: request a launch, and staff approve it."
            )
        if action == "launch" and campaign.provider in PLATFORMS:
            confirm = request.POST.get("confirm") == "yes"
            campaign = launch_campaign(campaign, actor=request.user, confirm=confirm)
        else:
            campaign = change_status(campaign, action)
    except TransitionRefused as refused:
        show_on_page(request, refused)
    else:
        messages.success(request, f"The campaign is now {campaign.get_status_display().lower()}.")
    return redirect(campaign)


@require_http_methods(["GET", "POST"])
@campaign_manager_required
def campaign_preview(request, campaign, position):
    """One item as a worker sees it. Submitting checks the answer and stores nothing."""
    item = get_object_or_404(Item, campaign=campaign, position=position)
    kind = campaign.kind
    config = kind.clean_config(campaign.task_config)
    context = {"campaign": campaign, "item": item, "preview_nav": preview_nav(campaign, item)}
    if item.auto_payload is not None:
        context["auto_json"] = json.dumps(item.auto_payload, indent=2, ensure_ascii=False)
        return render(request, "annotation/manage/preview_result.html", context)
    if request.method == "POST":
        try:
            payload = kind.parse_payload(item, config, request.POST)
        except PayloadInvalid as invalid:
            return _preview_page(request, campaign, item, request.POST, invalid.errors, status=400)
        gold = safe_score(campaign, item, payload) if item.gold else None
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
    context["preview_nav"] = preview_nav(campaign, item)
    return render(request, "annotation/assignment.html", context, status=status)


@require_GET
@campaign_manager_required
def campaign_export(request, campaign, fmt):
    # The platforms' worker and submission ids are for staff only.
    staff = is_staff(request.user)
    if fmt == "csv":
        lines = export.csv_lines(export.export_csv_rows(campaign, platform_ids=staff))
        content_type = "text/csv; charset=utf-8"
    else:
        lines = export.jsonl_lines(export.export_rows(campaign, platform_ids=staff))
        content_type = "application/x-ndjson; charset=utf-8"
    response = StreamingHttpResponse(lines, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{campaign.slug}-judgments.{fmt}"'
    return response


@require_GET
@campaign_manager_required
def campaign_export_dataset(request, campaign):
    """The judgments as a Hugging Face dataset (Parquet and its card, zipped)."""
    staff = is_staff(request.user)
    try:
        license_id, citation = card_options(request.GET)
        return dataset_response(
            export_parquet.tables(campaign, platform_ids=staff),
            export_parquet.card_text(campaign, license=license_id, citation=citation),
            f"{campaign.slug}-judgments",
        )
    except UserInputError as error:
        return refusal(error)


@require_POST
@campaign_manager_required
def launch_request(request, campaign):
    """The owner asks staff to launch a campaign that pays crowdworkers."""
    try:
        request_launch(campaign, request.user)
    except UserInputError as refused:
        show_on_page(request, refused)
    else:
        messages.success(request, "Launch requested: staff will approve or decline it.")
    return redirect(campaign)


@staff_required
@require_POST
def launch_decision(request, slug):
    """Staff approve (which launches the campaign and spends its money) or decline with a
    reason the owner reads."""
    campaign = get_object_or_404(Campaign, slug=slug)
    approve = request.POST.get("decision") == "approve"
    if approve and request.POST.get("confirm") != "yes":
        show_on_page(request, "Tick the confirmation: approving launches it and pays workers.")
        return redirect(campaign)
    try:
        decide_launch(campaign, request.user, approve, request.POST.get("reason", ""))
    except UserInputError as refused:
        show_on_page(request, refused)
    else:
        messages.success(
            request, "Approved: the campaign is launched." if approve else "Launch declined."
        )
    return redirect(campaign)


@require_POST
@campaign_manager_required
def crowd_settings(request, campaign):
    """The owner changes the pay and limits of a campaign that has not launched yet."""
    if campaign.status != Campaign.Status.DRAFT:
        show_on_page(request, "The pay and limits are fixed once a campaign has launched.")
        return redirect(campaign)
    form = CrowdSettingsForm(request.POST, instance=campaign)
    if form.is_valid():
        form.save()
        messages.success(request, "Saved the campaign's pay and limits.")
    else:
        show_on_page(request, UserInputError.from_fields(form.errors))
    return redirect(campaign)


# Pairing (issue 27): allocation and stopping settings, and the budget planner --------------


def pairing_context(request, campaign) -> dict:
    from .. import pairing
    from ..forms import PairingSettingsForm, plan_section
    from ..planning import plan_for_campaign

    if not pairing.supported(campaign):
        return {}
    form, plan, problem = plan_section(request, lambda inputs: plan_for_campaign(campaign, inputs))
    return {
        "stopping": pairing.stopping_status(campaign),
        "pairing_form": PairingSettingsForm(instance=campaign),
        "plan_form": form,
        "plan": plan,
        "plan_problem": problem,
    }


@require_POST
@campaign_manager_required
def campaign_pairing(request, campaign):
    """The owner sets how slots are handed out and when the campaign stops by itself."""
    from .. import pairing
    from ..forms import PairingSettingsForm

    if not pairing.supported(campaign):
        return HttpResponse(status=404)
    form = PairingSettingsForm(request.POST, instance=campaign)
    if not form.is_valid():
        for field, errors in form.errors.items():
            show_on_page(request, f"{field}: {' '.join(errors)}")
        return redirect(campaign)
    form.save()
    messages.success(request, "Allocation and stopping saved.")
    return redirect(campaign)
