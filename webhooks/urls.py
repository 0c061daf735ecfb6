"""Pages of the owner's webhooks, mounted under /accounts/webhooks/ by evalhub/urls.py."""

from django.urls import path

from . import views

app_name = "webhooks"

urlpatterns = [
    path("", views.subscription_list, name="list"),
    path("<uuid:public_id>/", views.subscription_detail, name="detail"),
    path("<uuid:public_id>/test/", views.subscription_test, name="test"),
    path("<uuid:public_id>/delete/", views.subscription_delete, name="delete"),
]
