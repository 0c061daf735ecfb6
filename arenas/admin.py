"""Admin pages of arenas: arenas and their entries are edited here like on the owner's
pages; battles, their turns and answers, and leaderboards are records."""

from django.contrib import admin

from evalhub.admin_tools import RecordAdmin, pretty_json

from .models import (
    Arena,
    ArenaCategory,
    ArenaSystem,
    Battle,
    BattleAnswer,
    BattleTurn,
    Leaderboard,
    LeaderboardVariant,
    PairingState,
)


class ArenaSystemInline(admin.TabularInline):
    model = ArenaSystem
    extra = 0
    raw_id_fields = ["system", "endpoint"]


@admin.register(Arena)
class ArenaAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "owner", "visibility", "voters", "max_turns", "created"]
    list_filter = ["visibility", "voters", "exclude_flagged"]
    search_fields = ["name", "slug", "owner__username"]
    list_select_related = ["owner"]
    raw_id_fields = ["owner"]
    readonly_fields = ["invitation_token", "leaderboard_queued_at"]
    inlines = [ArenaSystemInline]


@admin.register(ArenaSystem)
class ArenaSystemAdmin(admin.ModelAdmin):
    list_display = ["system", "arena", "endpoint", "weight", "added"]
    search_fields = ["system__slug", "arena__slug"]
    list_select_related = ["system", "arena", "endpoint__system"]
    raw_id_fields = ["arena", "system", "endpoint"]


@admin.register(Battle)
class BattleAdmin(RecordAdmin):
    """Battles as they were held or imported. An edit would change what a voter saw or
    said: a vote changed here is a vote nobody cast, and the leaderboard counts it."""

    list_display = [
        "public_id",
        "arena",
        "system_a",
        "system_b",
        "source",
        "turns",
        "vote",
        "voted_at",
        "language",
        "started_at",
    ]
    list_filter = ["source", "vote", "voter_platform", "anonymous"]
    search_fields = ["arena__slug", "system_a__slug", "system_b__slug", "question_id", "voter_ref"]
    list_select_related = ["arena", "system_a", "system_b"]
    raw_id_fields = ["arena", "system_a", "system_b", "voter"]
    readonly_fields = ["pairing_shown", "style_a_shown", "style_b_shown"]
    exclude = ["pairing", "style_a", "style_b"]

    @admin.display(description="pairing rule's state")
    def pairing_shown(self, obj):
        return pretty_json(obj.pairing)

    @admin.display(description="style of A")
    def style_a_shown(self, obj):
        return pretty_json(obj.style_a)

    @admin.display(description="style of B")
    def style_b_shown(self, obj):
        return pretty_json(obj.style_b)


@admin.register(BattleTurn)
class BattleTurnAdmin(RecordAdmin):
    """A voter's turn, as sent to both models; an edit would put words in their mouth."""

    list_display = ["battle", "number", "asked_at"]
    search_fields = ["battle__arena__slug", "battle__question_id"]
    list_select_related = ["battle__arena", "battle__system_a", "battle__system_b"]
    raw_id_fields = ["battle"]


@admin.register(BattleAnswer)
class BattleAnswerAdmin(RecordAdmin):
    """A model's answer as it streamed to the voter, with its timing; an edit would show a
    vote about a text the voter never read."""

    list_display = ["turn", "side", "status", "first_token_ms", "tokens", "tokens_per_second"]
    list_filter = ["status", "side", "tokens_reported"]
    search_fields = ["turn__battle__arena__slug", "turn__battle__question_id"]
    list_select_related = [
        "turn__battle__arena",
        "turn__battle__system_a",
        "turn__battle__system_b",
    ]
    raw_id_fields = ["turn"]


@admin.register(Leaderboard)
class LeaderboardAdmin(RecordAdmin):
    """Computed by arenas.tasks.compute_leaderboard from the votes; an edit would publish
    ratings the votes do not give (the next computation would overwrite it anyway)."""

    list_display = ["arena", "battles", "computed_at"]
    search_fields = ["arena__slug"]
    list_select_related = ["arena"]
    readonly_fields = ["result_shown"]
    exclude = ["result"]

    @admin.display(description="result")
    def result_shown(self, obj):
        return pretty_json(obj.result)


@admin.register(LeaderboardVariant)
class LeaderboardVariantAdmin(LeaderboardAdmin):
    """A style-controlled or category leaderboard, computed with the overall one."""

    list_display = ["arena", "key", "battles", "computed_at"]
    search_fields = ["arena__slug", "key"]


@admin.register(ArenaCategory)
class ArenaCategoryAdmin(admin.ModelAdmin):
    list_display = ["name", "arena", "language", "min_turns", "max_turns", "prompt_pattern"]
    search_fields = ["name", "arena__slug"]
    list_select_related = ["arena"]
    raw_id_fields = ["arena"]


# Pairing (issue 27) --------------------------------------------------------------------------


@admin.register(PairingState)
class PairingStateAdmin(RecordAdmin):
    """Updated by each vote and rebuilt with each leaderboard (arenas/pairing_state.py); an
    edit would steer the draws and the stopping rule by numbers no vote gave."""

    list_display = ["arena", "votes", "separated_pairs", "adjacent_pairs", "answered", "updated"]
    list_filter = ["answered"]
    search_fields = ["arena__slug"]
    list_select_related = ["arena"]
    exclude = ["wins"]


# arenacrowd: the crowd models.
from . import crowd_admin  # noqa: E402, F401
