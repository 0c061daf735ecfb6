"""Admin pages of an arena's crowd: gold battles are edited like on the owner's page;
launches and crowd battles are records (the campaign's own pages run the platform side)."""

from django.contrib import admin

from evalhub.admin_tools import RecordAdmin

from .crowd_models import CrowdBattle, CrowdLaunch, GoldBattle


@admin.register(GoldBattle)
class GoldBattleAdmin(admin.ModelAdmin):
    list_display = ["pk", "arena", "better", "created"]
    search_fields = ["arena__slug", "prompt"]
    list_select_related = ["arena"]
    raw_id_fields = ["arena"]


@admin.register(CrowdLaunch)
class CrowdLaunchAdmin(RecordAdmin):
    """A launch made the campaign it names; changing the link would hand its crowd's
    votes to another arena."""

    list_display = ["campaign", "arena", "battles_per_participant", "created_by", "created"]
    search_fields = ["arena__slug", "campaign__slug"]
    list_select_related = ["arena", "campaign", "created_by"]
    raw_id_fields = ["arena", "campaign", "created_by"]


@admin.register(CrowdBattle)
class CrowdBattleAdmin(RecordAdmin):
    """Which battle answered which slot of a participant's batch: its vote is that slot's
    judgment."""

    list_display = ["battle", "assignment", "item", "first_side"]
    list_select_related = [
        "battle__arena",
        "battle__system_a",
        "battle__system_b",
        "assignment__batch__campaign",
        "assignment__worker",
        "item__campaign",
    ]
    raw_id_fields = ["battle", "assignment", "item"]
