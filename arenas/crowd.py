"""An arena's paid crowd: launching it on Prolific or MTurk, and a crowd voter's way
through their batch (battle slots and gold battles) to their completion code.

The crowd side is the campaigns' own (docs/architecture.md, "An arena's crowd"): a launch
makes a campaign of the `arena` kind whose batches are participants (`participants`
batches of `battles_per_participant` items, one place each) and runs it through
annotation: the provider's cost estimate (rewards and platform fees) against the budget,
staff approval where money is spent, the platform launch, the start link, allocation,
review, pay and block. What is the arena's: the battles themselves, and the gold battles,
whose fixed answers are shown as a battle like the others (`show_gold`).
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from decimal import Decimal

from django.db import transaction
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext, ngettext

from annotation.campaign_settings import settings_errors
from annotation.campaigns import (
    PLATFORMS,
    TransitionRefused,
    budget_problem,
    launch_campaign,
    pays_crowdworkers,
    request_launch,
)
from annotation.items import TooMuchWork, add_items
from annotation.kinds.arena import battle_slots, gold_item
from annotation.language import LANGUAGE_CODES
from annotation.models import Assignment, Campaign, Item, LaunchRequest
from annotation.provider_settings import provider_config
from annotation.services import batch_items, submit_if_complete
from evalhub import limits
from evalhub.declared import DeclaredInvalid, check
from evalhub.errors import UserInputError, field_problems
from evalhub.permissions import is_staff
from evalhub.uniqueness import SlugTaken, unique_slug

from . import crowd_slots
from .battles import SIDES, drawable_entries, summarize_side
from .crowd_models import CrowdLaunch
from .crowd_settings import CrowdSettings
from .models import Arena, Battle, BattleAnswer, BattleTurn
from .pairing import NoPair, draw_pair
from .style import count_tokens
from .tasks import send_language


class CrowdRefused(UserInputError):
    """A launch that cannot go ahead (nothing was created)."""


@dataclass(frozen=True)
class LaunchSetup:
    """What the owner asks for: the platform, how many participants doing how many
    battles (with how many gold battles each), the pay and the budget."""

    provider: str
    participants: int
    battles_per_participant: int
    reward_per_participant: Decimal
    budget: Decimal
    gold_per_batch: int = 1
    time_limit_minutes: int = 60
    platform_sandbox: bool = True
    # Screening on the platform: the provider's own settings (annotation/
    # provider_settings.py), e.g. Prolific's devices, MTurk's approval rate and locales.
    screening: dict = field(default_factory=dict)
    # The participants' pages' language (the campaign's `language`, docs/translating.md).
    language: str = "en"


@dataclass(frozen=True)
class Launched:
    launch: CrowdLaunch
    # Set when the launch waits for staff's approval (it pays crowdworkers).
    request: LaunchRequest | None = None

    @property
    def campaign(self) -> Campaign:
        return self.launch.campaign


def _problems(arena: Arena, setup: LaunchSetup) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    if setup.provider not in PLATFORMS:
        errors["provider"] = ["Choose Prolific or MTurk."]
    if setup.language not in LANGUAGE_CODES:
        errors["language"] = [f"Choose one of the site's languages: {', '.join(LANGUAGE_CODES)}."]
    try:
        check(
            CrowdSettings,
            {
                "participants": setup.participants,
                "battles_per_participant": setup.battles_per_participant,
            },
        )
    except DeclaredInvalid as invalid:
        for key, message in invalid.errors.items():
            errors.setdefault(key, []).append(message)
    campaign_errors = settings_errors(
        {
            "reward_per_batch": setup.reward_per_participant,
            "time_limit_minutes": setup.time_limit_minutes,
            "gold_per_batch": setup.gold_per_batch,
        }
    )
    names = {"reward_per_batch": "reward_per_participant"}
    for key, message in campaign_errors.items():
        errors.setdefault(names.get(key, key), []).append(message)
    if setup.provider in PLATFORMS:
        try:
            provider_config(setup.provider, setup.screening)
        except DeclaredInvalid as invalid:
            for key, message in invalid.errors.items():
                errors.setdefault(key, []).append(message)
    if setup.reward_per_participant is not None and setup.reward_per_participant <= 0:
        errors.setdefault("reward_per_participant", []).append(
            "A crowd launch pays each participant more than 0."
        )
    if setup.budget is None or setup.budget <= 0:
        errors.setdefault("budget", []).append(
            "Say what the launch may spend in all (rewards and platform fees)."
        )
    if setup.gold_per_batch >= setup.battles_per_participant:
        errors.setdefault("gold_per_batch", []).append(
            f"Fewer gold battles than battles per participant ({setup.battles_per_participant})."
        )
    if setup.gold_per_batch and not arena.gold_battles.exists():
        errors.setdefault("gold_per_batch", []).append(
            "This arena has no gold battles yet: add some, or mix in none (0)."
        )
    if len(drawable_entries(arena)) < 2:
        errors.setdefault("", []).append(
            "This arena needs two systems with an endpoint and a weight above 0."
        )
    return errors


def _free_slug(arena: Arena) -> str:
    base = f"{arena.slug[:60]}-crowd"
    n = arena.crowd_launches.count() + 1
    while Campaign.objects.filter(slug=f"{base}-{n}").exists():
        n += 1
    return f"{base}-{n}"


def _paying(setup: LaunchSetup) -> bool:
    unsaved = Campaign(provider=setup.provider, platform_sandbox=setup.platform_sandbox)
    return pays_crowdworkers(unsaved)


def launch(arena: Arena, setup: LaunchSetup, user, *, confirm: bool = False) -> Launched:
    """Launch the arena on the platform as `participants` batches of battles.

    Refused with nothing created (CrowdRefused) when a setting is out of range, the arena
    cannot hold battles, the provider's estimate (rewards and fees) is above the budget, or
    somebody who may launch at once does not confirm spending real money. Otherwise the
    campaign is stored and launched when the user may (staff; the MTurk sandbox), or its
    launch is requested from staff (a pending LaunchRequest)."""
    if not arena.is_managed_by(user):
        raise CrowdRefused("Only the arena's owner and staff launch it on a crowd platform.")
    errors = _problems(arena, setup)
    if errors:
        raise CrowdRefused(field_problems(errors))
    # Staff launch at once (confirming the spending); an owner launches at once only what
    # pays nobody (the MTurk sandbox), and asks staff for the rest, as campaigns do.
    direct = is_staff(user) or not _paying(setup)
    if direct and _paying(setup) and not confirm:
        raise CrowdRefused("Launching pays real money: tick the confirmation.", field="confirm")
    gold = list(arena.gold_battles.order_by("pk"))
    per_batch = min(setup.gold_per_batch, len(gold))
    slots = setup.participants * (setup.battles_per_participant - per_batch)
    specs = battle_slots(slots) + [gold_item(g.prompt, g.first, g.second, g.better) for g in gold]
    slug = _free_slug(arena)
    # The campaign's title and instructions are the participants' first words: theirs.
    with translation.override(setup.language):
        title = gettext("%(arena)s: chatbot battles") % {"arena": arena.name}
        instructions = ngettext(
            "Write messages to two anonymous chatbots and vote which answered better, "
            "%(battles)s time.",
            "Write messages to two anonymous chatbots and vote which answered better, "
            "%(battles)s times.",
            setup.battles_per_participant,
        ) % {"battles": setup.battles_per_participant}
    try:
        with unique_slug(Campaign, slug):  # a transaction: a refusal below undoes it all
            campaign = Campaign.objects.create(
                slug=slug,
                title=title[: limits.NAME_CHARS],
                task_kind="arena",
                instructions=instructions,
                language=setup.language,
                redundancy=1,
                batch_size=setup.battles_per_participant,
                reward_per_batch=setup.reward_per_participant,
                budget=setup.budget,
                max_batches_per_worker=1,
                time_limit_minutes=setup.time_limit_minutes,
                provider=setup.provider,
                provider_config=dict(setup.screening),
                platform_sandbox=setup.platform_sandbox,
                owner=arena.owner,
            )
            add_items(campaign, specs, gold_per_batch=per_batch)
            crowd = CrowdLaunch.objects.create(
                arena=arena,
                campaign=campaign,
                battles_per_participant=setup.battles_per_participant,
                created_by=user if getattr(user, "is_authenticated", False) else None,
            )
            over = budget_problem(campaign)
            if over is not None:
                raise CrowdRefused(over, field="budget")
    except TooMuchWork as too_much:
        raise CrowdRefused(too_much.problems) from None
    except SlugTaken:
        raise CrowdRefused(
            "Another launch of this arena was made just now: launch again."
        ) from None
    if not direct:
        return Launched(crowd, request_launch(campaign, user))
    try:
        launch_campaign(campaign, actor=user, confirm=confirm)
    except TransitionRefused as refused:
        # The campaign stays a draft: launching it again from its page finishes the job.
        raise CrowdRefused(
            f"{refused} The launch is kept as a draft ({campaign.slug}): launch it again "
            "from its campaign page."
        ) from refused
    crowd.campaign.refresh_from_db()
    return Launched(crowd)


# A crowd voter's way through their batch ---------------------------------------------------

_RANDOM = random.SystemRandom()


@dataclass(frozen=True)
class Step:
    """What a crowd voter's next battle page is: `refused` (with a reason), `done` (their
    completion page at `url`), `battle` (the battle at `url`), or `new` (write a prompt)."""

    kind: str
    url: str = ""
    reason: str = ""


def next_step(session, arena: Arena, rng: random.Random | None = None) -> Step | None:
    """The crowd voter's next page in `arena`, or None when this browser holds no batch
    of the arena's crowd (the arena's own rules apply)."""
    assignment = crowd_slots.crowd_assignment(session, arena)
    if assignment is None:
        return None
    reason = crowd_slots.refusal(assignment)
    if reason:
        return Step("refused", reason=reason)
    if assignment.status != Assignment.Status.STARTED:
        return Step("done", url=_done_url(assignment))
    for _ in range(3):  # a slot judged or taken meanwhile (another tab): look again
        item, crowd = crowd_slots.next_slot(assignment)
        if item is None:
            submit_if_complete(assignment, len(batch_items(assignment)))
            return Step("done", url=_done_url(assignment))
        if crowd is not None and not crowd.battle.is_voted:
            return Step("battle", url=crowd.battle.get_absolute_url())
        if crowd is not None:
            crowd_slots.record_vote(crowd.battle)
            continue
        if item.role != Item.Role.GOLD:
            return Step("new")
        try:
            battle = show_gold(arena, assignment, item, rng or _RANDOM)
        except crowd_slots.SlotRefused:
            continue
        return Step("battle", url=battle.get_absolute_url())
    return Step("refused", reason=gettext("Your batch changed meanwhile: reload the page."))


def _done_url(assignment: Assignment) -> str:
    return reverse("annotation:done", args=[assignment.public_id])


def show_gold(arena: Arena, assignment: Assignment, item: Item, rng: random.Random) -> Battle:
    """A gold item as a battle: two of the arena's systems drawn as for a live battle (the
    reveal names them, as it would), the item's prompt as the first turn and its two fixed
    answers, settled, on sides drawn at random."""
    entries = drawable_entries(arena)
    try:
        draw = draw_pair([e.system.slug for e in entries], [e.weight for e in entries], rng)
    except NoPair:
        raise crowd_slots.SlotRefused(
            gettext("This arena has fewer than two systems to draw from.")
        ) from None
    systems = {e.system.slug: e.system for e in entries}
    first_side = rng.choice(SIDES)
    second_side = "b" if first_side == "a" else "a"
    first, second = item.content["answers"]
    texts = {first_side: first, second_side: second}
    worker = assignment.worker
    now = timezone.now()
    with transaction.atomic():
        battle = Battle.objects.create(
            arena=arena,
            system_a=systems[draw.a],
            system_b=systems[draw.b],
            source=Battle.Source.GOLD,
            question_id=uuid.uuid4().hex,
            started_at=now,
            voter_platform=worker.provider,
            voter_ref=crowd_slots.voter_ref(worker),
            turns=1,
            pairing=draw.state,
        )
        turn = BattleTurn.objects.create(
            battle=battle, number=1, prompt=item.content["prompt"], asked_at=now
        )
        BattleAnswer.objects.bulk_create(
            BattleAnswer(
                turn=turn,
                side=side,
                status=BattleAnswer.Status.DONE,
                text=texts[side],
                started_at=now,
                finished_at=now,
                tokens=count_tokens(texts[side]),
            )
            for side in SIDES
        )
        for side in SIDES:
            summarize_side(battle, side)
        crowd_slots.attach(battle, assignment, item, first_side=first_side)
        transaction.on_commit(lambda: send_language(battle.pk))
    return battle
