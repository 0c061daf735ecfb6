"""What a campaign still lacks before it can launch on its platform, listed on its page as
soon as the platform is chosen, so that nobody clicks Launch (or staff Approve) to learn one
missing thing at a time.

Each problem says what to set and who can set it (the owner: the campaign's settings; the
operator: the deployment's). A launch request is refused while any is left, and staff's
approval checks again, since settings may change between the two.
"""

from django.conf import settings

from .crowd.base import money
from .models import Campaign


def launch_problems(campaign: Campaign) -> list[str]:
    """Every reason the campaign cannot launch now on its provider; [] when it can."""
    from .campaigns import budget_problem, untrainable

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
    if places and (over := budget_problem(campaign)) is not None:
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
    if campaign.time_limit_minutes < 1:
        problems.append("Set a time limit for a batch.")
    return problems
