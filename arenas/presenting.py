"""A battle as its voter sees it: the turns and both sides' answers, what they may do next,
and, only once they voted, who Model A and Model B were. The battle page renders it and the
page's script reads the same dict as JSON."""

from __future__ import annotations

from django.urls import reverse

from .answering import shown_error
from .models import Battle, BattleAnswer

VOTER_SEES = {Battle.FLAG_NAME_IN_ANSWER}


def stream_url(battle: Battle, number: int, side: str) -> str:
    return reverse("arenas:stream", args=[battle.arena.slug, battle.public_id, number, side])


def stop_url(battle: Battle, number: int, side: str) -> str:
    return reverse("arenas:stop", args=[battle.arena.slug, battle.public_id, number, side])


def battle_view(battle: Battle) -> dict:
    answers = {
        (a.turn_id, a.side): a
        for a in BattleAnswer.objects.filter(turn__battle=battle).only(
            "turn_id", "side", "status", "text", "error"
        )
    }
    turns, settled, failed = [], True, False
    for turn in battle.battle_turns.order_by("number"):
        sides = {}
        for side in ("a", "b"):
            answer = answers.get((turn.pk, side))
            status = answer.status if answer else BattleAnswer.Status.PENDING
            settled = settled and status in BattleAnswer.SETTLED
            failed = failed or status == BattleAnswer.Status.FAILED
            sides[side] = {
                "status": status,
                "text": answer.text if answer else "",
                "error": shown_error(answer.error) if answer else "",
                "stream": stream_url(battle, turn.number, side),
                "stop": stop_url(battle, turn.number, side),
            }
        turns.append({"number": turn.number, "prompt": turn.prompt, **sides})
    voted = battle.is_voted
    # arenacrowd: a gold battle is its two fixed answers: voted, never continued.
    fixed = battle.source == Battle.Source.GOLD
    view = {
        "battle": str(battle.public_id),
        "url": battle.get_absolute_url(),
        "turns": turns,
        "max_turns": battle.arena.max_turns,
        "voted": voted,
        "vote": battle.vote or None,
        "failed": failed,
        "can_continue": settled
        and not failed
        and not voted
        and not fixed
        and len(turns) < battle.arena.max_turns,
        "can_vote": settled and not failed and not voted,
        "can_regenerate": settled and bool(turns) and not voted and not fixed,
        "regenerate_url": reverse("arenas:regenerate", args=[battle.arena.slug, battle.public_id]),
        "turn_url": reverse("arenas:turn", args=[battle.arena.slug, battle.public_id]),
        "vote_url": reverse("arenas:vote", args=[battle.arena.slug, battle.public_id]),
        "new_url": reverse("arenas:battle-new", args=[battle.arena.slug]),
    }
    if voted:
        view["reveal"] = {"a": battle.system_a.name, "b": battle.system_b.name}
        # Only what the reveal explains: a voter told their vote looked fast, or their
        # prompt repeated, would learn how to pass the checks (arenas/flags.py).
        view["flags"] = [flag for flag in battle.flags if flag in VOTER_SEES]
    return view
