"""Quality figures on small campaigns computed by hand, blocking, and the analysis switch."""

import random
from datetime import timedelta

import pytest
from django.contrib.admin.models import LogEntry
from django.utils import timezone

from annotation.allocation import NoWork, next_assignment
from annotation.items import add_items
from annotation.kinds.base import ItemSpec
from annotation.models import Assignment, Judgment, Worker
from annotation.quality import (
    Rate,
    agreement_rates,
    canonical_answer,
    judgments_for_analysis,
    set_blocked,
    sort_figures,
    worker_figures,
)
from annotation.services import submit_if_complete
from tests import factories
from tests.annotation.builders import ab_campaign, batch_items, campaign

pytestmark = pytest.mark.django_db

T0 = timezone.now() - timedelta(hours=1)


def worker(name: str) -> Worker:
    return Worker.objects.create(provider="local", external_id=f"link:{name}")


def judge(assignment, item, payload, *, ms=None, seconds=None, gold_correct=None):
    """A judgment as record_judgment stores it, with the timing chosen by the test."""
    judgment = Judgment.objects.create(
        assignment=assignment,
        item=item,
        worker_id=assignment.worker_id,
        campaign_id=assignment.campaign_id,
        payload=payload,
        started_at=T0,
        client_duration_ms=ms,
        gold_correct=gold_correct,
    )
    if seconds is not None:
        Judgment.objects.filter(pk=judgment.pk).update(submitted_at=T0 + timedelta(seconds=seconds))
    return judgment


def by_name(figures):
    return {f.worker.external_id.removeprefix("link:"): f for f in figures}


def test_canonical_answer_ignores_the_side_shown_and_key_order():
    assert canonical_answer({"choice": "a", "left": "a"}) == canonical_answer(
        {"left": "b", "choice": "a"}
    )
    assert canonical_answer({"choice": "a"}) != canonical_answer({"choice": "b"})
    stb = {"labels": ["human", "bot"], "better": {"fluency": 0, "sensibleness": None}}
    reordered = {"better": {"sensibleness": None, "fluency": 0}, "labels": ["human", "bot"]}
    assert canonical_answer(stb) == canonical_answer(reordered)
    assert canonical_answer(stb) != canonical_answer({**stb, "labels": ["bot", "human"]})


def test_agreement_is_with_the_majority_of_the_others():
    rows = [
        # Item 1: three say x, one says y.
        (1, 1, "x"),
        (2, 1, "x"),
        (3, 1, "x"),
        (4, 1, "y"),
        # Item 2: for workers 1 and 2 the others split (x, z): not counted; for worker 3
        # the others both say x, which worker 3 does not.
        (1, 2, "x"),
        (2, 2, "x"),
        (3, 2, "z"),
        # Item 3: judged once, nobody to agree with.
        (5, 3, "x"),
        # Item 4: two annotators, each the other's majority.
        (4, 4, "y"),
        (5, 4, "x"),
    ]
    rates = agreement_rates(rows)
    assert rates == {1: Rate(1, 1), 2: Rate(1, 1), 3: Rate(1, 2), 4: Rate(0, 2), 5: Rate(0, 1)}


def test_rate_value():
    assert Rate(3, 4).value == 0.75
    assert Rate().value is None


def ab_figures_campaign():
    """One batch [task, gold, task] judged by a, b, c, d; e took the fifth slot and stopped."""
    c = ab_campaign(2, gold=1, batch_size=2, redundancy=5)
    names = ["a", "b", "c", "d", "e"]
    assignments = {n: next_assignment(c, worker(n)) for n in names}
    task0, gold, task1 = batch_items(assignments["a"])
    assert gold.role == "gold"
    answers = {
        # name: (task0, task1, gold answer, gold correct)
        "a": ("a", "tie", "a", True),
        "b": ("a", "b", "a", True),
        "c": ("a", "b", "a", True),
        "d": ("b", "b", "b", False),
    }
    timing = {"a": {"ms": [1000, 3000, 2000]}, "b": {"seconds": [10, 10, 40]}}
    for name, (x0, x1, g, correct) in answers.items():
        a = assignments[name]
        ms = timing.get(name, {}).get("ms", [None] * 3)
        secs = timing.get(name, {}).get("seconds", [5, 5, 5])
        # "left" differs between workers on purpose: it is not part of the answer.
        judge(a, task0, {"choice": x0, "left": name}, ms=ms[0], seconds=secs[0])
        judge(a, gold, {"choice": g, "left": "a"}, ms=ms[1], seconds=secs[1], gold_correct=correct)
        judge(a, task1, {"choice": x1, "left": "b"}, ms=ms[2], seconds=secs[2])
        assert submit_if_complete(a, 3)
    return c


