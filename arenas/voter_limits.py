"""What one voter may do in an arena: how fast, how many battles a day, how often the same
prompt.

- **Rate**: every battle action (start, turn, regenerate, vote) counts against
  `EVALHUB_ARENA_ACTIONS_PER_MINUTE` for the voter, over all arenas, in the project's
  shared counter (evalhub/ratelimit.py), keyed by the voter's reference (`Battle.voter_ref`:
  "user:<id>", an invited visitor's session id, a crowd participant's id). While the cache
  is down, accounts and crowd participants go on uncounted (they are known, and the
  arena's daily cap and the endpoints' budgets, in the database, still bound them); an
  invited visitor, whose identity is one a script can make anew with every session, is
  refused with 503.
- **Battles a day**: `Arena.battles_per_day` live battles started per voter and UTC day.
- **Repeated prompts**: a battle whose first prompt (normalised: case, spacing and
  punctuation ignored) the voter already used in a battle of the arena within
  `Arena.repeat_window_hours` is flagged `repeated_prompt`; past
  `Arena.max_prompt_repeats` repeats (when not 0) it is refused.

Two starts at the same instant may both pass the day's count and overshoot the cap by
one; the minute's limit keeps such bursts small (the cap bounds abuse, it is no invoice).

A refusal is a `LimitReached` (a user error, nothing written): the page shows it and the
JSON answer is the API's one error shape, with 429 and Retry-After for the rate and the day.
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.utils.formats import number_format
from django.utils.translation import gettext, gettext_noop, ngettext

from evalhub.errors import UserInputError
from evalhub.outages import ServiceUnavailable
from evalhub.ratelimit import LimitUnavailable, Outage, allow_key

from .models import Arena, Battle

PAUSED = gettext_noop(
    "Battles are paused for visitors just now: a service EvalHub needs is down. Please try "
    "again in a few minutes."
)


class LimitReached(UserInputError):
    """The voter reached one of the arena's limits (nothing was written)."""

    def __init__(self, message: str, *, status_code: int = 400, retry_after: int | None = None):
        super().__init__(message, field="prompt" if status_code == 400 else None)
        self.status_code = status_code
        self.retry_after = retry_after


def count_action(voter_ref: str, platform: str) -> None:
    """Count one battle action of the voter; refuse it past the minute's limit."""
    limit = settings.EVALHUB_ARENA_ACTIONS_PER_MINUTE
    outage = Outage.FAIL_CLOSED if platform == Battle.Platform.LINK else Outage.FAIL_OPEN
    try:
        allowed = allow_key(f"arena-action:{voter_ref}", limit, 60, on_outage=outage)
    except LimitUnavailable as down:
        raise ServiceUnavailable(gettext(PAUSED)) from down
    if not allowed:
        raise LimitReached(
            ngettext(
                "You are going too fast: at most %(limit)s battle action a minute. "
                "Wait a minute, then try again.",
                "You are going too fast: at most %(limit)s battle actions a minute. "
                "Wait a minute, then try again.",
                limit,
            )
            % {"limit": limit},
            status_code=429,
            retry_after=60,
        )


def prompt_digest(prompt: str) -> str:
    """The prompt's digest with case, spacing, punctuation and Unicode compatibility forms
    ignored: "Hello, world!" and "hello   WORLD" are the same prompt."""
    text = unicodedata.normalize("NFKC", prompt).casefold()
    text = "".join(ch for ch in text if not unicodedata.category(ch).startswith("P"))
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()


@dataclass(frozen=True)
class NewBattle:
    """What the checks found out about a battle about to start."""

    digest: str
    earlier: int  # the voter's battles with the same first prompt within the window


def check_new_battle(arena: Arena, voter_ref: str, prompt: str, now: datetime) -> NewBattle:
    """Refuse a new battle past the day's cap or the repeats allowed; else say how many of
    the voter's earlier battles had the same prompt."""
    day = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    mine = Battle.objects.filter(arena=arena, voter_ref=voter_ref, source=Battle.Source.LIVE)
    started = mine.filter(started_at__gte=day).count()
    if started >= arena.battles_per_day:
        wait = max(1, int((day + timedelta(days=1) - now).total_seconds()))
        raise LimitReached(
            gettext(
                "You have started %(started)s battles in this arena today, the most it allows "
                "a voter (%(most)s a day). Come back after midnight UTC."
            )
            % {
                "started": number_format(started, force_grouping=True),
                "most": number_format(arena.battles_per_day, force_grouping=True),
            },
            status_code=429,
            retry_after=wait,
        )
    digest = prompt_digest(prompt)
    since = now - timedelta(hours=arena.repeat_window_hours)
    earlier = mine.filter(prompt_digest=digest, started_at__gte=since).count()
    allowed = arena.max_prompt_repeats
    if allowed and earlier > allowed:
        raise LimitReached(
            gettext(
                "You have already sent this prompt %(earlier)s times in the last "
                "%(hours)s hours, the most this arena allows: please write another one."
            )
            % {"earlier": earlier, "hours": arena.repeat_window_hours}
        )
    return NewBattle(digest=digest, earlier=earlier)


def repeat_note(arena: Arena, earlier: int) -> str:
    return (
        f"The voter's battle number {earlier + 1} with this first prompt within "
        f"{arena.repeat_window_hours} hours."
    )
