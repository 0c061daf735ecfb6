"""`GET /api/tournaments/<slug>/results/`: the latest successful analysis of a tournament;
`/api/tournaments/<slug>/analyses/`: the analysis settings (GET) and a new analysis (POST).

The body is the result contract of ``analysis.reports`` with the run's provenance under
``"run"`` (id, finish time, parameters, inputs digest, library versions), exactly what
``manage.py analyze --json`` writes. 404 when the tournament does not exist, when the user
may not see its results yet (unpublished, and not its owner or staff: it does not exist for
them), or when it has no successful run.
"""

from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticatedOrReadOnly
from rest_framework.response import Response
from rest_framework.views import APIView

from analysis.api import examples
from analysis.api.serializers import ResultContractSerializer
from analysis.inputs.judgments import NoCampaign
from analysis.models import AnalysisRun
from analysis.pages.leaderboards import contract, latest_succeeded_run
from analysis.reports import NothingToAnalyse
from analysis.runs.parameters import PRESET_DESCRIPTIONS, PRESETS, parameter_rows, preset_parameters
from analysis.runs.tasks import analyze_tournament
from evalhub.declared import DeclaredInvalid
from evalhub.errors import UserInputError
from evalhub.permissions import manageable_or_403, visible_or_404
from tournaments.models import Tournament


class TournamentResults(APIView):
    @extend_schema(
        responses={200: ResultContractSerializer},
        summary="Latest analysis results",
        examples=examples.RESULTS,
    )
    def get(self, request, slug):
        tournament = visible_or_404(
            request.user, get_object_or_404(Tournament, slug=slug), "No such tournament."
        )
        run = latest_succeeded_run(tournament)
        if run is None:
            raise Http404("This tournament has no analysis results yet.")
        return Response(contract(run))


class TournamentAnalysisRequestSerializer(serializers.Serializer):
    preset = serializers.ChoiceField(choices=list(PRESETS), default="defaults")
    parameters = serializers.DictField(
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

    permission_classes = [IsAuthenticatedOrReadOnly]

    @extend_schema(
        responses={200: AnalysisSettingsSerializer},
        summary="Analysis settings",
        examples=examples.SETTINGS,
    )
    def get(self, request, slug):
        visible_or_404(
            request.user, get_object_or_404(Tournament, slug=slug), "No such tournament."
        )
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
        tournament = visible_or_404(
            request.user, get_object_or_404(Tournament, slug=slug), "No such tournament."
        )
        manageable_or_403(
            request.user, tournament, "Only the tournament's owner and staff analyse it."
        )
        given = TournamentAnalysisRequestSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            parameters = preset_parameters(
                given.validated_data["preset"], given.validated_data["parameters"]
            )
            run = analyze_tournament(tournament, parameters, user=request.user)
        except DeclaredInvalid as invalid:
            raise UserInputError.from_fields(
                {
                    f"parameters.{field}" if field else "parameters": m
                    for field, m in invalid.errors.items()
                }
            ) from None
        except (NoCampaign, NothingToAnalyse) as reason:
            raise UserInputError(str(reason)) from None
        run.tournament = tournament
        done = run.status == AnalysisRun.Status.SUCCEEDED
        return Response(
            TournamentAnalysisRunSerializer(run).data,
            status=status.HTTP_200_OK if done else status.HTTP_202_ACCEPTED,
        )
