"""Setting a campaign up from the catalog, and moving it through its states.

A kind is built either from responses (it has `build_from_responses`, as A/B does: a
prompt set, one system and baselines) or from conversations (`build_from_conversations`,
from an uploaded JSONL file). Nothing else about a kind is assumed here.

Creation is one transaction: the conversations are imported, the campaign stored, its
items built and batched; any problem leaves nothing behind. The random generator that
orders and places items is seeded with the campaign's slug, so a campaign can be rebuilt
exactly.
"""

import importlib.util
import random
from dataclasses import dataclass, replace
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from evalhub.importers.conversations import ParsedConversation, parse_conversations
from evalhub.importers.problems import InvalidUpload
from evalhub.models import Conversation, PromptSet, Response, Submission, System
from evalhub.services import ConversationImport, store_conversations

from .crowd import get_provider
from .models import Campaign
from .services import add_items
from .tasks import KIND_CHOICES
from .tasks.base import ConfigInvalid, ItemSpec, TaskKind

Status = Campaign.Status


class SetupInvalid(Exception):
    """What is wrong with a campaign's setup: {form field name: [message, ...]}."""

    def __init__(self, errors: dict[str, list[str]]):
        self.errors = errors
        super().__init__("; ".join(m for messages in errors.values() for m in messages))


class TransitionRefused(Exception):
    pass


@dataclass(frozen=True)
class ResponsePairs:
    """Items from responses: the system's against each baseline's, prompt by prompt."""

    prompt_set: PromptSet
    system: System
    baselines: list[System]


@dataclass(frozen=True)
class ConversationFiles:
    """Items from conversations, and optionally a file of gold and training items."""

    data: bytes
    filename: str
    gold_data: bytes | None = None
    gold_filename: str = ""


@dataclass(frozen=True)
class CampaignSetup:
    campaign: Campaign
    batches: int
    shown: int
    automatic: int
    gold_copies: int
    training: int
    skipped_conversations: int = 0
    imported: ConversationImport | None = None

    @property
    def cost(self) -> Decimal:
        return self.batches * self.campaign.redundancy * self.campaign.reward_per_batch


def builds_from_responses(kind: TaskKind) -> bool:
    return hasattr(kind, "build_from_responses")


def available_kinds() -> list[tuple[str, str]]:
    """The kinds whose module is installed, as (key, label) choices."""
    return [
        (key, label)
        for key, label in KIND_CHOICES
        if importlib.util.find_spec(f"annotation.tasks.{key}") is not None
    ]


def create_campaign(
    campaign: Campaign, source, *, gold_per_batch: int = 1, user=None
) -> CampaignSetup:
    """Store `campaign` (unsaved) with its items built from `source`.

    `source` is ResponsePairs or ConversationFiles, as the kind needs. Raises SetupInvalid
    (nothing stored) naming the form field each problem belongs to.
    """
    kind = campaign.kind
    try:
        campaign.task_config = kind.clean_config(campaign.task_config)
    except ConfigInvalid as invalid:
        raise SetupInvalid({"task_config": [str(invalid)]}) from None
    try:
        return _create(campaign, kind, source, gold_per_batch, user)
    except SetupInvalid:
        # The transaction rolled the row back; the object must not look stored.
        campaign.pk = None
        raise


def _create(campaign, kind, source, gold_per_batch, user) -> CampaignSetup:
    rng = random.Random(campaign.slug)
    if builds_from_responses(kind):
        if not isinstance(source, ResponsePairs):
            raise SetupInvalid({"prompt_set": [f"{kind.label} items are built from responses."]})
        pairs = response_pairs(source)
        with transaction.atomic():
            campaign.save()
            counts = add_items(campaign, kind.build_from_responses(pairs, rng), gold_per_batch)
        return CampaignSetup(campaign, **_counts(counts))
    if not isinstance(source, ConversationFiles):
        raise SetupInvalid({"conversations": [f"{kind.label} items are built from conversations."]})
    return _from_conversations(campaign, kind, source, rng, gold_per_batch, user)


def _counts(counts: dict) -> dict:
    return {
        key: counts[key] for key in ("batches", "shown", "automatic", "gold_copies", "training")
    }


def response_pairs(source: ResponsePairs) -> list[tuple]:
    """(prompt, system's response, baseline's response) for every prompt and baseline, from
    the latest submission of each system on the prompt set."""
    systems = [source.system, *source.baselines]
    latest: dict[int, Submission] = {}
    submissions = Submission.objects.filter(
        prompt_set=source.prompt_set, system__in=systems
    ).order_by("-created", "-pk")
    for submission in submissions:
        latest.setdefault(submission.system_id, submission)
    errors: dict[str, list[str]] = {}
    for field, system in [("system", source.system)] + [("baselines", b) for b in source.baselines]:
        if system.pk not in latest:
            errors.setdefault(field, []).append(
                f"{system.name} has no submission on {source.prompt_set.name}."
            )
    if errors:
        raise SetupInvalid(errors)
    responses = {
        (r.submission.system_id, r.prompt_id): r
        for r in Response.objects.filter(submission__in=latest.values()).select_related(
            "prompt", "submission__system"
        )
    }
    pairs, unanswered = [], set()
    for prompt in source.prompt_set.prompts.order_by("position"):
        for baseline in source.baselines:
            a = responses.get((source.system.pk, prompt.pk))
            b = responses.get((baseline.pk, prompt.pk))
            unanswered |= {s.name for s, r in ((source.system, a), (baseline, b)) if r is None}
            pairs.append((prompt, a, b))
    if unanswered:
        # Submissions answer every prompt when stored; a set changed since then does not.
        raise SetupInvalid(
            {
                "prompt_set": [
                    f"The latest submission of {name} does not answer every prompt of "
                    f"{source.prompt_set.name}."
                    for name in sorted(unanswered)
                ]
            }
        )
    return pairs


