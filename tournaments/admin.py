"""Admin pages for tournaments, partner sets and collection plans.

A tournament's settings may be changed until what they decide exists: the plan's rows
(keys and seeds come from the schedule) once collection started, the campaign's items
once it was generated.
"""

from django.contrib import admin, messages

from evalhub.admin_tools import ModelAdmin, RecordAdmin

from . import partner_sets
from .models import PartnerSet, PlannedDialogue, Tournament

PLANNING = Tournament.Status.PLANNING


@admin.register(Tournament)
class TournamentAdmin(ModelAdmin):
    """Status and campaign move only through the tournament's pages (collect, generate,
    launch), which also act on the plan and the campaign. Once collection has started, the
    schedule settings are what the plan's rows were made from; once the campaign exists,
    the annotation settings are what its items and batches were built from. Deleting a
    tournament would delete its analysis runs: only a tournament still being planned goes."""

    list_display = ["name", "slug", "kind", "domain", "status", "published", "owner", "created"]
    list_filter = ["kind", "status", "published", "schedule"]
    search_fields = ["name", "slug", "description", "domain", "owner__username"]
    list_select_related = ["owner"]
    # Conversations are many: chosen by id, not listed in a select box.
    raw_id_fields = ["owner", "campaign", "submission", "included_conversations"]
    filter_horizontal = ["systems", "baselines"]
    readonly_fields = ["status", "campaign", "created"]
    plan_settings = [
        "kind",
        "schedule",
        "partner_set",
        "conversations_per_pair",
        "exchanges",
        "seed",
    ]
    campaign_settings = [
        "systems",
        "segment_lengths",
        "human_share",
        "features",
        "batch_size",
        "max_batches_per_worker",
        "judgments_per_segment",
        "included_conversations",
        "show_seed",
        "prompt_set",
        "submission",
        "baselines",
        "judgments_per_prompt",
        "prompts_per_batch",
        "reward_per_judgment",
    ]

    def get_readonly_fields(self, request, obj=None):
        fields = list(self.readonly_fields)
        if obj is not None and obj.status != PLANNING:
            fields += self.plan_settings
        if obj is not None and obj.campaign_id is not None:
            fields += self.campaign_settings
        return fields

    def has_delete_permission(self, request, obj=None):
        if obj is not None and obj.status != PLANNING:
            return False
        return super().has_delete_permission(request, obj)

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions


@admin.register(PartnerSet)
class PartnerSetAdmin(ModelAdmin):
    """A versioned, fixed set: results against it stay comparable only if it never changes
    once a tournament uses it. Saving a change to a used set stores it as a new version
    (tournaments/partner_sets.py); the used version stays as it was."""

    list_display = ["name", "slug", "version", "created"]
    search_fields = ["name", "slug", "description"]
    filter_horizontal = ["systems"]
    fixed_once_used = ["slug", "version"]

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and partner_sets.is_used(obj):
            return self.fixed_once_used
        return []

    def save_model(self, request, obj, form, change):
        if change and partner_sets.is_used(PartnerSet.objects.get(pk=obj.pk)):
            used = f"{obj.name} v{obj.version}"
            # A new row: the form's systems are saved onto it by save_related.
            obj.pk, obj._state.adding = None, True
            obj.version = partner_sets.next_version(obj.slug)
            obj.save()
            self.message_user(
                request,
                f"{used} is used by a tournament, so the change was saved as version "
                f"{obj.version}; new tournaments get it, earlier ones keep {used}.",
                messages.WARNING,
            )
            return
        super().save_model(request, obj, form, change)


@admin.register(PlannedDialogue)
class PlannedDialogueAdmin(RecordAdmin):
    """One conversation of a plan. Collection claims a row by its status and attempt count
    (a conditional update) and stores the conversation once complete; a hand edit could
    hand one row to two workers or mark a conversation collected that is not. Failed rows
    are run again from the tournament's page."""

    list_display = ["tournament", "key", "status", "attempts", "updated"]
    list_filter = ["status", "tournament__schedule"]
    search_fields = ["key", "tournament__slug", "last_error"]
    list_select_related = ["tournament"]

    def has_delete_permission(self, request, obj=None):
        # Goes with a tournament still being planned (the tournament's delete cascades).
        allowed = admin.ModelAdmin.has_delete_permission(self, request, obj)
        return allowed and (obj is None or obj.tournament.status == PLANNING)

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions
