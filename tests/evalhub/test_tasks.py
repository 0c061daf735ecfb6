import pytest

from evalhub import tasks
from evalhub.models import Submission
from tests import factories

pytestmark = pytest.mark.django_db


def make_submission(lines):
    system = factories.system(factories.user())
    prompts = factories.prompt_set(len(lines))
    return factories.submission(system, prompts, lines)


def test_metrics_match_hand_computed_values():
    # tokens: "a b a" (3) + "b c" (2) = 5 tokens; distinct unigrams {a, b, c} = 3;
    # distinct bigrams {a b, b a, b c} = 3; ChatEval divides both by the token count.
    submission = make_submission(["a b a", "b c"])
    metrics = tasks.compute_submission_metrics(submission.pk)
    assert metrics["avg_length"] == pytest.approx(2.5)
    assert metrics["distinct_1"] == pytest.approx(3 / 5)
    assert metrics["distinct_2"] == pytest.approx(3 / 5)
    assert metrics["n_empty"] == 0 and metrics["n_duplicates"] == 0


def test_bleu2_uses_the_references():
    system = factories.system(factories.user())
    prompts = factories.prompt_set(2)  # references: "hi there number i ."
    submission = factories.submission(
        system, prompts, ["hi there number 1 .", "hi there number 2 ."]
    )
    assert tasks.compute_submission_metrics(submission.pk)["bleu2"] == pytest.approx(1.0)


def test_no_references_gives_no_bleu():
    system = factories.system(factories.user())
    prompts = factories.prompt_set(2, references=False)
    submission = factories.submission(system, prompts, ["x", "y"])
    assert tasks.compute_submission_metrics(submission.pk)["bleu2"] is None


def test_metrics_task_is_idempotent():
    submission = make_submission(["a b a", "b c"])
    first = tasks.compute_submission_metrics(submission.pk)
    submission.refresh_from_db()
    scored_once = (submission.status, submission.metrics)
    second = tasks.compute_submission_metrics(submission.pk)
    submission.refresh_from_db()
    assert first == second
    assert (submission.status, submission.metrics) == scored_once == ("scored", first)


def test_a_failure_is_recorded_and_a_retry_recovers(monkeypatch):
    submission = make_submission(["a", "b"])

    def broken(*args, **kwargs):
        raise ValueError("boom")

    monkeypatch.setattr(tasks, "compute_text_metrics", broken)
    with pytest.raises(ValueError):
        tasks.compute_submission_metrics(submission.pk)
    submission.refresh_from_db()
    assert submission.status == Submission.Status.FAILED
    assert submission.error_report == [{"line": None, "message": "Computing metrics failed: boom"}]

    monkeypatch.undo()
    tasks.compute_submission_metrics(submission.pk)
    submission.refresh_from_db()
    assert submission.status == Submission.Status.SCORED
    assert submission.error_report == []


def test_missing_submission_is_not_an_error():
    assert tasks.compute_submission_metrics(999_999) is None
