import re

import pytest
from django.urls import reverse

from analysis.models import AnalysisRun
from analysis.runs.tasks import analyze_judge_run
from annotation.models import Campaign, Judgment
from tests import factories
from tests.analysis.dimensional_builders import imported_study
from tests.analysis.judge_builders import bipartite_tournament, judge_run, spotting_judge

pytestmark = pytest.mark.django_db

FAST = {"seed": 1, "judge_resamples": 100, "convergence_repeats": 30, "convergence_points": 3}


def first_human_payload(item):
    judgment = Judgment.objects.filter(item=item).order_by("pk").first()
    return None if judgment is None else judgment.payload


def likert_campaign(owner=None):
    campaign = (
        Campaign.objects.filter(study=imported_study(), task_kind="likert").order_by("pk").first()
    )
    if owner is not None:
        Campaign.objects.filter(pk=campaign.pk).update(owner=owner)
        campaign.refresh_from_db()
    return campaign


def versus_url(campaign):
    return reverse("results:versus", args=[campaign.slug])


def test_the_owner_compares_a_judge_run_from_the_page(client, django_capture_on_commit_callbacks):
    ada = factories.user("ada")
    campaign = likert_campaign(owner=ada)
    run = judge_run(campaign, first_human_payload, owner=ada)
    client.force_login(ada)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("results:versus-compare", args=[campaign.slug]), {"judge_run": run.pk}
        )
    assert response.status_code == 302
    assert response["Location"] == f"{versus_url(campaign)}?judge_run={run.pk}"
    comparison = AnalysisRun.objects.get(judge_run=run)
    # Celery is eager in the tests: the comparison ran once the request committed.
    assert comparison.status == AnalysisRun.Status.SUCCEEDED
    assert comparison.campaign == campaign and comparison.tournament is None
    assert comparison.result["kind"] == "human_vs_automatic"
    assert comparison.requested_by == ada
    page = client.get(response["Location"])
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="versus-results"' in html
    assert "How to read this page" in html
    assert "Kappa vs majority" in html
    for dimension in ("consistency", "quality"):
        assert f'data-dimension="{dimension}"' in html


def test_the_page_links_the_plots_of_each_dimension(client):
    staff = factories.user("boss", staff=True)
    campaign = likert_campaign()
    comparison = analyze_judge_run(judge_run(campaign, first_human_payload), FAST, synchronous=True)
    client.force_login(staff)
    html = client.get(versus_url(campaign)).content.decode()
    urls = re.findall(r'src="(/results/runs/\d+/plots/versus-[a-z]+-\d\.svg)"', html)
    assert len(urls) == 4  # a scatter and a convergence curve per dimension
    assert set(comparison.plots) == {u.rsplit("/", 1)[1].removesuffix(".svg") for u in urls}
    svg = client.get(urls[0])
    assert svg.status_code == 200
    assert svg["Content-Type"].startswith("image/svg+xml")


def test_the_campaigns_human_results_never_show_the_comparison():
    from analysis.pages.results import latest_run
    from analysis.runs.tasks import analyze_campaign

    campaign = likert_campaign()
    human = analyze_campaign(campaign, {"alpha_resamples": 20}, synchronous=True)
    analyze_judge_run(judge_run(campaign, first_human_payload), FAST, synchronous=True)
    assert latest_run(campaign) == human
    assert AnalysisRun.objects.filter(campaign=campaign).count() == 2


def test_others_get_404_and_anonymous_cannot_compare(client):
    campaign = likert_campaign(owner=factories.user("ada"))
    run = judge_run(campaign, first_human_payload)
    client.force_login(factories.user("eve"))
    assert client.get(versus_url(campaign)).status_code == 404
    compare = reverse("results:versus-compare", args=[campaign.slug])
    assert client.post(compare, {"judge_run": run.pk}).status_code == 404
    client.logout()
    assert client.post(compare, {"judge_run": run.pk}).status_code == 404
    assert not AnalysisRun.objects.filter(judge_run=run).exists()


def test_a_judge_run_of_another_campaign_is_not_found(client):
    staff = factories.user("boss", staff=True)
    campaign = likert_campaign()
    other = Campaign.objects.filter(study=campaign.study, task_kind="abc_eval").first()
    run = judge_run(other, first_human_payload)
    client.force_login(staff)
    compare = reverse("results:versus-compare", args=[campaign.slug])
    assert client.post(compare, {"judge_run": run.pk}).status_code == 404
    assert client.get(f"{versus_url(campaign)}?judge_run={run.pk}").status_code == 404
    assert not AnalysisRun.objects.filter(judge_run=run).exists()


def test_a_campaign_without_judge_runs_says_so(client):
    staff = factories.user("boss", staff=True)
    campaign = likert_campaign()
    client.force_login(staff)
    html = client.get(versus_url(campaign)).content.decode()
    assert 'id="no-judge-runs"' in html
    assert 'id="compare-form"' not in html


