"""Import a published Spot The Bot study as a finished tournament that analyses like any other.

Input: the two files of the interchange format (docs/tournaments.md, "Spot The Bot studies"):
conversations (`{"id", "domain", "speakers", "turns"}` per line, checked by the catalog's
conversation importer) and judgments (one worker's judgment of one segment per line:
`{"conversation", "worker", "batch", "exchanges", "labels", "better", "started_at_ms",
"duration_ms"}`). Both files are checked completely, every problem reported with its file
and line, before anything is written; then everything is written in one transaction.

What is created:
- the conversations (through `store_conversations`; ones already in the catalog with the
  same content are reused, ones with other content are an error);
- a finished Spot The Bot tournament (schedule "imported") and its finished campaign,
  whose settings describe the study: segment lengths and features as judged, the largest
  batch, the most batches one worker did, the usual number of judgments per segment;
- one batch per batch id of the file (the id is kept as the assignments' `provider_ref`);
- one item per batch, conversation and judged segment length, built by the
  `spot_the_bot` kind's builder so that its content is what a live campaign's would be;
  human-human segments carry the gold labels ["human", "human"] like generated controls;
- workers with the provider "imported" and the file's worker id as external id;
- one submitted assignment per worker and batch, and the judgments with the kind's
  payload (`labels`, `better`), start time and duration; their `submitted_at` is the time
  of the import (the file does not have it). A line whose `started_at_ms` is -1 (four in
  the released data: the original tool did not record the start, and its `duration_ms` is
  then the end time + 1) is stored with its end time as start and as submission time,
  and no duration.

Repeats. The released data holds judgments where a worker judged the same segment of the
same batch twice (52 of 10,217). Judgments are unique per (assignment, item), so the
n-th repeat goes to an n-th copy of the item in the same batch (`meta.repeat` = n): every
line of the file becomes a judgment and the analysis sees what the study recorded.

Idempotency. A second import of the same files adds nothing: the tournament is found by
its slug, conversations by their ids, and a judgment by (worker, batch, conversation,
exchanges) together with how many of those the tournament already holds; only lines beyond
those are added. A file that extends a study therefore adds just its new lines.
"""

from django.conf import settings
from django.db import transaction

from evalhub.importers.conversations import parse_conversations
from evalhub.importers.problems import InvalidUpload
from evalhub.services import store_conversations

from .reading import (
    FileProblem,
    StudyInvalid,
    check_conversations,
    check_target,
    parse_judgments,
    study_slug,
)
from .writing import StudyImport, StudyWriter

__all__ = ["StudyImport", "StudyInvalid", "import_study"]


def import_study(
    *,
    name: str,
    conversations: bytes,
    conversations_filename: str,
    judgments: bytes,
    judgments_filename: str,
    slug: str | None = None,
    user=None,
    published: bool = False,
) -> StudyImport:
    """Check both files, then import the study in one transaction; see the module doc.

    Raises StudyInvalid (nothing written) listing every problem with its file and line.
    """
    slug = study_slug(name, slug)
    problems, existing = check_target(name, slug)
    try:
        parsed = parse_conversations(
            conversations, conversations_filename, settings.EVALHUB_MAX_UPLOAD_BYTES
        )
    except InvalidUpload as invalid:
        problems += [
            FileProblem(conversations_filename, p.line, p.message) for p in invalid.problems
        ]
        by_id = None
    else:
        problems += check_conversations(parsed, conversations_filename)
        by_id = {c.external_id: c for c in parsed}
    lines, found = parse_judgments(judgments, judgments_filename, by_id)
    problems += found
    if existing is not None and existing.campaign is not None and lines:
        stored_features = existing.campaign.task_config.get("features", [])
        if set(lines[0].better) != set(stored_features):
            problems.append(
                FileProblem(
                    judgments_filename,
                    lines[0].line,
                    f"the tournament '{slug}' rates {', '.join(stored_features)}; these "
                    f"judgments rate {', '.join(lines[0].better)}.",
                )
            )
    if problems:
        raise StudyInvalid(problems)
    owner = user if user is not None and user.is_authenticated else None
    with transaction.atomic():
        try:
            stored = store_conversations(parsed, user=owner)
        except InvalidUpload as invalid:
            raise StudyInvalid(
                [FileProblem(conversations_filename, p.line, p.message) for p in invalid.problems]
            ) from None
        result = StudyImport(
            tournament=existing,
            tournament_created=existing is None,
            conversations_created=stored.created,
            conversations_unchanged=stored.unchanged,
            systems_created=stored.systems_created,
        )
        StudyWriter(name, slug, existing, parsed, lines, owner, published, result).write()
    return result
