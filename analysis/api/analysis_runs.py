"""`/api/analysis-runs/`: analysis runs and their typed results.

- `GET /api/analysis-runs/` lists the runs of tournaments the user may see and campaigns
  they manage (filter `?tournament=`, `?campaign=`, `?status=`; newest first), without
  results; `GET /api/analysis-runs/<id>/` adds the result (`ReportSerializer`).
- `POST /api/analysis-runs/` (the tournament's owner and staff, as the page's "Analyse"
  button and `POST /api/tournaments/<slug>/analyses/`) asks for the run of a
  tournament's current judgments with the given parameters: the existing one when it
  matches, else a new one queued (201). Bad parameters and a tournament with nothing to
  analyse answer 400 in the one error shape.
"""

import django_filters
from django.db.models import Q
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from analysis.api import examples
from analysis.api.serializers import AnalysisRunDetailSerializer, AnalysisRunSerializer
from analysis.models import AnalysisRun
from analysis.runs import export_parquet
from analysis.runs.parameters import AnalysisParameters
from analysis.runs.tasks import analyze_tournament
from annotation.models import Campaign
from evalhub.api.fields import DeclaredField
from evalhub.api.serializers import InputErrorsSerializer
from evalhub.hf import api as hf_api
from evalhub.hf.bundle import dataset_response
from evalhub.hf.card import card_options
from evalhub.hf.parquet import ExportError
from evalhub.permissions import Anyone, IsManager, by_method, managed_by
from tournaments.models import Tournament


class AnalysisRunFilter(django_filters.FilterSet):
    tournament = django_filters.CharFilter(field_name="tournament__slug")
    campaign = django_filters.CharFilter(field_name="campaign__slug")

    class Meta:
        model = AnalysisRun
        fields = ["tournament", "campaign", "status"]


class AnalysisRequestSerializer(serializers.Serializer):
    tournament = serializers.CharField(help_text="The tournament's slug.")
    parameters = DeclaredField(
        AnalysisParameters,
        required=False,
        default=dict,
        help_text="Analysis parameters (analysis/runs/parameters.py); left out: the defaults.",
    )


@extend_schema_view(
    list=extend_schema(summary="Analysis runs you may see", examples=examples.RUN_LIST),
    retrieve=extend_schema(
        summary="One analysis run with its typed result", examples=examples.RUN_DETAIL
    ),
)
class AnalysisRunViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    filterset_class = AnalysisRunFilter
    throttle_scopes = {"create": "creations"}  # evalhub/api/throttles.py
    # Anybody lists the runs they may see (the queryset); a run is requested by the
    # tournament's managers, the same rule as POST /api/tournaments/<slug>/analyses/.
    permission_classes = [by_method(GET=Anyone, POST=IsManager)]
    ordering_fields = ["created", "finished_at"]
    ordering = ["-created"]

    def get_queryset(self):
        user = self.request.user
        tournaments = Tournament.objects.visible_to(user)
        campaigns = managed_by(Campaign.objects.all(), user)
        runs = AnalysisRun.objects.filter(
            Q(tournament__in=tournaments) | Q(tournament__isnull=True, campaign__in=campaigns)
        ).select_related("tournament", "campaign")
        if self.action != "retrieve":
            runs = runs.defer("result", "plots")
        return runs.defer("plots").order_by("-created", "-pk")

    @extend_schema(
        summary="The run's results as a Hugging Face dataset (Parquet, zipped)",
        parameters=hf_api.PARAMETERS,
        responses=hf_api.RESPONSES,
    )
    @action(detail=True, methods=["get"], renderer_classes=hf_api.RENDERERS)
    def dataset(self, request, pk=None):
        run = self.get_object()
        if run.status != AnalysisRun.Status.SUCCEEDED:
            raise ExportError(f"The run has no results: it is {run.get_status_display().lower()}.")
        license_id, citation = card_options(request.query_params)
        return dataset_response(
            export_parquet.tables(run),
            export_parquet.card_text(run, license=license_id, citation=citation),
            f"analysis-run-{run.pk}",
        )

    def get_serializer_class(self):
        if self.action == "create":
            return AnalysisRequestSerializer
        if self.action == "retrieve":
            return AnalysisRunDetailSerializer
        return AnalysisRunSerializer

    @extend_schema(
        summary="Analyse a tournament (its owner and staff)",
        request=AnalysisRequestSerializer,
        responses={
            200: AnalysisRunSerializer,
            201: AnalysisRunSerializer,
            400: InputErrorsSerializer,
        },
        examples=[
            OpenApiExample(
                "Excluding blocked workers",
                request_only=True,
                value={"tournament": "spring-2026", "parameters": {"exclude_blocked": True}},
            ),
            *examples.RUN_CREATED,
        ],
    )
    def create(self, request):
        serializer = AnalysisRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        tournament = get_object_or_404(Tournament, slug=data["tournament"])
        self.check_object_permissions(request, tournament)
        before = set(AnalysisRun.objects.filter(tournament=tournament).values_list("pk", flat=True))
        # NoCampaign and NothingToAnalyse are UserInputErrors: answered as 400.
        run = analyze_tournament(tournament, data["parameters"], user=request.user)
        code = status.HTTP_200_OK if run.pk in before else status.HTTP_201_CREATED
        return Response(AnalysisRunSerializer(run).data, status=code)
