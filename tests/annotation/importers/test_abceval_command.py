"""`manage.py import_abceval`: counts on success, every problem as `FILE line N: message`
on failure with nothing stored, nothing new on a second run."""

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Campaign, Judgment, Study
from evalhub.models import Conversation

from . import abceval_files as f

pytestmark = pytest.mark.django_db


def command(paths, *extra):
    call_command(
        "import_abceval",
        str(paths["conversations"]),
        str(paths["behaviours"]),
        "--likert",
        str(paths["likert"]),
        "--comparative",
        str(paths["comparative"]),
        "--name",
        "ABC small",
        "--slug",
        "abc-small",
        *extra,
    )


def test_the_command_imports_and_reports_counts(tmp_path, capsys):
    command(f.write(tmp_path))
    out = capsys.readouterr().out
    assert "Created the study abc-small" in out
    assert "Conversations: 2 created, 0 unchanged; dialogues without text: 1 created." in out
    assert "Workers: 4 created. Judgments: 12 created, 0 unchanged." in out
    assert "abc-small-likert: 2 items, 2 judgments created, 0 unchanged." in out
    assert Study.objects.get().campaigns.count() == 5
    assert Judgment.objects.count() == 12


def test_a_second_run_adds_nothing(tmp_path, capsys):
    paths = f.write(tmp_path)
    command(paths)
    capsys.readouterr()
    command(paths)
    out = capsys.readouterr().out
    assert "Nothing new for the study abc-small" in out
    assert "Judgments: 0 created, 12 unchanged." in out
    assert Judgment.objects.count() == 12 and Campaign.objects.count() == 5


def test_behaviours_alone_are_enough(tmp_path):
    paths = f.write(tmp_path)
    call_command(
        "import_abceval",
        str(paths["conversations"]),
        str(paths["behaviours"]),
        "--name",
        "ABC small",
        "--slug",
        "abc-small",
    )
    assert set(Campaign.objects.values_list("task_kind", flat=True)) == {"abc_eval"}
    assert not Conversation.objects.filter(text_available=False).exists()


def test_problems_are_printed_with_file_and_line_and_nothing_is_stored(tmp_path, capsys):
    comparative = f.comparative()
    comparative[0]["score"] = 2
    paths = f.write(tmp_path, comparative=comparative, conversations=[*f.conversations(), "[]"])
    with pytest.raises(CommandError, match="Nothing imported: 2 problems"):
        command(paths)
    assert capsys.readouterr().err.splitlines() == [
        "conversations.jsonl line 3: each line must be a JSON object {...}.",
        "comparative.jsonl line 1: 'score' must be -1, 0 or 1, not 2.",
    ]
    assert not Study.objects.exists() and not Conversation.objects.exists()


def test_a_missing_file_is_reported(tmp_path):
    paths = f.write(tmp_path)
    paths["likert"] = tmp_path / "nope.jsonl"
    with pytest.raises(CommandError, match="Cannot read .*nope.jsonl"):
        command(paths)
    assert not Study.objects.exists()
