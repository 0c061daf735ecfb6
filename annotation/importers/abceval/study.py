"""Import a published ABC-Eval study (Finch et al., 2023) as finished campaigns that analyse
like live ones.

Input: JSON lines files (the shapes of the public release):
- conversations: `{"id", "source_id", "speakers": ["human", bot], "turns": [{"speaker",
  "text"}]}`, checked by the catalog's conversation rules (``source_id``, the release's
  dialogue id, is kept in the conversation's `metadata`);
- behaviours: `{"conversation", "annotator", "labels": {label: [0 | 1 per bot turn]}}`,
  labels named as in the paper's Table 4 (see ``reading`` for the names accepted);
- optional Likert scores: `{"dialogue", "bot", "label", "worker", "score": 1..5, "seconds"}`;
- optional comparative scores: the same with `"score": -1 | 0 | 1` for `dialogue` against
  `versus` and `"bot_versus"`. 1 means `dialogue` fits the dimension better, -1 `versus`,
  0 neither (the release records each comparison twice, once from each side with the sign
  flipped; both lines must agree and make one judgment). On the public release this reading
  is borne out: where both dialogues have Likert quality ratings, a score of 1 goes with a
  dialogue rated 0.7 points higher on average than its opponent, -1 with 0.7 lower.
Every file is checked completely, every problem reported with its file and line, before
anything is written; then everything is written in one transaction.

What is created:
- the conversations (``store_conversations``: ones already in the catalog with the same
  content are reused, ones with other content are an error);
- dialogues without text. The release publishes the text of the 108 conversations with
  behaviour labels only, while its Likert and comparative scores cover 360 and 404
  dialogues. A dialogue id that is neither a conversation's id nor its `source_id` becomes
  a catalog Conversation with that external id, speakers ["human", bot], no turns and
  `text_available=False`. A Conversation, rather than a lighter record of its own, because
  items, exports and every analysis reach the system through `Item.conversation` and
  its speakers: such a dialogue is then analysed exactly like the others, and only code
  that shows text needs to look at the flag;
- a `Study` (source "abc-eval") holding finished campaigns, one per ABC-Eval behaviour
  task the labels belong to (config `{"behaviour_task": task}`), one Likert campaign
  (`{"level": "dialogue", "dimensions": [...]}`) and one comparative campaign; their slugs
  start with the study's;
- items built by each kind's own builder, so their content is what a live campaign's would
  be, with two differences: a comparative item's `left_is` is null (the release does not
  say which dialogue was shown left) and an item of a dialogue without text carries
  `"text_available": false` (comparative: `{"a": bool, "b": bool}`);
- one batch per item; workers with the provider "imported" and the external id
  "<study slug>:<file's worker id>"; one submitted assignment per worker and batch;
- judgments with the kind's payload: ABC-Eval `{"labels": {label: flags}}` holding the
  labels of that task the file has (the release has 9 of the 16: a payload may hold fewer
  labels than its task; iterate over the payload's labels), Likert `{"ratings":
  {dimension: score}}`, comparative `{"choices": {dimension: "a" | "b" | "neither"},
  "left": null}`. `client_duration_ms` is the file's seconds; behaviour lines have none,
  so their duration is null (and `submitted_at` equals `started_at`).

Idempotency. A second import of the same files adds nothing: the study is found by its
slug, campaigns by study and kind (and behaviour task), items by group key, and a
judgment by (item, worker); only what is new is added.
"""

from django.db import transaction

from evalhub.importers.problems import InvalidUpload
from evalhub.models import Conversation
from evalhub.services import store_conversations

from .reading import (
    FileProblem,
    StudyFiles,
    StudyInvalid,
    check_target,
    parse_behaviours,
    parse_conversations,
    parse_scores,
    resolve_dialogues,
)
from .writing import StudyImport, StudyWriter, mark_textless, textless_conversations

__all__ = ["StudyImport", "StudyInvalid", "import_abceval"]

SHOWN_PROBLEMS = 20


def import_abceval(
    *,
    name: str,
    slug: str,
    conversations: tuple[str, bytes],
    behaviours: tuple[str, bytes],
    likert: tuple[str, bytes] | None = None,
    comparative: tuple[str, bytes] | None = None,
    user=None,
) -> StudyImport:
    """Check every file, then import the study in one transaction; see the module doc.

    Each file is given as (file name, content). Raises StudyInvalid (nothing written)
    listing every problem with its file and line.
    """
    problems, existing = check_target(name, slug)
    files = StudyFiles()
    parsed, found = parse_conversations(conversations[1], conversations[0])
    problems += found
    by_id = None if parsed is None else {c.external_id: c for c in parsed}
    files.conversations = parsed or []
    files.behaviours, found = parse_behaviours(behaviours[1], behaviours[0], by_id)
    problems += found
    filenames = {}
    for key, given in (("likert", likert), ("comparative", comparative)):
        if given is not None:
            filenames[key] = given[0]
            lines, found = parse_scores(given[1], given[0], comparative=key == "comparative")
            setattr(files, key, lines)
            problems += found
    problems += resolve_dialogues(files, filenames)
    textless = textless_conversations(files)
    if not problems:
        problems += _check_textless(files, textless, filenames)
    if problems:
        order = [conversations[0], behaviours[0], *filenames.values()]
        raise StudyInvalid(
            sorted(
                problems,
                key=lambda p: (
                    order.index(p.filename) + 1 if p.filename in order else 0,
                    p.line or 0,
                ),
            )
        )
    owner = user if user is not None and user.is_authenticated else None
    with transaction.atomic():
        stored_ids = set(
            Conversation.objects.filter(
                external_id__in=[c.external_id for c in textless]
            ).values_list("external_id", flat=True)
        )
        new_textless = [c for c in textless if c.external_id not in stored_ids]
        try:
            stored = store_conversations(files.conversations + new_textless, user=owner)
        except InvalidUpload as invalid:
            raise StudyInvalid(
                [FileProblem(conversations[0], p.line, p.message) for p in invalid.problems]
            ) from None
        mark_textless(new_textless)
        result = StudyImport(
            study=existing,
            study_created=existing is None,
            conversations_created=stored.created - len(new_textless),
            conversations_unchanged=stored.unchanged,
            dialogues_without_text=len(new_textless),
            systems_created=stored.systems_created,
        )
        StudyWriter(name, slug, existing, files, owner, result).write()
    return result


def _check_textless(files: StudyFiles, textless, filenames: dict[str, str]) -> list[FileProblem]:
    """A dialogue without text already in the catalog must be between a person and the
    same bot."""
    ids = [c.external_id for c in textless]
    speakers = {}
    for start in range(0, len(ids), 500):
        for external_id, slug in Conversation.objects.filter(
            external_id__in=ids[start : start + 500]
        ).values_list("external_id", "speakers__system__slug"):
            speakers.setdefault(external_id, []).append(slug or "human")
    problems = []
    for c in textless:
        stored = speakers.get(c.external_id)
        if stored is not None and sorted(stored) != sorted(c.speakers):
            kind = next(
                key
                for key in ("likert", "comparative")
                if any(c.external_id in (x.dialogue, x.versus) for x in getattr(files, key))
            )
            problems.append(
                FileProblem(
                    filenames[kind],
                    c.line,
                    f"dialogue '{c.external_id}' is in the catalog with the speakers "
                    f"{stored}, not {list(c.speakers)}.",
                )
            )
    return problems
