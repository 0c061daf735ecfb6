"""REST API of automatic judges, owner or staff only (anonymous callers get 401):

- `GET/POST /api/judges/`, `GET /api/judges/<slug>/`: a user's judges (staff: all); a
  judge is registered with its own endpoint (`endpoint`: URL, model, key, limits), which
  belongs to no system and is then managed at `/api/endpoints/<id>/`;
- `GET/POST /api/judge-rubrics/`, `GET /api/judge-rubrics/<id>/`,
  `POST /api/judge-rubrics/<id>/revise/`: every signed-in user reads rubrics and writes
  new ones (a used name gets its next version); its author or staff revise one, in place
  while no run used it, else as a new version (answered 201);
- `GET/POST /api/judge-runs/` (create = start: queued and sent to the worker; a
  `campaign` or an `arena`, whose voted battles are judged),
  `GET /api/judge-runs/<id>/`, `GET .../progress/`, `POST .../pause/`, `POST .../resume/`,
  `GET .../judgments/` (the automatic judgments, paginated, `?status=ok|failed`).

Judges and their runs are private: another user's answer 404, as on the pages.
"""

from django.db import transaction
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    extend_schema,
    extend_schema_view,
)
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from endpoints.api.views import MODEL_ENDPOINT
from evalhub import permissions
from evalhub.hf import api as hf_api
from evalhub.hf.bundle import dataset_response
from evalhub.hf.card import card_options

from .. import export_parquet, rubric_versions, runs
from ..models import AutomaticJudgment, Judge, JudgeRun, Rubric
from .serializers import (
    AutomaticJudgmentSerializer,
    JudgeRunProgressSerializer,
    JudgeSerializer,
    RubricReviseSerializer,
    RubricSerializer,
    RunSerializer,
)

JUDGE = {
    "slug": "qwen-judge",
    "name": "Qwen 2.5 7B judge",
    "owner": "alice",
    "endpoint": MODEL_ENDPOINT,
    "model_name": "qwen2.5-7b-instruct",
    "created": "2026-11-20T09:30:00Z",
}
RUBRIC = {
    "id": 7,
    "task_kind": "ab",
    "name": "terse",
    "version": 2,
    "instructions": "Conversation:\n$context\n\nResponse 1: $response_1\nResponse 2: "
    "$response_2\n\nWhich is the better next turn?\n$answer_format",
    "owner": "alice",
    "used": False,
    "created": "2026-11-20T09:30:00Z",
}
RUN = {
    "id": 12,
    "judge": "qwen-judge",
    "rubric": 1,
    "campaign": "chateval-ab-2026",
    "arena": None,
    "status": "running",
    "concurrency": 4,
    "max_attempts": 3,
    "items_total": 400,
    "items_done": 118,
    "items_failed": 2,
    "items_skipped": 0,
    "percent": 30,
    "prompt_tokens": 61240,
    "completion_tokens": 1320,
    "created": "2026-11-20T09:30:00Z",
    "started_at": "2026-11-20T09:30:02Z",
    "finished_at": None,
    "last_error": "",
}
PROGRESS = {
    "id": 12,
    "status": "running",
    "status_display": "Running",
    "items_total": 400,
    "items_done": 118,
    "items_failed": 2,
    "items_skipped": 0,
    "percent": 30,
    "prompt_tokens": 61240,
    "completion_tokens": 1320,
    "requests_today": 125,
    "daily_budget": 5000,
    "last_error": "",
    "started_at": "2026-11-20T09:30:02Z",
    "finished_at": None,
}
JUDGMENTS = [
    {
        "item": 3,
        "item_id": 5521,
        "battle": None,
        "automatic": True,
        "status": "ok",
        "payload": {"choice": "b", "left": "a"},
        "raw_text": '{"better": "2"}',
        "error": "",
        "attempts": 1,
        "output_path": "structured",
        "parse_failures": 0,
        "prompt_tokens": 512,
        "completion_tokens": 9,
        "created": "2026-11-20T09:30:05Z",
    },
    {
        "item": 4,
        "item_id": 5522,
        "battle": None,
        "automatic": True,
        "status": "failed",
        "payload": {},
        "raw_text": "Both responses are fine, I cannot choose.",
        "error": "The reply holds no JSON object.",
        "attempts": 3,
        "output_path": "prompt",
        "parse_failures": 3,
        "prompt_tokens": 1730,
        "completion_tokens": 41,
        "created": "2026-11-20T09:30:09Z",
    },
]
REFUSED = {
    "errors": [
        {
            "field": "rubric",
            "message": "The rubric is for Likert ratings (dialogue or turn) tasks, "
            "the campaign is A/B response comparison (ChatEval).",
        }
    ],
    "error_count": 1,
}


