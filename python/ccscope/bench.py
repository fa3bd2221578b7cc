"""`ccscope bench`: simulator speed, with ratios against baselines measured in the same run."""

from __future__ import annotations

import os
import statistics
import time
from typing import Optional

import pandas as pd
from rich.table import Table
from rich.text import Text

from ccscope import _native, api
from ccscope.arguments import ArgumentError
from ccscope.controller import Controller

#: At most this many runs per case (the slowest case takes about a minute a run); the timings of every
#: run are kept, so the count is bounded before anything is allocated.
MAX_REPEATS = 1000
#: run_bench's arguments as `ccscope bench` names them.
CLI_OPTIONS = {"repeats": "--repeats", "names": "--cases"}


class _FixedWindow(Controller):
    """The `fixed` controller written in Python: same decisions, so only the call cost differs."""

    def __init__(self, window: int = 12) -> None:
        self.cwnd = window

    def on_ack(self, now_ms, ack) -> None:
        pass


def _median_wall(fn, repeats: int) -> tuple[float, object]:
    walls, res = [], None
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        res = fn()
        walls.append(time.perf_counter() - t0)
    return statistics.median(walls), res


def python_controller_cost(repeats: int = 3) -> dict:
    """Extra wall time per Python controller call on the contest: Python `fixed` vs Rust `fixed`."""
    rust_s, r = _median_wall(lambda: api.run("examples/datagrump.toml"), repeats)
    py_s, _ = _median_wall(
        lambda: api.run(
            "examples/datagrump.toml", overrides={"flows.0.controller": "python"}, controllers={0: _FixedWindow(12)}
        ),
        repeats,
    )
    # _FixedWindow overrides only on_ack (inherited no-op hooks are never called): one call per ACK,
    # each followed by re-reading cwnd, timeout_ms and pacing_rate_mbps.
    calls = r.summary["acks_delivered"]
    return {"rust_s": rust_s, "python_s": py_s, "calls": calls, "us_per_call": (py_s - rust_s) / calls * 1e6,
            "slowdown": py_s / rust_s}


#: The shared trace set next to the repository (``<repo>/../shared/traces``), where the traces that
#: are not shipped with the package (TMobile-LTE-driving.down, used by "verus-4users-red") live.
SHARED_TRACES_DIR = api.PACKAGE_DIR.parent.parent.parent / "shared" / "traces"


def bench_trace_dirs() -> list[str]:
    """Where the bench cases look up traces, in order: the package's traces, the shared trace set
    next to the repository (when it exists), then the directories of $CCSCOPE_TRACE_PATH."""
    dirs = [str(api.TRACES_DIR)]
    if SHARED_TRACES_DIR.is_dir():
        dirs.append(str(SHARED_TRACES_DIR))
    dirs += [p for p in os.environ.get("CCSCOPE_TRACE_PATH", "").split(os.pathsep) if p]
    return dirs


def run_bench(repeats: int = 3, names: Optional[list[str]] = None) -> pd.DataFrame:
    """Time the bench cases (median of ``repeats``). Cases whose trace is not found are left out of
    the rows and listed, with the reason, in ``df.attrs["skipped"]`` (asking for one by name raises
    ``TraceError``)."""
    if isinstance(repeats, bool) or not isinstance(repeats, int) or not 1 <= repeats <= MAX_REPEATS:
        raise ArgumentError.naming("repeats", f"must be a whole number of runs per case in 1..={MAX_REPEATS}",
                                   value=repeats)
    native = None if names is None else [n for n in names if n != "markov"]
    out = _native.run_bench(bench_trace_dirs(), native, repeats) if native != [] else []
    df = pd.DataFrame([r for r in out if "skipped" not in r],
                      columns=None if out else ["case", "wall_s", "sim_s", "delivered", "pkts_per_wall_s", "sim_s_per_wall_s"])
    df.attrs["skipped"] = [(r["case"], r["skipped"]) for r in out if "skipped" in r]
    radix_1k, heap_1k = _native.event_queue_baseline(1_000, 2_000_000)
    radix_1m, heap_1m = _native.event_queue_baseline(1_000_000, 2_000_000)
    eq = pd.DataFrame(
        [
            {"case": "event-queue 1k pending (ns/op)", "radix": radix_1k, "binary_heap": heap_1k},
            {"case": "event-queue 1M pending (ns/op)", "radix": radix_1m, "binary_heap": heap_1m},
        ]
    )
    df.attrs["event_queue"] = eq
    if names is None or "contest" in names:
        df.attrs["python"] = python_controller_cost(repeats)
    if names is None or "markov" in names:
        try:
            df.attrs["markov"] = markov_training(repeats)
        except FileNotFoundError as e:
            df.attrs["skipped"] = list(df.attrs["skipped"]) + [("markov", str(e))]
    return df


#: Paper 000's model-size figure is for one user; these LTE traces give ~300,000 per-epoch samples of
#: one Verus user in 300 s each (5 ms epochs), and over 1,000,000 with four users (the first 10^6 are used).
MARKOV_TRACES = ("Verizon-LTE-short.down", "Verizon-LTE-short.up", "TMobile-LTE-short.up",
                 "TMobile-LTE-driving.down", "ATT-LTE-driving.down")


