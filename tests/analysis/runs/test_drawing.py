"""analysis/runs/drawing.py: a succeeded run's plots drawn after it, by a task of their own."""

from types import SimpleNamespace

import pytest
from django.contrib.auth.models import AnonymousUser
from django.urls import reverse

from analysis.models import AnalysisRun
from analysis.pages.leaderboards import results_for_system
from analysis.pages.plots import render_plots, system_plot_name
from analysis.runs import drawing as run_plots
from analysis.runs.tasks import analyze_tournament, library_versions
from evalhub import leases
from tests.analysis import builders

pytestmark = pytest.mark.django_db


def undrawn_run(tournament) -> AnalysisRun:
    """A succeeded run stored without its plots, as ``manage.py analyze`` stores one."""
    return builders.stored_run(tournament, plots={}, versions=library_versions())


def test_a_run_computed_without_plots_stores_its_result_and_no_plots():
    tournament = builders.spot_the_bot_tournament()
    run = analyze_tournament(tournament, builders.FAST, synchronous=True, plots=False)
    assert run.status == AnalysisRun.Status.SUCCEEDED and run.result["ranking"]
    assert run.plots == {}
    assert "matplotlib" not in run.versions and "numpy" in run.versions
    assert not run_plots.plots_drawn(run)


def test_drawing_stores_the_plots_of_the_result_and_names_matplotlib():
    run = undrawn_run(builders.bare_tournament())
    assert run_plots.draw_plots_now(run.pk) == "drawn"
    run.refresh_from_db()
    assert run.plots == render_plots(run.result)
    assert run.versions["matplotlib"] == library_versions(plotted=True)["matplotlib"]
    assert run.versions["numpy"] == library_versions()["numpy"]


def test_drawing_again_does_nothing():
    run = undrawn_run(builders.bare_tournament())
    run_plots.draw_plots_now(run.pk)
    AnalysisRun.objects.filter(pk=run.pk).update(plots={"heatmap": "<svg/>"})
    assert run_plots.draw_plots_now(run.pk) == "skipped"
    assert AnalysisRun.objects.get(pk=run.pk).plots == {"heatmap": "<svg/>"}


def test_a_run_whose_plots_another_worker_draws_is_skipped():
    run = undrawn_run(builders.bare_tournament())
    held = leases.acquire(leases.key_for(run_plots.LEASE_PREFIX, run.pk))
    assert held is not None
    try:
        assert run_plots.draw_plots_now(run.pk) == "skipped"
    finally:
        leases.release(held)
    assert AnalysisRun.objects.get(pk=run.pk).plots == {}


def test_a_run_that_has_not_succeeded_is_not_drawn():
    run = builders.stored_run(builders.bare_tournament(), status=AnalysisRun.Status.RUNNING)
    assert run_plots.draw_plots_now(run.pk) == "missing"
    assert AnalysisRun.objects.get(pk=run.pk).plots == {}


def test_the_leaderboard_queues_the_missing_plots_and_says_they_are_being_drawn(
    client, django_capture_on_commit_callbacks
):
    tournament = builders.bare_tournament()
    run = undrawn_run(tournament)
    url = reverse("analysis:detail", args=[tournament.slug])
    with django_capture_on_commit_callbacks() as queued:
        response = client.get(url)
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="plots-pending"' in html and 'http-equiv="refresh"' in html
    assert reverse("analysis:plot", args=[tournament.slug, run.pk, "heatmap"]) not in html
    assert len(queued) == 1
    # What the queued task does, here rather than through the broker: with a real worker
    # (CI's second stage) it would not see this test's uncommitted rows.
    run_plots.draw_plots_now(run.pk)
    stored = AnalysisRun.objects.get(pk=run.pk)  # PostgreSQL's jsonb orders keys its own way
    assert stored.plots == render_plots(stored.result)
    # Once drawn, the page shows them and stops reloading.
    html = client.get(url).content.decode()
    assert 'id="plots-pending"' not in html and 'http-equiv="refresh"' not in html
    assert reverse("analysis:plot", args=[tournament.slug, run.pk, "heatmap"]) in html


def test_a_run_with_nothing_to_draw_is_not_pending(django_capture_on_commit_callbacks):
    run = builders.stored_run(
        builders.bare_tournament(), result={"ranking": []}, plots={}, versions={}
    )
    with django_capture_on_commit_callbacks() as queued:
        assert not run_plots.plots_pending(run)
    assert queued == []


def test_a_system_page_shows_no_survival_plot_until_it_is_drawn(
    django_capture_on_commit_callbacks,
):
    tournament = builders.bare_tournament()
    run = undrawn_run(tournament)
    system = SimpleNamespace(slug=next(iter(run.result["survival"]["curves"])))
    with django_capture_on_commit_callbacks() as queued:
        [entry] = results_for_system(system, AnonymousUser())
    assert entry.run.pk == run.pk and entry.plot_url is None and len(queued) == 1
    run_plots.draw_plots_now(run.pk)
    [entry] = results_for_system(system, AnonymousUser())
    assert entry.plot_url == reverse(
        "analysis:plot", args=[tournament.slug, run.pk, system_plot_name(system.slug)]
    )
