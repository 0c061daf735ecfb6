"""Result pages of studies and campaigns: who sees them, running an analysis, plots, links."""

import pytest
from django.urls import reverse

from analysis.models import AnalysisRun
from analysis.runs.tasks import analyze_campaign, analyze_study
from annotation.models import Campaign
from tests import factories
from tests.analysis.dimensional_builders import FAST, imported_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    client.force_login(factories.user(staff=True))
    return client


def test_staff_read_a_studys_campaigns_and_results(staff_client):
    study = imported_study()
    run = analyze_study(study, FAST, synchronous=True)
    response = staff_client.get(reverse("results:study", args=[study.slug]))
    assert response.status_code == 200
    page = response.content.decode()
    for campaign in Campaign.objects.filter(study=study):
        assert campaign.title in page
    assert reverse("results:plot", args=[run.pk, "behaviours-undesirable"]) in page
    assert 'class="behaviour-rates"' in page and 'class="predictive-validity"' in page


@pytest.mark.parametrize("annotations", ["first", "all"])
def test_the_study_page_says_which_unit_each_number_counts(staff_client, annotations):
    study = imported_study()
    analyze_study(study, {**FAST, "annotations": annotations}, synchronous=True)
    page = staff_client.get(reverse("results:study", args=[study.slug])).content.decode()
    if annotations == "first":
        assert "One observation per bot turn: the first annotation of each conversation" in page
        assert "the first annotation of each conversation, as in the paper" in page
        assert "its first judgment, as in the paper" in page
        assert '<th class="num">Bot turns</th>' in page
    else:
        assert "Every annotation of a bot turn counts" in page
        assert "design effect, Rao &amp; Scott 1992" in page
        assert "the ratings of one unit are averaged into its observation" in page
        assert "the majority of its judgments (a split is a tie)" in page
        assert '<th class="num">Observations</th>' in page


def test_table_5_is_shown_downsampled_with_the_data_as_it_comes_apart(staff_client):
    study = imported_study()
    run = analyze_study(study, {**FAST, "sensitivity_conversations": 4}, synchronous=True)
    page = staff_client.get(reverse("results:study", args=[study.slug])).content.decode()
    behaviours = run.result["behaviours"]["sensitivity_downsampled"]
    assert behaviours["per_group"] == 4 and behaviours["draws"] == 200
    assert 'class="sensitivity-downsampled" data-section="behaviours"' in page
    assert "Behaviours: 4 conversations per bot, 200 draws" in page
    # The made-up study has 6 compared pairs per bot pair: 4 drawn of them too.
    assert "Comparative: 4 pairs of conversations per bot pair, 200 draws" in page
    [row] = [r for r in behaviours["rows"] if (r["metric"], r["alpha"]) == ("ignore", 0.01)]
    assert f"{row['mean']:.1f} [{row['low']:.0f}, {row['high']:.0f}]" in page
    assert "all the data as it comes" in page


def test_a_study_is_not_shown_to_others(client):
    study = imported_study()
    analyze_study(study, FAST, synchronous=True)
    assert client.get(reverse("results:study", args=[study.slug])).status_code == 404
    client.force_login(factories.user())
    assert client.get(reverse("results:study", args=[study.slug])).status_code == 404
    run = AnalysisRun.objects.get(study=study)
    assert client.get(reverse("results:plot", args=[run.pk, "agreement"])).status_code == 404


def test_staff_run_a_campaigns_analysis_from_its_page(
    staff_client, django_capture_on_commit_callbacks
):
    study = imported_study()
    campaign = Campaign.objects.get(study=study, task_kind="comparative")
    url = reverse("results:analyze-campaign", args=[campaign.slug])
    with django_capture_on_commit_callbacks(execute=True):  # the queued task runs (eager)
        response = staff_client.post(url)
    assert response.status_code == 302
    assert response.url == reverse("results:campaign", args=[campaign.slug])
    run = AnalysisRun.objects.get(campaign=campaign, tournament=None)
    assert run.status == AnalysisRun.Status.SUCCEEDED, run.error
    page = staff_client.get(response.url).content.decode()
    assert 'class="comparative-results"' in page
    assert reverse("results:plot", args=[run.pk, "comparative"]) in page


