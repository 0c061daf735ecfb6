from django.urls import path

from . import views

app_name = "tournaments"

urlpatterns = [
    path("", views.tournament_list, name="list"),
    path("new/spot-the-bot/", views.create_spot_the_bot, name="create-spot-the-bot"),
    path("new/ab/", views.create_ab, name="create-ab"),
    path("partner-sets/new/", views.create_partner_set_page, name="create-partner-set"),
    path("<slug:slug>/", views.tournament_detail, name="detail"),
    path("<slug:slug>/collect/", views.collect, name="collect"),
    path("<slug:slug>/retry/", views.retry, name="retry"),
    path("<slug:slug>/generate/", views.generate, name="generate"),
    path("<slug:slug>/launch/", views.launch, name="launch"),
    path("<slug:slug>/dataset.zip", views.export_dataset, name="export-dataset"),
]
