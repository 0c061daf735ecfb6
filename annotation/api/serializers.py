"""Serializers of the campaign API: what a campaign, an item, a judgment and a worker's
figures look like, and what creating a campaign takes.

Creating a campaign is checked by the staff page's own form (`CampaignForm`): the same
settings ranges (`CampaignSettings`), task-config schema (the kind's `config_schema`), slug
rule and item-source rules, so the page and the API cannot drift apart.
"""

import json

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from evalhub import limits
from evalhub.slugs import SLUG_HELP
from evalhub.text import find_nul, nul_refused

from ..campaign_settings import CampaignSettings
from ..forms import CampaignForm
from ..models import Campaign, Item, Judgment


def _help(name: str) -> str:
    return CampaignSettings.model_fields[name].description or ""


class CampaignSerializer(serializers.ModelSerializer):
    owner = serializers.SlugRelatedField(slug_field="username", read_only=True)
    judgments = serializers.IntegerField(source="n_judgments", read_only=True)
    judgments_needed = serializers.IntegerField(source="n_needed", read_only=True)
    start_url = serializers.CharField(read_only=True, help_text="The shareable worker link.")

    class Meta:
        model = Campaign
        fields = [
            "slug",
            "title",
            "task_kind",
            "status",
            "provider",
            "redundancy",
            "batch_size",
            "reward_per_batch",
            "budget",
            "max_batches_per_worker",
            "time_limit_minutes",
            "requires_training",
            "training_threshold",
            "language",
            "follow_browser",
            "owner",
            "created",
            "launched_at",
            "finished_at",
            "judgments",
            "judgments_needed",
            "start_url",
        ]
        read_only_fields = fields


class CampaignDetailSerializer(CampaignSerializer):
    class Meta(CampaignSerializer.Meta):
        fields = [*CampaignSerializer.Meta.fields, "instructions", "task_config"]
        read_only_fields = fields


@extend_schema_field({"type": "object", "additionalProperties": True})
class TaskConfigField(serializers.JSONField):
    """A JSON object, given as an object (JSON body) or as JSON text (multipart form). The
    text's "\\u0000" escapes were no NUL to the parser that read the form, so a NUL in the
    decoded object is refused here, as the parsers refuse one in a body."""

    def to_internal_value(self, data):
        if isinstance(data, str):
            try:
                data = json.loads(data or "{}")
            except json.JSONDecodeError as error:
                raise serializers.ValidationError(f"Not valid JSON: {error.msg}.") from None
            where = find_nul(data)
            if where is not None:
                raise serializers.ValidationError(nul_refused(where))
        if not isinstance(data, dict):
            raise serializers.ValidationError('The task config must be a JSON object {"key": v}.')
        return data


class CampaignCreateSerializer(serializers.Serializer):
    """A campaign from a prompt set and systems (A/B: `prompt_set`, `system`, `baselines`)
    or from uploaded conversations (`conversations`, optionally `gold_items`; multipart)."""

    task_kind = serializers.ChoiceField(choices=[])
    title = serializers.CharField(max_length=limits.NAME_CHARS)
    slug = serializers.CharField(
        max_length=80,
        required=False,
        allow_blank=True,
        help_text=SLUG_HELP + " Blank: from the title.",
    )
    instructions = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=limits.INSTRUCTIONS_CHARS
    )
    task_config = TaskConfigField(required=False, default=dict)
    redundancy = serializers.IntegerField(required=False, help_text=_help("redundancy"))
    batch_size = serializers.IntegerField(required=False, help_text=_help("batch_size"))
    reward_per_batch = serializers.DecimalField(
        max_digits=8, decimal_places=2, required=False, help_text=_help("reward_per_batch")
    )
    budget = serializers.DecimalField(
        max_digits=10,
        decimal_places=2,
        required=False,
        allow_null=True,
        help_text="What the campaign may spend in all; left out: no budget.",
    )
    max_batches_per_worker = serializers.IntegerField(
        required=False, help_text=_help("max_batches_per_worker")
    )
    time_limit_minutes = serializers.IntegerField(
        required=False, help_text=_help("time_limit_minutes")
    )
    gold_per_batch = serializers.IntegerField(required=False, help_text=_help("gold_per_batch"))
    training_threshold = serializers.IntegerField(
        required=False, allow_null=True, help_text=_help("training_threshold")
    )
    requires_training = serializers.BooleanField(required=False, default=False)
    provider = serializers.ChoiceField(choices=Campaign.Provider.choices, required=False)
    language = serializers.ChoiceField(
        choices=settings.LANGUAGES, required=False, help_text="The worker pages' language."
    )
    follow_browser = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Worker pages in the browser's language where the site has it.",
    )
    completion_redirect_url = serializers.URLField(required=False, allow_blank=True)
    prompt_set = serializers.CharField(required=False, help_text="A prompt set's slug.")
    system = serializers.CharField(required=False, help_text="The system under evaluation.")
    baselines = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="Baseline systems' slugs."
    )
    conversations = serializers.FileField(required=False, help_text="Conversations (.jsonl).")
    gold_items = serializers.FileField(required=False, help_text="Gold and training (.jsonl).")
    chat_campaign = serializers.CharField(
        required=False,
        help_text="Instead of conversations: the slug of a chat campaign whose chats to use.",
    )
    include_incomplete = serializers.BooleanField(
        required=False, default=False, help_text="With chat_campaign: also incomplete chats."
    )
    chat_systems = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Chat campaigns: slugs of systems with a bot endpoint you may use.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from ..campaigns import available_kinds

        self.fields["task_kind"].choices = available_kinds()

    def validate(self, attrs):
        """The page's form decides: the same rules, the same messages, per field."""
        defaults = {name: f.default for name, f in CampaignSettings.model_fields.items()}
        data = {"provider": Campaign.Provider.LOCAL, "language": "en", **defaults}
        files = {}
        for name, value in attrs.items():
            if name in ("conversations", "gold_items"):
                files[name] = value
            elif name == "task_config":
                data[name] = json.dumps(value)
            elif value is not None:
                data[name] = value
        data = {k: ("" if v is None else v) for k, v in data.items()}
        request = self.context.get("request")
        form = CampaignForm(data, files, user=request.user if request else None)
        if not form.is_valid():
            raise serializers.ValidationError(
                {field: list(messages) for field, messages in form.errors.items()}
            )
        return {"form": form}


