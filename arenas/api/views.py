"""REST API of arenas: `GET /api/arenas/<slug>/leaderboard/` (whoever sees the arena),
`POST /api/arenas/<slug>/battles/import/` and `GET /api/arenas/<slug>/battles/export/`
(the arena's owner and staff), in Chatbot Arena's clean-battle format.

The leaderboard is the one the last computation stored (arenas/tasks.py, after votes,
debounced): never computed in the request. `pending` says a newer one is on its way.
`?style_control=1` and `?category=<name>` choose a variant (arenas/leaderboard.py); one the
last computation did not make yet (a category just defined) answers 202 and is queued.
"""

from decimal import Decimal

from django.conf import settings
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.planning import PLAN_EXAMPLE, PlanQuerySerializer, PlanSerializer
from evalhub.api.parsers import FormParser, MultiPartParser
from evalhub.errors import Problem
from evalhub.hf import api as hf_api
from evalhub.hf.bundle import dataset_response
from evalhub.hf.card import card_options
from evalhub.importers.problems import InvalidUpload
from evalhub.permissions import IsManager, IsViewer, by_method

from ..interchange import export_parquet
from ..interchange.export import export_lines
from ..interchange.writing import import_battles
from ..leaderboard import VariantState, stored_result, stored_variant
from ..leaderboard_queue import ask_for
from ..models import Arena
from ..pairing_state import stopping_status
from ..planning import plan_for_arena

LEADERBOARD_EXAMPLE = {
    "systems": [
        {
            "system": "gpt-4-0613",
            "name": "gpt-4-0613",
            "rating": 1093.2,
            "lower": 1071.5,
            "upper": 1117.0,
            "rank": 1,
            "battles": 412,
            "provisional": False,
        },
        {
            "system": "vicuna-13b",
            "name": "vicuna-13b",
            "rating": 906.8,
            "lower": 882.6,
            "upper": 929.1,
            "rank": 2,
            "battles": 412,
            "provisional": False,
        },
    ],
    "win_rate": {
        "systems": ["gpt-4-0613", "vicuna-13b"],
        "matrix": [[None, 0.7312], [0.2688, None]],
    },
    "pair_battles": {"systems": ["gpt-4-0613", "vicuna-13b"], "matrix": [[0, 412], [412, 0]]},
    "battles": 412,
    "flagged_left_out": 3,
    "confidence": 0.95,
    "bootstrap_rounds": 200,
    "scale": "Bradley-Terry, Elo-like: mean 1000, 400 points for 10:1 odds",
    "warnings": [],
    "computed_at": "2026-11-27T10:00:00+00:00",
    "pending": False,
}


class LeaderboardSerializer(serializers.Serializer):
    systems = serializers.ListField(child=serializers.DictField())
    win_rate = serializers.DictField()
    pair_battles = serializers.DictField()
    battles = serializers.IntegerField()
    flagged_left_out = serializers.IntegerField()
    confidence = serializers.FloatField()
    bootstrap_rounds = serializers.IntegerField()
    scale = serializers.CharField()
    warnings = serializers.ListField(child=serializers.CharField())
    computed_at = serializers.CharField(allow_null=True)
    pending = serializers.BooleanField()
    categories = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="The overall leaderboard's categories: name, battles, builtin.",
    )
    category = serializers.CharField(required=False, allow_null=True)
    style_control = serializers.BooleanField(required=False)
    style_coefficients = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="With style_control: feature, coefficient (log-odds per SD), lower, upper.",
    )
    bootstrap_method = serializers.CharField(
        required=False, help_text='With style_control: "refit" or "one_step".'
    )
    detail = serializers.CharField(required=False, help_text="202: being computed.")


class LeaderboardQuerySerializer(serializers.Serializer):
    style_control = serializers.BooleanField(
        default=False,
        help_text="Chatbot Arena's style control: ratings with answer length and markdown "
        "held equal, plus style_coefficients.",
    )
    category = serializers.RegexField(
        r"^[a-z0-9][a-z0-9_-]*$",
        max_length=40,
        required=False,
        help_text="A built-in category (english, chinese, ... multiturn, long_user, coding) "
        "or one the arena's owner defined.",
    )


