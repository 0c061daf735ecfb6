"""A judge run's automatic judgments as a Hugging Face dataset, for the run's manager."""

import json

import pytest
from django.urls import reverse

from judging.models import AutomaticJudgment, JudgeRun
from tests import factories
from tests.datasets_loading import download, front_matter, load_table, unzip
from tests.judging import builders

pytestmark = pytest.mark.django_db


def judged_run():
    judge = builders.judge(None)
    campaign = builders.likert(2, owner=judge.owner)
    run = JudgeRun.objects.create(
        judge=judge, rubric=builders.default_rubric("likert"), campaign=campaign
    )
    first, second = campaign.items.order_by("position")[:2]
    AutomaticJudgment.objects.create(
        run=run, item=first, status="ok", payload={"ratings": {"quality": 4}}, prompt_tokens=90
    )
    AutomaticJudgment.objects.create(
        run=run, item=second, status="failed", raw_text="Maybe?", error="no JSON", attempts=3
    )
    return run


def url(run, **params) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return reverse("judging:run-export-dataset", args=[run.pk]) + (f"?{query}" if query else "")


def test_the_automatic_judgments_load_with_datasets(client, tmp_path):
    run = judged_run()
    client.force_login(run.judge.owner)
    files = unzip(download(client.get(url(run, license="odc-by"))), tmp_path)
    loaded = load_table(tmp_path, "automatic_judgments", tmp_path / "cache")
    assert loaded.num_rows == 2
    ok, failed = loaded[0], loaded[1]
    assert (ok["judge"], ok["campaign"], ok["item"], ok["status"]) == (
        run.judge.slug,
        run.campaign.slug,
        0,
        "ok",
    )
    assert json.loads(ok["payload"]) == {"ratings": {"quality": 4}} and ok["prompt_tokens"] == 90
    assert (failed["raw_text"], failed["error"], failed["attempts"]) == ("Maybe?", "no JSON", 3)
    assert ok["conversation"] == run.campaign.items.get(position=0).conversation.external_id
    card = front_matter(files["README.md"])
    assert card["license"] == "odc-by" and card["configs"][0]["config_name"] == (
        "automatic_judgments"
    )


def test_the_run_page_offers_the_download(client):
    run = judged_run()
    client.force_login(run.judge.owner)
    assert url(run) in client.get(run.get_absolute_url()).content.decode()


def test_another_researcher_gets_404(client):
    run = judged_run()
    client.force_login(factories.user())
    assert client.get(url(run)).status_code == 404


def test_a_run_without_answers_has_nothing_to_export(client):
    run = judged_run()
    run.judgments.all().delete()
    client.force_login(run.judge.owner)
    assert client.get(url(run)).status_code == 409


def test_the_api_download_is_the_same_dataset_for_the_runs_owner(client, tmp_path):
    run = judged_run()
    client.force_login(run.judge.owner)
    response = client.get(f"/api/judge-runs/{run.pk}/dataset/", HTTP_ACCEPT="application/zip")
    unzip(download(response), tmp_path)
    assert load_table(tmp_path, "automatic_judgments", tmp_path / "cache").num_rows == 2
    client.force_login(factories.user())
    assert client.get(f"/api/judge-runs/{run.pk}/dataset/").status_code == 404
