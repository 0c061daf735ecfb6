"""Input a user got wrong: one exception, each problem with its place, one way to show it.

Every error that a user can fix by changing what they gave (a file, a form, a setting) is a
`UserInputError`. It holds `Problem`s, each with the line of a file or the name of a field
(or neither, for the input as a whole) and a message saying what to do. Pages show it, and
any other error a user should read, with `show_on_page` (on a form's fields, or as
messages): the one helper, no page calls `messages.error` itself. The REST API answers it,
and every other error from 400 to 500, with `as_dict()`'s shape through
`evalhub.api.exceptions.exception_handler`:

    {"errors": [{"line": 3, "message": "..."}, {"field": "slug", "message": "..."}],
     "error_count": 2}
"""

from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib import messages

# A file with thousands of bad lines would bury the first ones; the count says how many more.
SHOWN_PROBLEMS = 20


@dataclass(frozen=True)
class Problem:
    line: int | None = None  # 1-based line of a file
    message: str = ""
    field: str | None = None  # name of a form or API field

    def __str__(self):
        if self.line:
            return f"line {self.line}: {self.message}"
        if self.field:
            return f"{self.field}: {self.message}"
        return self.message

    def as_dict(self) -> dict:
        if self.field is not None:
            return {"field": self.field, "message": self.message}
        # A problem with the input as a whole has "line": null.
        return {"line": self.line, "message": self.message}


@dataclass(frozen=True)
class FileProblem:
    """A problem of one of several files (a study's conversations and judgments), or of a
    command-line argument such as "--slug" (then reported as that field)."""

    filename: str
    line: int | None
    message: str

    def __str__(self):
        where = f"{self.filename} line {self.line}" if self.line else self.filename
        return f"{where}: {self.message}"

    def as_dict(self) -> dict:
        if self.filename.startswith("--"):
            return {"field": self.filename[2:], "message": self.message}
        # "file" says which of the uploaded files the line is in.
        return {"line": self.line, "file": self.filename, "message": self.message}


class Problems:
    """Problems as they are found, keeping only the first `SHOWN_PROBLEMS` in the order
    added and counting the rest: a file of millions of bad lines costs no more memory
    than one of twenty. Holds the first ones by line when problems are added by line."""

    def __init__(self, problems: Iterable[Problem] = ()):
        self.kept: list[Problem] = []
        self.total = 0
        self.extend(problems)

    def append(self, problem: Problem) -> None:
        self.total += 1
        if len(self.kept) < SHOWN_PROBLEMS:
            self.kept.append(problem)

    def has_room(self) -> bool:
        return len(self.kept) < SHOWN_PROBLEMS

    def count(self, n: int) -> None:
        """Count n more problems past the shown ones, without building them."""
        self.total += n

    def extend(self, problems: Iterable[Problem]) -> None:
        if isinstance(problems, Problems):
            for problem in problems.kept:
                self.append(problem)
            self.total += problems.total - len(problems.kept)
            return
        for problem in problems:
            self.append(problem)

    def insert(self, index: int, problem: Problem) -> None:
        self.total += 1
        self.kept.insert(index, problem)
        del self.kept[SHOWN_PROBLEMS:]

    def __iadd__(self, problems: Iterable[Problem]) -> "Problems":
        self.extend(problems)
        return self

    def __iter__(self):
        return iter(self.kept)

    def __len__(self) -> int:
        return self.total

    def __bool__(self) -> bool:
        return self.total > 0


class UserInputError(Exception):
    """Raised with every problem found; nothing has been written when it is raised.

    `UserInputError("message")` is one problem with no place; `field=` or `line=` give it one;
    a list of `Problem`s gives several.
    """

    # What the API answers it with (evalhub/api/exceptions.py); a quota has its own.
    status_code = 400
    retry_after: int | None = None  # seconds, for a Retry-After header

    def __init__(
        self,
        problems: str | Iterable[Problem] = (),
        *,
        field: str | None = None,
        line: int | None = None,
        summary: str | None = None,
    ):
        if isinstance(problems, str):
            problems = [Problem(line=line, message=problems, field=field)]
        # A `Problems` collector keeps the first ones and counts them all.
        self._total = problems.total if isinstance(problems, Problems) else None
        self.problems = in_line_order(problems)
        if summary is None:
            summary = "; ".join(str(p) for p in self.problems[:3])
        super().__init__(summary)

    @classmethod
    def from_fields(cls, errors: dict[str, str | list[str]], **kwargs) -> "UserInputError":
        return cls(field_problems(errors), **kwargs)

    @property
    def shown(self) -> list[Problem]:
        return self.problems[:SHOWN_PROBLEMS]

    @property
    def total(self) -> int:
        return max(self._total or 0, len(self.problems))

    def as_dict(self) -> dict:
        return {"errors": [p.as_dict() for p in self.shown], "error_count": self.total}

    def messages(self) -> list[str]:
        """The shown problems as sentences, and how many more there are."""
        return [str(p) for p in self.shown] + ([self.more_note()] if self.more_note() else [])

    def more_note(self) -> str:
        hidden = self.total - len(self.shown)
        return f"... and {hidden} more problem{'s' if hidden != 1 else ''}." if hidden else ""

    def refused_import(self, write, prefix: str = "") -> str:
        """For import commands: write every problem kept (with `write`, a stream's write)
        and return the one-line summary their CommandError carries."""
        for problem in self.problems:
            write(f"{prefix}{problem}")
        return f"Nothing imported: {self.total} problem{'s' if self.total != 1 else ''}."


def in_line_order(problems: Iterable) -> list:
    """The problems of a line in file and line order, in the places the problems of a line
    held; the others (a field, a whole file) stay where they were. Checks that run in
    several passes (a duplicate found at the end of a file, say) no longer jumble the lines."""
    problems = list(problems)
    files: dict[str, int] = {}
    for p in problems:
        files.setdefault(getattr(p, "filename", ""), len(files))
    places = [i for i, p in enumerate(problems) if getattr(p, "line", None) is not None]
    ordered = sorted(
        (problems[i] for i in places),
        key=lambda p: (files[getattr(p, "filename", "")], p.line),
    )  # stable: problems of one line keep the order they were found in
    for i, p in zip(places, ordered, strict=True):
        problems[i] = p
    return problems


def field_problems(errors: dict[str, str | list[str]]) -> list[Problem]:
    """{field: message or [messages]} as Problems; the field "" (or None) is the whole form."""
    problems = []
    for name, texts in errors.items():
        for message in [texts] if isinstance(texts, str) else texts:
            problems.append(Problem(field=name or None, message=str(message)))
    return problems


def show_on_page(request, error: "UserInputError | str", form=None, *, about: str = "") -> None:
    """The page's one way to tell a user what went wrong and what to fix.

    `error` is a `UserInputError`, or the text of one problem. With a form, each problem sits
    on its field (problems of no field of the form, and lines of a file, go above the form);
    without one, each shown problem becomes an error message, prefixed with what it is
    `about` (a tournament's name, a worker) when given.
    """
    if isinstance(error, str):
        error = UserInputError(error)
    if form is None:
        for text in error.messages():
            messages.error(request, f"{about}: {text}" if about else text)
        return
    for problem in error.shown:
        field = problem.field if problem.field in form.fields else None
        # A line keeps its number; a field's name would repeat what the form shows.
        form.add_error(field, str(problem) if problem.line else problem.message)
    if error.more_note():
        form.add_error(None, error.more_note())
