"""Mounted by evalhub/urls.py under /api/."""

from django.urls import path

from .moderation import ArenaModeration, FlaggedBattles, FlagReview
from .views import (
    ArenaLeaderboard,
    ArenaPlan,
    ArenaStopping,
    BattleDatasetExport,
    BattleExport,
    BattleImport,
)

urlpatterns = [
    path(
        "arenas/<slug:slug>/leaderboard/", ArenaLeaderboard.as_view(), name="api-arena-leaderboard"
    ),
    # Pairing (issue 27): the budget planner and the stopping rule.
    path("arenas/<slug:slug>/plan/", ArenaPlan.as_view(), name="api-arena-plan"),
    path("arenas/<slug:slug>/stopping/", ArenaStopping.as_view(), name="api-arena-stopping"),
    path("arenas/<slug:slug>/battles/import/", BattleImport.as_view(), name="api-arena-import"),
    path("arenas/<slug:slug>/battles/export/", BattleExport.as_view(), name="api-arena-export"),
    path(
        "arenas/<slug:slug>/battles/export/dataset/",
        BattleDatasetExport.as_view(),
        name="api-arena-export-dataset",
    ),
    path("arenas/<slug:slug>/moderation/", ArenaModeration.as_view(), name="api-arena-moderation"),
    path("arenas/<slug:slug>/flags/", FlaggedBattles.as_view(), name="api-arena-flags"),
    path(
        "arenas/<slug:slug>/flags/<uuid:public_id>/",
        FlagReview.as_view(),
        name="api-arena-flag-review",
    ),
]
