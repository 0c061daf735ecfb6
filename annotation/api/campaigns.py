"""The campaign API: what a researcher or admin does on the staff campaign pages.

- `GET/POST /api/campaigns/`: list (search, ordering, filters) and create. Creating takes the
  page's fields and is checked by the page's form; a prompt set and systems go as JSON or
  form fields, conversation files as multipart.
- `GET /api/campaigns/<slug>/`, `.../progress/`, `.../workers/` (quality table),
  `.../export/csv/` and `.../export/jsonl/` (streamed), `.../export/dataset/` (a Hugging Face
  dataset: Parquet and its card, zipped, written to a temporary file and streamed from it).
- `POST /api/campaigns/<slug>/launch/`, `pause/`, `finish/`: staff, through `change_status`.
- `GET /api/campaigns/<slug>/items/`, `.../items/<position>/`, and
  `POST .../items/<position>/preview/`: an answer checked as a worker's would be, never stored.
- `GET /api/judgments/?campaign=<slug>`: judgments, paginated and filtered.

Managers see a campaign (staff: all of them; a researcher: their own); staff create and
change its state, as on the pages. Errors answer in the one shape of evalhub/api.
"""

from dataclasses import asdict

from django.db.models import Count
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response

from evalhub.api.parsers import FormParser, JSONParser, MultiPartParser
from evalhub.api.serializers import InputErrorsSerializer
from evalhub.hf import api as hf_api
from evalhub.hf.bundle import dataset_response
from evalhub.hf.card import card_options
from evalhub.permissions import IsManager, IsStaff, SignedIn, by_method, managed_by
from evalhub.quotas import check_quota

from .. import export, export_parquet, progress
from ..campaigns import change_status, create_campaign
from ..models import Campaign, Item, Judgment
from ..quality import sort_figures, worker_figures
from .filters import CampaignFilter, ItemFilter, JudgmentFilter
from .serializers import (
    CampaignActionSerializer,
    CampaignCreateSerializer,
    CampaignDetailSerializer,
    CampaignSerializer,
    CampaignSetupSerializer,
    ItemSerializer,
    JudgmentSerializer,
    PreviewSerializer,
    ProgressSerializer,
    WorkerFiguresSerializer,
)

CREATE_AB = OpenApiExample(
    "A/B from a prompt set",
    request_only=True,
    value={
        "task_kind": "ab",
        "title": "My bot against the baseline",
        "slug": "my-bot-ab",
        "prompt_set": "ncm",
        "system": "my-bot",
        "baselines": ["cakechat"],
        "redundancy": 3,
        "batch_size": 10,
    },
)
CAMPAIGN_EXAMPLE = OpenApiExample(
    "A draft campaign",
    response_only=True,
    value={
        "slug": "my-bot-ab",
        "title": "My bot against the baseline",
        "task_kind": "ab",
        "status": "draft",
        "provider": "local",
        "redundancy": 3,
        "batch_size": 10,
        "reward_per_batch": "0.00",
        "max_batches_per_worker": 3,
        "time_limit_minutes": 60,
        "requires_training": False,
        "training_threshold": None,
        "owner": "alice",
        "created": "2026-01-05T10:00:00Z",
        "launched_at": None,
        "finished_at": None,
        "judgments": 0,
        "judgments_needed": 60,
        "start_url": "/work/my-bot-ab/",
    },
)
ERRORS_EXAMPLE = OpenApiExample(
    "A setting out of range",
    response_only=True,
    status_codes=["400"],
    value={
        "errors": [{"field": "redundancy", "message": "redundancy must be from 1 to 50."}],
        "error_count": 1,
    },
)


