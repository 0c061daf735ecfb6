"""Import a published Spot The Bot study as a finished tournament that analyses like any other.

Input: the two files of the interchange format (../shared/data/spot-the-bot/README.md):
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

import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.conf import settings
from django.core.validators import slug_re
from django.db import transaction
from django.db.models import F, Max
from django.utils.text import slugify

from annotation.models import Assignment, Batch, Campaign, Item, Judgment, Worker
from annotation.tasks import get_kind
from annotation.tasks.spot_the_bot import (
    DEFAULT_CONFIG,
    FEATURE_DEFINITIONS,
    FEATURE_NAME,
    HUMAN,
    LABELS,
    build_items,
    gold_explanation,
)
from evalhub.importers.conversations import ParsedConversation, parse_conversations
from evalhub.importers.problems import InvalidUpload, check_size, decode_utf8, json_lines
from evalhub.models import Conversation, System
from evalhub.services import store_conversations

from .models import Tournament
from .spot_the_bot import free_campaign_slug

KIND = get_kind("spot_the_bot")
PROVIDER = "imported"
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
IMPORTED_DEFINITION = "As defined by the study this tournament was imported from."


@dataclass(frozen=True)
class FileProblem:
    filename: str
    line: int | None
    message: str

    def __str__(self):
        where = f"{self.filename} line {self.line}" if self.line else self.filename
        return f"{where}: {self.message}"


class StudyInvalid(Exception):
    """Every problem of the two files; nothing has been written when it is raised."""

    def __init__(self, problems: list[FileProblem]):
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems[:3]))


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


@dataclass
class StudyImport:
    tournament: Tournament
    tournament_created: bool
    conversations_created: int
    conversations_unchanged: int
    systems_created: list[str]
    batches: int = 0
    items: int = 0
    workers: int = 0
    assignments: int = 0
    judgments: int = 0
    judgments_unchanged: int = 0
    lines_per_length: dict[int, int] = field(default_factory=dict)


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
    messages = [
        f"unknown key '{key}' (expected {', '.join(JUDGMENT_KEYS)})."
        for key in row
        if key not in JUDGMENT_KEYS
    ]
    missing = [key for key in REQUIRED_KEYS if key not in row]
    if missing:
        messages.append(f"missing {', '.join(repr(key) for key in missing)}.")
    conversation = None
    cid = row.get("conversation")
    if "conversation" in row:
        if not isinstance(cid, str) or not cid:
            messages.append("'conversation' must be a conversation id.")
        elif conversations is not None:
            conversation = conversations.get(cid)
            if conversation is None:
                messages.append(
                    f"unknown conversation '{cid}': it is not in the conversations file."
                )
    for key, limit in (("worker", MAX_WORKER), ("batch", MAX_BATCH)):
        value = row.get(key)
        if key in row and not (
            isinstance(value, str) and NO_WHITESPACE.match(value) and len(value) <= limit
        ):
            messages.append(f"'{key}' must be an id without spaces of at most {limit} characters.")
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
    started = row.get("started_at_ms")
    duration = row.get("duration_ms")
    if started == START_NOT_RECORDED and not isinstance(started, bool):
        if not (_int(duration) and 0 < duration <= MAX_TIME_MS + 1):
            messages.append(
                "'started_at_ms' is -1 (not recorded), so 'duration_ms' must be the end time "
                "in milliseconds since 1970, plus one."
            )
        return messages
    if "started_at_ms" in row and not (_int(started) and 0 <= started <= MAX_TIME_MS):
        messages.append("'started_at_ms' must be milliseconds since 1970 (a whole number).")
    if duration is not None and not (_int(duration) and 0 <= duration <= MAX_DURATION_MS):
        messages.append("'duration_ms' must be a whole number of milliseconds, or null.")
    return messages


def _times(row: dict) -> tuple[int, int | None]:
    """(start in ms, duration in ms or None) of a checked line. With the start not recorded,
    the original tool's duration is end − (−1): the end is the only time known, so it stands
    in for the start, and the duration is unknown."""
    if row["started_at_ms"] == START_NOT_RECORDED:
        return row["duration_ms"] - 1, None
    return row["started_at_ms"], row.get("duration_ms")


def _check_conversations(parsed: list[ParsedConversation], filename: str) -> list[FileProblem]:
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


def _slug(name: str, slug: str | None) -> str:
    return slug if slug is not None else slugify(name)[:80]


def _check_target(name: str, slug: str) -> tuple[list[FileProblem], Tournament | None]:
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
    slug = _slug(name, slug)
    problems, existing = _check_target(name, slug)
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
        problems += _check_conversations(parsed, conversations_filename)
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
        _Writer(name, slug, existing, parsed, lines, owner, published, result).write()
    return result


def _features(lines: list[ParsedJudgment]) -> list[str]:
    """The study's features, the kind's default ones first in the kind's order."""
    names = list(lines[0].better) if lines else []
    default = DEFAULT_CONFIG["features"]
    return sorted(
        names, key=lambda n: (default.index(n) if n in default else len(default), names.index(n))
    )