class ArenaLeaderboard(APIView):
    permission_classes = [by_method(GET=IsViewer)]

    @extend_schema(
        summary="An arena's leaderboard",
        parameters=[LeaderboardQuerySerializer],
        responses={200: LeaderboardSerializer, 202: LeaderboardSerializer},
        examples=[OpenApiExample("Two systems", value=LEADERBOARD_EXAMPLE, response_only=True)],
    )
    def get(self, request, slug):
        arena = get_object_or_404(Arena, slug=slug)
        self.check_object_permissions(request, arena)
        query = LeaderboardQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        style_control = query.validated_data["style_control"]
        category = query.validated_data.get("category", "")
        if not style_control and not category:
            return Response(stored_result(arena))
        state, result = stored_variant(arena, style_control, category)
        if state is VariantState.UNKNOWN:
            raise NotFound(f"The arena has no category {category!r}.")
        if state is VariantState.COMPUTING:
            ask_for(arena)  # a no-op when a computation is queued already
        code = status.HTTP_202_ACCEPTED if state is VariantState.COMPUTING else status.HTTP_200_OK
        return Response(result, status=code)


class BattleUploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="Battles in Chatbot Arena's clean-battle format (.jsonl)."
    )
    create = serializers.BooleanField(
        default=False, help_text="Create the systems the file names that do not exist yet."
    )


class BattleImportResultSerializer(serializers.Serializer):
    created = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    systems_created = serializers.ListField(child=serializers.CharField())
    systems_entered = serializers.ListField(child=serializers.CharField())


class BattleImport(APIView):
    """The arena's owner imports battles; every problem comes back with its line, and
    nothing is stored when there is one."""

    permission_classes = [by_method(POST=IsManager)]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        summary="Import battles (clean-battle JSON lines)",
        request=BattleUploadSerializer,
        responses={201: BattleImportResultSerializer},
        examples=[
            OpenApiExample(
                "Imported",
                value={
                    "created": 1000,
                    "unchanged": 0,
                    "systems_created": ["gpt-4-0613"],
                    "systems_entered": ["gpt-4-0613", "vicuna-13b"],
                },
                response_only=True,
                status_codes=["201"],
            ),
            OpenApiExample(
                "A line refused",
                value={
                    "errors": [
                        {
                            "line": 7,
                            "message": '"winner" must be one of "model_a", "model_b", "tie", '
                            '"tie (bothbad)", not "draw".',
                        }
                    ],
                    "error_count": 1,
                },
                response_only=True,
                status_codes=["400"],
            ),
        ],
    )
    def post(self, request, slug):
        arena = get_object_or_404(Arena, slug=slug)
        self.check_object_permissions(request, arena)
        serializer = BattleUploadSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        limit = settings.EVALHUB_MAX_UPLOAD_BYTES
        if upload.size is not None and upload.size > limit:
            raise InvalidUpload(
                [Problem(None, f"The file is {upload.size:,} bytes; the limit is {limit:,} bytes.")]
            )
        result = import_battles(arena, upload, create=serializer.validated_data["create"])
        return Response(BattleImportResultSerializer(result).data, status=status.HTTP_201_CREATED)


class JSONLinesRenderer(JSONRenderer):
    """Lets `Accept: application/x-ndjson` reach the export (which streams its own response)."""

    media_type = "application/x-ndjson"
    format = "jsonl"


