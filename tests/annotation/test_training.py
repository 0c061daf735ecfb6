"""Training and screening: who needs it, the session with feedback, grading on the last
conversation, retries, qualification across campaigns, and the gate before allocation."""

import random

import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.items import add_items
from annotation.kinds import get_kind
from annotation.kinds.abc_eval import TASKS, with_gold
from annotation.models import Assignment, Qualification, TrainingAnswer, Worker
from annotation.training import (
    TrainingClosed,
    begin_attempt,
    needs_training,
    record_training_answer,
    training_state,
)
from tests.annotation.builders import ab_campaign, campaign
from tests.annotation.kinds.test_abc_eval import (
    CONSISTENCY_GOLD,
    SELF_CONTRADICTION,
    conversation,
    loaded,
)

pytestmark = pytest.mark.django_db
ABC = get_kind("abc_eval")
NOT_REDUNDANT = "Each bot turn says something new: nothing here is redundant."


def next_training_item(campaign, worker):
    """The training item the worker annotates next, or None when no attempt is open here."""
    return training_state(campaign, worker).next_item


def abc_campaign(task="consistency", *, training=3, n_task=2, config=None, **fields):
    """A live ABC-Eval campaign that requires training; every training conversation has the
    same gold: only bot turn 3 (position 5) is a self contradiction. `config` adds to the
    task config (e.g. the screening thresholds)."""
    fields.setdefault("requires_training", True)
    task_config = {"behaviour_task": task, **(config or {})}
    c = campaign("abc_eval", task_config=task_config, batch_size=1, **fields)
    config = c.task_config
    task_specs = ABC.build_from_conversations(
        loaded([conversation(f"{c.slug}-task-{i}") for i in range(n_task)]),
        config,
        random.Random(0),
    )
    training_specs = ABC.build_from_conversations(
        loaded([conversation(f"{c.slug}-train-{i}") for i in range(training)]),
        config,
        random.Random(0),
    )
    labels = {name: [0, 0, 0] for name in TASKS[task].labels}
    if task == "consistency":
        labels = CONSISTENCY_GOLD
    explanations = {5: SELF_CONTRADICTION, 1: NOT_REDUNDANT} if task == "consistency" else {}
    add_items(c, task_specs + [with_gold(s, labels, explanations) for s in training_specs])
    return c


def answer(mistakes: int) -> dict:
    """A consistency answer with that many mistaken bot turns (0 to 3)."""
    data = {"reviewed": "1", "flag_self_contradiction_5": "1"}
    if mistakes >= 1:
        data["flag_redundant_1"] = "1"
    if mistakes >= 2:
        data["flag_partner_contradiction_3"] = "1"
    if mistakes >= 3:
        del data["flag_self_contradiction_5"]
    return data