PROGRESS_EXAMPLE = OpenApiExample(
    "Half way",
    response_only=True,
    value={
        "status": "live",
        "items_done": 30,
        "items_needed": 60,
        "percent_done": 50.0,
        "judgments": 95,
        "judgments_needed": 198,
        "judgments_last_24h": 40,
        "per_hour_last_24h": 1.7,
        "per_hour_overall": 2.1,
        "median_seconds": 21.5,
        "batches": 6,
        "slots": 18,
        "cost": "9.00",
    },
)
ITEM_EXAMPLE = OpenApiExample(
    "A gold A/B item",
    response_only=True,
    value={
        "position": 12,
        "role": "gold",
        "batch": 2,
        "order_in_batch": 3,
        "segment_length": None,
        "content": {"context": ["hi , how are you ?"], "left": "fine .", "right": "no ."},
        "gold": {"choice": "a", "explanation": "Response a answers the question."},
        "judgments": 2,
    },
)
JUDGMENT_EXAMPLE = OpenApiExample(
    "An A/B judgment",
    response_only=True,
    value={
        "id": 501,
        "campaign": "my-bot-ab",
        "item": 12,
        "worker": "6f1c0b1e-3a52-4c36-9d55-0d6c9b8c2a11",
        "assignment": "0b9a6e0c-8f6e-4f43-a8f1-2b6e7d0d9c55",
        "payload": {"choice": "a", "left": "b"},
        "started_at": "2026-01-05T10:02:00Z",
        "submitted_at": "2026-01-05T10:02:21Z",
        "client_duration_ms": 20950,
        "gold_correct": True,
        "gold_mistakes": 0,
    },
)
WORKER_EXAMPLE = OpenApiExample(
    "A careful worker",
    response_only=True,
    value={
        "worker": "6f1c0b1e-3a52-4c36-9d55-0d6c9b8c2a11",
        "provider": "prolific",
        "external_id": "5f1e2d3c4b5a",
        "blocked": False,
        "judgments": 30,
        "batches_submitted": 3,
        "gold": {"hits": 3, "total": 3, "value": 1.0},
        "controls": {"hits": 0, "total": 0, "value": None},
        "agreement": {"hits": 22, "total": 27, "value": 0.815},
        "median_seconds": 18.2,
    },
)
PREVIEW_EXAMPLE = OpenApiExample(
    "A wrong answer to a check",
    response_only=True,
    value={
        "payload": {"choice": "tie", "left": "a"},
        "gold": {
            "correct": False,
            "mistakes": 1,
            "feedback": [{"where": "", "field": "choice", "yours": "tie", "gold": "a"}],
        },
    },
)


class CSVRenderer(BaseRenderer):
    """Lets `Accept: text/csv` reach the export (which streams its own response)."""

    media_type = "text/csv"
    format = "csv"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return JSONRenderer().render(data)


class JSONLinesRenderer(CSVRenderer):
    media_type = "application/x-ndjson"
    format = "jsonl"


def manageable_campaigns(user):
    return managed_by(Campaign.objects.all(), user)


