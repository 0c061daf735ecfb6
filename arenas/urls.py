"""The arena's pages, mounted under /arenas/ by the project's URLconf."""

from django.urls import path

from .views import manage, pages

app_name = "arenas"

urlpatterns = [
    path("", pages.arena_list, name="list"),
    path("new/", manage.arena_create, name="create"),
    path("<slug:slug>/", pages.arena_detail, name="detail"),
    path("<slug:slug>/edit/", manage.arena_edit, name="edit"),
    path("<slug:slug>/join/<str:token>/", pages.arena_join, name="join"),
    path("<slug:slug>/systems/", manage.arena_systems, name="systems"),
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
