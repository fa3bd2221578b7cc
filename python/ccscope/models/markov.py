"""The (delay, window) discrete-time Markov chain of paper 000 (model-driven congestion control).

States are S_kl = (d_k, w_l) (§3.1 Eq. 2); the chain is trained by counting transitions between
consecutive samples of each user and normalising every row to 1 (§4.1, Eq. 5); the delay range is
reduced by truncation at a percentile and quantization into 1/2/5/10/20 ms intervals (§4.2); the
matrix size is m = n_d * n_w (Eq. 6, Table 2). The matrix is only ever held as scipy CSR.

The ``.ccm`` file format (read by the Rust side too) is specified in docs/markov.md.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Union

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ccscope import _native
from ccscope._native import ScenarioError
from ccscope.arguments import NamedArgument
from ccscope.models import verus_testbed as testbed

MAGIC = b"CCSCOPEM"
VERSION = 2
META_KEYS = (
    "quantize_ms",
    "truncate_percentile",
    "d_min_ms",
    "d_max_ms",
    "w_min",
    "w_max",
    "n_d",
    "n_w",
    "samples",
    "transitions",
    "sources",
    "created_by",
)
SAMPLE_COLUMNS = {"user": "i", "t_ms": "if", "d_ms": "i", "w": "i"}
# Paper 000 §6.4: its Verus ran with "the R parameter of 2" (the reference's default at the time).
PAPER_R = 2.0
# Paper 000 §6.2 (Fig. 5a): the samples' delay starts at 20 ms, so the base RTT is 20 ms: 10 ms each way.
ONE_WAY_DELAY_MS = 10
# Paper 000 §6.1: the traffic shaper replays the channel trace on the data direction; ACKs return
# over an uncongested path. "paired" sends them over the trace's opposite direction instead.
ACK_MODES = ("uncongested", "paired")
# Paper 000 §4.1: "epoch" (the largest delay and the packets sent per 5 ms epoch, what the controller
# steps on; the default) or "packet" (each ACK's delay and the window its packet was sent with).
RECORD_MODES = ("epoch", "packet")
ROW_SUM_TOL = 1e-9  # the Rust reader's bound too
MAX_STATES = 1 << 28  # the Rust reader refuses larger grids
FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
_HEAD = struct.Struct("<8sII")  # magic, version, meta_len
_SIZES = struct.Struct("<QQQ")  # n_states, n_rows (non-empty), nnz

PathLike = Union[str, os.PathLike]


# --------------------------------------------------------------------------- checksum


def fnv1a64(data: Union[bytes, bytearray, memoryview], pure: bool = False) -> int:
    """FNV-1a 64-bit (offset basis 0xcbf29ce484222325, prime 0x100000001b3), in Rust unless `pure`."""
    if not pure:
        return int(_native.fnv1a64(bytes(data)))
    h, mask = FNV_OFFSET, 0xFFFFFFFFFFFFFFFF
    for b in bytes(data):
        h = ((h ^ b) * FNV_PRIME) & mask
    return h

def _check_frame(df: pd.DataFrame, name: str) -> pd.DataFrame:
    for col, kinds in SAMPLE_COLUMNS.items():
        if col not in df.columns:
            raise ScenarioError(f"{name}: missing column `{col}` (need user, t_ms, d_ms, w)")
        dt = df[col].dtype
        if dt.kind not in kinds:
            want = "integer" if kinds == "i" else "number"
            raise ScenarioError(f"{name}: column `{col}`: expected {want}, found {dt}")
        if dt.kind == "f" and df[col].isna().any():
            raise ScenarioError(f"{name}: column `{col}`: contains NaN")
    if len(df) and (df["d_ms"] < 0).any():
        raise ScenarioError(f"{name}: column `d_ms`: negative delay")
    if len(df) and (df["w"] < 0).any():
        raise ScenarioError(f"{name}: column `w`: negative window")
    return df


def is_model_file(path: PathLike) -> bool:
    """True when `path` is a file that starts as a .ccm model does (what `markov train` may replace)."""
    try:
        with open(path, "rb") as f:
            return f.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def is_samples_file(path: PathLike) -> bool:
    """True when `path` is a Parquet file with the sample columns (what `markov collect` may replace)."""
    import pyarrow.parquet as pq

    try:
        names = set(pq.read_schema(path).names)
    except Exception:  # noqa: BLE001 - any unreadable file is not a sample file
        return False
    return set(SAMPLE_COLUMNS) <= names


class MarkovArgumentError(NamedArgument, ScenarioError):
    """A bad argument of this module's functions, naming it (``zoom_interval=40: ...``); ``ccscope markov``
    words it with its options (:data:`CLI_OPTIONS`)."""


# How `ccscope markov` names the arguments of the functions it calls (their errors name the arguments).
CLI_OPTIONS = {"zoom_interval": "--zoom", "out_png": "--heatmap", "path": "-o"}
# The formats a heatmap may be written in (by the file name's suffix).
HEATMAP_FORMATS = ("png", "svg", "pdf")


# The destinations of the files this module writes. One rule for the API and `ccscope markov`: a missing file
# is written, an existing one is replaced only when ccscope wrote it (a .ccm model by its magic bytes, a sample
# file by its columns, a figure by ccscope's mark); anything else is refused (store.OutputError naming
# `option`: the function's argument, or the command's option) and left as it is.


def check_model_destination(path: PathLike, option: str = "path") -> Path:
    """Refuse a .ccm destination that is a folder, cannot be written, or is a file that is not a .ccm model."""
    from ccscope import store

    return store.check_file_destination(path, option, ours=is_model_file, what="a .ccm model")


def check_samples_destination(path: PathLike, option: str = "path") -> Path:
    """Refuse a sample-file destination that is a folder, cannot be written, or is not a sample file."""
    from ccscope import store

    return store.check_file_destination(path, option, ours=is_samples_file, what="a sample file")


def check_heatmap_destination(path: PathLike, option: str = "out_png") -> Path:
    """Refuse a heatmap destination whose suffix is not a figure format, or that is a folder, cannot be written,
    or is a file that does not bear ccscope's figure mark."""
    from ccscope import store
    from ccscope.analysis.figures import is_marked_figure

    path = Path(path)
    if path.suffix.lower().lstrip(".") not in HEATMAP_FORMATS:
        raise store.OutputError.naming(option, f"give a file name ending in one of {', '.join(HEATMAP_FORMATS)}",
                                       value=path, path=True)
    return store.check_file_destination(path, option, ours=is_marked_figure, what="a figure")


