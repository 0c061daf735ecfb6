"""Pages of a system's bot endpoint, mounted under /systems/<slug>/endpoint/ by the project's
URLconf (next to the system's other pages)."""

from django.urls import path

from . import endpoint_views

urlpatterns = [
    path("", endpoint_views.endpoint_edit, name="system-endpoint"),
    path("delete/", endpoint_views.endpoint_delete, name="system-endpoint-delete"),
]
