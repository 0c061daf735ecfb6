"""Catalog operations shared by the web forms, the REST API, the admin and the commands."""

import logging
from dataclasses import dataclass

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction

from .importers import hf_layout
from .importers.conversations import HUMAN as HUMAN_SPEAKER
from .importers.conversations import ParsedConversation, parse_conversations
from .importers.problems import InvalidUpload, Problem
from .importers.prompts import parse_prompts
from .importers.responses import PromptRef, parse_responses
from .models import Conversation, Prompt, PromptSet, Speaker, Submission, System, Turn
from .queueing import enqueue
from .quotas import count_upload
from .response_rows import insert_responses

logger = logging.getLogger(__name__)


def read_upload(uploaded_file) -> bytes:
    """Read an uploaded file, refusing one over the limit before loading it into memory."""
    limit = settings.EVALHUB_MAX_UPLOAD_BYTES
    if uploaded_file.size is not None and uploaded_file.size > limit:
        raise InvalidUpload(
            [
                Problem(
                    None, f"The file is {uploaded_file.size:,} bytes; the limit is {limit:,} bytes."
                )
            ]
        )
    return uploaded_file.read()


def submit_responses(
    *,
    system: System,
    prompt_set: PromptSet,
    data: bytes,
    filename: str,
    fmt: str | None = None,
    baselines=(),
    user=None,
    columns: str | None = None,
) -> Submission:
    """Validate a whole response file, then store it in one transaction.

    Raises InvalidUpload (nothing written) when the file has any problem. Empty responses
    are not problems: they are stored and listed in the submission's `warnings`. The file
    is written, and the metrics task queued, only once the transaction has committed: a
    rolled-back upload (here or in a caller's transaction) leaves no file behind.
    QuotaExceeded (nothing read) past the user's uploads of the day. A Parquet file, or a
    `columns` mapping, reads the file in the Hugging Face layout (importers/hf_layout.py).
    """
    count_upload(user)
    prompts = list(
        prompt_set.prompts.order_by("position").values_list("id", "position", "external_id")
    )
    refs = [PromptRef(position, external_id) for _, position, external_id in prompts]
    limit = settings.EVALHUB_MAX_UPLOAD_BYTES
    if fmt == Submission.Format.HF or hf_layout.wanted(filename, columns):
        mapping = hf_layout.parse_mapping(columns, "responses")
        parsed = hf_layout.parse_responses(data, filename, mapping, refs, limit)
        fmt = Submission.Format.HF
    else:
        parsed = parse_responses(data, fmt, filename, refs, limit)
    prompt_ids = {position: pk for pk, position, _ in prompts}
    fmt = fmt or filename.rsplit(".", 1)[-1].lower()
    with transaction.atomic():
        submission = Submission(
            system=system,
            prompt_set=prompt_set,
            submitted_by=user if user is not None and user.is_authenticated else None,
            status=Submission.Status.VALIDATED,
            format=fmt,
            original_filename=filename[:255],
            warnings=[warning.as_dict() for warning in parsed.warnings],
        )
        submission.save()
        insert_responses(
            submission.pk,
            [(prompt_ids[position], text) for position, text in parsed.texts.items()],
        )
        if baselines:
            submission.baselines.set(baselines)
        transaction.on_commit(lambda: _after_commit(submission, filename, data))
    return submission


def _after_commit(submission: Submission, filename: str, data: bytes) -> None:
    store_file(submission, filename, data)
    queue_metrics(submission.pk)


def store_file(submission: Submission, filename: str, data: bytes) -> None:
    """Keep the uploaded file as it was, beside the rows parsed from it. The responses are
    what every page and metric reads, so a disk that refuses the copy loses nothing."""
    try:
        submission.file.save(filename, ContentFile(data), save=False)
    except OSError:
        logger.exception("could not keep the file of submission %s", submission.pk)
        return
    Submission.objects.filter(pk=submission.pk).update(file=submission.file.name)


def queue_metrics(submission_id: int) -> bool:
    """Queue the metrics; with the broker down the submission stays validated (shown as
    queued) and the periodic re-queue sends it again."""
    from .tasks import compute_submission_metrics

    return enqueue(compute_submission_metrics, submission_id)


