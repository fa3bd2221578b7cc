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
from ccscope.controller import Controller


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
    out = _native.run_bench(bench_trace_dirs(), names, repeats)
    df = pd.DataFrame([r for r in out if "skipped" not in r])
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
    return df


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
    skipped = df.attrs.get("skipped") or []
    if skipped:
        # Text, not markup: the reason lists directories in brackets.
        t.caption = Text("\n".join(f"skipped {name}: {reason}" for name, reason in skipped))
    return t
