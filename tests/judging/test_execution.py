"""A judge run over a campaign against fake OpenAI-compatible judges on 127.0.0.1: what it
stores, retries of unparseable answers, refusals, 429s, concurrency, budget, pause,
resumption after a dead worker, and transport failures."""

from functools import partial

import pytest
from django.http import QueryDict
from django.urls import reverse
from django.utils import timezone

from annotation.models import Item
from endpoints.client import (
    BotClient,
    Endpoint,
    RetryPolicy,
    database_budget,
    database_record,
)
from endpoints.models import EndpointCall, EndpointUsage
from evalhub.models import Lease
from judging import execution, runs
from judging import tasks as judging_tasks
from judging.models import AutomaticJudgment, JudgeRun
from tests import factories
from tests.endpoints import openai_fake
from tests.judging import builders, fake_judges

pytestmark = pytest.mark.django_db

FAST = RetryPolicy(attempts=3, base_delay=0.001, max_delay=0.002, jitter=False)


def fast_client(sleeps=None):
    """The run's client with quick backoff; `sleeps` records the waits instead of sleeping."""

    def make(run, inbox):
        return BotClient(
            Endpoint.from_model(run.judge.endpoint),
            retry=FAST,
            sleep=sleeps.append if sleeps is not None else (lambda s: None),
            budget=lambda endpoint, purpose: inbox.on_worker_thread(
                database_budget, endpoint, purpose
            ),
            purpose="judge",
            record=lambda endpoint_id, **outcome: inbox.on_worker_thread(
                partial(database_record, endpoint_id, **outcome)
            ),
        )

    return make


def new_run(server, campaign, *, rubric=None, **settings) -> JudgeRun:
    judge = builders.judge(server)
    campaign.owner = judge.owner
    campaign.save(update_fields=["owner"])
    rubric = rubric or builders.default_rubric(campaign.task_kind)
    return JudgeRun.objects.create(
        judge=judge,
        rubric=rubric,
        campaign=campaign,
        items_total=runs.judgeable_items(campaign).count(),
        **settings,
    )


def human_payload(kind_key, item, form: dict) -> dict:
    """What the kind makes of the same answer submitted by a worker."""
    campaign = item.campaign
    kind = campaign.kind
    data = QueryDict(mutable=True)
    data.update(form)
    return kind.parse_payload(item, kind.clean_config(campaign.task_config), data)


def test_a_run_judges_every_task_item_with_the_human_payload_shape(fake):
    server = fake(fake_judges.answers({"better": "1"}))
    campaign = builders.ab(3, gold=1)
    run = new_run(server, campaign)
    assert execution.execute(run.pk, client_factory=fast_client()) == "done"
    run.refresh_from_db()
    assert (run.status, run.items_total, run.items_done, run.items_failed) == ("done", 3, 3, 0)
    assert (run.prompt_tokens, run.completion_tokens) == (360, 24)
    assert run.finished_at is not None and run.started_at is not None
    judgments = list(run.judgments.select_related("item__campaign"))
    assert {j.item.role for j in judgments} == {Item.Role.TASK}  # gold is not judged
    for j in judgments:
        assert j.status == "ok" and j.attempts == 1
        assert j.payload == human_payload("ab", j.item, {"choice": "left"})
        assert (j.prompt_tokens, j.completion_tokens) == (120, 8)
    assert len(server.requests) == 3
    sent = server.requests[0]
    assert sent["model"] == "judge-model" and sent["messages"][0]["role"] == "system"
    assert "left answer" in fake_judges.prompt_of(sent)


def test_a_malformed_answer_is_asked_again_with_the_problem(fake):
    server = fake(fake_judges.answers("I think the first one is better.", {"better": "2"}))
    run = new_run(server, builders.ab(1), max_attempts=3)
    execution.execute(run.pk, client_factory=fast_client())
    judgment = AutomaticJudgment.objects.get(run=run)
    assert (judgment.status, judgment.attempts) == ("ok", 2)
    assert judgment.payload == human_payload("ab", judgment.item, {"choice": "right"})
    retry = server.requests[1]["messages"]
    assert retry[2] == {"role": "assistant", "content": "I think the first one is better."}
    assert "holds no JSON object" in retry[3]["content"]
    # Tokens of both requests are counted.
    assert (judgment.prompt_tokens, judgment.completion_tokens) == (240, 16)


