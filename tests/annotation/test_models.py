"""The annotation tables' indexes: what every stored judgment has to update."""

import pytest
from django.db import connection

from annotation.models import Judgment

pytestmark = pytest.mark.django_db


def _index_columns(table: str) -> list[tuple[str, ...]]:
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    return [
        tuple(c["columns"])
        for c in constraints.values()
        if c["index"] or (c["unique"] and not c["primary_key"])
    ]


def test_no_judgment_index_is_the_leading_part_of_another():
    # An index whose columns lead another index serves no lookup the other does not,
    # and each costs every judgment an index insert.
    indexes = _index_columns(Judgment._meta.db_table)
    redundant = [
        (short, long)
        for short in indexes
        for long in indexes
        if short != long and long[: len(short)] == short
    ]
    assert indexes and redundant == []


def test_judgments_are_found_by_assignment_campaign_item_and_worker():
    leading = {columns[0] for columns in _index_columns(Judgment._meta.db_table)}
    assert {"assignment_id", "campaign_id", "item_id", "worker_id"} <= leading
