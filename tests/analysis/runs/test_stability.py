"""analysis/runs/stability.py: a Spot The Bot run's stability curve computed after the run,
as a part of its own (the command returns first, the page and the API say it is coming)."""

import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from analysis.inputs.judgments import load_inputs
from analysis.models import AnalysisRun, StabilityState
from analysis.reports import build_report
from analysis.runs import stability
from analysis.runs.tasks import analyze_tournament, run_analysis
from evalhub import leases
from tests import factories
from tests.analysis import builders

pytestmark = pytest.mark.django_db

OPTIONS = [f"--param={name}={value}" for name, value in builders.FAST.items()]


def analyze(slug, out, *options) -> tuple[dict, str]:
    """`manage.py analyze` with the fast parameters: the JSON written and what it said."""
    said = io.StringIO()
    call_command("analyze", slug, "--json", str(out), *OPTIONS, *options, stderr=said)
    return json.loads(out.read_text()), said.getvalue()


def staff(client):
    client.force_login(factories.user("boss", staff=True))


def commanded_run(tmp_path, tournament=None) -> AnalysisRun:
    """A run as `manage.py analyze` stores it: the report, its stability part pending."""
    tournament = tournament or builders.spot_the_bot_tournament()
    analyze(tournament.slug, tmp_path / "out.json")
    return AnalysisRun.objects.get(tournament=tournament)


def inline_result(tournament) -> dict:
    """The report of the tournament's judgments with its stability computed in it."""
    report = build_report(load_inputs(tournament), builders.FAST)
    return json.loads(json.dumps(report))


def test_analyze_writes_the_contract_before_the_stability_curve(tmp_path):
    tournament = builders.spot_the_bot_tournament()
    result, said = analyze(tournament.slug, tmp_path / "out.json")
    run = AnalysisRun.objects.get(tournament=tournament)
    assert result["stability"] is None and result["run"]["stability"] == "pending"
    assert result["ranking"] and result["survival"]["curves"]
    assert run.stability_state == StabilityState.PENDING and run.result["stability"] is None
    assert "stability curve: not computed yet" in said and "--wait" in said


def test_with_workers_analyze_queues_the_curve_and_says_a_worker_computes_it(
    tmp_path, settings, django_capture_on_commit_callbacks
):
    settings.CELERY_TASK_ALWAYS_EAGER = False  # a broker: the part goes to a worker
    tournament = builders.spot_the_bot_tournament()
    with django_capture_on_commit_callbacks() as queued:
        result, said = analyze(tournament.slug, tmp_path / "out.json")
    assert result["stability"] is None and len(queued) == 1
    assert "stability curve: being computed by a worker" in said


def test_the_curve_computed_after_the_run_equals_the_curve_computed_in_it(tmp_path):
    tournament = builders.spot_the_bot_tournament()
    run = commanded_run(tmp_path, tournament)
    assert stability.compute_stability_now(run.pk) == "done"
    run.refresh_from_db()
    assert run.stability_state == StabilityState.DONE and run.stability_error == ""
    assert run.result["stability"]["n_conversations"]
    assert run.result == inline_result(tournament)  # the section and the warnings' order


def test_analyze_with_wait_writes_the_curve(tmp_path):
    tournament = builders.spot_the_bot_tournament()
    result, said = analyze(tournament.slug, tmp_path / "out.json", "--wait")
    assert result["run"]["stability"] == "done"
    assert result["stability"] == inline_result(tournament)["stability"]
    assert "stability curve" not in said
    stored = AnalysisRun.objects.get(tournament=tournament)
    assert stored.stability_state == StabilityState.DONE


def test_the_stored_run_is_written_with_its_curve_once_it_is_done(tmp_path):
    tournament = builders.spot_the_bot_tournament()
    run = commanded_run(tmp_path, tournament)
    stability.compute_stability_now(run.pk)
    result, said = analyze(tournament.slug, tmp_path / "again.json")
    assert result["run"]["id"] == run.pk and result["run"]["stability"] == "done"
    assert result["stability"]["share_reproduced"] and "stability curve" not in said


def test_a_failed_curve_is_recorded_and_leaves_the_report_as_it_was(tmp_path, monkeypatch):
    run = commanded_run(tmp_path)
    report = run.result

    def broken(*args, **kwargs):
        raise ArithmeticError("diverged")

    monkeypatch.setattr(stability, "build_stability", broken)
    assert stability.compute_stability_now(run.pk) == "failed"
    run.refresh_from_db()
    assert run.stability_state == StabilityState.FAILED
    assert run.stability_error == "ArithmeticError: diverged"
    assert run.result == report and run.status == AnalysisRun.Status.SUCCEEDED


def test_a_failed_curve_is_not_computed_again_until_retried(tmp_path, monkeypatch):
    run = commanded_run(tmp_path)
    AnalysisRun.objects.filter(pk=run.pk).update(stability_state=StabilityState.FAILED)
    assert stability.compute_stability_now(run.pk) == "skipped"
    assert AnalysisRun.objects.get(pk=run.pk).result["stability"] is None