def _find_trace(name: str) -> Optional[str]:
    from ccscope import traces

    for d in bench_trace_dirs() + [str(c) for c in traces.candidate_trace_dirs()]:
        if os.path.isfile(os.path.join(d, name)):
            return os.path.join(d, name)
    return None


def markov_training(repeats: int = 3) -> dict:
    """Issue figures for paper 000's model: training time on 1,000,000 Verus samples (median of
    `repeats`, one process) against a plain-Python transition count of the same states measured in the
    same run, and the 1 ms model of ~300,000 one-user samples (states, non-zeros, file bytes).
    Raises ``FileNotFoundError`` when a trace is missing."""
    import collections
    import tempfile

    import numpy as np

    from ccscope.models import markov

    paths = [_find_trace(n) for n in MARKOV_TRACES]
    missing = [n for n, p in zip(MARKOV_TRACES, paths) if p is None]
    if missing:
        raise FileNotFoundError(f"traces not found: {', '.join(missing)}")
    one = markov.collect(paths, users=(1,), seconds=300.0, jobs=1)
    four = markov.collect(paths, users=(4,), seconds=300.0, jobs=1)
    big = four.iloc[:1_000_000].copy()
    train_s, model = _median_wall(lambda: markov.train(big, quantize_ms=2), repeats)
    # Baseline: the same transitions counted in a Python dict (the states computed as train() does).
    d, w, u = big["d_ms"].to_numpy(), big["w"].to_numpy(), big["user"].to_numpy()
    keep = d <= np.percentile(d, 99.9)
    meta = model.meta
    s = ((np.maximum(d - meta["d_min_ms"], 0) // 2) * meta["n_w"] + (w - meta["w_min"])).tolist()
    same = ((u[1:] == u[:-1]) & keep[1:] & keep[:-1]).tolist()

    def naive() -> int:
        c = collections.Counter(pair for pair, ok in zip(zip(s, s[1:]), same) if ok)
        rows = collections.defaultdict(int)
        for (a, _), n in c.items():
            rows[a] += n
        return len({k: n / rows[k[0]] for k, n in c.items()})

    naive_s, nnz = _median_wall(naive, repeats)
    m1 = markov.train(one, quantize_ms=1)
    with tempfile.TemporaryDirectory() as tmp:
        size = os.path.getsize(m1.save(os.path.join(tmp, "u1_q1.ccm")))
    return {"samples": len(big), "train_s": train_s, "python_count_s": naive_s, "speedup": naive_s / train_s,
            "nnz_2ms": int(model.P.nnz), "nnz_check": nnz, "one_user_samples": len(one), "m_1ms": m1.m,
            "nnz_1ms": int(m1.P.nnz), "file_bytes_1ms": size}


def render(df: pd.DataFrame) -> Table:
    t = Table(title="ccscope bench (median wall time; one core)")
    for c in ["case", "wall s", "sim s", "delivered", "pkts / wall s", "sim s / wall s"]:
        t.add_column(c, justify="left" if c == "case" else "right")
    for r in df.to_dict(orient="records"):
        t.add_row(r["case"], f"{r['wall_s']:.4f}", f"{r['sim_s']:.0f}", f"{r['delivered']:,}",
                  f"{r['pkts_per_wall_s']:,.0f}", f"{r['sim_s_per_wall_s']:,.0f}")
    eq = df.attrs.get("event_queue")
    if eq is not None:
        for r in eq.to_dict(orient="records"):
            t.add_row(r["case"], f"radix {r['radix']:.1f}", f"heap {r['binary_heap']:.1f}", "",
                      f"heap/radix {r['binary_heap'] / r['radix']:.2f}x", "")
        grow_r = eq.radix.iloc[1] / eq.radix.iloc[0]
        grow_h = eq.binary_heap.iloc[1] / eq.binary_heap.iloc[0]
        t.add_row("event-queue slowdown 1k -> 1M", f"radix {grow_r:.2f}x", f"heap {grow_h:.2f}x", "", "", "")
    py = df.attrs.get("python")
    if py is not None:
        t.add_row("python controller (contest)", f"{py['python_s']:.4f}", "140", "",
                  f"{py['us_per_call']:.2f} us/call", f"{py['slowdown']:.1f}x slower")
    mk = df.attrs.get("markov")
    if mk is not None:
        t.add_row(f"markov train, {mk['samples']:,} samples (2 ms)", f"{mk['train_s']:.3f}", "", "",
                  f"python count {mk['python_count_s']:.2f} s", f"{mk['speedup']:.0f}x faster")
        t.add_row(f"markov 1 ms model, {mk['one_user_samples']:,} 1-user samples", f"{mk['file_bytes_1ms'] / 1e6:.1f} MB",
                  "", f"m {mk['m_1ms']:,}", f"nnz {mk['nnz_1ms']:,}", "")
    skipped = df.attrs.get("skipped") or []
    if skipped:
        # Text, not markup: the reason lists directories in brackets.
        t.caption = Text("\n".join(f"skipped {name}: {reason}" for name, reason in skipped))
    return t
