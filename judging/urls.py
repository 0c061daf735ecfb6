from django.urls import path

from . import views

app_name = "judging"

urlpatterns = [
    path("", views.judge_list, name="judge-list"),
    path("new/", views.judge_create, name="judge-create"),
    path("rubrics/", views.rubric_list, name="rubric-list"),
    path("rubrics/new/", views.rubric_create, name="rubric-create"),
    path("rubrics/<int:pk>/", views.rubric_detail, name="rubric-detail"),
    path("runs/<int:pk>/", views.run_detail, name="run-detail"),
    path("runs/<int:pk>/progress.json", views.run_progress, name="run-progress"),
    path("runs/<int:pk>/dataset.zip", views.run_export_dataset, name="run-export-dataset"),
    path("runs/<int:pk>/pause/", views.run_pause, name="run-pause"),
    path("runs/<int:pk>/resume/", views.run_resume, name="run-resume"),
    path("<slug:slug>/", views.judge_detail, name="judge-detail"),
]
