"""The owner's moderation page: the arena's flagged battles, why each was flagged, and
confirming or clearing a flag (arenas/flags.py). Only the arena's owner and staff."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from evalhub.errors import UserInputError, show_on_page
from evalhub.listing import Sort, list_page

from .. import flags
from ..forms import FlagReviewForm
from ..models import Battle
from .lookup import managed_arena

SORTS = {"started": Sort("Started", ("started_at",))}
PROMPT_SHOWN_CHARS = 300


@login_required
@require_GET
def arena_flags(request, slug):
    arena = managed_arena(request, slug)
    flagged = flags.flagged_battles(arena)
    context = list_page(
        request,
        flagged,
        search=["voter_ref", "system_a__slug", "system_b__slug"],
        sorts=SORTS,
        default="-started",
    )
    battles = list(context["page"].object_list)
    first_prompts = dict(
        arena.battles.filter(pk__in=[b.pk for b in battles], battle_turns__number=1).values_list(
            "pk", "battle_turns__prompt"
        )
    )
    context["rows"] = [
        {
            "battle": battle,
            "prompt": first_prompts.get(battle.pk, "")[:PROMPT_SHOWN_CHARS],
            "flags": flags.described(battle),
        }
        for battle in battles
    ]
    context.update(
        arena=arena,
        codes=flags.CODES,
        left_out=arena.exclude_flagged,
        voted_flagged=flagged.exclude(vote="").count(),
    )
    return render(request, "arenas/flags.html", context)


@login_required
@require_POST
def flag_review(request, slug, public_id, code):
    arena = managed_arena(request, slug)
    battle = get_object_or_404(Battle, arena=arena, public_id=public_id)
    form = FlagReviewForm(request.POST)
    try:
        if not form.is_valid():
            raise UserInputError("Confirm the flag or clear it.", field="decision")
        decision = form.cleaned_data["decision"]
        flags.review(battle, code, decision, request.user)
    except UserInputError as refused:
        show_on_page(request, refused)
    else:
        done = "Cleared" if decision == flags.CLEARED else "Confirmed"
        messages.success(request, f"{done} the flag {code}.")
    return redirect("arenas:flags", slug=arena.slug)
