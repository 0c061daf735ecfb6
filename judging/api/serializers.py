"""Serializers of the judges API; the checks are the pages' (forms.py, runs.py,
rubric_versions.py), so a page and the API refuse the same input with the same message."""

from rest_framework import serializers

from endpoints.api.views import ModelEndpointSerializer
from evalhub import limits
from evalhub.api.fields import VisibleSlugRelatedField
from evalhub.declared import bounds, help_text

from ..forms import RESERVED_SLUGS, campaigns_for
from ..judges import register
from ..models import AutomaticJudgment, Judge, JudgeRun, Rubric
from ..rubric_versions import is_used
from ..run_settings import JudgeRunSettings


def _range(name: str) -> dict:
    low, high = bounds(JudgeRunSettings.model_fields[name])
    message = f"{name} must be from {low} to {high}."
    return {
        "min_value": low,
        "max_value": high,
        "help_text": help_text(JudgeRunSettings, name),
        "error_messages": {"min_value": message, "max_value": message},
    }


class JudgeSerializer(serializers.ModelSerializer):
    owner = serializers.SlugRelatedField(slug_field="username", read_only=True)
    endpoint = ModelEndpointSerializer(
        help_text="The judge's own OpenAI-compatible endpoint (no system: a judge is no "
        "chatbot). Its `auth_token` is write-only; it is changed at /api/endpoints/<id>/."
    )
    model_name = serializers.CharField(source="endpoint.model_name", read_only=True)

    class Meta:
        model = Judge
        fields = ["slug", "name", "owner", "endpoint", "model_name", "created"]
        read_only_fields = ["created"]

    def validate_slug(self, slug):
        if slug in RESERVED_SLUGS:
            raise serializers.ValidationError(f"'{slug}' names a page of the judges.")
        return slug

    def create(self, validated_data):
        return register(
            owner=validated_data["owner"],
            slug=validated_data["slug"],
            name=validated_data["name"],
            endpoint=validated_data["endpoint"],
        )


class RubricSerializer(serializers.ModelSerializer):
    # Null for the rubrics EvalHub ships (nobody wrote them).
    owner = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    used = serializers.SerializerMethodField(help_text="A run used it: it never changes again.")

    class Meta:
        model = Rubric
        fields = ["id", "task_kind", "name", "version", "instructions", "owner", "used", "created"]
        read_only_fields = ["version", "created"]
        # A name already used gets its next version (rubric_versions.create), not an error.
        validators: list = []

    def get_used(self, rubric) -> bool:
        return is_used(rubric)


class RubricReviseSerializer(serializers.Serializer):
    instructions = serializers.CharField(max_length=limits.INSTRUCTIONS_CHARS)


class RunSerializer(serializers.ModelSerializer):
    # Another user's judges and campaigns are not found, as on the pages.
    judge = VisibleSlugRelatedField(
        noun="judge",
        visible=Judge.objects.managed_by,
        slug_field="slug",
        queryset=Judge.objects.all(),
    )
    campaign = VisibleSlugRelatedField(
        noun="campaign",
        visible=campaigns_for,
        slug_field="slug",
        queryset=JudgeRun._meta.get_field("campaign").related_model.objects.all(),
        required=False,
        allow_null=True,
        default=None,
    )
    # Arenas the user may see: a public arena of somebody else is refused by runs.start
    # with the reason; a private one is "No arena" as if it did not exist.
    arena = VisibleSlugRelatedField(
        noun="arena",
        slug_field="slug",
        queryset=JudgeRun._meta.get_field("arena").related_model.objects.all(),
        required=False,
        allow_null=True,
        default=None,
        help_text="Instead of a campaign: judge this arena's voted battles (an arena rubric).",
    )
    rubric = serializers.PrimaryKeyRelatedField(queryset=Rubric.objects.all())
    concurrency = serializers.IntegerField(default=2, **_range("concurrency"))
    max_attempts = serializers.IntegerField(default=3, **_range("max_attempts"))
    percent = serializers.IntegerField(read_only=True)

    class Meta:
        model = JudgeRun
        fields = [
            "id",
            "judge",
            "rubric",
            "campaign",
            "arena",
            "status",
            "concurrency",
            "max_attempts",
            "items_total",
            "items_done",
            "items_failed",
            "items_skipped",
            "percent",
            "prompt_tokens",
            "completion_tokens",
            "created",
            "started_at",
            "finished_at",
            "last_error",
        ]
        read_only_fields = [
            "status",
            "items_total",
            "items_done",
            "items_failed",
            "items_skipped",
            "prompt_tokens",
            "completion_tokens",
            "created",
            "started_at",
            "finished_at",
            "last_error",
        ]


class JudgeRunProgressSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=JudgeRun.Status.choices)
    status_display = serializers.CharField()
    items_total = serializers.IntegerField()
    items_done = serializers.IntegerField()
    items_failed = serializers.IntegerField()
    items_skipped = serializers.IntegerField(
        help_text="Arena battles with nothing to judge (no conversation text)."
    )
    percent = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    requests_today = serializers.IntegerField()
    daily_budget = serializers.IntegerField()
    last_error = serializers.CharField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class AutomaticJudgmentSerializer(serializers.ModelSerializer):
    # A campaign run's judgments name the item; an arena run's the battle.
    item = serializers.IntegerField(source="item.position", read_only=True, allow_null=True)
    item_id = serializers.IntegerField(read_only=True, allow_null=True)
    battle = serializers.UUIDField(source="battle.public_id", read_only=True, allow_null=True)
    automatic = serializers.BooleanField(read_only=True, default=True)

    class Meta:
        model = AutomaticJudgment
        fields = [
            "item",
            "item_id",
            "battle",
            "automatic",
            "status",
            "payload",
            "raw_text",
            "error",
            "attempts",
            "output_path",
            "parse_failures",
            "prompt_tokens",
            "completion_tokens",
            "created",
        ]
        read_only_fields = fields
