"""Reading battles in Chatbot Arena's clean-battle format (JSON lines), checking every line
first, in bounded memory.

One battle a line, as Chatbot Arena publishes its clean battles:

    {"question_id": "...", "model_a": "gpt-4-0613", "model_b": "claude-2.1",
     "winner": "model_a" | "model_b" | "tie" | "tie (bothbad)",
     "judge": "arena_user_...", "turn": 1, "anony": true, "language": "English",
     "tstamp": 1700000000.5,
     "conv_metadata": {"sum_assistant_a_tokens": 120, "sum_assistant_b_tokens": 98,
                       "header_count_a": {"h1": 0, ..., "h6": 0},
                       "list_count_a": {"ordered": 0, "unordered": 2},
                       "bold_count_a": {"**": 1, "__": 0}, ... and the same for b},
     "conversation_a": [{"role": "user", "content": "..."}, {"role": "assistant", ...}],
     "conversation_b": [...]}

``model_a``, ``model_b`` and ``winner`` are required; the rest is optional (the
conversations too). Other keys of the line (``is_code``, ``category_tag``, ``dedup_tag``...)
are kept as they are and written back on export. A battle is known by its ``question_id``,
or, without one, by a hash of its content: importing the same file twice stores each battle
once. The same battle twice in one file, like any other problem, is refused with its line.

The file is read twice, line by line, never whole: `check` reads it once and keeps only the
problems (the first `SHOWN_PROBLEMS`, the rest counted), the models named, and 16 bytes per
battle for the repeats (its key's digest and line, in arrays); `battles` reads it again and
yields the checked battles for the writer (arenas/interchange/writing.py) to store in chunks.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

import orjson

from evalhub.errors import Problem, Problems
from evalhub.importers.problems import parse_json_line

from ..style import HEADER_LEVELS

WINNERS = {
    "model_a": "a_better",
    "model_b": "b_better",
    "tie": "tie",
    "tie (bothbad)": "both_bad",
}
KNOWN_KEYS = {
    "question_id",
    "model_a",
    "model_b",
    "winner",
    "judge",
    "turn",
    "anony",
    "language",
    "tstamp",
    "conv_metadata",
    "conversation_a",
    "conversation_b",
    "evalhub",  # what an EvalHub export adds; read back as extra
}
MAX_MODEL_NAME = 200
MAX_QUESTION_ID = 100
MAX_JUDGE = 200
MAX_LANGUAGE = 40
MAX_TURNS = 1000
MAX_EXTRA_CHARS = 20_000
MAX_MESSAGE_CHARS = 100_000
LAST_TSTAMP = 32503680000.0  # the year 3000, in seconds
ROLES = {"user", "assistant", "system"}
COUNT_GROUPS = {
    "header_count": HEADER_LEVELS,
    "list_count": ("ordered", "unordered"),
    "bold_count": ("**", "__"),
}
MAX_COUNT = 10**9
# For `plain_battle`: per side, (group, its key in conv_metadata, its keys in order, as a set).
_SIDE_GROUPS = {
    side: tuple(
        (group, f"{group}_{side}", tuple(keys), frozenset(keys))
        for group, keys in COUNT_GROUPS.items()
    )
    for side in ("a", "b")
}
_GROUP_KEYS = frozenset(key for groups in _SIDE_GROUPS.values() for _, key, _, _ in groups)
_TOKEN_KEYS = frozenset(("sum_assistant_a_tokens", "sum_assistant_b_tokens"))
_CONVERSATION_KEYS = ("conversation_a", "conversation_b")


def to_json(value) -> str:
    """JSON text of a value read from a line, for PostgreSQL's jsonb (and the extra fields'
    size). orjson writes it three to four times as fast as json here (bench/README.md,
    2026-11-27); an integer beyond 64 bits, which json.loads reads and jsonb stores, is
    left to json."""
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class ParsedBattle:
    line: int
    question_id: str
    model_a: str
    model_b: str
    vote: str  # a Battle.Vote value
    judge: str = ""
    turns: int | None = None
    anonymous: bool = True
    language: str = ""
    tstamp: float | None = None
    tokens_a: int | None = None
    tokens_b: int | None = None
    style_a: dict = field(default_factory=dict)
    style_b: dict = field(default_factory=dict)
    # [(user prompt, answer of a, answer of b), ...] when the conversations are given.
    exchanges: tuple[tuple[str, str, str], ...] = ()
    extra: dict = field(default_factory=dict)
    # `extra` as JSON when the check already wrote it (to measure it): the COPY reuses it.
    extra_json: str | None = field(default=None, compare=False, repr=False)


@dataclass
class Checked:
    """What the first reading learned: the problems, the models named (with the first line
    naming each), and how many battles the file holds."""

    problems: Problems
    models: dict[str, int]
    battles: int


def _int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(row: dict, key: str, limit: int, problems: list[str], *, required=False) -> str:
    value = row.get(key)
    if value is None:
        if required:
            problems.append(f'"{key}" is missing.')
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        problems.append(f'"{key}" must be a non-empty string.')
        return ""
    if len(value) > limit:
        problems.append(f'"{key}" has more than {limit} characters.')
        return ""
    return value


def _counts(metadata: dict, group: str, side: str, problems: list[str]) -> dict | None:
    value = metadata.get(f"{group}_{side}")
    if value is None:
        return None
    keys = COUNT_GROUPS[group]
    if (
        not isinstance(value, dict)
        or set(value) - set(keys)
        or not all(_int(v) and 0 <= v <= 10**9 for v in value.values())
    ):
        problems.append(
            f"conv_metadata.{group}_{side} must map {', '.join(keys)} to counts from 0."
        )
        return None
    return {key: value.get(key, 0) for key in keys}


def _metadata(row: dict, problems: list[str]) -> tuple[dict, dict, dict]:
    """(tokens by side, style by side, the rest of conv_metadata)."""
    metadata = row.get("conv_metadata")
    if metadata is None:
        return {}, {"a": {}, "b": {}}, {}
    if not isinstance(metadata, dict):
        problems.append('"conv_metadata" must be an object.')
        return {}, {"a": {}, "b": {}}, {}
    tokens, style = {}, {"a": {}, "b": {}}
    used = set()
    for side in ("a", "b"):
        key = f"sum_assistant_{side}_tokens"
        value = metadata.get(key)
        if value is not None:
            used.add(key)
            if _int(value) and 0 <= value <= 10**9:
                tokens[side] = value
            else:
                problems.append(f"conv_metadata.{key} must be a count from 0.")
        for group in COUNT_GROUPS:
            counts = _counts(metadata, group, side, problems)
            used.add(f"{group}_{side}")
            if counts is not None:
                style[side][group] = counts
    rest = {key: value for key, value in metadata.items() if key not in used}
    return tokens, style, rest


def _conversation(row: dict, side: str, problems: list[str]) -> list[tuple[str, str]] | None:
    value = row.get(f"conversation_{side}")
    if value is None:
        return None
    where = f'"conversation_{side}"'
    if not isinstance(value, list):
        problems.append(f"{where} must be a list of messages.")
        return None
    messages = []
    for number, message in enumerate(value, 1):
        if (
            not isinstance(message, dict)
            or message.get("role") not in ROLES
            or not isinstance(message.get("content"), str)
        ):
            problems.append(
                f'{where} message {number} must be {{"role": "user" | "assistant", '
                '"content": "..."}.'
            )
            return None
        if len(message["content"]) > MAX_MESSAGE_CHARS:
            problems.append(
                f"{where} message {number} has more than {MAX_MESSAGE_CHARS} characters."
            )
            return None
        if message["role"] != "system":
            messages.append((message["role"], message["content"]))
    return messages


def _exchanges(row: dict, problems: list[str]) -> tuple[tuple[str, str, str], ...]:
    """The conversations as (prompt, answer of a, answer of b) per user turn; both sides
    must have had the same user turns (as every Chatbot Arena battle does)."""
    a, b = _conversation(row, "a", problems), _conversation(row, "b", problems)
    if a is None and b is None:
        return ()
    if (a is None) != (b is None):
        problems.append('"conversation_a" and "conversation_b" come together or not at all.')
        return ()
    sides = []
    for messages in (a, b):
        turns = []
        for role, content in messages:
            if role == "user":
                turns.append([content, ""])
            elif turns:
                turns[-1][1] += content
        sides.append(turns)
    if [t[0] for t in sides[0]] != [t[0] for t in sides[1]] or not sides[0]:
        problems.append("the two conversations must have the same user turns, at least one.")
        return ()
    return tuple((pa, aa, ab) for (pa, aa), (_, ab) in zip(sides[0], sides[1], strict=True))


def content_key(row: dict) -> str:
    """A battle's key when it has no question_id: a digest of the line's content, keys
    sorted, so the same battle has the same key however its line is laid out."""
    canonical = json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256-" + hashlib.sha256(canonical.encode()).hexdigest()[:56]


def parse_battle(number: int, row: dict) -> tuple[ParsedBattle | None, list[str]]:
    """The battle of one line, or the problems of that line."""
    battle = plain_battle(number, row)
    if battle is not None:
        return battle, []
    return full_battle(number, row)


def full_battle(number: int, row: dict) -> tuple[ParsedBattle | None, list[str]]:
    """parse_battle's every check, each problem explained (and conversations read)."""
    problems: list[str] = []
    model_a = _text(row, "model_a", MAX_MODEL_NAME, problems, required=True)
    model_b = _text(row, "model_b", MAX_MODEL_NAME, problems, required=True)
    if model_a and model_a == model_b:
        problems.append('"model_a" and "model_b" must be two different models.')
    winner = row.get("winner")
    if not isinstance(winner, str) or winner not in WINNERS:  # a list is not hashable
        shown = json.dumps(winner)[:60] if winner is not None else "nothing"
        problems.append(
            f'"winner" must be one of {", ".join(json.dumps(w) for w in WINNERS)}, not {shown}.'
        )
    question_id = row.get("question_id")
    if question_id is not None:
        question_id = _text(row, "question_id", MAX_QUESTION_ID, problems, required=True)
    judge = _text(row, "judge", MAX_JUDGE, problems)
    language = _text(row, "language", MAX_LANGUAGE, problems)
    turns = row.get("turn")
    if turns is not None and not (_int(turns) and 1 <= turns <= MAX_TURNS):
        problems.append(f'"turn" must be a whole number from 1 to {MAX_TURNS}.')
    anonymous = row.get("anony", True)
    if not isinstance(anonymous, bool):
        problems.append('"anony" must be true or false.')
    tstamp = row.get("tstamp")
    if tstamp is not None and not (
        isinstance(tstamp, int | float)
        and not isinstance(tstamp, bool)
        and math.isfinite(tstamp)
        and 0 <= tstamp <= LAST_TSTAMP
    ):
        problems.append('"tstamp" must be seconds since 1970 (a number before the year 3000).')
    tokens, style, rest = _metadata(row, problems)
    exchanges = _exchanges(row, problems)
    if exchanges and _int(turns) and turns != len(exchanges):
        problems.append(f'"turn" says {turns} but the conversations have {len(exchanges)}.')
    extra = {key: value for key, value in row.items() if key not in KNOWN_KEYS}
    if rest:
        extra["conv_metadata"] = rest
    if "evalhub" in row:
        extra["evalhub"] = row["evalhub"]
    extra_json = to_json(extra) if extra else None
    if extra_json is not None and len(extra_json) > MAX_EXTRA_CHARS:
        problems.append(f"the line's other fields take more than {MAX_EXTRA_CHARS} characters.")
    if problems:
        return None, problems
    return (
        ParsedBattle(
            line=number,
            question_id=question_id or content_key(row),
            model_a=model_a,
            model_b=model_b,
            vote=WINNERS[winner],
            judge=judge,
            turns=turns if turns is not None else (len(exchanges) or None),
            anonymous=anonymous,
            language=language,
            tstamp=float(tstamp) if tstamp is not None else None,
            tokens_a=tokens.get("a"),
            tokens_b=tokens.get("b"),
            style_a=style["a"],
            style_b=style["b"],
            exchanges=exchanges,
            extra=extra,
            extra_json=extra_json,
        ),
        [],
    )


