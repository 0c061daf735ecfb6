"""Analysis runs as Hugging Face datasets: the run's row and each list of records in its
result load with `datasets`; only for whoever may see the results."""

import json

import pytest
from django.urls import reverse

from analysis.models import AnalysisRun
from analysis.runs import export_parquet
from tests import datasets_loading, factories
from tests.datasets_loading import download, front_matter, load_table, unzip

pytestmark = pytest.mark.django_db
demo = datasets_loading.demo  # the module-scoped fixture


def url(run) -> str:
    return reverse("results:run-dataset", args=[run.pk])


def test_every_demo_runs_results_load_with_datasets(client, demo, tmp_path):
    runs = list(AnalysisRun.objects.filter(status="succeeded"))
    # Tournaments, campaigns of three kinds and a judge run's comparison with the crowd.
    assert {export_parquet.subject(run)[0] for run in runs} >= {"tournament", "campaign"}
    assert any(run.judge_run_id for run in runs)
    client.force_login(factories.user(staff=True))
    for run in runs:
        folder = tmp_path / str(run.pk)
        files = unzip(download(client.get(url(run))), folder)
        card = front_matter(files["README.md"])
        names = [config["config_name"] for config in card["configs"]]
        assert names[0] == "run" and len(names) > 1, names
        [row] = load_table(folder, "run", tmp_path / "cache")
        assert json.loads(row["result"]) == run.result and row["run"] == run.pk
        assert json.loads(row["parameters"]) == run.parameters
        for table in export_parquet.tables(run)[1:]:
            loaded = load_table(folder, table.name, tmp_path / "cache")
            assert loaded.num_rows == len(list(table.rows()))


def test_record_lists_are_found_wherever_they_are_and_given_every_key():
    result = {"a": [{"x": 1}, {"x": 2, "y": "b"}], "b": {"c": [{"z": True}], "d": [1, 2]}}
    assert [path for path, _ in export_parquet.record_lists(result)] == [("a",), ("b", "c")]
    assert export_parquet._uniform(result["a"]) == [{"x": 1, "y": None}, {"x": 2, "y": "b"}]


def test_a_campaigns_results_are_not_a_strangers(client, demo):
    run = AnalysisRun.objects.filter(status="succeeded", campaign__isnull=False).first()
    client.force_login(factories.user())
    assert client.get(url(run)).status_code == 404


def stored_run(campaign, status="succeeded"):
    return AnalysisRun.objects.create(
        campaign=campaign,
        parameters={"alpha": 0.05},
        parameters_digest="p",
        inputs_digest="i",
        status=status,
        result={"ranking": {"systems": [{"system": "a", "score": 1.5}, {"system": "b"}]}},
    )


def test_the_api_download_has_the_run_and_its_records(client, tmp_path):
    from tests.annotation.builders import ab_campaign

    owner = factories.user()
    campaign = ab_campaign(1, owner=owner)
    run = stored_run(campaign)
    client.force_login(owner)
    response = client.get(f"/api/analysis-runs/{run.pk}/dataset/", HTTP_ACCEPT="application/zip")
    files = unzip(download(response), tmp_path)
    names = [c["config_name"] for c in front_matter(files["README.md"])["configs"]]
    assert names == ["run", "ranking__systems"]
    systems = load_table(tmp_path, "ranking__systems", tmp_path / "cache")
    assert systems["system"] == ["a", "b"] and systems["score"] == [1.5, None]


def test_the_api_refuses_a_run_without_results_with_409(client):
    from tests.annotation.builders import ab_campaign

    owner = factories.user()
    run = stored_run(ab_campaign(1, owner=owner), status="running")
    client.force_login(owner)
    response = client.get(f"/api/analysis-runs/{run.pk}/dataset/")
    assert response.status_code == 409
    assert response.json()["errors"][0]["message"] == "The run has no results: it is running."
