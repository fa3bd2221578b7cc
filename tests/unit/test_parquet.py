"""ccscope's own Parquet writer: what it writes reads back (pyarrow, pandas) as the table pyarrow writes."""

from array import array

import pandas as pd
import pyarrow.parquet as pq
import pytest

from ccscope import api, parquet

NAN = float("nan")
RAGGED = {
    "ints": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    "floats_with_gaps": [1.5, None, 3.0, NAN, 5, 6, 7, 8, 9, 10.25],
    "text": ["a", None, "ccc", "", "e", "f", "g", "h", "i", "jé"],
    "flags": [True, False, None, True, True, True, False, False, True, True],
    "nothing": [None] * 10,
    "ints_with_a_gap": [1, None, 3, 4, 5, 6, 7, 8, 9, 10],
    "big": [2**62, -(2**62), 0, 1, -1, 2, 3, 4, 5, 6],
}


def test_ragged_python_columns_read_back_as_pyarrow_writes_them(tmp_path):
    parquet.write(tmp_path / "mine.parquet", {k: parquet.column_of(v) for k, v in RAGGED.items()})
    pq.write_table(api._arrow_table(RAGGED), tmp_path / "pyarrow.parquet")
    mine, theirs = pq.read_table(tmp_path / "mine.parquet"), pq.read_table(tmp_path / "pyarrow.parquet")
    assert mine.schema.equals(theirs.schema, check_metadata=False)
    assert mine.equals(theirs)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "mine.parquet"), pd.read_parquet(tmp_path / "pyarrow.parquet"))


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 15, 16, 100_000])
def test_fixed_width_columns_of_any_length_read_back_exactly(tmp_path, n):
    xs = [i * 0.25 - 3 for i in range(n)]
    parquet.write(tmp_path / "t.parquet", {"x": parquet.doubles(array("d", xs).tobytes()),
                                           "flow": parquet.int32s([i - 1 for i in range(n)])})
    t = pq.read_table(tmp_path / "t.parquet")
    assert t.num_rows == n
    assert t.column("x").to_pylist() == xs
    assert t.column("flow").to_pylist() == [i - 1 for i in range(n)]
    assert str(t.schema.field("flow").type) == "int32"


def test_nulls_at_every_position_of_a_bit_packed_group_survive(tmp_path):
    for k in range(17):
        vals = [None if i == k else float(i) for i in range(17)]
        parquet.write(tmp_path / "t.parquet", {"x": parquet.column_of(vals)})
        assert pq.read_table(tmp_path / "t.parquet").column("x").to_pylist() == vals


def test_columns_of_different_lengths_are_refused():
    with pytest.raises(ValueError, match="different lengths"):
        parquet.encode({"a": parquet.column_of([1]), "b": parquet.column_of([1, 2])})