def test_a_retry_computes_a_failed_curve(tmp_path, django_capture_on_commit_callbacks):
    run = commanded_run(tmp_path)
    AnalysisRun.objects.filter(pk=run.pk).update(
        stability_state=StabilityState.FAILED, stability_error="ArithmeticError: diverged"
    )
    run.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True) as queued:
        assert stability.retry(run)
    assert len(queued) == 1
    run.refresh_from_db()
    assert run.stability_state == StabilityState.DONE and run.stability_error == ""
    assert run.result["stability"]["n_conversations"]


def test_a_curve_that_has_not_failed_is_not_retried(tmp_path, django_capture_on_commit_callbacks):
    run = commanded_run(tmp_path)
    with django_capture_on_commit_callbacks() as queued:
        assert not stability.retry(run)
    assert queued == []
    assert AnalysisRun.objects.get(pk=run.pk).stability_state == StabilityState.PENDING


def test_asking_for_the_same_analysis_again_retries_a_failed_curve(
    tmp_path, django_capture_on_commit_callbacks
):
    tournament = builders.spot_the_bot_tournament()
    run = commanded_run(tmp_path, tournament)
    AnalysisRun.objects.filter(pk=run.pk).update(stability_state=StabilityState.FAILED)
    with django_capture_on_commit_callbacks(execute=True):
        again = analyze_tournament(tournament, builders.FAST)
    assert again.pk == run.pk
    run.refresh_from_db()
    assert run.stability_state == StabilityState.DONE


def test_a_curve_another_worker_computes_is_skipped(tmp_path):
    run = commanded_run(tmp_path)
    held = leases.acquire(leases.key_for(stability.LEASE_PREFIX, run.pk))
    assert held is not None
    try:
        assert stability.compute_stability_now(run.pk) == "skipped"
    finally:
        leases.release(held)
    stored = AnalysisRun.objects.get(pk=run.pk)
    assert stored.stability_state == StabilityState.PENDING and stored.result["stability"] is None


def test_a_curve_whose_judgments_changed_fails_with_the_reason(tmp_path):
    run = commanded_run(tmp_path)
    AnalysisRun.objects.filter(pk=run.pk).update(inputs_digest="not-these-judgments")
    assert stability.compute_stability_now(run.pk) == "failed"
    assert "judgments changed" in AnalysisRun.objects.get(pk=run.pk).stability_error


def test_an_ab_run_has_no_stability_part(tmp_path):
    tournament = builders.ab_tournament()
    result, said = analyze(tournament.slug, tmp_path / "out.json")
    assert result["stability"] == {} and result["run"]["stability"] is None
    assert AnalysisRun.objects.get(tournament=tournament).stability_state == ""
    assert "stability curve" not in said


def test_with_workers_a_queued_run_stores_its_report_then_queues_its_curve(
    settings, django_capture_on_commit_callbacks
):
    settings.CELERY_TASK_ALWAYS_EAGER = False  # a broker: the curve is a part of its own
    tournament = builders.spot_the_bot_tournament()
    run = analyze_tournament(tournament, builders.FAST)  # queued, not computed
    with django_capture_on_commit_callbacks() as queued:
        assert run_analysis(run.pk) == "succeeded"
    run.refresh_from_db()
    assert run.stability_state == StabilityState.PENDING and run.result["stability"] is None
    assert len(queued) == 1
    queued[0]()  # the part's message (Celery itself still runs it here, eagerly)
    run.refresh_from_db()
    assert run.stability_state == StabilityState.DONE
    assert run.result == inline_result(tournament)


def test_without_workers_a_queued_run_computes_its_curve_with_the_report():
    tournament = builders.spot_the_bot_tournament()
    run = analyze_tournament(tournament, builders.FAST)
    assert run_analysis(run.pk) == "succeeded"
    run.refresh_from_db()
    assert run.stability_state == "" and run.result["stability"]["n_conversations"]


def test_the_sweep_queues_a_curve_whose_worker_died(tmp_path, django_capture_on_commit_callbacks):
    run = commanded_run(tmp_path)
    AnalysisRun.objects.filter(pk=run.pk).update(stability_state=StabilityState.RUNNING)
    with django_capture_on_commit_callbacks(execute=True):
        assert stability.requeue_stability_parts() == 1
    assert AnalysisRun.objects.get(pk=run.pk).stability_state == StabilityState.DONE


def test_the_sweep_leaves_a_curve_being_computed_alone(tmp_path):
    run = commanded_run(tmp_path)
    AnalysisRun.objects.filter(pk=run.pk).update(stability_state=StabilityState.RUNNING)
    held = leases.acquire(leases.key_for(stability.LEASE_PREFIX, run.pk))
    try:
        assert stability.requeue_stability_parts() == 0
    finally:
        leases.release(held)


