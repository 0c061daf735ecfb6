"""Reading an ABC-Eval study's files: every line parsed and checked, every problem reported
with its file and line; nothing here writes (see ``writing``).

Names. Behaviour labels are accepted as the paper's Table 4 names them (the keys of
`annotation.kinds.abc_eval.LABELS`, any case, `_` for a space) and as the public release
names two of them (`ALIASES`); Likert and comparative dimensions as the kinds name them or
as the release does ("consistent" for consistency, ...). Anything else is refused with the
list of what is allowed.
"""

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field

from django.conf import settings
from django.core.validators import slug_re

from annotation.kinds.abc_eval import LABELS, TASKS
from annotation.kinds.likert import DIMENSIONS, SCALE
from annotation.models import Study, Worker
from evalhub.errors import FileProblem, UserInputError
from evalhub.importers.conversations import HUMAN, ParsedConversation, conversation_rows
from evalhub.importers.problems import InvalidUpload, check_size, decode_utf8, json_lines
from evalhub.models import Conversation

# The public release's names where they differ from Table 4's.
ALIASES = {"incorrect fact": "fact contradiction", "correct fact": "fact usage"}
DIMENSION_ALIASES = {
    "consistent": "consistency",
    "emotional": "emotion_understanding",
    "engaging": "engagingness",
    "grammatical": "grammaticality",
    "informative": "informativeness",
    "proactive": "proactivity",
    "relevant": "relevance",
}
TASK_OF = {label: task.key for task in TASKS.values() for label in task.labels}
COMPARATIVE_SCORES = (-1, 0, 1)
MAX_ID = Conversation._meta.get_field("external_id").max_length
MAX_SECONDS = 24 * 3600  # one sitting; more is a unit mistake
NO_WHITESPACE = re.compile(r"^\S+$")
MAX_SLUG = 80
# A worker is stored as "<study slug>:<worker>" (see ``writing``).
MAX_WORKER = Worker._meta.get_field("external_id").max_length - MAX_SLUG - 1

BEHAVIOUR_KEYS = ("conversation", "annotator", "labels")
LIKERT_KEYS = ("dialogue", "bot", "label", "worker", "score", "seconds")
COMPARATIVE_KEYS = (*LIKERT_KEYS, "versus", "bot_versus")


class StudyInvalid(UserInputError):
    """Every problem (a FileProblem) of the files; nothing has been written when raised."""


@dataclass(frozen=True)
class BehaviourLine:
    line: int
    conversation: str  # external id of a conversation of the conversations file
    annotator: str
    labels: dict[str, list[int]]  # Table 4 name -> one flag per bot turn


@dataclass(frozen=True)
class ScoreLine:
    """A Likert line, or a comparative one (`versus` set; `score` is then -1, 0 or 1 for
    `dialogue` against `versus`)."""

    line: int
    dialogue: str
    bot: str
    dimension: str
    worker: str
    score: int
    seconds: float | None
    versus: str | None = None
    bot_versus: str | None = None


@dataclass
class StudyFiles:
    """Everything read from the files of one study, checked."""

    conversations: list[ParsedConversation] = field(default_factory=list)
    behaviours: list[BehaviourLine] = field(default_factory=list)
    likert: list[ScoreLine] = field(default_factory=list)
    comparative: list[ScoreLine] = field(default_factory=list)

    def dialogue_ids(self) -> dict[str, str]:
        """The conversation (external id) each dialogue id of the files names: a
        conversation is named by its id and by its `source_id`, the release's dialogue id."""
        named = {}
        for c in self.conversations:
            named[c.external_id] = c.external_id
            source_id = c.metadata.get("source_id")
            if source_id:
                named[source_id] = c.external_id
        return named


def _int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _id(value, limit: int) -> bool:
    return isinstance(value, str) and bool(NO_WHITESPACE.match(value)) and len(value) <= limit


def _slug(value) -> bool:
    return isinstance(value, str) and bool(slug_re.match(value)) and len(value) <= MAX_SLUG


def _name(value: str) -> str:
    return value.strip().lower().replace("_", " ")


def behaviour_label(name) -> str | None:
    """The Table 4 label a file's label name means, or None."""
    if not isinstance(name, str):
        return None
    key = _name(name)
    key = ALIASES.get(key, key)
    return key if key in LABELS else None


