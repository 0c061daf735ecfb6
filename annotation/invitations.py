"""Single-use invitation links: a campaign's owner or staff create N, hand them out, and
each admits one person. The first browser to open a link becomes its worker; afterwards
the link resumes that worker's work in that browser session only, so a forwarded or
leaked link admits nobody else."""

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext

from evalhub.errors import UserInputError

from .entry import Refusal
from .models import Campaign, Invitation, Worker

MAX_PER_REQUEST = 1000


def create_invitations(campaign: Campaign, count: int, user=None) -> list[Invitation]:
    if not 1 <= count <= MAX_PER_REQUEST:
        raise UserInputError(
            f"Create between 1 and {MAX_PER_REQUEST} invitation links at a time.", field="count"
        )
    creator = user if user is not None and user.is_authenticated else None
    with transaction.atomic():
        return Invitation.objects.bulk_create(
            Invitation(campaign=campaign, created_by=creator) for _ in range(count)
        )


def redeem(campaign: Campaign, token: str, known: Worker | None):
    """(worker, None) for the invitation's worker, or (None, Refusal)."""
    invitation = Invitation.objects.filter(campaign=campaign, token=token[:64]).first()
    if invitation is None:
        return None, Refusal(gettext("This invitation link is not valid for this campaign."), 404)
    if invitation.worker_id is not None:
        if known is not None and known.pk == invitation.worker_id:
            return known, None
        return None, Refusal(
            gettext(
                "This invitation link has already been used. It opens again only in the "
                "browser where it was first used."
            )
        )
    with transaction.atomic():
        worker, _ = Worker.objects.get_or_create(
            provider="local", external_id=f"invite:{invitation.pk}"
        )
        # Two first visits at once: the conditional update lets exactly one through.
        claimed = Invitation.objects.filter(pk=invitation.pk, worker__isnull=True).update(
            worker=worker, used_at=timezone.now()
        )
    if not claimed:
        return None, Refusal(gettext("This invitation link has already been used."))
    return worker, None


def invitation_lines(campaign: Campaign, base_url: str) -> list[str]:
    """The campaign's unused links, one per line, for handing out."""
    return [
        base_url + invitation.get_absolute_url()
        for invitation in campaign.invitations.filter(worker__isnull=True)
    ]


def invitation_counts(campaign: Campaign) -> dict[str, int]:
    """How many of the campaign's links are still unused and how many were used (one query)."""
    counts = campaign.invitations.aggregate(
        invitations_unused=Count("pk", filter=Q(worker__isnull=True)),
        invitations_used=Count("pk", filter=Q(worker__isnull=False)),
    )
    return {name: value or 0 for name, value in counts.items()}
