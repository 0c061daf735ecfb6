"""Mounted by evalhub/urls.py under /api/."""

from django.urls import path

from .views import BotEndpointView, EndpointCallList, EndpointProbe

urlpatterns = [
    path("systems/<slug:slug>/endpoint/", BotEndpointView.as_view(), name="api-system-endpoint"),
    path(
        "systems/<slug:slug>/endpoint/calls/",
        EndpointCallList.as_view(),
        name="api-system-endpoint-calls",
    ),
    path(
        "systems/<slug:slug>/endpoint/test/",
        EndpointProbe.as_view(),
        name="api-system-endpoint-test",
    ),
]
