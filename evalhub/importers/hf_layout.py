"""Prompt sets, responses and conversations from a file in the Hugging Face layout: a
Parquet file (what `datasets` writes and the Hub serves), or JSON lines with the same
columns. Each row is mapped onto EvalHub's own .jsonl layout and checked, with its row
number, by the same checks as an upload in that layout (prompts.prompt_rows,
responses.collect_keyed, conversations.conversation_rows): the same messages, the same
limits, nothing stored unless every row passes.

The columns EvalHub reads (`FIELDS`) are looked up under their own names unless the
column mapping names another: `prompt=instruction, id=question_id`.

- prompts: `id` (the row number when there is no such column), the context as `prompt`
  (one utterance), `context` (a list of utterances) or `messages` (a list of {role,
  content}: their contents, in order), and `references` (a list, or one string);
- responses: `id` (the prompt's id) and `response`;
- conversations: `id`, `messages` (a list of {role, content}, optionally `speaker`),
  `speakers` (system slugs, "human" for a person) or else `model` (the slug of the system
  that answers: "user" messages are a person's, "assistant" ones the model's), and
  optionally `domain`, `source` and `metadata` (an object, or its JSON text). "system"
  messages are no one's turn: they go into the conversation's metadata.

Parquet is read a batch of rows at a time (pyarrow's `iter_batches`), only the mapped
columns; its uncompressed size counts against the upload limit as the file's would.
"""

import io
import json
from collections.abc import Iterator
from pathlib import PurePath

from ..errors import Problem
from .conversations import HUMAN, ParsedConversation, conversation_rows
from .problems import (
    InvalidUpload,
    Problems,
    check_size,
    decode_utf8,
    iter_json_lines,
    merge_by_line,
)
from .prompts import ParsedPrompt, prompt_rows
from .responses import ParsedResponses, PromptRef, collect_keyed

FIELDS = {
    "prompts": ("id", "prompt", "context", "messages", "references"),
    "responses": ("id", "response"),
    "conversations": ("id", "messages", "speakers", "model", "domain", "source", "metadata"),
}
SUFFIXES = (".parquet", ".jsonl")
BATCH = 1000
MAX_MAPPING_CHARS = 2000


def is_hf_file(filename: str) -> bool:
    return PurePath(filename).suffix.lower() == ".parquet"


def wanted(filename: str, columns: str | None) -> bool:
    """Whether an upload is read in this layout: a Parquet file always, JSON lines when a
    column mapping comes with it (`columns`, even "id=id" when the names already match)."""
    return is_hf_file(filename) or bool(columns and columns.strip())


def _mapping_error(message: str) -> InvalidUpload:
    return InvalidUpload([Problem(field="columns", message=message)])


def parse_mapping(text: str | None, kind: str) -> dict[str, str]:
    """`ours=theirs` pairs, separated by commas or new lines, as {ours: theirs};
    InvalidUpload on the field "columns"."""
    mapping: dict[str, str] = {}
    if not text or not text.strip():
        return mapping
    if len(text) > MAX_MAPPING_CHARS:
        raise _mapping_error(f"at most {MAX_MAPPING_CHARS} characters of mappings.")
    for part in text.replace("\n", ",").split(","):
        if not part.strip():
            continue
        ours, sep, theirs = (piece.strip() for piece in part.partition("="))
        if not sep or not ours or not theirs:
            raise _mapping_error(
                f"'{part.strip()[:80]}' is not ours=theirs (e.g. prompt=instruction)."
            )
        if ours not in FIELDS[kind]:
            raise _mapping_error(
                f"'{ours[:80]}' is none of the columns EvalHub reads for {kind}: "
                + ", ".join(FIELDS[kind])
                + "."
            )
        mapping[ours] = theirs
    return mapping


def _parquet_rows(data: bytes, wanted: set[str], max_bytes: int, problems: Problems):
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(io.BytesIO(data))
    except (pa.ArrowException, OSError) as error:
        raise InvalidUpload([Problem(None, f"Not a readable Parquet file ({error}).")]) from None
    metadata = parquet.metadata
    size = sum(metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups))
    if size > max_bytes:
        # Compressed pages could otherwise smuggle in far more than an upload may hold.
        raise InvalidUpload(
            [
                Problem(
                    None,
                    f"The file's data come to {size:,} bytes uncompressed; the limit is "
                    f"{max_bytes:,} bytes.",
                )
            ]
        )
    columns = [name for name in parquet.schema_arrow.names if name in wanted]
    number = 0
    try:
        for batch in parquet.iter_batches(batch_size=BATCH, columns=columns):
            for row in batch.to_pylist():
                number += 1
                yield number, row
    except (pa.ArrowException, OSError) as error:
        problems.append(Problem(number + 1, f"unreadable row group ({error})."))


def _file_rows(data: bytes, filename: str, wanted: set[str], max_bytes: int, problems: Problems):
    check_size(len(data), max_bytes)
    suffix = PurePath(filename).suffix.lower()
    if suffix == ".parquet":
        return _parquet_rows(data, wanted, max_bytes, problems)
    if suffix == ".jsonl":
        return iter_json_lines(decode_utf8(data), problems)
    raise InvalidUpload(
        [Problem(None, "Upload a Hugging Face dataset file as .parquet or .jsonl.")]
    )


def _column_names(data: bytes, filename: str) -> list[str] | None:
    """A Parquet file's columns (known before any row is read); None for JSON lines."""
    if not is_hf_file(filename):
        return None
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(io.BytesIO(data)).schema_arrow.names
    except Exception:  # noqa: BLE001 - _parquet_rows reports an unreadable file
        return None


