"""`/api/judge-runs/<id>/human-vs-automatic/`: an automatic judge run measured against its
campaign's humans, or against its arena's votes (``analysis.reports.human_vs_automatic``).

- `GET`: the latest successful comparison, its result typed by
  `HumanVsAutomaticResultSerializer` and the run's provenance under ``"run"``; 404 when the
  judge run does not exist for the user (they manage neither its campaign nor the
  campaign's tournament; for an arena's run, not the arena) or has no comparison yet.
- `POST` (the same people): request the comparison of the current judgments, with
  optional analysis parameters; answers the run (202 while queued, 200 when an identical
  comparison already succeeded). Nothing judged by both is a 400 in the one error shape.
"""

from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from analysis.api import examples
from analysis.api.serializers import HumanVsAutomaticResultSerializer
from analysis.models import AnalysisRun
from analysis.pages.comparisons import latest_comparison, may_compare_run
from analysis.runs.parameters import AnalysisParameters
from analysis.runs.tasks import analyze_judge_run
from evalhub.api.fields import DeclaredField
from evalhub.permissions import SignedIn, by_method
from judging.models import JudgeRun


class ComparisonRequestSerializer(serializers.Serializer):
    parameters = DeclaredField(
        AnalysisParameters,
        required=False,
        default=dict,
        help_text="Analysis parameters (analysis/runs/parameters.py); left out: the defaults.",
    )


class ComparisonRunSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    status = serializers.CharField()
    progress = serializers.CharField()
    parameters = serializers.DictField()


class ComparesIt(BasePermission):
    """Who may compare a judge run with the humans (`may_compare_run`: who manages its
    campaign or the campaign's tournament, or its arena); for anybody else it does not
    exist (404)."""

    def has_object_permission(self, request, view, obj):
        if not may_compare_run(request.user, obj):
            raise NotFound("No such judge run.")
        return True


def _judge_run(view, request, pk) -> JudgeRun:
    run = get_object_or_404(
        JudgeRun.objects.select_related("judge", "rubric", "campaign", "arena"), pk=pk
    )
    view.check_object_permissions(request, run)
    return run


class HumanVsAutomatic(APIView):
    permission_classes = [by_method(GET=(SignedIn, ComparesIt), POST=(SignedIn, ComparesIt))]

    @extend_schema(
        responses={200: HumanVsAutomaticResultSerializer},
        summary="Human versus automatic: the latest comparison of a judge run",
        examples=examples.VERSUS,
    )
    def get(self, request, pk):
        comparison = latest_comparison(_judge_run(self, request, pk))
        if comparison is None:
            raise Http404("This judge run has not been compared with the humans yet.")
        provenance = {
            "id": comparison.pk,
            "finished_at": comparison.finished_at,
            "parameters": comparison.parameters,
            "inputs_digest": comparison.inputs_digest,
            "versions": comparison.versions,
        }
        return Response(
            HumanVsAutomaticResultSerializer({**comparison.result, "run": provenance}).data
        )

    @extend_schema(
        request=ComparisonRequestSerializer,
        responses={200: ComparisonRunSerializer, 202: ComparisonRunSerializer},
        summary="Compare a judge run with the humans",
        examples=[
            OpenApiExample(
                "Fewer resamples",
                value={"parameters": {"judge_resamples": 500}},
                request_only=True,
            ),
            *examples.VERSUS_REQUESTED,
        ],
    )
    def post(self, request, pk):
        judge_run = _judge_run(self, request, pk)
        given = ComparisonRequestSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        run = analyze_judge_run(judge_run, given.validated_data["parameters"], user=request.user)
        done = run.status == AnalysisRun.Status.SUCCEEDED
        return Response(
            ComparisonRunSerializer(run).data,
            status=status.HTTP_200_OK if done else status.HTTP_202_ACCEPTED,
        )
