from django.conf import settings
from django.contrib import admin
from django.urls import include, path

from .views import accounts, compare, pages, systems

urlpatterns = [
    path("", pages.home, name="home"),
    path("prompt-sets/", pages.promptset_list, name="promptset-list"),
    path("prompt-sets/<slug:slug>/", pages.promptset_detail, name="promptset-detail"),
    path("systems/", pages.system_list, name="system-list"),
    path("systems/new/", systems.system_create, name="system-create"),
    path("systems/<slug:slug>/", systems.system_detail, name="system-detail"),
    path("systems/<slug:slug>/edit/", systems.system_edit, name="system-edit"),
    path("systems/<slug:slug>/submit/", systems.system_submit, name="system-submit"),
    path("compare/", compare.compare, name="compare"),
    path("accounts/signup/", accounts.signup, name="signup"),
    path("accounts/profile/", accounts.account, name="account"),
    path("accounts/token/", accounts.regenerate_token, name="regenerate-token"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("annotation.urls")),
    path("tournaments/", include("tournaments.urls")),
    path("leaderboards/", include("analysis.urls")),
    path("admin/", admin.site.urls),
    path("api/", include("evalhub.api.urls")),
]

if settings.DEBUG:
    from django.conf.urls.static import static

    urlpatterns += static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)

