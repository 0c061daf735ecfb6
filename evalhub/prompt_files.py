"""Prompt sets written back in the formats they are uploaded in (evalhub/importers/prompts.py).

- JSON lines: ``{"id", "context": [...], "references": [...]}`` per prompt, in order; any
  prompt set can be written so, and reading the file back gives the same prompts.
- Text: one prompt per line, possible only when every prompt is one utterance on one line
  and the ids are the line numbers (what a .txt upload gives); otherwise `txt_possible` is
  False and pages offer only JSON lines.

Both are generators over a chunked query, for a download streamed at any size.
"""

import json
from collections.abc import Iterator

from .models import PromptSet

CHUNK = 2000


def _prompts(prompt_set: PromptSet):
    return (
        prompt_set.prompts.order_by("position")
        .values_list("external_id", "context", "references")
        .iterator(chunk_size=CHUNK)
    )


def jsonl_lines(prompt_set: PromptSet) -> Iterator[str]:
    for external_id, context, references in _prompts(prompt_set):
        row = {"id": external_id, "context": context, "references": references or []}
        yield json.dumps(row, ensure_ascii=False) + "\n"


def txt_possible(prompt_set: PromptSet) -> bool:
    for n, (external_id, context, references) in enumerate(_prompts(prompt_set), 1):
        single = len(context) == 1 and "\n" not in context[0] and "\r" not in context[0]
        if not single or references or external_id != str(n) or not context[0].strip():
            return False
    return True


def txt_lines(prompt_set: PromptSet) -> Iterator[str]:
    for _, context, _ in _prompts(prompt_set):
        yield context[0] + "\n"