def _plain_text(value, limit: int) -> bool:
    return value is None or (type(value) is str and len(value) <= limit)


def _plain_counts(value, keys: tuple, allowed: frozenset) -> dict | None:
    """A count group as parse_battle stores it (every key, in order), or None when it is
    not plainly valid."""
    if type(value) is not dict or not value.keys() <= allowed:
        return None
    for count in value.values():
        if type(count) is not int or count < 0 or count > MAX_COUNT:
            return None
    if len(value) == len(keys) and tuple(value) == keys:
        return value
    return {key: value.get(key, 0) for key in keys}


def plain_battle(number: int, row: dict) -> ParsedBattle | None:
    """The battle of a line without conversations whose every field is plainly valid, as
    `full_battle` would read it; None for any other line, which `full_battle` then reads
    (and explains). The lines of a large file are nearly all plain: this path,
    with type() tests and no message built, reads one several times faster than the full
    checks (bench/bench_arena_import.py; tests/arenas/interchange/test_reading.py holds
    the two paths to the same battles)."""
    get = row.get
    model_a, model_b, winner = get("model_a"), get("model_b"), get("winner")
    if (
        type(model_a) is not str
        or type(model_b) is not str
        or type(winner) is not str
        or winner not in WINNERS
        or model_a == model_b
        or len(model_a) > MAX_MODEL_NAME
        or len(model_b) > MAX_MODEL_NAME
        or not model_a.strip()
        or not model_b.strip()
        or _CONVERSATION_KEYS[0] in row
        or _CONVERSATION_KEYS[1] in row
    ):
        return None
    question_id, judge, language = get("question_id"), get("judge"), get("language")
    turns, anonymous, tstamp = get("turn"), get("anony", True), get("tstamp")
    if (
        not _plain_text(question_id, MAX_QUESTION_ID)
        or (question_id is not None and not question_id.strip())
        or not _plain_text(judge, MAX_JUDGE)
        or not _plain_text(language, MAX_LANGUAGE)
        or (turns is not None and (type(turns) is not int or not 1 <= turns <= MAX_TURNS))
        or type(anonymous) is not bool
    ):
        return None
    if tstamp is not None:
        kind = type(tstamp)
        if kind is float:
            if not 0.0 <= tstamp <= LAST_TSTAMP:  # NaN fails both comparisons
                return None
        elif kind is not int or not 0 <= tstamp <= LAST_TSTAMP:
            return None
        tstamp = float(tstamp)
    tokens = {"a": None, "b": None}
    style: dict[str, dict] = {"a": {}, "b": {}}
    rest = None
    metadata = get("conv_metadata")
    if metadata is not None:
        if type(metadata) is not dict:
            return None
        for side, groups in _SIDE_GROUPS.items():
            count = metadata.get(f"sum_assistant_{side}_tokens")
            if count is not None:
                if type(count) is not int or count < 0 or count > MAX_COUNT:
                    return None
                tokens[side] = count
            for group, key, keys, allowed in groups:
                value = metadata.get(key)
                if value is not None:
                    counts = _plain_counts(value, keys, allowed)
                    if counts is None:
                        return None
                    style[side][group] = counts
        rest = {
            key: value
            for key, value in metadata.items()
            if key not in _GROUP_KEYS and (value is None or key not in _TOKEN_KEYS)
        }
    extra = {key: value for key, value in row.items() if key not in KNOWN_KEYS}
    if rest:
        extra["conv_metadata"] = rest
    if "evalhub" in row:
        extra["evalhub"] = row["evalhub"]
    extra_json = to_json(extra) if extra else None
    if extra_json is not None and len(extra_json) > MAX_EXTRA_CHARS:
        return None
    return ParsedBattle(
        line=number,
        question_id=question_id or content_key(row),
        model_a=model_a,
        model_b=model_b,
        vote=WINNERS[winner],
        judge=judge or "",
        turns=turns,
        anonymous=anonymous,
        language=language or "",
        tstamp=tstamp,
        tokens_a=tokens["a"],
        tokens_b=tokens["b"],
        style_a=style["a"],
        style_b=style["b"],
        extra=extra,
        extra_json=extra_json,
    )


