"""Mounted by evalhub/urls.py under /api/."""

from django.urls import path

from .views import ArenaLeaderboard, BattleExport, BattleImport

urlpatterns = [
    path(
        "arenas/<slug:slug>/leaderboard/", ArenaLeaderboard.as_view(), name="api-arena-leaderboard"
    ),
    path("arenas/<slug:slug>/battles/import/", BattleImport.as_view(), name="api-arena-import"),
    path("arenas/<slug:slug>/battles/export/", BattleExport.as_view(), name="api-arena-export"),
]
