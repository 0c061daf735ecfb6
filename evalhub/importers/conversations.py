"""Parse and validate a file of conversations in the interchange format (JSON lines).

One conversation per line:
`{"id", "domain", "speakers": [system slug or "human", ...], "turns": [{"speaker", "text"}]}`
with optional `"source"` (a catalog source such as "self-play"), `"metadata"` (an object)
`"user_rating"`: `{"value": 4, "scale": [1, 5]}`, the user's own rating of the
conversation on the scale it was asked on, and `"seed"`: the opening given to both speakers
before they spoke (`[{"speaker", "text"}, ...]`, e.g. a collected conversation's seed
exchange from a human-human conversation), which is no speaker's turn. A turn may carry `"timestamp"` (ISO 8601 with a
UTC offset, e.g. "2024-05-01T12:00:03Z"; never earlier than an earlier turn's) and
`"topic"` (a label of 1 to 60 characters). A file of gold and training items has the same lines plus `"role"` ("gold" or
"training") and `"gold"` (the answer, an object). The whole file is checked and every
problem reported with its line before anything is written. A person's turn may not be
empty; a system's may, since that is what the system said.
"""

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePath

from django.core.validators import slug_re

from ..models import Conversation, Turn
from .problems import (
    InvalidUpload,
    Problem,
    Problems,
    check_size,
    decode_utf8,
    iter_json_lines,
    merge_by_line,
    too_long,
)

HUMAN = "human"
ROLES = ("gold", "training")
CONVERSATION_KEYS = (
    "id",
    "domain",
    "speakers",
    "turns",
    "source",
    "metadata",
    "user_rating",
    "seed",
)
MAX_SEED_TURNS = 10
GOLD_KEYS = ("role", "gold")
TURN_KEYS = ("speaker", "text", "timestamp", "topic")
MAX_TOPIC = Turn._meta.get_field("topic").max_length
# Timestamps before 1970 or after 2999 are mistaken units or typos, not conversations.
FIRST_YEAR, LAST_YEAR = 1970, 2999
RATING_BOUND = 1e6
MAX_ID = Conversation._meta.get_field("external_id").max_length
MAX_DOMAIN = Conversation._meta.get_field("domain").max_length
MAX_SLUG = 80
NO_WHITESPACE = re.compile(r"^\S+$")


@dataclass(frozen=True)
class ParsedConversation:
    line: int
    external_id: str
    domain: str
    speakers: tuple[str, ...]  # a system slug, or "human", per speaker index
    turns: tuple[tuple[int, str], ...]  # (speaker index, text) in order
    source: str | None = None
    metadata: dict = field(default_factory=dict)
    role: str | None = None  # "gold" or "training" in a gold file
    gold: dict | None = None
    # One per turn when given (None where a turn has none); empty when no turn has one.
    timestamps: tuple[datetime | None, ...] = ()
    topics: tuple[str, ...] = ()  # "" where a turn has none
    user_rating: tuple[float, float, float] | None = None  # (value, scale min, scale max)
    seed: tuple[tuple[int, str], ...] = ()  # the opening given to both speakers

    def turn_timestamp(self, position: int) -> datetime | None:
        return self.timestamps[position] if self.timestamps else None

    def turn_topic(self, position: int) -> str:
        return self.topics[position] if self.topics else ""

    @property
    def all_human(self) -> bool:
        return all(speaker == HUMAN for speaker in self.speakers)


def parse_conversations(
    data: bytes, filename: str, max_bytes: int, *, gold_file: bool = False
) -> list[ParsedConversation]:
    """Conversations in file order, or InvalidUpload listing every problem with its line.

    With `gold_file`, every line must also carry `role` and `gold`; without it, lines that
    carry them are refused, so that answers never enter a campaign as ordinary items.
    """
    check_size(len(data), max_bytes)
    if PurePath(filename).suffix.lower() != ".jsonl":
        raise InvalidUpload([Problem(None, "Upload conversations as a .jsonl file.")])
    unreadable = Problems()
    rows = iter_json_lines(decode_utf8(data), unreadable)
    parsed, found = conversation_rows(rows, gold_file=gold_file)
    problems = merge_by_line(unreadable, found)
    if problems:
        raise InvalidUpload(problems)
    if not parsed:
        raise InvalidUpload([Problem(None, "The file holds no conversations.")])
    return parsed


def conversation_rows(
    rows: Iterable[tuple[int, dict]], *, gold_file: bool = False
) -> tuple[list[ParsedConversation], Problems]:
    """Check (line number, object) pairs read from a file, one at a time: the
    conversations without a problem, and the problems with their lines (an importer of
    another layout maps its lines onto this one and reuses these checks)."""
    parsed, problems, first_line = [], Problems(), {}
    for number, row in rows:
        found = _check_row(row, gold_file)
        problems.extend(Problem(number, message) for message in found)
        external_id = _external_id(row.get("id"))
        if external_id is not None and external_id in first_line:
            problems.append(
                Problem(
                    number,
                    f"duplicate id '{external_id}' (first on line {first_line[external_id]}).",
                )
            )
        elif external_id is not None:
            first_line[external_id] = number
        if not found and external_id is not None:
            parsed.append(_conversation(number, external_id, row))
    return parsed, problems


