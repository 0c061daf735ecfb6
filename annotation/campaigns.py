"""Setting a campaign up from the catalog, and moving it through its states.

A kind is built either from responses (it has `build_from_responses`, as A/B does: a
prompt set, one system and baselines) or from conversations (`build_from_conversations`,
from an uploaded JSONL file). Nothing else about a kind is assumed here.

Creation is one transaction: the conversations are imported, the campaign stored, its
items built and batched; any problem leaves nothing behind. The random generator that
orders and places items is seeded with the campaign's slug, so a campaign can be rebuilt
exactly.
"""

import logging
import random
from dataclasses import dataclass, replace
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from evalhub.errors import UserInputError, field_problems
from evalhub.importers.conversations import ParsedConversation, parse_conversations
from evalhub.importers.problems import InvalidUpload
from evalhub.models import Conversation, NoticeKind, PromptSet, Response, Submission, System
from evalhub.notifications import notify, notify_staff
from evalhub.permissions import is_managed_by, is_staff
from evalhub.services import ConversationImport, store_conversations
from evalhub.uniqueness import SlugTaken, unique_slug

from . import webhook_events
from .crowd import get_provider
from .crowd.base import CrowdError
from .items import TooMuchWork, add_items
from .kinds import KIND_CHOICES, get_kind
from .kinds.base import ConfigInvalid, ItemSpec, TaskKind
from .launch_checks import budget_problem, launch_problems, pays_crowdworkers, untrainable
from .models import Assignment, Campaign, LaunchRequest

Status = Campaign.Status
logger = logging.getLogger(__name__)


class SetupInvalid(UserInputError):
    """What is wrong with a campaign's setup: {form field name: [message, ...]}."""

    def __init__(self, errors: dict[str, list[str]]):
        self.errors = errors
        summary = "; ".join(m for messages in errors.values() for m in messages)
        super().__init__(field_problems(errors), summary=summary)


class TransitionRefused(UserInputError):
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
class ChatConversations:
    """Items from the conversations a chat campaign collected: the complete ones, unless
    `include_incomplete` (a chat the bot failed in, or still open)."""

    chat_campaign: Campaign
    include_incomplete: bool = False


@dataclass(frozen=True)
class ChatSystems:
    """Items of a chat campaign: conversation slots with these systems' endpoints."""

    systems: list[System]


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


def builds_from_systems(kind: TaskKind) -> bool:
    return hasattr(kind, "build_from_systems")


def available_kinds() -> list[tuple[str, str]]:
    """Every task kind a campaign can be created with, as (key, label) choices (not those
    whose campaigns another app makes, like an arena's crowd)."""
    return [(key, label) for key, label in KIND_CHOICES if get_kind(key).standalone]


def create_campaign(
    campaign: Campaign, source, *, gold_per_batch: int = 1, user=None
) -> CampaignSetup:
    """Store `campaign` (unsaved) with its items built from `source`.

    `source` is ResponsePairs, ConversationFiles or ChatSystems, as the kind needs. Raises SetupInvalid
    (nothing stored) naming the form field each problem belongs to.
    """
    kind = campaign.kind
    try:
        campaign.task_config = kind.clean_config(campaign.task_config)
    except ConfigInvalid as invalid:
        raise SetupInvalid({"task_config": [str(invalid)]}) from None
    try:
        with unique_slug(Campaign, campaign.slug):
            setup = _create(campaign, kind, source, gold_per_batch, user)
    except SlugTaken as taken:
        campaign.pk = None
        raise SetupInvalid({"slug": [str(taken)]}) from None
    except SetupInvalid:
        # The transaction rolled the row back; the object must not look stored.
        campaign.pk = None
        raise
    if untrainable(setup.campaign):
        # Its launch will be refused until someone adds training items: staff hear it now.
        notify_staff(
            NoticeKind.TRAINING_MISSING,
            f'The campaign "{campaign.title}" requires training but has no training items: '
            "nobody can qualify, and it cannot launch until some are added or training is "
            "turned off.",
            campaign.get_absolute_url(),
            once_key=f"training_missing:{campaign.pk}",
        )
    return setup


