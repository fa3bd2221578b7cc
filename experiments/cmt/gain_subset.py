"""Paper 002 Figs. 9-12 at full size on a chosen subset of points (issue 10's window-management claims), for
when the whole `ccscope repro cmt --figs 9 10 11 12` does not fit the time at hand. Same runner, settings,
limits and lengthening as the report (repro.run_gains); writes a markdown table.

    python experiments/cmt/gain_subset.py -o docs/reproductions/cmt_wm_subset.md
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path as FsPath

HERE = FsPath(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import repro  # noqa: E402

from ccscope import store  # noqa: E402

# (fig, curve, p1): the largest gains (Fig. 10, r = 64 KB), the Figs. 9/11 points of p1 in [1e-3, 1e-2] whose
# gain was ~0 where the paper does not say it should be, and Fig. 12's large-d2, small-p1 region and d2 = 10 ms.
SUBSET = (
    [("10", "r = 64 KB", p1) for p1 in (3e-3, 1e-2, 3e-2, 1e-1)]
    + [("9", "b2 = 10 Mbit/s", 3e-3), ("9", "b2 = 10 Mbit/s", 1e-2), ("9", "b2 = 15 Mbit/s", 1e-2),
       ("11", "p2 = 0.001", 1e-2)]
    + [("12", f"d2 = {d2} ms", 3e-4) for d2 in (100, 200)]
    + [("12", "d2 = 10 ms", p1) for p1 in (3e-2, 1e-1)]
)


def select(points: list, subset) -> list:
    """The points of `points` named by `subset`, in the report's order; an entry that names no point (a
    mistyped curve label or p1) is an error naming it, not a silently shorter table."""
    have = {(pt.fig, pt.curve, pt.p1) for pt in points}
    for entry in subset:
        if entry not in have:
            raise ValueError(f"SUBSET entry {entry!r} (fig, curve, p1) matches no point of repro.gain_points()")
    want = set(subset)
    return [pt for pt in points if (pt.fig, pt.curve, pt.p1) in want]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", type=FsPath, default=FsPath("docs/reproductions/cmt_wm_subset.md"))
    ap.add_argument("--jobs", type=int, default=repro.Settings.jobs)
    a = ap.parse_args(argv)
    st = repro.Settings(jobs=a.jobs)
    try:
        pts = select(repro.gain_points(), SUBSET)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    repro.run_gains(pts, st, lambda m: print(m, flush=True))
    rows = repro.gain_rows(pts)
    lines = [
        "# Paper 002 Figs. 9-12: a subset of points at full size",
        "",
        f"`python experiments/cmt/gain_subset.py` ({time.perf_counter() - t0:.0f} s on {st.jobs} workers): "
        f"{st.two_path_seeds} seeds, every run lengthened to {st.two_path_loss_events} loss events "
        f"(cap {st.cap_s:.0f} s), both schemes on the same seeds; the rest of Figs. 9-12 is in cmt.md.",
        "",
        "| Fig. | curve | p1 | limits | static (Mbit/s) | dynamic | gain ± 95% CI | predicted static | buffer full | rwnd-held | loss events (min) | run (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['fig']} | {r['curve']} | {r['p1']:g} | {r['limit1']}, {r['limit2']} | {r['static_mbps']:.3f} | "
                     f"{r['dynamic_mbps']:.3f} | {repro._pct(r['gain'])} ± {repro._pct(r['gain_ci95'])} | "
                     f"{r['predicted_static_mbps']:.3f} | {repro._share_pair(r, 'full')} | "
                     f"{repro._share_pair(r, 'rwnd_blocked')} | {r['min_loss_events']} | {r['sim_s']:.0f} |")
    store.write_text(a.out, "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
