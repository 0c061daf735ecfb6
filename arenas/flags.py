"""The flags of an arena's battles: every code in one place, raising one, and the owner's
review of it.

A flag is a code in `Battle.flags`; while a battle has one, its arena's leaderboard leaves
it out (`Arena.exclude_flagged`, on by default). `Battle.flag_notes` says, per code, what
raised it, for the owner's moderation page. The owner confirms a flag (it stays, and the
review is recorded) or clears it (the code leaves `flags`, so the battle counts again, and
the review stays recorded: the same code is not raised on that battle again, the owner
having judged it).
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from evalhub.errors import UserInputError

from . import leaderboard_queue
from .models import Battle

NAME_IN_ANSWER = Battle.FLAG_NAME_IN_ANSWER
REPEATED_PROMPT = "repeated_prompt"
FAST_VOTE = "fast_vote"

# Every flag code and what raises it (docs/arena.md's moderation section names each one).
CODES = {
    NAME_IN_ANSWER: "A model named itself in an answer (its system's name or slug, or its "
    "endpoint's model name, as a whole word).",
    REPEATED_PROMPT: "The voter had already started a battle with the same first prompt "
    "(case, spacing and punctuation ignored) within the arena's window.",
    FAST_VOTE: "The vote came sooner than the answers could be read (the arena's share of "
    "the reading time at 238 words a minute).",
}

CONFIRMED = "confirmed"
CLEARED = "cleared"
DECISIONS = (CONFIRMED, CLEARED)


def was_cleared(battle: Battle, code: str) -> bool:
    return battle.flag_reviews.get(code, {}).get("decision") == CLEARED


def raise_flag(battle: Battle, code: str, note: str) -> bool:
    """Flag `battle` (already locked by the caller's transaction, or not yet saved) with
    `code`; False when it already has it or its owner cleared it. Saves only the flags, so
    a caller's other fields are left to the caller."""
    if code not in CODES:
        raise ValueError(f"unknown flag code {code!r}")
    if code in battle.flags or was_cleared(battle, code):
        return False
    battle.flags = [*battle.flags, code]
    battle.flag_notes = {**battle.flag_notes, code: note}
    if battle.pk is not None:
        Battle.objects.filter(pk=battle.pk).update(flags=battle.flags, flag_notes=battle.flag_notes)
    return True


def review(battle: Battle, code: str, decision: str, user) -> Battle:
    """The owner's decision on one flag of `battle`: `confirmed` keeps it, `cleared` takes
    it off (and the leaderboard, if the battle was voted, is computed again)."""
    if decision not in DECISIONS:
        raise UserInputError("Confirm the flag or clear it.", field="decision")
    with transaction.atomic():
        battle = Battle.objects.select_for_update().select_related("arena").get(pk=battle.pk)
        if code not in battle.flags:
            raise UserInputError("This battle does not have that flag (any more).", field="code")
        battle.flag_reviews = {
            **battle.flag_reviews,
            code: {
                "decision": decision,
                "by": getattr(user, "username", ""),
                "at": timezone.now().isoformat(),
            },
        }
        if decision == CLEARED:
            battle.flags = [flag for flag in battle.flags if flag != code]
        battle.save(update_fields=["flags", "flag_reviews"])
        if decision == CLEARED and battle.is_voted:
            leaderboard_queue.vote_arrived(battle.arena)
    return battle


def flagged_battles(arena):
    """The arena's battles with a flag, newest first (for its owner's moderation page)."""
    return (
        arena.battles.exclude(flags=[])
        .select_related("system_a", "system_b")
        .order_by("-started_at")
    )


def described(battle: Battle) -> list[dict]:
    """Each flag of `battle` with what raised it and the owner's review, for the page."""
    return [
        {
            "code": code,
            "meaning": CODES.get(code, ""),
            "note": battle.flag_notes.get(code, ""),
            "review": battle.flag_reviews.get(code),
        }
        for code in battle.flags
    ]
