"""A small Parquet writer in the standard library, so writing a run's small tables needs neither
pyarrow nor numpy (importing the two costs more than a short simulation).

It writes one row group with one uncompressed data page (v1) per column, PLAIN values and RLE
definition levels, every column optional, as the Apache Parquet format specification lays out
(parquet-format `Encodings.md`, `parquet.thrift`, Thrift's compact protocol). The column types are
those :func:`ccscope.api._arrow_column` gives pyarrow, so a file reads back to the same table.
Large tables go through pyarrow (compressed); see :func:`ccscope.api.Result._write_tables`.
"""

from __future__ import annotations

import struct
from array import array
from pathlib import Path
from typing import Any, Mapping, Sequence, Union

# parquet.thrift: Type, ConvertedType, FieldRepetitionType, Encoding, CompressionCodec, PageType.
BOOLEAN, INT32, INT64, DOUBLE, BYTE_ARRAY = 0, 1, 2, 5, 6
_UTF8 = 0
_OPTIONAL = 1
_PLAIN, _RLE = 0, 3
_UNCOMPRESSED = 0
_DATA_PAGE = 0
# Thrift compact protocol field types.
_T_TRUE, _T_FALSE, _T_I32, _T_I64, _T_BINARY, _T_LIST, _T_STRUCT = 1, 2, 5, 6, 8, 9, 12


class Column:
    """One column: a Parquet physical type, its values (None: null) or, for a column without nulls of
    a fixed-width type, its little-endian bytes; ``logical`` is "string", "null" or None."""

    __slots__ = ("ptype", "values", "raw", "n", "logical")

    def __init__(self, ptype: int, n: int, values: Sequence[Any] = (), raw: bytes = b"", logical: Any = None):
        self.ptype, self.n, self.values, self.raw, self.logical = ptype, n, values, raw, logical


def column_of(values: Sequence[Any]) -> Column:
    """The column pyarrow would make of these Python values (as `api._arrow_column` builds it): None
    and NaN are nulls; text is UTF-8; all-bool is BOOLEAN; all-int without nulls is INT64; other
    numbers are DOUBLE; a column with no value at all is of the null type."""
    n = len(values)
    present = [v for v in values if v is not None and v == v]
    if not present:
        return Column(INT32, n, [None] * n, logical="null")
    vals = [v if v is not None and v == v else None for v in values]
    if all(isinstance(v, str) for v in present):
        return Column(BYTE_ARRAY, n, vals, logical="string")
    if all(isinstance(v, bool) for v in present):
        return Column(BOOLEAN, n, vals)
    if all(isinstance(v, int) for v in present) and len(present) == n:
        return Column(INT64, n, raw=array("q", vals).tobytes())
    return Column(DOUBLE, n, [None if v is None else float(v) for v in vals])


