"""Mounted by evalhub/urls.py under /api/, with the other apps' API urls."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import APIRootView, DefaultRouter

from ..permissions import Anyone, by_method
from .token import obtain_auth_token
from .tokens import ApiTokenDetail, ApiTokenList
from .views import (
    ConversationImport,
    PromptSetViewSet,
    SeedConversationUpload,
    SubmissionDetail,
    SystemViewSet,
)


class Root(APIRootView):
    permission_classes = [by_method(GET=Anyone)]


router = DefaultRouter()
router.APIRootView = Root
router.register("prompt-sets", PromptSetViewSet, basename="api-promptset")
router.register("systems", SystemViewSet, basename="api-system")

urlpatterns = [
    path("", include(router.urls)),
    path("submissions/<uuid:public_id>/", SubmissionDetail.as_view(), name="api-submission"),
    path("conversations/import/", ConversationImport.as_view(), name="api-conversation-import"),
    path(
        "conversations/seeds/",
        SeedConversationUpload.as_view(),
        name="api-seed-conversation-upload",
    ),
    path("token/", obtain_auth_token, name="api-token"),
    path("tokens/", ApiTokenList.as_view(), name="api-token-list"),
    path("tokens/<str:starts_with>/", ApiTokenDetail.as_view(), name="api-token-detail"),
    path(
        "schema/",
        SpectacularAPIView.as_view(permission_classes=[by_method(GET=Anyone)]),
        name="api-schema",
    ),
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="api-schema",
            permission_classes=[by_method(GET=Anyone)],
            template_name="evalhub/api/swagger_ui.html",
        ),
        name="api-docs",
    ),
]
