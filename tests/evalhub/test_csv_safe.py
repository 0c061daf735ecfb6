"""Every CSV EvalHub writes neutralises formula cells (issue 23, finding 3)."""

import csv
import io
import re
from pathlib import Path

import pytest

from evalhub import csv_safe

ROOT = Path(__file__).resolve().parents[2]
APPS = ["evalhub", "annotation", "tournaments", "judging", "analysis", "demo", "evalstats"]


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_a_string_starting_a_formula_gets_a_leading_quote(start):
    assert csv_safe.neutralise(f"{start}1+1") == f"'{start}1+1"


@pytest.mark.parametrize("value", [-1.5, -2, 0, "plain", "a=b", "", None, True])
def test_numbers_and_plain_text_are_left_alone(value):
    assert csv_safe.neutralise(value) == value


def test_the_plain_writer_neutralises_every_cell():
    buffer = io.StringIO()
    csv_safe.writer(buffer).writerows([["@SUM(A1)", -3], ["ok", "-x"]])
    assert list(csv.reader(io.StringIO(buffer.getvalue()))) == [
        ["'@SUM(A1)", "-3"],
        ["ok", "'-x"],
    ]


def test_no_module_writes_csv_around_the_safe_writer():
    pattern = re.compile(r"csv\.(writer|DictWriter)\b")
    offenders = [
        str(path.relative_to(ROOT))
        for app in APPS
        if (ROOT / app).exists()
        for path in (ROOT / app).rglob("*.py")
        if path.name != "csv_safe.py" and pattern.search(path.read_text())
    ]
    assert offenders == []
