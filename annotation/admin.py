"""Admin pages for campaigns and what hangs off them.

Most rows here are records the platform writes as work happens (slots handed out,
judgments stored, training graded); the admin shows them and refuses to edit them, and
each class says which invariant an edit would break. Campaigns are created, launched,
paused and finished from the staff pages (/manage/campaigns/), which build the items and
call the crowd provider; the admin edits only what those steps did not bake in.

List pages select their related rows in the same query (`list_select_related`) and use
raw id widgets for foreign keys, so they cost the same few queries on a campaign of 50
items or 50,000.
"""

from django import forms
from django.contrib import admin
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.utils.html import format_html, format_html_join

from evalhub.admin_tools import ModelAdmin, RecordAdmin, pretty_json
from evalhub.nul_refusal import RefusesNul

from .models import (
    Assignment,
    Batch,
    Campaign,
    CrowdAction,
    Invitation,
    Item,
    Judgment,
    LaunchRequest,
    Qualification,
    Study,
    TrainingAnswer,
    Worker,
)
from .quality import set_blocked


def _is_draft(campaign: Campaign | None) -> bool:
    return campaign is not None and campaign.status == Campaign.Status.DRAFT


class DeletedWithDraftCampaign:
    """Rows that may go only together with the draft campaign that owns them.

    A draft has never been shown to anyone, so deleting it loses no work; the admin asks
    for the delete permission of every row a deletion cascades to, hence this rule on the
    campaign's items, batches and open slots. Anything else would leave a batch without
    its slots or items."""

    def has_delete_permission(self, request, obj=None):
        # The user's own permission, as ModelAdmin reads it (RecordAdmin would refuse).
        allowed = admin.ModelAdmin.has_delete_permission(self, request, obj)
        return allowed and (obj is None or _is_draft(obj.campaign))

    def get_actions(self, request):
        # The bulk delete action checks no row: it would delete judged rows too.
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions


@admin.register(Campaign)
class CampaignAdmin(ModelAdmin):
    """Created on /manage/campaigns/new/, which builds its items and batches in the same
    transaction, so the admin adds none (a campaign without items cannot launch). The
    status moves only through launch / pause / finish on the campaign page, which call
    the crowd provider and start the analysis of a finished tournament. Once the campaign
    exists, its kind, config, redundancy and batch size are baked into its items and open
    slots; once it has launched, its provider and reward are what workers were offered."""

    list_display = [
        "title",
        "slug",
        "task_kind",
        "status",
        "provider",
        "redundancy",
        "batch_size",
        "owner",
        "created",
    ]
    list_filter = ["status", "task_kind", "provider", "requires_training"]
    search_fields = ["title", "slug", "instructions", "owner__username"]
    list_select_related = ["owner"]
    raw_id_fields = ["owner"]
    date_hierarchy = "created"
    readonly_fields = ["status", "created", "launched_at", "finished_at", "start_link"]
    # Pairing (issue 27): set on the campaign's page (annotation/views/manage.py), shown here.
    readonly_fields += ["allocation", "separation_level", "pause_when_answered"]
    baked_in = ["slug", "task_kind", "task_config", "redundancy", "batch_size"]
    offered_at_launch = ["provider", "provider_config", "reward_per_batch"]

    def get_readonly_fields(self, request, obj=None):
        fields = [*self.readonly_fields, *self.baked_in]
        if obj is not None and not _is_draft(obj):
            fields += self.offered_at_launch
        return fields

    @admin.display(description="Start link")
    def start_link(self, obj):
        url = obj.start_url()
        return format_html('<a href="{}">{}</a>', url, url)

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        # Deleting a launched campaign would delete its judgments with it.
        if obj is not None and not _is_draft(obj):
            return False
        return super().has_delete_permission(request, obj)

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions


@admin.register(Batch)
class BatchAdmin(DeletedWithDraftCampaign, RecordAdmin):
    """Made by packing when the campaign is created: its items never share a group (one
    conversation's segments) and it has `redundancy` slots. Moving anything breaks both."""

    list_display = ["__str__", "campaign", "position"]
    list_filter = ["campaign__status", "campaign__task_kind"]
    search_fields = ["campaign__slug", "campaign__title"]
    list_select_related = ["campaign"]


