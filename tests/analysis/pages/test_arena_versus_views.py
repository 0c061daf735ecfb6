"""The human-versus-automatic page of an arena (analysis/pages/versus_views.py): a judge run
over the arena's battles compared with the votes, with the agreement computed by hand in
tests/analysis/arena_world.py; the arena's managers alone see it."""

import re

import pytest
from django.urls import reverse

from analysis.models import AnalysisRun
from analysis.runs.tasks import analyze_judge_run
from tests import factories
from tests.analysis import arena_world
from tests.endpoints import openai_fake

pytestmark = pytest.mark.django_db

FAST = {"seed": 1, "judge_resamples": 100, "convergence_repeats": 30, "convergence_points": 3}


@pytest.fixture
def fake():
    with openai_fake.FakePool() as pool:
        yield pool.start


def page_url(arena):
    return reverse("results:arena-versus", args=[arena.slug])


def test_the_owner_compares_and_the_page_shows_the_hand_computed_agreement(
    client, fake, django_capture_on_commit_callbacks
):
    ada = factories.user("ada")
    arena, run, slugs = arena_world.judged_arena(fake, ada, name="Ada's arena")
    client.force_login(ada)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("results:arena-versus-compare", args=[arena.slug]), {"judge_run": run.pk}
        )
    assert response.status_code == 302
    assert response["Location"] == f"{page_url(arena)}?judge_run={run.pk}"
    comparison = AnalysisRun.objects.get(judge_run=run)
    assert comparison.status == AnalysisRun.Status.SUCCEEDED, comparison.error
    assert (comparison.campaign, comparison.tournament, comparison.study) == (None, None, None)
    assert comparison.subject_slug == arena.slug and comparison.requested_by == ada
    html = client.get(response["Location"]).content.decode()
    row = re.search(r'<tr data-dimension="choice">(.*?)</tr>', html, re.S).group(1)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
    # Units, kappa, raw agreement, units with a majority.
    assert cells[1:5] == ["8", "0.600", "0.750", "8"]
    assert "Kappa vs votes" in html
    assert '"both are bad" counts as a tie on both sides' in html  # the mapping, on the page
    assert 'id="versus-bradley-terry"' in html
    assert "Win rate by votes (battles)" in html
    agreement = comparison.result["dimensions"][0]["agreement"]
    assert agreement["kappa"] == pytest.approx(arena_world.KAPPA)
    assert agreement["raw_agreement"] == pytest.approx(arena_world.RAW_AGREEMENT)
    rows = {r["system"]: r for r in comparison.result["dimensions"][0]["systems"]}
    for name, slug in slugs.items():
        assert rows[slug]["human_mean"] == pytest.approx(arena_world.VOTE_WIN_RATES[name])
        assert rows[slug]["judge_mean"] == pytest.approx(arena_world.JUDGE_WIN_RATES[name])
    assert f"{arena_world.VOTE_WIN_RATES['x']:.3f} (6)" in html


def test_the_ratings_by_votes_and_by_the_judge_rank_the_systems(fake):
    owner = factories.user()
    arena, run, slugs = arena_world.judged_arena(fake, owner)
    result = analyze_judge_run(run, FAST, synchronous=True).result
    ratings = result["bradley_terry"]
    assert ratings["battles"] == 8
    by_votes = [row["system"] for row in ratings["systems"]]
    assert by_votes[0] == slugs["x"]  # the votes' favourite
    judge_ranks = {row["system"]: row["judge_rank"] for row in ratings["systems"]}
    assert judge_ranks[slugs["z"]] == 1.0  # the judge's
    assert -1.0 <= ratings["spearman"] <= 1.0
    # Alpha is never defined for one vote per battle, and the page does not warn about it.
    assert not any("alpha" in warning for warning in result["warnings"])


def test_the_page_lists_the_runs_and_links_the_plots(client, fake):
    owner = factories.user()
    arena, run, _ = arena_world.judged_arena(fake, owner)
    analyze_judge_run(run, FAST, synchronous=True)
    client.force_login(owner)
    html = client.get(page_url(arena)).content.decode()
    assert f'href="?judge_run={run.pk}"' in html
    urls = re.findall(r'src="(/results/runs/\d+/plots/versus-[a-z]+-\d\.svg)"', html)
    assert urls and client.get(urls[0]).status_code == 200
    stranger = factories.user()
    client.force_login(stranger)
    assert client.get(urls[0]).status_code == 404


@pytest.mark.parametrize("visibility", ["private", "public"])
def test_others_get_404_for_the_page_and_the_request(client, fake, visibility):
    owner = factories.user()
    arena, run, _ = arena_world.judged_arena(fake, owner, visibility=visibility)
    client.force_login(factories.user())
    assert client.get(page_url(arena)).status_code == 404
    response = client.post(
        reverse("results:arena-versus-compare", args=[arena.slug]), {"judge_run": run.pk}
    )
    assert response.status_code == 404
    assert not AnalysisRun.objects.exists()


def test_staff_see_any_arenas_comparison(client, fake):
    arena, run, _ = arena_world.judged_arena(fake, factories.user(), visibility="private")
    client.force_login(factories.user(staff=True))
    assert client.get(page_url(arena)).status_code == 200


def test_a_judge_run_of_another_arena_is_not_compared_here(client, fake):
    owner = factories.user()
    arena, run, _ = arena_world.judged_arena(fake, owner)
    other, _, _ = arena_world.judged_arena(fake, owner)
    client.force_login(owner)
    response = client.post(
        reverse("results:arena-versus-compare", args=[other.slug]), {"judge_run": run.pk}
    )
    assert response.status_code == 404
