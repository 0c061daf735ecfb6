"""export_all / import_all: a study leaves and comes back whole."""

import io
import json
from datetime import date
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.core import serializers
from django.core.management import CommandError, call_command
from django.urls import reverse

from analysis.models import AnalysisRun
from analysis.runs.tasks import analyze_tournament
from annotation.models import Judgment
from endpoints.models import BotEndpoint, EndpointCall, EndpointUsage
from evalhub.models import Submission
from judging.defaults import install_default_rubrics
from judging.models import AutomaticJudgment, Judge, JudgeRun, Rubric
from portability.study_dump import SITE_MODELS, study_models
from tests import factories
from tests.analysis import builders
from tests.judging import builders as judging_builders
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _shipped_rubrics(db):
    """A database as `migrate` leaves it (an earlier transactional test flushed them)."""
    install_default_rubrics()


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
    for label in ("evalhub", "annotation", "tournaments", "judging", "analysis"):
        for model in apps.get_app_config(label).get_models():
            assert model._meta.label_lower in written | SITE_MODELS
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


# Issue 23, finding 6: every app's data is in the dump ----------------------------------------


def project_models():
    """Every model of an app of this repository (not of an installed package)."""
    root = Path(settings.BASE_DIR).resolve()
    return [
        model
        for config in apps.get_app_configs()
        if Path(config.path).resolve().is_relative_to(root) and "site-packages" not in config.path
        for model in config.get_models()
    ]


def test_every_model_of_every_project_app_is_exported_or_named_as_the_site_s():
    exported = {m._meta.label_lower for m in study_models()}
    project = {m._meta.label_lower for m in project_models()}
    assert {"judging.judge", "evalhub.system", "analysis.analysisrun"} <= project
    left_out = project - exported - SITE_MODELS
    assert not left_out, (
        f"{sorted(left_out)} would be lost by a backup and restore: add the app to "
        "STUDY_APPS, or the model to SITE_MODELS with the reason (portability/study_dump.py)"
    )
    assert not exported & SITE_MODELS


def judging_rows() -> dict:
    """As the dump writes them (times to the millisecond, as Django's JSON keeps them)."""
    return {
        model._meta.label_lower: json.loads(
            serializers.serialize("json", model.objects.order_by("pk"))
        )
        for model in (Judge, Rubric, JudgeRun, AutomaticJudgment)
    }


def test_judges_rubrics_runs_and_automatic_judgments_survive_a_backup_and_restore(tmp_path):
    owner = factories.user("judge-owner")
    judge = judging_builders.judge(None, owner=owner)
    default = judging_builders.default_rubric("ab")
    custom = Rubric.objects.create(
        task_kind="ab", name="strict", instructions="Be strict. {items}", owner=owner
    )
    campaign = judging_builders.ab(2, owner=owner)
    items = list(campaign.items.order_by("position"))
    for rubric in (default, custom):
        run = JudgeRun.objects.create(
            judge=judge, rubric=rubric, campaign=campaign, status="done", items_total=2
        )
        for item in items:
            AutomaticJudgment.objects.create(
                run=run, item=item, status="ok", payload={"choice": "a"}, raw_text="a"
            )
    before = judging_rows()
    assert len(before["judging.automaticjudgment"]) == 4

    call_command("export_all", str(tmp_path / "dump"))
    empty_the_database()
    install_default_rubrics()  # what `migrate` seeds into a new database
    call_command("import_all", str(tmp_path / "dump"))

    assert judging_rows() == before
    assert JudgeRun.objects.get(rubric__name="strict").judgments.count() == 2


def test_a_dump_of_older_shipped_rubrics_restores_them_and_the_current_text(tmp_path):
    older = judging_builders.default_rubric("ab")
    Rubric.objects.filter(pk=older.pk).update(instructions="The text of an older release.")
    call_command("export_all", str(tmp_path))
    empty_the_database()
    current = install_default_rubrics()  # a new database of this release
    call_command("import_all", str(tmp_path))

    versions = Rubric.objects.filter(task_kind="ab", name="default").order_by("version")
    assert [r.instructions for r in versions] == [
        "The text of an older release.",
        next(r.instructions for r in current if r.task_kind == "ab"),
    ]
    assert versions[0].pk == older.pk


# Issue 23, finding 5: a dump never carries a secret -------------------------------------------


def test_a_dump_carries_no_secret_and_the_restored_endpoint_asks_for_it(tmp_path, client):
    owner = factories.user("token-owner")
    system = factories.system(owner, slug="keyed-bot")
    endpoint = BotEndpoint.objects.create(
        system=system, url="https://bot.example/reply", auth_token="sk-do-not-export-42"
    )
    tokenless = BotEndpoint.objects.create(
        system=factories.system(owner, slug="open-bot"), url="https://bot.example/open"
    )
    out = io.StringIO()
    call_command("export_all", str(tmp_path / "dump"), stdout=out)
    assert "1 secrets (endpoints' tokens) were left out" in out.getvalue()
    for path in (tmp_path / "dump").rglob("*"):
        if path.is_file():
            assert "sk-do-not-export" not in path.read_text(errors="replace"), path.name
    manifest = json.loads((tmp_path / "dump" / "manifest.json").read_text())
    assert manifest["secrets_left_out"] == [
        {"model": "endpoints.botendpoint", "pk": endpoint.pk, "field": "auth_token"}
    ]
    rows = [
        json.loads(line)
        for line in (tmp_path / "dump" / "endpoints.botendpoint.jsonl").read_text().splitlines()
    ]
    fields = {row["pk"]: row["fields"] for row in rows}
    assert (fields[endpoint.pk]["auth_token"], fields[endpoint.pk]["token_left_out"]) == ("", True)
    assert fields[tokenless.pk]["token_left_out"] is False
    # The export changed nothing in the database.
    assert BotEndpoint.objects.get(pk=endpoint.pk).auth_token == "sk-do-not-export-42"

    empty_the_database()
    install_default_rubrics()
    out = io.StringIO()
    call_command("import_all", str(tmp_path / "dump"), stdout=out)
    assert "asks its owner to enter its token again" in out.getvalue()
    restored = BotEndpoint.objects.get(pk=endpoint.pk)
    assert (restored.auth_token, restored.token_left_out) == ("", True)
    assert BotEndpoint.objects.get(pk=tokenless.pk).token_left_out is False
    client.force_login(restored.system.owner)
    page = client.get(reverse("system-endpoint", args=["keyed-bot"])).content.decode()
    assert "was left out when its data was imported" in page
