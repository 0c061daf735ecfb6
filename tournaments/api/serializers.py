"""Serializers of the tournaments API; the checks are the forms' (`spot_the_bot_errors`,
`ab_errors`)."""

from django.db import transaction
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from evalhub import limits
from evalhub.api.fields import VisibleSlugRelatedField
from evalhub.declared import bounds, help_text
from evalhub.models import Conversation, Submission, System

from ..forms import (
    AB_FIELDS,
    SPOT_THE_BOT_FIELDS,
    ab_errors,
    baseline_choices,
    spot_the_bot_errors,
    user_submissions,
)
from ..models import PartnerSet, Tournament
from ..spot_the_bot_campaign import include_conversations
from ..tournament_settings import ABSettings, SpotTheBotSettings


def declared_kwargs(*schemas) -> dict[str, dict]:
    """Serializer field options (min, max, help) of the scalar settings of `schemas`."""
    options = {}
    for schema in schemas:
        for name, info in schema.model_fields.items():
            low, high = bounds(info)
            if low is not None and high is not None:
                # One message naming the field and its range (the model field's own
                # range validators say the same, so they are left out here).
                message = f"{name} must be from {low} to {high}."
                options[name] = {
                    "min_value": low,
                    "max_value": high,
                    "help_text": help_text(schema, name),
                    "validators": [],
                    "error_messages": {"min_value": message, "max_value": message},
                }
    return options


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "description": "A partner set's slug (its latest version)."},
            {
                "type": "object",
                "properties": {"slug": {"type": "string"}, "version": {"type": "integer"}},
                "required": ["slug"],
            },
        ],
        "nullable": True,
    }
)
class PartnerSetField(VisibleSlugRelatedField):
    """A partner set the caller may see by slug (its latest version); read back as
    {"slug", "version"}."""

    def __init__(self, **kwargs):
        super().__init__(
            noun="partner set", slug_field="slug", queryset=PartnerSet.objects.all(), **kwargs
        )

    def to_representation(self, value):
        return {"slug": value.slug, "version": value.version}

    def to_internal_value(self, data):
        slug = data.get("slug") if isinstance(data, dict) else data
        if not isinstance(slug, str):
            self.fail("invalid")
        partner_set = self.get_queryset().filter(slug=slug).order_by("-version").first()
        if partner_set is None:
            self.fail("does_not_exist", value=slug)
        return partner_set


class TournamentSerializer(serializers.ModelSerializer):
    owner = serializers.SlugRelatedField(slug_field="username", read_only=True)
    systems = VisibleSlugRelatedField(
        noun="system",
        slug_field="slug",
        many=True,
        queryset=System.objects.all(),
        required=False,
    )
    baselines = VisibleSlugRelatedField(
        noun="baseline",
        visible=baseline_choices,
        slug_field="slug",
        many=True,
        queryset=System.objects.all(),
        required=False,
    )
    submission = VisibleSlugRelatedField(
        noun="submission",
        visible=user_submissions,
        slug_field="public_id",
        queryset=Submission.objects.all(),
        required=False,
        allow_null=True,
    )
    prompt_set = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    partner_set = PartnerSetField(required=False, allow_null=True)
    campaign = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    included_conversations = VisibleSlugRelatedField(
        noun="conversation",
        slug_field="external_id",
        many=True,
        queryset=Conversation.objects.all(),
        required=False,
        help_text="External ids of imported bot-bot conversations to judge besides the "
        "collected ones (Spot The Bot).",
    )
    segment_lengths = serializers.ListField(child=serializers.IntegerField(), required=False)
    features = serializers.ListField(child=serializers.CharField(), required=False)

    class Meta:
        model = Tournament
        fields = [
            "slug",
            "name",
            "kind",
            "description",
            "owner",
            "status",
            "published",
            "campaign",
            "created",
            *SPOT_THE_BOT_FIELDS,
            "included_conversations",
            *AB_FIELDS,
            "prompt_set",
        ]
        read_only_fields = ["owner", "status", "campaign", "created"]
        # Ranges and help of the declared settings, so the OpenAPI schema shows them too.
        extra_kwargs = declared_kwargs(SpotTheBotSettings, ABSettings)

    def validate(self, data):
        unknown = sorted(set(self.initial_data) - set(self.fields)) if self.initial_data else []
        if unknown:
            allowed = ", ".join(n for n, f in self.fields.items() if not f.read_only)
            raise serializers.ValidationError(
                {name: [f"{name!r} is an unknown field; allowed: {allowed}."] for name in unknown}
            )
        kind = data.get("kind")
        if kind == Tournament.Kind.SPOT_THE_BOT:
            defaults = Tournament()
            errors = spot_the_bot_errors(
                systems=data.get("systems"),
                schedule=data.get("schedule", defaults.schedule),
                partner_set=data.get("partner_set"),
                segment_lengths=data.get("segment_lengths", defaults.segment_lengths),
                features=data.get("features", defaults.features),
                settings=data,
            )
            if not data.get("domain"):
                errors["domain"] = "Give the domain of the conversations."
        else:
            errors = ab_errors(
                submission=data.get("submission"), baselines=data.get("baselines"), settings=data
            )
            if data.get("submission") is None:
                errors["submission"] = "Give the id of a submission of one of your systems."
        if errors:
            raise serializers.ValidationError(errors)
        return data

    @transaction.atomic
    def create(self, validated_data):
        kind = validated_data["kind"]
        included = validated_data.pop("included_conversations", [])
        systems = validated_data.pop("systems", [])
        baselines = validated_data.pop("baselines", [])
        # Settings of the other kind would only mislead whoever reads the tournament.
        if kind == Tournament.Kind.AB:
            submission = validated_data["submission"]
            validated_data["prompt_set"] = submission.prompt_set
            validated_data.pop("partner_set", None)
            systems = [submission.system, *baselines]
        else:
            validated_data.pop("submission", None)
            baselines = []
        tournament = Tournament.objects.create(**validated_data)
        tournament.systems.set(systems)
        tournament.baselines.set(baselines)
        if included and kind == Tournament.Kind.SPOT_THE_BOT:
            # Refused (not between two systems): the whole create rolls back.
            include_conversations(tournament, [c.external_id for c in included])
        return tournament


class PartnerSetSerializer(serializers.Serializer):
    slug = serializers.SlugField(max_length=80)
    version = serializers.IntegerField(read_only=True)
    name = serializers.CharField(max_length=limits.NAME_CHARS)
    description = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=limits.DESCRIPTION_CHARS
    )
    systems = serializers.ListField(
        child=serializers.SlugField(), help_text="Slugs of the partner systems."
    )

    def to_representation(self, instance):
        return {
            "slug": instance.slug,
            "version": instance.version,
            "name": instance.name,
            "description": instance.description,
            "systems": sorted(s.slug for s in instance.systems.all()),
        }


class SeedDomainSerializer(serializers.Serializer):
    domain = serializers.CharField()
    conversations = serializers.IntegerField(
        help_text="Human-human conversations with a first exchange to seed dialogues from."
    )


class TournamentProgressSerializer(serializers.Serializer):
    status = serializers.CharField()
    collection = serializers.DictField(child=serializers.IntegerField())
    campaign = serializers.DictField(allow_null=True)


class ActionSerializer(serializers.Serializer):
    message = serializers.CharField()
    status = serializers.CharField()
    campaign = serializers.CharField(allow_null=True)
