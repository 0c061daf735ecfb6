"""What an imported battle stores: the values both writers (the ORM's, arenas/interchange/
writing.py, and PostgreSQL's COPY, arenas/interchange/copying.py) take from a parsed line,
so that the two store the same battle."""

from __future__ import annotations

from datetime import UTC, datetime

from ..style import count_tokens, style_features, summed_features
from .reading import ParsedBattle


def _style(given: dict, answers: list[str]) -> dict:
    if given:
        return given
    return summed_features(style_features(text) for text in answers) if answers else {}


def _tokens(given: int | None, answers: list[str]) -> int | None:
    if given is not None:
        return given
    return sum(count_tokens(text) for text in answers) if answers else None


def battle_values(parsed: ParsedBattle, now: datetime) -> dict:
    """The Battle fields of an imported line (besides the arena and the two systems); the
    style and tokens are counted from the conversations when the line does not give them."""
    when = datetime.fromtimestamp(parsed.tstamp, UTC) if parsed.tstamp is not None else now
    answers_a = [a for _, a, _ in parsed.exchanges]
    answers_b = [b for _, _, b in parsed.exchanges]
    return {
        "question_id": parsed.question_id,
        "anonymous": parsed.anonymous,
        "started_at": when,
        "voter_ref": parsed.judge,
        "language": parsed.language,
        "turns": parsed.turns or 0,
        "vote": parsed.vote,
        "voted_at": when,
        "tokens_a": _tokens(parsed.tokens_a, answers_a),
        "tokens_b": _tokens(parsed.tokens_b, answers_b),
        "style_a": _style(parsed.style_a, answers_a),
        "style_b": _style(parsed.style_b, answers_b),
        "extra": parsed.extra,
    }
