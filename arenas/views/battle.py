"""The battle pages: a voter writes a prompt, two anonymous models answer side by side
(streamed), the voter goes on for more turns, votes, and only then sees who was who.

With JavaScript (static/arenas/battle.js) the page posts each prompt with `fetch` and is
answered with the battle as JSON; it then opens one server-sent event stream per side
(`answer_stream`), each with its own stop button (`answer_stop`). Without JavaScript the
same forms post plainly: the server asks both models, waits for both whole answers and
shows the page again (the degraded, non-streaming form).

The views that wait on models are async: under ASGI (the production ``arena`` service)
they hold no thread while a model writes. Who may vote is arenas/voters.py's rule; a
battle is its voter's alone: anybody else gets 404, before and after the vote.
"""

from __future__ import annotations

import asyncio
from functools import partial

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_POST

from endpoints.dbcalls import database
from endpoints.patience import patiently
from endpoints.relay import drain
from evalhub.errors import UserInputError, show_on_page

from .. import battles, crowd, voters
from ..answering import answer_events, shown_error
from ..forms import PromptForm, VoteForm
from ..models import Arena, Battle, BattleAnswer
from ..presenting import battle_view
from ..relay import event_stream_response
from .framing import for_crowd

# Seconds the stop button waits for its stream to store the answer.
STOP_WAIT_SECONDS = 5.0
SIDES = {"a", "b"}


class NotAVoter(Exception):
    """The visitor may not vote here: `response` says why (login, 403)."""

    def __init__(self, response):
        self.response = response


def wants_json(request) -> bool:
    return request.headers.get("Accept", "").startswith("application/json")


def admitted_arena(request, user, slug) -> Arena:
    """The arena, when `user` (with this session) may vote in it; else 404, 403 or login."""
    arena = get_object_or_404(Arena, slug=slug)
    if voters.may_vote(user, request.session, arena):
        return arena
    if arena.voters == Arena.Voters.SIGNED_IN and not user.is_authenticated:
        raise NotAVoter(redirect_to_login(request.get_full_path()))
    if not arena.is_visible_to(user):
        raise Http404("Not found.")
    raise PermissionDenied("This arena takes votes from people it invited only.")


def own_battle(request, user, slug, public_id) -> Battle:
    """The voter's own battle in an arena they may vote in; 404 for anybody else's."""
    arena = admitted_arena(request, user, slug)
    battle = (
        Battle.objects.select_related("arena", "system_a", "system_b")
        .filter(arena=arena, public_id=public_id)
        .first()
    )
    if battle is None or not voters.owns(user, request.session, battle):
        raise Http404("Not found.")
    return battle


def _refused(request, error: UserInputError, fallback: str):
    """A refusal as the page's message, or in the API's one error shape (400, or 429 with
    Retry-After for a voter's limits: arenas/voter_limits.py)."""
    if wants_json(request):
        response = JsonResponse(error.as_dict(), status=error.status_code)
        if error.retry_after is not None:
            response["Retry-After"] = str(error.retry_after)
        return response
    if getattr(request, "annotation_campaign", None) is not None:
        # A crowd voter reads the problem, not the name of the form's field it is about.
        for problem in error.shown:
            messages.error(request, problem.message)
    else:
        show_on_page(request, error)
    return redirect(fallback)


async def answer_both(battle: Battle, number: int) -> None:
    """Both sides' whole answers to turn `number` (the page without JavaScript)."""
    ids = await sync_to_async(list)(
        BattleAnswer.objects.filter(turn__battle=battle, turn__number=number).values_list(
            "pk", flat=True
        )
    )
    await asyncio.gather(*(drain(partial(answer_events, pk)) for pk in ids))


async def _answered(request, battle: Battle, number: int):
    if wants_json(request):
        return JsonResponse(await sync_to_async(battle_view)(battle))
    await answer_both(battle, number)
    return redirect(battle.get_absolute_url())


# Pages ----------------------------------------------------------------------------------------


def _page(request, arena: Arena) -> dict:
    # A crowd voter's page is a worker page (their campaign's bar, language, no site menu).
    campaign = getattr(request, "annotation_campaign", None)
    return {
        "sides": [("a", "A"), ("b", "B")],
        "sees_arena": arena.is_visible_to(request.user),
        "campaign": campaign,
        "base_template": "annotation/base_worker.html" if campaign else "base.html",
    }


@require_GET
@for_crowd
def battle_new(request, slug):
    # arenacrowd: a crowd voter's next battle is their batch's (a gold one, their code...).
    step = crowd.next_step(request.session, get_object_or_404(Arena, slug=slug))
    if step is not None and step.kind == "refused":
        context = {"campaign": None, "reason": step.reason}
        return render(request, "annotation/no_work.html", context, status=403)
    if step is not None and step.kind in ("done", "battle"):
        return redirect(step.url)
    try:
        arena = admitted_arena(request, request.user, slug)
    except NotAVoter as refused:
        return refused.response
    context = {"arena": arena, "view": None, **_page(request, arena)}
    return render(request, "arenas/battle.html", context)


