"""/api/judge-runs/<id>/human-vs-automatic/ and the typed human-versus-automatic result: a
report goes through its serializer unchanged, with nulls where a statistic is undefined."""

import json

import pytest
from rest_framework.test import APIClient

from analysis.api.examples import VERSUS_REPORT
from analysis.api.serializers import HumanVsAutomaticSerializer
from analysis.models import AnalysisRun
from analysis.reports import build_report
from annotation.models import Campaign, Judgment
from tests import factories
from tests.analysis.dimensional_builders import imported_study
from tests.analysis.judge_builders import judge_run
from tests.analysis.reports.test_human_vs_automatic import FAST, likert_world

pytestmark = pytest.mark.django_db


def api(user=None):
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def copy_first_human(item):
    judgment = Judgment.objects.filter(item=item).order_by("pk").first()
    return None if judgment is None else judgment.payload


def owned_judge_run(owner):
    campaign = Campaign.objects.filter(study=imported_study(), task_kind="abc_eval").first()
    Campaign.objects.filter(pk=campaign.pk).update(owner=owner)
    campaign.refresh_from_db()
    return judge_run(campaign, copy_first_human, owner=owner)


@pytest.mark.parametrize("partners", [(), ("partner",)])
def test_a_report_is_described_key_for_key(partners):
    data = likert_world()
    data = type(data)(**{**data.__dict__, "partners": partners})
    result = json.loads(json.dumps(build_report(data, FAST)))
    assert HumanVsAutomaticSerializer(result).data == result
    given = HumanVsAutomaticSerializer(data=result)
    assert given.is_valid(), given.errors


def test_a_report_with_undefined_statistics_is_described_with_nulls():
    data = likert_world()
    flat = type(data)(
        **{
            **data.__dict__,
            "judge_scores": tuple((d, s, c, 3.0) for d, s, c, _ in data.judge_scores),
        }
    )
    result = json.loads(json.dumps(build_report(flat, FAST)))
    assert result["dimensions"][0]["correlation"]["spearman"] is None
    assert HumanVsAutomaticSerializer(result).data == result


def test_the_example_is_a_report_of_the_documented_shape():
    assert HumanVsAutomaticSerializer(VERSUS_REPORT).data == VERSUS_REPORT


def test_the_owner_requests_and_reads_a_comparison(django_capture_on_commit_callbacks):
    ada = factories.user("ada")
    run = owned_judge_run(ada)
    url = f"/api/judge-runs/{run.pk}/human-vs-automatic/"
    assert api(ada).get(url).status_code == 404  # not compared yet
    with django_capture_on_commit_callbacks(execute=True):
        posted = api(ada).post(url, {"parameters": FAST}, format="json")
    assert posted.status_code == 202
    comparison = AnalysisRun.objects.get(judge_run=run)
    assert posted.json()["id"] == comparison.pk
    assert comparison.status == AnalysisRun.Status.SUCCEEDED
    assert comparison.parameters["judge_resamples"] == FAST["judge_resamples"]
    answer = api(ada).get(url)
    assert answer.status_code == 200
    body = answer.json()
    assert body["kind"] == "human_vs_automatic" and body["task_kind"] == "abc_eval"
    assert body["run"]["id"] == comparison.pk
    assert {k: v for k, v in body.items() if k != "run"} == comparison.result
    again = api(ada).post(url, {"parameters": FAST}, format="json")
    assert again.status_code == 200
    assert AnalysisRun.objects.filter(judge_run=run).count() == 1


def test_a_wrong_parameter_is_answered_with_its_name():
    ada = factories.user("ada")
    run = owned_judge_run(ada)
    response = api(ada).post(
        f"/api/judge-runs/{run.pk}/human-vs-automatic/",
        {"parameters": {"convergence_points": 0}},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "parameters.convergence_points"
    assert not AnalysisRun.objects.filter(judge_run=run).exists()


def test_others_never_see_a_judge_run():
    run = owned_judge_run(factories.user("ada"))
    url = f"/api/judge-runs/{run.pk}/human-vs-automatic/"
    eve = factories.user("eve")
    assert api(eve).get(url).status_code == 404
    assert api(eve).post(url, {}, format="json").status_code == 404
    assert api().get(url).status_code in (401, 403)
    assert not AnalysisRun.objects.filter(judge_run=run).exists()


# Arenas: a judge run over an arena's battles against the votes ------------------------------


@pytest.fixture
def fake():
    from tests.endpoints import openai_fake

    with openai_fake.FakePool() as pool:
        yield pool.start


def test_an_arena_judge_run_is_compared_and_read_through_the_api(
    fake, django_capture_on_commit_callbacks
):
    from tests.analysis import arena_world

    owner = factories.user()
    arena, run, _ = arena_world.judged_arena(fake, owner, visibility="private")
    url = f"/api/judge-runs/{run.pk}/human-vs-automatic/"
    assert api(owner).get(url).status_code == 404  # not compared yet
    with django_capture_on_commit_callbacks(execute=True):
        posted = api(owner).post(url, {"parameters": FAST}, format="json")
    assert posted.status_code in (200, 202), posted.content
    body = api(owner).get(url).json()
    assert (body["subject"], body["task_kind"]) == (arena.slug, "arena")
    agreement = body["dimensions"][0]["agreement"]
    assert agreement["kappa"] == pytest.approx(arena_world.KAPPA)
    assert agreement["raw_agreement"] == pytest.approx(arena_world.RAW_AGREEMENT)
    assert body["bradley_terry"]["battles"] == 8
    result = AnalysisRun.objects.get(judge_run=run).result
    assert HumanVsAutomaticSerializer(result).data == json.loads(json.dumps(result))


def test_an_arenas_comparison_is_not_found_for_others(fake):
    from tests.analysis import arena_world

    arena, run, _ = arena_world.judged_arena(fake, factories.user(), visibility="private")
    url = f"/api/judge-runs/{run.pk}/human-vs-automatic/"
    stranger = factories.user()
    assert api(stranger).get(url).status_code == 404
    assert api(stranger).post(url, {}, format="json").status_code == 404
    assert not AnalysisRun.objects.exists()
