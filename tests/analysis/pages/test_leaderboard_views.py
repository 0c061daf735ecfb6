"""Leaderboard pages: who sees what, what they show, the run button, bounded queries."""

import pytest
from django.urls import reverse

from analysis.models import AnalysisRun
from tests import factories
from tests.analysis import builders

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return factories.user("owner")


@pytest.fixture
def researcher():
    return factories.user("researcher")


@pytest.fixture
def staff():
    return factories.user("boss", staff=True)


def detail_url(tournament):
    return reverse("analysis:detail", args=[tournament.slug])


def test_a_published_leaderboard_shows_the_ranking_and_the_plots(client):
    tournament = builders.bare_tournament(name="Garden bots")
    run = builders.stored_run(tournament)
    response = client.get(detail_url(tournament))
    assert response.status_code == 200
    html = response.content.decode()
    ranking = run.result["ranking"]
    positions = [html.index(f'data-system="{row["system"]}"') for row in ranking]
    assert positions == sorted(positions)  # best first
    for row in ranking:
        assert f'data-system="{row["system"]}" data-cluster="{row["cluster"]}"' in html
    for name in ("heatmap", "survival", "cox", "stability"):
        assert reverse("analysis:plot", args=[tournament.slug, run.pk, name]) in html
    assert "Krippendorff" in html and "Sensibleness" in html


def test_a_plot_is_served_as_svg(client):
    tournament = builders.bare_tournament()
    run = builders.stored_run(tournament)
    response = client.get(reverse("analysis:plot", args=[tournament.slug, run.pk, "survival"]))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("image/svg+xml")
    assert "default-src 'none'" in response["Content-Security-Policy"]
    assert response.content.decode() == run.plots["survival"]
    missing = reverse("analysis:plot", args=[tournament.slug, run.pk, "nonsense"])
    assert client.get(missing).status_code == 404


def test_a_plot_of_another_tournament_run_is_not_found(client):
    run = builders.stored_run(builders.bare_tournament())
    other = builders.bare_tournament()
    url = reverse("analysis:plot", args=[other.slug, run.pk, "survival"])
    assert client.get(url).status_code == 404


@pytest.mark.parametrize(
    ("who", "status"), [("anonymous", 404), ("researcher", 404), ("owner", 200), ("staff", 200)]
)
def test_unpublished_results_are_for_the_owner_and_staff(
    client, owner, researcher, staff, who, status
):
    tournament = builders.bare_tournament(owner, published=False)
    run = builders.stored_run(tournament)
    users = {"researcher": researcher, "owner": owner, "staff": staff}
    if who in users:
        client.force_login(users[who])
    assert client.get(detail_url(tournament)).status_code == status
    plot = reverse("analysis:plot", args=[tournament.slug, run.pk, "heatmap"])
    assert client.get(plot).status_code == status
    listed = tournament.name in client.get(reverse("analysis:list")).content.decode()
    assert listed == (status == 200)


def test_the_list_shows_published_tournaments_to_everyone(client):
    shown = builders.bare_tournament(name="Shown tournament")
    builders.stored_run(shown)
    builders.bare_tournament(name="Hidden tournament", published=False)
    html = client.get(reverse("analysis:list")).content.decode()
    assert "Shown tournament" in html and "Hidden tournament" not in html


def test_without_a_successful_run_the_page_says_so(client):
    tournament = builders.bare_tournament()
    builders.stored_run(tournament, status=AnalysisRun.Status.FAILED, error="boom")
    html = client.get(detail_url(tournament)).content.decode()
    assert "not been analysed" in html
    assert "boom" not in html  # failures are for the owner and staff


def test_a_run_in_progress_shows_its_progress_and_reloads(client, owner):
    tournament = builders.bare_tournament(owner)
    builders.stored_run(tournament)
    builders.stored_run(tournament, status=AnalysisRun.Status.RUNNING, progress="Survival analysis")
    client.force_login(owner)
    html = client.get(detail_url(tournament)).content.decode()
    assert "Survival analysis" in html
    assert '<meta http-equiv="refresh" content="3">' in html
    assert 'id="results"' in html  # the last results stay visible meanwhile
    client.logout()
    html = client.get(detail_url(tournament)).content.decode()
    assert "Survival analysis" not in html and "http-equiv" not in html


