"""Mounted by evalhub/urls.py under /api/."""

from django.urls import include, path
from rest_framework.routers import SimpleRouter

from . import crowd, planning, prolific_hooks
from .campaigns import CampaignViewSet, ItemViewSet, JudgmentViewSet
from .views import AbcEvalImport

router = SimpleRouter()
router.register("campaigns", CampaignViewSet, basename="api-campaign")
router.register("judgments", JudgmentViewSet, basename="api-judgment")
items = SimpleRouter()
items.register("items", ItemViewSet, basename="api-campaign-item")

# A campaign on its crowd platform, and launch approval (annotation/api/crowd.py), before
# the router's campaign detail so that their longer paths win.
CAMPAIGN = "campaigns/<slug:slug>/"
urlpatterns = [
    # Pairing (issue 27): the budget planner and the stopping rule.
    path(f"{CAMPAIGN}plan/", planning.CampaignPlan.as_view(), name="api-campaign-plan"),
    path(f"{CAMPAIGN}stopping/", planning.CampaignStopping.as_view(), name="api-campaign-stopping"),
    path(f"{CAMPAIGN}crowd/estimate/", crowd.CrowdEstimate.as_view(), name="api-crowd-estimate"),
    path(f"{CAMPAIGN}crowd/launch/", crowd.CrowdLaunch.as_view(), name="api-crowd-launch"),
    path(f"{CAMPAIGN}crowd/sync/", crowd.CrowdSync.as_view(), name="api-crowd-sync"),
    path(f"{CAMPAIGN}crowd/pay/", crowd.CrowdPay.as_view(), name="api-crowd-pay"),
    path(f"{CAMPAIGN}crowd/finish/", crowd.CrowdFinish.as_view(), name="api-crowd-finish"),
    path(f"{CAMPAIGN}crowd/review/", crowd.CrowdReview.as_view(), name="api-crowd-review"),
    path(
        f"{CAMPAIGN}launch-request/", crowd.LaunchRequestView.as_view(), name="api-launch-request"
    ),
    path(
        f"{CAMPAIGN}launch-request/decision/",
        crowd.LaunchDecision.as_view(),
        name="api-launch-decision",
    ),
    path(
        "crowd/prolific/hooks/", prolific_hooks.ProlificHooks.as_view(), name="api-prolific-hooks"
    ),
    path("studies/abc-eval/", AbcEvalImport.as_view(), name="api-abceval-import"),
    path("", include(router.urls)),
    path("campaigns/<slug:slug>/", include(items.urls)),
]