def test_an_answer_the_kind_refuses_fails_after_max_attempts_with_the_raw_text(fake):
    server = fake(fake_judges.answers('{"better": "3"}'))
    run = new_run(server, builders.ab(1), max_attempts=2)
    assert execution.execute(run.pk, client_factory=fast_client()) == "done"
    judgment = AutomaticJudgment.objects.get(run=run)
    assert (judgment.status, judgment.attempts, judgment.payload) == ("failed", 2, {})
    assert judgment.raw_text == '{"better": "3"}'
    assert "is not a possible answer for which response is better" in judgment.error
    run.refresh_from_db()
    assert (run.items_done, run.items_failed, run.status) == (0, 1, "done")
    assert len(server.requests) == 2


# Issue 23, finding 12: a judge's NUL characters (PostgreSQL stores none; the run crashed
# there, stayed "running", and each takeover spent the budget again) ----------------------


def test_a_judge_replying_with_nul_characters_finishes_the_run_without_them(fake):
    server = fake(fake_judges.answers('\u0000{"better": "1"}\u0000'))
    run = new_run(server, builders.ab(2))
    assert execution.execute(run.pk, client_factory=fast_client()) == "done"
    run.refresh_from_db()
    assert (run.status, run.items_done, run.items_failed) == ("done", 2, 0)
    for judgment in run.judgments.all():
        assert judgment.status == "ok" and judgment.raw_text == '{"better": "1"}'
    assert len(server.requests) == 2  # asked once per item, never again


def test_a_nul_escaped_inside_the_judges_json_is_dropped_from_the_answer(fake):
    """ "\\u0000" in the reply's JSON is no NUL in its text, but is one once decoded."""
    server = fake(fake_judges.answers('{"better": "\\u00001\\u0000"}'))
    run = new_run(server, builders.ab(1))
    assert execution.execute(run.pk, client_factory=fast_client()) == "done"
    judgment = AutomaticJudgment.objects.get(run=run)
    assert judgment.status == "ok"
    assert judgment.payload == human_payload("ab", judgment.item, {"choice": "left"})


def test_a_judge_answering_only_an_escaped_nul_fails_the_item_and_finishes(fake):
    server = fake(fake_judges.answers('{"better": "\\u0000"}'))
    run = new_run(server, builders.ab(1), max_attempts=2)
    assert execution.execute(run.pk, client_factory=fast_client()) == "done"
    judgment = AutomaticJudgment.objects.get(run=run)
    assert (judgment.status, judgment.attempts) == ("failed", 2)
    assert "\x00" not in judgment.error and "\x00" not in judgment.raw_text
    run.refresh_from_db()
    assert (run.status, run.items_failed) == ("done", 1)


def test_a_refusal_is_recorded_failed_with_why_and_its_body_kept_for_staff(fake):
    server = fake(lambda payload: fake_judges.REFUSAL)
    run = new_run(server, builders.ab(1), max_attempts=2)
    execution.execute(run.pk, client_factory=fast_client())
    judgment = AutomaticJudgment.objects.get(run=run)
    assert judgment.status == "failed" and judgment.attempts == 2
    assert judgment.error == (
        "The reply was unusable: choices[0].message.content must be a string, not null."
    )
    assert judgment.raw_text == ""  # no usable text came; the body is the staff's to read
    assert "help with that" in EndpointCall.objects.filter(status="invalid_reply")[0].detail
    assert (judgment.prompt_tokens, judgment.completion_tokens) == (None, None)


INTERNAL_PAGE = b"<h1>build server</h1> DEPLOY_TOKEN=ghp_internal_4471"


@pytest.mark.parametrize(
    ("reply", "summary"),
    [
        (openai_fake.Reply(500, INTERNAL_PAGE), "answered HTTP 500"),
        (openai_fake.Reply(200, INTERNAL_PAGE), "the reply is not JSON"),
    ],
    ids=["http-500", "not-json"],
)
def test_an_upstream_body_never_reaches_the_runs_owner(fake, client, reply, summary):
    server = fake(lambda payload: reply)
    run = new_run(server, builders.ab(1), concurrency=1)
    assert execution.execute(run.pk, client_factory=fast_client()) == "failed"
    run.refresh_from_db()
    assert run.last_error == summary
    client.force_login(run.judge.owner)
    shown = [
        client.get(run.get_absolute_url()).content,
        client.get(reverse("judging:run-progress", args=[run.pk])).content,
        client.get(f"/api/judge-runs/{run.pk}/").content,
        client.get(f"/api/judge-runs/{run.pk}/judgments/").content,
    ]
    assert all(b"ghp_internal_4471" not in body for body in shown)
    assert summary.encode() in shown[0]
    assert "ghp_internal_4471" in EndpointCall.objects.order_by("-id")[0].detail  # staff


