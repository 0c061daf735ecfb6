"""Through the real broker to a real worker process (CI starts both; see .ci/run)."""

import time

import pytest

from evalhub.models import Submission
from evalhub.services import submit_responses
from tests import factories
from tests.services import require_celery_worker

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def real_worker():
    require_celery_worker()


def wait_for(predicate, seconds=60.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def test_metrics_are_computed_by_the_worker_process():
    system = factories.system(factories.user())
    prompts = factories.prompt_set(2)
    submission = submit_responses(
        system=system, prompt_set=prompts, data=b"a b a\nb c\n", filename="r.txt"
    )
    # Committed at once (transactional test), so the task is already on the broker.
    assert Submission.objects.get(pk=submission.pk).status == Submission.Status.VALIDATED
    scored = wait_for(
        lambda: Submission.objects.get(pk=submission.pk).status == Submission.Status.SCORED
    )
    assert scored, "the worker did not score the submission within 60 s"
    submission.refresh_from_db()
    assert submission.metrics["distinct_1"] == pytest.approx(0.6)
