"""What an importer reports: every problem found, each with the line it is on.

`Problem` and the base of `InvalidUpload` are `evalhub.errors`'s, shared by every user error.
Files are read line by line and only the first `SHOWN_PROBLEMS` problems are kept (the rest
are counted), so a file of millions of bad lines is checked in bounded memory.
"""

import csv
import io
import json
import re
from collections.abc import Iterator

from .. import limits
from ..errors import SHOWN_PROBLEMS, Problem, Problems, UserInputError

__all__ = [
    "MAX_JSON_DEPTH",
    "SHOWN_PROBLEMS",
    "InvalidUpload",
    "Problem",
    "Problems",
    "check_size",
    "count_lines",
    "csv_rows",
    "decode_utf8",
    "iter_csv_rows",
    "iter_json_lines",
    "iter_lines",
    "json_lines",
    "merge_by_line",
    "split_lines",
    "too_long",
]


def too_long(what: str, text: str, limit: int = limits.TEXT_CHARS) -> str | None:
    """The problem of a text over its limit (evalhub/limits.py), or None."""
    if len(text) <= limit:
        return None
    return f"{what} has {len(text):,} characters; at most {limit:,} are allowed."


# Deeper JSON is no conversation or metadata anyone writes; it only exhausts the parser.
MAX_JSON_DEPTH = 32
# Neither PostgreSQL text nor jsonb holds NUL, and no encoder writes a lone surrogate.
# A line that may hold JSON: it begins with whitespace (or is empty) or with what a JSON
# value begins with. Any other line is "not valid JSON" without parsing it.
MAYBE_JSON_LINE = re.compile('^(?:[^\\S\\n]|[{\\["\\-0-9tfn]|$).*', re.MULTILINE)
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class InvalidUpload(UserInputError):
    """A file with problems, each on its line; nothing has been written when it is raised."""


def check_size(size: int, limit: int) -> None:
    if size > limit:
        raise InvalidUpload(
            [Problem(None, f"The file is {size:,} bytes; the limit is {limit:,} bytes.")]
        )


def decode_utf8(data: bytes) -> str:
    """Decode strictly, naming the line of the first byte that is not UTF-8 or is NUL."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise InvalidUpload(
            [
                Problem(
                    line,
                    f"the file is not UTF-8 (byte 0x{data[error.start]:02x} cannot be decoded).",
                )
            ]
        ) from None
    nul = data.find(b"\x00")
    if nul >= 0:
        raise InvalidUpload(
            [Problem(data.count(b"\n", 0, nul) + 1, "the line holds a NUL character (\\0).")]
        )
    return text.removeprefix("\ufeff")


def _unix_line_ends(text: str) -> str:
    if "\r" in text:
        return text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def iter_lines(text: str) -> Iterator[str]:
    """Lines of a file one at a time, tolerating Windows and old Mac line ends and one
    final newline (no list of every line is built)."""
    text = _unix_line_ends(text)
    start, end = 0, len(text)
    while start < end:
        stop = text.find("\n", start)
        if stop < 0:
            yield text[start:]
            return
        yield text[start:stop]
        start = stop + 1


def split_lines(text: str) -> list[str]:
    """Lines of a file, tolerating Windows line ends and one final newline."""
    return list(iter_lines(text))


def count_lines(text: str) -> int:
    if not text:
        return 0
    newlines = text.count("\n") + text.count("\r") - text.count("\r\n")
    return newlines + (0 if text.endswith(("\n", "\r")) else 1)


def unstorable(value) -> str | None:
    """Why a parsed JSON value cannot be stored (too deep, NUL, lone surrogate), or None.

    Walks the value with a stack, not recursion, so depth itself cannot break the walk.
    """
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return f"the JSON is nested deeper than {MAX_JSON_DEPTH} levels."
        if isinstance(item, str):
            found = UNSTORABLE.search(item)
            if found:
                return _unstorable_character(found.group())
        elif isinstance(item, dict):
            for key, child in item.items():
                found = UNSTORABLE.search(key)
                if found:
                    return _unstorable_character(found.group())
                stack.append((child, depth + 1))
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return None


def _unstorable_character(character: str) -> str:
    if character == "\x00":
        return "a string holds a NUL character (\\u0000), which cannot be stored."
    return (
        f"a string holds a lone surrogate (\\u{ord(character):04x}), which is not text; "
        "escape characters outside the Basic Multilingual Plane as a surrogate pair."
    )


def parse_json_line(line: str) -> tuple[object, str | None]:
    """(value, None), or (None, why the line is not usable JSON)."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError as error:
        return None, f"not valid JSON ({error.msg}, column {error.colno})."
    except RecursionError:
        return None, f"the JSON is nested deeper than {MAX_JSON_DEPTH} levels."
    except ValueError:  # an integer of more digits than Python converts
        return None, "a number is too long to read (more than 4300 digits)."
    if _plainly_storable(line):
        return value, None
    return value, unstorable(value)


