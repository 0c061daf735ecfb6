"""What a campaign still lacks before it can launch on its platform, listed on its page as
soon as the platform is chosen, so that nobody clicks Launch (or staff Approve) to learn one
missing thing at a time.

Each problem says what to set and who can set it (the owner: the campaign's settings; the
operator: the deployment's). A launch request is refused while any is left, and staff's
approval checks again, since settings may change between the two.
"""

from django.conf import settings

from .crowd import get_provider
from .crowd.base import CrowdError, money
from .models import Campaign, Item


def launch_problems(campaign: Campaign, estimate=None) -> list[str]:
    """Every reason the campaign cannot launch now on its provider; [] when it can.
    `estimate`: the provider's cost estimate when the caller has it (MTurk's asks the
    platform for the balance: a page that shows it asks once)."""
    problems = []
    if campaign.status == Campaign.Status.FINISHED:
        return ["A finished campaign cannot launch."]
    places = campaign.batches.count() * campaign.redundancy
    if not places:
        problems.append("The campaign has no items to show yet: add them before launching.")
    if untrainable(campaign):
        problems.append(
            "It requires training but holds no training items: nobody could qualify. Add "
            "training conversations, or turn training off."
        )
    if campaign.provider in (Campaign.Provider.PROLIFIC, Campaign.Provider.MTURK):
        problems += _platform_problems(campaign)
    if places and (over := budget_problem(campaign, estimate)) is not None:
        problems.append(over + " Lower the reward or the places, or raise the budget.")
    return problems


def _platform_problems(campaign: Campaign) -> list[str]:
    problems = []
    name = campaign.get_provider_display()
    if not settings.EVALHUB_PUBLIC_URL.startswith("https://"):
        problems.append(
            f"{name} sends workers to EVALHUB_PUBLIC_URL, which must be this site's HTTPS "
            f"address (it is {settings.EVALHUB_PUBLIC_URL!r}): the operator sets it."
        )
    if money(campaign.reward_per_batch) <= 0:
        problems.append(f"A {name} campaign needs a reward per batch above 0: set one.")
    if campaign.provider == Campaign.Provider.PROLIFIC and not settings.EVALHUB_PROLIFIC_TOKEN:
        problems.append(
            "Prolific needs the researcher account's API token (EVALHUB_PROLIFIC_TOKEN): "
            "the operator sets it."
        )
    return problems


def budget_problem(campaign: Campaign, estimate=None) -> str | None:
    """Why launching would spend more than the campaign's budget (its provider's estimate:
    every place's reward plus the platform's fees, or `estimate` when the caller has it),
    or None. A campaign without a budget, or whose launch pays nobody (a link, the MTurk
    sandbox), has no such problem."""
    if campaign.budget is None or not pays_crowdworkers(campaign):
        return None
    if estimate is None:
        try:
            estimate = get_provider(campaign.provider).estimate(campaign)
        except CrowdError as refused:
            return f"The launch cannot be priced: {refused}"
    if estimate.total <= campaign.budget:
        return None
    cost = f"{estimate.total} {estimate.currency}".strip()
    detail = "; ".join(estimate.lines()[:2])
    return f"This launch would cost {cost} ({detail}), more than the budget of {campaign.budget}."


def untrainable(campaign: Campaign) -> bool:
    """Requires training that its kind has, but holds no training item to train on."""
    if not campaign.requires_training:
        return False
    kind = campaign.kind
    if kind.training_key(kind.clean_config(campaign.task_config)) is None:
        return False
    return not campaign.items.filter(role=Item.Role.TRAINING).exists()


def pays_crowdworkers(campaign: Campaign) -> bool:
    """Launching moves real money (MTurk's sandbox does not)."""
    if not get_provider(campaign.provider).spends_money:
        return False
    return not (campaign.provider == Campaign.Provider.MTURK and campaign.platform_sandbox)