def _create(campaign, kind, source, gold_per_batch, user) -> CampaignSetup:
    rng = random.Random(campaign.slug)
    if builds_from_systems(kind):
        if not isinstance(source, ChatSystems) or not source.systems:
            raise SetupInvalid({"chat_systems": [f"{kind.label} needs at least one system."]})
        with transaction.atomic():
            campaign.save()
            specs = kind.build_from_systems(source.systems, campaign.task_config, rng)
            counts = _add_items(campaign, specs, 0)
        return CampaignSetup(campaign, **_counts(counts))
    if builds_from_responses(kind):
        if not isinstance(source, ResponsePairs):
            raise SetupInvalid({"prompt_set": [f"{kind.label} items are built from responses."]})
        pairs = response_pairs(source)
        try:
            specs = kind.build_from_responses(pairs, rng)
        except ConfigInvalid as invalid:
            # Only the number of systems can be wrong here (a ranking's k).
            raise SetupInvalid({"baselines": [str(invalid)]}) from None
        with transaction.atomic():
            campaign.save()
            counts = _add_items(campaign, specs, gold_per_batch)
        return CampaignSetup(campaign, **_counts(counts))
    if isinstance(source, ChatConversations):
        return _from_chats(campaign, kind, source, rng, gold_per_batch)
    if not isinstance(source, ConversationFiles):
        raise SetupInvalid({"conversations": [f"{kind.label} items are built from conversations."]})
    return _from_conversations(campaign, kind, source, rng, gold_per_batch, user)


def _add_items(campaign, specs, gold_per_batch) -> dict:
    try:
        return add_items(campaign, specs, gold_per_batch)
    except TooMuchWork as too_much:
        raise SetupInvalid(
            {too_much.problems[0].field or "": [too_much.problems[0].message]}
        ) from None


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
        raise SetupInvalid({field: invalid.messages()}) from None


def _from_conversations(campaign, kind, source: ConversationFiles, rng, gold_per_batch, user):
    main, gold = _read_conversation_files(source)
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
        used = _used_conversations(specs)
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
        specs += _gold_specs(kind, gold, campaign.task_config, rng)
        counts = _add_items(campaign, specs, gold_per_batch)
    return CampaignSetup(
        campaign, **_counts(counts), skipped_conversations=skipped, imported=imported
    )


def _from_chats(campaign, kind, source: ChatConversations, rng, gold_per_batch):
    from .chat import usable_chats

    collected = Conversation.objects.filter(metadata__chat__campaign=source.chat_campaign.slug)
    ids = list(
        usable_chats(collected, include_incomplete=source.include_incomplete)
        .order_by("external_id")
        .values_list("external_id", flat=True)
    )
    if not ids:
        raise SetupInvalid(
            {"chat_campaign": [f"{source.chat_campaign.title} has no complete conversations yet."]}
        )
    with transaction.atomic():
        campaign.save()
        conversations = _conversations(ids)
        specs = _build(kind, conversations, campaign.task_config, rng, "task_config")
        if not any(s.role == "task" for s in specs):
            raise SetupInvalid(
                {"chat_campaign": [f"{kind.label} builds no items from these conversations."]}
            )
        counts = _add_items(campaign, specs, gold_per_batch)
    used = _used_conversations(specs)
    skipped = sum(1 for c in conversations if c.pk not in used)
    return CampaignSetup(campaign, **_counts(counts), skipped_conversations=skipped)


def _read_conversation_files(source: ConversationFiles) -> tuple[list, list]:
    """The parsed task and gold conversations; SetupInvalid if a check is also a task."""
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
    return main, gold


def _gold_specs(kind, gold: list, config: dict, rng) -> list:
    """The items built from the stored gold conversations, with their known answers."""
    gold_conversations = dict(
        zip(
            [g.external_id for g in gold],
            _conversations([g.external_id for g in gold]),
            strict=True,
        )
    )
    specs, problems = [], []
    for line in gold:
        built = _build(kind, [gold_conversations[line.external_id]], config, rng, "gold_items")
        if not built:
            raise SetupInvalid(
                {
                    "gold_items": [
                        f"line {line.line}: {kind.label} builds no item from this conversation."
                    ]
                }
            )
        wrong = {m for s in built for m in kind.check_gold(s.content, line.gold)}
        problems += [f"line {line.line}: {m}" for m in sorted(wrong)]
        specs += [replace(s, role=line.role, gold=line.gold, auto_payload=None) for s in built]
    if problems:
        # Scoring must never meet a malformed answer: refuse the upload, every line at once.
        raise SetupInvalid({"gold_items": problems})
    return specs


