"""REST API of the catalog. Visibility rules are the pages' own (System.objects.visible_to)."""

from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.generics import RetrieveAPIView
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAdminUser, IsAuthenticatedOrReadOnly
from rest_framework.response import Response
from rest_framework.views import APIView

from ..importers.problems import InvalidUpload
from ..models import PromptSet, Submission, System
from ..services import create_prompt_set, import_conversations, read_upload, submit_responses
from .permissions import IsOwnerOrStaffOrReadOnly, IsStaffOrReadOnly
from .serializers import (
    ConversationImportSerializer,
    ConversationUploadSerializer,
    PromptSetDetailSerializer,
    PromptSetSerializer,
    PromptSetUploadSerializer,
    SubmissionSerializer,
    SubmissionUploadSerializer,
    SystemSerializer,
)


def invalid_upload_response(invalid: InvalidUpload) -> Response:
    return Response(invalid.as_dict(), status=status.HTTP_400_BAD_REQUEST)


class PromptSetViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    lookup_field = "slug"
    permission_classes = [IsStaffOrReadOnly]
    parser_classes = [MultiPartParser, FormParser]

    def get_queryset(self):
        queryset = PromptSet.objects.all()
        if self.action == "retrieve":
            queryset = queryset.prefetch_related("prompts")
        return queryset

    def get_serializer_class(self):
        if self.action == "create":
            return PromptSetUploadSerializer
        if self.action == "retrieve":
            return PromptSetDetailSerializer
        return PromptSetSerializer

    @extend_schema(responses={201: PromptSetSerializer})
    def create(self, request, *args, **kwargs):
        serializer = PromptSetUploadSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        upload = data.pop("file")
        try:
            prompt_set = create_prompt_set(
                data=read_upload(upload), filename=upload.name, user=request.user, **data
            )
        except InvalidUpload as invalid:
            return invalid_upload_response(invalid)
        return Response(PromptSetSerializer(prompt_set).data, status=status.HTTP_201_CREATED)


class SystemViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    lookup_field = "slug"
    serializer_class = SystemSerializer
    permission_classes = [IsAuthenticatedOrReadOnly, IsOwnerOrStaffOrReadOnly]

    def get_queryset(self):
        return System.objects.visible_to(self.request.user).select_related("owner")

    def perform_create(self, serializer):
        serializer.save(owner=self.request.user)

    @extend_schema(responses=SubmissionSerializer(many=True))
    @action(detail=True, methods=["get"], url_path="submissions")
    def submissions(self, request, slug=None):
        system = self.get_object()
        queryset = system.submissions.select_related("system", "prompt_set").prefetch_related(
            "baselines"
        )
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(SubmissionSerializer(page, many=True).data)

    @extend_schema(request=SubmissionUploadSerializer, responses={201: SubmissionSerializer})
    @submissions.mapping.post
    def submit(self, request, slug=None):
        system = self.get_object()
        if not system.is_editable_by(request.user):
            raise PermissionDenied("Only the owner of a system can submit its responses.")
        serializer = SubmissionUploadSerializer(data=request.data, user=request.user, system=system)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        try:
            submission = submit_responses(
                system=system,
                prompt_set=serializer.validated_data["prompt_set"],
                data=read_upload(upload),
                filename=upload.name,
                fmt=serializer.validated_data.get("format"),
                baselines=serializer.validated_data.get("baselines", []),
                user=request.user,
            )
        except InvalidUpload as invalid:
            return invalid_upload_response(invalid)
        submission.refresh_from_db()
        return Response(SubmissionSerializer(submission).data, status=status.HTTP_201_CREATED)

    def get_parsers(self):
        if getattr(self, "action", None) == "submit":
            return [MultiPartParser(), FormParser()]
        return super().get_parsers()


class SubmissionDetail(RetrieveAPIView):
    serializer_class = SubmissionSerializer

    def get_object(self):
        submission = get_object_or_404(
            Submission.objects.select_related("system", "prompt_set"),
            public_id=self.kwargs["public_id"],
        )
        if not submission.system.is_visible_to(self.request.user):
            # Same answer as for a submission that does not exist: nothing leaks.
            raise Http404("No such submission.")
        return submission


class ConversationImport(APIView):
    """Staff import conversations (JSON lines); every problem comes back with its line."""

    permission_classes = [IsAdminUser]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request=ConversationUploadSerializer, responses={201: ConversationImportSerializer}
    )
    def post(self, request):
        serializer = ConversationUploadSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        try:
            result = import_conversations(
                data=read_upload(upload),
                filename=upload.name,
                user=request.user,
                source=serializer.validated_data.get("source"),
            )
        except InvalidUpload as invalid:
            return invalid_upload_response(invalid)
        data = ConversationImportSerializer(result).data
        return Response(data, status=status.HTTP_201_CREATED)
