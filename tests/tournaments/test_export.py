"""`export_tournament` writes the interchange format; importing the export gives the same
analysis inputs (the multiset of (conversation, worker, exchanges, labels, better))."""

import json
from collections import Counter
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotation.allocation import next_assignment
from annotation.crowd.base import Arrival
from annotation.entry import worker_for
from annotation.models import Judgment
from annotation.services import record_judgment, submit_if_complete
from evalhub.models import System
from evalhub.services import import_conversations
from tests import factories
from tournaments import spot_the_bot_campaign
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db

LABELS = [("bot", "bot"), ("human", "bot"), ("bot", "human"), ("unsure", "human")]


def conversation(cid, speakers, exchanges):
    return {
        "id": cid,
        "domain": "garden",
        "speakers": speakers,
        "turns": [{"speaker": p % 2, "text": f"{cid} line {p}"} for p in range(2 * exchanges)],
    }


@pytest.fixture
def judged_tournament():
    """A generated Spot The Bot campaign that three workers judged through the services."""
    for slug in ("weedbot", "sprout", "mulch"):
        factories.system(None, slug=slug)
    lines = [conversation(f"b-{i}", ["weedbot", "sprout"], 3) for i in range(3)]
    lines += [conversation(f"m-{i}", ["mulch", "weedbot"], 2) for i in range(2)]
    lines += [conversation(f"h-{i}", ["human", "human"], 3) for i in range(2)]
    data = "\n".join(json.dumps(line) for line in lines).encode()
    import_conversations(data=data, filename="c.jsonl")
    t = Tournament.objects.create(
        slug="garden-cup",
        name="Garden cup",
        kind="spot_the_bot",
        domain="garden",
        segment_lengths=[1, 2],
        human_share=0.2,
        batch_size=4,
        judgments_per_segment=2,
        max_batches_per_worker=5,
    )
    t.systems.set(System.objects.filter(slug__in=["weedbot", "sprout", "mulch"]))
    spot_the_bot_campaign.include_conversations(
        t, [line["id"] for line in lines if "human" not in line["speakers"]]
    )
    campaign = spot_the_bot_campaign.generate_campaign(t).campaign
    campaign.status = "live"
    campaign.save()
    started = timezone.now() - timedelta(minutes=5)
    for n, worker_id in enumerate(["p1", "p2", "p3"]):
        worker = worker_for(Arrival("local", f"link:{worker_id}"))
        for _ in range(2):
            assignment = next_assignment(campaign, worker)
            items = list(assignment.batch.items.order_by("order_in_batch"))
            for i, item in enumerate(items):
                labels = LABELS[(n + i) % len(LABELS)]
                better = {"sensibleness": i % 2, "specificity": None, "fluency": 1 - i % 2}
                payload = {"labels": list(labels), "better": better}
                record_judgment(
                    assignment, item, payload, started_at=started, client_duration_ms=1000 + i
                )
            submit_if_complete(assignment, len(items))
    t.refresh_from_db()
    return t


def rows(tournament, worker_id):
    """The analysis inputs of a tournament, workers named by `worker_id(worker)`."""
    judgments = Judgment.objects.filter(campaign=tournament.campaign, item__role="task")
    return Counter(
        (
            j.item.content["meta"]["conversation"],
            worker_id(j.worker),
            j.item.content["meta"]["exchanges"],
            tuple(j.payload["labels"]),
            json.dumps(j.payload["better"], sort_keys=True),
        )
        for j in judgments.select_related("item", "worker")
    )


def read_lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_export_writes_the_interchange_format(judged_tournament, tmp_path):
    call_command("export_tournament", "garden-cup", str(tmp_path / "out"))
    out = tmp_path / "out"
    conversations = read_lines(out / "conversations.jsonl")
    ids = {c["id"] for c in conversations}
    used = set(judged_tournament.campaign.items.values_list("group_key", flat=True))
    assert ids == used and any(i.startswith("h-") for i in ids)
    first = next(c for c in conversations if c["id"] == "b-0")
    assert first["speakers"] == ["weedbot", "sprout"] and first["domain"] == "garden"
    assert first["turns"][1] == {"speaker": 1, "text": "b-0 line 1"}
    judgments = read_lines(out / "judgments.jsonl")
    assert len(judgments) == Judgment.objects.count() > 0
    assert set(judgments[0]) == {
        "conversation",
        "worker",
        "batch",
        "exchanges",
        "labels",
        "better",
        "started_at_ms",
        "duration_ms",
    }
    # Opaque worker ids: never the participant ids the crowd platform knows people by.
    assert not any(
        j["worker"].startswith("link:") or j["worker"] in {"p1", "p2", "p3"} for j in judgments
    )
    info = json.loads((out / "tournament.json").read_text())
    assert info["slug"] == "garden-cup" and info["segment_lengths"] == [1, 2]
    assert info["campaign"]["task_kind"] == "spot_the_bot"
    assert info["counts"] == {"conversations": len(ids), "judgments": len(judgments), "systems": 3}
    systems = json.loads((out / "systems.json").read_text())
    assert [s["slug"] for s in systems] == ["mulch", "sprout", "weedbot"]