def _external_id(value) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    return value if isinstance(value, str) else None


def _check_row(row: dict, gold_file: bool) -> list[str]:
    """Every problem of one line, as messages."""
    allowed = CONVERSATION_KEYS + (GOLD_KEYS if gold_file else ())
    problems = []
    for key in row:
        if key in GOLD_KEYS and not gold_file:
            problems.append(f"'{key}' belongs in the file of gold and training items.")
        elif key not in allowed:
            problems.append(f"unknown key '{key}' (expected {', '.join(allowed)}).")
    missing = [key for key in ("id", "domain", "speakers", "turns") if key not in row]
    if gold_file:
        missing += [key for key in GOLD_KEYS if key not in row]
    if missing:
        problems.append(f"missing {', '.join(repr(key) for key in missing)}.")
    problems += _check_id(row)
    domain = row.get("domain", "")
    if not isinstance(domain, str) or len(domain) > MAX_DOMAIN:
        problems.append(f"'domain' must be a string of at most {MAX_DOMAIN} characters.")
    speakers = row.get("speakers")
    speakers_ok = isinstance(speakers, list) and len(speakers) >= 2
    if "speakers" in row and not speakers_ok:
        problems.append("'speakers' must be a list of two or more speakers.")
    if speakers_ok:
        problems += _check_speakers(speakers)
    if "turns" in row:
        problems += _check_turns(row["turns"], speakers if speakers_ok else None)
    source = row.get("source")
    if source is not None and source not in Conversation.Source.values:
        problems.append(
            f"unknown source {source!r} (one of {', '.join(Conversation.Source.values)})."
        )
    if not isinstance(row.get("metadata", {}), dict):
        problems.append("'metadata' must be an object {...}.")
    if "user_rating" in row:
        problems += _check_user_rating(row["user_rating"])
    if "seed" in row:
        problems += _check_seed(row["seed"], speakers if speakers_ok else None)
    if gold_file:
        if "role" in row and row["role"] not in ROLES:
            problems.append(f'\'role\' must be "gold" or "training", not {row["role"]!r}.')
        gold = row.get("gold")
        if "gold" in row and not (isinstance(gold, dict) and gold):
            problems.append("'gold' must be an object holding the answer.")
    return problems


def _check_id(row: dict) -> list[str]:
    if "id" not in row:
        return []
    external_id = _external_id(row["id"])
    if external_id is None or not external_id:
        return ["'id' must be a non-empty string."]
    if not NO_WHITESPACE.match(external_id):
        return [f"the id {external_id!r} contains whitespace."]
    if len(external_id) > MAX_ID:
        return [f"the id is longer than {MAX_ID} characters."]
    return []


def _check_speakers(speakers: list) -> list[str]:
    problems = []
    for index, speaker in enumerate(speakers):
        if speaker == HUMAN:
            continue
        if not isinstance(speaker, str) or not slug_re.match(speaker) or len(speaker) > MAX_SLUG:
            problems.append(
                f'speaker {index}: {speaker!r} is neither "human" nor a system slug '
                f"(letters, digits, - and _, at most {MAX_SLUG})."
            )
    return problems


def _check_seed(seed, speakers: list | None) -> list[str]:
    n_speakers = len(speakers) if speakers is not None else None
    if not isinstance(seed, list) or len(seed) > MAX_SEED_TURNS:
        return [f"'seed' must be a list of at most {MAX_SEED_TURNS} turns."]
    problems = []
    for number, turn in enumerate(seed, start=1):
        if not isinstance(turn, dict) or set(turn) != {"speaker", "text"}:
            problems.append(f'seed turn {number}: must be an object {{"speaker", "text"}}.')
            continue
        speaker, text = turn["speaker"], turn["text"]
        if not isinstance(speaker, int) or isinstance(speaker, bool):
            problems.append(f"seed turn {number}: 'speaker' must be a speaker index.")
        elif n_speakers is not None and not 0 <= speaker < n_speakers:
            problems.append(
                f"seed turn {number}: speaker {speaker} is out of range (0 to {n_speakers - 1})."
            )
        if not isinstance(text, str) or not text.strip():
            problems.append(f"seed turn {number}: 'text' must be a non-empty string.")
        elif oversized := too_long("its text", text):
            problems.append(f"seed turn {number}: {oversized}")
    return problems