class CampaignActionSerializer(serializers.Serializer):
    confirm = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Confirms a launch that pays a crowd platform (the page's confirmation).",
    )


class CampaignSetupSerializer(serializers.Serializer):
    campaign = CampaignDetailSerializer()
    batches = serializers.IntegerField()
    shown = serializers.IntegerField(help_text="Task items shown to workers.")
    automatic = serializers.IntegerField(help_text="Items judged without being shown.")
    gold_copies = serializers.IntegerField()
    training = serializers.IntegerField()
    skipped_conversations = serializers.IntegerField()
    cost = serializers.DecimalField(
        max_digits=12, decimal_places=2, help_text="When every slot is paid."
    )


class ProgressSerializer(serializers.Serializer):
    status = serializers.CharField()
    items_done = serializers.IntegerField()
    items_needed = serializers.IntegerField()
    percent_done = serializers.FloatField()
    judgments = serializers.IntegerField()
    judgments_needed = serializers.IntegerField()
    judgments_last_24h = serializers.IntegerField()
    per_hour_last_24h = serializers.FloatField(allow_null=True)
    per_hour_overall = serializers.FloatField(allow_null=True)
    median_seconds = serializers.FloatField(allow_null=True)
    batches = serializers.IntegerField()
    slots = serializers.IntegerField(help_text="Batches × redundancy.")
    cost = serializers.DecimalField(
        max_digits=12, decimal_places=2, help_text="When every slot is paid."
    )


class ItemSerializer(serializers.ModelSerializer):
    batch = serializers.IntegerField(source="batch.position", read_only=True, allow_null=True)
    judgments = serializers.IntegerField(source="n_judgments", read_only=True)
    content = serializers.JSONField(help_text="What a worker is shown (the kind's shape).")
    gold = serializers.JSONField(allow_null=True, help_text="The known answer of a check.")

    class Meta:
        model = Item
        fields = [
            "position",
            "role",
            "batch",
            "order_in_batch",
            "segment_length",
            "content",
            "gold",
            "judgments",
        ]
        read_only_fields = fields


class PreviewSerializer(serializers.Serializer):
    payload = serializers.JSONField(help_text="The answer as it would be stored.")
    gold = serializers.JSONField(allow_null=True, help_text="How a check scores it, if gold.")


class JudgmentSerializer(serializers.ModelSerializer):
    campaign = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    item = serializers.IntegerField(source="item.position", read_only=True)
    worker = serializers.UUIDField(source="worker.public_id", read_only=True)
    assignment = serializers.UUIDField(source="assignment.public_id", read_only=True)
    payload = serializers.JSONField()

    class Meta:
        model = Judgment
        fields = [
            "id",
            "campaign",
            "item",
            "worker",
            "assignment",
            "payload",
            "started_at",
            "submitted_at",
            "client_duration_ms",
            "gold_correct",
            "gold_mistakes",
        ]
        read_only_fields = fields


class RateSerializer(serializers.Serializer):
    hits = serializers.IntegerField()
    total = serializers.IntegerField()
    value = serializers.FloatField(allow_null=True)


class WorkerFiguresSerializer(serializers.Serializer):
    worker = serializers.UUIDField(source="worker.public_id")
    provider = serializers.CharField(source="worker.provider")
    external_id = serializers.CharField(source="worker.external_id")
    blocked = serializers.BooleanField(source="worker.blocked")
    judgments = serializers.IntegerField()
    batches_submitted = serializers.IntegerField()
    gold = RateSerializer(help_text="Checks answered right.")
    controls = RateSerializer(help_text="Human-human controls labelled human (Spot The Bot).")
    agreement = RateSerializer(help_text="Items where the worker agreed with the majority.")
    median_seconds = serializers.FloatField(allow_null=True)
