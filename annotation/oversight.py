"""What staff watch on a running campaign: judgments over time, money spent against the
budget, and when it should finish at the current pace.

- Spent: every submitted or approved assignment is paid `reward_per_batch` (rejected ones
  are not), plus the bonuses the crowd ledger recorded as done.
- Expected finish: the judgments still needed divided by the rate of the last 24 hours (or,
  with none in that window, the overall rate), from now. None when nothing is being judged
  or nothing is left.
- The plot: cumulative judgments at up to `POINTS` evenly spaced times from the first
  judgment to now (or the campaign's finish), one database query.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from xml.sax.saxutils import escape

from django.db.models import Count
from django.db.models.functions import TruncHour
from django.utils import timezone

from .costs import amount_paid
from .models import Assignment, Campaign, Item, Judgment
from .progress import Progress, progress

POINTS = 60
WIDTH, HEIGHT, PAD = 640, 220, 40

PAID = (Assignment.Status.SUBMITTED, Assignment.Status.APPROVED)


@dataclass(frozen=True)
class Oversight:
    progress: Progress
    spent: Decimal
    budget: Decimal | None
    remaining_judgments: int
    expected_finish: datetime | None
    plot_svg: str

    @property
    def budget_used_percent(self) -> float | None:
        if not self.budget:
            return None
        return float(100 * self.spent / self.budget)

    @property
    def over_budget(self) -> bool:
        return self.budget is not None and self.spent > self.budget


def spent(campaign: Campaign) -> Decimal:
    """What the campaign has paid: one definition, the cost panel's (annotation/costs.py)."""
    return amount_paid(campaign)


def expected_finish(done: Progress, now: datetime) -> datetime | None:
    remaining = max(done.judgments_needed - done.judgments, 0)
    rate = done.per_hour_last_24h or done.per_hour_overall
    if not remaining or not rate:
        return None
    return now + timedelta(hours=remaining / rate)


def hourly_counts(campaign: Campaign) -> list[tuple[datetime, int]]:
    rows = (
        Judgment.objects.filter(campaign=campaign)
        .annotate(hour=TruncHour("submitted_at"))
        .values("hour")
        .annotate(n=Count("pk"))
        .order_by("hour")
    )
    return [(r["hour"], r["n"]) for r in rows]


def judgments_plot(counts: list[tuple[datetime, int]], needed: int, end: datetime) -> str:
    """An SVG line of cumulative judgments per hour, with the target as a dashed line."""
    if not counts:
        return ""
    start = counts[0][0]
    span = max((end - start).total_seconds(), 3600.0)
    top = max(needed, sum(n for _, n in counts), 1)

    def x(when):
        return PAD + (WIDTH - 2 * PAD) * (when - start).total_seconds() / span

    def y(value):
        return HEIGHT - PAD - (HEIGHT - 2 * PAD) * value / top

    points, total = [f"{x(start):.1f},{y(0):.1f}"], 0
    for hour, n in counts:
        total += n
        at = min(hour + timedelta(hours=1), end)  # the hour's judgments are in by its end
        points.append(f"{x(at):.1f},{y(total):.1f}")
    label = escape(f"{total} of {needed} judgments")
    first = escape(timezone.localtime(start).strftime("%Y-%m-%d %H:%M"))
    last = escape(timezone.localtime(end).strftime("%Y-%m-%d %H:%M"))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-label="Judgments over time: {label}" class="judgments-plot">'
        f"<title>Judgments over time: {label}</title>"
        f'<line x1="{PAD}" y1="{y(needed):.1f}" x2="{WIDTH - PAD}" y2="{y(needed):.1f}" '
        f'stroke="#999" stroke-dasharray="4 4"/>'
        f'<text x="{WIDTH - PAD}" y="{y(needed) - 4:.1f}" text-anchor="end" '
        f'font-size="11" fill="#555">target {needed}</text>'
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" stroke="#333"/>'
        f'<line x1="{PAD}" y1="{PAD / 2}" x2="{PAD}" y2="{HEIGHT - PAD}" stroke="#333"/>'
        f'<polyline points="{" ".join(points)}" fill="none" stroke="#1f5fa8" stroke-width="2"/>'
        f'<text x="{PAD}" y="{HEIGHT - PAD + 16}" font-size="11" fill="#555">{first}</text>'
        f'<text x="{WIDTH - PAD}" y="{HEIGHT - PAD + 16}" text-anchor="end" font-size="11" '
        f'fill="#555">{last}</text>'
        f'<text x="{PAD - 4}" y="{y(total):.1f}" text-anchor="end" font-size="11" '
        f'fill="#1f5fa8">{total}</text>'
        "</svg>"
    )


def oversight(
    campaign: Campaign, now: datetime | None = None, *, done=None, paid=None
) -> Oversight:
    """`done` (the campaign's `progress`) and `paid` (what it spent), when the caller has
    them already."""
    now = now or timezone.now()
    done = done or progress(campaign, now)
    end = campaign.finished_at or now
    return Oversight(
        progress=done,
        spent=spent(campaign) if paid is None else paid,
        budget=campaign.budget,
        remaining_judgments=max(done.judgments_needed - done.judgments, 0),
        expected_finish=None if campaign.finished_at else expected_finish(done, now),
        plot_svg=judgments_plot(hourly_counts(campaign), done.judgments_needed, end),
    )


# What each state change does, said on its confirmation page before it happens.
CONSEQUENCES = {
    "launch": "Workers can start at once: the start link hands out batches{paid}.",
    "pause": "No new batch is handed out; workers already in a batch may finish it.",
    "finish": "The campaign closes for good: no new batch is handed out, and it cannot be "
    "launched again.",
}
VERBS = {"launch": "Launch", "pause": "Pause", "finish": "Finish"}


def confirm_context(campaign: Campaign, action: str) -> dict:
    """What the confirmation page of a launch, pause or finish shows."""
    verb = "Resume" if action == "launch" and campaign.launched_at else VERBS[action]
    paid = ""
    if campaign.reward_per_batch:
        paid = f", each paid {campaign.reward_per_batch:.2f}"
    return {
        "campaign": campaign,
        "action": action,
        "verb": verb,
        "consequence": CONSEQUENCES[action].format(paid=paid),
        "oversight": oversight(campaign) if action == "launch" else None,
    }


@dataclass(frozen=True)
class PreviewNav:
    """Where the staff preview of one item sits among every item workers can be shown."""

    position: int
    index: int  # 1-based, among the previewable items
    count: int
    previous: int | None
    next: int | None


def preview_nav(campaign: Campaign, item) -> PreviewNav:
    """Previous and next previewable item (tasks, gold and training; never the automatic
    ones), by position."""
    items = Item.objects.filter(campaign=campaign, auto_payload__isnull=True)
    before = items.filter(position__lt=item.position)
    previous = before.order_by("-position").values_list("position", flat=True).first()
    following = items.filter(position__gt=item.position).order_by("position")
    return PreviewNav(
        position=item.position,
        index=before.count() + 1,
        count=items.count(),
        previous=previous,
        next=following.values_list("position", flat=True).first(),
    )
