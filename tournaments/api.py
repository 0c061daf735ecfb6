"""REST API of tournaments: `GET/POST /api/tournaments/`, `GET /api/tournaments/<slug>/`.

Visibility is the pages' own (`Tournament.objects.visible_to`): published tournaments, the user's
own, all of them for staff. Creating needs a login (token or session); the checks are
the forms' (`spot_the_bot_errors`, `ab_errors`).
"""

from django.db import transaction
from django.urls import include, path
from rest_framework import mixins, serializers, viewsets
from rest_framework.routers import SimpleRouter

from evalhub.models import Submission, System

from .forms import (
    AB_FIELDS,
    SPOT_THE_BOT_FIELDS,
    ab_errors,
    baseline_choices,
    spot_the_bot_errors,
    user_submissions,
)
from .models import PartnerSet, Tournament


class PartnerSetField(serializers.RelatedField):
    """A partner set by slug (its latest version); read back as {"slug", "version"}."""

    default_error_messages = {"does_not_exist": "No partner set '{slug}'."}

    def to_representation(self, value):
        return {"slug": value.slug, "version": value.version}

    def to_internal_value(self, data):
        slug = data.get("slug") if isinstance(data, dict) else data
        partner_set = PartnerSet.objects.filter(slug=slug).order_by("-version").first()
        if partner_set is None:
            self.fail("does_not_exist", slug=slug)
        return partner_set


class TournamentSerializer(serializers.ModelSerializer):
    owner = serializers.SlugRelatedField(slug_field="username", read_only=True)
    systems = serializers.SlugRelatedField(
        slug_field="slug", many=True, queryset=System.objects.none(), required=False
    )
    baselines = serializers.SlugRelatedField(
        slug_field="slug", many=True, queryset=System.objects.none(), required=False
    )
    submission = serializers.SlugRelatedField(
        slug_field="public_id", queryset=Submission.objects.none(), required=False, allow_null=True
    )
    prompt_set = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    partner_set = PartnerSetField(
        queryset=PartnerSet.objects.all(), required=False, allow_null=True
    )
    campaign = serializers.SlugRelatedField(slug_field="slug", read_only=True)
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
            *AB_FIELDS,
            "prompt_set",
        ]
        read_only_fields = ["owner", "status", "campaign", "created"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        request = self.context.get("request")
        if request is not None and request.user.is_authenticated:
            user = request.user
            self.fields["systems"].child_relation.queryset = System.objects.visible_to(user)
            self.fields["baselines"].child_relation.queryset = baseline_choices(user)
            self.fields["submission"].queryset = user_submissions(user)

    def validate(self, data):
        kind = data.get("kind")
        if kind == Tournament.Kind.SPOT_THE_BOT:
            defaults = Tournament()
            errors = spot_the_bot_errors(
                systems=data.get("systems"),
                schedule=data.get("schedule", defaults.schedule),
                partner_set=data.get("partner_set"),
                segment_lengths=data.get("segment_lengths", defaults.segment_lengths),
                features=data.get("features", defaults.features),
            )
            if not data.get("domain"):
                errors["domain"] = "Give the domain of the conversations."
        else:
            errors = ab_errors(submission=data.get("submission"), baselines=data.get("baselines"))
            if data.get("submission") is None:
                errors["submission"] = "Give the id of a submission of one of your systems."
        if errors:
            raise serializers.ValidationError(errors)
        return data

    @transaction.atomic
    def create(self, validated_data):
        kind = validated_data["kind"]
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
        return tournament


class TournamentViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    lookup_field = "slug"
    serializer_class = TournamentSerializer

    def get_queryset(self):
        return (
            Tournament.objects.visible_to(self.request.user)
            .select_related("owner", "campaign", "partner_set", "prompt_set", "submission")
            .prefetch_related("systems", "baselines")
            .order_by("-created")
        )

    def perform_create(self, serializer):
        serializer.save(owner=self.request.user)


router = SimpleRouter()
router.register("tournaments", TournamentViewSet, basename="api-tournament")

urlpatterns = [path("", include(router.urls))]
