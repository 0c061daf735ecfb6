from unittest import mock

import pytest
from django.db import DatabaseError, transaction

from evalhub.importers.problems import InvalidUpload
from evalhub.models import Prompt, PromptSet, Response, Submission
from evalhub.services import create_prompt_set, submit_responses
from tests import factories

pytestmark = pytest.mark.django_db


def test_submit_responses_stores_everything_and_scores_it(django_capture_on_commit_callbacks):
    owner = factories.user()
    system = factories.system(owner)
    prompts = factories.prompt_set(3)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        submission = submit_responses(
            system=system,
            prompt_set=prompts,
            data=factories.txt("a b", "c", "a b"),
            filename="x.txt",
            user=owner,
        )
    # The metrics queued once after commit; scoring them then emails the owner's notice
    # after its own commit (issue 14).
    assert len(callbacks) == 2
    submission.refresh_from_db()
    assert submission.status == Submission.Status.SCORED
    assert submission.format == "txt"
    assert submission.metrics["n_duplicates"] == 1
    assert list(submission.responses.values_list("text", "prompt__position")) == [
        ("a b", 0),
        ("c", 1),
        ("a b", 2),
    ]
    assert submission.file.read() == b"a b\nc\na b\n"


def test_invalid_file_writes_nothing(settings):
    system = factories.system(factories.user())
    prompts = factories.prompt_set(3)
    with pytest.raises(InvalidUpload):
        submit_responses(system=system, prompt_set=prompts, data=b"a\nc\n", filename="x.txt")
    assert Submission.objects.count() == 0
    assert Response.objects.count() == 0
    assert not (settings.MEDIA_ROOT / "submissions").exists()


def test_empty_responses_are_stored_warned_and_counted(django_capture_on_commit_callbacks):
    system = factories.system(factories.user())
    prompts = factories.prompt_set(3)
    with django_capture_on_commit_callbacks(execute=True):
        submission = submit_responses(
            system=system, prompt_set=prompts, data=b"a b\n\nc d\n", filename="x.txt"
        )
    submission.refresh_from_db()
    assert list(submission.responses.values_list("text", flat=True)) == ["a b", "", "c d"]
    assert submission.warnings == [
        {"line": 2, "message": "empty response (stored; counted as zero tokens)."}
    ]
    assert submission.status == Submission.Status.SCORED
    assert submission.metrics["n_empty"] == 1
    assert submission.metrics["avg_length"] == pytest.approx(4 / 3)


def test_a_failing_insert_rolls_back_the_submission(monkeypatch):
    system = factories.system(factories.user())
    prompts = factories.prompt_set(2)

    def broken_insert(*args, **kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr("evalhub.services.insert_responses", broken_insert)
    with pytest.raises(RuntimeError):
        submit_responses(system=system, prompt_set=prompts, data=b"a\nb\n", filename="x.txt")
    assert Submission.objects.count() == 0


def test_baselines_are_stored():
    system = factories.system(factories.user())
    baseline = factories.system(None, is_baseline=True)
    prompts = factories.prompt_set(1)
    submission = submit_responses(
        system=system, prompt_set=prompts, data=b"a\n", filename="x.txt", baselines=[baseline]
    )
    assert list(submission.baselines.all()) == [baseline]


def test_create_prompt_set_from_txt_keeps_order():
    prompt_set = create_prompt_set(slug="s", name="S", data=b"one\ntwo\nthree\n", filename="p.txt")
    assert list(prompt_set.prompts.values_list("position", "external_id", "context")) == [
        (0, "1", ["one"]),
        (1, "2", ["two"]),
        (2, "3", ["three"]),
    ]


def test_create_prompt_set_invalid_writes_nothing():
    with pytest.raises(InvalidUpload):
        create_prompt_set(slug="s", name="S", data=b"one\n\nthree\n", filename="p.txt")
    assert PromptSet.objects.count() == 0
    assert Prompt.objects.count() == 0


def media_files(settings) -> list:
    return [p for p in settings.MEDIA_ROOT.rglob("*") if p.is_file()]


def test_the_file_is_written_once_the_rows_commit(settings, django_capture_on_commit_callbacks):
    system = factories.system(factories.user())
    prompts = factories.prompt_set(2)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        submission = submit_responses(
            system=system, prompt_set=prompts, data=b"a\nb\n", filename="x.txt"
        )
        assert media_files(settings) == []
    for callback in callbacks:
        callback()
    submission.refresh_from_db()
    assert submission.file.read() == b"a\nb\n"
    assert len(media_files(settings)) == 1


def test_a_failed_upload_leaves_no_file(settings, django_capture_on_commit_callbacks):
    system = factories.system(factories.user())
    prompts = factories.prompt_set(2)
    failing = mock.patch(
        "evalhub.services.insert_responses", side_effect=DatabaseError("the database went away")
    )
    with django_capture_on_commit_callbacks(execute=True), failing, pytest.raises(DatabaseError):
        submit_responses(system=system, prompt_set=prompts, data=b"a\nb\n", filename="x.txt")
    assert Submission.objects.count() == 0
    assert media_files(settings) == []


def test_an_upload_rolled_back_by_its_caller_leaves_no_file(
    settings, django_capture_on_commit_callbacks
):
    system = factories.system(factories.user())
    prompts = factories.prompt_set(2)
    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        submit_responses(system=system, prompt_set=prompts, data=b"a\nb\n", filename="x.txt")
        raise RuntimeError("a later step of the same request failed")
    assert Submission.objects.count() == 0
    assert media_files(settings) == []
