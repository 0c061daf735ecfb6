"""Parse and validate a prompt set file (staff): .txt one prompt per line, or .jsonl."""

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePath

from ..models import Prompt
from .problems import (
    InvalidUpload,
    Problem,
    Problems,
    check_size,
    decode_utf8,
    iter_json_lines,
    iter_lines,
    too_long,
)

MAX_ID = Prompt._meta.get_field("external_id").max_length


@dataclass(frozen=True)
class ParsedPrompt:
    external_id: str
    context: list[str]
    references: list[str] = field(default_factory=list)


def parse_prompts(data: bytes, filename: str, max_bytes: int) -> list[ParsedPrompt]:
    """Prompts in file order, or InvalidUpload listing every problem.

    `.txt`: one prompt per line (a single-utterance context), ids are line numbers.
    `.jsonl`: {"id": ..., "context": [utterance, ...], "references": [response, ...]}.
    """
    check_size(len(data), max_bytes)
    suffix = PurePath(filename).suffix.lower()
    text = decode_utf8(data)
    if suffix == ".txt":
        prompts = _parse_txt(text)
    elif suffix == ".jsonl":
        prompts = _parse_jsonl(text)
    else:
        raise InvalidUpload([Problem(None, "Upload prompts as a .txt or a .jsonl file.")])
    if not prompts:
        raise InvalidUpload([Problem(None, "The file holds no prompts.")])
    return prompts


def _parse_txt(text: str) -> list[ParsedPrompt]:
    prompts, problems = [], Problems()
    for number, line in enumerate(iter_lines(text), 1):
        if not line.strip():
            problems.append(Problem(number, "empty prompt."))
        elif oversized := too_long("the prompt", line.strip()):
            problems.append(Problem(number, oversized))
        elif not problems:  # once the file is refused, its prompts are not needed
            prompts.append(ParsedPrompt(str(number), [line.strip()]))
    if problems:
        raise InvalidUpload(problems)
    return prompts


def _string_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)


def _too_long_utterance(utterances: list[str]) -> str | None:
    return next(filter(None, (too_long("an utterance", u) for u in utterances)), None)


def _parse_jsonl(text: str) -> list[ParsedPrompt]:
    problems = Problems()
    return prompt_rows(iter_json_lines(text, problems), problems)


def prompt_rows(rows: Iterable[tuple[int, dict]], problems: Problems) -> list[ParsedPrompt]:
    """Check (line number, object) pairs in the .jsonl layout, one at a time: the prompts,
    or InvalidUpload with every problem (`problems` may hold some already). An importer of
    another layout maps its rows onto this one and reuses these checks."""
    prompts, seen = [], {}
    for number, row in rows:
        prompt_id = str(row.get("id", "")).strip()
        context = row.get("context")
        references = row.get("references", [])
        if not prompt_id:
            problems.append(Problem(number, "missing the prompt id ('id')."))
        elif prompt_id in seen:
            problems.append(
                Problem(number, f"duplicate id '{prompt_id}' (first on line {seen[prompt_id]}).")
            )
        elif not (_string_list(context) and context):
            problems.append(
                Problem(number, "'context' must be a list of one or more non-empty utterances.")
            )
        elif not _string_list(references):
            problems.append(Problem(number, "'references' must be a list of non-empty strings."))
        elif oversized := too_long("the id", prompt_id, MAX_ID) or _too_long_utterance(
            context + references
        ):
            problems.append(Problem(number, oversized))
        else:
            seen[prompt_id] = number
            if not problems:  # once the file is refused, its prompts are not needed
                prompts.append(ParsedPrompt(prompt_id, context, references))
    if problems:
        raise InvalidUpload(problems)
    return prompts
