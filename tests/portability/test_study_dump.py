"""export_all / import_all: a study leaves and comes back whole."""

import json
from datetime import date

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command

from analysis.models import AnalysisRun
from analysis.runs.tasks import analyze_tournament
from annotation.models import Judgment
from endpoints.models import BotEndpoint, EndpointCall, EndpointUsage
from evalhub.models import Submission
from portability.study_dump import study_models
from tests import factories
from tests.analysis import builders
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db(transaction=True)


def empty_the_database():
    for model in reversed(study_models()):
        model._default_manager.all().delete()


def canonical(result) -> str:
    return json.dumps(result, sort_keys=True)


def test_analysis_results_are_identical_after_export_and_import(tmp_path):
    tournament = builders.spot_the_bot_tournament()
    system = factories.system(factories.user("owner"), slug="uploader")
    factories.submission(system, factories.prompt_set(2, slug="two"), ["one", "two"])
    before = analyze_tournament(tournament, synchronous=True)
    assert before.status == AnalysisRun.Status.SUCCEEDED
    counts = {m._meta.label_lower: m._default_manager.count() for m in study_models()}
    files = {s.pk: s.file.read() for s in Submission.objects.exclude(file="")}

    call_command("export_all", str(tmp_path / "dump"))
    empty_the_database()
    assert not Judgment.objects.exists() and not Tournament.objects.exists()
    call_command("import_all", str(tmp_path / "dump"))

    assert {m._meta.label_lower: m._default_manager.count() for m in study_models()} == counts
    assert {s.pk: s.file.read() for s in Submission.objects.exclude(file="")} == files
    restored = AnalysisRun.objects.get(pk=before.pk)
    assert canonical(restored.result) == canonical(before.result)
    # Computed again from the restored judgments: the same inputs and the same numbers.
    AnalysisRun.objects.all().delete()
    again = analyze_tournament(Tournament.objects.get(pk=tournament.pk), synchronous=True)
    assert again.inputs_digest == before.inputs_digest
    assert canonical(again.result) == canonical(before.result)
    # New rows do not collide with restored ids.
    assert factories.user("newcomer").pk not in {system.owner_id}


def test_every_table_is_written_as_documented_json_lines(tmp_path):
    builders.spot_the_bot_tournament()
    factories.user("owner")
    call_command("export_all", str(tmp_path))
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert (manifest["format"], manifest["version"]) == ("evalhub-study", 1)
    written = {table["model"] for table in manifest["tables"]}
    for label in ("evalhub", "annotation", "tournaments", "analysis"):
        for model in apps.get_app_config(label).get_models():
            assert model._meta.label_lower in written
    judgments = manifest["tables"][
        [t["model"] for t in manifest["tables"]].index("annotation.judgment")
    ]
    lines = (tmp_path / judgments["file"]).read_text().splitlines()
    assert len(lines) == judgments["rows"] == Judgment.objects.count() > 0
    row = json.loads(lines[0])
    assert row["model"] == "annotation.judgment" and "fields" in row and "pk" in row
    users = json.loads((tmp_path / "auth.user.jsonl").read_text().splitlines()[0])
    assert "user_permissions" not in users["fields"]


def test_import_refuses_a_database_that_is_not_empty(tmp_path):
    builders.spot_the_bot_tournament()
    call_command("export_all", str(tmp_path))
    judgments = Judgment.objects.count()
    with pytest.raises(CommandError, match="restores into an empty database"):
        call_command("import_all", str(tmp_path))
    assert Judgment.objects.count() == judgments


def test_import_refuses_a_directory_that_is_not_a_dump(tmp_path):
    empty_the_database()
    with pytest.raises(CommandError, match="manifest.json is missing"):
        call_command("import_all", str(tmp_path))


def test_endpoints_go_with_the_study_but_not_their_call_outcomes(tmp_path):
    system = factories.system(factories.user("owner"), slug="live-bot")
    endpoint = BotEndpoint.objects.create(system=system, url="https://bot.example/reply")
    EndpointUsage.objects.create(endpoint=endpoint, day=date(2026, 11, 1), requests=3)
    EndpointCall.objects.create(endpoint=endpoint, status="ok", latency_ms=12)
    call_command("export_all", str(tmp_path))
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    rows = {table["model"]: table["rows"] for table in manifest["tables"]}
    assert (rows["endpoints.botendpoint"], rows["endpoints.endpointusage"]) == (1, 1)
    assert "endpoints.endpointcall" not in rows