def test_a_judge_that_judged_nothing_is_nothing_to_compare(client):
    staff = factories.user("boss", staff=True)
    campaign = likert_campaign()
    run = judge_run(campaign, lambda item: None)
    client.force_login(staff)
    response = client.post(
        reverse("results:versus-compare", args=[campaign.slug]), {"judge_run": run.pk}, follow=True
    )
    assert "There are no judgments to analyse yet." in response.content.decode()
    assert not AnalysisRun.objects.filter(judge_run=run).exists()


def test_the_bipartite_tournament_page_shows_the_target_rankings_and_their_correlation(client):
    ada = factories.user("ada")
    tournament = bipartite_tournament(owner=ada)
    run = judge_run(tournament.campaign, spotting_judge, owner=ada)
    comparison = analyze_judge_run(run, FAST, synchronous=True)
    result = comparison.result
    assert result["task_kind"] == "spot_the_bot"
    assert result["partners"] == ["partner-one", "partner-two"]
    assert sorted(result["systems"]) == ["t-middle", "t-strong", "t-weak"]
    label = result["dimensions"][0]
    assert label["dimension"] == "label"
    assert label["correlation"]["systems"] == 3
    # The simulated humans and the judge both spot weak systems more often.
    assert [row["system"] for row in label["systems"]][0] == "t-strong"
    client.force_login(ada)
    html = client.get(tournament.get_absolute_url()).content.decode()
    assert 'id="versus-summary"' in html
    summary = html[html.index('id="versus-summary"') :]
    assert "Rank by the judge" in summary
    assert "partner-one" not in summary.split("<tbody>")[1].split("</tbody>")[0]
    assert f'href="{versus_url(tournament.campaign)}"' in html


def test_a_tournament_page_without_a_comparison_links_to_the_comparison_page(client):
    ada = factories.user("ada")
    tournament = bipartite_tournament(owner=ada)
    client.force_login(ada)
    html = client.get(tournament.get_absolute_url()).content.decode()
    assert 'id="versus-summary"' not in html
    assert 'id="versus-link"' in html
    client.force_login(factories.user("eve"))
    other = client.get(tournament.get_absolute_url())
    assert 'id="versus-link"' not in other.content.decode()


def test_the_campaign_results_page_links_to_human_versus_automatic(client):
    staff = factories.user("boss", staff=True)
    campaign = likert_campaign()
    client.force_login(staff)
    html = client.get(reverse("results:campaign", args=[campaign.slug])).content.decode()
    assert f'href="{versus_url(campaign)}" id="versus-link"' in html


def test_a_tournament_scored_only_by_the_judge_shows_the_judges_target_ranking(client):
    ada = factories.user("ada")
    tournament = bipartite_tournament(owner=ada)
    Judgment.objects.filter(campaign=tournament.campaign).delete()  # no human has judged
    comparison = analyze_judge_run(
        judge_run(tournament.campaign, spotting_judge, owner=ada), FAST, synchronous=True
    )
    assert comparison.status == AnalysisRun.Status.SUCCEEDED, comparison.error
    label = comparison.result["dimensions"][0]
    assert label["convergence_target"] == "judge" and label["correlation"] is None
    assert comparison.result["systems"][0] == "t-strong"
    client.force_login(ada)
    html = client.get(tournament.get_absolute_url()).content.decode()
    summary = html[html.index('id="versus-summary"') :].split("</tbody>")[0]
    assert summary.count("<tr>") == 4  # header and the three targets
    assert "Spearman" not in summary


def test_the_campaign_results_page_shows_each_judge_runs_latest_comparison(client):
    staff = factories.user("boss", staff=True)
    campaign = likert_campaign()
    first = analyze_judge_run(judge_run(campaign, first_human_payload), FAST, synchronous=True)
    second = analyze_judge_run(judge_run(campaign, first_human_payload), FAST, synchronous=True)
    client.force_login(staff)
    html = client.get(reverse("results:campaign", args=[campaign.slug])).content.decode()
    overview = html[html.index('id="versus-overview"') :].split("</tbody>")[0]
    assert overview.count("<tr><td>") == 4  # two judge runs x two dimensions
    for comparison in (first, second):
        assert f"?judge_run={comparison.judge_run_id}" in overview
    assert overview.index(f"run {second.judge_run_id})") < overview.index(
        f"run {first.judge_run_id})"
    )


def test_the_campaign_results_page_invites_a_comparison_when_there_is_none(client):
    staff = factories.user("boss", staff=True)
    campaign = likert_campaign()
    client.force_login(staff)
    html = client.get(reverse("results:campaign", args=[campaign.slug])).content.decode()
    assert "No automatic judge has been compared with the crowd" in html