def _mode(values) -> int:
    counts = Counter(values)
    return max(counts, key=lambda v: (counts[v], -v)) if counts else 1


def _ms(value: int) -> datetime:
    return datetime.fromtimestamp(value / 1000, tz=UTC)


class _Writer:
    """The write half of an import, inside the caller's transaction."""

    def __init__(self, name, slug, existing, parsed, lines, owner, published, result):
        self.name, self.slug, self.owner, self.published = name, slug, owner, published
        self.tournament = existing
        self.parsed, self.lines, self.result = parsed, lines, result

    def write(self) -> None:
        features = _features(self.lines)
        lengths = sorted({line.exchanges for line in self.lines})
        definitions = {f: FEATURE_DEFINITIONS.get(f, IMPORTED_DEFINITION) for f in features}
        self.config = KIND.clean_config(
            {"segment_lengths": lengths, "features": features, "feature_definitions": definitions}
        )
        self.conversations = self._conversations()
        if self.tournament is None:
            self._create_tournament()
        self.campaign = self.tournament.campaign
        self._load_existing()
        added = self._add()
        if added:
            self._describe()
        self.result.tournament = self.tournament

    def _conversations(self) -> dict[str, Conversation]:
        ids = [c.external_id for c in self.parsed]
        found = {}
        for start in range(0, len(ids), 500):
            rows = Conversation.objects.filter(external_id__in=ids[start : start + 500])
            found.update(
                (c.external_id, c) for c in rows.prefetch_related("speakers__system", "turns")
            )
        return found

    def _create_tournament(self) -> None:
        domains = {c.domain for c in self.parsed}
        self.tournament = Tournament.objects.create(
            slug=self.slug,
            name=self.name,
            kind=Tournament.Kind.SPOT_THE_BOT,
            description=f"Imported from a published Spot The Bot study ({len(self.parsed)} "
            f"conversations, {len(self.lines)} judgments).",
            domain=domains.pop() if len(domains) == 1 else "",
            owner=self.owner,
            status=Tournament.Status.FINISHED,
            schedule=Tournament.Schedule.IMPORTED,
            published=self.published,
            segment_lengths=self.config["segment_lengths"],
            features=self.config["features"],
        )
        self.tournament.campaign = Campaign.objects.create(
            slug=free_campaign_slug(f"{self.slug}-spot-the-bot"),
            title=f"{self.name}: human or bot? (imported study)",
            task_kind=KIND.key,
            task_config=self.config,
            status=Campaign.Status.FINISHED,
            owner=self.owner,
        )
        self.tournament.save(update_fields=["campaign"])

    def _load_existing(self) -> None:
        campaign = self.campaign
        # batch id of the file -> Batch pk
        self.batches = dict(
            Assignment.objects.filter(campaign=campaign)
            .exclude(provider_ref="")
            .values_list("provider_ref", "batch_id")
            .distinct()
        )
        self.next_batch = (campaign.batches.aggregate(m=Max("position"))["m"] or -1) + 1
        self.next_order = {
            batch: m + 1
            for batch, m in Item.objects.filter(campaign=campaign, batch__isnull=False)
            .values_list("batch_id")
            .annotate(m=Max("order_in_batch"))
        }
        self.next_item = (campaign.items.aggregate(m=Max("position"))["m"] or -1) + 1
        # (batch pk, conversation pk, exchanges) -> item pks, copy 0 first
        self.items = defaultdict(list)
        for pk, batch, conversation, k in (
            Item.objects.filter(campaign=campaign)
            .order_by("position")
            .values_list("pk", "batch_id", "conversation_id", "segment_length")
        ):
            self.items[(batch, conversation, k)].append(pk)
        self.assignments = {
            (batch, worker): pk
            for pk, batch, worker in Assignment.objects.filter(campaign=campaign).values_list(
                "pk", "batch_id", "worker_id"
            )
        }
        # (worker id, batch id of the file, conversation pk, exchanges) -> judgments stored
        self.judged = Counter(
            Judgment.objects.filter(campaign=campaign).values_list(
                "worker__external_id",
                "assignment__provider_ref",
                "item__conversation_id",
                "item__segment_length",
            )
        )

    def _workers(self, external_ids: set[str]) -> dict[str, int]:
        ids = sorted(external_ids)
        known = {}
        for start in range(0, len(ids), 500):
            known.update(
                Worker.objects.filter(
                    provider=PROVIDER, external_id__in=ids[start : start + 500]
                ).values_list("external_id", "pk")
            )
        new = Worker.objects.bulk_create(
            (Worker(provider=PROVIDER, external_id=e) for e in ids if e not in known),
            batch_size=500,
        )
        self.result.workers = len(new)
        known.update((w.external_id, w.pk) for w in new)
        return known

    def _add(self) -> int:
        # Which lines are new: per (worker, batch, conversation, exchanges), those beyond the
        # number already stored.
        # The n-th line of a key is the n-th judgment of that segment by that worker in that
        # batch, which goes to the n-th copy of the item (see "Repeats" above).
        seen = Counter()
        new_lines = []
        for line in self.lines:
            key = (
                line.worker,
                line.batch,
                self.conversations[line.conversation].pk,
                line.exchanges,
            )
            seen[key] += 1
            if seen[key] <= self.judged[key]:
                self.result.judgments_unchanged += 1
            else:
                new_lines.append((line, seen[key] - 1))
        if not new_lines:
            return 0
        batch_ids = list(dict.fromkeys(line.batch for line, _ in new_lines))
        created = Batch.objects.bulk_create(
            Batch(campaign=self.campaign, position=self.next_batch + n)
            for n, batch_id in enumerate(b for b in batch_ids if b not in self.batches)
        )
        fresh = [b for b in batch_ids if b not in self.batches]
        self.batches.update(zip(fresh, (b.pk for b in created), strict=True))
        self.result.batches = len(created)
        workers = self._workers({line.worker for line, _ in new_lines})
        items = self._items(new_lines)
        assignments = self._assignments(new_lines, workers)
        judgments = [
            Judgment(
                assignment_id=assignments[(self.batches[line.batch], workers[line.worker])],
                item_id=items[
                    (
                        self.batches[line.batch],
                        self.conversations[line.conversation].pk,
                        line.exchanges,
                    )
                ][repeat],
                worker_id=workers[line.worker],
                campaign=self.campaign,
                payload={"labels": line.labels, "better": line.better},
                started_at=_ms(line.started_at_ms),
                client_duration_ms=line.duration_ms,
            )
            for line, repeat in new_lines
        ]
        Judgment.objects.bulk_create(judgments, batch_size=1000)
        # Without a duration, the time a judgment took is read from submitted_at, which
        # bulk_create set to now; the start is the only time known, so it stands for both.
        Judgment.objects.filter(campaign=self.campaign, client_duration_ms__isnull=True).update(
            submitted_at=F("started_at")
        )
        self.result.judgments = len(judgments)
        self.result.lines_per_length = dict(
            sorted(Counter(line.exchanges for line, _ in new_lines).items())
        )
        return len(judgments)

    def _specs(self, wanted: dict[int, set[int]]) -> dict[tuple[int, int], object]:
        """The kind's item spec of each (conversation pk, exchanges) wanted."""
        rng = random.Random(0)  # orders nothing here: each call builds one conversation
        by_pk = {c.pk: c for c in self.conversations.values()}
        specs = {}
        for pk, lengths in wanted.items():
            config = {**self.config, "segment_lengths": sorted(lengths)}
            for spec in build_items([by_pk[pk]], config, rng)[0]:
                specs[(pk, spec.segment_length)] = spec
        return specs

    def _items(self, new_lines) -> dict[tuple, list[int]]:
        needed = {}  # (batch pk, conversation pk, exchanges) -> copies needed
        for line, repeat in new_lines:
            key = (
                self.batches[line.batch],
                self.conversations[line.conversation].pk,
                line.exchanges,
            )
            needed[key] = max(needed.get(key, 0), repeat + 1)
        missing = [
            (key, copy)
            for key, copies in needed.items()
            for copy in range(len(self.items[key]), copies)
        ]
        wanted = defaultdict(set)
        for (_, conversation, k), _ in missing:
            wanted[conversation].add(k)
        specs = self._specs(wanted)
        rows = []
        for (batch, conversation, k), copy in missing:
            spec = specs[(conversation, k)]
            content = spec.content
            if copy:
                content = {**content, "meta": {**content["meta"], "repeat": copy}}
            speakers = content["meta"]["speakers"]
            gold = None
            if all(s == HUMAN for s in speakers):
                gold = {
                    "labels": list(speakers),
                    "explanation": gold_explanation(speakers, self.config["speaker_names"]),
                }
            order = self.next_order.get(batch, 0)
            self.next_order[batch] = order + 1
            rows.append(
                Item(
                    campaign=self.campaign,
                    position=self.next_item + len(rows),
                    batch_id=batch,
                    order_in_batch=order,
                    content=content,
                    group_key=spec.group_key,
                    conversation_id=conversation,
                    segment_length=k,
                    gold=gold,
                )
            )
        Item.objects.bulk_create(rows, batch_size=1000)
        for row in rows:
            self.items[(row.batch_id, row.conversation_id, row.segment_length)].append(row.pk)
        self.result.items = len(rows)
        return self.items

    def _assignments(self, new_lines, workers) -> dict[tuple[int, int], int]:
        spans = {}
        for line, _ in new_lines:
            key = (self.batches[line.batch], workers[line.worker])
            start = line.started_at_ms
            end = start + (line.duration_ms or 0)
            if key in spans:
                spans[key] = (min(spans[key][0], start), max(spans[key][1], end), spans[key][2])
            else:
                spans[key] = (start, end, line.batch)
        rows = [
            Assignment(
                campaign=self.campaign,
                batch_id=batch,
                worker_id=worker,
                status=Assignment.Status.SUBMITTED,
                started_at=_ms(start),
                submitted_at=_ms(end),
                provider_ref=batch_id,
            )
            for (batch, worker), (start, end, batch_id) in spans.items()
            if (batch, worker) not in self.assignments
        ]
        Assignment.objects.bulk_create(rows, batch_size=1000)
        self.assignments.update(((a.batch_id, a.worker_id), a.pk) for a in rows)
        self.result.assignments = len(rows)
        return self.assignments

    def _describe(self) -> None:
        """Settings of the tournament and campaign that describe the study as imported."""
        lines = self.lines
        per_batch = Counter()
        segments_in_batch = {(line.batch, line.conversation, line.exchanges) for line in lines}
        per_batch.update(batch for batch, _, _ in segments_in_batch)
        batches_of = defaultdict(set)
        workers_of = defaultdict(set)
        for line in lines:
            batches_of[line.worker].add(line.batch)
            workers_of[(line.conversation, line.exchanges)].add(line.worker)
        pairs = Counter(
            "|".join(sorted(c.speakers)) for c in self.parsed if HUMAN not in c.speakers
        )
        human_ids = {c.external_id for c in self.parsed if all(s == HUMAN for s in c.speakers)}
        humans = sum(1 for _, c, _ in segments_in_batch if c in human_ids)
        slugs = {s for c in self.parsed for s in c.speakers if s != HUMAN}
        tournament, campaign = self.tournament, self.campaign
        # An extended file may judge lengths the tournament did not have yet.
        lengths = sorted(
            {*campaign.task_config.get("segment_lengths", []), *self.config["segment_lengths"]}
        )
        tournament.segment_lengths = lengths
        campaign.task_config = {**campaign.task_config, "segment_lengths": lengths}
        tournament.batch_size = campaign.batch_size = min(max(per_batch.values()), 32767)
        tournament.max_batches_per_worker = campaign.max_batches_per_worker = min(
            max(len(b) for b in batches_of.values()), 32767
        )
        tournament.judgments_per_segment = campaign.redundancy = _mode(
            len(w) for w in workers_of.values()
        )
        tournament.conversations_per_pair = max(pairs.values(), default=0)
        tournament.human_share = round(humans / len(segments_in_batch), 3)
        tournament.save(
            update_fields=[
                "segment_lengths",
                "batch_size",
                "max_batches_per_worker",
                "judgments_per_segment",
                "conversations_per_pair",
                "human_share",
            ]
        )
        tournament.systems.add(*System.objects.filter(slug__in=slugs))
        starts = [line.started_at_ms for line in lines]
        ends = [line.started_at_ms + (line.duration_ms or 0) for line in lines]
        campaign.launched_at = _ms(min(starts))
        campaign.finished_at = _ms(max(ends))
        campaign.save(
            update_fields=[
                "task_config",
                "batch_size",
                "max_batches_per_worker",
                "redundancy",
                "launched_at",
                "finished_at",
            ]
        )
