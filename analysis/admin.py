"""Admin page for analysis runs: records to look at, never to edit.

Runs are requested from /leaderboards/manage/runs/ (or `manage.py analyze`, or a finished
tournament campaign) and computed by a Celery task; a failed one is retried from there.
"""

from django.contrib import admin
from django.utils.html import format_html_join

from analysis.models import AnalysisRun
from evalhub.admin_tools import RecordAdmin, pretty_json


@admin.register(AnalysisRun)
class AnalysisRunAdmin(RecordAdmin):
    """A run names its inputs by digest, its parameters and library versions; a succeeded
    run is a fixed record (its `save` refuses) that leaderboards and the results API
    cite. Editing or deleting one would let a published result disagree with its record."""

    list_display = [
        "pk",
        "subject",
        "status",
        "stability_state",
        "progress",
        "attempts",
        "requested_by",
        "created",
        "finished_at",
    ]
    list_filter = ["status", "stability_state", "tournament__kind"]
    search_fields = [
        "tournament__slug",
        "campaign__slug",
        "study__slug",
        "inputs_digest",
        "error",
    ]
    # judge_run__arena: an arena's comparison is named by its arena (subject_slug).
    list_select_related = ["tournament", "campaign", "study", "requested_by", "judge_run__arena"]
    exclude = ["result", "plots", "parameters", "versions"]
    readonly_fields = ["parameters_json", "versions_json", "plot_names", "result_json"]

    def get_queryset(self, request):
        # The result and the SVG plots can weigh megabytes; the list shows neither.
        queryset = super().get_queryset(request)
        if request.resolver_match and request.resolver_match.url_name.endswith("changelist"):
            queryset = queryset.defer("result", "plots")
        return queryset

    @admin.display(description="Subject")
    def subject(self, obj):
        return obj.subject_slug

    @admin.display(description="Parameters")
    def parameters_json(self, obj):
        return pretty_json(obj.parameters)

    @admin.display(description="Versions")
    def versions_json(self, obj):
        return pretty_json(obj.versions)

    @admin.display(description="Plots")
    def plot_names(self, obj):
        if not obj.plots:
            return "-"
        return format_html_join(", ", "{}", ((name,) for name in sorted(obj.plots)))

    @admin.display(description="Result")
    def result_json(self, obj):
        return pretty_json(obj.result)