def _parsed(data: bytes, filename: str, field: str, gold_file: bool) -> list[ParsedConversation]:
    try:
        return parse_conversations(
            data, filename, settings.EVALHUB_MAX_UPLOAD_BYTES, gold_file=gold_file
        )
    except InvalidUpload as invalid:
        raise SetupInvalid({field: problem_messages(invalid)}) from None


def problem_messages(invalid: InvalidUpload) -> list[str]:
    messages = [str(problem) for problem in invalid.shown]
    if invalid.total > len(invalid.shown):
        messages.append(f"... and {invalid.total - len(invalid.shown)} more problems.")
    return messages


def _from_conversations(campaign, kind, source: ConversationFiles, rng, gold_per_batch, user):
    main = _parsed(source.data, source.filename, "conversations", gold_file=False)
    gold = []
    if source.gold_data is not None:
        gold = _parsed(source.gold_data, source.gold_filename, "gold_items", gold_file=True)
    task_ids = {c.external_id for c in main}
    # A check also shown as a task would let its known answer into the results.
    overlap = [
        f"line {g.line}: conversation '{g.external_id}' is also in the conversations file."
        for g in gold
        if g.external_id in task_ids
    ]
    if overlap:
        raise SetupInvalid({"gold_items": overlap})
    with transaction.atomic():
        imported = _store(main, "conversations", user)
        if gold:
            more = _store(gold, "gold_items", user)
            imported = ConversationImport(
                created=imported.created + more.created,
                unchanged=imported.unchanged + more.unchanged,
                systems_created=sorted({*imported.systems_created, *more.systems_created}),
            )
        campaign.save()
        conversations = _conversations([c.external_id for c in main])
        specs = _build(kind, conversations, campaign.task_config, rng, "task_config")
        used = {s.conversation_id for s in specs} | {s.conversation_b_id for s in specs}
        skipped = sum(1 for c in conversations if c.pk not in used)
        if not any(s.role == "task" for s in specs):
            raise SetupInvalid(
                {
                    "conversations": [
                        f"{kind.label} builds no items from these {len(conversations)} "
                        "conversations with this task config."
                    ]
                }
            )
        gold_conversations = dict(
            zip(
                [g.external_id for g in gold],
                _conversations([g.external_id for g in gold]),
                strict=True,
            )
        )
        for line in gold:
            built = _build(
                kind,
                [gold_conversations[line.external_id]],
                campaign.task_config,
                rng,
                "gold_items",
            )
            if not built:
                raise SetupInvalid(
                    {
                        "gold_items": [
                            f"line {line.line}: {kind.label} builds no item from this conversation."
                        ]
                    }
                )
            specs += [replace(s, role=line.role, gold=line.gold, auto_payload=None) for s in built]
        counts = add_items(campaign, specs, gold_per_batch)
    return CampaignSetup(
        campaign, **_counts(counts), skipped_conversations=skipped, imported=imported
    )


def _store(parsed, field: str, user) -> ConversationImport:
    try:
        return store_conversations(parsed, user=user)
    except InvalidUpload as invalid:
        raise SetupInvalid({field: problem_messages(invalid)}) from None


def _build(kind, conversations, config, rng, field: str) -> list[ItemSpec]:
    try:
        return list(kind.build_from_conversations(conversations, config, rng))
    except ConfigInvalid as invalid:
        raise SetupInvalid({field: [str(invalid)]}) from None


def _conversations(external_ids: list[str], chunk: int = 500) -> list[Conversation]:
    """Catalog conversations in the given order, with what the builders read prefetched."""
    found = {}
    for start in range(0, len(external_ids), chunk):
        rows = Conversation.objects.filter(
            external_id__in=external_ids[start : start + chunk]
        ).prefetch_related("speakers__system", "turns")
        found.update((c.external_id, c) for c in rows)
    return [found[external_id] for external_id in external_ids]


# action (also the name of the provider's hook): (statuses it applies to, resulting status)
ACTIONS = {
    "launch": ((Status.DRAFT, Status.PAUSED), Status.LIVE),
    "pause": ((Status.LIVE,), Status.PAUSED),
    "finish": ((Status.LIVE, Status.PAUSED), Status.FINISHED),
}


def allowed_actions(campaign: Campaign) -> list[str]:
    return [action for action, (sources, _) in ACTIONS.items() if campaign.status in sources]


def change_status(campaign: Campaign, action: str, now=None) -> Campaign:
    """Launch, pause or finish: the provider's hook first, then the new status.

    A failing hook leaves the campaign as it was. Raises TransitionRefused when the
    campaign's status does not allow the action.
    """
    now = now or timezone.now()
    sources, target = ACTIONS[action]
    with transaction.atomic():
        locked = Campaign.objects.select_for_update().get(pk=campaign.pk)
        if locked.status not in sources:
            raise TransitionRefused(
                f"A {locked.get_status_display().lower()} campaign cannot {action}."
            )
        if action == "launch" and not locked.batches.exists():
            raise TransitionRefused("This campaign has no items to show; it cannot launch.")
        getattr(get_provider(locked.provider), action)(locked)
        locked.status = target
        fields = ["status"]
        if action == "launch" and locked.launched_at is None:
            locked.launched_at = now
            fields.append("launched_at")
        if action == "finish":
            locked.finished_at = now
            fields.append("finished_at")
        locked.save(update_fields=fields)
    return locked