@admin.register(Item)
class ItemAdmin(DeletedWithDraftCampaign, ModelAdmin):
    """An item's content and gold may be corrected while its campaign is a draft, which no
    worker has seen. Its campaign, place in a batch, role and group are what packing
    decided; and once the campaign has launched the item is what workers judged, and a
    changed item would no longer match its judgments."""

    list_display = ["__str__", "campaign", "role", "batch", "order_in_batch", "group_key"]
    list_filter = ["role", "campaign__status", "campaign__task_kind"]
    search_fields = ["campaign__slug", "group_key"]
    list_select_related = ["campaign", "batch__campaign"]
    raw_id_fields = [
        "campaign",
        "batch",
        "prompt",
        "response_a",
        "response_b",
        "conversation",
        "conversation_b",
    ]
    structure = [
        "campaign",
        "position",
        "role",
        "batch",
        "order_in_batch",
        "group_key",
        "prompt",
        "response_a",
        "response_b",
        "conversation",
        "conversation_b",
        "segment_length",
        "auto_payload",
    ]

    def get_readonly_fields(self, request, obj=None):
        return self.structure

    def has_add_permission(self, request):
        # Items come from a kind's builder and are packed with their campaign's batches.
        return False

    def has_change_permission(self, request, obj=None):
        if obj is not None and not _is_draft(obj.campaign):
            return False
        return super().has_change_permission(request, obj)


class WorkerForm(RefusesNul, forms.ModelForm):
    class Meta:
        model = Worker
        fields = ["blocked", "blocked_reason"]
        help_texts = {
            "blocked": "A blocked worker gets no new batch in any campaign; their judgments stay.",
            "blocked_reason": "Why: needed to block (the worker may ask), optional to unblock.",
        }

    def clean(self):
        data = super().clean()
        if data.get("blocked") and not data.get("blocked_reason", "").strip():
            self.add_error("blocked_reason", "Say why this worker is blocked; they may ask.")
        return data


def block_history(worker: Worker):
    """Who blocked or unblocked the worker, when and why, newest first (the admin log that
    `annotation.quality.set_blocked` writes; `blocked_reason` holds only the latest)."""
    return (
        LogEntry.objects.filter(
            content_type=ContentType.objects.get_for_model(Worker),
            object_id=str(worker.pk),
            action_flag=CHANGE,
            change_message__regex=r"^(Blocked|Unblocked)",
        )
        .select_related("user")
        .order_by("-action_time", "-pk")
    )


@admin.register(Worker)
class WorkerAdmin(ModelAdmin):
    """Workers arrive through a crowd provider (start link, Prolific, MTurk), which is who
    creates them; their identity (provider, external id) is the key the provider knows
    them by, so only blocking can be changed here. Blocking goes through the same service
    as the quality page, which keeps the history shown below. A worker is never deleted:
    their judgments are data."""

    form = WorkerForm
    list_display = [
        "external_id",
        "provider",
        "blocked",
        "blocked_reason",
        "user",
        "created",
        "last_seen",
    ]
    list_filter = ["provider", "blocked"]
    search_fields = ["external_id", "blocked_reason", "user__username"]
    list_select_related = ["user"]
    readonly_fields = [
        "public_id",
        "provider",
        "external_id",
        "user",
        "created",
        "last_seen",
        "block_history_table",
    ]
    fields = [*readonly_fields[:-1], "blocked", "blocked_reason", "block_history_table"]

    @admin.display(description="Block history")
    def block_history_table(self, obj):
        entries = list(block_history(obj))
        if not entries:
            return "Never blocked."
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (f"{e.action_time:%Y-%m-%d %H:%M}", e.user.get_username(), e.change_message)
                for e in entries
            ),
        )
        return format_html(
            "<table><thead><tr><th>When</th><th>By</th><th>What</th></tr></thead>"
            "<tbody>{}</tbody></table>",
            rows,
        )

    def save_model(self, request, obj, form, change):
        if change and {"blocked", "blocked_reason"} & set(form.changed_data):
            # Unblocking with the old reason left in the field is not a reason to unblock.
            typed = obj.blocked or "blocked_reason" in form.changed_data
            reason = obj.blocked_reason if typed else ""
            set_blocked(obj, blocked=obj.blocked, reason=reason, by=request.user)
            obj._block_logged = True
        else:
            super().save_model(request, obj, form, change)

    def log_change(self, request, obj, message):
        # set_blocked wrote the entry, with the reason; a second one would say less.
        if getattr(obj, "_block_logged", False):
            return None
        return super().log_change(request, obj, message)

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Assignment)
class AssignmentAdmin(DeletedWithDraftCampaign, RecordAdmin):
    """A slot of a batch. Allocation hands slots out atomically so that every item ends
    with exactly `redundancy` judgments from distinct workers; changing a slot's worker or
    status by hand would give an item too many or too few, or one worker a batch twice."""

    list_display = [
        "public_id",
        "campaign",
        "batch",
        "worker",
        "status",
        "started_at",
        "submitted_at",
    ]
    list_filter = ["status", "campaign__status", "campaign__task_kind"]
    search_fields = ["campaign__slug", "worker__external_id", "provider_ref", "completion_code"]
    list_select_related = ["campaign", "batch__campaign", "worker"]


