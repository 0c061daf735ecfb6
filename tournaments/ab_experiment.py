"""ChatEval A/B experiments: a submission against chosen baselines, as a ready campaign.

One item per prompt and baseline, the two responses in random order (identical pairs
recorded as automatic ties, never shown), `prompts_per_batch` items per batch and
`judgments_per_prompt` judgments per item. The cost is known before launch:
shown items × judgments per item × reward per judgment.
"""

import random
from dataclasses import dataclass
from decimal import Decimal

from annotation.items import TooMuchWork, add_items, check_assignments
from annotation.kinds import get_kind
from annotation.models import Campaign
from evalhub.comparison import latest_submission
from evalhub.errors import UserInputError
from evalhub.models import Response
from evalhub.uniqueness import SlugTaken, unique_slug

from .models import Tournament

INSTRUCTIONS = (
    "You will see the start of a conversation and two possible next turns. Choose the "
    "response that is the better continuation: sensible, specific to the conversation and "
    'fluent. Choose "it\'s a tie" only when neither is better.'
)


class ExperimentInvalid(UserInputError, ValueError):
    pass


@dataclass(frozen=True)
class ABPlan:
    baselines: list[str]
    shown_items: int
    automatic_ties: int
    batches: int
    assignments: int
    judgments: int
    cost: Decimal


def _responses(submission) -> dict[int, Response]:
    return {
        r.prompt_id: r for r in submission.responses.select_related("prompt", "submission__system")
    }


def comparison_pairs(tournament: Tournament) -> list[tuple]:
    """(prompt, response of the submission, response of a baseline) for every prompt and
    baseline; a baseline without a submission on the prompt set is an error."""
    if tournament.submission is None or tournament.prompt_set is None:
        raise ExperimentInvalid("An A/B experiment needs a submission and its prompt set.")
    if tournament.submission.prompt_set_id != tournament.prompt_set_id:
        raise ExperimentInvalid("The submission answers another prompt set.")
    baselines = list(tournament.baselines.order_by("slug"))
    if not baselines:
        raise ExperimentInvalid("Choose at least one baseline.")
    ours = _responses(tournament.submission)
    pairs = []
    missing = []
    for baseline in baselines:
        submission = latest_submission(baseline, tournament.prompt_set)
        if submission is None:
            missing.append(baseline.slug)
            continue
        theirs = _responses(submission)
        pairs += [
            (ours[pid].prompt, ours[pid], theirs[pid]) for pid in sorted(ours) if pid in theirs
        ]
    if missing:
        raise ExperimentInvalid(
            f"No submission on {tournament.prompt_set.slug} from: {', '.join(missing)}."
        )
    return pairs


def plan(tournament: Tournament) -> ABPlan:
    pairs = comparison_pairs(tournament)
    specs = get_kind("ab").build_from_responses(pairs, random.Random(tournament.seed))
    return _plan_of(tournament, specs)


def _plan_of(tournament: Tournament, specs) -> ABPlan:
    """The plan's figures by arithmetic; ExperimentInvalid when it opens more assignments
    than settings.EVALHUB_MAX_ASSIGNMENTS_PER_CAMPAIGN allows."""
    shown = sum(1 for s in specs if s.auto_payload is None)
    batches = -(-shown // tournament.prompts_per_batch)
    judgments = shown * tournament.judgments_per_prompt
    try:
        assignments = check_assignments(batches, tournament.judgments_per_prompt)
    except TooMuchWork as too_much:
        raise ExperimentInvalid(str(too_much)) from None
    return ABPlan(
        baselines=sorted(tournament.baselines.values_list("slug", flat=True)),
        shown_items=shown,
        automatic_ties=len(specs) - shown,
        batches=batches,
        assignments=assignments,
        judgments=judgments,
        cost=(Decimal(judgments) * tournament.reward_per_judgment).quantize(Decimal("0.01")),
    )


def build_campaign(tournament: Tournament) -> Campaign:
    """Create the tournament's A/B campaign (a draft, to be launched by an admin).

    Two "Generate" clicks at once: the tournament's row is locked (PostgreSQL), and where
    rows cannot be locked the campaign's unique slug stops the second; either way it gets
    ExperimentInvalid."""
    slug = f"{tournament.slug}-ab"[:80]
    try:
        with unique_slug(Campaign, slug):
            return _build_campaign(tournament, slug)
    except SlugTaken:
        raise ExperimentInvalid("This tournament already has its campaign.") from None


def _build_campaign(tournament: Tournament, slug: str) -> Campaign:
    locked = Tournament.objects.select_for_update().get(pk=tournament.pk)
    if locked.campaign_id:
        raise ExperimentInvalid("This tournament already has its campaign.")
    pairs = comparison_pairs(tournament)
    specs = get_kind("ab").build_from_responses(pairs, random.Random(tournament.seed))
    _plan_of(tournament, specs)  # refuses a plan too large before anything is written
    campaign = Campaign.objects.create(
        slug=slug,
        title=f"{tournament.name}: which response is better?",
        task_kind="ab",
        instructions=INSTRUCTIONS,
        redundancy=tournament.judgments_per_prompt,
        batch_size=tournament.prompts_per_batch,
        reward_per_batch=tournament.reward_per_judgment * tournament.prompts_per_batch,
        owner=tournament.owner,
    )
    add_items(campaign, specs)
    tournament.campaign = campaign
    tournament.status = Tournament.Status.READY
    tournament.save(update_fields=["campaign", "status"])
    return campaign
