"""What a page flashes after an analysis was requested: up to date, failed, or under way."""

from django.contrib import messages

from analysis.models import AnalysisRun
from evalhub.errors import show_on_page
from evalhub.queueing import QUEUE_UNREACHABLE


def flash_run(request, name: str, run: AnalysisRun) -> None:
    # Where the run was computed as it was queued (the embedded mode runs tasks eagerly) the
    # object in hand is stale: flash what happened, never "under way" above "failed".
    run.refresh_from_db(fields=["status", "progress", "error"])
    if run.status == AnalysisRun.Status.SUCCEEDED:
        messages.success(request, f"{name}: the results are up to date (analysis {run.pk}).")
    elif run.status == AnalysisRun.Status.FAILED:
        show_on_page(request, f"the analysis failed: {run.error}", about=name)
    elif run.progress == QUEUE_UNREACHABLE:
        messages.warning(request, f"{name}: analysis {run.pk} {run.progress}.")
    else:
        messages.info(request, f"{name}: analysis {run.pk} is under way.")
