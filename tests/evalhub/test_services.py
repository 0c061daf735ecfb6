import pytest

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
    assert len(callbacks) == 1
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
        submit_responses(system=system, prompt_set=prompts, data=b"a\n\nc\n", filename="x.txt")
    assert Submission.objects.count() == 0
    assert Response.objects.count() == 0
    assert not (settings.MEDIA_ROOT / "submissions").exists()


def test_a_failing_insert_rolls_back_the_submission(monkeypatch):
    system = factories.system(factories.user())
    prompts = factories.prompt_set(2)

    def broken_bulk_create(*args, **kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(Response.objects, "bulk_create", broken_bulk_create)
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
