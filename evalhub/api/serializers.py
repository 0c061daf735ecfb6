from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from .. import limits
from ..importers import hf_layout
from ..models import Conversation, Prompt, PromptSet, Submission, System
from ..slugs import SLUG_HELP, validate_slug
from .fields import VisibleSlugRelatedField


class SystemSerializer(serializers.ModelSerializer):
    owner = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = System
        fields = [
            "slug",
            "name",
            "description",
            "paper_url",
            "code_url",
            "weights_url",
            "owner",
            "is_baseline",
            "visibility",
            "embargo_until",
            "created",
        ]
        read_only_fields = ["owner", "is_baseline", "created"]


class PromptSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="external_id")

    class Meta:
        model = Prompt
        fields = ["id", "position", "context", "references"]


class PromptSetSerializer(serializers.ModelSerializer):
    prompt_count = serializers.IntegerField(source="prompts.count", read_only=True)

    class Meta:
        model = PromptSet
        fields = ["slug", "name", "description", "source", "version", "prompt_count", "created"]


class PromptSetDetailSerializer(PromptSetSerializer):
    prompts = PromptSerializer(many=True, read_only=True)

    class Meta(PromptSetSerializer.Meta):
        fields = PromptSetSerializer.Meta.fields + ["prompts"]


class PromptSetUploadSerializer(serializers.Serializer):
    slug = serializers.CharField(max_length=80, validators=[validate_slug], help_text=SLUG_HELP)
    name = serializers.CharField(max_length=limits.NAME_CHARS)
    description = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=limits.DESCRIPTION_CHARS
    )
    source = serializers.CharField(required=False, allow_blank=True, default="", max_length=300)
    version = serializers.CharField(required=False, default="1", max_length=40)
    file = serializers.FileField(
        help_text=".txt (one prompt per line), .jsonl, or .parquet (the Hugging Face layout)"
    )
    columns = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=hf_layout.MAX_MAPPING_CHARS,
        help_text="For a file in the Hugging Face layout (.parquet, or .jsonl with a mapping): "
        "which columns hold what EvalHub reads, as ours=theirs pairs separated by commas, "
        'e.g. "prompt=instruction, id=question_id".',
    )

    def validate_slug(self, slug):
        if PromptSet.objects.filter(slug=slug).exists():
            raise serializers.ValidationError("A prompt set with this slug exists.")
        return slug


class SubmissionSerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(source="public_id", read_only=True)
    system = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    prompt_set = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    baselines = serializers.SlugRelatedField(slug_field="slug", many=True, read_only=True)

    class Meta:
        model = Submission
        fields = [
            "id",
            "system",
            "prompt_set",
            "status",
            "format",
            "original_filename",
            "baselines",
            "metrics",
            "error_report",
            "warnings",
            "created",
            "scored_at",
        ]


class SubmissionUploadSerializer(serializers.Serializer):
    # Prompt sets are the catalog's, public to all.
    prompt_set = VisibleSlugRelatedField(
        noun="prompt set",
        visible=lambda user: PromptSet.objects.all(),
        slug_field="slug",
        queryset=PromptSet.objects.all(),
    )
    file = serializers.FileField()
    format = serializers.ChoiceField(choices=Submission.Format.choices, required=False)
    columns = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=hf_layout.MAX_MAPPING_CHARS,
        help_text="For a file in the Hugging Face layout (.parquet, or .jsonl with a mapping): "
        "which columns hold what EvalHub reads, as ours=theirs pairs separated by commas, "
        'e.g. "id=question_id, response=output".',
    )
    baselines = VisibleSlugRelatedField(
        noun="baseline",
        slug_field="slug",
        queryset=System.objects.all(),
        many=True,
        required=False,
    )

    def __init__(self, *args, user=None, system=None, **kwargs):
        # user and system are always given when validating; the schema generator omits them.
        super().__init__(*args, **kwargs)

        def baselines(_request_user):
            choices = System.objects.filter(is_baseline=True)
            if user is None or system is None:
                return choices.none()
            return choices.filter(pk__in=System.objects.visible_to(user)).exclude(pk=system.pk)

        self.fields["baselines"].child_relation.visible = baselines


class ConversationUploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="Conversations in the interchange format (.jsonl), or in the Hugging Face "
        "layout (.parquet, or .jsonl with a mapping)."
    )
    columns = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=hf_layout.MAX_MAPPING_CHARS,
        help_text="For a file in the Hugging Face layout (.parquet, or .jsonl with a mapping): "
        "which columns hold what EvalHub reads, as ours=theirs pairs separated by commas, "
        'e.g. "messages=conversation, model=model".',
    )
    source = serializers.ChoiceField(choices=Conversation.Source.choices, required=False)


class SeedConversationUploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text='Human-human conversations (.jsonl, every speaker "human") for a domain.'
    )


class ConversationImportSerializer(serializers.Serializer):
    created = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    systems_created = serializers.ListField(child=serializers.CharField())


@extend_schema_serializer(component_name="ErrorItem")
class InputProblemSerializer(serializers.Serializer):
    line = serializers.IntegerField(required=False, allow_null=True)
    field = serializers.CharField(required=False)
    file = serializers.CharField(
        required=False, help_text="Which uploaded file the line is in (multi-file imports)."
    )
    message = serializers.CharField()


@extend_schema_serializer(component_name="Error")
class InputErrorsSerializer(serializers.Serializer):
    """What every error of the API answers, 400 to 500 (evalhub/errors.py): each problem has a
    "message" and one locator, "field" or "line" (null for the request as a whole)."""

    errors = InputProblemSerializer(many=True)
    error_count = serializers.IntegerField()