@require_GET
@for_crowd
def battle_page(request, slug, public_id):
    try:
        battle = own_battle(request, request.user, slug, public_id)
    except NotAVoter as refused:
        return refused.response
    view = battle_view(battle)
    if wants_json(request):
        return JsonResponse(view)
    context = {
        "arena": battle.arena,
        "battle": battle,
        "view": view,
        # The vote's label is the vote button's, whose translation the page has.
        "vote_label": gettext(battle.get_vote_display()) if battle.vote else "",
        **_page(request, battle.arena),
    }
    return render(request, "arenas/battle.html", context)


@require_POST
@for_crowd
def battle_vote(request, slug, public_id):
    try:
        battle = own_battle(request, request.user, slug, public_id)
    except NotAVoter as refused:
        return refused.response
    form = VoteForm(request.POST)
    try:
        if not form.is_valid():
            raise battles.BattleRefused(battles.choose_a_vote())
        battle = battles.cast_vote(battle, form.cleaned_data["vote"])
    except UserInputError as refused:
        return _refused(request, refused, battle.get_absolute_url())
    if wants_json(request):
        return JsonResponse(battle_view(battle))
    return redirect(battle.get_absolute_url())


# Async: they wait on the models --------------------------------------------------------------


def _start(request, user, slug):
    try:
        arena = admitted_arena(request, user, slug)
    except NotAVoter as refused:
        return None, refused.response
    form = PromptForm(request.POST)
    prompt = form.data.get("prompt", "")
    try:
        voter = voters.identify(user, request.session, arena)
        battle = battles.start_battle(arena, voter, prompt)
    except UserInputError as refused:
        # A crowd voter stays on their battle page (the arena's own is a researcher's page).
        crowd = getattr(request, "annotation_campaign", None) is not None
        fallback = reverse("arenas:battle-new", args=[arena.slug]) if crowd else None
        return None, _refused(request, refused, fallback or arena.get_absolute_url())
    return battle, None


@require_POST
@for_crowd
async def battle_start(request, slug):
    user = await request.auser()
    battle, refusal = await sync_to_async(_start)(request, user, slug)
    if refusal is not None:
        return refusal
    return await _answered(request, battle, 1)


def _act(request, user, slug, public_id, action):
    """`action(battle)` on the voter's own battle: (battle, the turn's number, None), or
    (None, None, the refusal to answer)."""
    try:
        battle = own_battle(request, user, slug, public_id)
    except NotAVoter as refused:
        return None, None, refused.response
    try:
        turn = action(battle)
    except UserInputError as refused:
        return None, None, _refused(request, refused, battle.get_absolute_url())
    return battle, turn.number, None


async def _acted_and_answered(request, slug, public_id, action):
    user = await request.auser()
    battle, number, refusal = await sync_to_async(_act)(request, user, slug, public_id, action)
    if refusal is not None:
        return refusal
    return await _answered(request, battle, number)


@require_POST
@for_crowd
async def battle_turn(request, slug, public_id):
    prompt = request.POST.get("prompt", "")
    return await _acted_and_answered(
        request, slug, public_id, lambda battle: battles.add_turn(battle, prompt)
    )


@require_POST
@for_crowd
async def battle_regenerate(request, slug, public_id):
    """Both models asked the last turn again."""
    return await _acted_and_answered(request, slug, public_id, battles.regenerate)


def _answer(request, user, slug, public_id, number, side) -> BattleAnswer:
    if side not in SIDES:
        raise Http404("Not found.")
    battle = own_battle(request, user, slug, public_id)
    answer = battles.answer_of(battle, number, side)
    if answer is None:
        raise Http404("Not found.")
    return answer


def _voters_answer(request, slug, public_id, number, side) -> BattleAnswer:
    return _answer(request, request.user, slug, public_id, number, side)


@require_GET
@for_crowd
async def answer_stream(request, slug, public_id, number, side):
    # On the stream threads (endpoints/dbcalls.py), not the request's own: a thousand
    # streams opened at once do not open a thousand database connections.
    try:
        answer = await database(_voters_answer, request, slug, public_id, number, side)
    except NotAVoter as refused:
        return refused.response
    return event_stream_response(request, answer.pk)


@require_POST
@for_crowd
async def answer_stop(request, slug, public_id, number, side):
    """Stop one side: answered with the answer as stored once its stream has settled it
    (or as it is after `STOP_WAIT_SECONDS`, still streaming, when its stream is elsewhere
    and slow to notice)."""
    user = await request.auser()
    try:
        answer = await sync_to_async(_answer)(request, user, slug, public_id, number, side)
    except NotAVoter as refused:
        return refused.response
    await sync_to_async(patiently)(battles.request_stop, answer)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STOP_WAIT_SECONDS
    while True:
        await sync_to_async(patiently)(answer.refresh_from_db)
        if answer.settled or loop.time() >= deadline:
            break
        await asyncio.sleep(0.1)
    body = {"status": answer.status, "text": answer.text, "error": shown_error(answer.error)}
    if wants_json(request):
        return JsonResponse(body, status=200 if answer.settled else 202)
    await sync_to_async(messages.info)(request, gettext("Stopped."))
    return redirect("arenas:battle", slug=slug, public_id=public_id)
