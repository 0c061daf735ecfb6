"""Private stays private: which campaigns the public may see, and who may be served items.

A campaign is *private* when one of its items shows the output of a system that is not
public (private, or embargoed now), or when a layer above annotation says so: a
tournament registers "my campaign is private until I am published" with
`annotation.models.register_private_rule` (annotation never imports tournaments). That
definition, `private_q`, lives with the model, whose `Campaign.is_public()` the permission
vocabulary asks (evalhub.permissions.may_see); this module applies it. A private campaign is
never listed publicly (home page, lists, API) and serves items only to workers who arrive
through its crowd platform (MTurk naming one of its HITs, Prolific naming its study) or
through an invitation link, and to workers already holding one of its batches (they came
in one of those ways and are resuming in the same browser).

`is_public(campaign)`, `public_campaigns(queryset)` and `visible_campaigns(user)` (for
lists: public ones, the user's own, all for staff) are the one place this is decided;
`may_serve(campaign, arrival, worker)` is the one check the start page makes.
"""

from django.db.models import QuerySet
from django.utils.translation import gettext_lazy

from evalhub import permissions

from .models import Assignment, Campaign, Invitation, private_q


def public_campaigns(queryset: QuerySet | None = None, now=None) -> QuerySet:
    queryset = Campaign.objects.all() if queryset is None else queryset
    return queryset.exclude(private_q(now))


def visible_campaigns(user, queryset: QuerySet | None = None, now=None) -> QuerySet:
    """What a list (page or API) shows `user`: public campaigns, their own, all for staff."""
    queryset = Campaign.objects.all() if queryset is None else queryset
    return permissions.visible_to(queryset, user, public=~private_q(now))


def is_public(campaign: Campaign, now=None) -> bool:
    return campaign.is_public(now)


def arrives_through_platform(campaign: Campaign, arrival) -> bool:
    """The visit names this campaign's own platform posting: an MTurk HIT of one of its
    batches, or its Prolific study. A made-up participant id alone is not enough."""
    if arrival is None or arrival.provider != campaign.provider:
        return False
    extra = arrival.extra or {}
    if campaign.provider == Campaign.Provider.MTURK:
        hit_id = extra.get("hit_id") or ""
        return bool(hit_id) and campaign.batches.filter(platform_ref=hit_id).exists()
    if campaign.provider == Campaign.Provider.PROLIFIC:
        study_id = extra.get("study_id") or ""
        return bool(study_id) and study_id == campaign.platform_ref
    return False


def may_serve(campaign: Campaign, arrival, worker) -> bool:
    """Whether the start page may hand this visitor items of `campaign`."""
    if arrives_through_platform(campaign, arrival):
        return True
    if is_public(campaign):
        return True
    # Asked only of a private campaign: most start links are to public ones.
    if worker is not None and Invitation.objects.filter(campaign=campaign, worker=worker).exists():
        return True
    # Resuming: the browser's remembered worker, or a logged-in account, already holding
    # a batch here (a typed-in participant id is not proof of anything).
    resuming = arrival is None or arrival.external_id.startswith("user:")
    return (
        resuming
        and worker is not None
        and Assignment.objects.filter(campaign=campaign, worker=worker).exists()
    )


PRIVATE_REFUSAL = gettext_lazy(
    "This campaign is open only to participants invited to it or sent by its crowd "
    "platform. Use the link you were given."
)


def ways_in(campaign: Campaign, *, public: bool | None = None) -> list[str]:
    """How participants can reach this campaign, by the rules above (`may_serve` and the
    start page's): what its pages tell the people who share it, so that no page offers a
    link that answers 403. `public`: `is_public(campaign)`, when the caller has it."""
    ways = []
    if is_public(campaign) if public is None else public:
        ways.append("The start link: anybody signed in takes part as themselves.")
        if campaign.allow_worker_param:
            ways.append(
                "The start link with ?worker=<participant id>: any id you give out names "
                "a participant."
            )
    if campaign.provider in (Campaign.Provider.PROLIFIC, Campaign.Provider.MTURK):
        platform = campaign.get_provider_display()
        ways.append(
            f"Participants {platform} sends from its own posting of this campaign (created "
            f"at launch); a link with {platform}'s parameters typed by hand is not one."
        )
    ways.append(
        "Invitation links: each admits one person (the first browser to open it), public "
        "campaign or not."
    )
    return ways