def doubles(raw: bytes) -> Column:
    """A DOUBLE column without nulls from little-endian float64 bytes."""
    return Column(DOUBLE, len(raw) // 8, raw=bytes(raw))


def int32s(values: Sequence[int]) -> Column:
    """An INT32 column without nulls."""
    return Column(INT32, len(values), raw=array("i", values).tobytes())


# --- Thrift compact protocol -------------------------------------------------------------------------


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _zigzag(n: int) -> bytes:
    return _varint((n << 1) ^ (n >> 63))


class _Struct:
    """Fields written in increasing id order, then the stop byte."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.last = 0

    def _head(self, fid: int, t: int) -> None:
        delta = fid - self.last
        if 0 < delta <= 15:
            self.buf.append((delta << 4) | t)
        else:
            self.buf.append(t)
            self.buf += _zigzag(fid)
        self.last = fid

    def i32(self, fid: int, v: int) -> "_Struct":
        self._head(fid, _T_I32)
        self.buf += _zigzag(v)
        return self

    def i64(self, fid: int, v: int) -> "_Struct":
        self._head(fid, _T_I64)
        self.buf += _zigzag(v)
        return self

    def binary(self, fid: int, v: bytes) -> "_Struct":
        self._head(fid, _T_BINARY)
        self.buf += _varint(len(v)) + v
        return self

    def struct(self, fid: int, s: "_Struct") -> "_Struct":
        self._head(fid, _T_STRUCT)
        self.buf += s.end()
        return self

    def lst(self, fid: int, t: int, items: Sequence[bytes]) -> "_Struct":
        """A list of `items`, each already encoded as an element of compact type `t`."""
        self._head(fid, _T_LIST)
        n = len(items)
        self.buf += bytes([(n << 4) | t]) if n < 15 else bytes([0xF0 | t]) + _varint(n)
        for it in items:
            self.buf += it
        return self

    def end(self) -> bytes:
        return bytes(self.buf) + b"\x00"


# --- pages -------------------------------------------------------------------------------------------


def _levels(col: Column) -> tuple[bytes, list]:
    """Definition levels (bit width 1, RLE/bit-packed hybrid, 4-byte length prefix) and the non-null
    values."""
    n = col.n
    if col.raw or all(v is not None for v in col.values):
        runs = _varint(n << 1) + b"\x01" if n else b""
        return struct.pack("<i", len(runs)) + runs, list(col.values)
    groups = (n + 7) // 8
    bits = bytearray(groups)
    for i, v in enumerate(col.values):
        if v is not None:
            bits[i >> 3] |= 1 << (i & 7)
    runs = _varint((groups << 1) | 1) + bytes(bits)
    return struct.pack("<i", len(runs)) + runs, [v for v in col.values if v is not None]


def _plain(col: Column, present: list) -> bytes:
    if col.raw:
        return col.raw
    if col.logical == "null":
        return b""
    if col.ptype == DOUBLE:
        return array("d", present).tobytes()
    if col.ptype == INT64:
        return array("q", present).tobytes()
    if col.ptype == INT32:
        return array("i", present).tobytes()
    if col.ptype == BOOLEAN:
        bits = bytearray((len(present) + 7) // 8)
        for i, v in enumerate(present):
            if v:
                bits[i >> 3] |= 1 << (i & 7)
        return bytes(bits)
    out = bytearray()
    for v in present:
        b = v.encode()
        out += struct.pack("<i", len(b)) + b
    return bytes(out)


def _schema_element(name: str, col: Column) -> bytes:
    s = _Struct().i32(1, col.ptype).i32(3, _OPTIONAL).binary(4, name.encode())
    if col.logical == "string":
        s.i32(6, _UTF8).struct(10, _Struct().struct(1, _Struct()))
    elif col.logical == "null":
        s.struct(10, _Struct().struct(11, _Struct()))
    return s.end()


def encode(columns: Mapping[str, Column], created_by: str = "ccscope") -> bytes:
    """The bytes of a Parquet file holding `columns` (all of one length) as one row group."""
    lengths = {c.n for c in columns.values()}
    if len(lengths) > 1:
        raise ValueError(f"columns of different lengths: {sorted(lengths)}")
    rows = lengths.pop() if lengths else 0
    body = bytearray(b"PAR1")
    chunks = []
    total = 0
    for name, col in columns.items():
        levels, present = _levels(col)
        page = levels + _plain(col, present)
        header = (
            _Struct()
            .i32(1, _DATA_PAGE)
            .i32(2, len(page))
            .i32(3, len(page))
            .struct(5, _Struct().i32(1, col.n).i32(2, _PLAIN).i32(3, _RLE).i32(4, _RLE))
            .end()
        )
        offset = len(body)
        body += header + page
        size = len(header) + len(page)
        total += size
        meta = (
            _Struct()
            .i32(1, col.ptype)
            .lst(2, _T_I32, [_zigzag(_PLAIN), _zigzag(_RLE)])
            .lst(3, _T_BINARY, [_varint(len(name.encode())) + name.encode()])
            .i32(4, _UNCOMPRESSED)
            .i64(5, col.n)
            .i64(6, size)
            .i64(7, size)
            .i64(9, offset)
        )
        chunks.append(_Struct().i64(2, offset).struct(3, meta).end())
    root = _Struct().binary(4, b"schema").i32(5, len(columns)).end()
    schema = [root] + [_schema_element(name, col) for name, col in columns.items()]
    row_group = _Struct().lst(1, _T_STRUCT, chunks).i64(2, total).i64(3, rows).end()
    footer = (
        _Struct()
        .i32(1, 1)
        .lst(2, _T_STRUCT, schema)
        .i64(3, rows)
        .lst(4, _T_STRUCT, [row_group])
        .binary(6, created_by.encode())
        .end()
    )
    body += footer + struct.pack("<i", len(footer)) + b"PAR1"
    return bytes(body)


def write(path: Union[str, Path], columns: Mapping[str, Column]) -> None:
    """Write `columns` as a Parquet file at `path`."""
    Path(path).write_bytes(encode(columns))