def _store(parsed, field: str, user) -> ConversationImport:
    # A researcher's uploads are theirs (no other tournament draws on them); staff's are
    # curated.
    owner = None if user is None or not user.is_authenticated or is_staff(user) else user
    try:
        return store_conversations(parsed, user=user, owner=owner)
    except InvalidUpload as invalid:
        raise SetupInvalid({field: invalid.messages()}) from None


def _used_conversations(specs: list[ItemSpec]) -> set[int | None]:
    return (
        {s.conversation_id for s in specs}
        | {s.conversation_b_id for s in specs}
        | {pk for s in specs for pk in s.shown_conversation_ids}
    )


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


def is_complete(campaign: Campaign) -> bool:
    """Every slot of every batch has its judgments: the campaign has assignments and none
    is open or started (an expired or returned one has been replaced by a fresh open one)."""
    slots = campaign.assignments.all()
    return slots.exists() and not slots.filter(status__in=Assignment.PENDING).exists()


def finish_if_complete(campaign: Campaign) -> bool:
    """Finish a live or paused campaign once it is complete (its tournament follows, and its
    analysis runs: tournaments.signals, analysis.runs.signals). True if this call finished it.

    The crowd platform's finish hook may refuse (it is down): the campaign then stays as it
    was, logged, and the next submission or platform sync tries again."""
    if campaign.status not in ACTIONS["finish"][0] or not is_complete(campaign):
        return False
    try:
        change_status(campaign, "finish")
    except TransitionRefused as refused:
        # Also when another call finished it first: the status check is repeated locked.
        logger.info("Campaign %s is complete but was not finished: %s", campaign.slug, refused)
        return False
    notify(
        campaign.owner,
        NoticeKind.CAMPAIGN_COMPLETE,
        f"The campaign {campaign.title} has all its judgments and is finished.",
        campaign.get_absolute_url(),
        once_key=f"campaign_complete:{campaign.pk}",
    )
    return True


def allowed_actions(campaign: Campaign) -> list[str]:
    return [action for action, (sources, _) in ACTIONS.items() if campaign.status in sources]