def create_prompt_set(
    *,
    slug: str,
    name: str,
    data: bytes,
    filename: str,
    description="",
    source="",
    version="1",
    user=None,
    columns: str | None = None,
) -> PromptSet:
    """Validate a prompt file and store the set with its prompts in one transaction; a
    Parquet file, or a `columns` mapping, is read in the Hugging Face layout."""
    limit = settings.EVALHUB_MAX_UPLOAD_BYTES
    if hf_layout.wanted(filename, columns):
        mapping = hf_layout.parse_mapping(columns, "prompts")
        parsed = hf_layout.parse_prompts(data, filename, mapping, limit)
    else:
        parsed = parse_prompts(data, filename, limit)
    with transaction.atomic():
        prompt_set = PromptSet.objects.create(
            slug=slug,
            name=name,
            description=description,
            source=source,
            version=version,
            created_by=user if user is not None and user.is_authenticated else None,
        )
        Prompt.objects.bulk_create(
            Prompt(
                prompt_set=prompt_set,
                position=position,
                external_id=prompt.external_id,
                context=prompt.context,
                references=prompt.references,
            )
            for position, prompt in enumerate(parsed)
        )
    return prompt_set


@dataclass(frozen=True)
class ConversationImport:
    created: int
    unchanged: int
    systems_created: list[str]


def import_conversations(
    *,
    data: bytes,
    filename: str,
    user=None,
    source: str | None = None,
    columns: str | None = None,
) -> ConversationImport:
    """Validate a whole conversations file (JSON lines), then store it in one transaction.

    Raises InvalidUpload (nothing written) when any line has a problem, including an id
    already in the catalog with different content. Lines already stored as they are count
    as unchanged, so importing a file twice adds nothing. A Parquet file, or a `columns`
    mapping, is read in the Hugging Face layout (`messages`).
    """
    limit = settings.EVALHUB_MAX_UPLOAD_BYTES
    if hf_layout.wanted(filename, columns):
        mapping = hf_layout.parse_mapping(columns, "conversations")
        parsed = hf_layout.parse_conversations(data, filename, mapping, limit)
    else:
        parsed = parse_conversations(data, filename, limit)
    return store_conversations(parsed, user=user, source=source)


def import_seed_conversations(*, data: bytes, filename: str, user) -> ConversationImport:
    """A researcher's own seed conversations: human-human only (every speaker "human", no
    other source), so that an upload never puts words in a system's mouth. Validated whole
    like any conversations file; InvalidUpload names each refused line; QuotaExceeded past
    the user's uploads of the day."""
    count_upload(user)
    parsed = parse_conversations(data, filename, settings.EVALHUB_MAX_UPLOAD_BYTES)
    human_human = Conversation.Source.HUMAN_HUMAN
    refused = [
        Problem(
            c.line,
            'seed conversations are human-human: every speaker must be "human", not '
            + ", ".join(sorted({repr(s) for s in c.speakers if s != HUMAN_SPEAKER}))
            + ".",
        )
        for c in parsed
        if not c.all_human
    ] + [
        Problem(c.line, f'seed conversations are human-human; this line says source "{c.source}".')
        for c in parsed
        if c.all_human and c.source not in (None, human_human)
    ]
    if refused:
        raise InvalidUpload(sorted(refused, key=lambda p: p.line))
    # The uploader's own: only their tournaments draw on them (Conversation.owner).
    return store_conversations(parsed, user=user, source=human_human, owner=user)


def store_conversations(
    parsed: list[ParsedConversation], *, user=None, source: str | None = None, owner=None
) -> ConversationImport:
    """Store parsed conversations with their speakers and turns (bulk inserts, one transaction).

    `source` applies to lines that name none; without it a conversation is "imported", or
    "human-human" when every speaker is a person. System slugs not in the catalog become
    systems owned by `user`. The conversations are `owner`'s (a researcher's upload: only
    their tournaments draw on it), or staff-curated when `owner` is None.
    """
    if source is not None and source not in Conversation.Source.values:
        raise InvalidUpload(
            [
                Problem(
                    None,
                    f"Unknown source {source!r}; one of {', '.join(Conversation.Source.values)}.",
                )
            ]
        )
    system_owner = user if user is not None and user.is_authenticated else None
    with transaction.atomic():
        new = _conversations_to_add(parsed, source)
        systems_created, system_ids = _speaking_systems(new, system_owner)
        _write_conversations(new, source, system_ids, owner)
    return ConversationImport(
        created=len(new), unchanged=len(parsed) - len(new), systems_created=systems_created
    )


def _conversations_to_add(
    parsed: list[ParsedConversation], source: str | None
) -> list[ParsedConversation]:
    """The conversations not yet in the catalog; InvalidUpload if a stored one differs."""
    stored = _stored_conversations([c.external_id for c in parsed])
    problems, new = [], []
    for conversation in parsed:
        wanted = _comparable(conversation, _source_of(conversation, source))
        if conversation.external_id not in stored:
            new.append(conversation)
            continue
        differing = [
            key for key, value in wanted.items() if stored[conversation.external_id][key] != value
        ]
        if differing:
            problems.append(
                Problem(
                    conversation.line,
                    f"conversation '{conversation.external_id}' is already in the catalog with "
                    f"different {', '.join(differing)}; give a changed conversation a new id.",
                )
            )
    if problems:
        raise InvalidUpload(problems)
    return new