def test_figures_of_an_ab_campaign_computed_by_hand():
    figures = by_name(worker_figures(ab_figures_campaign()))
    assert set(figures) == {"a", "b", "c", "d", "e"}
    assert [figures[n].judgments for n in "abcde"] == [3, 3, 3, 3, 0]
    assert [figures[n].batches_submitted for n in "abcde"] == [1, 1, 1, 1, 0]
    assert [figures[n].gold for n in "abcde"] == [Rate(1, 1)] * 3 + [Rate(0, 1), Rate()]
    # task0: a, b, c say a, d says b: a, b, c agree, d does not.
    # task1: a says tie, b, c, d say b: a does not agree, b, c, d do.
    # The gold item is not a task: a's agreeing gold answer does not count.
    assert [figures[n].agreement for n in "abcd"] == [
        Rate(1, 2),
        Rate(2, 2),
        Rate(2, 2),
        Rate(1, 2),
    ]
    assert figures["e"].agreement == Rate()
    # Browser times for a (1, 3, 2 s); server times for b (10, 10, 40 s).
    assert figures["a"].median_seconds == 2.0
    assert figures["b"].median_seconds == 10.0
    assert figures["e"].median_seconds is None
    assert all(f.controls == Rate() for f in figures.values())


def stb_item(n, speakers, role="task"):
    return ItemSpec(
        content={
            "speakers": ["Speaker 1", "Speaker 2"],
            "turns": [{"speaker": 0, "text": f"hi {n}"}, {"speaker": 1, "text": f"hello {n}"}],
            "meta": {"conversation": f"conv-{n}", "speakers": speakers, "exchanges": 1},
        },
        group_key=f"conv-{n}",
        role=role,
        gold={"labels": speakers} if role == "gold" else None,
    )


def labels(*values):
    return {"labels": list(values), "better": {"fluency": None}}


def test_controls_count_human_labels_on_human_human_items():
    c = campaign("spot_the_bot", batch_size=3, redundancy=2)
    add_items(
        c,
        [
            stb_item(1, ["human", "human"]),
            stb_item(2, ["bot-x", "human"]),
            stb_item(3, ["human", "human"], role="gold"),
        ],
    )
    a, b = (next_assignment(c, worker(n)) for n in "ab")
    items = {i.content["meta"]["conversation"]: i for i in batch_items(a)}
    control, mixed, gold_control = items["conv-1"], items["conv-2"], items["conv-3"]
    judge(a, control, labels("human", "unsure"))
    judge(a, mixed, labels("bot", "bot"))
    judge(a, gold_control, labels("bot", "human"), gold_correct=False)
    judge(b, control, labels("human", "human"))
    judge(b, mixed, labels("human", "human"))
    judge(b, gold_control, labels("human", "human"), gold_correct=True)
    figures = by_name(worker_figures(c))
    # a: human + unsure on the control, bot + human on the gold control: 2 of 4.
    assert figures["a"].controls == Rate(2, 4)
    assert figures["b"].controls == Rate(4, 4)
    assert (figures["a"].gold, figures["b"].gold) == (Rate(0, 1), Rate(1, 1))
    # Two annotators: agreement is pairwise, per part of the answer of the two task items:
    # control: labels[0] human = human, labels[1] unsure != human, fluency None = None;
    # mixed: bot != human twice, fluency None = None.
    assert figures["a"].agreement == Rate(3, 6) == figures["b"].agreement


def test_figures_take_two_queries_whatever_the_campaign_size(django_assert_num_queries):
    small = ab_figures_campaign()
    large = ab_campaign(40, gold=2, batch_size=4, redundancy=3)
    for n in range(12):
        try:
            a = next_assignment(large, worker(f"many-{n}"))
        except NoWork:
            break
        for item in batch_items(a):
            judge(a, item, {"choice": "a", "left": "a"}, ms=1500)
    for c in (small, large):
        with django_assert_num_queries(2):
            figures = worker_figures(c)
        assert figures


def test_sorting_puts_workers_without_a_figure_last_both_ways():
    figures = worker_figures(ab_figures_campaign())
    ordered, applied = sort_figures(figures, "gold")
    assert applied == "gold"
    assert [f.worker.external_id for f in ordered] == [
        "link:d",
        "link:a",
        "link:b",
        "link:c",
        "link:e",
    ]
    ordered, _ = sort_figures(figures, "-gold")
    assert [f.worker.external_id for f in ordered][-2:] == ["link:d", "link:e"]
    ordered, _ = sort_figures(figures, "-seconds")
    assert ordered[0].worker.external_id == "link:b" and ordered[-1].worker.external_id == "link:e"
    ordered, applied = sort_figures(figures, "nonsense")
    assert applied == "-judgments" and ordered[-1].worker.external_id == "link:e"


