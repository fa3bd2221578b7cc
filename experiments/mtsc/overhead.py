"""The traffic phase lock with and without ns-2's TCP send overhead (docs/deviations.md, "Measured at the spec's
run length" (9)): how many runs shut their TCP background out when the 32 clients' sends wait a random overhead_.

    python experiments/mtsc/overhead.py [--overheads-ms 0 0.8] [--seeds 11 .. 20] [--loads 2.5 5]
        [--variants generic online] [--duration-s 10000] [--jobs 1] [--log FILE]

Builds each run as sac_runs.py does (alpha 1.05, registered idle means, the committed report's configuration) with
`Run.tcp_overhead_ms` set, runs them with `sac_runs.run_all` (appending each output to `--log`, JSON lines, if given;
`--log` again with the same code reuses what it holds), and prints per overhead, load and variant: the runs whose
background carried less than half its registered load (sac_report's `shut_out`, the report's count), the realised
background (bottleneck minus the controlled flow, Mbit/s) and the controlled flow's packets/s (mean and range over
seeds); then on-line SAC's gain over generic LIED per load with the report's paired 95% interval. Writes only `--log`.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def runs(overheads: Sequence[float], seeds: Sequence[int], loads: Sequence[float], variants: Sequence[str],
         duration_s: float) -> list:
    """The runs to make: every overhead x load x variant x seed, at alpha 1.05."""
    from sac_runs import Run

    return [Run(v, s, duration_s, load_mbps=load, tcp_overhead_ms=o)
            for o in overheads for load in loads for v in variants for s in seeds]


def table(out: dict, overheads: Sequence[float], seeds: Sequence[int], loads: Sequence[float],
          variants: Sequence[str], duration_s: float) -> list[str]:
    """The printed lines: one per (overhead, load, variant), then the gains."""
    from sac_report import ci95, shut_out
    from sac_runs import Run

    def get(v: str, s: int, load: float, o: float) -> dict:
        return out[Run(v, s, duration_s, load_mbps=load, tcp_overhead_ms=o).key]

    L = ["overhead ms | load Mbit/s | variant | shut out | background Mbit/s mean (min-max) | "
         "controlled pkt/s mean (min-max) | seeds shut out"]
    for o in overheads:
        for load in loads:
            for v in variants:
                rs = [get(v, s, load, o) for s in seeds]
                bg = [r["background_mbps"] for r in rs]
                pps = [r["total_pps"] for r in rs]
                hit = [s for s, r in zip(seeds, rs) if shut_out(r)]
                L.append(f"{o:g} | {load:g} | {v} | {len(hit)} of {len(rs)} | {np.mean(bg):.2f} ({min(bg):.2f}-"
                         f"{max(bg):.2f}) | {np.mean(pps):.1f} ({min(pps):.1f}-{max(pps):.1f}) | "
                         f"{', '.join(map(str, hit)) or '-'}")
    if {"generic", "online"} <= set(variants):
        for o in overheads:
            for load in loads:
                g = [100 * (get("online", s, load, o)["total_pps"] / get("generic", s, load, o)["total_pps"] - 1)
                     for s in seeds]
                m, h = ci95(g)
                L.append(f"overhead {o:g} ms, load {load:g}: on-line SAC over generic LIED {m:+.1f}% ± {h:.1f} "
                         f"(median {float(np.median(g)):+.1f}%, per seed {min(g):+.1f}% to {max(g):+.1f}%)")
    return L


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--overheads-ms", type=float, nargs="+", default=[0.0, 0.8])
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(11, 21)))
    ap.add_argument("--loads", type=float, nargs="+", default=[2.5, 5.0])
    ap.add_argument("--variants", nargs="+", default=["generic", "online"], choices=("generic", "online"))
    ap.add_argument("--duration-s", type=float, default=10_000.0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--log", type=Path, default=None, help="JSON lines of every run's output (reused when it matches)")
    a = ap.parse_args(argv)
    bad = [o for o in a.overheads_ms if not (math.isfinite(o) and 0.0 <= o <= 1000.0)]
    if bad:
        ap.error(f"--overheads-ms {bad[0]:g}: in [0, 1000] ms")
    if not (math.isfinite(a.duration_s) and a.duration_s > 0):
        ap.error(f"--duration-s {a.duration_s:g}: a positive number of seconds")
    import sac_runs
    from mtsc_scenarios import registered_idle_mean

    for load in a.loads:
        try:
            registered_idle_mean(1.05, load)
        except ValueError as e:
            ap.error(f"--loads {load:g}: {e}")
    todo = runs(a.overheads_ms, a.seeds, a.loads, a.variants, a.duration_s)
    out = sac_runs.run_all(todo, max(1, a.jobs), cache=a.log, reuse=a.log is not None)
    print("\n".join(table(out, a.overheads_ms, a.seeds, a.loads, a.variants, a.duration_s)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
