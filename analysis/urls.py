"""Every page of the analysis app, in two namespaces that predate this one module.

``analysis:`` is the leaderboards, mounted under /leaderboards/; ``results:`` is the
study and campaign result pages at the root (/studies/..., /results/...). Templates and
links name both, so both namespaces are kept; the root URLconf includes this module once.
"""

from django.urls import include, path

from analysis.pages import (
    dialogue_views,
    leaderboard_views,
    report_card_views,
    results_views,
    versus_views,
)

leaderboard_patterns = [
    path("", leaderboard_views.leaderboard_list, name="list"),
    path("manage/runs/", leaderboard_views.overview, name="overview"),
    path(
        "dialogues/<slug:scope>/<str:name>/",
        dialogue_views.dialogue_metrics,
        name="dialogue-metrics",
    ),
    path(
        "systems/<slug:slug>/behaviours/<str:label>/",
        report_card_views.behaviour_evidence,
        name="behaviour-evidence",
    ),
    path("<slug:slug>/", leaderboard_views.leaderboard_detail, name="detail"),
    path("<slug:slug>/analyze/", leaderboard_views.request_analysis, name="analyze"),
    path("<slug:slug>/plots/<int:run_id>/<slug:name>.svg", leaderboard_views.plot, name="plot"),
    path(
        "<slug:slug>/runs/<int:run_id>/stability/retry/",
        leaderboard_views.retry_stability,
        name="retry-stability",
    ),
]

results_patterns = [
    path("studies/<slug:slug>/", results_views.study_detail, name="study"),
    path("studies/<slug:slug>/analyze/", results_views.analyze_study_view, name="analyze-study"),
    path("results/campaigns/<slug:slug>/", results_views.campaign_results, name="campaign"),
    path(
        "results/campaigns/<slug:slug>/analyze/",
        results_views.analyze_campaign_view,
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
    path(
        "results/arenas/<slug:slug>/human-vs-automatic/",
        versus_views.arena_versus,
        name="arena-versus",
    ),
    path(
        "results/arenas/<slug:slug>/human-vs-automatic/compare/",
        versus_views.arena_compare_view,
        name="arena-versus-compare",
    ),
    path("results/runs/<int:run_id>/plots/<slug:name>.svg", results_views.run_plot, name="plot"),
    path("results/runs/<int:run_id>/dataset.zip", results_views.run_dataset, name="run-dataset"),
]

urlpatterns = [
    path("leaderboards/", include((leaderboard_patterns, "analysis"))),
    path("", include((results_patterns, "results"))),
]
