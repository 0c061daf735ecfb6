from django.contrib import admin

from .models import BotEndpoint, PartnerSet, PlannedDialogue, Tournament


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "kind", "domain", "status", "published", "owner", "created"]
    list_filter = ["kind", "status", "published", "schedule"]
    search_fields = ["name", "slug", "description", "domain", "owner__username"]
    raw_id_fields = ["owner", "campaign", "submission"]
    filter_horizontal = ["systems", "baselines"]


@admin.register(PartnerSet)
class PartnerSetAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "version", "created"]
    search_fields = ["name", "slug", "description"]
    filter_horizontal = ["systems"]


@admin.register(BotEndpoint)
class BotEndpointAdmin(admin.ModelAdmin):
    list_display = ["system", "url", "timeout_seconds", "max_concurrency"]
    search_fields = ["system__slug", "url"]
    raw_id_fields = ["system"]


@admin.register(PlannedDialogue)
class PlannedDialogueAdmin(admin.ModelAdmin):
    list_display = ["tournament", "key", "status", "attempts", "updated"]
    list_filter = ["status"]
    search_fields = ["key", "tournament__slug", "last_error"]
    raw_id_fields = ["tournament", "conversation"]