def _check_turns(turns, speakers: list | None) -> list[str]:
    n_speakers = len(speakers) if speakers is not None else None
    if not isinstance(turns, list) or not turns:
        return ["'turns' must be a list of one or more turns."]
    problems = []
    for number, turn in enumerate(turns, start=1):
        if not isinstance(turn, dict):
            problems.append(f'turn {number}: must be an object {{"speaker", "text"}}.')
            continue
        unknown = [key for key in turn if key not in TURN_KEYS]
        if unknown:
            problems.append(
                f"turn {number}: unknown key '{unknown[0]}' (expected {', '.join(TURN_KEYS)})."
            )
        speaker = turn.get("speaker")
        if not isinstance(speaker, int) or isinstance(speaker, bool):
            problems.append(f"turn {number}: 'speaker' must be a speaker index.")
        elif n_speakers is not None and not 0 <= speaker < n_speakers:
            problems.append(
                f"turn {number}: speaker {speaker} is out of range (0 to {n_speakers - 1})."
            )
        text = turn.get("text")
        if not isinstance(text, str):
            problems.append(f"turn {number}: 'text' must be a string.")
        elif not text.strip() and _human(speakers, speaker):
            problems.append(f"turn {number}: empty text.")
        elif oversized := too_long("its text", text):
            problems.append(f"turn {number}: {oversized}")
        topic = turn.get("topic")
        if "topic" in turn and not (
            isinstance(topic, str) and topic.strip() and len(topic) <= MAX_TOPIC
        ):
            problems.append(
                f"turn {number}: 'topic' must be a label of 1 to {MAX_TOPIC} characters."
            )
    return problems + _check_timestamps(turns)


def _timestamp(value) -> datetime | None:
    """An ISO 8601 time with a UTC offset within FIRST_YEAR..LAST_YEAR, or None."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None or not FIRST_YEAR <= moment.year <= LAST_YEAR:
        return None
    return moment


def _check_timestamps(turns: list) -> list[str]:
    """Each given timestamp readable, and none earlier than the turn before it that has one."""
    problems, last = [], None
    for number, turn in enumerate(turns, start=1):
        if not isinstance(turn, dict) or "timestamp" not in turn:
            continue
        moment = _timestamp(turn["timestamp"])
        if moment is None:
            problems.append(
                f"turn {number}: 'timestamp' must be an ISO 8601 time with a UTC offset "
                f'between {FIRST_YEAR} and {LAST_YEAR}, e.g. "2024-05-01T12:00:03Z".'
            )
            continue
        if last is not None and moment < last[1]:
            problems.append(f"turn {number}: its timestamp is earlier than turn {last[0]}'s.")
        last = (number, moment)
    return problems


def _number(value) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and abs(value) <= RATING_BOUND
    )


def _check_user_rating(rating) -> list[str]:
    shape = (
        '\'user_rating\' must be {"value": number, "scale": [lowest, highest]}, '
        'e.g. {"value": 4, "scale": [1, 5]}.'
    )
    if not isinstance(rating, dict) or set(rating) != {"value", "scale"}:
        return [shape]
    value, scale = rating["value"], rating["scale"]
    if not (isinstance(scale, list) and len(scale) == 2 and all(map(_number, scale))):
        return [shape]
    low, high = scale
    if not low < high:
        return [f"'user_rating': the scale [{low}, {high}] must go from lowest to highest."]
    if not _number(value) or not low <= value <= high:
        return [f"'user_rating': the value {value!r} is not on its scale [{low}, {high}]."]
    return []


def _human(speakers: list | None, index) -> bool:
    """Whether a turn's speaker is a person. A system's empty output is kept: it is what the
    system said (Spot The Bot's released dialogues have some), and dropping it would shift
    the exchanges; a person's empty turn is a broken file."""
    if speakers is None or not isinstance(index, int) or not 0 <= index < len(speakers):
        return True
    return speakers[index] == HUMAN


def _conversation(number: int, external_id: str, row: dict) -> ParsedConversation:
    return ParsedConversation(
        line=number,
        external_id=external_id,
        domain=row["domain"],
        speakers=tuple(row["speakers"]),
        turns=tuple((turn["speaker"], turn["text"]) for turn in row["turns"]),
        source=row.get("source"),
        metadata=row.get("metadata", {}),
        role=row.get("role"),
        gold=row.get("gold"),
        timestamps=(
            tuple(_timestamp(turn.get("timestamp")) for turn in row["turns"])
            if any("timestamp" in turn for turn in row["turns"])
            else ()
        ),
        topics=(
            tuple(turn.get("topic", "") for turn in row["turns"])
            if any("topic" in turn for turn in row["turns"])
            else ()
        ),
        user_rating=_user_rating(row.get("user_rating")),
        seed=tuple((turn["speaker"], turn["text"]) for turn in row.get("seed", [])),
    )


def _user_rating(rating: dict | None) -> tuple[float, float, float] | None:
    if rating is None:
        return None
    return (float(rating["value"]), float(rating["scale"][0]), float(rating["scale"][1]))
