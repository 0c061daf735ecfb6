from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.authtoken.views import obtain_auth_token
from rest_framework.routers import DefaultRouter

from .views import ConversationImport, PromptSetViewSet, SubmissionDetail, SystemViewSet

router = DefaultRouter()
router.register("prompt-sets", PromptSetViewSet, basename="api-promptset")
router.register("systems", SystemViewSet, basename="api-system")

urlpatterns = [
    path("tournaments/<slug:slug>/results/", include("analysis.api")),
    path("", include(router.urls)),
    path("submissions/<uuid:public_id>/", SubmissionDetail.as_view(), name="api-submission"),
    path("conversations/import/", ConversationImport.as_view(), name="api-conversation-import"),
    path("", include("tournaments.api")),
    path("token/", obtain_auth_token, name="api-token"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
]
