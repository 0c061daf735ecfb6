"""`import_spotthebot`: a published study becomes a finished tournament, checked first,
written once, idempotent."""

import json
from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command

from annotation.kinds.spot_the_bot import analysis_rows
from annotation.models import Assignment, Batch, Campaign, Item, Judgment, Worker
from evalhub.models import Conversation, System
from tests import factories
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db

BETTER = {"fluency": 0, "sensibleness": None, "specificity": 1}


def conversation(cid, speakers, exchanges):
    return {
        "id": cid,
        "domain": "garden",
        "speakers": speakers,
        "turns": [{"speaker": p % 2, "text": f"{cid} line {p}"} for p in range(2 * exchanges)],
    }


CONVERSATIONS = [
    conversation("g-0", ["weedbot", "sprout"], 3),
    conversation("g-1", ["sprout", "mulch"], 3),
    conversation("g-h", ["human", "human"], 3),
    conversation("g-x", ["human", "human"], 2),  # never judged
]


def judgment(conversation, worker, batch, exchanges, labels=("bot", "human"), **extra):
    row = {
        "conversation": conversation,
        "worker": worker,
        "batch": batch,
        "exchanges": exchanges,
        "labels": list(labels),
        "better": dict(BETTER),
        "started_at_ms": 1589459205000,
        "duration_ms": 30000,
    }
    row.update(extra)
    return row


JUDGMENTS = [
    judgment("g-0", "w1", "B1", 2),
    judgment("g-h", "w1", "B1", 3, labels=("human", "human")),
    judgment("g-1", "w1", "B1", 1),
    judgment("g-0", "w2", "B1", 2, labels=("bot", "bot")),
    judgment("g-h", "w2", "B1", 3, labels=("human", "unsure")),
    judgment("g-1", "w2", "B1", 1),
    # w2 judged g-0 at 2 exchanges a second time in the same batch, as the real data has.
    judgment(
        "g-0",
        "w2",
        "B1",
        2,
        labels=("human", "bot"),
        better={"fluency": None, "sensibleness": 1, "specificity": None},
    ),
    judgment("g-0", "w1", "B2", 3),
    # The original tool did not record this start: duration_ms is then the end + 1.
    judgment("g-1", "w1", "B2", 2, started_at_ms=-1, duration_ms=1589459300001),
]


