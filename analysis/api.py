"""`GET /api/tournaments/<slug>/results/`: the latest successful analysis of a tournament.

The body is the result contract of ``analysis.report`` with the run's provenance under
``"run"`` (id, finish time, parameters, inputs digest, library versions), exactly what
``manage.py analyze --json`` writes. 404 when the tournament does not exist, when the user
may not see its results yet (unpublished, and not its owner or staff: it does not exist for
them), or when it has no successful run.
"""

from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from tournaments.models import Tournament

from .leaderboards import contract, latest_succeeded_run


class TournamentResults(APIView):
    @extend_schema(responses={200: OpenApiTypes.OBJECT}, summary="Latest analysis results")
    def get(self, request, slug):
        tournament = get_object_or_404(Tournament, slug=slug)
        if not tournament.is_visible_to(request.user):
            raise Http404("No such tournament.")
        run = latest_succeeded_run(tournament)
        if run is None:
            raise Http404("This tournament has no analysis results yet.")
        return Response(contract(run))


# Included by evalhub/api/urls.py at "tournaments/<slug:slug>/results/".
urlpatterns = [path("", TournamentResults.as_view(), name="api-tournament-results")]