def _out(name, value, code="200"):
    return OpenApiExample(name, value=value, response_only=True, status_codes=[code])


@extend_schema_view(
    list=extend_schema(examples=[_out("Judges", [JUDGE])]),
    retrieve=extend_schema(examples=[_out("Judge", JUDGE)]),
    create=extend_schema(
        examples=[
            OpenApiExample(
                "Register a judge",
                value={
                    "slug": "qwen-judge",
                    "name": "Qwen 2.5 7B judge",
                    "endpoint": {
                        "url": "https://llm.example.org/v1",
                        "model_name": "qwen2.5-7b-instruct",
                        "auth_token": "sk-example-key",
                        "temperature": 0.0,
                        "max_concurrency": 4,
                        "daily_budget": 5000,
                    },
                },
                request_only=True,
            ),
            _out("Registered", JUDGE, "201"),
        ]
    ),
)
class JudgeViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = JudgeSerializer
    throttle_scopes = {"create": "creations"}  # evalhub/api/throttles.py
    # A researcher's own judges (the queryset); anybody signed in makes one.
    permission_classes = [
        permissions.by_method(GET=permissions.SignedIn, POST=permissions.SignedIn)
    ]
    lookup_field = "slug"
    filterset_fields: list[str] = []
    search_fields = ["slug", "name"]

    queryset = Judge.objects.none()

    def get_queryset(self):
        return Judge.objects.managed_by(self.request.user).select_related("owner", "endpoint")

    def perform_create(self, serializer):
        with transaction.atomic():
            serializer.save(owner=self.request.user)


@extend_schema_view(
    list=extend_schema(examples=[_out("Rubrics", [RUBRIC])]),
    retrieve=extend_schema(examples=[_out("Rubric", RUBRIC)]),
    create=extend_schema(
        examples=[
            OpenApiExample(
                "A new rubric (or the next version of a name)",
                value={k: RUBRIC[k] for k in ("task_kind", "name", "instructions")},
                request_only=True,
            ),
            _out("Saved", RUBRIC, "201"),
        ]
    ),
    revise=extend_schema(
        request=RubricReviseSerializer,
        responses={200: RubricSerializer, 201: RubricSerializer},
        examples=[
            OpenApiExample(
                "New instructions",
                value={"instructions": RUBRIC["instructions"] + " Be brief."},
                request_only=True,
            ),
            _out("Changed in place (no run used it)", RUBRIC),
            _out(
                "Saved as the next version (a run used it)",
                {**RUBRIC, "id": 8, "version": 3},
                "201",
            ),
        ],
    ),
)
class RubricViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = RubricSerializer
    throttle_scopes = {"create": "creations", "revise": "creations"}  # evalhub/api/throttles.py
    # Rubrics are shared; anybody signed in writes one, their author and staff revise it.
    permission_classes = [
        permissions.by_method(
            GET=permissions.SignedIn, POST=permissions.SignedIn, revise=permissions.IsManager
        )
    ]
    queryset = Rubric.objects.select_related("owner")
    filterset_fields = ["task_kind", "name"]

    def create(self, request):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        rubric = rubric_versions.create(
            owner=request.user,
            **{k: serializer.validated_data[k] for k in ("task_kind", "name", "instructions")},
        )
        return Response(self.get_serializer(rubric).data, status=status.HTTP_201_CREATED)

    @action(detail=True, methods=["post"])
    def revise(self, request, pk=None):
        rubric = self.get_object()
        body = RubricReviseSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        revised = rubric_versions.revise(
            rubric, instructions=body.validated_data["instructions"], owner=request.user
        )
        code = status.HTTP_200_OK if revised.pk == rubric.pk else status.HTTP_201_CREATED
        return Response(self.get_serializer(revised).data, status=code)


STATUS_FILTER = OpenApiParameter(
    "status", str, enum=list(AutomaticJudgment.Status.values), description="Only ok or failed ones."
)


