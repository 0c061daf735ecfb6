"""Exports: the kind's rows, as JSON lines and as CSV with nested values flattened."""

import csv
import io
import json
from datetime import timedelta

import pytest
from django.urls import reverse

from annotation import export
from annotation.models import Judgment
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
    assert rows == [c.kind.export_row(j) for j in judgments]
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
    assert rows == list(export.export_rows(c))


def test_csv_download_has_a_header_and_a_line_per_judgment(client):
    c = judged_campaign(2)
    response = staff_client(client).get(
        reverse("annotation:manage-campaign-export-csv", args=[c.slug])
    )
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    parsed = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert len(parsed) == 2
    assert json.loads(parsed[0]["payload"]) == {"choice": "a", "left": "a"}
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