def test_a_failed_run_shows_its_message_to_staff(client, staff):
    tournament = builders.bare_tournament()
    builders.stored_run(tournament, status=AnalysisRun.Status.FAILED, error="ValueError: no pairs")
    client.force_login(staff)
    html = client.get(detail_url(tournament)).content.decode()
    assert "ValueError: no pairs" in html and "Run the analysis again" in html


def test_staff_run_an_analysis_from_the_page(client, staff, django_capture_on_commit_callbacks):
    tournament = builders.spot_the_bot_tournament()
    client.force_login(staff)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(reverse("analysis:analyze", args=[tournament.slug]))
    assert response.status_code == 302 and response["Location"] == detail_url(tournament)
    (run,) = AnalysisRun.objects.filter(tournament=tournament)
    assert run.status == AnalysisRun.Status.PENDING and run.requested_by == staff
    assert run.parameters["exclude_blocked"] is False and len(callbacks) == 1
    client.post(
        reverse("analysis:analyze", args=[tournament.slug]),
        {"exclude_blocked": "on", "next": reverse("analysis:overview")},
    )
    assert AnalysisRun.objects.filter(
        tournament=tournament, parameters__exclude_blocked=True
    ).exists()


def test_the_run_button_reports_nothing_to_analyse(client, staff):
    tournament = builders.bare_tournament()
    client.force_login(staff)
    response = client.post(reverse("analysis:analyze", args=[tournament.slug]), follow=True)
    assert "has no campaign to analyse yet" in response.content.decode()
    assert not AnalysisRun.objects.exists()


def test_wrong_settings_are_shown_field_by_field_and_nothing_runs(client, owner):
    tournament = builders.spot_the_bot_tournament(owner=owner)
    AnalysisRun.objects.all().delete()
    client.force_login(owner)
    response = client.post(
        reverse("analysis:analyze", args=[tournament.slug]),
        {"preset": "no-such-preset"},
        follow=True,
    )
    texts = [str(m) for m in response.context["messages"]]
    assert len(texts) == 1 and texts[0].startswith(f"{tournament.name}: preset: ")
    assert not AnalysisRun.objects.exists()


def test_only_the_owner_and_staff_run_analyses(client, owner, researcher):
    tournament = builders.bare_tournament(owner)
    url = reverse("analysis:analyze", args=[tournament.slug])
    response = client.post(url)
    assert response.status_code == 302 and reverse("login") in response["Location"]
    client.force_login(researcher)
    assert client.post(url).status_code == 403
    assert client.get(url).status_code == 405
    assert not AnalysisRun.objects.exists()
    client.force_login(owner)
    response = client.post(url, {"preset": "defaults"}, follow=True)
    assert "has no campaign to analyse yet" in response.content.decode()


def test_the_owner_analyses_with_the_published_preset(
    client, owner, django_capture_on_commit_callbacks
):
    tournament = builders.spot_the_bot_tournament(owner=owner)
    client.force_login(owner)
    page = client.get(detail_url(tournament)).content.decode()
    assert 'value="as-published"' in page and 'name="logrank_variance"' in page
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(
            reverse("analysis:analyze", args=[tournament.slug]),
            {"preset": "as-published", "replicates": "300"},
        )
    assert response.status_code == 302
    (run,) = AnalysisRun.objects.filter(tournament=tournament)
    assert run.requested_by == owner
    assert run.parameters["pair_test"] == "chi-square-2x2"
    assert run.parameters["correction"] == "bonferroni"
    assert run.parameters["logrank_variance"] == "zhao-sun"
    assert run.parameters["replicates"] == 300


def test_analysis_settings_out_of_range_are_refused_naming_the_parameter(client, staff):
    tournament = builders.spot_the_bot_tournament()
    client.force_login(staff)
    response = client.post(
        reverse("analysis:analyze", args=[tournament.slug]),
        {"preset": "defaults", "coverage": "1.5"},
        follow=True,
    )
    assert "coverage" in response.content.decode()
    assert not AnalysisRun.objects.exists()


