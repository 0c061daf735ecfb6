from django.urls import path

from . import results_views as views
from . import versus_views

app_name = "results"

urlpatterns = [
    path("studies/<slug:slug>/", views.study_detail, name="study"),
    path("studies/<slug:slug>/analyze/", views.analyze_study_view, name="analyze-study"),
    path("results/campaigns/<slug:slug>/", views.campaign_results, name="campaign"),
    path(
        "results/campaigns/<slug:slug>/analyze/",
        views.analyze_campaign_view,
        name="analyze-campaign",
    ),
    path(
        "results/campaigns/<slug:slug>/human-vs-automatic/",
        versus_views.campaign_versus,
        name="versus",
    ),
    path(
        "results/campaigns/<slug:slug>/human-vs-automatic/compare/",
        versus_views.compare_view,
        name="versus-compare",
    ),
    path("results/runs/<int:run_id>/plots/<slug:name>.svg", views.run_plot, name="plot"),
]