def payload(mistakes: int, task="consistency") -> dict:
    if task != "consistency":
        return {"labels": {task: [1] * mistakes + [0] * (3 - mistakes)}}
    flags = {k: v for k, v in answer(mistakes).items() if k.startswith("flag_")}
    labels = {name: [0, 0, 0] for name in CONSISTENCY_GOLD}
    for key in flags:
        code, position = key[len("flag_") :].rsplit("_", 1)
        labels[code.replace("_", " ")][(int(position) - 1) // 2] = 1
    return {"labels": labels}


def worker(external_id="w1"):
    return Worker.objects.get_or_create(provider="local", external_id=f"link:{external_id}")[0]


def start(client, c, who="w1"):
    return client.get(f"{reverse('annotation:start', args=[c.slug])}?worker={who}")


def url(name, c, item=None):
    args = [c.slug] if item is None else [c.slug, item.pk]
    return reverse(f"annotation:{name}", args=args)


def train(c, w, *mistakes):
    """Run one whole attempt through the services, one mistake count per conversation."""
    begin_attempt(c, w)
    for n in mistakes:
        record_training_answer(
            c, w, next_training_item(c, w), payload(n, c.task_config["behaviour_task"])
        )
    return Qualification.objects.get(worker=w)


def test_only_unqualified_workers_of_campaigns_that_require_training_need_it():
    c = abc_campaign()
    w = worker()
    assert needs_training(c, w)
    assert not needs_training(abc_campaign(requires_training=False), w)
    # A kind without training never needs it, whatever the campaign says.
    assert not needs_training(ab_campaign(2, requires_training=True), w)
    Qualification.objects.create(worker=w, key="abc_eval:consistency", passed=True)
    assert not needs_training(c, w)
    assert needs_training(abc_campaign("empathy"), w)


def test_the_start_link_sends_an_unqualified_worker_to_training_before_any_allocation(client):
    c = abc_campaign()
    response = start(client, c)
    assert response.status_code == 302 and response["Location"] == url("training", c)
    assert not Assignment.objects.filter(worker__isnull=False).exists()
    intro = client.get(url("training", c)).content.decode()
    assert "annotate 3 training conversations" in intro and "fewer than 3 mistakes" in intro


def test_a_whole_session_fail_see_why_retry_qualify_then_work(client):
    c = abc_campaign(training=6)
    start(client, c)
    response = client.post(url("training-begin", c))
    assert response["Location"] == url("training", c)
    first, second, third = training_state(c, worker()).items

    page = client.get(url("training", c), follow=True)
    html = page.content.decode()
    assert page.redirect_chain[-1][0] == url("training-item", c, first)
    assert "Training 1 of 3 · attempt 1" in html and 'name="flag_redundant_1"' in html
    assert SELF_CONTRADICTION not in html and NOT_REDUNDANT not in html

    response = client.post(url("training-item", c, first), answer(1))
    assert response["Location"] == url("training-feedback", c, first)
    feedback = client.get(response["Location"]).content.decode()
    assert (
        "Bot turn 1" in feedback
        and NOT_REDUNDANT in feedback
        and "Next training conversation" in feedback
    )
    assert SELF_CONTRADICTION not in feedback  # that turn was right

    client.post(url("training-item", c, second), answer(0))
    assert (
        "Your answers match ours everywhere"
        in client.get(url("training-feedback", c, second)).content.decode()
    )
    client.post(url("training-item", c, third), answer(3))
    feedback = client.get(url("training-feedback", c, third)).content.decode()
    assert "See your result" in feedback and SELF_CONTRADICTION in feedback

    result = client.get(url("training", c)).content.decode()
    assert "You did not qualify this time" in result and "3 places" in result
    assert SELF_CONTRADICTION in result and "Start the training again" in result
    q = Qualification.objects.get()
    assert (q.key, q.passed, q.attempts, q.last_mistakes) == ("abc_eval:consistency", False, 1, 3)
    assert [a.mistakes for a in TrainingAnswer.objects.order_by("item__position")] == [1, 0, 3]
    assert start(client, c)["Location"] == url("training", c)

    client.post(url("training-begin", c))
    # The retry takes three conversations the worker has not seen.
    fourth, fifth, sixth = training_state(c, worker()).items
    assert {fourth, fifth, sixth}.isdisjoint({first, second, third})
    assert "attempt 2" in client.get(url("training-item", c, fourth)).content.decode()
    for item in (fourth, fifth, sixth):
        client.post(url("training-item", c, item), answer(0))
    result = client.get(url("training", c)).content.decode()
    assert "You qualified" in result
    q.refresh_from_db()
    assert (q.passed, q.attempts, q.last_mistakes) == (True, 2, 0)
    assert TrainingAnswer.objects.filter(attempt=2).count() == 3

    response = start(client, c)
    assignment = Assignment.objects.get(worker=worker())
    assert response["Location"] == assignment.get_absolute_url()
    assert 'name="flag_self_contradiction_5"' in client.get(response["Location"]).content.decode()


def test_a_retry_takes_conversations_the_worker_has_not_seen():
    c = abc_campaign(training=6)
    w = worker()
    first_attempt = training_state(c, w).items
    train(c, w, 0, 0, 3)
    begin_attempt(c, w)
    state = training_state(c, w)
    assert state.attempt == 2 and len(state.items) == 3
    assert set(state.items).isdisjoint(first_attempt)
    with pytest.raises(TrainingClosed):
        record_training_answer(c, w, first_attempt[-1], payload(0))
    for n in (3, 3, 0):  # only the graded conversation, the last new one, decides
        record_training_answer(c, w, training_state(c, w).next_item, payload(n))
    q = Qualification.objects.get(worker=w)
    assert (q.attempts, q.passed, q.last_mistakes) == (2, True, 0)
    assert TrainingAnswer.objects.get(attempt=2, item=state.items[-1]).mistakes == 0


@override_settings(EVALHUB_TRAINING_MAX_ATTEMPTS=4)
def test_no_retry_is_offered_once_every_training_conversation_was_seen(client):
    c = abc_campaign(training=3)
    w = worker()
    train(c, w, 3, 3, 3)
    state = begin_attempt(c, w)
    assert (state.attempt, state.attempts_left) == (1, 0)
    assert Qualification.objects.get(worker=w).attempts == 1
    start(client, c)
    page = client.get(url("training", c)).content.decode()
    assert "Start the training again" not in page


def test_only_the_last_conversation_decides():
    c = abc_campaign()
    assert train(c, worker("w1"), 3, 3, 0).passed
    assert not train(c, worker("w2"), 0, 0, 3).passed


@pytest.mark.parametrize(
    ("task", "threshold"), [("uninterpretable", 2), ("antisocial", 2), ("consistency", 3)]
)
def test_qualify_with_fewer_mistakes_than_the_threshold(task, threshold):
    # The mistake count alone: the per-label screen is switched off.
    off = {"screening_min_recall": 0.0, "screening_min_precision": 0.0}
    c = abc_campaign(task, training=1, config=off)
    passed = train(c, worker("under"), threshold - 1)
    failed = train(c, worker("at"), threshold)
    assert passed.passed and passed.last_mistakes == threshold - 1
    assert not failed.passed and failed.last_mistakes == threshold


def test_the_campaign_threshold_overrides_the_task_default():
    c = abc_campaign(training=1, training_threshold=1)
    assert training_state(c, worker()).threshold == 1
    assert not train(c, worker(), 1).passed
    assert train(c, worker("w2"), 0).passed


def test_a_qualified_worker_skips_training_in_another_campaign_of_the_same_task(client):
    first = abc_campaign(training=1)
    start(client, first)
    client.post(url("training-begin", first))
    client.post(url("training-item", first, training_state(first, worker()).items[0]), answer(0))
    second = abc_campaign(training=1)
    response = start(client, second)
    assert (
        response["Location"]
        == Assignment.objects.get(campaign=second, worker=worker()).get_absolute_url()
    )
    other_task = abc_campaign("knowledge", training=1)
    assert start(client, other_task)["Location"] == url("training", other_task)


def test_an_attempt_failed_elsewhere_is_not_continued_here():
    a, b = abc_campaign(training=1), abc_campaign(training=1)
    w = worker()
    assert train(a, w, 3).attempts == 1
    assert training_state(b, w).status == "not_started"
    assert train(b, w, 0).attempts == 2
    assert TrainingAnswer.objects.get(item__campaign=b).attempt == 2


def test_a_worker_who_never_trained_cannot_reach_task_or_later_training_items(client):
    c = abc_campaign()
    start(client, c)
    task_item = c.items.filter(role="task").first()
    assert client.get(url("training-item", c, task_item)).status_code == 404
    client.post(url("training-begin", c))
    items = training_state(c, worker()).items
    assert client.get(url("training-item", c, items[2]))["Location"] == url("training", c)
    assert client.post(url("training-item", c, items[2]), answer(0))["Location"] == url(
        "training", c
    )
    response = client.get(url("training-feedback", c, items[0]))
    assert response["Location"] == url("training", c) and not TrainingAnswer.objects.exists()
    with pytest.raises(TrainingClosed):
        record_training_answer(c, worker(), items[1], payload(0))
    assert not Assignment.objects.filter(worker__isnull=False).exists()


def test_a_bad_training_answer_shows_the_error_and_keeps_the_ticks(client):
    c = abc_campaign()
    start(client, c)
    client.post(url("training-begin", c))
    first = training_state(c, worker()).items[0]
    response = client.post(url("training-item", c, first), {"flag_redundant_3": "1"})
    html = response.content.decode()
    assert response.status_code == 400 and 'id="reviewed-error"' in html
    assert 'name="flag_redundant_3" value="1" checked' in html
    assert SELF_CONTRADICTION not in html and not TrainingAnswer.objects.exists()


def test_a_double_submit_stores_one_answer(client):
    c = abc_campaign()
    start(client, c)
    client.post(url("training-begin", c))
    client.post(url("training-begin", c))
    first = training_state(c, worker()).items[0]
    client.post(url("training-item", c, first), answer(0))
    again = client.post(url("training-item", c, first), answer(3))
    assert again["Location"] == url("training-feedback", c, first)
    assert list(TrainingAnswer.objects.values_list("attempt", "mistakes")) == [(1, 0)]
    assert Qualification.objects.get().attempts == 1


def test_a_campaign_without_training_items_keeps_everyone_out(client):
    c = abc_campaign(training=0)
    start(client, c)
    html = client.get(url("training", c)).content.decode()
    assert "Training is not ready yet" in html
    client.post(url("training-begin", c))
    assert (
        not Qualification.objects.exists()
        and not Assignment.objects.filter(worker__isnull=False).exists()
    )


def test_training_pages_need_an_identified_worker_and_a_live_campaign(client):
    c = abc_campaign()
    assert client.get(url("training", c))["Location"] == url("start", c)
    start(client, c)
    c.status = "paused"
    c.save()
    assert "not accepting work" in client.get(url("training", c)).content.decode()
    assert client.post(url("training-begin", c)).status_code == 200
    assert not Qualification.objects.exists()


def test_begin_only_accepts_post(client):
    c = abc_campaign()
    start(client, c)
    assert client.get(url("training-begin", c)).status_code == 405


def test_training_page_queries_do_not_depend_on_campaign_size(client):
    def queries_for_first_item(training, n_task):
        c = abc_campaign(training=training, n_task=n_task)
        client.get(f"{url('start', c)}?worker=size-{training}")
        client.post(url("training-begin", c))
        first = c.items.filter(role="training").order_by("position").first()
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url("training-item", c, first)).status_code == 200
        return len(captured)

    assert queries_for_first_item(2, 1) == queries_for_first_item(6, 12)