def _lines(stream: BinaryIO) -> Iterator[tuple[int, str | None, str | None]]:
    """(line number, text, why it cannot be read) for each line of a binary stream."""
    stream.seek(0)
    for number, raw in enumerate(stream, 1):
        if number == 1:
            raw = raw.removeprefix(b"\xef\xbb\xbf")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            yield number, None, f"the line is not UTF-8 (byte 0x{raw[error.start]:02x})."
            continue
        yield number, text.rstrip("\r\n"), None


def _rows(stream: BinaryIO, problems: Problems | None) -> Iterator[tuple[int, dict]]:
    for number, text, unreadable in _lines(stream):
        if unreadable is not None:
            if problems is not None:
                problems.append(Problem(number, unreadable))
            continue
        if not text.strip():
            continue
        value, why = parse_json_line(text)
        if why is None and not isinstance(value, dict):
            why = "each line must be a JSON object {...}."
        if why is not None:
            if problems is not None:
                problems.append(Problem(number, why))
            continue
        yield number, value


def _digest(key: str) -> int:
    return int.from_bytes(
        hashlib.blake2b(key.encode(), digest_size=8).digest(), "little", signed=True
    )


def check(stream: BinaryIO, take: Callable[[ParsedBattle], None] | None = None) -> Checked:
    """Read the whole file once and find every problem (see the module); `take`, when
    given, is handed each battle checked so far (on PostgreSQL, the import stages them
    while it checks: arenas/interchange/copying.py)."""
    problems = Problems()
    models: dict[str, int] = {}
    digests, lines = array("q"), array("q")
    battles = 0
    for number, row in _rows(stream, problems):
        battle, found = parse_battle(number, row)
        if battle is None:
            for message in found:
                problems.append(Problem(number, message))
            continue
        battles += 1
        if take is not None:
            take(battle)
        models.setdefault(battle.model_a, number)
        models.setdefault(battle.model_b, number)
        digests.append(_digest(battle.question_id))
        lines.append(number)
    for line, first in _repeats(digests, lines, stream):
        problems.append(
            Problem(line, f"the same battle as line {first} (the same question_id or content).")
        )
    if not battles and not problems:
        problems.append(Problem(None, "The file holds no battles."))
    return Checked(_by_line(problems), models, battles)