def test_a_429_is_waited_out_as_its_retry_after_says(fake):
    script = openai_fake.then(openai_fake.rate_limited("7"), fake_judges.answers({"better": "tie"}))
    server = fake(script)
    sleeps = []
    run = new_run(server, builders.ab(1))
    execution.execute(run.pk, client_factory=fast_client(sleeps))
    judgment = AutomaticJudgment.objects.get(run=run)
    assert judgment.status == "ok" and judgment.payload["choice"] == "tie"
    assert sleeps == [7.0]
    # Both requests were charged to the endpoint's budget, retries included.
    assert EndpointUsage.objects.get(endpoint=run.judge.endpoint).requests == 2


@pytest.mark.parametrize("concurrency", [1, 3])
def test_requests_in_flight_follow_the_run_concurrency(fake, concurrency):
    slow = fake_judges.Slow({"better": "1"}, 0.15)
    server = fake(slow)
    run = new_run(server, builders.ab(6), concurrency=concurrency)
    run.judge.endpoint.max_concurrency = 8
    run.judge.endpoint.save()
    execution.execute(run.pk, client_factory=fast_client())
    assert slow.most_in_flight == concurrency
    assert AutomaticJudgment.objects.filter(run=run, status="ok").count() == 6
    assert len(server.requests) == 6


def test_a_spent_daily_budget_pauses_the_run_with_the_reason(fake):
    server = fake(fake_judges.answers({"better": "1"}))
    run = new_run(server, builders.ab(4))
    run.judge.endpoint.daily_budget = 2
    run.judge.endpoint.save()
    assert execution.execute(run.pk, client_factory=fast_client()) == "paused"
    run.refresh_from_db()
    assert run.status == "paused" and "daily budget of 2 requests is spent" in run.last_error
    assert run.items_done == 2 and run.judgments.count() == 2
    assert len(server.requests) == 2


def test_a_run_paused_by_its_owner_stops_taking_items(fake):
    server = fake(fake_judges.answers({"better": "1"}))
    run = new_run(server, builders.ab(5), concurrency=1)

    def pausing_client(run_, inbox):
        client = fast_client()(run_, inbox)
        real_chat = client.chat
        calls = []

        def chat(messages, **options):
            calls.append(1)
            if len(calls) == 2:  # the owner presses pause while the 2nd item is asked
                inbox.on_worker_thread(lambda: runs.pause(JudgeRun.objects.get(pk=run_.pk)))
            return real_chat(messages, **options)

        client.chat = chat
        return client

    assert execution.execute(run.pk, client_factory=pausing_client) == "paused"
    run.refresh_from_db()
    # The item in flight when the pause came is finished and kept; no other is asked.
    assert run.status == "paused" and run.items_done == 2 and len(server.requests) == 2
    runs.resume(run)  # eager: on_commit is not run inside the test's transaction
    assert execution.execute(run.pk, client_factory=fast_client()) == "done"
    run.refresh_from_db()
    assert run.items_done == 5 and run.judgments.count() == 5 and len(server.requests) == 5


def test_a_run_whose_worker_died_is_claimed_again_and_judges_only_the_rest(fake):
    server = fake(fake_judges.answers({"better": "2"}))
    campaign = builders.ab(3)
    run = new_run(server, campaign)
    first = runs.judgeable_items(campaign).first()
    # The dead worker had stored one judgment, and its lease lapsed.
    AutomaticJudgment.objects.create(run=run, item=first, status="ok", payload={"choice": "a"})
    JudgeRun.objects.filter(pk=run.pk).update(status="running", lease=4, items_done=1)
    factories.lease(f"judge-run:{run.pk}", lapsed=True)
    assert execution.execute(run.pk, client_factory=fast_client()) == "done"
    run.refresh_from_db()
    assert (run.lease, run.items_done, run.judgments.count()) == (5, 3, 3)
    assert len(server.requests) == 2
    assert run.judgments.get(item=first).payload == {"choice": "a"}
    assert not Lease.objects.exists()  # released: the next message may take it at once


