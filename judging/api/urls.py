"""Mounted by evalhub/urls.py under /api/."""

from django.urls import include, path
from rest_framework.routers import SimpleRouter

from .views import JudgeViewSet, RubricViewSet, RunViewSet

router = SimpleRouter()
router.register("judges", JudgeViewSet, basename="api-judge")
router.register("judge-rubrics", RubricViewSet, basename="api-judge-rubric")
router.register("judge-runs", RunViewSet, basename="api-judge-run")

urlpatterns = [path("", include(router.urls))]
