"""Reading a Spot The Bot study's files: every line parsed and checked, every problem
reported with its file and line; nothing here writes (see ``writing``)."""

import re
from dataclasses import dataclass

from django.conf import settings
from django.core.validators import slug_re
from django.utils.text import slugify

from annotation.kinds import get_kind
from annotation.kinds.spot_the_bot import FEATURE_NAME, LABELS
from annotation.models import Assignment, Worker
from evalhub.errors import FileProblem, UserInputError
from evalhub.importers.conversations import ParsedConversation
from evalhub.importers.problems import InvalidUpload, check_size, decode_utf8, json_lines

from ..models import Tournament

KIND = get_kind("spot_the_bot")
JUDGMENT_KEYS = (
    "conversation",
    "worker",
    "batch",
    "exchanges",
    "labels",
    "better",
    "started_at_ms",
    "duration_ms",
)
REQUIRED_KEYS = JUDGMENT_KEYS[:-1]
NO_WHITESPACE = re.compile(r"^\S+$")
MAX_WORKER = Worker._meta.get_field("external_id").max_length
MAX_BATCH = Assignment._meta.get_field("provider_ref").max_length
MAX_DURATION_MS = 2**31 - 1  # the column is a PositiveIntegerField
MAX_TIME_MS = 32503680000000  # year 3000: a bigger number is not milliseconds since 1970
START_NOT_RECORDED = -1


class StudyInvalid(UserInputError):
    """Every problem (a FileProblem) of the two files; nothing has been written when raised."""


@dataclass(frozen=True)
class ParsedJudgment:
    line: int
    conversation: str
    worker: str
    batch: str
    exchanges: int
    labels: list[str]
    better: dict
    started_at_ms: int
    duration_ms: int | None


def _int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_judgments(
    data: bytes, filename: str, conversations: dict[str, ParsedConversation] | None
) -> tuple[list[ParsedJudgment], list[FileProblem]]:
    """Judgment lines in file order and every problem found.

    `conversations` (by id) are those of the study; None when that file was unreadable,
    in which case lines are checked on their own only.
    """
    problems: list[FileProblem] = []
    try:
        check_size(len(data), settings.EVALHUB_MAX_UPLOAD_BYTES)
        rows, found = json_lines(decode_utf8(data))
    except InvalidUpload as invalid:
        return [], [FileProblem(filename, p.line, p.message) for p in invalid.problems]
    problems += [FileProblem(filename, p.line, p.message) for p in found]
    parsed, features, features_line = [], None, None
    for number, row in rows:
        messages = _check_judgment(row, conversations)
        better = row.get("better")
        if isinstance(better, dict) and not messages:
            if features is None:
                features, features_line = list(better), number
            elif set(better) != set(features):
                messages.append(
                    f"'better' rates {', '.join(sorted(better)) or 'nothing'}; line "
                    f"{features_line} rates {', '.join(sorted(features))}: every line must "
                    "rate the same features."
                )
        problems += [FileProblem(filename, number, m) for m in messages]
        if not messages:
            parsed.append(
                ParsedJudgment(
                    line=number,
                    conversation=row["conversation"],
                    worker=row["worker"],
                    batch=row["batch"],
                    exchanges=row["exchanges"],
                    labels=list(row["labels"]),
                    better=dict(row["better"]),
                    started_at_ms=_times(row)[0],
                    duration_ms=_times(row)[1],
                )
            )
    if not rows and not problems:
        problems.append(FileProblem(filename, None, "The file holds no judgments."))
    return parsed, problems


def _check_judgment(row: dict, conversations) -> list[str]:
    """Every problem of one judgment line, checked against its conversation when known."""
    messages = _check_keys(row)
    conversation = _check_conversation_id(row, conversations, messages)
    for key, limit in (("worker", MAX_WORKER), ("batch", MAX_BATCH)):
        value = row.get(key)
        if key in row and not (
            isinstance(value, str) and NO_WHITESPACE.match(value) and len(value) <= limit
        ):
            messages.append(f"'{key}' must be an id without spaces of at most {limit} characters.")
    _check_answers(row, conversation, messages)
    _check_times(row, messages)
    return messages


def _check_keys(row: dict) -> list[str]:
    messages = [
        f"unknown key '{key}' (expected {', '.join(JUDGMENT_KEYS)})."
        for key in row
        if key not in JUDGMENT_KEYS
    ]
    missing = [key for key in REQUIRED_KEYS if key not in row]
    if missing:
        messages.append(f"missing {', '.join(repr(key) for key in missing)}.")
    return messages


