"""Time and money a campaign has taken so far, and what reaching its target would cost.

The figures come from :mod:`evalstats.cost` (pure statistics) fed with this campaign's
judgments. What counts as paid: the reward of every batch submitted or approved (a rejected
batch is not paid) plus the bonuses the platform ledger records as done (fees included).
Judgments recorded without being shown (automatic items) took nobody's time and are left
out. Items that are not about one conversation (A/B responses) count as their own
"conversation" in the per-conversation times.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from django.db.models import Count, OuterRef, Subquery, Sum

from .models import Assignment, Campaign, CrowdAction, Item, Judgment
from .progress import judgment_ms

# evalstats.cost is imported where the figures are computed, not with this module: the
# campaign pages that import it load at app start-up, and it imports scipy.stats (~0.5 s).
if TYPE_CHECKING:
    from evalstats.cost import CostProjection, CostSummary, TimedJudgment

# Interval half-widths (on a proportion, worst case p = 0.5) the panel prices.
HALF_WIDTHS = (0.10, 0.05)
PAID = (Assignment.Status.SUBMITTED, Assignment.Status.APPROVED)


@dataclass(frozen=True)
class WidthCost:
    half_width: float
    judgments: int
    cost: float


@dataclass(frozen=True)
class CampaignCosts:
    summary: CostSummary
    rewards: Decimal
    bonuses: Decimal
    target_judgments: int
    projection: CostProjection
    widths: tuple[WidthCost, ...]


def timed_judgments(campaign: Campaign) -> list[TimedJudgment]:
    from evalstats.cost import TimedJudgment

    rows = (
        Judgment.objects.filter(campaign=campaign, item__auto_payload__isnull=True)
        .annotate(ms=judgment_ms())
        .values_list("item_id", "item__conversation_id", "ms")
    )
    # A clock set back between start and submit must not make time negative.
    return [
        TimedJudgment(("conversation", conversation) if conversation else ("item", item),
                      max(0.0, ms / 1000))
        for item, conversation, ms in rows
    ]  # fmt: skip


def _scalar(queryset, **aggregate):
    """A one-value subquery, so that the panel's figures cost one query."""
    return Subquery(queryset.order_by().values("campaign").annotate(**aggregate).values("value"))


def campaign_figures(campaign: Campaign) -> dict:
    """Paid batches, done bonuses and shown items, in one query."""
    same = OuterRef("pk")
    return (
        Campaign.objects.filter(pk=campaign.pk)
        .annotate(
            paid_batches=_scalar(
                Assignment.objects.filter(campaign=same, status__in=PAID), value=Count("pk")
            ),
            bonuses=_scalar(
                CrowdAction.objects.filter(
                    campaign=same, action="bonus", state=CrowdAction.State.DONE
                ),
                value=Sum("amount"),
            ),
            shown=_scalar(
                Item.objects.filter(campaign=same, batch__isnull=False), value=Count("pk")
            ),
        )
        .values("paid_batches", "bonuses", "shown")
        .get()
    )


def amount_paid(campaign: Campaign, figures: dict | None = None) -> Decimal:
    """Rewards of the batches submitted or approved, plus the bonuses paid; `figures`:
    ``campaign_figures(campaign)`` when the caller has them already."""
    figures = figures or campaign_figures(campaign)
    return (figures["paid_batches"] or 0) * campaign.reward_per_batch + (
        figures["bonuses"] or Decimal("0")
    )


def campaign_costs(campaign: Campaign, figures: dict | None = None) -> CampaignCosts | None:
    """The cost-and-time figures of ``campaign``; None before its first judgment.

    The target is every shown item (gold copies too) judged ``redundancy`` times, as the
    progress figures count it.
    """
    from evalstats.cost import cost_summary, judgments_for_proportion, projected_cost

    judgments = timed_judgments(campaign)
    if not judgments:
        return None
    figures = figures or campaign_figures(campaign)
    rewards = (figures["paid_batches"] or 0) * campaign.reward_per_batch
    bonuses = figures["bonuses"] or Decimal("0")
    target_judgments = (figures["shown"] or 0) * campaign.redundancy
    summary = cost_summary(judgments, amount_paid=float(rewards + bonuses))
    widths = []
    for half_width in HALF_WIDTHS:
        n = judgments_for_proportion(half_width)
        widths.append(WidthCost(half_width, n, n * summary.cost_per_judgment))
    return CampaignCosts(
        summary=summary,
        rewards=rewards,
        bonuses=bonuses,
        target_judgments=target_judgments,
        projection=projected_cost(summary, target_judgments),
        widths=tuple(widths),
    )


# Pairing (issue 27): the price of one judgment, for the budget planner ------------------------


def fee_per_place(provider: str, reward: Decimal, redundancy: int) -> Decimal:
    """The platform's fee on one paid place (one batch's reward), as its estimate counts it:
    MTurk's commission (annotation/crowd/mturk.py), Prolific's service fee
    (EVALHUB_PROLIFIC_SERVICE_FEE), nothing on the shareable link."""
    from django.conf import settings

    from .crowd.base import money

    if provider == Campaign.Provider.MTURK:
        from .crowd.mturk import commission

        return commission(money(reward), redundancy)
    if provider == Campaign.Provider.PROLIFIC:
        return money(money(reward) * Decimal(str(settings.EVALHUB_PROLIFIC_SERVICE_FEE)))
    return Decimal("0.00")


def price_per_judgment(
    provider: str, reward_per_batch: Decimal, batch_size: int, redundancy: int
) -> Decimal:
    """What one judgment costs with the platform's fee: a batch's reward and fee over the
    judgments it holds."""
    reward = Decimal(reward_per_batch)
    return (reward + fee_per_place(provider, reward, redundancy)) / max(batch_size, 1)
