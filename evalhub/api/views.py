"""REST API of the catalog. Visibility rules are the pages' own (System.objects.visible_to)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import Throttled
from rest_framework.generics import RetrieveAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import PromptSet, Submission, System
from ..permissions import Anyone, IsManager, IsStaff, IsViewer, SignedIn, by_method
from ..quotas import check_quota
from ..seed_uploads import allow_seed_upload
from ..services import (
    create_prompt_set,
    import_conversations,
    import_seed_conversations,
    read_upload,
    submit_responses,
)
from ..uniqueness import SlugTaken, unique_slug
from .parsers import FormParser, MultiPartParser
from .serializers import (
    ConversationImportSerializer,
    ConversationUploadSerializer,
    InputErrorsSerializer,
    PromptSetDetailSerializer,
    PromptSetSerializer,
    PromptSetUploadSerializer,
    SeedConversationUploadSerializer,
    SubmissionSerializer,
    SubmissionUploadSerializer,
    SystemSerializer,
)

SYSTEM = {
    "slug": "seq2seq-attn",
    "name": "Seq2seq with attention",
    "description": "LSTM encoder-decoder trained on OpenSubtitles.",
    "paper_url": "https://example.org/paper.pdf",
    "code_url": "https://example.org/code",
    "weights_url": "",
    "owner": "alice",
    "is_baseline": False,
    "visibility": "public",
    "embargo_until": None,
    "created": "2026-11-20T09:30:00Z",
}
SYSTEM_IN = {k: SYSTEM[k] for k in ("slug", "name", "description", "visibility")}
PROMPT_SET = {
    "slug": "dbdc-eval",
    "name": "DBDC evaluation prompts",
    "description": "Two-turn contexts from the Dialogue Breakdown Detection Challenge.",
    "source": "DBDC 2017",
    "version": "1",
    "prompt_count": 200,
    "created": "2026-11-18T14:02:11Z",
}
SUBMISSION = {
    "id": "6f1c2a8e-3b4d-4e5f-8a9b-0c1d2e3f4a5b",
    "system": "seq2seq-attn",
    "prompt_set": "dbdc-eval",
    "status": "scored",
    "format": "txt",
    "original_filename": "responses.txt",
    "baselines": ["human-reference"],
    "metrics": {"n_responses": 200, "n_empty": 2, "avg_length": 9.4, "distinct_1": 0.12},
    "error_report": [],
    "warnings": [{"line": 17, "message": "Empty response."}],
    "created": "2026-11-20T10:00:00Z",
    "scored_at": "2026-11-20T10:00:04Z",
}
ERRORS = OpenApiExample(
    "Refused upload",
    value={"errors": [{"line": 3, "message": "Duplicate prompt id 'p2'."}], "error_count": 1},
    response_only=True,
    status_codes=["400"],
)


def _out(name, value, code="200"):
    return OpenApiExample(name, value=value, response_only=True, status_codes=[code])


@extend_schema_view(
    list=extend_schema(examples=[_out("Prompt sets", [PROMPT_SET])]),
    retrieve=extend_schema(
        examples=[
            _out(
                "Prompt set with its prompts",
                {
                    **PROMPT_SET,
                    "prompts": [
                        {
                            "id": "p1",
                            "position": 1,
                            "context": ["Hi, how are you?", "Fine. And you?"],
                            "references": ["Great, thanks!"],
                        }
                    ],
                },
            )
        ]
    ),
    create=extend_schema(examples=[_out("Created", PROMPT_SET, "201"), ERRORS]),
)
class PromptSetViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    lookup_field = "slug"
    search_fields = ["name", "slug", "description", "source"]
    ordering_fields = ["name", "created", "slug"]
    ordering = ["name"]
    throttle_scopes = {"create": "uploads"}  # evalhub/api/throttles.py
    permission_classes = [by_method(GET=Anyone, POST=IsStaff)]
    parser_classes = [MultiPartParser, FormParser]

    def get_queryset(self):
        queryset = PromptSet.objects.order_by("name", "pk")
        if self.action == "retrieve":
            queryset = queryset.prefetch_related("prompts")
        return queryset

    def get_serializer_class(self):
        if self.action == "create":
            return PromptSetUploadSerializer
        if self.action == "retrieve":
            return PromptSetDetailSerializer
        return PromptSetSerializer

    @extend_schema(responses={201: PromptSetSerializer, 400: InputErrorsSerializer})
    def create(self, request, *args, **kwargs):
        serializer = PromptSetUploadSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        upload = data.pop("file")
        prompt_set = create_prompt_set(
            data=read_upload(upload), filename=upload.name, user=request.user, **data
        )
        return Response(PromptSetSerializer(prompt_set).data, status=status.HTTP_201_CREATED)


@extend_schema_view(
    list=extend_schema(examples=[_out("Systems", [SYSTEM])]),
    retrieve=extend_schema(examples=[_out("System", SYSTEM)]),
    create=extend_schema(
        examples=[
            OpenApiExample("New system", value=SYSTEM_IN, request_only=True),
            _out("Created", SYSTEM, "201"),
        ]
    ),
    update=extend_schema(
        examples=[
            OpenApiExample("Replace", value=SYSTEM_IN, request_only=True),
            _out("Updated", SYSTEM),
        ]
    ),
    partial_update=extend_schema(
        examples=[
            OpenApiExample("Make private", value={"visibility": "private"}, request_only=True),
            _out("Updated", {**SYSTEM, "visibility": "private"}),
        ]
    ),
    submissions=extend_schema(examples=[_out("Submissions", [SUBMISSION])]),
)
class SystemViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    lookup_field = "slug"
    serializer_class = SystemSerializer
    filterset_fields = ["visibility", "is_baseline"]
    search_fields = ["name", "slug", "description", "owner__username"]
    ordering_fields = ["name", "created", "slug"]
    ordering = ["name"]
    throttle_scopes = {"create": "creations", "submit": "uploads"}  # evalhub/api/throttles.py
    # Anybody reads what they may see (the queryset); the owner and staff change a system
    # and submit its responses.
    permission_classes = [
        by_method(GET=Anyone, POST=SignedIn, PUT=IsManager, PATCH=IsManager, submit=IsManager)
    ]

    def get_queryset(self):
        return (
            System.objects.visible_to(self.request.user)
            .select_related("owner")
            .order_by("name", "pk")
        )

    def perform_create(self, serializer):
        check_quota(self.request.user, System)
        slug = serializer.validated_data.get("slug", "")
        try:
            with unique_slug(System, slug):
                serializer.save(owner=self.request.user)
        except SlugTaken as taken:
            raise serializers.ValidationError({"slug": [str(taken)]}) from None

    @extend_schema(responses=SubmissionSerializer(many=True))
    @action(detail=True, methods=["get"], url_path="submissions")
    def submissions(self, request, slug=None):
        system = self.get_object()
        queryset = system.submissions.select_related("system", "prompt_set").prefetch_related(
            "baselines"
        )
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(SubmissionSerializer(page, many=True).data)

    @extend_schema(
        request=SubmissionUploadSerializer,
        responses={201: SubmissionSerializer, 400: InputErrorsSerializer},
        examples=[_out("Scored", SUBMISSION, "201"), ERRORS],
    )
    @submissions.mapping.post
    def submit(self, request, slug=None):
        system = self.get_object()
        serializer = SubmissionUploadSerializer(data=request.data, user=request.user, system=system)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        submission = submit_responses(
            system=system,
            prompt_set=serializer.validated_data["prompt_set"],
            data=read_upload(upload),
            filename=upload.name,
            fmt=serializer.validated_data.get("format"),
            baselines=serializer.validated_data.get("baselines", []),
            user=request.user,
            columns=serializer.validated_data.get("columns"),
        )
        submission.refresh_from_db()
        return Response(SubmissionSerializer(submission).data, status=status.HTTP_201_CREATED)

    def get_parsers(self):
        if getattr(self, "action", None) == "submit":
            return [MultiPartParser(), FormParser()]
        return super().get_parsers()


@extend_schema_view(get=extend_schema(examples=[_out("Submission", SUBMISSION)]))
class SubmissionDetail(RetrieveAPIView):
    serializer_class = SubmissionSerializer
    permission_classes = [by_method(GET=IsViewer)]

    def get_object(self):
        submission = get_object_or_404(
            Submission.objects.select_related("system", "prompt_set"),
            public_id=self.kwargs["public_id"],
        )
        # A submission is seen by who sees its system; others get the 404 of a submission
        # that does not exist: nothing leaks.
        self.check_object_permissions(self.request, submission.system)
        return submission


class ConversationImport(APIView):
    """Staff import conversations (JSON lines); every problem comes back with its line."""

    throttle_scopes = {"post": "uploads"}  # evalhub/api/throttles.py
    permission_classes = [by_method(POST=IsStaff)]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request=ConversationUploadSerializer,
        responses={201: ConversationImportSerializer, 400: InputErrorsSerializer},
        examples=[
            _out(
                "Imported",
                {"created": 120, "unchanged": 4, "systems_created": ["kvmemnn"]},
                "201",
            ),
            ERRORS,
        ],
    )
    def post(self, request):
        serializer = ConversationUploadSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        result = import_conversations(
            data=read_upload(upload),
            filename=upload.name,
            user=request.user,
            source=serializer.validated_data.get("source"),
            columns=serializer.validated_data.get("columns"),
        )
        data = ConversationImportSerializer(result).data
        return Response(data, status=status.HTTP_201_CREATED)


class SeedConversationUpload(APIView):
    """A signed-in researcher uploads human-human seed conversations for a domain; a line
    with a system speaker is refused with its line, and nothing is stored."""

    throttle_scopes = {"post": "uploads"}  # evalhub/api/throttles.py
    permission_classes = [by_method(POST=SignedIn)]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request=SeedConversationUploadSerializer,
        responses={201: ConversationImportSerializer, 400: InputErrorsSerializer},
        examples=[
            _out("Imported seeds", {"created": 40, "unchanged": 0, "systems_created": []}, "201"),
            OpenApiExample(
                "A bot speaker refused",
                value={
                    "errors": [
                        {
                            "line": 7,
                            "message": "speaker 'kvmemnn' is a system: seed conversations "
                            "are between people only.",
                        }
                    ],
                    "error_count": 1,
                },
                response_only=True,
                status_codes=["400"],
            ),
        ],
    )
    def post(self, request):
        if not allow_seed_upload(request.user):
            raise Throttled(detail="Too many seed uploads this hour; try again later.")
        serializer = SeedConversationUploadSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        result = import_seed_conversations(
            data=read_upload(upload), filename=upload.name, user=request.user
        )
        data = ConversationImportSerializer(result).data
        return Response(data, status=status.HTTP_201_CREATED)
