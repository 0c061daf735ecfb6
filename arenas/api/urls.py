"""Mounted by evalhub/urls.py under /api/."""

from django.urls import path

from .views import ArenaLeaderboard, ArenaPlan, ArenaStopping, BattleExport, BattleImport

urlpatterns = [
    path(
        "arenas/<slug:slug>/leaderboard/", ArenaLeaderboard.as_view(), name="api-arena-leaderboard"
    ),
    # Pairing (issue 27): the budget planner and the stopping rule.
    path("arenas/<slug:slug>/plan/", ArenaPlan.as_view(), name="api-arena-plan"),
    path("arenas/<slug:slug>/stopping/", ArenaStopping.as_view(), name="api-arena-stopping"),
    path("arenas/<slug:slug>/battles/import/", BattleImport.as_view(), name="api-arena-import"),
    path("arenas/<slug:slug>/battles/export/", BattleExport.as_view(), name="api-arena-export"),
]
