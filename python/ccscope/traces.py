"""Mahimahi trace files: finding the shared trace folder, a trace's loop period and mean rate, and cutting
traces into new ones (concatenated segments, interleaved stretches)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Sequence, Union

# Mahimahi: each line of a trace is one delivery opportunity of 1504 bytes.
OPPORTUNITY_BYTES = 1504


class TraceDirNotFound(FileNotFoundError):
    """No folder of Mahimahi traces where one is looked for (or a trace in it unusable)."""


def has_traces(d: Path) -> bool:
    return d.is_dir() and any(p.suffix in (".down", ".up") and p.is_file() for p in d.iterdir())


def candidate_trace_dirs() -> list[Path]:
    """Where the shared traces are looked for: $CCSCOPE_TRACE_PATH's folders, then ``../shared/traces``
    next to the repository checkout this package runs from, then ``../shared/traces`` from the current
    directory."""
    out = [Path(p) for p in os.environ.get("CCSCOPE_TRACE_PATH", "").split(os.pathsep) if p]
    out.append(Path(__file__).resolve().parents[2] / ".." / "shared" / "traces")
    out.append(Path.cwd() / ".." / "shared" / "traces")
    return out


def find_traces(explicit: Optional[Union[str, Path]] = None) -> Path:
    """The trace folder: `explicit` if given, else the first candidate holding ``*.down``/``*.up``
    files. Raises :class:`TraceDirNotFound` (one line) otherwise."""
    if explicit is not None:
        d = Path(explicit)
        if not has_traces(d):
            raise TraceDirNotFound(f"{d}: no Mahimahi traces (*.down, *.up) there")
        return d.resolve()
    cands = candidate_trace_dirs()
    for d in cands:
        if has_traces(d):
            return d.resolve()
    raise TraceDirNotFound(
        "no trace folder found (looked in " + ", ".join(str(c) for c in cands) + "); pass --traces DIR"
    )


def trace_period_s(path: Path) -> float:
    """The loop period of a Mahimahi trace: its last timestamp (ms)."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - 256))
        tail = f.read().split()
    if not tail:
        raise ValueError(f"{path}: empty trace")
    return int(tail[-1]) / 1000.0


def trace_mean_mbps(path: Path) -> float:
    """Mean capacity over one loop: 1504 bytes per delivery opportunity (Mahimahi)."""
    return trace_stats(path)[0]


def trace_stats(path: Path) -> tuple[float, float, float, int]:
    """(mean Mbit/s, longest gap between delivery opportunities in s and where it starts in s, number of
    gaps longer than 1 s) over one loop."""
    import numpy as np

    t = np.loadtxt(path, dtype=np.int64, ndmin=1)
    gaps = np.diff(t)
    i = int(np.argmax(gaps)) if len(gaps) else 0
    mean = float(len(t) * OPPORTUNITY_BYTES * 8 / (t[-1] / 1000.0) / 1e6)
    return mean, (float(gaps[i]) / 1000.0 if len(gaps) else 0.0), float(t[i]) / 1000.0, int((gaps > 1000).sum())


def concat_trace(trace_dir: Path, names: Sequence[str], segment_s: float, out: Path) -> Path:
    """The first `segment_s` of each trace (looping a shorter one), one after another, as one Mahimahi
    trace (its loop period is its last timestamp); paper 000 §6.6's evaluation trace."""
    seg_ms = int(round(segment_s * 1000))
    lines: list[str] = []
    for i, n in enumerate(names):
        ts = [int(x) for x in (trace_dir / n).read_text().split()]
        if not ts or ts[-1] <= 0:
            raise TraceDirNotFound(f"{trace_dir / n}: empty trace")
        period, base, k = ts[-1], i * seg_ms, 0
        while k * period < seg_ms:
            lines.extend(str(base + k * period + t) for t in ts if k * period + t < seg_ms)
            k += 1
    # The loop period is the last timestamp: end on the concatenation's full length (one extra opportunity),
    # so a quiet tail is kept and every loop lasts exactly len(names) segments.
    lines.append(str(len(names) * seg_ms))
    out.write_text("\n".join(lines) + "\n")
    return out


def interleaved_split(trace_dir: Path, names: Sequence[str], chunk_s: float, out_dir: Path) -> tuple[list, list]:
    """Each recording cut into `chunk_s` stretches: the even ones, back to back, form its set-1 trace
    (`<stem>-even.<dir>`), the odd ones its set-2 trace (`<stem>-odd.<dir>`); a last partial stretch is
    dropped. Each output loops on its own length. Returns (set 1 names, set 2 names)."""
    import numpy as np

    chunk = int(round(chunk_s * 1000))
    train, evaluate = [], []
    for n in names:
        ts = np.loadtxt(trace_dir / n, dtype=np.int64, ndmin=1)
        k = ts // chunk
        n_chunks = int(ts[-1] // chunk) if len(ts) else 0
        if n_chunks < 2:
            raise TraceDirNotFound(f"{trace_dir / n}: shorter than two {chunk_s:g} s stretches")
        stem, _, kind = n.rpartition(".")
        for parity, names_out, tag in ((0, train, "even"), (1, evaluate, "odd")):
            picked = [c for c in range(parity, n_chunks, 2)]
            parts = [ts[k == c] - c * chunk + i * chunk for i, c in enumerate(picked)]
            out = np.concatenate(parts + [np.array([len(picked) * chunk])])
            name = f"{stem}-{tag}.{kind}"
            (out_dir / name).write_text("\n".join(map(str, out.tolist())) + "\n")
            names_out.append(name)
    return train, evaluate
