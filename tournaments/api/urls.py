"""Mounted by evalhub/urls.py under /api/."""

from django.urls import include, path
from rest_framework.routers import SimpleRouter

from .views import PartnerSetList, SeedDomainList, TournamentViewSet

router = SimpleRouter()
router.register("tournaments", TournamentViewSet, basename="api-tournament")

urlpatterns = [
    path("", include(router.urls)),
    path("seed-domains/", SeedDomainList.as_view(), name="api-seed-domains"),
    path("partner-sets/", PartnerSetList.as_view(), name="api-partner-sets"),
]
