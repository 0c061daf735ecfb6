"""Mounted by evalhub/urls.py under /api/."""

from django.urls import path

from .views import BotEndpointView, EndpointCallList

urlpatterns = [
    path("systems/<slug:slug>/endpoint/", BotEndpointView.as_view(), name="api-system-endpoint"),
    path(
        "systems/<slug:slug>/endpoint/calls/",
        EndpointCallList.as_view(),
        name="api-system-endpoint-calls",
    ),
]