def _speaking_systems(new: list[ParsedConversation], owner) -> tuple[list[str], dict[str, int]]:
    """The slugs of the systems created for speakers not in the catalog (owned by
    ``owner``), and every speaking system's pk by slug."""
    slugs = {s for c in new for s in c.speakers if s != "human"}
    known = set(System.objects.filter(slug__in=slugs).values_list("slug", flat=True))
    systems_created = sorted(slugs - known)
    System.objects.bulk_create(
        System(slug=slug, name=slug, owner=owner) for slug in systems_created
    )
    return systems_created, dict(System.objects.filter(slug__in=slugs).values_list("slug", "pk"))


def _write_conversations(new: list[ParsedConversation], source, system_ids, owner) -> None:
    rows = Conversation.objects.bulk_create(
        (
            Conversation(
                external_id=c.external_id,
                domain=c.domain,
                source=_source_of(c, source),
                metadata=c.metadata,
                seed_turns=[{"speaker": speaker, "text": text} for speaker, text in c.seed],
                owner=owner,
                **_user_rating_fields(c.user_rating),
            )
            for c in new
        ),
        batch_size=500,
    )
    Speaker.objects.bulk_create(
        (
            Speaker(conversation=row, index=index, system_id=system_ids.get(slug))
            for row, c in zip(rows, new, strict=True)
            for index, slug in enumerate(c.speakers)
        ),
        batch_size=2000,
    )
    Turn.objects.bulk_create(
        (
            Turn(
                conversation=row,
                position=position,
                speaker=speaker,
                text=text,
                timestamp=c.turn_timestamp(position),
                topic=c.turn_topic(position),
            )
            for row, c in zip(rows, new, strict=True)
            for position, (speaker, text) in enumerate(c.turns)
        ),
        batch_size=2000,
    )


def _user_rating_fields(rating: tuple[float, float, float] | None) -> dict:
    value, low, high = rating if rating is not None else (None, None, None)
    return {"user_rating": value, "user_rating_min": low, "user_rating_max": high}


def _source_of(conversation: ParsedConversation, source: str | None) -> str:
    if conversation.source:
        return conversation.source
    if source:
        return source
    if conversation.all_human:
        return Conversation.Source.HUMAN_HUMAN
    return Conversation.Source.IMPORTED


def _comparable(conversation: ParsedConversation, source: str) -> dict:
    return {
        "domain": conversation.domain,
        "source": source,
        "metadata": conversation.metadata,
        "speakers": list(conversation.speakers),
        "turns": [
            [speaker, text, conversation.turn_timestamp(n), conversation.turn_topic(n)]
            for n, (speaker, text) in enumerate(conversation.turns)
        ],
        "user_rating": conversation.user_rating,
        "seed": [{"speaker": speaker, "text": text} for speaker, text in conversation.seed],
    }


def _stored_conversations(external_ids: list[str], chunk: int = 500) -> dict[str, dict]:
    """The catalog's content for those of `external_ids` it holds, as `_comparable` has it."""
    stored: dict[str, dict] = {}
    for start in range(0, len(external_ids), chunk):
        rows = Conversation.objects.filter(external_id__in=external_ids[start : start + chunk])
        by_pk = {}
        for pk, external_id, domain, source, metadata, seed, *rating in rows.values_list(
            "pk",
            "external_id",
            "domain",
            "source",
            "metadata",
            "seed_turns",
            "user_rating",
            "user_rating_min",
            "user_rating_max",
        ):
            by_pk[pk] = stored[external_id] = {
                "domain": domain,
                "source": source,
                "metadata": metadata,
                "speakers": [],
                "turns": [],
                "user_rating": tuple(rating) if rating[0] is not None else None,
                "seed": seed,
            }
        if not by_pk:
            continue
        speakers = Speaker.objects.filter(conversation_id__in=by_pk).order_by(
            "conversation", "index"
        )
        for conversation_id, slug in speakers.values_list("conversation_id", "system__slug"):
            by_pk[conversation_id]["speakers"].append(slug or "human")
        turns = Turn.objects.filter(conversation_id__in=by_pk).order_by("conversation", "position")
        for conversation_id, *turn in turns.values_list(
            "conversation_id", "speaker", "text", "timestamp", "topic"
        ):
            by_pk[conversation_id]["turns"].append(turn)
    return stored
