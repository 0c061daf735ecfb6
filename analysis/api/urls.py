"""Mounted by evalhub/urls.py under /api/."""

from django.urls import include, path
from rest_framework.routers import SimpleRouter

from .analysis_runs import AnalysisRunViewSet
from .versus import HumanVsAutomatic
from .views import TournamentAnalyses, TournamentResults

router = SimpleRouter()
router.register("analysis-runs", AnalysisRunViewSet, basename="api-analysis-run")

urlpatterns = [
    path(
        "tournaments/<slug:slug>/results/",
        TournamentResults.as_view(),
        name="api-tournament-results",
    ),
    path(
        "tournaments/<slug:slug>/analyses/",
        TournamentAnalyses.as_view(),
        name="api-tournament-analyses",
    ),
    path(
        "judge-runs/<int:pk>/human-vs-automatic/",
        HumanVsAutomatic.as_view(),
        name="api-human-vs-automatic",
    ),
    path("", include(router.urls)),
]
