"""`manage.py import_conversations`: counts on success, every problem and a failure otherwise."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from evalhub.models import Conversation, System
from tests import factories
from tests.evalhub.test_importers_conversations import conversation, jsonl

pytestmark = pytest.mark.django_db


def run(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("import_conversations", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_imports_and_prints_the_counts(tmp_path):
    path = tmp_path / "talks.jsonl"
    path.write_bytes(jsonl(conversation(1), conversation(2)))
    factories.user("curator")
    out, _ = run(str(path), "--user", "curator")
    assert "2 conversations created, 0 unchanged" in out
    assert "New systems: parrot-bot." in out
    assert System.objects.get(slug="parrot-bot").owner.username == "curator"
    out, _ = run(str(path))
    assert "0 conversations created, 2 unchanged" in out and "New systems" not in out


def test_it_prints_every_problem_and_fails(tmp_path):
    path = tmp_path / "talks.jsonl"
    path.write_bytes(jsonl(conversation(1, id="a b"), conversation(2, speakers=["human"])))
    err = StringIO()
    with pytest.raises(CommandError, match="Nothing imported: 2 problems."):
        call_command("import_conversations", str(path), stdout=StringIO(), stderr=err)
    lines = err.getvalue().splitlines()
    assert lines[0] == "talks.jsonl: line 1: the id 'a b' contains whitespace."
    assert lines[1].startswith("talks.jsonl: line 2: 'speakers' must be a list")
    assert not Conversation.objects.exists()


def test_the_source_option_applies_to_lines_without_one(tmp_path):
    path = tmp_path / "talks.jsonl"
    path.write_bytes(jsonl(conversation(1)))
    run(str(path), "--source", "self-play")
    assert Conversation.objects.get().source == "self-play"


def test_unknown_user_and_missing_file(tmp_path):
    path = tmp_path / "talks.jsonl"
    path.write_bytes(jsonl(conversation(1)))
    with pytest.raises(CommandError, match="No user named 'nobody'"):
        run(str(path), "--user", "nobody")
    with pytest.raises(CommandError, match="Cannot read"):
        run(str(tmp_path / "missing.jsonl"))
    assert not Conversation.objects.exists()


def test_an_oversized_file_is_refused_before_reading(tmp_path, settings):
    settings.EVALHUB_MAX_UPLOAD_BYTES = 10
    path = tmp_path / "talks.jsonl"
    path.write_bytes(jsonl(conversation(1)))
    with pytest.raises(CommandError, match="Nothing imported: 1 problem."):
        run(str(path))