@extend_schema_view(
    list=extend_schema(summary="Campaigns you manage", examples=[CAMPAIGN_EXAMPLE]),
    retrieve=extend_schema(summary="One campaign", examples=[CAMPAIGN_EXAMPLE]),
)
class CampaignViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    lookup_field = "slug"
    throttle_scopes = {"create": "uploads"}  # evalhub/api/throttles.py
    # Reads are the campaign's managers' (the queryset holds only theirs); any researcher
    # creates campaigns over what they may see (their systems, public ones); every change
    # of status (launch, pause, finish) is staff's, or the owner's through a launch request.
    permission_classes = [by_method(GET=IsManager, POST=IsStaff, create=SignedIn)]
    filterset_class = CampaignFilter
    search_fields = ["title", "slug"]
    ordering_fields = ["created", "title", "slug", "status", "n_judgments"]
    ordering = ["-created"]

    def get_queryset(self):
        campaigns = manageable_campaigns(self.request.user).select_related("owner")
        return progress.with_progress(campaigns).order_by("-created", "pk")

    def get_serializer_class(self):
        if self.action == "create":
            return CampaignCreateSerializer
        if self.action == "retrieve":
            return CampaignDetailSerializer
        return CampaignSerializer

    def get_parsers(self):
        return [JSONParser(), MultiPartParser(), FormParser()]

    @extend_schema(
        summary="Create a campaign",
        request={
            "application/json": CampaignCreateSerializer,
            "multipart/form-data": CampaignCreateSerializer,
        },
        responses={201: CampaignSetupSerializer, 400: InputErrorsSerializer},
        examples=[CREATE_AB, ERRORS_EXAMPLE],
    )
    def create(self, request):
        check_quota(request.user, Campaign)
        serializer = CampaignCreateSerializer(data=request.data, context={"request": request})
        serializer.is_valid(raise_exception=True)
        form = serializer.validated_data["form"]
        campaign = form.save(commit=False)
        campaign.task_config = form.cleaned_data["task_config"]
        campaign.owner = request.user
        campaign.status = Campaign.Status.DRAFT
        # SetupInvalid is a UserInputError: the exception handler answers it field by field.
        setup = create_campaign(
            campaign,
            form.source,
            gold_per_batch=form.cleaned_data["gold_per_batch"],
            user=request.user,
        )
        fresh = self.get_queryset().get(pk=setup.campaign.pk)
        body = {
            "campaign": CampaignDetailSerializer(fresh).data,
            "batches": setup.batches,
            "shown": setup.shown,
            "automatic": setup.automatic,
            "gold_copies": setup.gold_copies,
            "training": setup.training,
            "skipped_conversations": setup.skipped_conversations,
            "cost": f"{setup.cost:.2f}",
        }
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="How far the campaign has come",
        responses=ProgressSerializer,
        examples=[PROGRESS_EXAMPLE],
    )
    @action(detail=True, methods=["get"])
    def progress(self, request, slug=None):
        campaign = self.get_object()
        done = progress.progress(campaign)
        made = progress.composition(campaign)
        body = {
            "status": campaign.status,
            "items_done": done.items_done,
            "items_needed": done.items_needed,
            "percent_done": done.percent_done,
            "judgments": done.judgments,
            "judgments_needed": done.judgments_needed,
            "judgments_last_24h": done.judgments_last_24h,
            "per_hour_last_24h": done.per_hour_last_24h,
            "per_hour_overall": done.per_hour_overall,
            "median_seconds": done.median_seconds,
            "batches": made.batches,
            "slots": made.slots,
            "cost": f"{made.cost:.2f}",
        }
        return Response(ProgressSerializer(body).data)

    def _change(self, request, verb):
        serializer = CampaignActionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        campaign = change_status(
            self.get_object(),
            verb,
            actor=request.user,
            confirm=serializer.validated_data["confirm"],
        )
        return Response(CampaignDetailSerializer(self.get_queryset().get(pk=campaign.pk)).data)

    _action_schema = {
        "request": CampaignActionSerializer,
        "responses": {200: CampaignDetailSerializer, 400: InputErrorsSerializer},
    }

    @staticmethod
    def _action_examples(status_: str) -> list:
        return [
            OpenApiExample("Confirmed", value={"confirm": True}, request_only=True),
            OpenApiExample(
                f"Now {status_}",
                value={
                    **CAMPAIGN_EXAMPLE.value,
                    "status": status_,
                    "instructions": "Which response continues the conversation better?",
                    "task_config": {},
                },
                response_only=True,
            ),
        ]

    @extend_schema(summary="Launch (staff)", examples=_action_examples("live"), **_action_schema)
    @action(detail=True, methods=["post"])
    def launch(self, request, slug=None):
        return self._change(request, "launch")

    @extend_schema(summary="Pause (staff)", examples=_action_examples("paused"), **_action_schema)
    @action(detail=True, methods=["post"])
    def pause(self, request, slug=None):
        return self._change(request, "pause")

    @extend_schema(
        summary="Finish (staff)", examples=_action_examples("finished"), **_action_schema
    )
    @action(detail=True, methods=["post"])
    def finish(self, request, slug=None):
        return self._change(request, "finish")

    @extend_schema(
        summary="Worker quality table",
        parameters=[
            OpenApiParameter(
                "sort",
                str,
                description="worker, judgments, batches, gold, controls, agreement, seconds "
                "or blocked; '-' first for descending.",
            )
        ],
        responses=WorkerFiguresSerializer(many=True),
        examples=[WORKER_EXAMPLE],
    )
    @action(detail=True, methods=["get"])
    def workers(self, request, slug=None):
        figures, _ = sort_figures(worker_figures(self.get_object()), request.GET.get("sort"))
        page = self.paginate_queryset(figures)
        return self.get_paginated_response(WorkerFiguresSerializer(page, many=True).data)

    def _export(self, fmt):
        campaign = self.get_object()
        if fmt == "csv":
            lines = export.csv_lines(export.export_csv_rows(campaign))
            content_type = "text/csv; charset=utf-8"
        else:
            lines = export.jsonl_lines(export.export_rows(campaign))
            content_type = "application/x-ndjson; charset=utf-8"
        response = StreamingHttpResponse(lines, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{campaign.slug}-judgments.{fmt}"'
        return response

    @extend_schema(
        summary="Judgments as CSV (streamed)",
        responses={
            (200, "text/csv"): OpenApiResponse(
                OpenApiTypes.STR,
                examples=[
                    OpenApiExample(
                        "Turn-level Likert",
                        value=(
                            "campaign,conversation,system,level,worker,batch,dimension_order,"
                            "started_at_ms,duration_ms,turn,rating_relevance,rating_fluency,role\n"
                            "likert-demo,c-17,chatty,turn,9a1f0c2e,likert-demo:0,"
                            "fluency; relevance,1732320000000,3500,1,5,3,task\n"
                        ),
                    )
                ],
            )
        },
    )
    @action(
        detail=True,
        methods=["get"],
        url_path="export/csv",
        renderer_classes=[JSONRenderer, CSVRenderer],
    )
    def export_csv(self, request, slug=None):
        return self._export("csv")

    @extend_schema(
        summary="Judgments as JSON lines (streamed)",
        responses={
            (200, "application/x-ndjson"): OpenApiResponse(
                OpenApiTypes.STR,
                examples=[
                    OpenApiExample(
                        "Turn-level Likert",
                        value=(
                            '{"campaign": "likert-demo", "conversation": "c-17", '
                            '"system": "chatty", "level": "turn", "worker": "9a1f0c2e", '
                            '"batch": "likert-demo:0", "bot_turns": [1, 3], '
                            '"ratings": {"relevance": [5, 4], "fluency": [3, 3]}, '
                            '"dimension_order": ["fluency", "relevance"], '
                            '"started_at_ms": 1732320000000, "duration_ms": 3500, '
                            '"role": "task"}\n'
                        ),
                    )
                ],
            )
        },
    )
    @action(
        detail=True,
        methods=["get"],
        url_path="export/jsonl",
        renderer_classes=[JSONRenderer, JSONLinesRenderer],
    )
    def export_jsonl(self, request, slug=None):
        return self._export("jsonl")

    @extend_schema(
        summary="Judgments as a Hugging Face dataset (Parquet and its card, zipped)",
        parameters=hf_api.PARAMETERS,
        responses=hf_api.RESPONSES,
    )
    @action(
        detail=True,
        methods=["get"],
        url_path="export/dataset",
        renderer_classes=hf_api.RENDERERS,
    )
    def export_dataset(self, request, slug=None):
        campaign = self.get_object()
        license_id, citation = card_options(request.query_params)
        return dataset_response(
            export_parquet.tables(campaign),
            export_parquet.card_text(campaign, license=license_id, citation=citation),
            f"{campaign.slug}-judgments",
        )


@extend_schema_view(
    list=extend_schema(summary="A campaign's items", examples=[ITEM_EXAMPLE]),
    retrieve=extend_schema(summary="One item", examples=[ITEM_EXAMPLE]),
)
class ItemViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """A campaign's items in position order; gold answers included (managers only)."""

    lookup_field = "position"
    lookup_value_regex = r"\d+"
    serializer_class = ItemSerializer
    # Scoped to the campaigns the user manages (`campaign`); others' answer 404.
    permission_classes = [by_method(GET=SignedIn, POST=SignedIn)]
    filterset_class = ItemFilter
    ordering_fields = ["position"]
    ordering = ["position"]

    def campaign(self) -> Campaign:
        return get_object_or_404(manageable_campaigns(self.request.user), slug=self.kwargs["slug"])

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Item.objects.none()
        return (
            Item.objects.filter(campaign=self.campaign())
            .select_related("batch")
            .annotate(n_judgments=Count("judgments"))
            .order_by("position")
        )

    @extend_schema(
        summary="Check an answer to an item, as a worker's would be (nothing stored)",
        request={"application/x-www-form-urlencoded": OpenApiTypes.OBJECT},
        responses={200: PreviewSerializer, 400: InputErrorsSerializer},
        examples=[PREVIEW_EXAMPLE],
    )
    @action(detail=True, methods=["post"], parser_classes=[FormParser, MultiPartParser])
    def preview(self, request, slug=None, position=None):
        item = self.get_object()
        campaign = item.campaign
        kind = campaign.kind
        config = kind.clean_config(campaign.task_config)
        # A PayloadInvalid is a UserInputError: the exception handler answers it per field.
        payload = kind.parse_payload(item, config, request.data)
        gold = kind.score_gold(item, payload) if item.gold else None
        gold_json = asdict(gold) if gold is not None else None
        return Response({"payload": payload, "gold": gold_json})


@extend_schema_view(
    list=extend_schema(summary="Judgments of campaigns you manage", examples=[JUDGMENT_EXAMPLE]),
    retrieve=extend_schema(summary="One judgment", examples=[JUDGMENT_EXAMPLE]),
)
class JudgmentViewSet(viewsets.ReadOnlyModelViewSet):
    """Judgments of the campaigns you manage; `?campaign=<slug>` narrows to one."""

    serializer_class = JudgmentSerializer
    # Scoped to the campaigns the user manages (the queryset).
    permission_classes = [by_method(GET=SignedIn)]
    filterset_class = JudgmentFilter
    ordering_fields = ["submitted_at", "id"]
    ordering = ["id"]

    def get_queryset(self):
        return (
            Judgment.objects.filter(campaign__in=manageable_campaigns(self.request.user))
            .select_related("campaign", "item", "worker", "assignment")
            .order_by("id")
        )
