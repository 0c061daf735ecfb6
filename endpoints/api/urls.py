"""Mounted by evalhub/urls.py under /api/."""

from django.urls import path

from .views import BotEndpointView

urlpatterns = [
    path("systems/<slug:slug>/endpoint/", BotEndpointView.as_view(), name="api-system-endpoint"),
]