def _by_line(problems: Problems) -> Problems:
    ordered = Problems(sorted(problems.kept, key=lambda p: p.line or 0))
    ordered.total = problems.total
    return ordered


def _repeats(digests: array, lines: array, stream: BinaryIO) -> list[tuple[int, int]]:
    """(line, first line) of each battle whose key an earlier line already had. Digests
    that collide are confirmed on the keys themselves (read again from those lines)."""
    if not digests:
        return []
    import numpy as np  # an import that needs numpy, not the site's start-up

    keys = np.frombuffer(digests, dtype=np.int64)
    where = np.frombuffer(lines, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    same = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
    if same.size == 0:
        return []
    suspects = set(where[order[same]].tolist()) | set(where[order[same + 1]].tolist())
    found: dict[str, int] = {}
    repeats = []
    for number, row in _rows(stream, None):
        if number not in suspects:
            continue
        battle, _ = parse_battle(number, row)
        if battle is None:
            continue
        if battle.question_id in found:
            repeats.append((number, found[battle.question_id]))
        else:
            found[battle.question_id] = number
    return repeats


def battles(stream: BinaryIO) -> Iterator[ParsedBattle]:
    """The battles of a file that `check` found no problem in, in file order."""
    for number, row in _rows(stream, None):
        battle, _ = parse_battle(number, row)
        if battle is not None:
            yield battle


def name_slug(name: str) -> str:
    """The catalog slug of a model's name: lowercase, every run of other characters a
    hyphen ("Llama-3.1-405B" is llama-3-1-405b)."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:80].strip("-")
