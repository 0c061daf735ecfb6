"""Writing a checked Spot The Bot study (``reading``) as a finished tournament, inside the
caller's transaction: its campaign, batches, items, workers, assignments and judgments."""

import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.db.models import F, Max

from annotation.kinds.spot_the_bot import (
    DEFAULT_CONFIG,
    FEATURE_DEFINITIONS,
    HUMAN,
    build_items,
    gold_explanation,
)
from annotation.models import Assignment, Batch, Campaign, Item, Judgment, Worker
from evalhub.models import Conversation, System

from ..models import Tournament
from ..spot_the_bot_campaign import free_campaign_slug
from .reading import KIND, ParsedJudgment

PROVIDER = "imported"
IMPORTED_DEFINITION = "As defined by the study this tournament was imported from."


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


class StudyWriter:
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
        # What the tournament judges is what it includes (spot_the_bot_campaign).
        self.tournament.included_conversations.add(
            *(
                c.pk
                for c in self.conversations.values()
                if all(s.system_id for s in c.speakers.all())
            )
        )
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
