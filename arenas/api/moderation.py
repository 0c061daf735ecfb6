"""The owner's moderation in the API (the arena's owner and staff):

- `GET`/`PATCH /api/arenas/<slug>/moderation/`: the moderation settings (the block list,
  leaving flagged battles out of the leaderboard, the voters' caps, the fast-vote share);
- `GET /api/arenas/<slug>/flags/`: the flagged battles, newest first, each flag with what
  raised it and the owner's review;
- `POST /api/arenas/<slug>/flags/<battle>/` `{"code", "decision": "confirmed"|"cleared"}`:
  the owner's review of one flag (arenas/flags.py), answered with the battle.
"""

from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import (
    OpenApiExample,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import generics, serializers
from rest_framework.response import Response

from evalhub.permissions import IsManager, by_method

from .. import flags
from ..arena_settings import MAX_BLOCKED_PHRASE_CHARS, MAX_BLOCKED_PHRASES
from ..models import Arena, Battle

MODERATION = {
    "exclude_flagged": True,
    "block_list": ["ignore previous instructions"],
    "battles_per_day": 200,
    "repeat_window_hours": 24,
    "max_prompt_repeats": 0,
    "fast_vote_fraction": 0.25,
}
FLAGGED = {
    "battle": "5f0c2a9e-3b1d-4c55-9a43-0e8d2f4b7a61",
    "started_at": "2026-11-27T10:00:00Z",
    "voter_ref": "user:17",
    "system_a": "gpt-4-0613",
    "system_b": "vicuna-13b",
    "vote": "a_better",
    "flags": [
        {
            "code": "fast_vote",
            "note": "Voted 1.2 s after the first answer appeared; reading both answers "
            "takes about 76 s at 238 words a minute, and this arena flags votes sooner "
            "than 18.9 s.",
            "review": None,
        }
    ],
}


class ModerationSerializer(serializers.ModelSerializer):
    block_list = serializers.ListField(
        child=serializers.CharField(max_length=MAX_BLOCKED_PHRASE_CHARS),
        max_length=MAX_BLOCKED_PHRASES,
        required=False,
        help_text=Arena._meta.get_field("block_list").help_text,
    )

    class Meta:
        model = Arena
        fields = list(MODERATION)


class ManagedArenaMixin:
    def managed_arena(self) -> Arena:
        arena = get_object_or_404(Arena, slug=self.kwargs["slug"])
        self.check_object_permissions(self.request, arena)
        return arena


@extend_schema_view(
    get=extend_schema(
        summary="An arena's moderation settings",
        examples=[OpenApiExample("Settings", value=MODERATION, response_only=True)],
    ),
    patch=extend_schema(
        summary="Change an arena's moderation settings",
        examples=[
            OpenApiExample(
                "Count flagged battles too", value={"exclude_flagged": False}, request_only=True
            ),
            OpenApiExample(
                "Changed", value={**MODERATION, "exclude_flagged": False}, response_only=True
            ),
        ],
    ),
)
class ArenaModeration(ManagedArenaMixin, generics.GenericAPIView):
    serializer_class = ModerationSerializer
    permission_classes = [by_method(GET=IsManager, PATCH=IsManager)]
    queryset = Arena.objects.none()

    def get(self, request, slug):
        return Response(self.get_serializer(self.managed_arena()).data)

    def patch(self, request, slug):
        serializer = self.get_serializer(self.managed_arena(), data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        with transaction.atomic():
            saved = serializer.save()
        return Response(self.get_serializer(saved).data)


class FlagSerializer(serializers.Serializer):
    code = serializers.CharField()
    note = serializers.CharField()
    review = serializers.DictField(allow_null=True)


class FlaggedBattleSerializer(serializers.ModelSerializer):
    battle = serializers.UUIDField(source="public_id", read_only=True)
    system_a = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    system_b = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    flags = serializers.SerializerMethodField()

    class Meta:
        model = Battle
        fields = ["battle", "started_at", "voter_ref", "system_a", "system_b", "vote", "flags"]
        read_only_fields = fields

    @extend_schema_field(FlagSerializer(many=True))
    def get_flags(self, battle):
        return [
            {"code": f["code"], "note": f["note"], "review": f["review"]}
            for f in flags.described(battle)
        ]


@extend_schema_view(
    get=extend_schema(
        summary="An arena's flagged battles",
        examples=[
            OpenApiExample(
                "One flagged battle",
                value={"count": 1, "next": None, "previous": None, "results": [FLAGGED]},
                response_only=True,
            )
        ],
    )
)
class FlaggedBattles(ManagedArenaMixin, generics.ListAPIView):
    serializer_class = FlaggedBattleSerializer
    permission_classes = [by_method(GET=IsManager)]
    filter_backends = []

    def get_queryset(self):
        return flags.flagged_battles(self.managed_arena())


class FlagReviewSerializer(serializers.Serializer):
    code = serializers.CharField(
        max_length=40, help_text="The flag reviewed: one of the battle's `flags`."
    )
    decision = serializers.ChoiceField(
        choices=list(flags.DECISIONS),
        help_text="confirmed keeps the flag; cleared takes it off (the battle counts again).",
    )


class FlagReview(ManagedArenaMixin, generics.GenericAPIView):
    serializer_class = FlagReviewSerializer
    permission_classes = [by_method(POST=IsManager)]
    queryset = Battle.objects.none()

    @extend_schema(
        summary="Confirm or clear one flag of a battle",
        responses={200: FlaggedBattleSerializer},
        examples=[
            OpenApiExample(
                "Clear", value={"code": "fast_vote", "decision": "cleared"}, request_only=True
            ),
            OpenApiExample("Cleared", value={**FLAGGED, "flags": []}, response_only=True),
        ],
    )
    def post(self, request, slug, public_id):
        arena = self.managed_arena()
        battle = get_object_or_404(Battle, arena=arena, public_id=public_id)
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        reviewed = flags.review(battle, data["code"], data["decision"], request.user)
        battle = Battle.objects.select_related("system_a", "system_b").get(pk=reviewed.pk)
        return Response(FlaggedBattleSerializer(battle).data)
