import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evalhub.models import Response, Submission
from evalhub.response_rows import insert_responses
from evalhub.services import submit_responses
from tests import factories

pytestmark = pytest.mark.django_db

AWKWARD_TEXTS = [
    "",
    'it\'s "quoted"',
    "back\\slash and \\u0041 as written",
    "two\nlines\ttabbed",
    "100% sure, %s and %(name)s stay as they are",
    "émigré 日本語 🤖",
    "   ",
]


def test_every_text_is_stored_exactly_as_given():
    system = factories.system(factories.user())
    prompt_set = factories.prompt_set(len(AWKWARD_TEXTS))
    submission = Submission.objects.create(system=system, prompt_set=prompt_set, format="jsonl")
    prompt_ids = list(prompt_set.prompts.order_by("position").values_list("id", flat=True))
    insert_responses(submission.pk, list(zip(prompt_ids, AWKWARD_TEXTS, strict=True)))
    stored = list(
        Response.objects.filter(submission=submission)
        .order_by("prompt__position")
        .values_list("prompt_id", "text")
    )
    assert stored == list(zip(prompt_ids, AWKWARD_TEXTS, strict=True))


def test_no_rows_store_nothing():
    system = factories.system(factories.user())
    prompt_set = factories.prompt_set(1)
    submission = Submission.objects.create(system=system, prompt_set=prompt_set, format="jsonl")
    with CaptureQueriesContext(connection) as captured:
        insert_responses(submission.pk, [])
    assert len(captured.captured_queries) == 0
    assert not Response.objects.exists()


def upload(n_prompts: int) -> tuple[Submission, int]:
    system = factories.system(factories.user())
    prompt_set = factories.prompt_set(n_prompts)
    data = "\n".join(
        json.dumps({"prompt": str(i), "response": f"answer {i}"}) for i in range(n_prompts, 0, -1)
    ).encode()
    with CaptureQueriesContext(connection) as captured:
        submission = submit_responses(
            system=system, prompt_set=prompt_set, data=data, filename="r.jsonl"
        )
    return submission, len(captured.captured_queries)


def test_an_uploads_query_count_does_not_grow_with_the_file():
    small, small_queries = upload(5)
    large, large_queries = upload(1500)
    assert small_queries == large_queries
    assert small.responses.count() == 5
    assert large.responses.count() == 1500
    assert large.responses.get(prompt__external_id="1234").text == "answer 1234"
