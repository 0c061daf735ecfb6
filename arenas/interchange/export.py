"""Writing an arena's voted battles in Chatbot Arena's clean-battle format (JSON lines),
so that EvalHub arenas can be published and re-analysed like Chatbot Arena's own.

One line per voted battle, oldest first, in the format arenas/interchange/reading.py reads
(an export imports again into another arena unchanged): ``model_a``/``model_b`` are the
systems' names, ``winner`` is ``model_a``, ``model_b``, ``tie`` or ``tie (bothbad)``,
``tstamp`` the battle's start in seconds, ``judge`` the voter: the file's own judge for an
imported battle, otherwise a pseudonym (``arena_user_`` and a keyed digest of the voter: the
same voter, the same pseudonym, never their account). ``conv_metadata`` has the tokens and
style counts per side, and the conversations are given when the arena has them. What only
EvalHub keeps goes under ``"evalhub"``: the vote as cast (``both_bad`` apart from ``tie``),
when, the flags, the pairing rule's state, the code blocks per side, per answer its status,
timing, tokens and speed, and the answers the voter had regenerated. The other fields of an imported line come back as they
were.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import islice

from django.utils.crypto import salted_hmac

from ..models import Arena, Battle, BattleAnswer, BattleTurn
from .reading import WINNERS

WINNER_OF_VOTE = {vote: winner for winner, vote in WINNERS.items()}
CHUNK = 2000


def pseudonym(battle: Battle) -> str:
    if battle.source == Battle.Source.IMPORTED:
        return battle.voter_ref
    if not battle.voter_ref:
        return ""
    digest = salted_hmac("arenas.export.judge", battle.voter_ref).hexdigest()[:16]
    return f"arena_user_{digest}"


def _metadata(battle: Battle) -> dict:
    metadata = dict(battle.extra.get("conv_metadata", {}))
    for side in ("a", "b"):
        tokens = getattr(battle, f"tokens_{side}")
        if tokens is not None:
            metadata[f"sum_assistant_{side}_tokens"] = tokens
        style = getattr(battle, f"style_{side}")
        for group in ("header_count", "list_count", "bold_count"):
            if group in style:
                metadata[f"{group}_{side}"] = style[group]
    metadata["turns"] = battle.turns
    return metadata


def _time(value) -> str | None:
    return value.isoformat() if value else None


def battle_line(battle: Battle, turns: list[BattleTurn], answers: dict) -> dict:
    line = {
        key: value for key, value in battle.extra.items() if key not in ("conv_metadata", "evalhub")
    }
    line.update(
        {
            "question_id": battle.question_id,
            "model_a": battle.system_a.name,
            "model_b": battle.system_b.name,
            "winner": WINNER_OF_VOTE[battle.vote],
            "judge": pseudonym(battle),
            "turn": battle.turns,
            "anony": battle.anonymous,
            "language": battle.language,
            "tstamp": battle.started_at.timestamp(),
            "conv_metadata": _metadata(battle),
        }
    )
    timings = []
    if turns:
        for side in ("a", "b"):
            messages = []
            for turn in turns:
                messages.append({"role": "user", "content": turn.prompt})
                answer = answers.get((turn.pk, side))
                messages.append({"role": "assistant", "content": answer.text if answer else ""})
            line[f"conversation_{side}"] = messages
        for turn in turns:
            for side in ("a", "b"):
                answer = answers.get((turn.pk, side))
                if answer is None or battle.source == Battle.Source.IMPORTED:
                    continue
                timings.append(
                    {
                        "turn": turn.number,
                        "side": side,
                        "asked_at": _time(turn.asked_at),
                        "status": answer.status,
                        "started_at": _time(answer.started_at),
                        "finished_at": _time(answer.finished_at),
                        "first_token_ms": answer.first_token_ms,
                        "latency_ms": answer.latency_ms,
                        "tokens": answer.tokens,
                        "tokens_reported": answer.tokens_reported,
                        "tokens_per_second": answer.tokens_per_second,
                    }
                )
    own = dict(battle.extra.get("evalhub", {})) if battle.source == Battle.Source.IMPORTED else {}
    own.update(
        {
            "arena": battle.arena.slug,
            "source": battle.source,
            "vote": battle.vote,
            "voted_at": _time(battle.voted_at),
            "voter_platform": battle.voter_platform,
            "flags": battle.flags,
            "pairing": battle.pairing,
            "code_blocks_a": battle.style_a.get("code_blocks"),
            "code_blocks_b": battle.style_b.get("code_blocks"),
        }
    )
    if timings:
        own["answers"] = timings
    regenerated = [
        {"turn": turn.number, **earlier} for turn in turns for earlier in turn.regenerated
    ]
    if regenerated:
        own["regenerated"] = regenerated
    line["evalhub"] = own
    return line


def export_lines(arena: Arena) -> Iterator[str]:
    """The arena's voted battles, one JSON line each (with its newline), in chunks: a
    million battles are written in bounded memory."""
    for line in battle_lines(arena):
        yield json.dumps(line, ensure_ascii=False) + "\n"


def battle_lines(arena: Arena) -> Iterator[dict]:
    """The lines of `export_lines` as dicts, a chunk of battles read at a time."""
    voted = (
        arena.battles.exclude(vote="")
        .exclude(source=Battle.Source.GOLD)  # a crowd's gold checks are no battles
        .select_related("arena", "system_a", "system_b")
        .order_by("started_at", "pk")
    )
    battles = voted.iterator(chunk_size=CHUNK)
    while chunk := list(islice(battles, CHUNK)):
        turns: dict[int, list[BattleTurn]] = {}
        for turn in BattleTurn.objects.filter(battle__in=chunk).order_by("battle", "number"):
            turns.setdefault(turn.battle_id, []).append(turn)
        answers = {
            (answer.turn_id, answer.side): answer
            for answer in BattleAnswer.objects.filter(turn__battle__in=chunk)
        }
        for battle in chunk:
            yield battle_line(battle, turns.get(battle.pk, []), answers)