def _check_columns(data, filename, mapping, required: list[tuple[str, ...]]):
    """Refuse a Parquet file that lacks a column the mapping names, or has none of each
    group of alternatives in `required`, before reading its rows."""
    names = _column_names(data, filename)
    if names is None:
        return
    problems = []
    for ours, theirs in mapping.items():
        if theirs not in names:
            problems.append(
                Problem(
                    field="columns",
                    message=f"the file has no column '{theirs[:80]}' (for {ours}); its columns: "
                    + ", ".join(names[:30])
                    + ".",
                )
            )
    for group in required:
        if any(ours in mapping for ours in group):
            continue  # a mapped column: there if it passed above, reported if not
        if not any(ours in names for ours in group):
            problems.append(
                Problem(
                    field="columns",
                    message="the file has no column for "
                    + " or ".join(group)
                    + ": map one (e.g. "
                    + f"{group[0]}=your_column); its columns: "
                    + ", ".join(names[:30])
                    + ".",
                )
            )
    if problems:
        raise InvalidUpload(problems)


def _mapped(rows, mapping: dict[str, str], kind: str) -> Iterator[tuple[int, dict]]:
    for number, row in rows:
        yield number, {ours: row.get(mapping.get(ours, ours)) for ours in FIELDS[kind]}


def _wanted(mapping: dict[str, str], kind: str) -> set[str]:
    return {mapping.get(ours, ours) for ours in FIELDS[kind]}


def _texts(value) -> list | None:
    if isinstance(value, str):
        return [value]
    return value


def _prompt_line(number: int, row: dict) -> dict:
    if row["prompt"] is not None:
        context = _texts(row["prompt"])
    elif row["messages"] is not None and isinstance(row["messages"], list):
        context = [m.get("content") if isinstance(m, dict) else m for m in row["messages"]]
    else:
        context = row["context"]
    identifier = row["id"] if row["id"] is not None else str(number)
    references = _texts(row["references"]) if row["references"] is not None else []
    return {"id": identifier, "context": context, "references": references}


def parse_prompts(data: bytes, filename: str, mapping: dict, max_bytes: int) -> list[ParsedPrompt]:
    _check_columns(data, filename, mapping, [("prompt", "context", "messages")])
    problems = Problems()
    rows = _file_rows(data, filename, _wanted(mapping, "prompts"), max_bytes, problems)
    lines = (
        (number, _prompt_line(number, row)) for number, row in _mapped(rows, mapping, "prompts")
    )
    prompts = prompt_rows(lines, problems)
    if not prompts:
        raise InvalidUpload([Problem(None, "The file holds no prompts.")])
    return prompts


def parse_responses(
    data: bytes, filename: str, mapping: dict, prompts: list[PromptRef], max_bytes: int
) -> ParsedResponses:
    _check_columns(data, filename, mapping, [("id",), ("response",)])
    problems = Problems()
    rows = _file_rows(data, filename, _wanted(mapping, "responses"), max_bytes, problems)
    lines = (
        (number, {"prompt": row["id"], "response": row["response"]})
        for number, row in _mapped(rows, mapping, "responses")
    )
    return collect_keyed(lines, problems, prompts, jsonl=True)


def _conversation_line(row: dict) -> dict | str:
    """The row in EvalHub's conversation layout, or why it cannot be."""
    messages = row["messages"]
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return "'messages' must be a list of {role, content}."
    speakers = row["speakers"]
    metadata = row["metadata"]
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata)
        except ValueError:
            return "'metadata' is neither an object nor its JSON text."
    metadata = dict(metadata or {})
    system_messages = [m.get("content") for m in messages if m.get("role") == "system"]
    if system_messages:
        metadata["system"] = system_messages
    said = [m for m in messages if m.get("role") != "system"]
    if speakers is None:
        model = row["model"]
        if not isinstance(model, str) or not model.strip():
            return "no 'speakers' and no 'model': say which system answers (map model=...)."
        speakers = [HUMAN, model.strip()]
    if not isinstance(speakers, list) or not speakers:
        return "'speakers' must be a list of system slugs (\"human\" for a person)."
    by_role = {
        "user": next((i for i, s in enumerate(speakers) if s == HUMAN), None),
        "assistant": next((i for i, s in enumerate(speakers) if s != HUMAN), None),
    }
    turns = []
    for message in said:
        speaker = message.get("speaker")
        if speaker is None:
            role = message.get("role")
            if role not in by_role:
                return f"a message's role is {str(role)[:40]!r}; expected user or assistant."
            if (speaker := by_role[role]) is None:
                return f"a {role} message, but no speaker of 'speakers' can have said it."
        turns.append({"speaker": speaker, "text": message.get("content")})
    line = {"id": row["id"], "speakers": speakers, "turns": turns}
    for key in ("domain", "source"):
        if row[key] is not None:
            line[key] = row[key]
    if metadata:
        line["metadata"] = metadata
    return line


def parse_conversations(
    data: bytes, filename: str, mapping: dict, max_bytes: int
) -> list[ParsedConversation]:
    _check_columns(data, filename, mapping, [("id",), ("messages",)])
    problems = Problems()
    rows = _file_rows(data, filename, _wanted(mapping, "conversations"), max_bytes, problems)

    def lines():
        for number, row in _mapped(rows, mapping, "conversations"):
            line = _conversation_line(row)
            if isinstance(line, str):
                problems.append(Problem(number, line))
            else:
                yield number, line

    parsed, found = conversation_rows(lines())
    refused = merge_by_line(problems, found)
    if refused:
        raise InvalidUpload(refused)
    if not parsed:
        raise InvalidUpload([Problem(None, "The file holds no conversations.")])
    return parsed
