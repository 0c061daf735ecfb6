"""Tournament pages: list, create (Spot The Bot or A/B), detail with the plan and actions.

Who sees what: a published tournament is public; an unpublished one exists only for its
owner and staff (others get 404, as for a private system). Only the owner and staff act
on a tournament (collect, generate, launch); others who can see it get 403.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation import progress
from annotation.campaigns import TransitionRefused
from annotation.items import TooMuchWork
from annotation.models import Campaign
from annotation.visibility import ways_in
from endpoints.calls import failure_summary
from endpoints.models import BotEndpoint
from evalhub.errors import UserInputError, show_on_page
from evalhub.hf.bundle import dataset_response, refusal
from evalhub.hf.card import card_options
from evalhub.listing import list_page
from evalhub.permissions import is_managed_by, manageable_or_403
from evalhub.quotas import QuotaExceeded, check_quota
from evalhub.uniqueness import SlugTaken, unique_slug

from . import ab_experiment, export_parquet, spot_the_bot_campaign
from .collection import CollectionError
from .forms import ABForm, PartnerSetForm, SpotTheBotForm
from .models import Tournament
from .plan import PlanInvalid, plan_size, speaking_systems
from .researcher_flow import create_partner_set, request_tournament_launch, seed_domains
from .sorting import TOURNAMENT_SORTS


def visible_tournament_or_404(request, slug) -> Tournament:
    queryset = Tournament.objects.visible_to(request.user).select_related(
        "owner", "campaign", "partner_set", "prompt_set", "submission__system"
    )
    return get_object_or_404(queryset, slug=slug)


def managed_tournament(request, slug) -> Tournament:
    tournament = visible_tournament_or_404(request, slug)
    return manageable_or_403(
        request.user, tournament, "Only the owner of a tournament and staff can change it."
    )


@require_GET
def export_dataset(request, slug):
    """The tournament's conversations and judgments as a Hugging Face dataset, for its
    owner and staff (who may download its campaign's judgments too)."""
    tournament = managed_tournament(request, slug)
    try:
        license_id, citation = card_options(request.GET)
        return dataset_response(
            export_parquet.tables(tournament),
            export_parquet.card_text(tournament, license=license_id, citation=citation),
            f"{tournament.slug}",
        )
    except UserInputError as error:
        return refusal(error)


@require_GET
def tournament_list(request):
    tournaments = Tournament.objects.visible_to(request.user).select_related("owner", "campaign")
    context = list_page(
        request,
        tournaments,
        search=["name", "slug", "description", "domain", "owner__username"],
        sorts=TOURNAMENT_SORTS,
        default="-created",
    )
    return render(request, "tournaments/list.html", context)


def _create(request, form_class, title):
    form = form_class(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        try:
            check_quota(request.user, Tournament)
            with unique_slug(Tournament, form.cleaned_data.get("slug", "")):
                tournament = form.save()
        except QuotaExceeded as refused:
            show_on_page(request, refused, form)
        except SlugTaken as taken:
            form.add_error("slug", str(taken))
        else:
            messages.success(request, f"Created {tournament.name}.")
            return redirect(tournament)
    status = 400 if request.method == "POST" else 200
    context = {"form": form, "title": title, "seed_domains": seed_domains(request.user)}
    return render(request, "tournaments/form.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def create_spot_the_bot(request):
    return _create(request, SpotTheBotForm, "New Spot The Bot tournament")


@login_required
@require_http_methods(["GET", "POST"])
def create_ab(request):
    return _create(request, ABForm, "New A/B experiment")


@login_required
@require_http_methods(["GET", "POST"])
def create_partner_set_page(request):
    form = PartnerSetForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            partner_set = create_partner_set(
                user=request.user,
                name=data["name"],
                slug=data["slug"],
                description=data["description"],
                systems=[s.slug for s in data["systems"]],
            )
        except UserInputError as invalid:
            show_on_page(request, invalid, form)
        else:
            messages.success(request, f"Created the partner set {partner_set}.")
            return redirect("tournaments:create-spot-the-bot")
    status = 400 if request.method == "POST" else 200
    context = {"form": form, "title": "New partner set", "seed_domains": []}
    return render(request, "tournaments/form.html", context, status=status)


def _plan_summary(tournament: Tournament) -> dict:
    """What the detail page says about the plan of a Spot The Bot tournament."""
    summary = {"planned": None, "pairings": None, "problem": None}
    if tournament.schedule == Tournament.Schedule.IMPORTED:
        return summary
    try:
        size = plan_size(tournament)  # arithmetic: the plan is never listed in a request
    except PlanInvalid as invalid:
        summary["problem"] = str(invalid)
        return summary
    summary["planned"] = size.conversations
    summary["pairings"] = size.pairings
    return summary


def _ab_plan(tournament: Tournament) -> dict:
    try:
        return {"plan": ab_experiment.plan(tournament), "problem": None}
    except ab_experiment.ExperimentInvalid as invalid:
        return {"plan": None, "problem": str(invalid)}


@require_GET
def tournament_detail(request, slug):
    tournament = visible_tournament_or_404(request, slug)
    campaign = tournament.campaign
    context = {
        "tournament": tournament,
        "can_manage": is_managed_by(request.user, tournament),
        "systems": list(tournament.systems.order_by("slug")),
        "campaign": campaign,
    }
    if campaign is not None:
        context["composition"] = progress.composition(campaign)
        context["progress"] = progress.progress(campaign)
        context["ways_in"] = ways_in(campaign)
    if tournament.kind == Tournament.Kind.SPOT_THE_BOT:
        context["plan"] = _plan_summary(tournament)
        context["collection"] = spot_the_bot_campaign.collection_progress(tournament)
        context["retryable"] = spot_the_bot_campaign.retryable(tournament)
        if context["can_manage"]:
            context["endpoint_failures"] = failure_summary(
                BotEndpoint.objects.filter(
                    system__slug__in=speaking_systems(tournament)
                ).values_list("pk", flat=True)
            )
        if campaign is None:
            context["available"] = spot_the_bot_campaign.available(tournament)
    else:
        context["baselines"] = list(tournament.baselines.order_by("slug"))
        # The cost is shown until the campaign is launched, when it is spent.
        if campaign is None or campaign.status == campaign.Status.DRAFT:
            context.update(_ab_plan(tournament))
    return render(request, "tournaments/detail.html", context)


@login_required
@require_POST
def collect(request, slug):
    tournament = managed_tournament(request, slug)
    try:
        spot_the_bot_campaign.start_collection(tournament)
    except (PlanInvalid, CollectionError) as problem:
        show_on_page(request, problem)
    else:
        _flash_collection(
            request, tournament, "Collection started: conversations appear as bots finish them."
        )
    return redirect(tournament)


def _flash_collection(request, tournament, started: str) -> None:
    """What became of a collection just queued. Without a broker it ran inside this request,
    so it may already be over: say how it ended (and where the reasons are) rather than
    "started" above "90 failed"."""
    progress = spot_the_bot_campaign.collection_progress(tournament)
    if not progress["total"] or progress["pending"] or progress["running"]:
        messages.success(request, started)
    elif progress["failed"]:
        show_on_page(
            request,
            f"{progress['failed']} of {progress['total']} conversations failed "
            f"({progress['complete']} collected). The reasons are under "
            '"Latest endpoint errors" below; fix the endpoint, then retry the failed ones.',
            about=tournament.name,
        )
    else:
        messages.success(
            request, f"Collection finished: {progress['complete']} conversations collected."
        )


@login_required
@require_POST
def retry(request, slug):
    """Collect again the failed dialogues and those whose worker died (owner or staff)."""
    tournament = managed_tournament(request, slug)
    try:
        spot_the_bot_campaign.start_collection(tournament, retry_failed=True)
    except (PlanInvalid, CollectionError) as problem:
        show_on_page(request, problem)
    else:
        _flash_collection(
            request, tournament, "Failed and stalled dialogues are being collected again."
        )
    return redirect(tournament)


@login_required
@require_POST
def generate(request, slug):
    tournament = managed_tournament(request, slug)
    try:
        check_quota(request.user, Campaign)
        if tournament.kind == Tournament.Kind.SPOT_THE_BOT:
            result = spot_the_bot_campaign.generate_campaign(tournament)
            lengths = ", ".join(f"{n} of {k}" for k, n in result.segments.items())
            summary = (
                f"Campaign generated: {result.conversations} conversations gave segments "
                f"({lengths} exchanges), {result.skipped} too short skipped, "
                f"{result.controls} human-human controls, {result.batches} batches."
            )
            if result.controls < result.controls_wanted:
                messages.warning(
                    request,
                    f"Only {result.controls} of the {result.controls_wanted} human-human "
                    f'control segments wanted exist in the domain "{tournament.domain}".',
                )
        else:
            campaign = ab_experiment.build_campaign(tournament)
            summary = f"Campaign generated: {campaign.batches.count()} batches."
    except (
        spot_the_bot_campaign.GenerationInvalid,
        ab_experiment.ExperimentInvalid,
        TooMuchWork,
        QuotaExceeded,
    ) as problem:
        show_on_page(request, problem)
    else:
        messages.success(request, summary)
    return redirect(tournament)


@login_required
@require_POST
def launch(request, slug):
    tournament = managed_tournament(request, slug)
    try:
        outcome = request_tournament_launch(tournament, request.user)
    except TransitionRefused as refused:
        show_on_page(request, refused)
    else:
        if outcome.launched:
            messages.success(request, "The campaign is live: share its link with participants.")
        else:
            messages.info(request, "Launch requested: staff approve it before it goes live.")
    return redirect(tournament)