@override_settings(EVALHUB_TRAINING_MAX_ATTEMPTS=2)
def test_training_attempts_are_limited_and_the_page_says_so(client):
    c = abc_campaign(training=9)
    w = worker("w1")
    train(c, w, 3, 3, 3)
    assert train(c, w, 3, 3, 3).attempts == 2
    begin_attempt(c, w)  # a third attempt is not opened
    q = Qualification.objects.get(worker=w)
    assert (q.attempts, q.passed) == (2, False)
    start(client, c)
    page = client.get(url("training", c)).content.decode()
    assert "You have used all 2 training attempts" in page
    assert "Start the training again" not in page
    client.post(url("training-begin", c))
    assert Qualification.objects.get(worker=w).attempts == 2


# Issue 23, finding 16: screening scores per-label recall and precision ----------------------


def test_ticking_nothing_does_not_qualify(client):
    c = abc_campaign(training=1)
    w = worker()
    nothing = {"labels": {name: [0, 0, 0] for name in CONSISTENCY_GOLD}}
    begin_attempt(c, w)
    record_training_answer(c, w, next_training_item(c, w), nothing)
    q = Qualification.objects.get(worker=w)
    assert (q.passed, q.last_mistakes) == (False, 1)  # 1 mistake: fewer than 3 no longer enough
    start(client, c)
    page = client.get(url("training", c)).content.decode()
    assert "You did not qualify this time" in page
    assert "Self contradiction: you ticked 0 of the 1 turn that shows it" in page


def test_ticking_where_gold_does_not_does_not_qualify():
    c = abc_campaign(training=1)
    q = train(c, worker(), 2)  # the contradiction found, and two false ticks
    assert (q.passed, q.last_mistakes) == (False, 2)


def test_the_screening_thresholds_come_from_the_config():
    c = abc_campaign(training=1, config={"screening_min_precision": 0.0})
    q = train(c, worker(), 2)
    assert (q.passed, q.last_mistakes) == (True, 2)


def test_a_campaign_requiring_training_without_training_items_cannot_launch():
    from annotation.campaigns import TransitionRefused, launch_campaign

    c = abc_campaign(training=0, status="draft")
    with pytest.raises(TransitionRefused, match="requires training but has no training items"):
        launch_campaign(c)
    c.refresh_from_db()
    assert c.status == "draft"


def test_a_campaign_requiring_training_with_training_items_launches():
    from annotation.campaigns import launch_campaign

    c = abc_campaign(training=1, status="draft")
    launch_campaign(c)
    c.refresh_from_db()
    assert c.status == "live"