def test_low_alpha_with_a_dominant_side_is_explained(client):
    tournament = builders.bare_tournament()
    result, _ = builders.canned_result()
    result = {
        **result,
        "tournament": tournament.slug,
        "agreement": {
            **result["agreement"],
            "krippendorff": {"nominal": {"alpha": 0.03, "low": -0.1, "high": 0.2, "units": 40}},
        },
        "pairwise": [
            {**row, "wins_a": 45 - k, "wins_b": 5 + k, "ties": 2}
            for k, row in enumerate(result["pairwise"])
        ],
    }
    builders.stored_run(tournament, result=result)
    html = client.get(detail_url(tournament)).content.decode()
    assert "prevalence-note" in html and "90%" in html
    assert f"{result['pairwise'][0]['a']} wins 90%" in html


def test_high_alpha_needs_no_prevalence_note(client):
    tournament = builders.bare_tournament()
    result, _ = builders.canned_result()
    result = {
        **result,
        "tournament": tournament.slug,
        "agreement": {
            **result["agreement"],
            "krippendorff": {"nominal": {"alpha": 0.7, "low": 0.6, "high": 0.8, "units": 40}},
        },
    }
    builders.stored_run(tournament, result=result)
    assert "prevalence-note" not in client.get(detail_url(tournament)).content.decode()


def test_the_overview_lists_every_tournament_with_its_latest_run(client, staff, researcher):
    running = builders.bare_tournament(name="Running one", published=False)
    builders.stored_run(running, status=AnalysisRun.Status.RUNNING, progress="TrueSkill bootstrap")
    failed = builders.bare_tournament(name="Failed one")
    builders.stored_run(failed)
    builders.stored_run(failed, status=AnalysisRun.Status.FAILED, error="KeyError: 'x'")
    builders.bare_tournament(name="Never analysed")
    client.force_login(researcher)
    assert client.get(reverse("analysis:overview")).status_code == 403
    client.force_login(staff)
    html = client.get(reverse("analysis:overview")).content.decode()
    for text in ("Running one", "TrueSkill bootstrap", "Failed one", "KeyError", "Never analysed"):
        assert text in html
    assert 'http-equiv="refresh"' in html


def test_the_overview_needs_a_login(client):
    response = client.get(reverse("analysis:overview"))
    assert response.status_code == 302 and reverse("login") in response["Location"]


def test_leaderboard_queries_do_not_grow_with_runs_and_tournaments(
    client, staff, django_assert_max_num_queries
):
    for _ in range(3):
        tournament = builders.bare_tournament()
        for _ in range(3):
            builders.stored_run(tournament)
        builders.stored_run(tournament, status=AnalysisRun.Status.FAILED, error="x")
    client.force_login(staff)
    with django_assert_max_num_queries(6):
        assert client.get(detail_url(tournament)).status_code == 200
    # 5, the count of the list's pages (issue 14), and the dimensional results (issue 12).
    with django_assert_max_num_queries(7):
        assert client.get(reverse("analysis:list")).status_code == 200
    with django_assert_max_num_queries(6):
        assert client.get(reverse("analysis:overview")).status_code == 200


def test_the_system_profile_shows_its_published_results(client, owner):
    result = builders.canned_result()[0]
    best = result["ranking"][0]
    system = factories.system(None, slug=best["system"])
    public = builders.bare_tournament(name="Public garden")
    builders.stored_run(public)
    private = builders.bare_tournament(owner, name="Private garden", published=False)
    builders.stored_run(private)
    html = client.get(system.get_absolute_url()).content.decode()
    assert "Public garden" in html and "Private garden" not in html
    assert f'data-tournament="{public.slug}"' in html
    assert (
        reverse(
            "analysis:plot",
            args=[public.slug, public.analysis_runs.get().pk, f"survival-{system.slug}"],
        )
        in html
    )
    client.force_login(owner)
    assert "Private garden" in client.get(system.get_absolute_url()).content.decode()