@admin.register(Judgment)
class JudgmentAdmin(RecordAdmin):
    """What a worker answered. Analysis runs name the judgments they read by a digest; an
    edited or deleted judgment would make a stored result disagree with its inputs. Leave
    a worker out of an analysis by blocking them instead: nothing is deleted."""

    list_display = ["pk", "campaign", "item", "worker", "gold_correct", "submitted_at"]
    list_filter = ["campaign__task_kind", "item__role", "gold_correct", "worker__blocked"]
    search_fields = ["campaign__slug", "worker__external_id"]
    list_select_related = ["campaign", "item__campaign", "worker"]
    readonly_fields = ["payload_json"]
    exclude = ["payload"]

    @admin.display(description="Payload")
    def payload_json(self, obj):
        return pretty_json(obj.payload)


@admin.register(Qualification)
class QualificationAdmin(RecordAdmin):
    """A worker's standing on a training key, graded from their training answers; its
    attempt counter numbers those answers. An edit would make it disagree with them."""

    list_display = ["worker", "key", "passed", "attempts", "last_mistakes", "updated"]
    list_filter = ["passed", "key"]
    search_fields = ["worker__external_id", "key"]
    list_select_related = ["worker"]


@admin.register(Invitation)
class InvitationAdmin(RecordAdmin):
    """A single-use start link and the worker who used it; an edit would hand one person's
    work to another. Links are created on the campaign page."""

    list_display = ["pk", "campaign", "created", "created_by", "worker", "used_at"]
    list_filter = ["campaign"]
    search_fields = ["campaign__slug", "worker__external_id"]
    list_select_related = ["campaign", "created_by", "worker"]
    exclude = ["token"]


@admin.register(TrainingAnswer)
class TrainingAnswerAdmin(RecordAdmin):
    """A graded training answer and the feedback the worker was shown: a record."""

    list_display = ["worker", "item", "attempt", "mistakes", "submitted_at"]
    list_filter = ["item__campaign__task_kind", "attempt"]
    search_fields = ["worker__external_id", "item__campaign__slug"]
    list_select_related = ["worker", "item__campaign"]
    readonly_fields = ["payload_json", "feedback_json"]
    exclude = ["payload", "feedback"]

    @admin.display(description="Payload")
    def payload_json(self, obj):
        return pretty_json(obj.payload)

    @admin.display(description="Feedback")
    def feedback_json(self, obj):
        return pretty_json(obj.feedback)


@admin.register(CrowdAction)
class CrowdActionAdmin(RecordAdmin):
    """The ledger of calls to crowd platforms. Its idempotency key is what keeps a retried
    launch or bonus from paying twice, and its state says whether the platform answered:
    an edit could let a payment run again or hide one that did."""

    list_display = ["created", "campaign", "provider", "action", "worker", "amount", "state"]
    list_filter = ["provider", "action", "state"]
    search_fields = ["campaign__slug", "worker__external_id", "idempotency_key", "error"]
    list_select_related = ["campaign", "worker", "actor"]
    raw_id_fields = ["campaign", "assignment", "worker", "actor"]
    readonly_fields = ["request", "response"]
    date_hierarchy = "created"


@admin.register(LaunchRequest)
class LaunchRequestAdmin(RecordAdmin):
    """A request to launch a paid campaign and staff's decision: decided on the campaign
    page (annotation/campaigns.py), kept here as the record of who allowed what spending."""

    list_display = ["requested_at", "campaign", "provider", "state", "requested_by", "decided_by"]
    list_filter = ["provider", "state"]
    search_fields = ["campaign__slug", "requested_by__username", "reason"]
    list_select_related = ["campaign", "requested_by", "decided_by"]
    raw_id_fields = ["campaign", "requested_by", "decided_by"]
    date_hierarchy = "requested_at"


@admin.register(Study)
class StudyAdmin(RecordAdmin):
    """A published study brought in by an importer (`import_abceval`); its campaigns hold
    what the files said, and an edit here would make it disagree with them."""

    list_display = ["slug", "name", "source", "owner", "created"]
    list_filter = ["source"]
    search_fields = ["slug", "name"]
    readonly_fields = ["campaign_list"]

    @admin.display(description="Campaigns")
    def campaign_list(self, obj):
        return format_html_join(
            ", ", "{} ({})", ((c.slug, c.task_kind) for c in obj.campaigns.order_by("slug"))
        )
