"""The Parquet writer: a row group at a time, types kept, nested values as JSON text."""

import io
import json
import tracemalloc

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalhub.hf import parquet


def rows(n: int, text_bytes: int = 1000):
    for i in range(n):
        yield {"id": i, "text": f"{i:08d}" + "x" * text_bytes, "score": i / 2, "ok": i % 2 == 0}


def test_rows_are_written_a_row_group_at_a_time(tmp_path):
    written = parquet.write(rows(2500), tmp_path / "t.parquet", row_group=1000)
    assert (written.rows, written.row_groups) == (2500, 3)
    metadata = pq.ParquetFile(tmp_path / "t.parquet").metadata
    sizes = [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]
    assert sizes == [1000, 1000, 500]


def test_memory_stays_bounded_by_a_row_group_not_the_table(tmp_path):
    # 40 MB of text through the writer; Python's peak must stay near one group's 1 MB.
    tracemalloc.start()
    try:
        written = parquet.write(rows(40_000), tmp_path / "t.parquet", row_group=1000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert written.rows == 40_000
    assert peak < 8_000_000, peak  # a fifth of the data; one group is ~1 MB
    # And none of Arrow's buffers (which tracemalloc does not see) outlive the write.
    assert pa.total_allocated_bytes() < 8_000_000


def test_scalars_keep_their_types_and_nested_values_become_json_text():
    sink = io.BytesIO()
    data = [
        {"n": 1, "x": 1, "t": "a", "b": True, "labels": {"s1": "bot"}, "empty": None},
        {"n": 2, "x": 2.5, "t": None, "b": False, "labels": ["a", 1], "empty": None},
    ]
    written = parquet.write(data, sink)
    table = pq.read_table(io.BytesIO(sink.getvalue()))
    assert [str(f.type) for f in table.schema] == [
        "int64",
        "double",
        "string",
        "bool",
        "string",
        "string",
    ]
    assert written.json_columns == ["labels", "empty"]
    assert [json.loads(v) for v in table["labels"].to_pylist()] == [{"s1": "bot"}, ["a", 1]]
    assert table["t"].to_pylist() == ["a", None]


def test_a_column_empty_in_the_first_group_holds_json_of_what_comes_later():
    sink = io.BytesIO()
    data = [{"n": None}, {"n": None}, {"n": 3}, {"n": "x"}]
    parquet.write(data, sink, row_group=2)
    column = pq.read_table(io.BytesIO(sink.getvalue()))["n"].to_pylist()
    assert column == [None, None, "3", '"x"']


def test_a_later_value_of_another_type_is_refused_with_its_row():
    data = [{"n": 1}, {"n": 2}, {"n": "three"}]
    with pytest.raises(parquet.ExportError, match="row 3: 'n' is 'three'; the column holds"):
        parquet.write(data, io.BytesIO(), row_group=2)


def test_a_later_field_the_first_rows_lack_is_refused_not_dropped():
    data = [{"n": 1}, {"n": 2, "extra": 1}]
    with pytest.raises(parquet.ExportError, match="row 2 has 'extra'"):
        parquet.write(data, io.BytesIO(), row_group=1)


def test_no_rows_and_no_schema_is_refused():
    with pytest.raises(parquet.ExportError, match="nothing to export yet"):
        parquet.write([], io.BytesIO())


def test_a_declared_schema_is_kept_even_without_rows():
    schema = pa.schema([("messages", pa.list_(pa.struct([("role", pa.string())])))])
    sink = io.BytesIO()
    assert parquet.write([], sink, schema=schema).rows == 0
    assert pq.read_table(io.BytesIO(sink.getvalue())).schema == schema
