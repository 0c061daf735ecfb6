"""Drawing a succeeded run's SVG plots after the run, off its critical path.

A run stores its result (the contract) first; its plots come from ``draw_plots``, a task on
the analysis queue. Who queues it (docs/architecture.md, "Analysis plots"):

- ``manage.py analyze`` never does (``--plots`` draws them before it writes the contract);
  with an eager Celery (no broker, ``make run``) a queued task would run inline in the
  command and put the drawing back on its critical path;
- a result page showing a succeeded run without plots queues them (``plots_pending``) and
  says "plots are being drawn" with the page's refresh until they exist: this covers runs
  computed by the command, by the demo, and runs stored before plots were drawn apart.

The task is idempotent: it draws only while it holds the run's plot lease
("analysis-plots:<pk>") and only a run whose plots are not drawn, and it writes fenced by
the lease and only if the plots are still not drawn. A run whose stability curve came as a
part of its own after its plots were drawn (``analysis.runs.stability``) lacks that one
plot: the page queues the task again, which then draws it alone and adds it. Whether a run's plots are drawn is
said by its provenance: ``versions`` names matplotlib once it drew them (even a result
with nothing to draw), so a run with nothing to draw is not queued again and again.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import transaction

from analysis.models import AnalysisRun, StabilityState
from analysis.pages.plots import (
    available_dimensional_plots,
    available_plots,
    render_plots,
    stability_curve,
)
from analysis.runs.tasks import PLOTTING_LIBRARIES, library_versions
from evalhub import leases
from evalhub.queueing import enqueue

__all__ = ["LEASE_PREFIX", "draw_plots", "draw_plots_now", "plots_drawn", "plots_pending"]

logger = logging.getLogger(__name__)

LEASE_PREFIX = "analysis-plots"


def plots_drawn(run: AnalysisRun) -> bool:
    """Whether ``run``'s plots have been drawn (matplotlib is in its provenance)."""
    return all(name in (run.versions or {}) for name in PLOTTING_LIBRARIES)


def _has_plots_to_draw(result: dict) -> bool:
    return bool(available_plots(result) or available_dimensional_plots(result))


def _lacks_stability_plot(run: AnalysisRun) -> bool:
    """The run's stability curve arrived after its plots were drawn: its plot is missing
    (a query on the plots' keys, not the plots themselves)."""
    return (
        run.stability_state == StabilityState.DONE
        and "stability" in available_plots(run.result or {})
        and not AnalysisRun.objects.filter(pk=run.pk, plots__has_key="stability").exists()
    )


def plots_pending(run: AnalysisRun | None) -> bool:
    """True when ``run`` succeeded with plots to draw that are not drawn yet; the drawing
    is then queued (after commit). A page showing the run says so and refreshes."""
    if run is None or run.status != AnalysisRun.Status.SUCCEEDED:
        return False
    if plots_drawn(run):
        if not _lacks_stability_plot(run):
            return False
    elif not _has_plots_to_draw(run.result or {}):
        return False
    transaction.on_commit(lambda: enqueue(draw_plots, run.pk))
    return True


@shared_task(name="analysis.tasks.draw_plots", acks_late=True, reject_on_worker_lost=True)
def draw_plots(run_id: int) -> str:
    """Draw and store one run's plots: "drawn", "skipped" (drawn, or being drawn) or
    "missing" (no succeeded run with that id)."""
    return draw_plots_now(run_id)


def draw_plots_now(run_id: int) -> str:
    """``draw_plots``'s work, in this process."""
    succeeded = AnalysisRun.objects.filter(pk=run_id, status=AnalysisRun.Status.SUCCEEDED)
    run = succeeded.defer("plots").first()
    if run is None:
        return "missing"
    if plots_drawn(run):
        return _draw_stability_plot(run) if _lacks_stability_plot(run) else "skipped"
    with leases.holding(leases.key_for(LEASE_PREFIX, run_id), thread=False) as held:
        if held is None:
            return "skipped"
        plots = render_plots(run.result)
        versions = {**run.versions, **library_versions(plotted=True)}
        # Only a run still without plots: a redelivered message draws the same SVG anyway.
        written = (
            held.fence(succeeded)
            .exclude(versions__has_key=PLOTTING_LIBRARIES[0])
            .update(plots=plots, versions=versions)
        )
    return "drawn" if written else "skipped"


def _draw_stability_plot(run: AnalysisRun) -> str:
    """Add the stability plot to a run's drawn plots, under the plot lease (every write of
    the plots holds it, so none is lost)."""
    with leases.holding(leases.key_for(LEASE_PREFIX, run.pk), thread=False) as held:
        if held is None:
            return "skipped"
        svg = stability_curve(run.result)
        mine = held.fence(AnalysisRun.objects.filter(pk=run.pk)).exclude(plots__has_key="stability")
        plots = mine.values_list("plots", flat=True).first()
        if plots is None or svg is None:
            return "skipped"
        written = mine.update(plots={**plots, "stability": svg})
    return "drawn" if written else "skipped"
