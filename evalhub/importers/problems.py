"""What an importer reports: every problem found, each with the line it is on."""

import csv
import io
import json
from dataclasses import dataclass

SHOWN_PROBLEMS = 20


@dataclass(frozen=True)
class Problem:
    line: int | None  # 1-based; None for a problem with the file as a whole
    message: str

    def __str__(self):
        return f"line {self.line}: {self.message}" if self.line else self.message

    def as_dict(self) -> dict:
        return {"line": self.line, "message": self.message}


class InvalidUpload(Exception):
    """Raised with every problem of a file; nothing has been written when it is raised."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems[:3]))

    @property
    def shown(self) -> list[Problem]:
        return self.problems[:SHOWN_PROBLEMS]

    @property
    def total(self) -> int:
        return len(self.problems)

    def as_dict(self) -> dict:
        return {
            "errors": [p.as_dict() for p in self.shown],
            "error_count": self.total,
        }


def check_size(size: int, limit: int) -> None:
    if size > limit:
        raise InvalidUpload(
            [Problem(None, f"The file is {size:,} bytes; the limit is {limit:,} bytes.")]
        )


def decode_utf8(data: bytes) -> str:
    """Decode strictly, naming the line of the first byte that is not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InvalidUpload(
            [
                Problem(
                    line,
                    f"the file is not UTF-8 (byte 0x{data[error.start]:02x} cannot be decoded).",
                )
            ]
        ) from None
    return text.removeprefix("\ufeff")


def split_lines(text: str) -> list[str]:
    """Lines of a file, tolerating Windows line ends and one final newline."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def json_lines(text: str) -> tuple[list[tuple[int, dict]], list[Problem]]:
    """Parse JSON lines into (line number, object) pairs; blank lines are skipped."""
    rows, problems = [], []
    for number, line in enumerate(split_lines(text), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            problems.append(Problem(number, f"not valid JSON ({error.msg}, column {error.colno})."))
            continue
        if not isinstance(value, dict):
            problems.append(Problem(number, "each line must be a JSON object {...}."))
            continue
        rows.append((number, value))
    return rows, problems


def csv_rows(text: str, required: tuple[str, ...]) -> tuple[list[tuple[int, dict]], list[Problem]]:
    """Parse a CSV with a header row naming at least the required columns."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        header = [name.strip() for name in (reader.fieldnames or [])]
    except csv.Error as error:
        return [], [Problem(1, f"not a valid CSV header ({error}).")]
    missing = [column for column in required if column not in header]
    if missing:
        found = ", ".join(header) or "nothing"
        return [], [
            Problem(1, f"the header must name the columns {','.join(required)}; found {found}.")
        ]
    reader.fieldnames = header
    rows, problems = [], []
    try:
        for record in reader:
            # line_num counts physical lines, so quoted newlines keep the numbers right.
            number = reader.line_num
            if None in record:
                problems.append(Problem(number, "more fields than the header has columns."))
                continue
            rows.append((number, record))
    except csv.Error as error:
        problems.append(Problem(reader.line_num, f"not valid CSV ({error})."))
    return rows, problems