def load_samples(paths: Union[PathLike, Sequence[PathLike]]) -> pd.DataFrame:
    """Read and validate Parquet sample files; adds a `source` column (file index) so that
    transitions never cross files. ``df.attrs["sources"]`` holds one dict per file."""
    import pyarrow.parquet as pq

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    frames, sources = [], []
    for i, p in enumerate(paths):
        p = Path(p)
        if not p.is_file():
            raise ScenarioError(f"{p}: no such sample file")
        try:
            table = pq.read_table(p)
        except Exception as e:
            raise ScenarioError(f"{p}: not a readable Parquet file ({str(e).splitlines()[0]})") from None
        df = _check_frame(table.to_pandas(), str(p))
        src: Dict[str, Any] = {"file": p.name}
        meta = table.schema.metadata or {}
        for key in ("trace", "users", "seed", "r", "record"):
            raw = meta.get(key.encode())
            if raw is not None:
                val = raw.decode("utf-8", "replace")
                try:
                    src[key] = int(val) if val.lstrip("-").isdigit() else (float(val) if key == "r" else val)
                except ValueError:
                    src[key] = val
        sources.append(src)
        frames.append(df[list(SAMPLE_COLUMNS)].assign(source=i))
    if not frames:
        raise ScenarioError("no sample files given")
    out = pd.concat(frames, ignore_index=True)
    out.attrs["sources"] = sources
    return out


# --------------------------------------------------------------------------- model


