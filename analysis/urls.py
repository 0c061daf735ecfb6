from django.urls import path

from . import views

app_name = "analysis"

urlpatterns = [
    path("", views.leaderboard_list, name="list"),
    path("manage/runs/", views.overview, name="overview"),
    path("<slug:slug>/", views.leaderboard_detail, name="detail"),
    path("<slug:slug>/analyze/", views.request_analysis, name="analyze"),
    path("<slug:slug>/plots/<int:run_id>/<slug:name>.svg", views.plot, name="plot"),
]