def _plainly_storable(line: str) -> bool:
    """True when the line alone shows its value is storable, without walking the value: NUL
    and surrogates can only come from the line's characters or its \\u escapes, and a value
    nested deeper than MAX_JSON_DEPTH needs that many brackets. Most lines of a large upload
    pass here; any other line gets the exact walk."""
    return (
        "\\u" not in line
        and line.count("[") + line.count("{") < MAX_JSON_DEPTH
        and UNSTORABLE.search(line) is None
    )


def iter_json_lines(text: str, problems: Problems) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each usable JSON line, one at a time; each unusable
    line's problem goes to `problems`. Blank lines are skipped.

    Only lines that could be JSON (or blank) are looked at one by one; the lines between
    them cannot be JSON and are counted by the regular expression engine, so a flood of
    garbage lines costs seconds, not minutes.
    """
    text = _unix_line_ends(text)
    number, pos = 1, 0
    for match in MAYBE_JSON_LINE.finditer(text):
        if match.start() > pos:
            _not_json(text, pos, match.start(), number, problems)
            number += text.count("\n", pos, match.start())
        line = match.group()
        pos = match.end() + 1
        number += 1
        if not line.strip():
            continue
        value, why = parse_json_line(line)
        if why is not None:
            problems.append(Problem(number - 1, why))
        elif not isinstance(value, dict):
            problems.append(Problem(number - 1, "each line must be a JSON object {...}."))
        else:
            yield number - 1, value
    if pos < len(text):
        _not_json(text, pos, len(text), number, problems)


NOT_JSON = "not valid JSON (Expecting value, column 1)."


def _not_json(text: str, pos: int, end: int, number: int, problems: Problems) -> None:
    """The lines of text[pos:end], none of which can begin a JSON value: each non-empty
    one is a problem (what json.loads would say); past the shown ones they are counted."""
    while pos < end and problems.has_room():
        stop = text.find("\n", pos, end)
        stop = end if stop < 0 else stop
        if stop > pos:
            problems.append(Problem(number, NOT_JSON))
        number, pos = number + 1, stop + 1
    if pos < end:
        problems.count(_lines(text, pos, end) - _empty_lines(text, pos, end))


CHUNK = 1 << 20


def _lines(text: str, pos: int, end: int) -> int:
    """Lines in text[pos:end], which begins at a line start."""
    return text.count("\n", pos, end) + (text[end - 1] != "\n")


def _empty_lines(text: str, pos: int, end: int) -> int:
    """Empty lines in text[pos:end], which begins at a line start: the first if it is one,
    and each newline right after another. Counted with string operations in chunks (no
    object per line): collapsing "\n\n" to "\n" until none is left removes exactly one
    character per such pair."""
    empty = int(text[pos] == "\n")
    for start in range(pos, end, CHUNK):
        stop = min(start + CHUNK, end)
        chunk = text[start:stop]
        length = len(chunk)
        while "\n\n" in chunk:
            chunk = chunk.replace("\n\n", "\n")
        empty += length - len(chunk)
        # The pair across the chunk's end.
        empty += stop < end and text[stop - 1] == "\n" and text[stop] == "\n"
    return empty


def merge_by_line(*collections: Problems) -> Problems:
    """One collection of several, by line (each holds its own first ones by line, so the
    merge's first ones are the file's); the problems of the file as a whole go first."""
    merged = Problems(sorted((p for c in collections for p in c.kept), key=lambda p: p.line or 0))
    merged.total = sum(c.total for c in collections)
    return merged


def json_lines(text: str) -> tuple[list[tuple[int, dict]], Problems]:
    """Parse JSON lines into (line number, object) pairs; blank lines are skipped."""
    problems = Problems()
    rows = list(iter_json_lines(text, problems))
    return rows, problems


def csv_rows(text: str, required: tuple[str, ...]) -> tuple[list[tuple[int, dict]], Problems]:
    """Parse a CSV with a header row naming at least the required columns."""
    problems = Problems()
    rows = list(iter_csv_rows(text, required, problems))
    return rows, problems


def iter_csv_rows(
    text: str, required: tuple[str, ...], problems: Problems
) -> Iterator[tuple[int, dict]]:
    """(line number, record) for each usable row of a CSV whose header names at least the
    required columns, one at a time; each problem goes to `problems`."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        header = [name.strip() for name in (reader.fieldnames or [])]
    except csv.Error as error:
        problems.append(Problem(1, f"not a valid CSV header ({error})."))
        return
    missing = [column for column in required if column not in header]
    if missing:
        found = ", ".join(header) or "nothing"
        problems.append(
            Problem(1, f"the header must name the columns {','.join(required)}; found {found}.")
        )
        return
    reader.fieldnames = header
    try:
        for record in reader:
            # line_num counts physical lines, so quoted newlines keep the numbers right.
            number = reader.line_num
            if None in record:
                problems.append(Problem(number, "more fields than the header has columns."))
                continue
            yield number, record
    except csv.Error as error:
        problems.append(Problem(reader.line_num, f"not valid CSV ({error})."))