def _check_conversation_id(row: dict, conversations, messages: list[str]):
    """The line's conversation from the conversations file, or None if unknown or unread."""
    cid = row.get("conversation")
    if "conversation" not in row:
        return None
    if not isinstance(cid, str) or not cid:
        messages.append("'conversation' must be a conversation id.")
        return None
    if conversations is None:
        return None
    conversation = conversations.get(cid)
    if conversation is None:
        messages.append(f"unknown conversation '{cid}': it is not in the conversations file.")
    return conversation


def _check_answers(row: dict, conversation, messages: list[str]) -> None:
    """The judged segment length, the labels and the feature preferences."""
    cid = row.get("conversation")
    n_speakers = len(conversation.speakers) if conversation else None
    exchanges = row.get("exchanges")
    if "exchanges" in row:
        if not _int(exchanges) or exchanges < 1:
            messages.append("'exchanges' must be a whole number of at least 1.")
        elif conversation is not None and exchanges > len(conversation.turns) // 2:
            messages.append(
                f"conversation '{cid}' has {len(conversation.turns) // 2} exchanges, fewer "
                f"than the {exchanges} judged."
            )
    labels = row.get("labels")
    if "labels" in row:
        if not isinstance(labels, list) or not all(label in LABELS for label in labels):
            messages.append(f"'labels' must be a list of {', '.join(LABELS)}, one per speaker.")
        elif n_speakers is not None and len(labels) != n_speakers:
            messages.append(
                f"'labels' has {len(labels)} labels; conversation '{cid}' has {n_speakers} speakers."
            )
    better = row.get("better")
    if "better" in row:
        if not isinstance(better, dict):
            messages.append("'better' must be an object {feature: speaker index or null}.")
        else:
            for name, value in better.items():
                if not FEATURE_NAME.match(name):
                    messages.append(f"'better': {name!r} is not a feature name.")
                elif value is not None and not (_int(value) and 0 <= value < (n_speakers or 2)):
                    messages.append(
                        f"'better': {name} must be a speaker index or null, not {value!r}."
                    )


def _check_times(row: dict, messages: list[str]) -> None:
    started = row.get("started_at_ms")
    duration = row.get("duration_ms")
    if started == START_NOT_RECORDED and not isinstance(started, bool):
        if not (_int(duration) and 0 < duration <= MAX_TIME_MS + 1):
            messages.append(
                "'started_at_ms' is -1 (not recorded), so 'duration_ms' must be the end time "
                "in milliseconds since 1970, plus one."
            )
        return
    if "started_at_ms" in row and not (_int(started) and 0 <= started <= MAX_TIME_MS):
        messages.append("'started_at_ms' must be milliseconds since 1970 (a whole number).")
    if duration is not None and not (_int(duration) and 0 <= duration <= MAX_DURATION_MS):
        messages.append("'duration_ms' must be a whole number of milliseconds, or null.")


def _times(row: dict) -> tuple[int, int | None]:
    """(start in ms, duration in ms or None) of a checked line. With the start not recorded,
    the original tool's duration is end − (−1): the end is the only time known, so it stands
    in for the start, and the duration is unknown."""
    if row["started_at_ms"] == START_NOT_RECORDED:
        return row["duration_ms"] - 1, None
    return row["started_at_ms"], row.get("duration_ms")


def check_conversations(parsed: list[ParsedConversation], filename: str) -> list[FileProblem]:
    return [
        FileProblem(
            filename,
            c.line,
            f"conversation '{c.external_id}' has {len(c.speakers)} speakers; Spot The Bot "
            "judges conversations between two.",
        )
        for c in parsed
        if len(c.speakers) != 2
    ]


def study_slug(name: str, slug: str | None) -> str:
    return slug if slug is not None else slugify(name)[:80]


def check_target(name: str, slug: str) -> tuple[list[FileProblem], Tournament | None]:
    problems = []
    if not name.strip() or len(name) > 200:
        problems.append(FileProblem("--name", None, "give a name of 1 to 200 characters."))
    if not slug or len(slug) > 80 or not slug_re.match(slug):
        problems.append(
            FileProblem("--slug", None, f"{slug!r} is not a slug (letters, digits, - and _).")
        )
        return problems, None
    existing = Tournament.objects.select_related("campaign").filter(slug=slug).first()
    if existing is not None and not (
        existing.kind == Tournament.Kind.SPOT_THE_BOT
        and existing.schedule == Tournament.Schedule.IMPORTED
        and existing.campaign is not None
        and existing.campaign.task_kind == KIND.key
    ):
        problems.append(
            FileProblem(
                "--slug",
                None,
                f"the tournament '{slug}' exists and was not imported from a study; choose "
                "another slug.",
            )
        )
    return problems, existing
