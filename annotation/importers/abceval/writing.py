"""Writing a checked ABC-Eval study (``reading``) inside the caller's transaction: its
dialogues without text, the study, its finished campaigns, batches, items, workers,
assignments and judgments, all with bulk inserts."""

import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace

from django.db.models import F, Max
from django.utils import timezone

from annotation.campaign_settings import CampaignSettings
from annotation.kinds import abc_eval, comparative, likert
from annotation.kinds.base import ItemSpec
from annotation.models import Assignment, Batch, Campaign, Item, Judgment, Study, Worker
from evalhub.declared import bounds
from evalhub.importers.conversations import HUMAN, ParsedConversation
from evalhub.models import Conversation

from .reading import StudyFiles, tasks_of

PROVIDER = "imported"
SIDE = {1: "a", -1: "b", 0: "neither"}


@dataclass
class CampaignCounts:
    items: int = 0
    judgments: int = 0
    judgments_unchanged: int = 0


@dataclass
class StudyImport:
    study: Study
    study_created: bool
    conversations_created: int = 0
    conversations_unchanged: int = 0
    dialogues_without_text: int = 0
    systems_created: list[str] = field(default_factory=list)
    workers: int = 0
    campaigns: dict[str, CampaignCounts] = field(default_factory=dict)  # by campaign slug

    kinds: dict[str, str] = field(default_factory=dict)  # task kind by campaign slug

    def campaign_counts(self) -> dict[str, tuple[str, CampaignCounts]]:
        return {slug: (self.kinds[slug], counts) for slug, counts in self.campaigns.items()}

    @property
    def judgments(self) -> int:
        return sum(c.judgments for c in self.campaigns.values())

    @property
    def judgments_unchanged(self) -> int:
        return sum(c.judgments_unchanged for c in self.campaigns.values())


def textless_conversations(files: StudyFiles) -> list[ParsedConversation]:
    """The Likert and comparative dialogues not in the conversations file, as conversations
    between a person and their bot with no turns (see ``study``: the release does not
    publish their text)."""
    named = files.dialogue_ids()
    bots = {}
    for line in [*files.likert, *files.comparative]:
        for dialogue, bot in ((line.dialogue, line.bot), (line.versus, line.bot_versus)):
            if dialogue is not None and dialogue not in named:
                bots.setdefault(dialogue, (bot, line.line))
    return [
        ParsedConversation(
            line=line, external_id=dialogue, domain="", speakers=(HUMAN, bot), turns=()
        )
        for dialogue, (bot, line) in bots.items()
    ]


def free_campaign_slug(base: str) -> str:
    base = base[:80]
    taken = set(Campaign.objects.filter(slug__startswith=base[:70]).values_list("slug", flat=True))
    slug, n = base, 2
    while slug in taken:
        suffix = f"-{n}"
        slug, n = base[: 80 - len(suffix)] + suffix, n + 1
    return slug


def _seconds_ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)