# --- the leaderboard page and the API ------------------------------------------------------


def test_the_page_says_the_curve_is_being_computed_and_queues_it(
    tmp_path, client, django_capture_on_commit_callbacks
):
    staff(client)
    tournament = builders.spot_the_bot_tournament()
    run = commanded_run(tmp_path, tournament)
    url = reverse("analysis:detail", args=[tournament.slug])
    with django_capture_on_commit_callbacks() as queued:
        response = client.get(url)
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="stability-pending"' in html and 'http-equiv="refresh"' in html
    assert len(queued) == 2  # the curve, and the plots the command did not draw
    assert AnalysisRun.objects.get(pk=run.pk).stability_state == StabilityState.PENDING


def test_the_page_shows_the_curve_once_it_is_done(
    tmp_path, client, django_capture_on_commit_callbacks
):
    staff(client)
    tournament = builders.spot_the_bot_tournament()
    run = commanded_run(tmp_path, tournament)
    url = reverse("analysis:detail", args=[tournament.slug])
    with django_capture_on_commit_callbacks(execute=True):
        client.get(url)  # embedded mode: the curve, then the plots, computed in the request
    html = client.get(url).content.decode()
    assert 'id="stability-pending"' not in html and 'http-equiv="refresh"' not in html
    assert reverse("analysis:plot", args=[tournament.slug, run.pk, "stability"]) in html
    assert AnalysisRun.objects.get(pk=run.pk).stability_state == StabilityState.DONE


def test_the_page_adds_the_curve_s_plot_to_plots_drawn_before_it(
    tmp_path, client, django_capture_on_commit_callbacks
):
    from analysis.runs.drawing import draw_plots_now

    staff(client)
    tournament = builders.spot_the_bot_tournament()
    run = commanded_run(tmp_path, tournament)
    draw_plots_now(run.pk)
    stability.compute_stability_now(run.pk)
    assert "stability" not in AnalysisRun.objects.get(pk=run.pk).plots
    url = reverse("analysis:detail", args=[tournament.slug])
    with django_capture_on_commit_callbacks(execute=True) as queued:
        assert 'id="plots-pending"' in client.get(url).content.decode()
    assert len(queued) == 1
    plots = AnalysisRun.objects.get(pk=run.pk).plots
    assert plots["stability"].startswith("<?xml") and "heatmap" in plots


def test_the_page_shows_a_failed_curve_with_a_retry_for_its_owner(tmp_path, client):
    owner = factories.user("owner")
    tournament = builders.spot_the_bot_tournament(published=True, owner=owner)
    run = commanded_run(tmp_path, tournament)
    AnalysisRun.objects.filter(pk=run.pk).update(
        stability_state=StabilityState.FAILED, stability_error="ArithmeticError: diverged"
    )
    client.force_login(owner)
    html = client.get(reverse("analysis:detail", args=[tournament.slug])).content.decode()
    assert 'id="stability-failed"' in html and "ArithmeticError: diverged" in html
    assert reverse("analysis:retry-stability", args=[tournament.slug, run.pk]) in html


def test_the_owner_retries_a_failed_curve(tmp_path, client, django_capture_on_commit_callbacks):
    owner = factories.user("owner")
    tournament = builders.spot_the_bot_tournament(owner=owner)
    run = commanded_run(tmp_path, tournament)
    AnalysisRun.objects.filter(pk=run.pk).update(stability_state=StabilityState.FAILED)
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("analysis:retry-stability", args=[tournament.slug, run.pk]))
    assert response.status_code == 302
    assert AnalysisRun.objects.get(pk=run.pk).stability_state == StabilityState.DONE


def test_someone_else_may_not_retry_a_curve(tmp_path, client):
    tournament = builders.spot_the_bot_tournament(owner=factories.user("owner"))
    run = commanded_run(tmp_path, tournament)
    AnalysisRun.objects.filter(pk=run.pk).update(stability_state=StabilityState.FAILED)
    client.force_login(factories.user("stranger"))
    response = client.post(reverse("analysis:retry-stability", args=[tournament.slug, run.pk]))
    assert response.status_code in (403, 404)
    assert AnalysisRun.objects.get(pk=run.pk).stability_state == StabilityState.FAILED


def test_the_api_gives_a_null_curve_and_its_state_until_it_is_done(
    tmp_path, client, django_capture_on_commit_callbacks
):
    staff(client)
    tournament = builders.spot_the_bot_tournament()
    run = commanded_run(tmp_path, tournament)
    url = reverse("api-tournament-results", args=[tournament.slug])
    with django_capture_on_commit_callbacks() as queued:
        body = client.get(url).json()
    assert body["stability"] is None and body["run"]["stability"] == "pending"
    assert len(queued) == 1
    stability.compute_stability_now(run.pk)
    body = client.get(url).json()
    assert body["run"]["stability"] == "done" and body["stability"]["n_conversations"]
