"""django-filter sets of the campaign API: `?status=live`, `?campaign=<slug>`..."""

from datetime import UTC

import django_filters
from django import forms

from ..models import Campaign, Item, Judgment


class UTCDateTimeField(django_filters.fields.IsoDateTimeField):
    """An ISO 8601 time, compared in UTC: PostgreSQL refuses offsets beyond ±15:59 that
    Python accepts, and a time near year 1 or 9999 may not fit once moved to UTC."""

    def to_python(self, value):
        parsed = super().to_python(value)
        try:
            return parsed.astimezone(UTC) if parsed is not None and parsed.tzinfo else parsed
        except OverflowError:
            raise forms.ValidationError("This time is out of range.") from None


class UTCDateTimeFilter(django_filters.IsoDateTimeFilter):
    field_class = UTCDateTimeField


class CampaignFilter(django_filters.FilterSet):
    class Meta:
        model = Campaign
        fields = ["status", "task_kind", "provider"]


class ItemFilter(django_filters.FilterSet):
    batch = django_filters.NumberFilter(field_name="batch__position")

    class Meta:
        model = Item
        fields = ["role", "batch"]


class JudgmentFilter(django_filters.FilterSet):
    campaign = django_filters.CharFilter(field_name="campaign__slug", help_text="Campaign slug.")
    worker = django_filters.UUIDFilter(field_name="worker__public_id")
    item = django_filters.NumberFilter(field_name="item__position")
    submitted_after = UTCDateTimeFilter(field_name="submitted_at", lookup_expr="gte")
    submitted_before = UTCDateTimeFilter(field_name="submitted_at", lookup_expr="lt")

    class Meta:
        model = Judgment
        fields = ["campaign", "worker", "item", "gold_correct"]
