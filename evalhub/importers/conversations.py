"""Parse and validate a file of conversations in the interchange format (JSON lines).

One conversation per line:
`{"id", "domain", "speakers": [system slug or "human", ...], "turns": [{"speaker", "text"}]}`
with optional `"source"` (a catalog source such as "self-play") and `"metadata"` (an
object). A file of gold and training items has the same lines plus `"role"` ("gold" or
"training") and `"gold"` (the answer, an object). The whole file is checked and every
problem reported with its line before anything is written. A person's turn may not be
empty; a system's may, since that is what the system said.
"""

import re
from dataclasses import dataclass, field
from pathlib import PurePath

from django.core.validators import slug_re

from ..models import Conversation
from .problems import InvalidUpload, Problem, check_size, decode_utf8, json_lines

HUMAN = "human"
ROLES = ("gold", "training")
CONVERSATION_KEYS = ("id", "domain", "speakers", "turns", "source", "metadata")
GOLD_KEYS = ("role", "gold")
TURN_KEYS = ("speaker", "text")
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
    rows, problems = json_lines(decode_utf8(data))
    parsed, first_line = [], {}
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
    if problems:
        raise InvalidUpload(sorted(problems, key=lambda p: p.line or 0))
    if not parsed:
        raise InvalidUpload([Problem(None, "The file holds no conversations.")])
    return parsed


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
            problems.append(f"turn {number}: unknown key '{unknown[0]}' (expected speaker, text).")
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
    return problems


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
    )