def test_a_run_with_a_live_worker_is_not_claimed_twice(fake):
    server = fake(fake_judges.answers({"better": "1"}))
    run = new_run(server, builders.ab(2))
    JudgeRun.objects.filter(pk=run.pk).update(status="running", heartbeat=timezone.now())
    factories.lease(f"judge-run:{run.pk}")
    assert execution.execute(run.pk, client_factory=fast_client()) == "skipped"
    assert run.judgments.count() == 0 and server.requests == []
    assert JudgeRun.objects.get(pk=run.pk).lease == 0


def test_a_worker_that_lost_its_lease_writes_nothing(fake):
    server = fake(fake_judges.answers({"better": "1"}))
    run = new_run(server, builders.ab(3), concurrency=1)

    def usurped_client(run_, inbox):
        client = fast_client()(run_, inbox)
        real_chat = client.chat

        def chat(messages, **options):
            # Another worker claims the run (this one was thought dead).
            inbox.on_worker_thread(lambda: JudgeRun.objects.filter(pk=run_.pk).update(lease=99))
            return real_chat(messages, **options)

        client.chat = chat
        return client

    assert execution.execute(run.pk, client_factory=usurped_client) == "lost"
    run.refresh_from_db()
    assert run.judgments.count() == 0 and run.items_done == 0 and run.status == "running"


def test_an_endpoint_that_keeps_failing_fails_the_run_and_a_resume_finishes_it(fake):
    healthy = {"on": False}
    good = fake_judges.answers({"better": "1"})

    def script(payload):
        return good(payload) if healthy["on"] else openai_fake.Reply(500, b"down")

    server = fake(script)
    run = new_run(server, builders.ab(2), concurrency=1)
    assert execution.execute(run.pk, client_factory=fast_client()) == "failed"
    run.refresh_from_db()
    assert run.status == "failed" and "answered HTTP 500" in run.last_error
    assert run.judgments.count() == 0  # transport failures leave items to a resume
    healthy["on"] = True
    runs.resume(run)
    assert execution.execute(run.pk, client_factory=fast_client()) == "done"
    run.refresh_from_db()
    assert (run.status, run.items_done, run.last_error) == ("done", 2, "")


def test_tokens_a_server_does_not_report_stay_unknown(fake):
    server = fake(fake_judges.answers({"better": "1"}, usage=None))
    run = new_run(server, builders.ab(1))
    execution.execute(run.pk, client_factory=fast_client())
    judgment = run.judgments.get()
    assert (judgment.prompt_tokens, judgment.completion_tokens) == (None, None)
    run.refresh_from_db()
    assert (run.prompt_tokens, run.completion_tokens) == (0, 0)


def test_a_slice_that_runs_out_queues_the_rest(fake, settings):
    settings.EVALHUB_JUDGE_SLICE_SECONDS = 0
    server = fake(fake_judges.answers({"better": "1"}))
    run = new_run(server, builders.ab(3), concurrency=1)
    assert execution.execute(run.pk, client_factory=fast_client()) == "continued"
    run.refresh_from_db()
    assert run.status == "queued" and run.items_done == 1
    assert not Lease.objects.exists()  # released before the task sends the rest on


def test_the_task_sends_a_continued_run_on_after_its_lease_is_released(monkeypatch):
    sent = []
    monkeypatch.setattr(judging_tasks, "execute", lambda run_id: "continued")
    monkeypatch.setattr(judging_tasks, "enqueue", lambda task, pk: sent.append(pk) or True)
    assert judging_tasks.run_judge(7) == "continued"
    assert sent == [7]


def test_the_default_client_reads_long_replies(fake, settings):
    settings.EVALHUB_JUDGE_MAX_REPLY_CHARS = 50_000
    server = fake(fake_judges.answers('{"better": "1"}' + " " * 10 + "x" * 6000))
    run = new_run(server, builders.ab(1))
    execution.execute(run.pk)
    assert run.judgments.get().status == "ok"


# Issue 28, point 5: structured output (response_format), and the re-ask loop kept for
# endpoints that refuse it ---------------------------------------------------------------


