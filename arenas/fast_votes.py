"""Votes cast faster than the answers could be read.

The time it takes to read a battle's answers is their words at `WORDS_PER_MINUTE`, the
average silent reading rate of adults for English non-fiction in a meta-analysis of 190
studies (18,573 readers): Brysbaert, M. (2019), "How many words do we read per minute? A
review and meta-analysis of reading rate", Journal of Memory and Language 109, 104047,
doi:10.1016/j.jml.2019.104047. A text's words are its whitespace-separated words, or its
characters / `CHARS_PER_WORD` when that is more (for scripts written without spaces), so
the estimate errs on the short side and a careful reader is not flagged.

A vote is fast when it comes sooner after the first answer's first token than the arena's
share (`Arena.fast_vote_fraction`) of both answers' reading time, and never later than
`FLOOR_SECONDS` (two very short answers still take a moment to compare). Skimming runs
at about twice to three times the reading rate, so the default share, 1/4, flags only
votes faster than skimming.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from .models import Battle, BattleAnswer

WORDS_PER_MINUTE = 238
CHARS_PER_WORD = 6
FLOOR_SECONDS = 2.0


def words(text: str) -> float:
    return max(len(text.split()), len(text) / CHARS_PER_WORD)


def reading_seconds(texts) -> float:
    """Seconds an average adult takes to read `texts` silently."""
    return sum(words(text) for text in texts) * 60.0 / WORDS_PER_MINUTE


def threshold_seconds(reading: float, fraction: float) -> float:
    """The shortest time before a vote that is not fast (0: the check is off)."""
    if fraction <= 0:
        return 0.0
    return max(FLOOR_SECONDS, fraction * reading)


def fast_vote_note(battle: Battle, voted_at: datetime) -> str | None:
    """Why the vote at `voted_at` on `battle` is fast, or None when it is not."""
    fraction = battle.arena.fast_vote_fraction
    if fraction <= 0:
        return None
    answers = list(
        BattleAnswer.objects.filter(turn__battle=battle).values_list(
            "text", "started_at", "first_token_ms"
        )
    )
    reading = reading_seconds(text for text, _, _ in answers)
    needed = threshold_seconds(reading, fraction)
    shown = [
        started + timedelta(milliseconds=first or 0)
        for _, started, first in answers
        if started is not None
    ]
    took = max(0.0, (voted_at - min(shown, default=battle.started_at)).total_seconds())
    if took >= needed:
        return None
    return (
        f"Voted {took:.1f} s after the first answer appeared; reading both answers takes "
        f"about {reading:.0f} s at {WORDS_PER_MINUTE} words a minute, and this arena flags "
        f"votes sooner than {needed:.1f} s."
    )
