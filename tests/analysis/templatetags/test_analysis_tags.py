"""Template filters of the leaderboard pages: how numbers and p-values read."""

import math

import pytest

from analysis.templatetags.analysis_tags import p_is, pvalue, stat


@pytest.mark.parametrize(
    ("p", "shown"),
    [
        (0.0312, "0.0312"),
        (0.0001, "0.0001"),
        (0.00009999, "< 0.0001"),
        (3e-12, "< 0.0001"),
        (0.0, "< 0.0001"),
        (1.0, "1.0000"),
        (None, "–"),
        (math.nan, "–"),
    ],
)
def test_pvalue_never_shows_a_small_p_as_zero(p, shown):
    assert pvalue(p) == shown


def test_p_is_reads_inside_a_sentence():
    assert p_is(0.0123) == "p = 0.0123"
    assert p_is(1e-9) == "p < 0.0001"
    assert p_is(None) == "p = –"


def test_stat_is_unchanged_for_other_numbers():
    assert stat(0.123456, 3) == "0.123" and stat(None) == "–"
