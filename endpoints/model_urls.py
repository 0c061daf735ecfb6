"""Pages of a model endpoint of no system (a judge's), mounted under /endpoints/ by the
project's URLconf."""

from django.urls import path

from . import views

urlpatterns = [
    path("<int:pk>/", views.model_endpoint_edit, name="model-endpoint"),
    path("<int:pk>/test/", views.model_endpoint_probe, name="model-endpoint-test"),
]
