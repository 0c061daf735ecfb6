"""The arena's pages, mounted under /arenas/ by the project's URLconf."""

from django.urls import path

from .views import battle, crowd, manage, moderation, pages

app_name = "arenas"

urlpatterns = [
    path("", pages.arena_list, name="list"),
    path("new/", manage.arena_create, name="create"),
    path("<slug:slug>/", pages.arena_detail, name="detail"),
    path("<slug:slug>/edit/", manage.arena_edit, name="edit"),
    path("<slug:slug>/join/<str:token>/", pages.arena_join, name="join"),
    # A battle. Everything under battles/ is served by the ASGI service in production
    # (docker-compose.yml's arena service): these views wait on the models.
    path("<slug:slug>/battle/", battle.battle_new, name="battle-new"),
    path("<slug:slug>/battles/new/", battle.battle_start, name="battle-start"),
    path("<slug:slug>/battles/<uuid:public_id>/", battle.battle_page, name="battle"),
    path("<slug:slug>/battles/<uuid:public_id>/turns/", battle.battle_turn, name="turn"),
    path("<slug:slug>/battles/<uuid:public_id>/vote/", battle.battle_vote, name="vote"),
    path(
        "<slug:slug>/battles/<uuid:public_id>/regenerate/",
        battle.battle_regenerate,
        name="regenerate",
    ),
    path(
        "<slug:slug>/battles/<uuid:public_id>/turns/<int:number>/<str:side>/stream/",
        battle.answer_stream,
        name="stream",
    ),
    path(
        "<slug:slug>/battles/<uuid:public_id>/turns/<int:number>/<str:side>/stop/",
        battle.answer_stop,
        name="stop",
    ),
    path("<slug:slug>/flags/", moderation.arena_flags, name="flags"),
    path(
        "<slug:slug>/flags/<uuid:public_id>/<slug:code>/",
        moderation.flag_review,
        name="flag-review",
    ),
    # arenacrowd: the arena's paid crowd (gold battles, launches on Prolific or MTurk).
    path("<slug:slug>/crowd/", crowd.crowd_page, name="crowd"),
    path("<slug:slug>/crowd/gold/", crowd.gold_add, name="crowd-gold"),
    path("<slug:slug>/crowd/gold/<int:pk>/remove/", crowd.gold_remove, name="crowd-gold-remove"),
    path("<slug:slug>/crowd/launch/", crowd.crowd_launch, name="crowd-launch"),
    path("<slug:slug>/systems/", manage.arena_systems, name="systems"),
    path("<slug:slug>/categories/", manage.arena_categories, name="categories"),
    path(
        "<slug:slug>/categories/<slug:name>/remove/",
        manage.category_remove,
        name="category-remove",
    ),
    path(
        "<slug:slug>/systems/<slug:system_slug>/weight/",
        manage.entry_weight,
        name="entry-weight",
    ),
    path(
        "<slug:slug>/systems/<slug:system_slug>/remove/",
        manage.entry_remove,
        name="entry-remove",
    ),
]
