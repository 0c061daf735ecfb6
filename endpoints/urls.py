"""Pages of a system's bot endpoint, mounted under /systems/<slug>/endpoint/ by the project's
URLconf (next to the system's other pages)."""

from django.urls import path

from . import views

urlpatterns = [
    path("", views.endpoint_edit, name="system-endpoint"),
    path("delete/", views.endpoint_delete, name="system-endpoint-delete"),
    path("test/", views.endpoint_probe, name="system-endpoint-test"),
]
