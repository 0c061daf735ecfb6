"""Every report kind from its first judgment: a pilot with 0, 1, 2 or 3 judgments is analysed,
drawn and shown, or told there is nothing to analyse; never a crash.

The judgments kept are the first ones item by item, so that from two on they overlap on one
item (agreement from two annotators of one unit, the case that once crashed the plots)."""

import pytest
from django.urls import reverse

from analysis.models import AnalysisRun
from analysis.pages.plots import dimensional_plots, render_plots
from analysis.reports import TOO_FEW_FOR_INTERVALS, NothingToAnalyse
from analysis.runs.tasks import analyze_campaign, analyze_tournament
from annotation.demo import load_annotation_demo
from annotation.models import Campaign, Judgment
from demo.judgments import simulate_judgments
from evalhub.demo import load_catalog_demo
from tests import factories
from tests.analysis import builders

DIMENSIONAL = {
    "abc_eval": "demo-abc-eval",
    "likert": "demo-likert",
    "comparative": "demo-comparative",
}
FAST_DIMENSIONAL = {"alpha_resamples": 50, "seed": 1}
KINDS = ["spot_the_bot", "ab", *DIMENSIONAL]


def _keep_first(campaign: Campaign, n: int) -> None:
    kept = (
        Judgment.objects.filter(campaign=campaign)
        .order_by("item_id", "pk")
        .values_list("pk", flat=True)[:n]
    )
    Judgment.objects.filter(campaign=campaign).exclude(pk__in=list(kept)).delete()


def _pilot(kind: str, n: int):
    """(subject, its campaign, analyse, the results page) with n judgments stored."""
    if kind in DIMENSIONAL:
        accounts = load_catalog_demo()
        load_annotation_demo(accounts["admin"])
        campaign = Campaign.objects.get(slug=DIMENSIONAL[kind])
        simulate_judgments(campaign, workers=3 * campaign.batches.count())
        _keep_first(campaign, n)
        page = reverse("results:campaign", args=[campaign.slug])
        return (
            campaign,
            campaign,
            lambda: analyze_campaign(campaign, FAST_DIMENSIONAL, synchronous=True),
            page,
        )
    build = builders.spot_the_bot_tournament if kind == "spot_the_bot" else builders.ab_tournament
    tournament = build()
    _keep_first(tournament.campaign, n)
    page = reverse("analysis:detail", args=[tournament.slug])
    return (
        tournament,
        tournament.campaign,
        lambda: analyze_tournament(tournament, builders.FAST, synchronous=True),
        page,
    )


def _plots(kind: str, result: dict) -> dict:
    return dimensional_plots(result) if kind in DIMENSIONAL else render_plots(result)


@pytest.mark.django_db
@pytest.mark.parametrize("kind", KINDS)
def test_no_judgment_is_nothing_to_analyse_and_no_run(kind):
    _, campaign, analyse, _ = _pilot(kind, 0)

    with pytest.raises(NothingToAnalyse):
        analyse()
    assert not AnalysisRun.objects.filter(campaign=campaign).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("kind", KINDS)
def test_a_pilot_is_analysed_and_every_plot_drawn(kind, n):
    _, campaign, analyse, _ = _pilot(kind, n)

    run = analyse()

    assert run.status == AnalysisRun.Status.SUCCEEDED, run.error
    assert run.result["judgments"] == n == campaign.judgments.count()
    plots = _plots(kind, run.result)
    assert plots and all(svg.lstrip().startswith("<") for svg in plots.values())


@pytest.mark.django_db
@pytest.mark.parametrize("kind", KINDS)
def test_one_judgment_warns_that_it_is_too_few_for_intervals(kind, client):
    _, _, analyse, page = _pilot(kind, 1)
    run = analyse()
    client.force_login(factories.user("staff-reader", staff=True))

    response = client.get(page)

    assert run.result["warnings"][0] == TOO_FEW_FOR_INTERVALS
    assert response.status_code == 200
    assert TOO_FEW_FOR_INTERVALS.split(":")[0] in response.content.decode()
    assert b"run-status failed" not in response.content


@pytest.mark.django_db
@pytest.mark.parametrize("kind", KINDS)
def test_two_judgments_do_not_warn_of_too_few_for_intervals(kind):
    _, _, analyse, _ = _pilot(kind, 2)

    run = analyse()

    assert TOO_FEW_FOR_INTERVALS not in run.result["warnings"]


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["abc_eval", "likert"])
def test_one_systems_tests_between_systems_say_there_is_no_pair(kind, client):
    # One judgment is of one system: the tables of tests between systems have no row.
    _, _, analyse, page = _pilot(kind, 1)
    run = analyse()
    client.force_login(factories.user("staff-reader", staff=True))

    text = client.get(page).content.decode()

    assert len(run.result["systems"]) == 1
    assert text.count("No pair of systems to compare: these judgments are of one system.") >= 2