def write(path, rows, raw_lines=()):
    lines = [json.dumps(row) for row in rows] + list(raw_lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture
def files(tmp_path):
    return (
        write(tmp_path / "conversations.jsonl", CONVERSATIONS),
        write(tmp_path / "judgments.jsonl", JUDGMENTS),
    )


def run(*args, **options):
    call_command("import_spotthebot", *args, **options)


def counts():
    return {
        model.__name__: model.objects.count()
        for model in (
            Tournament,
            Campaign,
            Conversation,
            System,
            Batch,
            Item,
            Worker,
            Assignment,
            Judgment,
        )
    }


def test_a_study_becomes_a_finished_tournament(files, capsys):
    run(*files, name="Garden study", slug="garden-study")
    t = Tournament.objects.get(slug="garden-study")
    assert (t.kind, t.status, t.schedule, t.domain) == (
        "spot_the_bot",
        "finished",
        "imported",
        "garden",
    )
    assert sorted(t.systems.values_list("slug", flat=True)) == ["mulch", "sprout", "weedbot"]
    assert t.segment_lengths == [1, 2, 3]
    assert t.features == ["sensibleness", "specificity", "fluency"]
    campaign = t.campaign
    assert (campaign.status, campaign.task_kind) == ("finished", "spot_the_bot")
    assert campaign.launched_at == datetime(2020, 5, 14, 12, 26, 45, tzinfo=UTC)
    assert counts() == {
        "Tournament": 1,
        "Campaign": 1,
        "Conversation": 4,
        "System": 3,
        "Batch": 2,
        # B1: g-0@2, g-h@3, g-1@1 and the second copy of g-0@2; B2: g-0@3, g-1@2.
        "Item": 6,
        "Worker": 2,
        "Assignment": 3,
        "Judgment": 9,
    }
    out = capsys.readouterr().out
    assert "Created the tournament garden-study" in out and "Judgments: 9 created" in out
    # The study's bot-bot conversations are what the tournament includes; g-h is a control.
    included = set(t.included_conversations.values_list("external_id", flat=True))
    assert included and all(
        s.system_id for c in t.included_conversations.all() for s in c.speakers.all()
    )
    assert "g-h" not in included


def test_workers_assignments_and_payloads(files):
    run(*files, name="Garden study")
    assert set(Worker.objects.values_list("provider", "external_id")) == {
        ("imported", "w1"),
        ("imported", "w2"),
    }
    assignments = Assignment.objects.select_related("batch", "worker")
    assert {(a.provider_ref, a.worker.external_id, a.status) for a in assignments} == {
        ("B1", "w1", "submitted"),
        ("B1", "w2", "submitted"),
        ("B2", "w1", "submitted"),
    }
    assert {a.provider_ref: a.batch.position for a in assignments} == {"B1": 0, "B2": 1}
    first = Judgment.objects.get(
        worker__external_id="w1", item__group_key="g-0", item__segment_length=2
    )
    assert first.payload == {"labels": ["bot", "human"], "better": BETTER}
    assert first.client_duration_ms == 30000
    assert first.started_at == datetime.fromtimestamp(1589459205, tz=UTC)
    unrecorded = Judgment.objects.get(item__group_key="g-1", item__segment_length=2)
    assert unrecorded.started_at == datetime.fromtimestamp(1589459300, tz=UTC)
    assert unrecorded.client_duration_ms is None and unrecorded.seconds == 0


def test_items_are_built_by_the_kind_and_controls_carry_gold(files):
    run(*files, name="Garden study")
    item = Item.objects.get(group_key="g-1", segment_length=1)
    assert item.content["meta"] == {
        "conversation": "g-1",
        "speakers": ["sprout", "mulch"],
        "exchanges": 1,
    }
    assert [t["text"] for t in item.content["turns"]] == ["g-1 line 0", "g-1 line 1"]
    assert item.content["speakers"] == ["Speaker 1", "Speaker 2"]
    assert item.gold is None and item.role == "task"
    control = Item.objects.get(group_key="g-h")
    assert control.gold["labels"] == ["human", "human"] and control.role == "task"


def test_a_repeated_judgment_goes_to_a_copy_of_the_item(files):
    run(*files, name="Garden study")
    copies = Item.objects.filter(group_key="g-0", segment_length=2).order_by("position")
    assert [i.content["meta"].get("repeat") for i in copies] == [None, 1]
    assert copies[0].batch_id == copies[1].batch_id
    w2 = Judgment.objects.filter(worker__external_id="w2", item__in=copies).order_by(
        "item__position"
    )
    assert [j.payload["labels"] for j in w2] == [["bot", "bot"], ["human", "bot"]]


def test_analysis_reads_every_line(files):
    run(*files, name="Garden study")
    judgments = Judgment.objects.select_related("item")
    rows = analysis_rows(judgments)
    assert len(rows) == 2 * len(JUDGMENTS)
    human_rows = [r for r in rows if r.system == "human"]
    assert {r.label for r in human_rows} == {"human", "unsure"}


def test_a_second_import_adds_nothing(files, capsys):
    run(*files, name="Garden study")
    before = counts()
    capsys.readouterr()
    run(*files, name="Garden study")
    assert counts() == before
    assert "Nothing new for the tournament garden-study" in capsys.readouterr().out


def test_an_extended_file_adds_only_its_new_lines(files, tmp_path):
    run(*files, name="Garden study")
    extra = [
        judgment("g-h", "w3", "B2", 2, labels=("human", "human")),
        judgment("g-0", "w1", "B1", 2, labels=("unsure", "unsure")),  # w1's second g-0@2
    ]
    more = write(tmp_path / "more.jsonl", JUDGMENTS + extra)
    run(files[0], more, name="Garden study")
    assert Judgment.objects.count() == len(JUDGMENTS) + 2
    assert Batch.objects.count() == 2 and Worker.objects.count() == 3
    # g-h@2 is new in B2; w1's repeat reuses the copy w2's repeat made.
    assert Item.objects.count() == 7
    w3 = Assignment.objects.get(worker__external_id="w3")
    assert (w3.provider_ref, w3.batch.position) == ("B2", 1)
    new_item = Item.objects.get(group_key="g-h", segment_length=2)
    assert new_item.order_in_batch == 2


def test_problems_name_file_and_line_and_nothing_is_written(tmp_path, capsys):
    conversations = write(
        tmp_path / "conversations.jsonl",
        CONVERSATIONS + [conversation("g-3", ["a", "b", "c"], 2)],
    )
    bad = [
        judgment("g-0", "w1", "B1", 2),
        judgment("nope", "w1", "B1", 2),
        judgment("g-0", "w1", "B1", 4),
        judgment("g-0", "w1", "B1", 2, labels=("bot", "robot")),
        judgment("g-0", "w1", "B1", 2, better={"fluency": 0}),
        judgment("g-0", "w 1", "B1", 2, duration_ms=-5),
    ]
    judgments = write(tmp_path / "judgments.jsonl", bad, raw_lines=["{oops"])
    with pytest.raises(CommandError, match="Nothing imported: 8 problems"):
        run(conversations, judgments, name="Broken")
    err = capsys.readouterr().err
    for expected in (
        "conversations.jsonl line 5: conversation 'g-3' has 3 speakers",
        "judgments.jsonl line 2: unknown conversation 'nope'",
        "judgments.jsonl line 3: conversation 'g-0' has 3 exchanges, fewer than the 4 judged.",
        "judgments.jsonl line 4: 'labels' must be a list of human, bot, unsure",
        "judgments.jsonl line 5: 'better' rates fluency; line 1 rates fluency, sensibleness, specificity",
        "judgments.jsonl line 6: 'worker' must be an id without spaces",
        "judgments.jsonl line 6: 'duration_ms' must be a whole number",
        "judgments.jsonl line 7: not valid JSON",
    ):
        assert expected in err
    assert set(counts().values()) == {0}


def test_a_conversation_stored_differently_stops_everything(files, tmp_path, capsys):
    changed = dict(
        CONVERSATIONS[1], turns=[{"speaker": 0, "text": "other"}, {"speaker": 1, "text": "words"}]
    )
    path = write(tmp_path / "first.jsonl", [changed])
    call_command("import_conversations", path)
    before = counts()
    with pytest.raises(CommandError):
        run(*files, name="Garden study")
    assert (
        "conversations.jsonl line 2: conversation 'g-1' is already in the catalog"
        in capsys.readouterr().err
    )
    assert counts() == before


def test_a_slug_of_another_tournament_is_refused(files, capsys):
    Tournament.objects.create(slug="taken", name="Live one", kind="spot_the_bot")
    with pytest.raises(CommandError):
        run(*files, name="Garden study", slug="taken")
    assert "--slug: the tournament 'taken' exists and was not imported" in capsys.readouterr().err
    assert not Judgment.objects.exists()


def test_owner_and_publishing(files):
    factories.user("ada")
    run(*files, name="Garden study", user="ada", publish=True)
    t = Tournament.objects.get()
    assert t.owner.username == "ada" and t.published
    with pytest.raises(CommandError, match="No user named 'nobody'"):
        run(*files, name="Other", user="nobody")


def test_a_missing_file_is_reported(files, tmp_path):
    with pytest.raises(CommandError, match="Cannot read .*missing.jsonl"):
        run(files[0], str(tmp_path / "missing.jsonl"), name="Garden study")


def test_an_extension_must_rate_the_same_features(files, tmp_path, capsys):
    run(*files, name="Garden study")
    other = [judgment("g-0", "w9", "B9", 2, better={"fluency": 0})]
    path = write(tmp_path / "other.jsonl", other)
    with pytest.raises(CommandError):
        run(files[0], path, name="Garden study")
    assert "other.jsonl line 1: the tournament 'garden-study' rates" in capsys.readouterr().err
    assert not Worker.objects.filter(external_id="w9").exists()


def test_an_extension_with_a_new_length_updates_the_settings(files, tmp_path):
    short = [j for j in JUDGMENTS if j["exchanges"] < 3]
    run(files[0], write(tmp_path / "short.jsonl", short), name="Garden study")
    t = Tournament.objects.get()
    assert t.segment_lengths == [1, 2] and t.campaign.task_config["segment_lengths"] == [1, 2]
    run(*files, name="Garden study")
    t.refresh_from_db()
    assert t.segment_lengths == [1, 2, 3] and t.campaign.task_config["segment_lengths"] == [1, 2, 3]
    assert Judgment.objects.count() == len(JUDGMENTS)
