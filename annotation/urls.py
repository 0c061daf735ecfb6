from django.urls import path

from .views import training, worker

app_name = "annotation"

urlpatterns = [
    path("work/<slug:slug>/", worker.start, name="start"),
    path("work/assignment/<uuid:public_id>/", worker.assignment_page, name="assignment"),
    path(
        "work/assignment/<uuid:public_id>/items/<int:item_id>/",
        worker.submit_item,
        name="submit-item",
    ),
    path("work/assignment/<uuid:public_id>/done/", worker.done, name="done"),
    path("work/<slug:slug>/training/", training.home, name="training"),
    path("work/<slug:slug>/training/begin/", training.begin, name="training-begin"),
    path(
        "work/<slug:slug>/training/items/<int:item_id>/",
        training.item,
        name="training-item",
    ),
    path(
        "work/<slug:slug>/training/items/<int:item_id>/feedback/",
        training.feedback,
        name="training-feedback",
    ),
]