@extend_schema_view(
    list=extend_schema(examples=[_out("Runs", [RUN])]),
    retrieve=extend_schema(examples=[_out("Run", RUN)]),
    create=extend_schema(
        examples=[
            OpenApiExample(
                "Start a run",
                value={
                    "judge": "qwen-judge",
                    "rubric": 1,
                    "campaign": "chateval-ab-2026",
                    "concurrency": 4,
                    "max_attempts": 3,
                },
                request_only=True,
            ),
            OpenApiExample(
                "Judge an arena's voted battles",
                value={"judge": "qwen-judge", "rubric": 9, "arena": "lab-arena"},
                request_only=True,
            ),
            _out(
                "Queued",
                {
                    **RUN,
                    "status": "queued",
                    "items_done": 0,
                    "items_failed": 0,
                    "percent": 0,
                    "prompt_tokens": 0,
                    "completion_tokens": 0,
                    "started_at": None,
                },
                "201",
            ),
            _out("Refused", REFUSED, "400"),
        ]
    ),
    progress=extend_schema(
        responses=JudgeRunProgressSerializer, examples=[_out("Progress", PROGRESS)]
    ),
    pause=extend_schema(request=None, examples=[_out("Paused", {**RUN, "status": "paused"})]),
    resume=extend_schema(
        request=None, examples=[_out("Queued again", {**RUN, "status": "queued"})]
    ),
    judgments=extend_schema(
        parameters=[STATUS_FILTER],
        responses=AutomaticJudgmentSerializer(many=True),
        examples=[_out("Automatic judgments", JUDGMENTS)],
    ),
)
class RunViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = RunSerializer
    throttle_scopes = {"create": "creations"}  # evalhub/api/throttles.py
    # The runs of a researcher's own judges (the queryset); `runs.start` checks the judge
    # and the campaign are theirs.
    permission_classes = [
        permissions.by_method(GET=permissions.SignedIn, POST=permissions.SignedIn)
    ]
    filterset_fields = ["status"]

    queryset = JudgeRun.objects.none()

    def get_queryset(self):
        queryset = JudgeRun.objects.select_related("judge", "rubric", "campaign", "arena")
        if permissions.is_staff(self.request.user):
            return queryset
        return queryset.filter(judge__owner=self.request.user)

    def create(self, request):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        run = runs.start(
            request.user,
            data["judge"],
            data["rubric"],
            data["campaign"],
            arena=data["arena"],
            concurrency=data["concurrency"],
            max_attempts=data["max_attempts"],
        )
        run.refresh_from_db()
        return Response(self.get_serializer(run).data, status=status.HTTP_201_CREATED)

    @action(detail=True, methods=["get"])
    def progress(self, request, pk=None):
        return Response(runs.progress(self.get_object()))

    @action(detail=True, methods=["post"])
    def pause(self, request, pk=None):
        return Response(self.get_serializer(runs.pause(self.get_object())).data)

    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        return Response(self.get_serializer(runs.resume(self.get_object())).data)

    @extend_schema(
        summary="The run's automatic judgments as a Hugging Face dataset (Parquet, zipped)",
        parameters=hf_api.PARAMETERS,
        responses=hf_api.RESPONSES,
    )
    @action(
        detail=True,
        methods=["get"],
        renderer_classes=hf_api.RENDERERS,
        filterset_fields=[],
        filter_backends=[],
    )
    def dataset(self, request, pk=None):
        run = self.get_object()
        license_id, citation = card_options(request.query_params)
        return dataset_response(
            export_parquet.tables(run),
            export_parquet.card_text(run, license=license_id, citation=citation),
            f"judge-run-{run.pk}",
        )

    @action(detail=True, methods=["get"], filterset_fields=[], filter_backends=[])
    def judgments(self, request, pk=None):
        run = self.get_object()
        judgments = run.judgments.select_related("item", "battle").order_by(
            "item__position", "battle__started_at", "pk"
        )
        wanted = request.query_params.get("status")
        if wanted in AutomaticJudgment.Status.values:
            judgments = judgments.filter(status=wanted)
        page = self.paginate_queryset(judgments)
        return self.get_paginated_response(AutomaticJudgmentSerializer(page, many=True).data)
