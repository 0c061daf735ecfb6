"""Parse and validate a submission file: a system's responses to every prompt of a set."""

from dataclasses import dataclass
from pathlib import PurePath

from .problems import (
    InvalidUpload,
    Problem,
    check_size,
    csv_rows,
    decode_utf8,
    json_lines,
    split_lines,
)

FORMATS = ("txt", "jsonl", "csv")


@dataclass(frozen=True)
class PromptRef:
    """What the parser needs to know of a prompt: its position and the id files use."""

    position: int
    external_id: str


def format_from_filename(filename: str) -> str | None:
    suffix = PurePath(filename).suffix.lower().lstrip(".")
    return suffix if suffix in FORMATS else None


def parse_responses(
    data: bytes, fmt: str | None, filename: str, prompts: list[PromptRef], max_bytes: int
) -> dict[int, str]:
    """Return {prompt position: response text}, or raise InvalidUpload listing every problem.

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
    if not text.strip():
        raise InvalidUpload([Problem(None, "The file is empty.")])
    if fmt == "txt":
        return _parse_txt(text, prompts)
    rows, problems = json_lines(text) if fmt == "jsonl" else csv_rows(text, ("prompt", "response"))
    if fmt == "jsonl" and not rows and problems:
        problems.insert(0, Problem(None, "The file is not in the JSON lines format."))
    return _collect_keyed(rows, problems, prompts)


def _parse_txt(text: str, prompts: list[PromptRef]) -> dict[int, str]:
    lines = split_lines(text)
    problems = []
    if len(lines) != len(prompts):
        problems.append(
            Problem(
                None,
                f"Expected {len(prompts)} lines, one response per prompt in order; "
                f"the file has {len(lines)}.",
            )
        )
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            problems.append(Problem(number, "empty response."))
    if problems:
        raise InvalidUpload(problems)
    return {prompt.position: line.strip() for prompt, line in zip(prompts, lines, strict=True)}


def _collect_keyed(
    rows: list[tuple[int, dict]], problems: list[Problem], prompts: list[PromptRef]
) -> dict[int, str]:
    by_id = {prompt.external_id: prompt for prompt in prompts}
    seen: dict[str, int] = {}
    responses: dict[int, str] = {}
    for number, row in rows:
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
        if not response.strip():
            problems.append(Problem(number, "empty response."))
            continue
        responses[by_id[prompt_id].position] = response.strip()
    missing = [prompt.external_id for prompt in prompts if prompt.external_id not in seen]
    # When no row could be read at all, "no response for every prompt" would only be noise.
    if missing and (rows or not problems):
        listed = ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else "")
        problems.append(
            Problem(None, f"No response for {len(missing)} of {len(prompts)} prompts: {listed}.")
        )
    if problems:
        raise InvalidUpload(problems)
    return responses
