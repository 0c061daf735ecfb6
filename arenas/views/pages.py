"""An arena's public pages: the list of arenas and an arena's page (its systems and,
once votes arrive, its leaderboard)."""

import secrets

from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_GET

from evalhub.listing import Sort, list_page

from .. import voters
from ..battles import drawable_entries
from ..leaderboard import stored_result, variant_key
from ..models import Arena, LeaderboardVariant
from ..pairing_state import stopping_status
from .lookup import visible_arena_or_404

ARENA_SORTS = {
    "name": Sort("Name", ("name",)),
    "created": Sort("Created", ("created",)),
}


@require_GET
def arena_list(request):
    arenas = Arena.objects.visible_to(request.user).select_related("owner")
    context = list_page(
        request,
        arenas,
        search=["name", "slug", "description", "owner__username"],
        sorts=ARENA_SORTS,
        default="name",
    )
    return render(request, "arenas/arena_list.html", context)


@require_GET
def arena_detail(request, slug):
    arena = visible_arena_or_404(request, slug)
    manages = arena.is_managed_by(request.user)
    board = stored_result(arena)
    context = {
        "arena": arena,
        "manages": manages,
        "may_vote": voters.may_vote(request.user, request.session, arena),
        "live": len(drawable_entries(arena)) >= 2,
        "entries": arena.entries.select_related("system").order_by("system__name"),
        "battles_voted": arena.battles.exclude(vote="").exclude(source="gold").count(),
        "board": board,
        "ranked": [row for row in board["systems"] if not row["provisional"]],
        "provisional": [row for row in board["systems"] if row["provisional"]],
        "variants": variant_boards(arena, board),
        "computed_at": parse_datetime(board["computed_at"]) if board["computed_at"] else None,
        "win_rates": matrix_rows(board["win_rate"]),
        "pair_battles": matrix_rows(board["pair_battles"]),
        "stopping": stopping_status(arena),
        **plan_context(request, arena, manages),
    }
    return render(request, "arenas/arena_detail.html", context)


@require_GET
def arena_join(request, slug, token):
    """The invitation link: this browser may vote in the arena from now on, whoever sees
    it (a private arena's link lets its holders vote, not see its leaderboard)."""
    arena = get_object_or_404(Arena, slug=slug)
    if arena.voters != Arena.Voters.LINK or not secrets.compare_digest(
        token, arena.invitation_token
    ):
        raise Http404("No such invitation.")
    voters.admit(request.session, arena)
    return redirect("arenas:battle-new", slug=arena.slug)


def matrix_rows(matrix: dict) -> list[tuple[str, list]]:
    """(row system, its cells) of a leaderboard's matrix, for a table."""
    return list(zip(matrix["systems"], matrix["matrix"], strict=True))


def variant_boards(arena: Arena, overall: dict) -> list[dict]:
    """The style-controlled leaderboard and each category's with battles, for the page:
    each row with its move against the overall rank (positive: up)."""
    overall_rank = {row["system"]: row["rank"] for row in overall["systems"]}
    stored = dict(LeaderboardVariant.objects.filter(arena=arena).values_list("key", "result"))
    wanted = [("Style control", variant_key(True))] + [
        (category["name"], variant_key(False, category["name"]))
        for category in overall.get("categories", [])
        if category["battles"]
    ]
    boards = []
    for title, key in wanted:
        result = stored.get(key)
        if not result or not result["systems"]:
            continue
        rows = [
            {**row, "moves": overall_rank[row["system"]] - row["rank"]}
            if row["system"] in overall_rank
            else {**row, "moves": None}
            for row in result["systems"]
        ]
        anchor = "board-" + key.replace(":", "-").replace(",", "-")
        boards.append({"title": title, "anchor": anchor, "result": result, "rows": rows})
    return boards


def plan_context(request, arena, manages: bool) -> dict:
    """The budget planner's section, for the arena's managers (issue 27)."""
    if not manages:
        return {}
    from annotation.forms import plan_section

    from ..planning import plan_for_arena

    form, plan, problem = plan_section(
        request, lambda inputs: plan_for_arena(arena, inputs, None, "local")
    )
    return {"plan_form": form, "plan": plan, "plan_problem": problem}