def dimension(name) -> str | None:
    if not isinstance(name, str):
        return None
    key = name.strip().lower()
    key = DIMENSION_ALIASES.get(key, key)
    return key if key in DIMENSIONS else None


def read_rows(data: bytes, filename: str):
    """(rows, problems) of a JSON lines file, or (None, problems) when it is unreadable."""
    try:
        check_size(len(data), settings.EVALHUB_MAX_UPLOAD_BYTES)
        rows, found = json_lines(decode_utf8(data))
    except InvalidUpload as invalid:
        return None, [FileProblem(filename, p.line, p.message) for p in invalid.problems]
    problems = [FileProblem(filename, p.line, p.message) for p in found]
    if not rows and not problems:
        problems.append(FileProblem(filename, None, "The file holds no lines."))
    return rows, problems


def parse_conversations(data: bytes, filename: str):
    """The release's conversations `{"id", "source_id", "speakers": ["human", bot],
    "turns": [{"speaker", "text"}]}` as catalog conversations (the source id kept in
    `metadata`), checked by the catalog's own rules plus: one person and one bot who
    speaks at least once. Returns (conversations or None when unreadable, problems)."""
    rows, problems = read_rows(data, filename)
    if rows is None:
        return None, problems
    mapped, source_ids = [], {}
    for number, row in rows:
        row = dict(row)
        row.setdefault("domain", "")
        if "source_id" in row:
            source_id = row.pop("source_id")
            if not _id(source_id, MAX_ID):
                problems.append(
                    FileProblem(
                        filename,
                        number,
                        f"'source_id' must be an id of at most {MAX_ID} characters.",
                    )
                )
            elif source_id in source_ids:
                problems.append(
                    FileProblem(
                        filename,
                        number,
                        f"duplicate source_id '{source_id}' (first on line {source_ids[source_id]}).",
                    )
                )
            else:
                source_ids[source_id] = number
                row["metadata"] = {**(row.get("metadata") or {}), "source_id": source_id}
        mapped.append((number, row))
    parsed, found = conversation_rows(mapped)
    problems += [FileProblem(filename, p.line, p.message) for p in found]
    for c in parsed:
        bots = [s for s in c.speakers if s != HUMAN]
        if len(c.speakers) != 2 or len(bots) != 1:
            problems.append(
                FileProblem(
                    filename,
                    c.line,
                    f"conversation '{c.external_id}' must be between one person and one bot "
                    f"(speakers {list(c.speakers)}).",
                )
            )
        elif not bot_turns(c):
            problems.append(
                FileProblem(filename, c.line, f"the bot never speaks in '{c.external_id}'.")
            )
    return parsed, problems


def bot_index(conversation: ParsedConversation) -> int:
    return next(i for i, s in enumerate(conversation.speakers) if s != HUMAN)


def bot_turns(conversation: ParsedConversation) -> int:
    index = bot_index(conversation) if HUMAN in conversation.speakers else None
    return sum(1 for speaker, _ in conversation.turns if speaker == index)


def parse_behaviours(data: bytes, filename: str, conversations) -> tuple[list, list]:
    """Behaviour lines; `conversations` by external id (None when that file was unreadable:
    lines are then checked on their own)."""
    rows, problems = read_rows(data, filename)
    if rows is None:
        return [], problems
    parsed, first = [], {}
    allowed = ", ".join(LABELS)
    for number, row in rows:
        messages = _keys(row, BEHAVIOUR_KEYS, BEHAVIOUR_KEYS)
        cid = row.get("conversation")
        conversation = None
        if "conversation" in row:
            if not isinstance(cid, str) or not cid:
                messages.append("'conversation' must be a conversation id.")
            elif conversations is not None:
                conversation = conversations.get(cid)
                if conversation is None:
                    messages.append(
                        f"unknown conversation '{cid}': it is not in the conversations file."
                    )
        annotator = row.get("annotator")
        if "annotator" in row and not _id(annotator, MAX_WORKER):
            messages.append(
                f"'annotator' must be an id without spaces of at most {MAX_WORKER} characters."
            )
        labels = row.get("labels")
        named = {}
        if "labels" in row:
            if not isinstance(labels, dict) or not labels:
                messages.append("'labels' must be an object {label: [0 or 1 per bot turn]}.")
                labels = {}
            n = bot_turns(conversation) if conversation is not None else None
            for name, flags in labels.items():
                label = behaviour_label(name)
                if label is None:
                    messages.append(f"unknown label {name!r} (allowed: {allowed}).")
                    continue
                if label in named:
                    messages.append(f"the labels {named[label]!r} and {name!r} are both {label!r}.")
                    continue
                named[label] = name
                if not isinstance(flags, list) or not all(_int(f) and f in (0, 1) for f in flags):
                    messages.append(f"{name!r} must be a list of 0 and 1 flags.")
                elif n is not None and len(flags) != n:
                    messages.append(
                        f"{name!r} has {len(flags)} flags; conversation '{cid}' has {n} bot turns."
                    )
        if not messages:
            for label in named:
                key = (cid, annotator, label)
                if key in first:
                    messages.append(
                        f"'{annotator}' labels {label!r} on '{cid}' again (first on line {first[key]})."
                    )
                else:
                    first[key] = number
        problems += [FileProblem(filename, number, m) for m in messages]
        if not messages:
            flags = {label: list(labels[name]) for label, name in named.items()}
            parsed.append(BehaviourLine(number, cid, annotator, flags))
    return parsed, problems