def strict(schema: dict) -> bool:
    """Whether `schema` has the shape OpenAI's strict mode takes: every object closed, with
    every property required."""
    if schema.get("type") == "object":
        properties = schema["properties"]
        closed = schema["additionalProperties"] is False
        return (
            closed
            and schema["required"] == list(properties)
            and all(map(strict, properties.values()))
        )
    if schema.get("type") == "array":
        return strict(schema["items"])
    return True


def test_a_judge_sends_the_rubrics_schema_and_its_structured_replies_are_judged(fake):
    # Without the schema this model rambles; with it, it can only write the answer.
    server = fake(
        openai_fake.honouring_response_format(fake_judges.answers("Response 1, clearly."))
    )
    run = new_run(server, builders.ab(2), max_attempts=1)
    assert execution.execute(run.pk, client_factory=fast_client()) == "done"
    asked = server.requests[0]["response_format"]
    assert asked["type"] == "json_schema"
    assert (asked["json_schema"]["name"], asked["json_schema"]["strict"]) == ("ab_answer", True)
    assert asked["json_schema"]["schema"]["properties"] == {
        "better": {"type": "string", "enum": ["1", "2", "tie"]}
    }
    assert strict(asked["json_schema"]["schema"])
    judgments = list(run.judgments.all())
    assert [(j.status, j.output_path, j.parse_failures) for j in judgments] == [
        ("ok", "structured", 0),
        ("ok", "structured", 0),
    ]
    assert judgments[0].payload == human_payload("ab", judgments[0].item, {"choice": "left"})
    run.judge.endpoint.refresh_from_db()
    assert run.judge.endpoint.structured_output == "auto"


@pytest.mark.parametrize(
    "build",
    [
        lambda: builders.likert(1, level="turn"),
        lambda: builders.abc_eval(1),
        lambda: builders.spot_the_bot(1),
        lambda: builders.comparative(),
    ],
)
def test_every_kinds_schema_is_strict_and_names_the_pages_choices(fake, build):
    server = fake(fake_judges.answers("no answer"))
    run = new_run(server, build(), max_attempts=1)
    execution.execute(run.pk, client_factory=fast_client())
    schema = server.requests[0]["response_format"]["json_schema"]["schema"]
    assert strict(schema) and len(schema["properties"]) >= 1


def test_an_endpoint_refusing_response_format_is_asked_with_the_prompt_and_remembered(fake):
    server = fake(openai_fake.refusing_response_format(fake_judges.answers({"better": "2"})))
    run = new_run(server, builders.ab(3), concurrency=1)
    assert execution.execute(run.pk, client_factory=fast_client()) == "done"
    # The refused request, then the same question without the schema, then no more schema.
    assert ["response_format" in r for r in server.requests] == [True, False, False, False]
    assert server.requests[1]["messages"] == server.requests[0]["messages"]
    assert {(j.status, j.output_path, j.attempts) for j in run.judgments.all()} == {
        ("ok", "prompt", 1)
    }
    run.judge.endpoint.refresh_from_db()
    assert run.judge.endpoint.structured_output == "off"
    # The next run asks with the prompt alone from its first request.
    second = new_run(server, builders.ab(1))
    second.judge = run.judge
    second.save(update_fields=["judge"])
    execution.execute(second.pk, client_factory=fast_client())
    assert "response_format" not in server.requests[-1]


def test_another_400_is_not_taken_for_a_refusal_of_structured_output(fake):
    server = fake(lambda payload: openai_fake.Reply(400, b'{"error": {"message": "bad model"}}'))
    run = new_run(server, builders.ab(1))
    assert execution.execute(run.pk, client_factory=fast_client()) == "failed"
    assert len(server.requests) == 1 and not run.judgments.exists()
    run.judge.endpoint.refresh_from_db()
    assert run.judge.endpoint.structured_output == "auto"


def test_unparsed_replies_are_counted_on_the_prompt_path(fake):
    server = fake(fake_judges.answers("Response 1.", {"better": "1"}))
    run = new_run(server, builders.ab(1), max_attempts=3)
    run.judge.endpoint.structured_output = "off"
    run.judge.endpoint.save(update_fields=["structured_output"])
    execution.execute(run.pk, client_factory=fast_client())
    assert all("response_format" not in r for r in server.requests)
    judgment = AutomaticJudgment.objects.get(run=run)
    assert (judgment.status, judgment.output_path, judgment.attempts) == ("ok", "prompt", 2)
    assert judgment.parse_failures == 1
