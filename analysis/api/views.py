"""`GET /api/tournaments/<slug>/results/`: the latest successful analysis of a tournament;
`/api/tournaments/<slug>/analyses/`: the analysis settings (GET) and a new analysis (POST).

The body is the result contract of ``analysis.reports`` with the run's provenance under
``"run"`` (id, finish time, parameters, inputs digest, library versions), exactly what
``manage.py analyze --json`` writes; ``"stability"`` is null while the run's stability
curve is computed after it (``run.stability``: "pending" or "running"; a part nobody
computes is queued by this request, as the page does). 404 when the tournament does not exist, when the user
may not see its results yet (unpublished, and not its owner or staff: it does not exist for
them), or when it has no successful run.
"""

from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from analysis.api import examples
from analysis.api.serializers import ResultContractSerializer
from analysis.models import AnalysisRun
from analysis.pages.leaderboards import contract, latest_succeeded_run
from analysis.runs import stability as stability_part
from analysis.runs.parameters import (
    PRESET_DESCRIPTIONS,
    PRESETS,
    AnalysisParameters,
    parameter_rows,
    preset_parameters,
)
from analysis.runs.tasks import analyze_tournament
from evalhub.api.fields import DeclaredField
from evalhub.permissions import IsManager, IsViewer, by_method
from tournaments.models import Tournament


class TournamentResults(APIView):
    permission_classes = [by_method(GET=IsViewer)]

    @extend_schema(
        responses={200: ResultContractSerializer},
        summary="Latest analysis results",
        examples=examples.RESULTS,
    )
    def get(self, request, slug):
        tournament = get_object_or_404(Tournament, slug=slug)
        self.check_object_permissions(request, tournament)
        run = latest_succeeded_run(tournament)
        if run is None:
            raise Http404("This tournament has no analysis results yet.")
        stability_part.pending(run)  # a stability curve nobody computes is queued
        return Response(contract(run))


class TournamentAnalysisRequestSerializer(serializers.Serializer):
    preset = serializers.ChoiceField(choices=list(PRESETS), default="defaults")
    parameters = DeclaredField(
        AnalysisParameters,
        required=False,
        default=dict,
        help_text="Parameters of analysis.runs.parameters that differ from the preset's.",
    )


class TournamentAnalysisRunSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    status = serializers.CharField()
    progress = serializers.CharField()
    parameters = serializers.DictField()
    results = serializers.SerializerMethodField()

    def get_results(self, run) -> str:
        return reverse("api-tournament-results", args=[run.tournament.slug])


class AnalysisSettingsSerializer(serializers.Serializer):
    presets = serializers.DictField()
    parameters = serializers.ListField(child=serializers.DictField())


class TournamentAnalyses(APIView):
    """`GET`: the presets and the declared parameters; `POST` (owner or staff): request an
    analysis with a preset and parameter overrides. Answers the run (202 while it is
    queued, 200 when an identical run already succeeded)."""

    throttle_scopes = {"post": "creations"}  # evalhub/api/throttles.py
    # The same rule as POST /api/analysis-runs/: the tournament's owner and staff.
    permission_classes = [by_method(GET=IsViewer, POST=IsManager)]

    @extend_schema(
        responses={200: AnalysisSettingsSerializer},
        summary="Analysis settings",
        examples=examples.SETTINGS,
    )
    def get(self, request, slug):
        self.check_object_permissions(request, get_object_or_404(Tournament, slug=slug))
        presets = {
            name: {"description": PRESET_DESCRIPTIONS[name], "parameters": preset_parameters(name)}
            for name in PRESETS
        }
        return Response({"presets": presets, "parameters": parameter_rows()})

    @extend_schema(
        request=TournamentAnalysisRequestSerializer,
        responses={200: TournamentAnalysisRunSerializer, 202: TournamentAnalysisRunSerializer},
        summary="Request an analysis",
        examples=examples.ANALYSE,
    )
    def post(self, request, slug):
        tournament = get_object_or_404(Tournament, slug=slug)
        self.check_object_permissions(request, tournament)
        given = TournamentAnalysisRequestSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        parameters = preset_parameters(
            given.validated_data["preset"], given.validated_data["parameters"]
        )
        # NoCampaign and NothingToAnalyse are UserInputErrors: answered as 400.
        run = analyze_tournament(tournament, parameters, user=request.user)
        run.tournament = tournament
        done = run.status == AnalysisRun.Status.SUCCEEDED
        return Response(
            TournamentAnalysisRunSerializer(run).data,
            status=status.HTTP_200_OK if done else status.HTTP_202_ACCEPTED,
        )
