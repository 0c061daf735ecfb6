"""REST API of annotation: `POST /api/studies/abc-eval/` imports an ABC-Eval study.

Staff only, like the conversation import (`POST /api/conversations/import/`): an import
writes catalog conversations and creates systems, which researchers otherwise only do for
themselves. Multipart fields: `name`, `slug`, the files `conversations` and `behaviours`,
and optionally `likert` and `comparative` (the shapes of ``importers.abceval.study``).
201 with the counts; 400 with `{"errors": [{"line", "file", "message"} | {"field",
"message"}], "error_count": N}` (the first 20 problems) and nothing written.
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from evalhub import limits
from evalhub.api.parsers import FormParser, MultiPartParser
from evalhub.api.serializers import InputErrorsSerializer
from evalhub.permissions import IsStaff, by_method
from evalhub.services import read_upload
from evalhub.slugs import SLUG_HELP, validate_slug

from ..importers.abceval.study import import_abceval

FILES = ("conversations", "behaviours", "likert", "comparative")


class AbcEvalUploadSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=limits.NAME_CHARS)
    slug = serializers.CharField(max_length=80, validators=[validate_slug], help_text=SLUG_HELP)
    conversations = serializers.FileField()
    behaviours = serializers.FileField()
    likert = serializers.FileField(required=False)
    comparative = serializers.FileField(required=False)


class AbcEvalImport(APIView):
    throttle_scopes = {"post": "uploads"}  # evalhub/api/throttles.py
    permission_classes = [by_method(POST=IsStaff)]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request=AbcEvalUploadSerializer,
        responses={201: OpenApiTypes.OBJECT, 400: InputErrorsSerializer},
        examples=[
            OpenApiExample(
                "Imported",
                value={
                    "study": "abc-eval-2023",
                    "created": True,
                    "conversations_created": 400,
                    "conversations_unchanged": 0,
                    "dialogues_without_text": 0,
                    "workers_created": 51,
                    "judgments_created": 9600,
                    "judgments_unchanged": 0,
                    "campaigns": {
                        "abc-eval-2023-behaviours": {
                            "kind": "abc_eval",
                            "items_created": 400,
                            "judgments_created": 8000,
                            "judgments_unchanged": 0,
                        },
                        "abc-eval-2023-likert": {
                            "kind": "likert",
                            "items_created": 400,
                            "judgments_created": 1600,
                            "judgments_unchanged": 0,
                        },
                    },
                },
                response_only=True,
                status_codes=["201"],
            ),
            OpenApiExample(
                "A bad line",
                value={
                    "errors": [
                        {
                            "file": "behaviours.csv",
                            "line": 12,
                            "message": "Unknown dialogue id 'd-999'.",
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
        serializer = AbcEvalUploadSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        # A bad file or a bad study is a UserInputError: the API's exception handler answers
        # it in the one error shape.
        files = {
            key: (data[key].name, read_upload(data[key])) if key in data else None for key in FILES
        }
        result = import_abceval(name=data["name"], slug=data["slug"], user=request.user, **files)
        body = {
            "study": result.study.slug,
            "created": result.study_created,
            "conversations_created": result.conversations_created,
            "conversations_unchanged": result.conversations_unchanged,
            "dialogues_without_text": result.dialogues_without_text,
            "workers_created": result.workers,
            "judgments_created": result.judgments,
            "judgments_unchanged": result.judgments_unchanged,
            "campaigns": {
                slug: {
                    "kind": kind,
                    "items_created": counts.items,
                    "judgments_created": counts.judgments,
                    "judgments_unchanged": counts.judgments_unchanged,
                }
                for slug, (kind, counts) in result.campaign_counts().items()
            },
        }
        return Response(body, status=status.HTTP_201_CREATED)
