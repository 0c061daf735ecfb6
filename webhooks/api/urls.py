"""Mounted by evalhub/urls.py under /api/."""

from django.urls import path

from .views import DeliveryList, SubscriptionDetail, SubscriptionList, SubscriptionTest

urlpatterns = [
    path("webhooks/", SubscriptionList.as_view(), name="api-webhook-list"),
    path("webhooks/<uuid:public_id>/", SubscriptionDetail.as_view(), name="api-webhook-detail"),
    path(
        "webhooks/<uuid:public_id>/deliveries/",
        DeliveryList.as_view(),
        name="api-webhook-deliveries",
    ),
    path("webhooks/<uuid:public_id>/test/", SubscriptionTest.as_view(), name="api-webhook-test"),
]