def parse_scores(data: bytes, filename: str, *, comparative: bool) -> tuple[list, list]:
    """Likert lines (`comparative` False) or comparative ones, each checked on its own, then
    together: one bot per dialogue, one duration per worker's sitting, no line twice and a
    comparison recorded from both sides saying the same."""
    rows, problems = read_rows(data, filename)
    if rows is None:
        return [], problems
    keys = COMPARATIVE_KEYS if comparative else LIKERT_KEYS
    required = tuple(k for k in keys if k != "seconds")
    parsed = []
    for number, row in rows:
        messages = _keys(row, keys, required)
        messages += _check_score_line(row, comparative)
        problems += [FileProblem(filename, number, m) for m in messages]
        if not messages:
            parsed.append(
                ScoreLine(
                    line=number,
                    dialogue=row["dialogue"],
                    bot=row["bot"],
                    dimension=dimension(row["label"]),
                    worker=row["worker"],
                    score=row["score"],
                    seconds=row.get("seconds"),
                    versus=row.get("versus"),
                    bot_versus=row.get("bot_versus"),
                )
            )
    problems += [FileProblem(filename, line, m) for line, m in _across_lines(parsed, comparative)]
    return parsed, problems


def _keys(row: dict, allowed: tuple, required: tuple) -> list[str]:
    messages = [
        f"unknown key '{key}' (expected {', '.join(allowed)})." for key in row if key not in allowed
    ]
    missing = [key for key in required if key not in row]
    if missing:
        messages.append(f"missing {', '.join(repr(key) for key in missing)}.")
    return messages


def _check_score_line(row: dict, comparative: bool) -> list[str]:
    messages = []
    for key in ("dialogue", "versus") if comparative else ("dialogue",):
        if key in row and not _id(row[key], MAX_ID):
            messages.append(
                f"'{key}' must be a dialogue id without spaces of at most {MAX_ID} characters."
            )
    for key in ("bot", "bot_versus") if comparative else ("bot",):
        if key in row and not _slug(row[key]) or row.get(key) == HUMAN:
            messages.append(
                f"'{key}' must be a system slug (letters, digits, - and _, at most {MAX_SLUG})."
            )
    if comparative and "versus" in row and row.get("versus") == row.get("dialogue"):
        messages.append("a dialogue cannot be compared with itself.")
    if "label" in row and dimension(row["label"]) is None:
        names = ", ".join([*DIMENSIONS, *DIMENSION_ALIASES])
        messages.append(f"unknown label {row['label']!r} (allowed: {names}).")
    if "worker" in row and not _id(row["worker"], MAX_WORKER):
        messages.append(
            f"'worker' must be an id without spaces of at most {MAX_WORKER} characters."
        )
    score = row.get("score")
    if "score" in row:
        if comparative and not (_int(score) and score in COMPARATIVE_SCORES):
            messages.append(f"'score' must be -1, 0 or 1, not {score!r}.")
        elif not comparative and not (_int(score) and score in SCALE):
            messages.append(
                f"'score' must be a whole number from {SCALE[0]} to {SCALE[-1]}, not {score!r}."
            )
    seconds = row.get("seconds")
    if seconds is not None and not (
        isinstance(seconds, int | float)
        and not isinstance(seconds, bool)
        and math.isfinite(seconds)
        and 0 <= seconds <= MAX_SECONDS
    ):
        messages.append(f"'seconds' must be a number from 0 to {MAX_SECONDS}, or null.")
    return messages