def change_status(
    campaign: Campaign,
    action: str,
    now=None,
    *,
    actor=None,
    confirm: bool = False,
    platform_done: bool = False,
) -> Campaign:
    """Launch, pause or finish: the provider's hook first, then the new status.

    A failing hook leaves the campaign as it was. Raises TransitionRefused when the
    campaign's status does not allow the action, or when the crowd platform refuses it
    (e.g. a paid launch without `confirm`).
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
        extra = {"actor": actor} if actor is not None else {}
        if confirm and action == "launch":
            extra["confirm"] = True
        try:
            if not platform_done:  # launch_campaign has already posted it
                getattr(get_provider(locked.provider), action)(locked, **extra)
        except CrowdError as refused:
            raise TransitionRefused(str(refused)) from refused
        locked.status = target
        fields = ["status"]
        if action == "launch" and locked.launched_at is None:
            locked.launched_at = now
            fields.append("launched_at")
        if action == "finish":
            locked.finished_at = now
            fields.append("finished_at")
        locked.save(update_fields=fields)
        # Its owner's webhooks hear of the first launch (not a resume) and of the finish.
        if action == "launch" and "launched_at" in fields:
            webhook_events.launched(locked)
        elif action == "finish":
            webhook_events.finished(locked)
    return locked


# Launching on a crowd platform, and staff approval of launches that pay ------------------

PLATFORMS = (Campaign.Provider.MTURK, Campaign.Provider.PROLIFIC)


class LaunchNotAllowed(UserInputError):
    """The user may not launch this campaign (yet): it pays crowdworkers and needs staff's
    approval, or the user does not manage it."""


def place_on_platform(campaign: Campaign, provider: str | None, sandbox: bool | None) -> Campaign:
    """Move a campaign onto a crowd platform (and an MTurk site) before launching it. A
    campaign running on its link keeps the link and gains the platform."""
    changes = {}
    if provider and provider != campaign.provider:
        if provider not in PLATFORMS:
            raise TransitionRefused(f"Unknown crowd platform {provider!r}.", field="provider")
        if campaign.status == Status.FINISHED:
            raise TransitionRefused("A finished campaign cannot move to a platform.")
        if campaign.platform_ref:
            raise TransitionRefused(f"{campaign.slug} is already on {campaign.provider}.")
        changes["provider"] = provider
    if sandbox is not None and sandbox != campaign.platform_sandbox:
        if campaign.platform_ref:
            raise TransitionRefused("The campaign is already on the other MTurk site.")
        changes["platform_sandbox"] = sandbox
    if changes:
        with transaction.atomic():
            Campaign.objects.filter(pk=campaign.pk).update(**changes)
        campaign.refresh_from_db()
    return campaign


def approved_request(campaign: Campaign):
    """The approval that covers the campaign as it is now (platform, site and pay), if any."""
    latest = campaign.launch_requests.first()
    if latest is None or latest.state != LaunchRequest.State.APPROVED:
        return None
    if (latest.provider, latest.platform_sandbox, latest.reward_per_batch) != (
        campaign.provider,
        campaign.platform_sandbox,
        campaign.reward_per_batch,
    ):
        return None
    return latest


def may_launch(user, campaign: Campaign) -> bool:
    """Staff launch anything; a campaign's owner launches it when it pays nobody (a link,
    invitation links, the MTurk sandbox) or when staff approved its launch."""
    if is_staff(user):
        return True
    if not is_managed_by(user, campaign):
        return False
    return not pays_crowdworkers(campaign) or approved_request(campaign) is not None


def launch_campaign(campaign: Campaign, *, actor=None, confirm: bool = False) -> Campaign:
    """Launch (or resume) a campaign on its provider and make it live.

    The platform side runs first and outside the status change's transaction, so that each
    HIT or study created is recorded even if a later one fails (every creation is
    idempotent: launching again finishes the job). A campaign already live (e.g. on its
    link, just placed on a platform) stays live and gains the platform.
    """
    if campaign.status == Status.FINISHED:
        raise TransitionRefused("A finished campaign cannot launch.")
    if campaign.status == Status.PAUSED:
        return change_status(campaign, "launch", actor=actor, confirm=confirm)
    if not campaign.batches.exists():
        raise TransitionRefused("This campaign has no items to show; it cannot launch.")
    if untrainable(campaign):
        raise TransitionRefused(
            "This campaign requires training but has no training items: nobody could "
            "qualify. Add training conversations, or turn training off, before launching."
        )
    if (over := budget_problem(campaign)) is not None:
        raise TransitionRefused(over, field="budget")
    try:
        get_provider(campaign.provider).launch(campaign, actor=actor, confirm=confirm)
    except CrowdError as refused:
        raise TransitionRefused(str(refused)) from refused
    campaign.refresh_from_db()
    if campaign.status == Status.DRAFT:
        return change_status(campaign, "launch", actor=actor, platform_done=True)
    return campaign


def request_launch(campaign: Campaign, user):
    """A researcher asks staff to launch their campaign that pays crowdworkers. Returns the
    pending LaunchRequest (the same one when asked twice)."""
    if not is_managed_by(user, campaign):
        raise LaunchNotAllowed("Only the campaign's owner or staff may request its launch.")
    # A live campaign has something to launch only when it just moved from its link onto a
    # platform (it keeps the link and gains the platform).
    already_posted = campaign.status == Status.LIVE and (
        campaign.provider == Campaign.Provider.LOCAL or bool(campaign.platform_ref)
    )
    if campaign.status == Status.FINISHED or already_posted:
        raise TransitionRefused(
            f"A {campaign.get_status_display().lower()} campaign has nothing to launch."
        )
    if not pays_crowdworkers(campaign):
        raise TransitionRefused(
            "This campaign pays no crowdworkers (a link, invitation links or the MTurk "
            "sandbox): its owner launches it without approval."
        )
    # A request staff could only approve into a failure is refused now, with everything
    # that is missing, rather than after their approval.
    problems = launch_problems(campaign)
    if problems:
        raise TransitionRefused("This campaign cannot launch yet: " + " ".join(problems))
    with transaction.atomic():
        pending = (
            LaunchRequest.objects.select_for_update()
            .filter(campaign=campaign, state=LaunchRequest.State.PENDING)
            .first()
        )
        if pending is not None:
            return pending
        created = LaunchRequest.objects.create(
            campaign=campaign,
            provider=campaign.provider,
            platform_sandbox=campaign.platform_sandbox,
            reward_per_batch=campaign.reward_per_batch,
            places=campaign.batches.count() * campaign.redundancy,
            requested_by=user if getattr(user, "is_authenticated", False) else None,
        )
        notify_staff(
            NoticeKind.LAUNCH_REQUESTED,
            f"{user.get_username() if created.requested_by else 'Someone'} asks to launch "
            f'"{campaign.title}" on {campaign.get_provider_display()}: {created.places} paid '
            f"places at {created.reward_per_batch:.2f} each.",
            campaign.get_absolute_url(),
            once_key=f"launch-requested:{created.pk}",
        )
        return created


def decide_launch(campaign: Campaign, user, approve: bool, reason: str = ""):
    """Staff approve (which launches the campaign: the approval is the confirmation that
    money may be spent) or decline with a reason the owner reads. Returns the request.

    All or nothing: an approval checks the launch's prerequisites, launches, and only
    then records itself and tells the owner; a refused launch changes nothing (the request
    keeps waiting). A decline is recorded and told at once.
    """
    if not is_staff(user):
        raise LaunchNotAllowed("Only staff approve or decline launches.")
    reason = (reason or "").strip()
    if not approve and not reason:
        raise TransitionRefused(
            "Say why the launch is declined; the owner reads it.", field="reason"
        )
    _pending_request(campaign, approve)  # refused before anything is tried
    if approve:
        problems = launch_problems(campaign)
        if problems:
            raise TransitionRefused("It cannot launch yet: " + " ".join(problems))
        # The launch first: a launch the platform refuses leaves the request waiting and
        # the campaign as it was (every platform call is idempotent, so approving again
        # finishes a launch cut short), never "Approved" over a campaign still in draft.
        launch_campaign(campaign, actor=user, confirm=True)
    with transaction.atomic():
        pending = _pending_request(campaign, approve, lock=True)
        pending.state = LaunchRequest.State.APPROVED if approve else LaunchRequest.State.DECLINED
        pending.decided_by = user
        pending.decided_at = timezone.now()
        pending.reason = reason
        pending.save(update_fields=["state", "decided_by", "decided_at", "reason"])
        text = (
            f'Your campaign "{campaign.title}" was approved and launched on '
            f"{campaign.get_provider_display()}."
            if approve
            else f'Your request to launch "{campaign.title}" was declined: {reason}'
        )
        notify(
            pending.requested_by,
            NoticeKind.LAUNCH_DECIDED,
            text,
            campaign.get_absolute_url(),
            once_key=f"launch-decided:{pending.pk}",
        )
        webhook_events.launch_decided(campaign, pending)
    return pending


def _pending_request(campaign: Campaign, approve: bool, *, lock: bool = False) -> LaunchRequest:
    """The request waiting for a decision; TransitionRefused when there is none, or when an
    approval would not cover the campaign as it is now."""
    requests = LaunchRequest.objects.filter(campaign=campaign, state=LaunchRequest.State.PENDING)
    pending = (requests.select_for_update() if lock else requests).first()
    if pending is None:
        raise TransitionRefused("No launch request is waiting for a decision.")
    unchanged = (pending.provider, pending.platform_sandbox, pending.reward_per_batch) == (
        campaign.provider,
        campaign.platform_sandbox,
        campaign.reward_per_batch,
    )
    if approve and not unchanged:
        raise TransitionRefused(
            "The campaign's platform or pay changed since the request: decline it and "
            "ask for a new one."
        )
    return pending


def finish_on_platform(campaign: Campaign, *, actor=None) -> int:
    """Finish the campaign (its platform stops recruiting) and, once nothing waits for
    review, clean the platform's records up. Returns how many submitted assignments still
    wait (then the records are kept: pay or reject them, and finish again)."""
    if campaign.status in (Status.LIVE, Status.PAUSED):
        change_status(campaign, "finish", actor=actor)
    campaign.refresh_from_db()
    waiting = Assignment.objects.filter(
        campaign=campaign, status=Assignment.Status.SUBMITTED
    ).count()
    if not waiting:
        try:
            get_provider(campaign.provider).cleanup(campaign, actor=actor)
        except CrowdError as refused:
            raise TransitionRefused(str(refused)) from refused
    return waiting