@dataclass
class MarkovModel:
    """A row-stochastic CSR matrix over the grid of (delay interval, w) states plus its metadata."""

    P: sp.csr_matrix
    meta: Dict[str, Any] = field(default_factory=dict)
    path: Optional[Path] = None

    @property
    def n_d(self) -> int:
        return int(self.meta["n_d"])

    @property
    def n_w(self) -> int:
        return int(self.meta["n_w"])

    @property
    def m(self) -> int:
        return self.n_d * self.n_w

    def state(self, d_ms: int, w: int) -> int:
        """State index of a (d, w) pair: d_bin * n_w + (w - w_min)."""
        q, d0 = self.meta["quantize_ms"], self.meta["d_min_ms"]
        return (int(d_ms) - d0) // q * self.n_w + (int(w) - self.meta["w_min"])

    def interval(self, d_bin: int) -> tuple:
        """[lo, hi) delay interval in ms of a delay bin."""
        q, d0 = self.meta["quantize_ms"], self.meta["d_min_ms"]
        return (d0 + d_bin * q, d0 + (d_bin + 1) * q)

    def to_bytes(self) -> bytes:
        meta = json.dumps({k: self.meta[k] for k in META_KEYS}, sort_keys=True, separators=(",", ":"))
        mb = meta.encode("utf-8")
        P = self.P
        rows = np.flatnonzero(np.diff(P.indptr) > 0)  # only the rows the chain left are stored
        body = b"".join(
            [
                _HEAD.pack(MAGIC, VERSION, len(mb)),
                mb,
                _SIZES.pack(self.m, len(rows), P.nnz),
                np.ascontiguousarray(rows, dtype="<u4").tobytes(),
                np.ascontiguousarray(np.append(P.indptr[rows], P.nnz), dtype="<u8").tobytes(),
                np.ascontiguousarray(P.indices, dtype="<u4").tobytes(),
                np.ascontiguousarray(P.data, dtype="<f8").tobytes(),
            ]
        )
        return body + struct.pack("<Q", fnv1a64(body))

    def save(self, path: PathLike) -> Path:
        """Write the .ccm file atomically (:func:`ccscope.store.write_bytes`). An existing file is replaced only
        when it is a .ccm model; any other is refused (:func:`check_model_destination`) and left as it is."""
        from ccscope import store

        path = check_model_destination(path)
        store.write_bytes(path, self.to_bytes())
        self.path = path
        return path

    @classmethod
    def load(cls, path: PathLike) -> "MarkovModel":
        path = Path(path)
        name = str(path)
        try:
            buf = path.read_bytes()
        except FileNotFoundError:
            raise ScenarioError(f"{name}: no such model file") from None
        except IsADirectoryError:
            raise ScenarioError(f"{name}: is a directory, not a model file") from None
        model = cls.from_bytes(buf, name)
        model.path = path
        return model

    @classmethod
    def from_bytes(cls, buf: bytes, name: str = "<model>") -> "MarkovModel":
        def bad(msg: str) -> ScenarioError:
            return ScenarioError(f"{name}: {msg}")

        if len(buf) < _HEAD.size:
            raise bad(f"truncated: expected at least {_HEAD.size} header bytes, found {len(buf)}")
        magic, version, meta_len = _HEAD.unpack_from(buf, 0)
        if magic != MAGIC:
            raise bad(f"bad magic {magic!r} (not a ccscope .ccm model; expected {MAGIC!r})")
        if version != VERSION:
            raise bad(f"unsupported version {version} (this reader knows version {VERSION})")
        off = _HEAD.size
        if len(buf) < off + meta_len + _SIZES.size:
            raise bad(f"truncated: expected {meta_len} bytes of metadata and {_SIZES.size} bytes of sizes, found {len(buf) - off}")
        try:
            meta = json.loads(buf[off : off + meta_len].decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise bad(f"metadata is not UTF-8 JSON ({e})") from None
        if not isinstance(meta, dict):
            raise bad("metadata is not a JSON object")
        missing = [k for k in META_KEYS if k not in meta]
        if missing:
            raise bad(f"metadata lacks key(s) {', '.join(missing)}")
        ints = ("w_min", "w_max", "n_d", "n_w")
        if any(not isinstance(meta[k], int) or isinstance(meta[k], bool) or meta[k] < 0 for k in ints):
            raise bad(f"metadata {', '.join(ints)} must be non-negative integers")
        if not (isinstance(meta["quantize_ms"], (int, float)) and meta["quantize_ms"] > 0):
            raise bad("metadata quantize_ms must be > 0")
        if meta["w_max"] < meta["w_min"] or meta["n_w"] != meta["w_max"] - meta["w_min"] + 1 or meta["n_d"] < 1:
            raise bad("metadata needs n_d >= 1 and n_w = w_max - w_min + 1")
        if meta["n_d"] * meta["n_w"] > MAX_STATES:
            raise bad(f"too many states: n_d * n_w = {meta['n_d'] * meta['n_w']} > {MAX_STATES}")
        off += meta_len
        n_states, n_rows, nnz = _SIZES.unpack_from(buf, off)
        off += _SIZES.size
        if n_states != meta["n_d"] * meta["n_w"]:
            raise bad(f"n_states {n_states} != n_d * n_w = {meta['n_d']} * {meta['n_w']}")
        if n_rows > n_states:
            raise bad(f"n_rows {n_rows} > n_states {n_states}")
        csr_len = 12 * n_rows + 8 + 12 * nnz
        have = len(buf) - off - 8
        if have < csr_len:
            raise bad(f"truncated: expected {csr_len} bytes of CSR data, found {max(have, 0)}")
        if have > csr_len:
            raise bad(f"{have - csr_len} trailing bytes after CSR data")
        (stored,) = struct.unpack_from("<Q", buf, len(buf) - 8)
        if fnv1a64(memoryview(buf)[: len(buf) - 8]) != stored:
            raise bad("checksum mismatch (file corrupt)")
        row_ids = np.frombuffer(buf, dtype="<u4", count=n_rows, offset=off).astype(np.int64)
        off += 4 * n_rows
        row_ptr = np.frombuffer(buf, dtype="<u8", count=n_rows + 1, offset=off).astype(np.int64)
        off += 8 * (n_rows + 1)
        if row_ptr[0] != 0 or row_ptr[-1] != nnz:
            raise bad(f"row pointers must run from 0 to nnz={nnz}, run from {row_ptr[0]} to {row_ptr[-1]}")
        if np.any(np.diff(row_ptr) <= 0):
            raise bad("row pointers not increasing (a stored row is empty)")
        if n_rows and (np.any(np.diff(row_ids) <= 0) or row_ids[-1] >= n_states):
            raise bad(f"row indices not increasing or not below n_states={n_states}")
        indptr = np.zeros(n_states + 1, dtype=np.int64)
        indptr[row_ids + 1] = np.diff(row_ptr)
        indptr = np.cumsum(indptr)
        indices = np.frombuffer(buf, dtype="<u4", count=nnz, offset=off)
        off += 4 * nnz
        data = np.frombuffer(buf, dtype="<f8", count=nnz, offset=off)
        if nnz and int(indices.max()) >= n_states:
            raise bad(f"column index {int(indices.max())} out of range (n_states={n_states})")
        if nnz > 1:
            step = np.diff(indices.astype(np.int64))
            row_start = np.zeros(nnz, dtype=bool)
            row_start[indptr[:-1][indptr[:-1] < nnz].astype(np.int64)] = True
            if np.any((step <= 0) & ~row_start[1:]):
                raise bad("column indices not strictly increasing within a row")
        if nnz and (not np.all(np.isfinite(data)) or np.any(data <= 0) or np.any(data > 1)):
            raise bad("probabilities must be finite and in (0, 1]")
        rows = np.flatnonzero(np.diff(indptr.astype(np.int64)) > 0)
        if len(rows):
            sums = np.add.reduceat(data, indptr[rows].astype(np.int64))
            worst = int(np.argmax(np.abs(sums - 1.0)))
            if abs(sums[worst] - 1.0) > ROW_SUM_TOL:
                raise bad(f"row {int(rows[worst])} sums to {sums[worst]!r}, not 1 (Eq. 5)")
        P = sp.csr_matrix(
            (data.astype(np.float64), indices.astype(np.int32), indptr.astype(np.int64)),
            shape=(n_states, n_states),
        )
        return cls(P=P, meta=meta)

    def file_size(self) -> int:
        meta = json.dumps({k: self.meta[k] for k in META_KEYS}, sort_keys=True, separators=(",", ":"))
        n_rows = int(np.count_nonzero(np.diff(self.P.indptr) > 0))
        return _HEAD.size + len(meta.encode()) + _SIZES.size + 12 * n_rows + 8 + 12 * self.P.nnz + 8


# --------------------------------------------------------------------------- training


def _as_samples(samples: Any) -> pd.DataFrame:
    if isinstance(samples, pd.DataFrame):
        df = _check_frame(samples, "<samples>")
        if "source" not in df.columns:
            df = df.assign(source=0)
        return df
    return load_samples(samples)


def _in_walk_order(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(source, user, d_ms, w) with each user's samples consecutive and in time order (§4.1: a
    transition joins consecutive samples of one user within one source file); stable for ties."""
    src = df["source"].to_numpy(np.int64)
    user = df["user"].to_numpy(np.int64)
    order = np.lexsort((df["t_ms"].to_numpy(np.float64), user, src))
    return src[order], user[order], df["d_ms"].to_numpy(np.int64)[order], df["w"].to_numpy(np.int64)[order]


def train(samples: Any, quantize_ms: int = 2, truncate: Optional[float] = 99.9) -> MarkovModel:
    """Count (d, w) -> (d', w') transitions between consecutive samples of each user and normalise rows.

    Truncation (§4.2): samples with d above the `truncate` percentile of all d are *removed*; a
    transition into or out of a removed sample is dropped (not bridged). `truncate=None` or 100 keeps all.
    Quantization (§4.2): d_bin = (d - d_min) // quantize_ms, d_min the smallest kept delay.
    State space (Eq. 1, 6): the full grid of n_d delay intervals x all w in w_min..w_max.
    Rows of states never left are all-zero (no self-loop is invented).
    """
    if int(quantize_ms) != quantize_ms or quantize_ms < 1:
        raise ScenarioError(f"quantize_ms: expected a positive integer, got {quantize_ms!r}")
    quantize_ms = int(quantize_ms)
    if truncate is not None and not (0 < truncate <= 100):
        raise ScenarioError(f"truncate: expected a percentile in (0, 100], got {truncate!r}")
    df = _as_samples(samples)
    if len(df) == 0:
        raise ScenarioError("no samples to train on")
    src, user, d, w = _in_walk_order(df)
    keep = np.ones(len(d), dtype=bool)
    if truncate is not None and truncate < 100:
        keep = d <= np.percentile(d, truncate)  # §4.2 truncating: outliers removed
    dk, wk = d[keep], w[keep]
    d_min, d_max = int(dk.min()), int(dk.max())
    w_min, w_max = int(wk.min()), int(wk.max())
    n_d = (d_max - d_min) // quantize_ms + 1
    n_w = w_max - w_min + 1
    m = n_d * n_w
    if m > MAX_STATES:
        raise ScenarioError(f"state space too large: m = n_d * n_w = {n_d} * {n_w} = {m} exceeds {MAX_STATES} "
                            "(quantize more coarsely or truncate the delays)")
    state = (np.maximum(d - d_min, 0) // quantize_ms) * n_w + (w - w_min)
    same = (src[1:] == src[:-1]) & (user[1:] == user[:-1]) & keep[1:] & keep[:-1]
    rows, cols = state[:-1][same], state[1:][same]
    counts = sp.coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(m, m)).tocsr()  # duplicates summed
    counts.sum_duplicates()
    counts.sort_indices()
    row_tot = np.diff(counts.indptr)
    sums = np.add.reduceat(counts.data, counts.indptr[:-1][row_tot > 0]) if counts.nnz else np.zeros(0)
    denom = np.repeat(sums, row_tot[row_tot > 0])
    P = sp.csr_matrix((counts.data / denom, counts.indices, counts.indptr), shape=(m, m))  # Eq. 5
    from ccscope import __version__

    meta = {
        "quantize_ms": quantize_ms,
        "truncate_percentile": None if truncate is None else float(truncate),
        "d_min_ms": d_min,
        "d_max_ms": d_max,
        "w_min": w_min,
        "w_max": w_max,
        "n_d": int(n_d),
        "n_w": int(n_w),
        "samples": int(keep.sum()),
        "transitions": int(len(rows)),
        "sources": list(df.attrs.get("sources", [])),
        "created_by": f"ccscope {__version__} models.markov.train",
    }
    return MarkovModel(P=P, meta=meta)


# --------------------------------------------------------------------------- inspection


def inspect(model: MarkovModel) -> Dict[str, Any]:
    """Table 2 figures of a model: matrix size m, nnz, file size, samples, ranges, density."""
    meta = model.meta
    m = model.m
    size = model.path.stat().st_size if model.path is not None and model.path.exists() else model.file_size()
    return {
        "quantize_ms": meta["quantize_ms"],
        "truncate_percentile": meta["truncate_percentile"],
        "m": m,
        "n_d": model.n_d,
        "n_w": model.n_w,
        "nnz": int(model.P.nnz),
        "density": (model.P.nnz / (m * m)) if m else 0.0,
        "file_bytes": int(size),
        "samples": meta["samples"],
        "transitions": meta["transitions"],
        "d_range_ms": (meta["d_min_ms"], meta["d_max_ms"]),
        "w_range": (meta["w_min"], meta["w_max"]),
        "empty_rows": int(np.count_nonzero(np.diff(model.P.indptr) == 0)),
    }


def _closest_mean_w(p: np.ndarray, w: np.ndarray) -> float:
    """Expected window of §3.2's draw over one subset: N uniform in [min p, max p], the probability
    level nearest to N wins (each level's share is its cell between midpoints), ties to the lowest w."""
    levels, first = np.unique(p, return_inverse=True)
    low_w = np.full(len(levels), np.iinfo(np.int64).max)
    np.minimum.at(low_w, first, w)
    if len(levels) == 1:
        return float(low_w[0])
    edges = np.concatenate(([levels[0]], (levels[1:] + levels[:-1]) / 2, [levels[-1]]))
    return float(np.dot(np.diff(edges), low_w) / (levels[-1] - levels[0]))


def draw_bias(model: MarkovModel, samples: Any, min_delay_ms: float = 0.0) -> Dict[str, Any]:
    """How the two draws of the ``markov`` controller scale what the generator sent.

    At every transition between consecutive samples of a user that lands on the model's grid, the
    subset is the origin's row restricted to the next sample's delay interval. Returned, weighted by
    those transitions: ``closest_w`` (mean window of paper 000 §3.2's draw), ``chain_w`` (mean
    window of a step in proportion to the probabilities, which equals the generator's own
    mean when `samples` are the training samples), ``ratio`` = closest_w / chain_w, ``transitions``
    used, ``no_subset`` (transitions whose subset the model does not have), ``off_grid`` (transitions
    from or to a sample outside the model's delay or window range, which the controller would clamp)
    and ``levels`` (the mean number of distinct probabilities in a subset: §3.2's draw gives each a
    share set by the gaps to its neighbours, not by its probability). Only transitions into a delay of
    at least `min_delay_ms` count (0: all).
    """
    df = _as_samples(samples)
    meta = model.meta
    q, d0, w0 = float(meta["quantize_ms"]), float(meta["d_min_ms"]), int(meta["w_min"])
    src, user, d, w = _in_walk_order(df)
    d_bin = np.floor((d - d0) / q)  # as the controller quantizes (crates/ccscope-cc/src/model/markov.rs)
    on = (d_bin >= 0) & (d_bin < model.n_d) & (w >= w0) & (w <= int(meta["w_max"]))
    state = np.clip(d_bin, 0, model.n_d - 1).astype(np.int64) * model.n_w + (w - w0)
    chained = (src[1:] == src[:-1]) & (user[1:] == user[:-1]) & (d[1:] >= min_delay_ms)
    same = chained & on[1:] & on[:-1]
    off_grid = int(np.count_nonzero(chained & ~(on[1:] & on[:-1])))
    key = state[:-1][same] * model.n_d + state[1:][same] // model.n_w  # (origin, next delay interval)
    pairs, counts = np.unique(key, return_counts=True)
    P = model.P.tocsr()
    tot_c = tot_p = used = levels = 0.0
    missing = 0
    for k, n in zip(pairs.tolist(), counts.tolist()):
        s, r = divmod(k, model.n_d)
        lo, hi = P.indptr[s], P.indptr[s + 1]
        cols, ps = P.indices[lo:hi], P.data[lo:hi]
        sel = cols // model.n_w == r
        if not sel.any():
            missing += n
            continue
        pw, ww = ps[sel], cols[sel] % model.n_w + w0
        tot_c += n * _closest_mean_w(pw, ww)
        tot_p += n * float(np.dot(pw, ww) / pw.sum())
        levels += n * len(np.unique(pw))
        used += n
    closest = tot_c / used if used else float("nan")
    chain = tot_p / used if used else float("nan")
    return {"closest_w": closest, "chain_w": chain, "ratio": closest / chain if chain > 0 else float("nan"),
            "transitions": int(used), "no_subset": int(missing), "off_grid": off_grid,
            "levels": levels / used if used else float("nan")}


def heatmap(
    model: MarkovModel, out_png: PathLike, first_intervals: int = 10, zoom_interval: Optional[int] = None,
    max_pixels: int = 1200, w_max: Optional[int] = None,
) -> Path:
    """Figures 5-6 (:func:`heatmap_figure`) written to `out_png` (PNG, SVG or PDF, by its suffix). The file is
    written atomically and bears ccscope's mark (:func:`ccscope.analysis.figures.is_marked_figure`): an existing
    file is replaced only when it bears it too; any other is refused (:func:`check_heatmap_destination`)."""
    out = check_heatmap_destination(out_png)
    fig = heatmap_figure(model, first_intervals, zoom_interval, max_pixels, w_max)
    import matplotlib.pyplot as plt

    from ccscope.analysis.figures import figure_bytes
    from ccscope.analysis.files import write_atomic

    try:
        # Marked as ccscope's: a later heatmap (API or `markov inspect --heatmap`) replaces only a figure bearing it.
        data = figure_bytes(fig, out.suffix[1:].lower(), dpi=120, mark=True)
    finally:
        plt.close(fig)
    return write_atomic(out, data)


def heatmap_figure(
    model: MarkovModel, first_intervals: int = 10, zoom_interval: Optional[int] = None, max_pixels: int = 1200,
    w_max: Optional[int] = None,
) -> Any:
    """Figures 5-6: transition probabilities on a log colour scale, white = no transition (a matplotlib figure).

    Left: the first `first_intervals` delay intervals; right (if `zoom_interval` is given): the block of
    that interval alone. Each interval shows the windows `w_min..w_max` (default: all; the paper's
    figures show 0..35). A block is never densified beyond `max_pixels` square: each pixel shows the
    largest probability of the states it covers.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    n_w, w0 = model.n_w, model.meta["w_min"]
    shown = n_w if w_max is None else max(1, min(n_w, int(w_max) - w0 + 1))
    k = max(1, min(first_intervals, model.n_d))
    blocks = [(range(k), f"first {k} delay intervals")]
    if zoom_interval is not None:
        if not 0 <= zoom_interval < model.n_d:
            raise MarkovArgumentError.naming("zoom_interval", f"interval out of range 0..{model.n_d - 1}",
                                             value=zoom_interval)
        lo, hi = model.interval(zoom_interval)
        blocks.append((range(zoom_interval, zoom_interval + 1), f"interval {zoom_interval}: d in [{lo}, {hi}) ms"))
    fig, axes = plt.subplots(1, len(blocks), figsize=(6 * len(blocks), 5.2), squeeze=False)
    for ax, (bins, title) in zip(axes[0], blocks):
        idx = (np.asarray(bins)[:, None] * n_w + np.arange(shown)[None, :]).ravel()
        sub = model.P[idx][:, idx].tocoo()
        n = len(idx)
        pix = min(n, max_pixels)
        block = np.zeros((pix, pix))
        np.maximum.at(block, (sub.row.astype(np.int64) * pix // n, sub.col.astype(np.int64) * pix // n), sub.data)
        title += f", w {w0}..{w0 + shown - 1}"
        if pix < n:
            title += f" ({n} states on {pix} pixels: max per pixel)"
        masked = np.ma.masked_less_equal(block, 0)
        vmin = float(masked.min()) if masked.count() else 1e-6
        im = ax.imshow(masked, cmap="Blues", norm=LogNorm(vmin=vmin, vmax=1.0), interpolation="nearest")
        for i in range(1, len(bins)):
            ax.axhline(i * shown * pix / n - 0.5, color="0.85", lw=0.5)
            ax.axvline(i * shown * pix / n - 0.5, color="0.85", lw=0.5)
        ax.set_title(f"q = {model.meta['quantize_ms']} ms, {title}", fontsize=8)
        ax.set_xlabel("next state S_rv")
        ax.set_ylabel("present state S_kl")
        fig.colorbar(im, ax=ax, label="transition probability")
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- collection


def ack_link(ack: Optional[PathLike]) -> Dict[str, Any]:
    """The ACK direction: the trace `ack`, or (None) an uncongested 100 Mbit/s link; 10 ms either way."""
    if ack is None:
        return {"rate_mbps": testbed.UNPAIRED_ACK_MBPS, "delay_ms": ONE_WAY_DELAY_MS}
    return {"trace": str(ack), "delay_ms": ONE_WAY_DELAY_MS}


def paper_scenario(trace: PathLike, users: int, seconds: float, seed: int, flow: Dict[str, Any],
                   ack: Optional[PathLike] = None, name: str = "markov") -> Dict[str, Any]:
    """Paper 000 §6.1 / Table 1: `users` flows of `flow` (controller and its parameters) with 1450 B
    packets and start times uniform in [0, 1 s), the trace shaping the data direction behind RED
    3/9 Mbit 0.1%, 10 ms each way, ACKs over `ack_link(ack)`; one-second bins."""
    return {
        "name": name,
        "seed": int(seed),
        "duration_s": float(seconds),
        "bin_ms": 1000,
        "data_link": {"trace": str(trace), "delay_ms": ONE_WAY_DELAY_MS, "queue": dict(testbed.RED_QUEUE)},
        "ack_link": ack_link(ack),
        "flows": [{**flow, "packet_bytes": testbed.VERUS_PACKET_BYTES, "count": int(users),
                   "start_jitter_s": testbed.START_JITTER_S}],
    }


def _collect_one(job: tuple) -> pd.DataFrame:
    """One collection run: (trace path, ack trace path or None, users, seconds, seed, user id offset, R,
    record mode)."""
    from ccscope import api

    trace, ack, users, seconds, seed, offset, r, record = job
    sc = paper_scenario(trace, users, seconds, seed, {"controller": "verus", "r": float(r), "record": record},
                        ack=ack, name=f"markov-collect {Path(trace).name} {users}u")
    sm = api.run(sc).samples
    if sm is None or len(sm) == 0:
        raise ScenarioError(f"{Path(trace).name} with {users} user(s): Verus recorded no samples")
    sm = sm.copy()
    # Distinct user ids per run, so that train() never chains one run's user into another's.
    sm["user"] = sm["user"].astype(np.int64) + int(offset)
    sm["trace"] = Path(trace).name
    sm["users"] = np.int64(users)
    return sm


def _ack_of(trace: Path) -> Optional[Path]:
    stem, _, kind = trace.name.rpartition(".")
    other = trace.with_name(f"{stem}.{'up' if kind == 'down' else 'down'}")
    return other if kind in ("down", "up") and other.is_file() else None


def collect(
    traces: Sequence[PathLike],
    users: Sequence[int] = (1,),
    seconds: float = 300.0,
    seed: int = 1,
    jobs: Optional[int] = 1,
    r: float = PAPER_R,
    ack: str = "uncongested",
    record: str = "epoch",
    quiet: bool = True,
) -> pd.DataFrame:
    """Paper 000 §4.1 / Table 1: run Verus (R = `r`, paper 000's 2 by default) with N users (1450 B
    packets, RED 3/9 Mbit 0.1%, 10 ms each way) on every trace for every N in `users`, recording
    (largest delay, packets sent) per 5 ms epoch (`record="epoch"`) or (ACK's delay, its packet's window)
    per ACK (`record="packet"`). Data cross the trace; ACKs cross an uncongested 100 Mbit/s link
    (`ack="uncongested"`, paper 000 §6.1) or the trace's opposite direction if that file exists
    (`ack="paired"`). Returns columns user, t_ms, d_ms, w, trace, users; user ids are unique per run
    (run k's flow f is k * 100 + f). ``df.attrs`` holds trace / users / seed / r / record (comma-joined)."""
    if ack not in ACK_MODES:
        raise ScenarioError(f"ack: expected one of {', '.join(ACK_MODES)}, got {ack!r}")
    if record not in RECORD_MODES:
        raise ScenarioError(f"record: expected one of {', '.join(RECORD_MODES)}, got {record!r}")
    if not r > 1:
        raise ScenarioError(f"r: Verus's delay ratio must exceed 1, got {r!r}")
    tr = [Path(t) for t in traces]
    for t in tr:
        if not t.is_file():
            raise ScenarioError(f"{t}: no such trace file")
    us = [int(u) for u in users]
    if not us or any(u < 1 or u >= 100 for u in us):
        raise ScenarioError(f"users: expected 1..99 users per run, got {list(users)!r}")
    if not seconds > 0:
        raise ScenarioError(f"seconds: must be positive, got {seconds!r}")
    acks = {t: (_ack_of(t) if ack == "paired" else None) for t in tr}
    work = [(str(t), None if acks[t] is None else str(acks[t]), u, float(seconds), int(seed), k * 100, float(r), record)
            for k, (t, u) in enumerate((t, u) for t in tr for u in us)]
    from ccscope.runner import run_all

    frames = run_all(_collect_one, work, jobs, "markov collect runs", quiet)
    out = pd.concat(frames, ignore_index=True)
    out.attrs.update(trace=",".join(t.name for t in tr), users=",".join(str(u) for u in us), seed=int(seed), r=float(r),
                     record=record)
    return out


def save_samples(df: pd.DataFrame, path: PathLike, **meta: Any) -> Path:
    """Write samples as Parquet, atomically, with `meta` (default: ``df.attrs``'s trace / users / seed)
    in the schema metadata, where :func:`load_samples` finds it. An existing file is replaced only when it is a
    sample file; any other is refused (:func:`check_samples_destination`) and left as it is."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = check_samples_destination(path)
    info = {k: df.attrs[k] for k in ("trace", "users", "seed", "r", "record") if k in df.attrs}
    info.update(meta)
    table = pa.Table.from_pandas(df, preserve_index=False)
    md = dict(table.schema.metadata or {})
    md.update({str(k).encode(): str(v).encode() for k, v in info.items()})
    table = table.replace_schema_metadata(md)
    from ccscope import store

    return store.write_file(path, lambda p: pq.write_table(table, p))
