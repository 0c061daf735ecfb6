"""The owner's crowd page of an arena: its gold battles, and its launches on Prolific or
MTurk (each a campaign, whose own pages run the platform side: review, pay, block, the
workers' quality figures, staff's launch decision)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from evalhub.errors import UserInputError, show_on_page

from .. import crowd
from ..crowd_forms import CrowdLaunchForm, GoldBattleForm
from ..crowd_models import GoldBattle
from .lookup import managed_arena


def _page(request, arena, *, gold_form=None, launch_form=None, status=200):
    context = {
        "arena": arena,
        "gold": arena.gold_battles.all(),
        "gold_form": gold_form or GoldBattleForm(),
        "launch_form": launch_form or CrowdLaunchForm(),
        "launches": arena.crowd_launches.select_related("campaign").prefetch_related(
            "campaign__launch_requests"
        ),
    }
    return render(request, "arenas/crowd.html", context, status=status)


@login_required
@require_GET
def crowd_page(request, slug):
    return _page(request, managed_arena(request, slug))


@login_required
@require_POST
def gold_add(request, slug):
    arena = managed_arena(request, slug)
    form = GoldBattleForm(request.POST)
    if not form.is_valid():
        return _page(request, arena, gold_form=form, status=400)
    gold = form.save(commit=False)
    gold.arena = arena
    gold.save()
    messages.success(request, "Added a gold battle; launches from now on mix it in.")
    return redirect("arenas:crowd", slug=arena.slug)


@login_required
@require_POST
def gold_remove(request, slug, pk):
    arena = managed_arena(request, slug)
    get_object_or_404(GoldBattle, arena=arena, pk=pk).delete()
    messages.success(request, "Removed the gold battle (launches made already keep theirs).")
    return redirect("arenas:crowd", slug=arena.slug)


@login_required
@require_POST
def crowd_launch(request, slug):
    arena = managed_arena(request, slug)
    form = CrowdLaunchForm(request.POST)
    if not form.is_valid():
        return _page(request, arena, launch_form=form, status=400)
    try:
        launched = crowd.launch(
            arena, form.setup(), request.user, confirm=form.cleaned_data["confirm"]
        )
    except UserInputError as refused:
        show_on_page(request, refused, form)
        return _page(request, arena, launch_form=form, status=400)
    campaign = launched.campaign
    if launched.request is not None:
        messages.success(
            request,
            f"Launch {campaign.slug} waits for staff's approval: it pays crowdworkers.",
        )
    else:
        messages.success(request, f"Launched {campaign.slug} on {campaign.get_provider_display()}.")
    return redirect("arenas:crowd", slug=arena.slug)