class StudyWriter:
    """The write half of an import, inside the caller's transaction."""

    def __init__(self, name, slug, study, files: StudyFiles, owner, result: StudyImport):
        self.name, self.slug, self.owner = name, slug, owner
        self.study, self.files, self.result = study, files, result
        self.now = timezone.now()

    def write(self) -> None:
        if self.study is None:
            self.study = Study.objects.create(
                slug=self.slug, name=self.name, source=Study.Source.ABC_EVAL, owner=self.owner
            )
            self.result.study = self.study
        self.conversations = self._load_conversations()
        self.named = self.files.dialogue_ids()
        workers = {line.annotator for line in self.files.behaviours}
        workers |= {line.worker for line in [*self.files.likert, *self.files.comparative]}
        self.workers = self._workers(workers)
        for task, labels in tasks_of(self.files.behaviours).items():
            self._behaviour_task(task, labels)
        if self.files.likert:
            self._likert()
        if self.files.comparative:
            self._comparative()

    # Catalog -------------------------------------------------------------------------

    def _load_conversations(self) -> dict[str, Conversation]:
        ids = [c.external_id for c in self.files.conversations]
        ids += [c.external_id for c in textless_conversations(self.files)]
        found = {}
        for start in range(0, len(ids), 500):
            rows = Conversation.objects.filter(external_id__in=ids[start : start + 500])
            found.update(
                (c.external_id, c) for c in rows.prefetch_related("speakers__system", "turns")
            )
        return found

    def conversation(self, dialogue: str) -> Conversation:
        return self.conversations[self.named.get(dialogue, dialogue)]

    def _workers(self, names: set[str]) -> dict[str, int]:
        """Worker pk by the file's id. Workers are the study's own ("<slug>:<id>"): the
        release's ids ("a1", "worker251") mean nothing outside it."""
        external = {name: f"{self.slug}:{name}" for name in names}
        known = {}
        values = sorted(external.values())
        for start in range(0, len(values), 500):
            known.update(
                Worker.objects.filter(
                    provider=PROVIDER, external_id__in=values[start : start + 500]
                ).values_list("external_id", "pk")
            )
        new = Worker.objects.bulk_create(
            (Worker(provider=PROVIDER, external_id=e) for e in values if e not in known),
            batch_size=500,
        )
        self.result.workers = len(new)
        known.update((w.external_id, w.pk) for w in new)
        return {name: known[e] for name, e in external.items()}

    # Campaigns -----------------------------------------------------------------------

    def _campaign(self, kind: str, suffix: str, title: str, config: dict, match: dict) -> Campaign:
        campaign = (
            Campaign.objects.filter(study=self.study, task_kind=kind, **match)
            .order_by("pk")
            .first()
        )
        if campaign is None:
            campaign = Campaign.objects.create(
                slug=free_campaign_slug(f"{self.slug}-{suffix}"),
                title=f"{self.name}: {title} (imported study)",
                task_kind=kind,
                task_config=config,
                status=Campaign.Status.FINISHED,
                batch_size=1,
                owner=self.owner,
                study=self.study,
                launched_at=self.now,
                finished_at=self.now,
            )
        elif campaign.task_config != config:
            campaign.task_config = config
            campaign.save(update_fields=["task_config"])
        self.result.campaigns.setdefault(campaign.slug, CampaignCounts())
        self.result.kinds[campaign.slug] = kind
        return campaign

    def _behaviour_task(self, task: str, labels: list[str]) -> None:
        campaign = self._campaign(
            abc_eval.KIND.key,
            task.replace("_", "-"),
            f"ABC-Eval, {abc_eval.TASKS[task].title.lower()}",
            {"behaviour_task": task},
            {"task_config__behaviour_task": task},
        )
        answers = defaultdict(dict)  # (conversation id, annotator) -> {label: flags}
        for line in self.files.behaviours:
            for label, flags in line.labels.items():
                if label in labels:
                    answers[(line.conversation, line.annotator)][label] = flags

        def spec(conversation_id: str) -> ItemSpec:
            conversation = self.conversations[conversation_id]
            [built], _ = abc_eval.build_items([conversation], {"behaviour_task": task})
            return built

        rows = [
            (f"{cid}:{task}", lambda cid=cid: spec(cid), annotator, None, {"labels": flags})
            for (cid, annotator), flags in answers.items()
        ]
        self._write(campaign, rows)

    def _likert(self) -> None:
        dimensions = {line.dimension for line in self.files.likert}
        campaign = self._campaign(
            likert.KIND.key, "likert", "dialogue Likert", {"level": "dialogue"}, {}
        )
        stored = campaign.task_config.get("dimensions", [])
        config = {
            "level": "dialogue",
            "dimensions": [d for d in likert.DIMENSIONS if d in dimensions or d in stored],
        }
        if campaign.task_config != config:
            campaign.task_config = config
            campaign.save(update_fields=["task_config"])
        ratings, seconds = defaultdict(dict), {}
        for line in self.files.likert:
            key = (self.conversation(line.dialogue).external_id, line.worker)
            ratings[key][line.dimension] = line.score
            seconds[key] = line.seconds

        def spec(external_id: str) -> ItemSpec:
            conversation = self.conversations[external_id]
            built, _ = (
                likert.build_items([conversation]) if conversation.text_available else ([], 0)
            )
            if built:
                return built[0]
            # No text, or (a catalog conversation) none the bot said: rated all the same.
            return ItemSpec(
                content=self._textless_content(conversation),
                group_key=external_id,
                conversation_id=conversation.pk,
            )

        rows = [
            (cid, lambda cid=cid: spec(cid), worker, seconds[(cid, worker)], {"ratings": r})
            for (cid, worker), r in ratings.items()
        ]
        self._write(campaign, rows)

    def _textless_content(self, conversation: Conversation) -> dict:
        bot = next(s for s in conversation.speakers.all() if s.system_id is not None)
        return {
            "turns": [],
            "bot_turns": [],
            "meta": {
                "conversation": conversation.external_id,
                "system": bot.system.slug,
                "bot_speaker": bot.index,
            },
            "text_available": False,
        }

    def _comparative(self) -> None:
        dimensions = {line.dimension for line in self.files.comparative}
        campaign = self._campaign(comparative.KIND.key, "comparative", "comparative", {}, {})
        stored = campaign.task_config.get("dimensions", [])
        ordered = [d for d in comparative.DIMENSION_DEFINITIONS if d in dimensions or d in stored]
        config = comparative.clean_config({"dimensions": ordered, "max_pairs": None})
        if campaign.task_config != config:
            campaign.task_config = config
            campaign.save(update_fields=["task_config"])
        # A pair's a and b: as the campaign already has them, else as first met in the file.
        oriented = {
            item.group_key: (item.content["meta"]["a"], item.content["meta"]["b"])
            for item in campaign.items.only("group_key", "content")
        }
        choices, seconds = defaultdict(dict), {}
        for line in self.files.comparative:
            first = self.conversation(line.dialogue).external_id
            second = self.conversation(line.versus).external_id
            key = comparative.pair_key(first, second)
            a, b = oriented.setdefault(key, (first, second))
            score = line.score if (first, second) == (a, b) else -line.score
            choices[(key, line.worker)][line.dimension] = SIDE[score]
            seconds[(key, line.worker)] = line.seconds

        def spec(key: str) -> ItemSpec:
            a, b = (self.conversations[x] for x in oriented[key])
            pair_config = {**config, "pairs": [[a.external_id, b.external_id]]}
            [built] = comparative.build_items([a, b], pair_config, random.Random(0))
            # Which dialogue was shown on the left is not in the release.
            content = {**built.content, "left_is": None}
            if not (a.text_available and b.text_available):
                content["text_available"] = {"a": a.text_available, "b": b.text_available}
            return replace(built, content=content)

        rows = [
            (
                key,
                lambda key=key: spec(key),
                worker,
                seconds[(key, worker)],
                {"choices": c, "left": None},
            )
            for (key, worker), c in choices.items()
        ]
        self._write(campaign, rows)

    # Items, batches, assignments, judgments ------------------------------------------

    def _write(self, campaign: Campaign, rows: list[tuple]) -> None:
        """Store `rows` (group key, item spec builder, worker id, seconds, payload) that the
        campaign does not hold yet: one batch per item, one assignment per worker there."""
        counts = self.result.campaigns[campaign.slug]
        items = {
            key: (pk, batch)
            for pk, key, batch in campaign.items.values_list("pk", "group_key", "batch_id")
        }
        judged = set(campaign.judgments.values_list("item__group_key", "worker_id"))
        new = []
        for key, build, worker, seconds, payload in rows:
            if (key, self.workers[worker]) in judged:
                counts.judgments_unchanged += 1
            else:
                new.append((key, build, self.workers[worker], seconds, payload))
        if not new:
            return
        self._items(campaign, items, new)
        assignments = self._assignments(campaign, items, new)
        Judgment.objects.bulk_create(
            (
                Judgment(
                    assignment_id=assignments[(items[key][1], worker)],
                    item_id=items[key][0],
                    worker_id=worker,
                    campaign=campaign,
                    payload=payload,
                    started_at=self.now,
                    client_duration_ms=_seconds_ms(seconds),
                )
                for key, _, worker, seconds, payload in new
            ),
            batch_size=1000,
        )
        # Without a duration, a judgment's time is read from submitted_at - started_at: make
        # that zero rather than the time the insert took (client_duration_ms stays null).
        Judgment.objects.filter(campaign=campaign, client_duration_ms__isnull=True).update(
            submitted_at=F("started_at")
        )
        counts.judgments += len(new)
        per_item = Counter(campaign.judgments.values_list("item_id", flat=True))
        _, most = bounds(CampaignSettings.model_fields["redundancy"])
        campaign.redundancy = max(min(Counter(per_item.values()).most_common(1)[0][0], most), 1)
        campaign.save(update_fields=["redundancy"])

    def _items(self, campaign: Campaign, items: dict, new: list[tuple]) -> None:
        builders = {}
        for key, build, *_ in new:
            if key not in items:
                builders.setdefault(key, build)
        if not builders:
            return
        start = campaign.items.aggregate(m=Max("position"))["m"]
        start = 0 if start is None else start + 1
        batch_start = campaign.batches.aggregate(m=Max("position"))["m"]
        batch_start = 0 if batch_start is None else batch_start + 1
        batches = Batch.objects.bulk_create(
            (Batch(campaign=campaign, position=batch_start + n) for n in range(len(builders))),
            batch_size=1000,
        )
        rows = []
        for n, (key, build) in enumerate(builders.items()):
            spec = build()
            rows.append(
                Item(
                    campaign=campaign,
                    position=start + n,
                    batch=batches[n],
                    content=spec.content,
                    group_key=key,
                    conversation_id=spec.conversation_id,
                    conversation_b_id=spec.conversation_b_id,
                )
            )
        Item.objects.bulk_create(rows, batch_size=1000)
        items.update((row.group_key, (row.pk, row.batch_id)) for row in rows)
        self.result.campaigns[campaign.slug].items += len(rows)

    def _assignments(self, campaign: Campaign, items: dict, new: list[tuple]) -> dict:
        stored = {
            (batch, worker): pk
            for pk, batch, worker in campaign.assignments.values_list("pk", "batch_id", "worker_id")
        }
        wanted = {(items[key][1], worker) for key, _, worker, *_ in new} - set(stored)
        rows = Assignment.objects.bulk_create(
            (
                Assignment(
                    campaign=campaign,
                    batch_id=batch,
                    worker_id=worker,
                    status=Assignment.Status.SUBMITTED,
                    started_at=self.now,
                    submitted_at=self.now,
                )
                for batch, worker in sorted(wanted)
            ),
            batch_size=1000,
        )
        stored.update(((a.batch_id, a.worker_id), a.pk) for a in rows)
        return stored


def mark_textless(parsed: list[ParsedConversation]) -> None:
    """Flag the conversations just stored for dialogues without text."""
    ids = [c.external_id for c in parsed]
    for start in range(0, len(ids), 500):
        Conversation.objects.filter(external_id__in=ids[start : start + 500]).update(
            text_available=False
        )
