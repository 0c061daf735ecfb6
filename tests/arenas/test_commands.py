"""`manage.py import_battles` and `export_battles`."""

import json

import pytest
from django.core.management import CommandError, call_command

from arenas.models import Arena, Battle
from tests import factories
from tests.arenas.builders import arena
from tests.arenas.clean_battles import jsonl, line

pytestmark = pytest.mark.django_db


def test_import_with_create_makes_the_arena_and_its_systems(tmp_path, capsys):
    owner = factories.user("alice")
    path = tmp_path / "battles.jsonl"
    path.write_bytes(jsonl(line("q1"), line("q2", winner="tie")))
    call_command("import_battles", "public-arena", str(path), "--create", "--user", "alice")
    made = Arena.objects.get(slug="public-arena")
    assert made.owner == owner and made.battles.count() == 2
    assert "2 battles stored, 0 already in public-arena" in capsys.readouterr().out
    call_command("import_battles", "public-arena", str(path))
    assert Battle.objects.count() == 2


def test_import_refuses_a_bad_file_with_line_numbers_and_stores_nothing(tmp_path, capsys):
    made = arena(factories.user(), slug="mine")
    path = tmp_path / "battles.jsonl"
    path.write_bytes(jsonl(line("q1"), line("q2", winner="model_c"), "not json"))
    with pytest.raises(CommandError, match="Nothing imported: 2 problems"):
        call_command("import_battles", "mine", str(path), "--create")
    err = capsys.readouterr().err
    assert "line 2: " in err and "line 3: " in err
    assert not made.battles.exists()


def test_import_into_a_missing_arena_needs_create(tmp_path):
    path = tmp_path / "battles.jsonl"
    path.write_bytes(jsonl(line("q1")))
    with pytest.raises(CommandError, match="use --create"):
        call_command("import_battles", "nowhere", str(path))
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("import_battles", "nowhere", str(tmp_path / "missing.jsonl"))
    assert not Arena.objects.exists()


def test_export_writes_the_voted_battles(tmp_path):
    made = arena(factories.user(), slug="mine")
    source = tmp_path / "in.jsonl"
    source.write_bytes(jsonl(line("q1"), line("q2", winner="tie (bothbad)")))
    call_command("import_battles", "mine", str(source), "--create")
    target = tmp_path / "out.jsonl"
    call_command("export_battles", "mine", str(target))
    rows = [json.loads(text) for text in target.read_text().splitlines()]
    assert [(r["question_id"], r["winner"]) for r in rows] == [
        ("q1", "model_a"),
        ("q2", "tie (bothbad)"),
    ]
    assert made.battles.count() == 2
