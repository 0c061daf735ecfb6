from django import forms
from django.contrib import admin, messages
from django.shortcuts import redirect, render
from django.urls import path

from . import limits
from .admin_tools import ModelAdmin, TabularInline
from .forms import columns_field
from .importers.problems import InvalidUpload
from .models import (
    ApiToken,
    Conversation,
    Lease,
    Notice,
    NoticePreference,
    Prompt,
    PromptSet,
    Response,
    Speaker,
    Submission,
    System,
    Turn,
)
from .nul_refusal import RefusesNul
from .services import create_prompt_set, import_conversations, queue_metrics, read_upload


@admin.register(ApiToken)
class ApiTokenAdmin(ModelAdmin):
    """Researchers' API tokens: staff see them and may revoke one (delete it), for instance
    one that leaked. Only a digest is stored, so no token can be read or made here: owners
    make them on their account page (evalhub/api_tokens.py)."""

    list_display = ["name", "user", "token_key", "created", "expiry", "last_used"]
    list_filter = ["created", "expiry"]
    search_fields = ["name", "token_key", "user__username"]
    list_select_related = ["user"]
    readonly_fields = ["name", "user", "token_key", "created", "expiry", "last_used"]
    exclude = ["digest"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(System)
class SystemAdmin(ModelAdmin):
    list_display = [
        "name",
        "slug",
        "owner",
        "is_baseline",
        "visibility",
        "embargo_until",
        "created",
    ]
    list_filter = ["is_baseline", "visibility", "created"]
    search_fields = ["name", "slug", "description", "owner__username"]
    list_select_related = ["owner"]
    prepopulated_fields = {"slug": ["name"]}
    raw_id_fields = ["owner"]


class PromptInline(TabularInline):
    model = Prompt
    extra = 0
    fields = ["position", "external_id", "context", "references"]
    show_change_link = True


class PromptSetUploadForm(RefusesNul, forms.Form):
    slug = forms.SlugField(max_length=80)
    name = forms.CharField(max_length=limits.NAME_CHARS)
    description = forms.CharField(
        widget=forms.Textarea, required=False, max_length=limits.DESCRIPTION_CHARS
    )
    source = forms.CharField(required=False, max_length=300)
    version = forms.CharField(initial="1", max_length=40)
    file = forms.FileField(
        help_text='.txt: one prompt per line. .jsonl: {"id", "context": [...], "references": [...]}.'
        " .parquet: the Hugging Face layout (below)."
    )
    columns = columns_field("prompt=instruction, id=question_id")

    def clean_slug(self):
        slug = self.cleaned_data["slug"]
        if PromptSet.objects.filter(slug=slug).exists():
            raise forms.ValidationError("A prompt set with this slug exists.")
        return slug


class FileUploadAdmin(ModelAdmin):
    """A change list with an upload page: the whole file is checked by a catalog service,
    its problems are listed with their lines, and nothing is stored when there is one."""

    change_list_template = "admin/evalhub/upload_change_list.html"
    upload_form: type[forms.Form]
    upload_title = ""
    upload_intro = ""

    def get_urls(self):
        opts = self.model._meta
        upload = path(
            "upload/",
            self.admin_site.admin_view(self.upload_view),
            name=f"{opts.app_label}_{opts.model_name}_upload",
        )
        return [upload, *super().get_urls()]

    def changelist_view(self, request, extra_context=None):
        extra = {"upload_title": self.upload_title, **(extra_context or {})}
        return super().changelist_view(request, extra)

    def store_upload(self, request, data: bytes, filename: str, fields: dict):
        """Store the checked file; return (success message, where to go next)."""
        raise NotImplementedError

    def upload_view(self, request):
        if not self.has_add_permission(request):
            return redirect("admin:index")
        form = self.upload_form(request.POST or None, request.FILES or None)
        problems = None
        if request.method == "POST" and form.is_valid():
            fields = dict(form.cleaned_data)
            upload = fields.pop("file")
            try:
                message, target = self.store_upload(
                    request, read_upload(upload), upload.name, fields
                )
            except InvalidUpload as invalid:
                problems = invalid
            else:
                messages.success(request, message)
                return target
        context = {
            **self.admin_site.each_context(request),
            "title": self.upload_title,
            "intro": self.upload_intro,
            "form": form,
            "problems": problems,
            "opts": self.model._meta,
        }
        return render(request, "admin/evalhub/upload.html", context)


@admin.register(PromptSet)
class PromptSetAdmin(FileUploadAdmin):
    list_display = ["name", "slug", "version", "source", "created"]
    search_fields = ["name", "slug", "description", "source"]
    inlines = [PromptInline]
    upload_form = PromptSetUploadForm
    upload_title = "Upload a prompt set"

    def store_upload(self, request, data, filename, fields):
        prompt_set = create_prompt_set(data=data, filename=filename, user=request.user, **fields)
        count = prompt_set.prompts.count()
        message = f"Created {prompt_set.name} with {count} prompts."
        return message, redirect("admin:evalhub_promptset_change", prompt_set.pk)


@admin.register(Prompt)
class PromptAdmin(ModelAdmin):
    list_display = ["__str__", "prompt_set", "position", "external_id"]
    list_filter = ["prompt_set"]
    search_fields = ["external_id", "context"]
    list_select_related = ["prompt_set"]
    raw_id_fields = ["prompt_set"]


@admin.register(Submission)
class SubmissionAdmin(ModelAdmin):
    list_display = ["system", "prompt_set", "status", "format", "created", "scored_at"]
    list_filter = ["status", "format", "prompt_set", "created"]
    search_fields = ["system__slug", "system__name", "original_filename", "public_id"]
    readonly_fields = ["public_id", "metrics", "error_report", "created", "scored_at"]
    raw_id_fields = ["system", "submitted_by"]
    list_select_related = ["system", "prompt_set"]
    filter_horizontal = ["baselines"]
    actions = ["recompute_metrics"]

    @admin.action(description="Compute the automatic metrics again")
    def recompute_metrics(self, request, queryset):
        for submission_id in queryset.values_list("pk", flat=True):
            queue_metrics(submission_id)
        self.message_user(request, f"Queued {queryset.count()} submission(s).")


@admin.register(Response)
class ResponseAdmin(ModelAdmin):
    list_display = ["submission", "prompt", "text"]
    list_filter = ["submission__prompt_set"]
    search_fields = ["text", "submission__system__slug"]
    raw_id_fields = ["submission", "prompt"]
    list_select_related = ["submission__system", "submission__prompt_set", "prompt__prompt_set"]


class SpeakerInline(TabularInline):
    model = Speaker
    extra = 0
    raw_id_fields = ["system"]


class TurnInline(TabularInline):
    model = Turn
    extra = 0


class ConversationUploadForm(RefusesNul, forms.Form):
    file = forms.FileField(
        help_text='.jsonl: {"id", "domain", "speakers", "turns"} per line. .parquet: the '
        "Hugging Face layout (below)."
    )
    columns = columns_field("id=conversation_id, messages=conversation, model=model")
    source = forms.ChoiceField(
        choices=[("", "From each line (imported, or human-human)")] + Conversation.Source.choices,
        required=False,
    )


@admin.register(Conversation)
class ConversationAdmin(FileUploadAdmin):
    list_display = ["external_id", "domain", "source", "created"]
    list_filter = ["source", "domain"]
    search_fields = ["external_id", "speakers__system__slug", "turns__text"]
    inlines = [SpeakerInline, TurnInline]
    upload_form = ConversationUploadForm
    upload_title = "Upload conversations"
    upload_intro = (
        "One conversation per line in the interchange format. The whole file is checked "
        "first; nothing is stored when any line has a problem, and conversations already "
        "stored as they are count as unchanged."
    )

    def store_upload(self, request, data, filename, fields):
        result = import_conversations(
            data=data,
            filename=filename,
            user=request.user,
            source=fields["source"] or None,
            columns=fields["columns"],
        )
        message = f"{result.created} conversations created, {result.unchanged} unchanged."
        return message, redirect("admin:evalhub_conversation_changelist")


@admin.register(Turn)
class TurnAdmin(ModelAdmin):
    list_display = [
        "conversation",
        "position",
        "speaker",
        "text",
        "latency_ms",
        "flagged_offensive",
    ]
    list_filter = ["flagged_offensive"]
    search_fields = ["text", "conversation__external_id"]
    raw_id_fields = ["conversation"]
    list_select_related = ["conversation"]


@admin.register(Speaker)
class SpeakerAdmin(ModelAdmin):
    list_display = ["conversation", "index", "__str__"]
    list_filter = ["conversation__source", "conversation__domain"]
    search_fields = ["conversation__external_id", "system__slug"]
    raw_id_fields = ["conversation", "system"]
    list_select_related = ["conversation", "system"]


@admin.register(Notice)
class NoticeAdmin(ModelAdmin):
    list_display = ["created", "user", "kind", "text", "read_at"]
    list_filter = ["kind"]
    list_select_related = ["user"]
    search_fields = ["user__username", "text"]
    raw_id_fields = ["user"]


@admin.register(NoticePreference)
class NoticePreferenceAdmin(ModelAdmin):
    list_display = ["user", "kind", "on_site", "by_email"]
    list_filter = ["kind"]
    list_select_related = ["user"]
    raw_id_fields = ["user"]


@admin.register(Lease)
class LeaseAdmin(ModelAdmin):
    """Who holds which background work, for an operator watching a takeover. Read-only:
    only evalhub/leases.py takes, renews and releases leases, so that no work runs twice."""

    list_display = ["key", "owner", "acquired_at", "heartbeat_at", "expires_at", "attempts"]
    search_fields = ["key", "owner"]
    ordering = ["expires_at"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