def test_blocking_keeps_judgments_and_the_switch_leaves_them_out():
    c = ab_figures_campaign()
    staff = factories.user("boss", staff=True)
    d = Worker.objects.get(external_id="link:d")
    set_blocked(d, blocked=True, reason="  Failed the gold check. ", by=staff)
    d.refresh_from_db()
    assert (d.blocked, d.blocked_reason) == (True, "Failed the gold check.")
    assert Judgment.objects.filter(worker=d).count() == 3
    everything = judgments_for_analysis(c, exclude_blocked=False)
    kept = judgments_for_analysis(c, exclude_blocked=True)
    assert everything.count() == 12
    assert kept.count() == 9 and not kept.filter(worker=d).exists()
    entry = LogEntry.objects.get(object_id=str(d.pk))
    assert (entry.user, entry.change_message) == (staff, "Blocked: Failed the gold check.")
    set_blocked(d, blocked=False, reason="", by=staff)
    d.refresh_from_db()
    assert (d.blocked, d.blocked_reason) == (False, "")
    assert judgments_for_analysis(c, exclude_blocked=True).count() == 12
    assert LogEntry.objects.filter(object_id=str(d.pk)).count() == 2


def test_a_blocked_worker_gets_no_new_batch_anywhere():
    c = ab_campaign(4, batch_size=2)
    w = worker("w")
    set_blocked(w, blocked=True, reason="spam")
    with pytest.raises(NoWork, match="cannot take new work"):
        next_assignment(c, Worker.objects.get(pk=w.pk))
    assert not Assignment.objects.filter(worker=w).exists()


def test_judgments_for_analysis_is_per_campaign_and_loads_items(django_assert_num_queries):
    c = ab_figures_campaign()
    other = ab_campaign(2, batch_size=2, redundancy=1)
    a = next_assignment(other, worker("elsewhere"))
    judge(a, batch_items(a)[0], {"choice": "a", "left": "a"})
    with django_assert_num_queries(1):
        rows = list(judgments_for_analysis(c, exclude_blocked=False))
        assert {j.item.campaign_id for j in rows} == {c.pk}


FEATURES = ("sensibleness", "specificity", "fluency")


def test_careless_workers_are_told_apart_from_careful_ones():
    """Simulated Spot The Bot campaign: 16 bot-bot segments judged by 4 careful workers (each
    label and feature choice right with probability 0.8) and 2 careless ones (uniformly
    random). Compared part by part, every careful worker agrees with the others far more than
    every careless one (whole answers of 2 labels and 3 choices rarely match at all)."""
    rng = random.Random(8)
    n_items = 16
    c = campaign("spot_the_bot", batch_size=n_items, redundancy=6)
    add_items(c, [stb_item(n, ["bot-x", "bot-y"]) for n in range(n_items)])
    # The truth of each segment: who is spotted, and which speaker is better on a feature.
    truth = {}
    for n in range(n_items):
        truth[f"conv-{n}"] = (
            [rng.choice(["bot", "human"]) for _ in range(2)],
            {f: rng.choice([0, 1, None]) for f in FEATURES},
        )
    careful, careless = ["c1", "c2", "c3", "c4"], ["r1", "r2"]
    for name in careful + careless:
        assignment = next_assignment(c, worker(name))
        for item in batch_items(assignment):
            true_labels, true_better = truth[item.content["meta"]["conversation"]]
            if name in careful:
                answer_labels = [
                    x if rng.random() < 0.8 else rng.choice(["bot", "human", "unsure"])
                    for x in true_labels
                ]
                better = {
                    f: v if rng.random() < 0.8 else rng.choice([0, 1, None])
                    for f, v in true_better.items()
                }
            else:
                answer_labels = [rng.choice(["bot", "human", "unsure"]) for _ in range(2)]
                better = {f: rng.choice([0, 1, None]) for f in FEATURES}
            judge(assignment, item, {"labels": answer_labels, "better": better})
    figures = by_name(worker_figures(c))
    careful_rates = [figures[n].agreement.value for n in careful]
    careless_rates = [figures[n].agreement.value for n in careless]
    assert min(careful_rates) > max(careless_rates) + 0.2, (careful_rates, careless_rates)
    assert min(careful_rates) > 0.6
    assert all(figures[n].agreement.total >= 4 * n_items for n in careful + careless)