def test_a_system_in_no_tournament_shows_no_results(client):
    builders.stored_run(builders.bare_tournament(name="Elsewhere"))
    system = factories.system(None, slug="lonely-bot")
    html = client.get(system.get_absolute_url()).content.decode()
    assert "Tournament results" not in html and "Elsewhere" not in html


def test_the_system_profile_queries_do_not_grow_with_tournaments(
    client, django_assert_max_num_queries
):
    system = factories.system(None, slug=builders.canned_result()[0]["systems"][0])
    counts = []
    for n in (1, 4):
        while system.tournaments.count() < n:
            tournament = builders.bare_tournament()
            tournament.systems.add(system)
            builders.stored_run(tournament)
        with django_assert_max_num_queries(12) as captured:
            client.get(system.get_absolute_url())
        counts.append(len(captured))
    assert counts[0] == counts[1]


def render_tournament_results(tournament, user) -> str:
    from django.contrib.auth.models import AnonymousUser
    from django.template import Context, Template
    from django.test import RequestFactory

    request = RequestFactory().get("/")
    request.user = user or AnonymousUser()
    template = Template("{% load analysis_tags %}{% tournament_results tournament %}")
    return template.render(Context({"tournament": tournament, "request": request}))


def test_the_tournament_page_tag_shows_results_to_those_who_may_see_them(owner):
    tournament = builders.bare_tournament(owner, published=False)
    run = builders.stored_run(tournament)
    assert f'data-system="{run.result["systems"][0]}"' in render_tournament_results(
        tournament, owner
    )
    hidden = render_tournament_results(tournament, None)
    assert "Results appear here" in hidden and "data-system" not in hidden


def test_an_ab_leaderboard_has_no_survival_section(client):
    from analysis.runs.tasks import analyze_tournament

    tournament = builders.ab_tournament()
    tournament.published = True
    tournament.save(update_fields=["published"])
    run = analyze_tournament(tournament, builders.FAST, synchronous=True)
    html = client.get(detail_url(tournament)).content.decode()
    assert 'data-system="ab-strong" data-cluster="1"' in html
    assert reverse("analysis:plot", args=[tournament.slug, run.pk, "heatmap"]) in html
    assert "plot-survival" not in html and "automatic tie" in html


def test_tiny_p_values_and_pairs_never_compared_are_shown_as_such(client):
    tournament = builders.bare_tournament()
    result, plots = builders.canned_result()
    first, *_ = result["pairwise"]
    never = (first["a"], first["b"])
    pairwise = [{**row, "p_value": 1e-9, "p_adjusted": 3e-8} for row in result["pairwise"][1:]]
    builders.stored_run(tournament, result={**result, "pairwise": pairwise}, plots=plots)
    html = client.get(detail_url(tournament)).content.decode()
    table = html[html.index('<table class="pairwise">') :]
    table = table[: table.index("</table>")]
    assert table.count("&lt; 0.0001") == 2 * len(pairwise)
    assert "0.0000" not in html
    row = table[table.index('class="never-compared"') :]
    assert row.index(never[0]) < row.index(never[1]) < row.index("never compared")


def test_a_bipartite_leaderboard_shows_the_partners_apart_from_the_ranking(client):
    from analysis.reports import SpotTheBotData, build_report
    from demo.simulation import simulate_spot_the_bot

    data = simulate_spot_the_bot(builders.small_spot_the_bot_model(), seed=2)
    data = SpotTheBotData(**{**data.__dict__, "partners": ("bot-middle",)})
    result = build_report(data, builders.FAST)
    tournament = builders.bare_tournament(name="Bipartite garden")
    builders.stored_run(tournament, result={**result, "tournament": tournament.slug})
    html = client.get(detail_url(tournament)).content.decode()
    ranking = html[html.index('id="ranking-heading"') : html.index('id="partners-heading"')]
    partners = html[html.index('id="partners-heading"') :]
    assert 'data-system="bot-strong"' in ranking and 'data-system="bot-weak"' in ranking
    assert "bot-middle" not in ranking
    assert 'data-partner="bot-middle"' in partners
    assert "not ranked" in partners
