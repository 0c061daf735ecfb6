"""Admin page of analysis runs: shown with their parameters and result, never edited."""

import pytest
from django.apps import apps
from django.contrib import admin
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from analysis.models import AnalysisRun
from tests import factories
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db

SVG = "<svg><title>survival-curve-drawing</title></svg>"


def url(action="changelist", *args):
    return reverse(f"admin:analysis_analysisrun_{action}", args=args)


def runs(n=2, prefix="t"):
    for i in range(n):
        tournament = Tournament.objects.create(
            slug=f"{prefix}-{i}", name=f"T {i}", kind=Tournament.Kind.SPOT_THE_BOT
        )
        AnalysisRun.objects.create(
            tournament=tournament,
            parameters={"replicates": 100},
            parameters_digest="p",
            inputs_digest=f"inputs-{prefix}-{i}",
            status=AnalysisRun.Status.SUCCEEDED,
            result={"systems": ["alpha-bot", "beta-bot"]},
            plots={"survival": SVG},
            requested_by=factories.user(),
            finished_at=timezone.now(),
        )
    return AnalysisRun.objects.first()


@pytest.fixture
def superuser(client):
    user = factories.user("boss", staff=True)
    client.force_login(user)
    return user


def test_every_analysis_model_has_an_admin():
    assert all(m in admin.site._registry for m in apps.get_app_config("analysis").get_models())


def test_the_list_searches_and_filters_runs(client, superuser):
    runs()
    everything = client.get(url())
    one = client.get(url() + "?q=t-1&status__exact=succeeded")
    assert (everything.status_code, one.status_code) == (200, 200)
    assert (everything.context["cl"].result_count, one.context["cl"].result_count) == (2, 1)


def test_a_run_shows_its_parameters_result_and_plot_names_not_the_svg(client, superuser):
    run = runs()
    page = client.get(url("change", run.pk)).content.decode()
    assert "&quot;replicates&quot;: 100" in page and "alpha-bot" in page
    assert "survival" in page and "survival-curve-drawing" not in page


def test_the_list_costs_the_same_queries_with_more_runs(
    client, superuser, django_assert_max_num_queries
):
    runs(1, prefix="a")
    with CaptureQueriesContext(connection) as small:
        client.get(url())
    runs(8, prefix="b")
    with django_assert_max_num_queries(len(small.captured_queries)):
        assert client.get(url()).context["cl"].result_count == 9


def test_a_run_is_a_record(client, superuser):
    run = runs(1)
    assert client.get(url("add")).status_code == 403
    change = client.post(url("change", run.pk), {"status": "failed", "error": "edited"})
    delete = client.post(url("delete", run.pk), {"post": "yes"})
    run.refresh_from_db()
    assert (change.status_code, delete.status_code) == (403, 403)
    assert (run.status, run.error) == (AnalysisRun.Status.SUCCEEDED, "")