def test_round_trip_gives_identical_analysis_inputs(judged_tournament, tmp_path):
    out = tmp_path / "out"
    call_command("export_tournament", "garden-cup", str(out))
    call_command(
        "import_spotthebot",
        str(out / "conversations.jsonl"),
        str(out / "judgments.jsonl"),
        name="Garden cup, again",
        slug="garden-cup-again",
    )
    again = Tournament.objects.get(slug="garden-cup-again")
    original = rows(judged_tournament, lambda w: str(w.public_id))
    imported = rows(again, lambda w: w.external_id)
    assert (
        sum(original.values())
        == Judgment.objects.filter(campaign=judged_tournament.campaign).count()
    )
    assert imported == original


def test_an_imported_study_round_trips_with_its_repeats(tmp_path):
    conversations = [
        conversation("g-0", ["weedbot", "sprout"], 2),
        conversation("g-h", ["human", "human"], 2),
    ]
    better = {"sensibleness": 0, "specificity": None, "fluency": 1}

    def line(c, worker, labels):
        return {
            "conversation": c,
            "worker": worker,
            "batch": "B1",
            "exchanges": 2,
            "labels": labels,
            "better": better,
            "started_at_ms": 1589459205000,
            "duration_ms": 1000,
        }

    judgments = [
        line("g-0", "w1", ["bot", "bot"]),
        line("g-0", "w1", ["bot", "human"]),  # the same worker again
        line("g-h", "w1", ["human", "human"]),
    ]
    for name, rows_ in (("c.jsonl", conversations), ("j.jsonl", judgments)):
        (tmp_path / name).write_text("\n".join(json.dumps(r) for r in rows_) + "\n")
    call_command(
        "import_spotthebot", str(tmp_path / "c.jsonl"), str(tmp_path / "j.jsonl"), name="Study"
    )
    call_command("export_tournament", "study", str(tmp_path / "out"))
    out = tmp_path / "out"
    call_command(
        "import_spotthebot",
        str(out / "conversations.jsonl"),
        str(out / "judgments.jsonl"),
        name="Study 2",
    )
    first, second = Tournament.objects.get(slug="study"), Tournament.objects.get(slug="study-2")
    assert rows(second, lambda w: w.external_id) == rows(first, lambda w: str(w.public_id))
    assert sum(rows(second, str).values()) == 3


def test_an_ab_tournament_exports_its_judgments_and_no_conversations(tmp_path):
    prompts = factories.prompt_set(2, slug="two")
    mine = factories.system(factories.user(), slug="mine")
    base = factories.system(None, slug="base", is_baseline=True)
    ours = factories.submission(mine, prompts, ["a1", "a2"])
    factories.submission(base, prompts, ["b1", "b2"])
    t = Tournament.objects.create(
        slug="ab-cup", name="AB", kind="ab", prompt_set=prompts, submission=ours
    )
    t.baselines.set([base])
    call_command("export_tournament", "ab-cup", str(tmp_path))
    assert (tmp_path / "conversations.jsonl").read_text() == ""
    assert (tmp_path / "judgments.jsonl").read_text() == ""
    info = json.loads((tmp_path / "tournament.json").read_text())
    assert info["kind"] == "ab" and info["baselines"] == ["base"] and info["prompt_set"] == "two"
    assert {s["slug"] for s in json.loads((tmp_path / "systems.json").read_text())} == {"base"}


def test_an_unknown_tournament_is_an_error(tmp_path):
    with pytest.raises(CommandError, match="No tournament with the slug 'nope'"):
        call_command("export_tournament", "nope", str(tmp_path))


@pytest.mark.django_db
def test_a_collected_conversation_exports_its_seed_and_imports_back_the_same():
    from evalhub.models import Conversation
    from tournaments.exporters import conversation_line

    a, b = factories.system(None, slug="seed-a"), factories.system(None, slug="seed-b")
    c = factories.conversation("cup/a--b--0", [a, b], ["bot says", "bot answers"])
    c.seed_turns = [{"speaker": 0, "text": "human hi"}, {"speaker": 1, "text": "human hello"}]
    c.save()
    line = conversation_line(
        Conversation.objects.prefetch_related("speakers__system", "turns").get()
    )
    assert line["seed"] == c.seed_turns
    assert [t["text"] for t in line["turns"]] == ["bot says", "bot answers"]
    # Importing the export again is recognised as the same conversation, seed included.
    data = json.dumps(line).encode()
    assert import_conversations(data=data, filename="c.jsonl").created == 0
    Conversation.objects.all().delete()
    import_conversations(data=data, filename="c.jsonl")
    assert Conversation.objects.get().seed_turns == line["seed"]
