"""Parse and validate a submission file: a system's responses to every prompt of a set."""

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePath

from .problems import (
    InvalidUpload,
    Problem,
    Problems,
    check_size,
    count_lines,
    decode_utf8,
    iter_csv_rows,
    iter_json_lines,
    iter_lines,
    too_long,
)

FORMATS = ("txt", "jsonl", "csv")


@dataclass(frozen=True)
class PromptRef:
    """What the parser needs to know of a prompt: its position and the id files use."""

    position: int
    external_id: str


@dataclass(frozen=True)
class ParsedResponses:
    """A valid response file: the text for every prompt, and the lines that answered nothing.

    An empty response is kept (as an empty text): real systems produce them, ChatEval's own
    published submissions contain them, and the metrics count them (`n_empty`).
    """

    texts: dict[int, str]  # prompt position -> response text, stripped
    empty_lines: list[int]  # 1-based line numbers of empty responses, in order

    @property
    def warnings(self) -> list[Problem]:
        return [
            Problem(line, "empty response (stored; counted as zero tokens).")
            for line in self.empty_lines
        ]


def format_from_filename(filename: str) -> str | None:
    suffix = PurePath(filename).suffix.lower().lstrip(".")
    return suffix if suffix in FORMATS else None


def parse_responses(
    data: bytes, fmt: str | None, filename: str, prompts: list[PromptRef], max_bytes: int
) -> ParsedResponses:
    """Return every prompt's response, or raise InvalidUpload listing every problem.

    `fmt` is the declared format; None means "from the file name".
    """
    check_size(len(data), max_bytes)
    fmt = fmt or format_from_filename(filename)
    if fmt not in FORMATS:
        raise InvalidUpload(
            [
                Problem(
                    None,
                    f"Cannot tell the format of '{filename}': use a .txt, .jsonl or .csv file, "
                    "or choose the format.",
                )
            ]
        )
    text = decode_utf8(data)
    if not text or text.isspace():
        raise InvalidUpload([Problem(None, "The file is empty.")])
    if fmt == "txt":
        return _parse_txt(text, prompts)
    # Rows are read one at a time and checked as they come: memory stays bounded by the
    # prompt set, not by the file.
    problems = Problems()
    rows = (
        iter_json_lines(text, problems)
        if fmt == "jsonl"
        else iter_csv_rows(text, ("prompt", "response"), problems)
    )
    return collect_keyed(rows, problems, prompts, jsonl=fmt == "jsonl")


def _parse_txt(text: str, prompts: list[PromptRef]) -> ParsedResponses:
    n_lines = count_lines(text)
    if n_lines != len(prompts):
        raise InvalidUpload(
            [
                Problem(
                    None,
                    f"Expected {len(prompts)} lines, one response per prompt in order; "
                    f"the file has {n_lines}.",
                )
            ]
        )
    lines = list(iter_lines(text))
    problems = Problems(
        Problem(number, oversized)
        for number, line in enumerate(lines, start=1)
        if (oversized := too_long("the response", line.strip()))
    )
    if problems:
        raise InvalidUpload(problems)
    return ParsedResponses(
        texts={prompt.position: line.strip() for prompt, line in zip(prompts, lines, strict=True)},
        empty_lines=[number for number, line in enumerate(lines, start=1) if not line.strip()],
    )


def collect_keyed(
    rows: Iterable[tuple[int, dict]],
    problems: Problems,
    prompts: list[PromptRef],
    *,
    jsonl: bool,
) -> ParsedResponses:
    by_id = {prompt.external_id: prompt for prompt in prompts}
    seen: dict[str, int] = {}
    responses: dict[int, str] = {}
    empty_lines: list[int] = []
    n_rows = 0
    for number, row in rows:
        n_rows += 1
        prompt_id = row.get("prompt")
        response = row.get("response")
        if prompt_id is None or prompt_id == "":
            problems.append(Problem(number, "missing the prompt id ('prompt')."))
            continue
        prompt_id = str(prompt_id).strip()
        if prompt_id not in by_id:
            problems.append(Problem(number, f"unknown prompt id '{prompt_id}'."))
            continue
        if prompt_id in seen:
            problems.append(
                Problem(
                    number,
                    f"duplicate prompt id '{prompt_id}' (already answered on line {seen[prompt_id]}).",
                )
            )
            continue
        seen[prompt_id] = number
        if not isinstance(response, str):
            problems.append(Problem(number, "the response must be a string ('response')."))
            continue
        oversized = too_long("the response", response.strip())
        if oversized:
            problems.append(Problem(number, oversized))
            continue
        if not response.strip():
            empty_lines.append(number)
        responses[by_id[prompt_id].position] = response.strip()
    missing = [prompt.external_id for prompt in prompts if prompt.external_id not in seen]
    # When no row could be read at all, "no response for every prompt" would only be noise.
    if missing and (n_rows or not problems):
        listed = ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else "")
        problems.append(
            Problem(None, f"No response for {len(missing)} of {len(prompts)} prompts: {listed}.")
        )
    if jsonl and not n_rows and problems:
        problems.insert(0, Problem(None, "The file is not in the JSON lines format."))
    if problems:
        raise InvalidUpload(problems)
    return ParsedResponses(texts=responses, empty_lines=sorted(empty_lines))