def test_running_an_analysis_needs_staff(client):
    study = imported_study()
    client.force_login(factories.user())
    response = client.post(reverse("results:analyze-study", args=[study.slug]))
    assert response.status_code == 403
    assert not AnalysisRun.objects.filter(study=study).exists()


def test_a_plot_is_served_as_svg_without_scripts(staff_client):
    study = imported_study()
    campaign = Campaign.objects.get(study=study, task_kind="likert")
    run = analyze_campaign(campaign, FAST, synchronous=True)
    response = staff_client.get(reverse("results:plot", args=[run.pk, "likert-dialogue"]))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("image/svg+xml")
    assert response["Content-Security-Policy"].startswith("default-src 'none'")
    assert b"<script" not in response.content


def test_the_campaign_page_and_the_leaderboard_list_link_to_results(staff_client):
    study = imported_study()
    campaign = Campaign.objects.get(study=study, task_kind="likert")
    page = staff_client.get(reverse("annotation:manage-campaign", args=[campaign.slug]))
    text = page.content.decode()
    assert reverse("results:campaign", args=[campaign.slug]) in text
    assert reverse("results:study", args=[study.slug]) in text
    listing = staff_client.get(reverse("analysis:list")).content.decode()
    assert reverse("results:study", args=[study.slug]) in listing


def test_an_ab_leaderboard_shows_the_chateval_reading(client):
    from analysis.runs.tasks import analyze_tournament
    from tests.analysis import builders
    from tournaments.models import Tournament

    tournament = builders.ab_tournament()
    Tournament.objects.filter(pk=tournament.pk).update(published=True)
    run = analyze_tournament(tournament, builders.FAST, synchronous=True)
    page = client.get(reverse("analysis:detail", args=[tournament.slug])).content.decode()
    assert 'class="chateval"' in page
    for row in run.result["chateval"]["baselines"]:
        assert f"<td>{row['baseline']}</td>" in page
    assert "their judgments are kept" in page
    chateval = run.result["chateval"]
    if chateval["kappa_without_outliers"]:
        assert f"{chateval['kappa_without_outliers']['kappa']:.3f}</strong>" in page


def test_an_ab_leaderboard_says_when_the_outliers_were_removed(client):
    from analysis.runs.tasks import analyze_tournament
    from tests.analysis import builders
    from tournaments.models import Tournament

    tournament = builders.ab_tournament()
    Tournament.objects.filter(pk=tournament.pk).update(published=True)
    run = analyze_tournament(
        tournament, {**builders.FAST, "remove_outliers": True}, synchronous=True
    )
    page = client.get(reverse("analysis:detail", args=[tournament.slug])).content.decode()
    removed = run.result["chateval"]["removed_judgments"]
    assert f"their {removed} judgments are left out of these results and of the ranking" in page


@pytest.mark.django_db(transaction=True)
def test_an_analysis_that_failed_as_it_was_queued_is_flashed_as_failed(staff_client, monkeypatch):
    # Without a broker the task runs as it is queued: the page must not say "under way"
    # above "failed".
    def broken(*args, **kwargs):
        raise TypeError("a broken report")

    monkeypatch.setattr("analysis.runs.tasks.build_report", broken)
    study = imported_study()
    campaign = Campaign.objects.get(study=study, task_kind="comparative")

    response = staff_client.post(
        reverse("results:analyze-campaign", args=[campaign.slug]), follow=True
    )

    page = response.content.decode()
    assert AnalysisRun.objects.get(campaign=campaign).status == AnalysisRun.Status.FAILED
    assert "the analysis failed: TypeError: a broken report" in page
    assert "under way" not in page


def test_a_campaigns_owner_gets_back_to_the_campaign_from_its_results(client):
    # Only its managers see the results page; the owner is one of them, staff or not.
    study = imported_study()
    campaign = Campaign.objects.get(study=study, task_kind="likert")
    owner = factories.user("owner")
    Campaign.objects.filter(pk=campaign.pk).update(owner=owner)
    analyze_campaign(campaign, FAST, synchronous=True)
    client.force_login(owner)

    page = client.get(reverse("results:campaign", args=[campaign.slug])).content.decode()

    link = reverse("annotation:manage-campaign", args=[campaign.slug])
    assert f'<a href="{link}" id="campaign-link">Campaign</a>' in page
