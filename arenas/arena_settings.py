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
    # Pairing (issue 27): the stopping rule's level (evalstats/pairing.py).
    separation_level: float = Field(
        0.95,
        ge=0.5,
        le=0.999,
        description="The ranking question is answered when every pair of systems adjacent "
        "in the ranking is separated at this level (0.5 to 0.999).",
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
