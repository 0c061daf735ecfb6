from django.contrib import admin
from django.urls import include, path, re_path

from .api.handlers import no_such_route
from .views import accounts, compare, health, notices, pages, seeds, systems

urlpatterns = [
    path("", pages.home, name="home"),
    path("healthz", health.healthz, name="healthz"),
    path("prompt-sets/", pages.promptset_list, name="promptset-list"),
    path("prompt-sets/<slug:slug>/", pages.promptset_detail, name="promptset-detail"),
    path(
        "prompt-sets/<slug:slug>/prompts.jsonl",
        pages.promptset_download,
        {"fmt": "jsonl"},
        name="promptset-download-jsonl",
    ),
    path(
        "prompt-sets/<slug:slug>/prompts.txt",
        pages.promptset_download,
        {"fmt": "txt"},
        name="promptset-download-txt",
    ),
    path("prompt-sets/<slug:slug>/dataset.zip", pages.promptset_dataset, name="promptset-dataset"),
    path("systems/", pages.system_list, name="system-list"),
    path("systems/new/", systems.system_create, name="system-create"),
    path("systems/<slug:slug>/", systems.system_detail, name="system-detail"),
    path("systems/<slug:slug>/edit/", systems.system_edit, name="system-edit"),
    path("systems/<slug:slug>/submit/", systems.system_submit, name="system-submit"),
    path("systems/<slug:slug>/endpoint/", include("endpoints.urls")),
    path("endpoints/", include("endpoints.model_urls")),
    # Uploaded files are served only here, under their system's visibility; MEDIA_ROOT
    # has no URL in any mode.
    path("submissions/<uuid:public_id>/file/", systems.submission_file, name="submission-file"),
    path(
        "submissions/<uuid:public_id>/dataset.zip",
        systems.submission_dataset,
        name="submission-dataset",
    ),
    path("compare/", compare.compare, name="compare"),
    path("conversations/seeds/upload/", seeds.seed_upload, name="seed-upload"),
    path("accounts/signup/", accounts.signup, name="signup"),
    path("accounts/profile/", accounts.account, name="account"),
    path("accounts/tokens/", accounts.create_api_token, name="api-token-create"),
    path(
        "accounts/tokens/<str:starts_with>/revoke/",
        accounts.revoke_api_token,
        name="api-token-revoke",
    ),
    path("accounts/notices/", notices.notice_preferences, name="notice-preferences"),
    path("accounts/webhooks/", include("webhooks.urls")),
    path("notices/", notices.notice_list, name="notices"),
    path("notices/read/", notices.notices_read, name="notices-read"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("annotation.urls")),
    path("tournaments/", include("tournaments.urls")),
    path("arenas/", include("arenas.urls")),
    path("judges/", include("judging.urls")),
    # /leaderboards/ (namespace "analysis") and the result pages (namespace "results").
    path("", include("analysis.urls")),
    path("admin/", admin.site.urls),
    # The REST API: each app's api/urls.py, all under /api/.
    path("api/", include("analysis.api.urls")),
    path("api/", include("evalhub.api.urls")),
    path("api/", include("endpoints.api.urls")),
    path("api/", include("webhooks.api.urls")),
    path("api/", include("annotation.api.urls")),
    path("api/", include("tournaments.api.urls")),
    path("api/", include("arenas.api.urls")),
    path("api/", include("judging.api.urls")),
    # Last: a path under /api/ that no route above matches. Only paths ending in a slash, so
    # that a missing slash is still redirected to the route it names (APPEND_SLASH).
    re_path(r"^api/(?:.*/)?$", no_such_route),
]

# Under /api/ Django's own errors answer JSON in the API's one error shape; elsewhere the
# HTML pages (evalhub/api/handlers.py).
handler400 = "evalhub.api.handlers.bad_request"
handler403 = "evalhub.api.handlers.permission_denied"
handler404 = "evalhub.api.handlers.page_not_found"
handler500 = "evalhub.api.handlers.server_error"
