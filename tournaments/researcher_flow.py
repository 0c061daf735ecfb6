"""The steps a researcher takes to run a tournament without the admin, as small services
the pages and the API share: which domains can seed conversations, creating a partner
set, and asking for the campaign's launch.

- `seed_domains(user)`: the domains that have human-human conversations with a first exchange
  to seed collected dialogues from (`collection.seed_pool`'s rule), with their counts.
- `create_partner_set(...)`: a new partner set (version 1) of systems the user may see.
  Partner sets are shared and versioned; editing one is `tournaments.models`' concern.
- `request_tournament_launch(tournament, user)`: launch the campaign, or, where launches
  need staff approval (`annotation.campaigns.request_launch`, the crowd launch-approval
  work), file the request and return it.
"""

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count

from annotation import campaigns
from annotation.campaigns import change_status
from evalhub import limits
from evalhub.errors import UserInputError
from evalhub.models import Conversation, System
from evalhub.uniqueness import SlugTaken, unique_slug

from .collection import SEED_TURNS
from .models import PartnerSet, Tournament


def seed_domains(user) -> list[dict]:
    """[{"domain", "conversations"}] for every domain with at least one human-human
    conversation of `SEED_TURNS` turns or more that `user`'s tournaments may draw on
    (staff-curated, or `user`'s own uploads), by name (one query)."""
    rows = (
        Conversation.objects.usable_by(user)
        .filter(source=Conversation.Source.HUMAN_HUMAN)
        .exclude(domain="")
        .annotate(n_turns=Count("turns"))
        .filter(n_turns__gte=SEED_TURNS)
        .values_list("domain", flat=True)
    )
    counts: dict[str, int] = {}
    for domain in rows:
        counts[domain] = counts.get(domain, 0) + 1
    return [{"domain": d, "conversations": counts[d]} for d in sorted(counts)]


class PartnerSetInvalid(UserInputError, ValueError):
    """A partner set that cannot be created, naming the field."""


# A partner set needs at least this many systems: bipartite-play pairs each target with
# every partner, and one partner makes every target's score that partner's taste.
MIN_PARTNERS = 2
MAX_PARTNERS = 50


def create_partner_set(
    *, user, name: str, slug: str, systems: list[str], description: str = ""
) -> PartnerSet:
    """Partner set `slug` (version 1) of the systems with these slugs, all of which `user`
    may see. Raises PartnerSetInvalid naming the field (a taken slug, unknown systems)."""
    name, slug = (name or "").strip(), (slug or "").strip()
    if not name:
        raise PartnerSetInvalid("A partner set needs a name.", field="name")
    for field, text, limit in (
        ("name", name, limits.NAME_CHARS),
        ("description", description or "", limits.DESCRIPTION_CHARS),
    ):
        if len(text) > limit:
            raise PartnerSetInvalid(
                f"At most {limit:,} characters ({len(text):,} given).", field=field
            )
    wanted = sorted(set(systems or []))
    if not MIN_PARTNERS <= len(wanted) <= MAX_PARTNERS:
        raise PartnerSetInvalid(
            f"Choose from {MIN_PARTNERS} to {MAX_PARTNERS} partner systems, not {len(wanted)}.",
            field="systems",
        )
    found = list(System.objects.visible_to(user).filter(slug__in=wanted))
    missing = sorted(set(wanted) - {s.slug for s in found})
    if missing:
        raise PartnerSetInvalid(f"No such system: {', '.join(missing)}.", field="systems")
    if PartnerSet.objects.filter(slug=slug).exists():
        raise PartnerSetInvalid(
            f"A partner set with the slug '{slug}' already exists; choose another.", field="slug"
        )
    try:
        with unique_slug(PartnerSet, slug):
            partner_set = PartnerSet.objects.create(
                slug=slug, name=name, description=description.strip(), version=1
            )
            partner_set.systems.set(found)
    except SlugTaken as taken:
        raise PartnerSetInvalid(str(taken), field="slug") from None
    return partner_set


@dataclass(frozen=True)
class LaunchOutcome:
    """`launched`: the campaign is live; otherwise `request` waits for staff approval."""

    launched: bool
    request: object | None = None


def _launch(tournament: Tournament, user):
    platform_launch = getattr(campaigns, "launch_campaign", None)
    if platform_launch is not None:
        # The crowd launch machinery runs the provider's side (HITs, studies) outside any
        # transaction, so that each one created is recorded even if a later one fails.
        campaign = platform_launch(tournament.campaign, actor=user)
        Tournament.objects.filter(pk=tournament.pk).update(status=Tournament.Status.ANNOTATING)
        return campaign
    with transaction.atomic():
        campaign = change_status(tournament.campaign, "launch")
        Tournament.objects.filter(pk=tournament.pk).update(status=Tournament.Status.ANNOTATING)
    return campaign


def request_tournament_launch(tournament: Tournament, user) -> LaunchOutcome:
    """Launch the tournament's campaign for `user` (its owner or staff), or ask staff.

    The launch-approval hook: where `annotation.campaigns` has `request_launch` and
    `may_launch` (crowd launch approval), a user who may not launch the campaign himself
    (it pays crowdworkers and is not approved) files a launch request instead. Without
    that machinery the owner launches directly, as before."""
    campaign = tournament.campaign
    if campaign is None:
        raise campaigns.TransitionRefused("Generate the campaign before launching it.")
    may_launch = getattr(campaigns, "may_launch", None)
    request_launch = getattr(campaigns, "request_launch", None)
    if may_launch is not None and request_launch is not None and not may_launch(user, campaign):
        return LaunchOutcome(launched=False, request=request_launch(campaign, user))
    _launch(tournament, user)
    return LaunchOutcome(launched=True)
