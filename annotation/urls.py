from django.urls import path

from .views import chat, invitations, manage, quality, review, training, worker

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
    # A chat item's actions: a form post per turn, and the same as JSON for the page script;
    # and the stream of the bot's reply. Everything under .../chat/ is served by the ASGI
    # service in production (deploy/nginx.conf): these views may wait on a bot.
    path(
        "work/assignment/<uuid:public_id>/items/<int:item_id>/chat/stream/",
        chat.chat_stream,
        name="chat-stream",
    ),
    *(
        path(
            f"work/assignment/<uuid:public_id>/items/<int:item_id>/chat/{action}{suffix}",
            chat.chat_action,
            {"action": action, "fmt": fmt},
            name=f"chat-{action}{'-json' if fmt == 'json' else ''}",
        )
        for action in chat.ACTIONS
        for suffix, fmt in (("/", "html"), (".json", "json"))
    ),
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
    path("manage/campaigns/", manage.campaign_list, name="manage-campaigns"),
    path("manage/campaigns/new/", manage.campaign_create, name="manage-campaign-create"),
    path("manage/campaigns/<slug:slug>/", manage.campaign_detail, name="manage-campaign"),
    path(
        "manage/campaigns/<slug:slug>/launch/",
        manage.campaign_action,
        {"action": "launch"},
        name="manage-campaign-launch",
    ),
    path(
        "manage/campaigns/<slug:slug>/pause/",
        manage.campaign_action,
        {"action": "pause"},
        name="manage-campaign-pause",
    ),
    path(
        "manage/campaigns/<slug:slug>/finish/",
        manage.campaign_action,
        {"action": "finish"},
        name="manage-campaign-finish",
    ),
    path(
        "manage/campaigns/<slug:slug>/pairing/",
        manage.campaign_pairing,
        name="manage-campaign-pairing",
    ),
    path(
        "manage/campaigns/<slug:slug>/preview/<int:position>/",
        manage.campaign_preview,
        name="manage-campaign-preview",
    ),
    path(
        "manage/campaigns/<slug:slug>/export.jsonl",
        manage.campaign_export,
        {"fmt": "jsonl"},
        name="manage-campaign-export-jsonl",
    ),
    path(
        "manage/campaigns/<slug:slug>/export.csv",
        manage.campaign_export,
        {"fmt": "csv"},
        name="manage-campaign-export-csv",
    ),
    path(
        "manage/campaigns/<slug:slug>/export-dataset.zip",
        manage.campaign_export_dataset,
        name="manage-campaign-export-dataset",
    ),
    path(
        "manage/campaigns/<slug:slug>/invitations/",
        invitations.create,
        name="manage-campaign-invitations",
    ),
    path(
        "manage/campaigns/<slug:slug>/invitations.txt",
        invitations.download,
        name="manage-campaign-invitations-download",
    ),
    path(
        "manage/campaigns/<slug:slug>/judgments/",
        manage.campaign_judgments,
        name="manage-campaign-judgments",
    ),
    path(
        "manage/campaigns/<slug:slug>/workers/",
        quality.campaign_workers,
        name="quality-workers",
    ),
    path(
        "manage/campaigns/<slug:slug>/review/",
        review.campaign_review,
        name="manage-campaign-review",
    ),
    path(
        "manage/campaigns/<slug:slug>/settings/",
        manage.crowd_settings,
        name="manage-campaign-settings",
    ),
    path(
        "manage/campaigns/<slug:slug>/launch-request/",
        manage.launch_request,
        name="manage-campaign-launch-request",
    ),
    path(
        "manage/campaigns/<slug:slug>/launch-decision/",
        manage.launch_decision,
        name="manage-campaign-launch-decision",
    ),
    path(
        "manage/workers/<uuid:public_id>/block/",
        quality.block_worker,
        name="quality-worker-block",
    ),
]