class BattleExport(APIView):
    permission_classes = [by_method(GET=IsManager)]
    renderer_classes = [JSONRenderer, JSONLinesRenderer]

    @extend_schema(
        summary="Voted battles as clean-battle JSON lines (streamed)",
        responses={
            (200, "application/x-ndjson"): OpenApiResponse(
                OpenApiTypes.STR,
                examples=[
                    OpenApiExample(
                        "One battle",
                        value='{"question_id": "5f0c...", "model_a": "gpt-4-0613", '
                        '"model_b": "vicuna-13b", "winner": "model_a", "judge": '
                        '"arena_user_3f9a", "turn": 1, "anony": true, "language": "en", '
                        '"tstamp": 1764237600.0, "conv_metadata": {...}, '
                        '"conversation_a": [...], "conversation_b": [...], '
                        '"evalhub": {"vote": "a_better", ...}}\n',
                    )
                ],
            )
        },
    )
    def get(self, request, slug):
        arena = get_object_or_404(Arena, slug=slug)
        self.check_object_permissions(request, arena)
        response = StreamingHttpResponse(
            export_lines(arena), content_type="application/x-ndjson; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="{arena.slug}-battles.jsonl"'
        return response


class BattleDatasetExport(APIView):
    permission_classes = [by_method(GET=IsManager)]
    renderer_classes = hf_api.RENDERERS

    @extend_schema(
        summary="Voted battles as a Hugging Face dataset (Parquet and its card, zipped)",
        parameters=hf_api.PARAMETERS,
        responses=hf_api.RESPONSES,
    )
    def get(self, request, slug):
        arena = get_object_or_404(Arena, slug=slug)
        self.check_object_permissions(request, arena)
        license_id, citation = card_options(request.query_params)
        return dataset_response(
            export_parquet.tables(arena),
            export_parquet.card_text(arena, license=license_id, citation=citation),
            f"{arena.slug}-battles",
        )


# Pairing (issue 27) --------------------------------------------------------------------------


class ArenaPlanQuerySerializer(PlanQuerySerializer):
    price_per_vote = serializers.DecimalField(
        required=False,
        max_digits=8,
        decimal_places=4,
        min_value=Decimal("0"),
        max_value=Decimal("1000"),
        help_text="What a vote costs, if voters are paid (the platform's fee is added).",
    )
    provider = serializers.ChoiceField(
        choices=["local", "prolific", "mturk"],
        default="local",
        help_text="Where paid voters come from: its fee is added to the price.",
    )


class StoppingStatusSerializer(serializers.Serializer):
    rule = serializers.CharField()
    level = serializers.FloatField()
    votes = serializers.IntegerField()
    adjacent_pairs = serializers.IntegerField()
    separated_pairs = serializers.IntegerField()
    answered = serializers.BooleanField()
    pause_when_answered = serializers.BooleanField()
    paused = serializers.BooleanField()
    updated = serializers.CharField(allow_null=True)


class ArenaPlan(APIView):
    """Votes (and money, if voters are paid) needed to separate the systems."""

    permission_classes = [by_method(GET=IsManager)]

    @extend_schema(
        summary="Budget planner",
        parameters=[ArenaPlanQuerySerializer],
        responses={200: PlanSerializer},
        examples=[OpenApiExample("Two systems", value=PLAN_EXAMPLE, response_only=True)],
    )
    def get(self, request, slug):
        arena = get_object_or_404(Arena, slug=slug)
        self.check_object_permissions(request, arena)
        query = ArenaPlanQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        return Response(
            plan_for_arena(arena, query.inputs(), data.get("price_per_vote"), data["provider"])
        )


class ArenaStopping(APIView):
    """Is the arena's ranking question answered (every adjacent pair separated)?"""

    permission_classes = [by_method(GET=IsViewer)]

    @extend_schema(
        summary="Stopping rule",
        responses={200: StoppingStatusSerializer},
        examples=[
            OpenApiExample(
                "Answered",
                value={
                    "rule": "every pair adjacent in the ranking separated",
                    "level": 0.95,
                    "votes": 5120,
                    "adjacent_pairs": 9,
                    "separated_pairs": 9,
                    "answered": True,
                    "pause_when_answered": True,
                    "paused": True,
                    "updated": "2026-11-27T10:00:00+00:00",
                },
                response_only=True,
            )
        ],
    )
    def get(self, request, slug):
        arena = get_object_or_404(Arena, slug=slug)
        self.check_object_permissions(request, arena)
        return Response(StoppingStatusSerializer(stopping_status(arena)).data)
