"""Admin pages of automatic judges.

Judges may be renamed; a judge's endpoint (its own, of no system) is edited on the
endpoints' admin page. A rubric's text is edited on the
rubric pages (a used one becomes a new version there), never here: a run refers to the
exact text it sent. Runs move through their states by their pages (start, pause,
resume) and the worker; their judgments are records of what the model answered.
"""

from django.contrib import admin

from evalhub.admin_tools import ModelAdmin, RecordAdmin, pretty_json

from .models import AutomaticJudgment, Judge, JudgeRun, Rubric


@admin.register(Judge)
class JudgeAdmin(ModelAdmin):
    list_display = ["name", "slug", "owner", "endpoint", "created"]
    search_fields = ["name", "slug", "owner__username", "endpoint__url", "endpoint__model_name"]
    list_select_related = ["owner", "endpoint"]
    raw_id_fields = ["owner", "endpoint"]


@admin.register(Rubric)
class RubricAdmin(RecordAdmin):
    """A version a run used must stay the text that run sent; new versions are made on the
    rubric pages (judging/rubric_versions.py), which keep the numbering."""

    list_display = ["name", "task_kind", "version", "owner", "created"]
    list_filter = ["task_kind"]
    search_fields = ["name", "instructions", "owner__username"]
    list_select_related = ["owner"]


@admin.register(JudgeRun)
class JudgeRunAdmin(RecordAdmin):
    """Counters are incremented by the worker holding the run's lease; editing them, or the
    status, would make the progress disagree with the judgments stored."""

    list_display = [
        "pk",
        "judge",
        "campaign",
        "arena",
        "rubric",
        "status",
        "items_done",
        "items_failed",
        "items_total",
        "prompt_tokens",
        "completion_tokens",
        "created",
    ]
    list_filter = ["status"]
    search_fields = ["judge__slug", "campaign__slug", "arena__slug", "rubric__name"]
    list_select_related = ["judge", "campaign", "arena", "rubric"]
    raw_id_fields = ["judge", "campaign", "arena", "rubric"]


@admin.register(AutomaticJudgment)
class AutomaticJudgmentAdmin(RecordAdmin):
    """What the model answered and what the kind made of it; changing one would make the
    analysis of automatic against human judgments describe answers nobody gave."""

    list_display = [
        "pk",
        "run",
        "item",
        "battle",
        "status",
        "attempts",
        "prompt_tokens",
        "created",
    ]
    list_filter = ["status"]
    search_fields = ["run__judge__slug", "run__campaign__slug", "run__arena__slug", "raw_text"]
    list_select_related = [
        "run__judge",
        "run__campaign",
        "run__arena",
        "run__rubric",
        "item__campaign",
        "battle__arena",
        "battle__system_a",
        "battle__system_b",
    ]
    raw_id_fields = ["run", "item", "battle"]
    readonly_fields = ["payload_shown"]
    exclude = ["payload"]

    @admin.display(description="payload")
    def payload_shown(self, judgment):
        return pretty_json(judgment.payload)
