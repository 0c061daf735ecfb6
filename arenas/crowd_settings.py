"""What an arena's owner sets to launch it on a crowd platform, declared once (pydantic).

The pay, budget, time limit and gold rate are the campaigns' own settings
(annotation/campaign_settings.py: same ranges, same meaning), since an arena's crowd runs
as a campaign of the `arena` kind; what is the arena's alone is declared here.
"""

from typing import ClassVar

from pydantic import Field

from evalhub.declared import Declared
from evalhub.limits import TEXT_CHARS

MAX_GOLD_BATTLES = 500


class CrowdSettings(Declared):
    noun: ClassVar[str] = "arena crowd setting"

    battles_per_participant: int = Field(
        5,
        ge=1,
        le=50,
        description="Battles one participant does (gold battles included) before their "
        "completion code.",
    )
    participants: int = Field(
        20,
        ge=1,
        le=10_000,
        description="Paid participants (one batch each) the launch recruits.",
    )


GOLD_ANSWER_CHARS = TEXT_CHARS
