"""Tournament pages: list, create (Spot The Bot or A/B), detail with the plan and actions.

Who sees what: a published tournament is public; an unpublished one exists only for its
owner and staff (others get 404, as for a private system). Only the owner and staff act
on a tournament (collect, generate, launch); others who can see it get 403.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation import progress
from annotation.campaigns import TransitionRefused, change_status

from . import ab_experiment, spot_the_bot
from .collection import CollectionError
from .forms import ABForm, SpotTheBotForm
from .models import Tournament
from .plan import PlanInvalid, planned_conversations


def visible_tournament_or_404(request, slug) -> Tournament:
    queryset = Tournament.objects.visible_to(request.user).select_related(
        "owner", "campaign", "partner_set", "prompt_set", "submission__system"
    )
    return get_object_or_404(queryset, slug=slug)


def managed_tournament(request, slug) -> Tournament:
    tournament = visible_tournament_or_404(request, slug)
    if not tournament.is_managed_by(request.user):
        raise PermissionDenied("Only the owner of a tournament and staff can change it.")
    return tournament


@require_GET
def tournament_list(request):
    tournaments = (
        Tournament.objects.visible_to(request.user)
        .select_related("owner", "campaign")
        .order_by("-created")
    )
    return render(request, "tournaments/list.html", {"tournaments": tournaments})


def _create(request, form_class, title):
    form = form_class(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            tournament = form.save()
        messages.success(request, f"Created {tournament.name}.")
        return redirect(tournament)
    status = 400 if request.method == "POST" else 200
    return render(request, "tournaments/form.html", {"form": form, "title": title}, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def create_spot_the_bot(request):
    return _create(request, SpotTheBotForm, "New Spot The Bot tournament")


@login_required
@require_http_methods(["GET", "POST"])
def create_ab(request):
    return _create(request, ABForm, "New A/B experiment")


def _plan_summary(tournament: Tournament) -> dict:
    """What the detail page says about the plan of a Spot The Bot tournament."""
    summary = {"planned": None, "pairings": None, "problem": None}
    if tournament.schedule == Tournament.Schedule.IMPORTED:
        return summary
    try:
        planned = planned_conversations(tournament)
    except PlanInvalid as invalid:
        summary["problem"] = str(invalid)
        return summary
    summary["planned"] = len(planned)
    summary["pairings"] = len({p.speakers for p in planned})
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
        "can_manage": tournament.is_managed_by(request.user),
        "systems": list(tournament.systems.order_by("slug")),
        "campaign": campaign,
    }
    if campaign is not None:
        context["composition"] = progress.composition(campaign)
        context["progress"] = progress.progress(campaign)
    if tournament.kind == Tournament.Kind.SPOT_THE_BOT:
        context["plan"] = _plan_summary(tournament)
        context["collection"] = spot_the_bot.collection_progress(tournament)
        if campaign is None:
            context["available"] = spot_the_bot.available(tournament)
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
        spot_the_bot.start_collection(tournament)
    except (PlanInvalid, CollectionError) as problem:
        messages.error(request, str(problem))
    else:
        messages.success(request, "Collection started: conversations appear as bots finish them.")
    return redirect(tournament)


@login_required
@require_POST
def generate(request, slug):
    tournament = managed_tournament(request, slug)
    try:
        if tournament.kind == Tournament.Kind.SPOT_THE_BOT:
            result = spot_the_bot.generate_campaign(tournament)
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
    except (spot_the_bot.GenerationInvalid, ab_experiment.ExperimentInvalid) as problem:
        messages.error(request, str(problem))
    else:
        messages.success(request, summary)
    return redirect(tournament)


def launch_campaign(tournament: Tournament):
    """Set the tournament's campaign live through its crowd provider's launch hook."""
    with transaction.atomic():
        campaign = change_status(tournament.campaign, "launch")
        Tournament.objects.filter(pk=tournament.pk).update(status=Tournament.Status.ANNOTATING)
    return campaign


@login_required
@require_POST
def launch(request, slug):
    tournament = managed_tournament(request, slug)
    if tournament.campaign is None:
        messages.error(request, "Generate the campaign before launching it.")
        return redirect(tournament)
    try:
        launch_campaign(tournament)
    except TransitionRefused as refused:
        messages.error(request, str(refused))
    else:
        messages.success(request, "The campaign is live: share its link with participants.")
    return redirect(tournament)
