"""Mounted by evalhub/urls.py under /api/."""

from django.urls import path

from .views import (
    BotEndpointView,
    EndpointCallList,
    EndpointProbe,
    ModelEndpointCallList,
    ModelEndpointProbe,
    ModelEndpointView,
)

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
    path("endpoints/<int:pk>/", ModelEndpointView.as_view(), name="api-model-endpoint"),
    path(
        "endpoints/<int:pk>/calls/",
        ModelEndpointCallList.as_view(),
        name="api-model-endpoint-calls",
    ),
    path("endpoints/<int:pk>/test/", ModelEndpointProbe.as_view(), name="api-model-endpoint-test"),
]