def _across_lines(lines: list[ScoreLine], comparative: bool) -> list[tuple[int, str]]:
    problems, bots, seconds, seen = [], {}, {}, {}
    for line in lines:
        for dialogue, bot in ((line.dialogue, line.bot), (line.versus, line.bot_versus)):
            if dialogue is None:
                continue
            if dialogue in bots and bots[dialogue][0] != bot:
                first_bot, first_line = bots[dialogue]
                problems.append(
                    (
                        line.line,
                        f"dialogue '{dialogue}' is by '{bot}' here and by '{first_bot}' on line {first_line}.",
                    )
                )
            bots.setdefault(dialogue, (bot, line.line))
        sitting = (line.dialogue, line.versus, line.worker)
        if sitting in seconds and seconds[sitting][0] != line.seconds:
            problems.append(
                (
                    line.line,
                    f"'seconds' is {line.seconds} here and {seconds[sitting][0]} on line "
                    f"{seconds[sitting][1]} for the same worker and dialogue.",
                )
            )
        seconds.setdefault(sitting, (line.seconds, line.line))
        key = (line.dialogue, line.versus, line.dimension, line.worker)
        if key in seen:
            problems.append((line.line, f"the same judgment as line {seen[key][1]}."))
            continue
        mirror = seen.get((line.versus, line.dialogue, line.dimension, line.worker))
        if comparative and mirror is not None and mirror[0].score != -line.score:
            problems.append(
                (
                    line.line,
                    f"score {line.score} contradicts line {mirror[1]}, the same comparison "
                    f"from the other side (score {mirror[0].score}).",
                )
            )
        seen[key] = (line, line.line)
    return problems


def resolve_dialogues(files: StudyFiles, filenames: dict[str, str]) -> list[FileProblem]:
    """A Likert or comparative dialogue that names a conversation of the file must be by its
    bot; the others are dialogues without text (see ``writing``)."""
    named = files.dialogue_ids()
    by_id = {c.external_id: c for c in files.conversations}
    problems, first = [], {}  # dialogue without text -> (bot, file, line) first seen
    for kind in ("likert", "comparative"):
        for line in getattr(files, kind):
            for dialogue, bot in ((line.dialogue, line.bot), (line.versus, line.bot_versus)):
                if dialogue is None:
                    continue
                if dialogue not in named:
                    seen = first.setdefault(dialogue, (bot, filenames[kind], line.line))
                    if seen[0] != bot:
                        problems.append(
                            FileProblem(
                                filenames[kind],
                                line.line,
                                f"dialogue '{dialogue}' is by '{bot}' here and by '{seen[0]}' "
                                f"in {seen[1]} line {seen[2]}.",
                            )
                        )
                    continue
                conversation = by_id[named[dialogue]]
                speaker = conversation.speakers[bot_index(conversation)]
                if speaker != bot:
                    problems.append(
                        FileProblem(
                            filenames[kind],
                            line.line,
                            f"dialogue '{dialogue}' is conversation '{conversation.external_id}', "
                            f"whose bot is '{speaker}', not '{bot}'.",
                        )
                    )
    return problems


def check_target(name: str, slug: str) -> tuple[list[FileProblem], Study | None]:
    problems = []
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        problems.append(FileProblem("--name", None, "give a name of 1 to 200 characters."))
    if not _slug(slug):
        problems.append(
            FileProblem(
                "--slug",
                None,
                f"{slug!r} is not a slug (letters, digits, - and _, at most {MAX_SLUG}).",
            )
        )
        return problems, None
    existing = Study.objects.filter(slug=slug).first()
    if existing is not None and existing.source != Study.Source.ABC_EVAL:
        problems.append(
            FileProblem("--slug", None, f"the study '{slug}' exists and is not an ABC-Eval study.")
        )
    return problems, existing


def tasks_of(lines: list[BehaviourLine]) -> dict[str, list[str]]:
    """The behaviour tasks the lines touch, each with its labels present, in Table 4's order."""
    present = defaultdict(set)
    for line in lines:
        for label in line.labels:
            present[TASK_OF[label]].add(label)
    return {
        task.key: [label for label in task.labels if label in present[task.key]]
        for task in TASKS.values()
        if present[task.key]
    }
