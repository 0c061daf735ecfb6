"""How far a campaign has come, computed in the database with a fixed number of queries.

- An item is done when it has `redundancy` judgments; the items counted are the task items
  shown to workers (gold copies and automatic items are not what the campaign measures).
- Judgments per hour divide a count by the time the campaign has been running: from its
  launch (or, for a campaign never launched through these pages, its first judgment) to
  its end (or now). The last-24-hours rate uses the part of the last 24 hours since then,
  so a campaign launched an hour ago is not shown as 24 times slower than it is.
- A judgment's time is the browser's measure when it sent one, else the time between the
  page being shown and the answer being stored (`Judgment.seconds`).
"""

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.db.models import Count, F, FloatField, Func, IntegerField, Min, OuterRef, Q, Subquery
from django.db.models.functions import Cast, Coalesce
from django.utils import timezone

from .models import Campaign, Item, Judgment

TASK = Item.Role.TASK
GOLD = Item.Role.GOLD


class ElapsedMs(Func):
    """Milliseconds from the first datetime expression to the second, as a float."""

    arity = 2
    output_field = FloatField()
    # PostgreSQL subtracts timestamps into an interval and reads its seconds.
    template = "(EXTRACT(EPOCH FROM (%(expressions)s)) * 1000)"

    def __init__(self, start, end, **extra):
        # Reversed so that the joined SQL reads "end - start".
        super().__init__(end, start, **extra)

    def as_sql(self, compiler, connection, **extra_context):
        return super().as_sql(compiler, connection, arg_joiner=" - ", **extra_context)

    def as_sqlite(self, compiler, connection, **extra_context):
        # SQLite stores datetimes as ISO text, which julianday() reads as fractional days.
        return super().as_sql(
            compiler,
            connection,
            template="((julianday(%(expressions)s)) * 86400000.0)",
            arg_joiner=") - julianday(",
            **extra_context,
        )


def judgment_ms():
    """A judgment's duration in milliseconds, as `Judgment.seconds` defines it."""
    return Coalesce(
        Cast("client_duration_ms", FloatField()),
        ElapsedMs("started_at", "submitted_at"),
        output_field=FloatField(),
    )


@dataclass(frozen=True)
class Composition:
    """What the campaign is made of, and what it costs when every slot is paid."""

    batches: int
    shown: int  # task items in batches
    gold_copies: int
    automatic: int  # judged without being shown
    training: int
    redundancy: int
    reward_per_batch: Decimal

    @property
    def slots(self) -> int:
        return self.batches * self.redundancy

    @property
    def cost(self) -> Decimal:
        return self.slots * self.reward_per_batch


@dataclass(frozen=True)
class Progress:
    items_done: int
    items_needed: int
    judgments: int
    judgments_needed: int  # every shown item, gold copies too, `redundancy` times
    judgments_last_24h: int
    per_hour_last_24h: float | None
    per_hour_overall: float | None
    median_seconds: float | None

    @property
    def percent_done(self) -> float:
        return 100 * self.items_done / self.items_needed if self.items_needed else 0.0


@dataclass(frozen=True)
class ItemShape:
    """A kind of item the campaign shows: its role and segment length, and one example."""

    role: str
    segment_length: int | None
    example_position: int
    count: int

    @property
    def role_label(self) -> str:
        return Item.Role(self.role).label


def composition(campaign: Campaign) -> Composition:
    counts = Item.objects.filter(campaign=campaign).aggregate(
        batches=Count("batch", distinct=True),
        shown=Count("pk", filter=Q(role=TASK, batch__isnull=False)),
        gold_copies=Count("pk", filter=Q(role=GOLD, batch__isnull=False)),
        automatic=Count("pk", filter=Q(auto_payload__isnull=False)),
        training=Count("pk", filter=Q(role=Item.Role.TRAINING)),
    )
    return Composition(
        **counts, redundancy=campaign.redundancy, reward_per_batch=campaign.reward_per_batch
    )


def progress(campaign: Campaign, now=None) -> Progress:
    now = now or timezone.now()
    since = now - timedelta(hours=24)
    shown = Item.objects.filter(campaign=campaign, batch__isnull=False)
    items = shown.aggregate(needed=Count("pk", filter=Q(role=TASK)), shown=Count("pk"))
    done = (
        shown.filter(role=TASK)
        .annotate(n=Count("judgments"))
        .filter(n__gte=campaign.redundancy)
        .count()
    )
    judgments = Judgment.objects.filter(campaign=campaign)
    counts = judgments.aggregate(
        total=Count("pk"),
        recent=Count("pk", filter=Q(submitted_at__gt=since)),
        first=Min("submitted_at"),
    )
    start = campaign.launched_at or counts["first"]
    end = campaign.finished_at or now
    recent_hours = _hours(max(since, start), now) if start else None
    return Progress(
        items_done=done,
        items_needed=items["needed"],
        judgments=counts["total"],
        judgments_needed=items["shown"] * campaign.redundancy,
        judgments_last_24h=counts["recent"],
        per_hour_last_24h=_rate(counts["recent"], recent_hours),
        per_hour_overall=_rate(counts["total"], _hours(start, end) if start else None),
        median_seconds=_median_seconds(judgments, counts["total"]),
    )


def _hours(start, end) -> float:
    return (end - start).total_seconds() / 3600


def _rate(count: int, hours: float | None) -> float | None:
    if not count or not hours or hours <= 0:
        return None
    return count / hours


def _median_seconds(judgments, n: int) -> float | None:
    """The median duration: the database sorts, and only the middle one or two rows travel."""
    if not n:
        return None
    middle = (
        judgments.annotate(ms=judgment_ms())
        .order_by("ms")
        .values_list("ms", flat=True)[(n - 1) // 2 : n // 2 + 1]
    )
    values = list(middle)
    return sum(values) / len(values) / 1000


def item_shapes(campaign: Campaign) -> list[ItemShape]:
    """Each shown combination of role and segment length, with its first item as example."""
    rows = (
        Item.objects.filter(campaign=campaign, auto_payload__isnull=True)
        .values("role", "segment_length")
        .annotate(example=Min("position"), count=Count("pk"))
        .order_by("example")
    )
    return [ItemShape(r["role"], r["segment_length"], r["example"], r["count"]) for r in rows]


def with_progress(campaigns):
    """Annotate a Campaign queryset with `n_judgments` and `n_shown` (items in batches)."""

    def count_of(queryset):
        counted = queryset.filter(campaign=OuterRef("pk")).order_by().values("campaign")
        return Coalesce(
            Subquery(counted.annotate(n=Count("pk")).values("n"), output_field=IntegerField()),
            0,
        )

    return campaigns.annotate(
        n_judgments=count_of(Judgment.objects.all()),
        n_shown=count_of(Item.objects.filter(batch__isnull=False)),
    ).annotate(n_needed=F("n_shown") * F("redundancy"))
