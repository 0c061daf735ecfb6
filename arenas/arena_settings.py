"""What an arena's owner sets, declared once (pydantic): types, ranges, defaults.

The model fields take their validators and database checks from here
(`range_validators`, `range_constraint`), and the forms show the same ranges and help.
"""

from typing import ClassVar

from pydantic import Field

from evalhub.declared import Declared

MAX_BLOCKED_PHRASES = 500
MAX_BLOCKED_PHRASE_CHARS = 200
MAX_SYSTEM_PROMPT_CHARS = 4000
MAX_PROMPT_CHARS = 8000


class ArenaSettings(Declared):
    noun: ClassVar[str] = "arena setting"

    max_turns: int = Field(
        3, ge=1, le=20, description="User turns a voter may write in one battle before voting."
    )
    # Chatbot Arena-like: see docs/arena.md, "Leaderboard rules".
    provisional_battles: int = Field(
        300,
        ge=0,
        le=1_000_000,
        description="A system is provisional (shown apart, never ranked first) until it has "
        "at least this many counted battles...",
    )
    provisional_width: float = Field(
        40.0,
        ge=1.0,
        le=2000.0,
        description="...and its 95% interval is at most this many rating points wide.",
    )

    # Moderation (arenas/voter_limits.py, arenas/fast_votes.py) ------------------------------
    battles_per_day: int = Field(
        200,
        ge=1,
        le=10_000,
        description="Battles one voter may start in this arena a day (UTC); the next is "
        "refused until midnight UTC.",
    )
    repeat_window_hours: int = Field(
        24,
        ge=1,
        le=720,
        description="Hours over which a voter's new prompt is compared with the prompts of "
        "their earlier battles: the same prompt again (case, spacing and punctuation "
        "ignored) flags the battle.",
    )
    max_prompt_repeats: int = Field(
        0,
        ge=0,
        le=1000,
        description="Repeats of one prompt a voter may start within that window; the next "
        "is refused. 0: repeats are flagged, never refused.",
    )
    fast_vote_fraction: float = Field(
        0.25,
        ge=0.0,
        le=1.0,
        description="A vote cast in less than this share of the time it takes to read both "
        "answers (238 words a minute) flags the battle. 0: votes are never flagged as fast.",
    )

    # Pairing (issue 27): the stopping rule's level (evalstats/pairing.py).
    separation_level: float = Field(
        0.95,
        ge=0.5,
        le=0.999,
        description="The ranking question is answered when every pair of systems adjacent "
        "in the ranking is separated at this level (0.5 to 0.999).",
    )


class CategorySettings(Declared):
    """An owner-defined category: a battle is in it when it meets every rule given."""

    noun: ClassVar[str] = "category rule"

    min_turns: int = Field(1, ge=1, le=20, description="At least this many user turns.")
    max_turns: int = Field(20, ge=1, le=20, description="At most this many user turns.")
    min_user_tokens: int = Field(
        0, ge=0, le=1_000_000, description="The prompts have at least this many tokens."
    )
    max_user_tokens: int = Field(
        1_000_000, ge=0, le=1_000_000, description="The prompts have at most this many tokens."
    )


class EntrySettings(Declared):
    noun: ClassVar[str] = "arena system setting"

    weight: float = Field(
        1.0,
        ge=0.0,
        le=100.0,
        description="Sampling weight: a pair is drawn with probability proportional to the "
        "product of its two weights; 0 keeps the system out of new battles.",
    )


MAX_CATEGORY_PATTERN_CHARS = 200
MAX_CATEGORIES = 30
