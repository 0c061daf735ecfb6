"""A battle's life, on the database: start it, add a turn, stop an answer, vote.

Each step checks what the voter may do now and writes in one transaction; a refusal is a
`BattleRefused` (a user error: the page shows it, the API answers 400) and writes nothing.
The answers themselves are asked and streamed by arenas/answering.py, which settles them
here (`settle`): the side's token count and style features and the battle's flags are
recomputed from its answers, so the two sides settling at once never overwrite each other.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext, ngettext

from evalhub.errors import UserInputError

from . import crowd_slots, flags, leaderboard_queue, pairing_state, voter_limits
from .arena_settings import MAX_PROMPT_CHARS
from .fast_votes import fast_vote_note
from .models import Arena, ArenaSystem, Battle, BattleAnswer, BattleTurn
from .pairing import NoPair, draw_pair
from .style import count_tokens, name_mentioned, style_features, summed_features
from .tasks import send_language
from .voters import Voter

SIDES = ("a", "b")


class BattleRefused(UserInputError):
    """What the voter asked cannot be done now (nothing was written)."""


def choose_a_vote() -> str:
    return gettext("Choose A is better, B is better, tie or both are bad.")


def check_prompt(arena: Arena, prompt: str) -> str:
    prompt = prompt.strip()
    if not prompt:
        raise BattleRefused(gettext("Write a message first."), field="prompt")
    if len(prompt) > MAX_PROMPT_CHARS:
        raise BattleRefused(
            gettext("A message has at most %(most)s characters.") % {"most": MAX_PROMPT_CHARS},
            field="prompt",
        )
    if arena.blocked_phrase(prompt) is not None:
        raise BattleRefused(
            gettext("This arena does not accept that message: please write another one."),
            field="prompt",
        )
    return prompt


def drawable_entries(arena: Arena) -> list[ArenaSystem]:
    return list(
        arena.entries.filter(endpoint__isnull=False, weight__gt=0)
        .select_related("system")
        .order_by("system__slug")
    )


def start_battle(
    arena: Arena, voter: Voter, prompt: str, rng: random.Random | None = None
) -> Battle:
    """A new battle: two systems drawn by the arena's rule, the first turn asked of both
    (within the voter's limits: arenas/voter_limits.py)."""
    voter_limits.count_action(voter.ref, voter.platform)
    prompt = check_prompt(arena, prompt)
    if arena.paused:
        raise BattleRefused(gettext("This arena is paused: it is not starting new battles."))
    now = timezone.now()
    checked = voter_limits.check_new_battle(arena, voter.ref, prompt, now)
    entries = drawable_entries(arena)
    try:
        if arena.pairing_rule == Arena.Pairing.ADAPTIVE:
            draw = pairing_state.draw(arena, entries, rng or _RANDOM)
        else:
            draw = draw_pair(
                [e.system.slug for e in entries], [e.weight for e in entries], rng or _RANDOM
            )
    except NoPair:
        raise BattleRefused(
            gettext("This arena has fewer than two systems to draw from.")
        ) from None
    systems = {e.system.slug: e.system for e in entries}
    with transaction.atomic():
        battle = Battle.objects.create(
            arena=arena,
            system_a=systems[draw.a],
            system_b=systems[draw.b],
            question_id=uuid.uuid4().hex,
            started_at=now,
            voter=voter.user,
            voter_platform=voter.platform,
            voter_ref=voter.ref,
            turns=1,
            pairing=draw.state,
            prompt_digest=checked.digest,
        )
        if checked.earlier:
            note = voter_limits.repeat_note(arena, checked.earlier)
            flags.raise_flag(battle, flags.REPEATED_PROMPT, note)
        _ask(battle, 1, prompt, now)
        if voter.assignment is not None:  # arenacrowd: a slot of a crowd voter's batch
            crowd_slots.attach_live(battle, voter.assignment)
        transaction.on_commit(lambda: send_language(battle.pk))
    return battle


def _ask(battle: Battle, number: int, prompt: str, now) -> BattleTurn:
    turn = BattleTurn.objects.create(battle=battle, number=number, prompt=prompt, asked_at=now)
    BattleAnswer.objects.bulk_create(BattleAnswer(turn=turn, side=side) for side in SIDES)
    return turn


def _locked(battle: Battle) -> Battle:
    return Battle.objects.select_for_update().select_related("arena").get(pk=battle.pk)


def _unfinished_reason(battle: Battle) -> str | None:
    """Why the battle cannot go on (or be voted) now, or None."""
    answers = BattleAnswer.objects.filter(turn__battle=battle)
    if answers.exclude(status__in=BattleAnswer.SETTLED).exists():
        return gettext("Wait until both models have answered (or stop them).")
    if answers.filter(status=BattleAnswer.Status.FAILED).exists():
        return gettext(
            "A model gave no usable answer: this battle cannot go on. Start a new round."
        )
    return None


def add_turn(battle: Battle, prompt: str) -> BattleTurn:
    """The voter's next turn, asked of both sides."""
    voter_limits.count_action(battle.voter_ref, battle.voter_platform)
    with transaction.atomic():
        battle = _locked(battle)
        prompt = check_prompt(battle.arena, prompt)
        if battle.is_voted:
            raise BattleRefused(gettext("This battle has been voted: start a new round."))
        _refuse_gold(battle)
        if battle.turns >= battle.arena.max_turns:
            most = battle.arena.max_turns
            raise BattleRefused(
                ngettext(
                    "This arena allows %(most)s turn a battle: please vote.",
                    "This arena allows %(most)s turns a battle: please vote.",
                    most,
                )
                % {"most": most}
            )
        reason = _unfinished_reason(battle)
        if reason:
            raise BattleRefused(reason)
        battle.turns += 1
        battle.save(update_fields=["turns"])
        return _ask(battle, battle.turns, prompt, timezone.now())


def regenerate(battle: Battle) -> BattleTurn:
    """Ask both models the last turn again (after a failure, or answers the voter wants
    anew): the answers so far are kept in the turn's `regenerated` record, and both sides
    stream again. Not once the battle is voted, nor while an answer is still coming."""
    voter_limits.count_action(battle.voter_ref, battle.voter_platform)
    with transaction.atomic():
        battle = _locked(battle)
        if battle.is_voted:
            raise BattleRefused(gettext("This battle has been voted: start a new round."))
        _refuse_gold(battle)
        turn = BattleTurn.objects.filter(battle=battle).order_by("-number").first()
        answers = {a.side: a for a in BattleAnswer.objects.filter(turn=turn)}
        if any(a.status not in BattleAnswer.SETTLED for a in answers.values()):
            raise BattleRefused(gettext("Wait until both models have answered (or stop them)."))
        turn.regenerated = [
            *turn.regenerated,
            {
                **{side: answers[side].text for side in SIDES},
                **{f"status_{side}": answers[side].status for side in SIDES},
                "at": timezone.now().isoformat(),
            },
        ]
        turn.save(update_fields=["regenerated"])
        BattleAnswer.objects.filter(turn=turn).update(
            status=BattleAnswer.Status.PENDING,
            text="",
            started_at=None,
            finished_at=None,
            first_token_ms=None,
            latency_ms=None,
            tokens=None,
            tokens_reported=False,
            tokens_per_second=None,
            stop_requested=False,
            error="",
        )
        for side in SIDES:
            summarize_side(battle, side)
    return turn


def cast_vote(battle: Battle, vote: str) -> Battle:
    """Store the vote (once: the same vote again changes nothing, another is refused) and
    ask for the leaderboard to be computed again. A vote sooner than the answers could be
    read flags the battle (arenas/fast_votes.py)."""
    voter_limits.count_action(battle.voter_ref, battle.voter_platform)
    if vote not in Battle.Vote.values:
        raise BattleRefused(choose_a_vote(), field="vote")
    with transaction.atomic():
        battle = _locked(battle)
        if battle.is_voted:
            if battle.vote == vote:
                return battle
            raise BattleRefused(gettext("This battle has already been voted."))
        reason = _unfinished_reason(battle)
        if reason:
            raise BattleRefused(reason)
        battle.vote = vote
        battle.voted_at = timezone.now()
        battle.save(update_fields=["vote", "voted_at"])
        note = fast_vote_note(battle, battle.voted_at)
        if note:
            flags.raise_flag(battle, flags.FAST_VOTE, note)
        if battle.source != Battle.Source.GOLD:  # arenacrowd: gold never counts
            pairing_state.record_vote(battle)
            leaderboard_queue.vote_arrived(battle.arena)
        crowd_slots.record_vote(battle)  # arenacrowd: a crowd slot's judgment
    return battle


def _refuse_gold(battle: Battle) -> None:
    """A gold battle (arenas/crowd.py) is its fixed answers: no other turn, no new answers."""
    if battle.source == Battle.Source.GOLD:
        raise BattleRefused(gettext("Please vote on this battle now."))


def request_stop(answer: BattleAnswer) -> None:
    """The voter pressed stop: an answer not started yet is stopped at once (nothing was
    asked, nothing charged); a streaming one is told to stop, and its stream settles it."""
    now = timezone.now()
    BattleAnswer.objects.filter(pk=answer.pk, status=BattleAnswer.Status.PENDING).update(
        status=BattleAnswer.Status.STOPPED, started_at=now, finished_at=now
    )
    BattleAnswer.objects.filter(pk=answer.pk, status=BattleAnswer.Status.STREAMING).update(
        stop_requested=True
    )


def answer_of(battle: Battle, number: int, side: str) -> BattleAnswer | None:
    return (
        BattleAnswer.objects.select_related("turn")
        .filter(turn__battle=battle, turn__number=number, side=side)
        .first()
    )


# Settling an answer --------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """How a stream ended, for `settle`."""

    status: str  # a settled BattleAnswer.Status
    text: str
    first_token_ms: int | None = None
    latency_ms: int | None = None
    reported_tokens: int | None = None
    error: str = ""


def claim(answer_id: int, lease_seconds: float) -> bool:
    """Take the answer to stream it: once, unless a claim older than the lease was left by
    a process that died mid-stream."""
    now = timezone.now()
    stale = now - timezone.timedelta(seconds=lease_seconds)
    claimable = Q(status=BattleAnswer.Status.PENDING) | Q(
        status=BattleAnswer.Status.STREAMING, started_at__lt=stale
    )
    return bool(
        BattleAnswer.objects.filter(claimable, pk=answer_id).update(
            status=BattleAnswer.Status.STREAMING, started_at=now, text="", stop_requested=False
        )
    )


def stop_requested(answer_id: int) -> bool:
    return BattleAnswer.objects.filter(pk=answer_id, stop_requested=True).exists()


def settle(answer_id: int, outcome: Outcome) -> BattleAnswer:
    """Store how the answer ended, then the side's totals and the battle's flags."""
    tokens = (
        outcome.reported_tokens
        if outcome.reported_tokens is not None
        else count_tokens(outcome.text)
    )
    speed = None
    if outcome.latency_ms and outcome.first_token_ms is not None and tokens:
        streaming_ms = outcome.latency_ms - outcome.first_token_ms
        if streaming_ms > 0:
            speed = tokens * 1000.0 / streaming_ms
    with transaction.atomic():
        BattleAnswer.objects.filter(pk=answer_id, status=BattleAnswer.Status.STREAMING).update(
            status=outcome.status,
            text=outcome.text,
            finished_at=timezone.now(),
            first_token_ms=outcome.first_token_ms,
            latency_ms=outcome.latency_ms,
            tokens=tokens,
            tokens_reported=outcome.reported_tokens is not None,
            tokens_per_second=speed,
            error=outcome.error[:200],
        )
        answer = BattleAnswer.objects.select_related("turn__battle").get(pk=answer_id)
        summarize_side(answer.turn.battle, answer.side)
    return answer


def summarize_side(battle: Battle, side: str) -> None:
    """The side's tokens and style features summed over its answers, and the battle's flag
    when the side's model named itself."""
    battle = _locked(battle)
    texts, tokens = [], 0
    for text, count in BattleAnswer.objects.filter(turn__battle=battle, side=side).values_list(
        "text", "tokens"
    ):
        texts.append(text)
        tokens += count or 0
    style = summed_features(style_features(text) for text in texts)
    Battle.objects.filter(pk=battle.pk).update(**{f"tokens_{side}": tokens, f"style_{side}": style})
    system = battle.system(side)
    names = [system.name, system.slug]
    model_name = (
        type(system).objects.filter(pk=system.pk).values_list("endpoint__model_name", flat=True)
    ).first()
    if model_name:
        names.append(model_name)
    if any(name_mentioned(text, names) for text in texts):
        note = f"Model {side.upper()} named itself."
        flags.raise_flag(battle, flags.NAME_IN_ANSWER, note)


_RANDOM = random.SystemRandom()
