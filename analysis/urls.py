from django.urls import path

from . import dialogue_views, report_card_views, views

app_name = "analysis"

urlpatterns = [
    path("", views.leaderboard_list, name="list"),
    path("manage/runs/", views.overview, name="overview"),
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
    path("<slug:slug>/", views.leaderboard_detail, name="detail"),
    path("<slug:slug>/analyze/", views.request_analysis, name="analyze"),
    path("<slug:slug>/plots/<int:run_id>/<slug:name>.svg", views.plot, name="plot"),
]
