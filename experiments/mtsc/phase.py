"""Phase of the clamped flow against the bottleneck's departures during a Fig. 14 alpha-1.05 lock-in
(docs/deviations.md, "Measured at the spec's run length", the paragraph after lockin.py's): the traffic phase
effect of Floyd & Jacobson (1992) read off the bottleneck's per-packet log.

    python experiments/mtsc/phase.py run DIR [--run online:18] [--duration-s 720] [--window-s 60]
        [--access-mbps X] [--access-delay-ms X] [--max-rate-mbps X] [--tcp-overhead-ms X] [--no-packets]

    python experiments/mtsc/phase.py kick DIR [--run online:18] [--at-s 760] [--duration-s 880]
        [--mode none|scale|shift] [--value V] [--window-s 60]

`run` builds the scenario as experiments/mtsc/lockin.py does (sac_runs.py's, report seed, alpha 1.05), with
the bottleneck's packet log on (it is the monitored link) and optionally the controlled flow's own access link
(rate, delay) or its rate clamp changed, or the 32 TCP clients' sends delayed by ns-2's random overhead_
(`--tcp-overhead-ms`, sac_runs.py's `Run.tcp_overhead_ms`); it prints the background per lock-in criterion (lockin.py's) and,
over the last `--window-s` seconds, the distributions below, and keeps that window of the log in
DIR/NAME.packets.parquet. `--no-packets` (long runs) prints the background only. `kick` runs the same
scenario through `cargo run --release -p ccscope-sim --example phase_kick`: identical up to `--at-s`, then the
controlled flow's pacing rate times `--value` (`scale`) or one gap between its packets longer by `--value` ns
(`shift`, a phase change at the same rate); it prints the background before and after and the same
distributions over the last `--window-s` seconds.

Distributions: for each departure, the offset (ns) to the next arrival of the controlled flow processed after
it, and how many departures have an arrival of it at the same nanosecond processed before (the simulator
runs arrivals, phase Normal, before a link's service, phase Late, at one instant); for each background (TCP)
arrival, its offset from the last departure and whether the full queue dropped it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# The bottleneck's service time of a 1000 B packet at 10 Mbit/s, ns (the clamp's 1,250 packets/s).
PERIOD_NS = 800_000


def log_frame(packets: pd.DataFrame) -> pd.DataFrame:
    """The packet log (api Result.packets) with integer ns times and its processing order kept."""
    t = np.rint(packets["time_ms"].to_numpy(dtype=np.float64) * 1e6).astype(np.int64)
    return pd.DataFrame({"t_ns": t, "event": packets["event"].astype(str).to_numpy(),
                         "flow": packets["flow"].to_numpy(), "seq": packets["seq"].to_numpy()})


def phase_stats(log: pd.DataFrame, flow: int, t0_ns: int, t1_ns: int) -> dict:
    """Offsets in [t0_ns, t1_ns) of a log in processing order (columns t_ns, event, flow, seq; event one of
    arrival, departure, drop). `flow` is the controlled flow; every other flow is background."""
    w = log[(log["t_ns"] >= t0_ns) & (log["t_ns"] < t1_ns)].reset_index(drop=True)
    t, ev, fl = w["t_ns"].to_numpy(), w["event"].to_numpy(), w["flow"].to_numpy()
    row = np.arange(len(w))
    dep = row[ev == "departure"]
    own = row[(ev == "arrival") & (fl == flow)]
    bg = row[(ev == "arrival") & (fl != flow)]
    # Next own arrival processed after each departure (log rows are in processing order).
    k = np.searchsorted(own, dep, side="right")
    has_next = k < len(own)
    dep_next = t[own[k[has_next]]] - t[dep[has_next]]
    # An own arrival at a departure's nanosecond but processed before it (the latest own one before it).
    prev = np.searchsorted(own, dep, side="left") - 1
    before_same = np.zeros(len(dep), dtype=bool)
    ok = prev >= 0
    before_same[ok] = t[own[prev[ok]]] == t[dep[ok]]
    # Each background arrival: last departure processed before it, and whether it was dropped at that instant.
    j = np.searchsorted(dep, bg, side="left") - 1
    after_dep = j >= 0
    bg_off = np.full(len(bg), -1, dtype=np.int64)
    bg_off[after_dep] = t[bg[after_dep]] - t[dep[j[after_dep]]]
    drops = w[w["event"] == "drop"]
    dropped_keys = set(zip(drops["t_ns"], drops["flow"], drops["seq"]))
    bg_dropped = np.array([(t[i], fl[i], w["seq"].iat[i]) in dropped_keys for i in bg], dtype=bool)
    own_drops = int(((drops["flow"] == flow)).sum())
    return {
        "departures": len(dep),
        "dep_spacing_ns": np.diff(t[dep]),
        "own_arrivals": len(own),
        "own_spacing_ns": np.diff(t[own]),
        "own_drops": own_drops,
        "dep_to_next_own_ns": dep_next,
        "own_same_ns_before_dep": int(before_same.sum()),
        "bg_arrivals": len(bg),
        "bg_offset_ns": bg_off,
        "bg_dropped": bg_dropped,
        "bg_flow": fl[bg],
        "bg_t_ns": t[bg],
    }


def describe(x: np.ndarray) -> str:
    """min / median / max and the most common values of an integer array."""
    if len(x) == 0:
        return "none"
    vals, counts = np.unique(x, return_counts=True)
    top = sorted(zip(counts, vals), reverse=True)[:3]
    common = ", ".join(f"{v} ({c})" for c, v in top)
    return f"n {len(x)}, min {x.min()}, median {int(np.median(x))}, max {x.max()}; most common: {common}"


def report(s: dict) -> str:
    lines = [
        f"departures {s['departures']}, spacing ns: {describe(s['dep_spacing_ns'])}",
        f"controlled-flow arrivals {s['own_arrivals']} (dropped {s['own_drops']}), spacing ns: "
        f"{describe(s['own_spacing_ns'])}",
        f"departure -> next controlled arrival processed after it, ns: {describe(s['dep_to_next_own_ns'])}",
        f"  of which at the same ns: {int((s['dep_to_next_own_ns'] == 0).sum())}; controlled arrivals at a "
        f"departure's ns processed before it: {s['own_same_ns_before_dep']}",
    ]
    off, drop = s["bg_offset_ns"], s["bg_dropped"]
    lines.append(f"background arrivals {s['bg_arrivals']}: dropped {int(drop.sum())}, accepted {int((~drop).sum())}")
    lines.append(f"  offset from the last departure, dropped, ns: {describe(off[drop])}")
    lines.append(f"  offset from the last departure, accepted, ns: {describe(off[~drop])}")
    per = per_client(s)
    if len(per):
        rep = per[per["arrivals"] >= 2]
        lines.append(f"background flows {len(per)}; of the {len(rep)} with 2 or more arrivals, "
                     f"{int((rep['distinct'] == 1).sum())} arrive at one offset every time and "
                     f"{int((rep['dropped'] == rep['arrivals']).sum())} had every arrival dropped")
        lines.append("per background flow (arrivals, dropped, distinct offsets, offsets ns; gaps between arrivals s):")
        for r in per.itertuples():
            lines.append(f"  {r.flow}: {r.arrivals}, {r.dropped}, {r.distinct}, {r.offsets}; {r.gaps}")
    return "\n".join(lines)


def per_client(s: dict) -> pd.DataFrame:
    """One row per background flow: its arrivals, drops, the distinct offsets from the last departure, and the
    gaps between its arrivals (s)."""
    rows = []
    for f in np.unique(s["bg_flow"]):
        m = s["bg_flow"] == f
        off = s["bg_offset_ns"][m]
        gaps = np.diff(s["bg_t_ns"][m]) / 1e9
        rows.append((int(f), int(m.sum()), int(s["bg_dropped"][m].sum()), len(np.unique(off)),
                     " ".join(str(x) for x in np.unique(off)[:4]) + (" ..." if len(np.unique(off)) > 4 else ""),
                     " ".join(f"{g:.6f}" for g in gaps[:4]) + (" ..." if len(gaps) > 4 else "")))
    return pd.DataFrame(rows, columns=["flow", "arrivals", "dropped", "distinct", "offsets", "gaps"])


def scenario(variant: str, seed: int, duration_s: float, access_mbps: Optional[float] = None,
             access_delay_ms: Optional[float] = None, max_rate_mbps: Optional[float] = None,
             packets: bool = True, alpha: float = 1.05, tcp_overhead_ms: float = 0.0) -> dict:
    """lockin.py's scenario with the bottleneck's packet log and the controlled flow's perturbations."""
    import sac_runs

    d = sac_runs.scenario_dict(sac_runs.Run(variant, seed, duration_s, alpha=alpha, tcp_overhead_ms=tcp_overhead_ms))
    d["seed"] = seed
    d["flows"][-1]["timeseries"] = True
    if d.get("monitor", "bottleneck") != "bottleneck":
        raise ValueError(f"monitor {d['monitor']!r}: the packet log must be the bottleneck's")
    d["packet_log"] = packets
    f = d["flows"][-1]
    if access_mbps is not None or access_delay_ms is not None:
        link = dict(d["links"][f["route"][0]])
        if access_mbps is not None:
            link["rate_mbps"] = float(access_mbps)
        if access_delay_ms is not None:
            link["delay_ms"] = float(access_delay_ms)
        d["links"]["ctl_access"] = link
        f["route"] = ["ctl_access", *f["route"][1:]]
    if max_rate_mbps is not None:
        f["max_rate_mbps"] = float(max_rate_mbps)
    return d


def background(res, flow: int, bin_s: float, duration_s: float) -> tuple[np.ndarray, np.ndarray]:
    """(background, controlled flow) series in Mbit/s, one value per bin, from the run's time series: sac_runs.py's
    series at the run's bin, the bottleneck less the controlled flow."""
    import sac_runs

    link, own = sac_runs._series(res, [flow], int(round(duration_s / bin_s)), bin_s)
    return np.clip(link - own, 0.0, None), own


def kick(a: argparse.Namespace) -> int:
    """`kick`: the run up to --at-s is the scenario's own; from there its controlled flow's pacing changes."""
    import subprocess

    import lockin
    import tomli_w

    try:
        variant, seed = lockin.parse_run(a.run)
    except ValueError as e:
        print(f"phase.py: {e}", file=sys.stderr)
        return 2
    if not 0 < a.window_s <= a.duration_s - a.at_s:
        print(f"phase.py: --window-s {a.window_s}: between 0 and --duration-s minus --at-s", file=sys.stderr)
        return 2
    d = scenario(variant, seed, a.duration_s)
    name = f"{variant}_{seed}_kick_{a.mode}{a.value:g}_at{a.at_s:g}"
    a.dir.mkdir(parents=True, exist_ok=True)
    p = a.dir / f"{name}.toml"
    p.write_text(tomli_w.dumps(d))
    prefix = a.dir / name
    cmd = ["nice", "-n", "10", "cargo", "run", "-q", "--release", "-p", "ccscope-sim", "--example", "phase_kick",
           "--", str(p), str(prefix), f"{a.at_s}", a.mode, f"{a.value}", f"{a.duration_s - a.window_s}"]
    print(" ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=HERE.parents[1], check=True)
    link = pd.read_csv(f"{prefix}.link.csv")
    bin_s = float(link["t"].iloc[1] - link["t"].iloc[0])
    bg = np.clip(link["departed_bytes"] - link["series_bytes"], 0, None).to_numpy()
    t = link["t"].to_numpy()
    li = lockin.lock_in(lockin.blocks(bg * 8 / bin_s / 1e6, bin_s))
    print(f"{name}: lock-in {'none' if li is None else f'from {li[0]:g} s'}")
    for lo, hi in ((a.at_s - 60.0, a.at_s), (a.at_s, a.at_s + 10.0), (a.at_s + 10.0, a.duration_s)):
        m = (t >= lo) & (t < hi)
        own = link["series_bytes"].to_numpy()[m].sum() * 8 / (hi - lo) / 1e6
        print(f"  [{lo:g}, {hi:g}) s: background {bg[m].sum() / 1e3:.1f} kB ({bg[m].sum() * 8 / (hi - lo) / 1e6:.4f} "
              f"Mbit/s), controlled flow {own:.3f} Mbit/s, bottleneck drops {int(link['dropped'].to_numpy()[m].sum())}")
    log = pd.read_csv(f"{prefix}.packets.csv")
    t1 = int(round(a.duration_s * 1e9))
    t0 = t1 - int(round(a.window_s * 1e9))
    flow = int(log.loc[log["event"] == "arrival", "flow"].max())
    print(f"window [{t0 / 1e9:g}, {t1 / 1e9:g}) s, controlled flow {flow}:")
    print(report(phase_stats(log, flow, t0, t1)))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run one scenario with the bottleneck's packet log and print the offsets")
    r.add_argument("dir", type=Path)
    r.add_argument("--run", default="online:18", metavar="VARIANT:SEED")
    r.add_argument("--duration-s", type=float, default=720.0)
    r.add_argument("--window-s", type=float, default=60.0)
    r.add_argument("--access-mbps", type=float)
    r.add_argument("--access-delay-ms", type=float)
    r.add_argument("--max-rate-mbps", type=float)
    r.add_argument("--tcp-overhead-ms", type=float, default=0.0)
    r.add_argument("--no-packets", action="store_true")
    k = sub.add_parser("kick", help="the same run, its controlled flow's pacing perturbed from --at-s on")
    k.add_argument("dir", type=Path)
    k.add_argument("--run", default="online:18", metavar="VARIANT:SEED")
    k.add_argument("--duration-s", type=float, default=880.0)
    k.add_argument("--at-s", type=float, default=760.0)
    k.add_argument("--mode", choices=("none", "scale", "shift"), default="none")
    k.add_argument("--value", type=float, default=0.0, help="scale: rate factor; shift: ns added to one gap")
    k.add_argument("--window-s", type=float, default=60.0)
    a = ap.parse_args(argv)
    if a.cmd == "kick":
        return kick(a)
    import lockin
    import tomli_w

    from ccscope import api

    try:
        variant, seed = lockin.parse_run(a.run)
    except ValueError as e:
        print(f"phase.py: {e}", file=sys.stderr)
        return 2
    if not 0 < a.window_s <= a.duration_s:
        print(f"phase.py: --window-s {a.window_s}: between 0 and --duration-s", file=sys.stderr)
        return 2
    if not 0.0 <= a.tcp_overhead_ms <= 1000.0:
        print(f"phase.py: --tcp-overhead-ms {a.tcp_overhead_ms:g}: in [0, 1000] ms", file=sys.stderr)
        return 2
    d = scenario(variant, seed, a.duration_s, a.access_mbps, a.access_delay_ms, a.max_rate_mbps,
                 packets=not a.no_packets, tcp_overhead_ms=a.tcp_overhead_ms)
    tag = "".join(f"_{k}{v:g}" for k, v in (("acc", a.access_mbps), ("dly", a.access_delay_ms),
                                              ("max", a.max_rate_mbps),
                                              ("ovh", a.tcp_overhead_ms or None)) if v is not None)
    name = f"{variant}_{seed}{tag}"
    a.dir.mkdir(parents=True, exist_ok=True)
    (a.dir / f"{name}.toml").write_text(tomli_w.dumps(d))
    res = api.run(api.Scenario(tomli_w.dumps(d), None), seed=seed)
    flow = int(res.flows["flow"].max())
    bg, own = background(res, flow, d["bin_ms"] / 1000.0, a.duration_s)
    bin_s = d["bin_ms"] / 1000.0
    li = lockin.lock_in(lockin.blocks(bg, bin_s))
    fl = res.flows.set_index("flow")
    print(f"{name}: {a.duration_s:g} s; background {bg.mean():.3f} Mbit/s, controlled flow {own.mean():.3f} "
          f"Mbit/s, controlled flow dropped {int(fl.loc[flow, 'dropped'])} of {int(fl.loc[flow, 'sent'])}")
    if li is None:
        print("lock-in: none (no 100 s of 10 s blocks below 1 Mbit/s of background)")
    else:
        i = int((li[0] + 100.0) / bin_s)
        left = "never left" if li[1] >= len(bg) * bin_s - 1e-9 else f"left at {li[1]:g} s"
        after = bg[i:]
        print(f"lock-in: from {li[0]:g} s, {left}; background from lock-in + 100 s to the end: "
              f"{after.mean() * 1e3:.3f} kbit/s ({after.sum() * bin_s * 1e6 / 8 / 1e3:.1f} kB), controlled flow "
              f"{own[i:].mean():.3f} Mbit/s" if len(after) else f"lock-in: from {li[0]:g} s, {left}")
    if a.no_packets:
        return 0
    log = log_frame(res.packets)
    t1 = int(round(a.duration_s * 1e9))
    t0 = t1 - int(round(a.window_s * 1e9))
    log[log["t_ns"] >= t0].to_parquet(a.dir / f"{name}.packets.parquet")
    print(f"window [{t0 / 1e9:g}, {t1 / 1e9:g}) s, controlled flow {flow}:")
    print(report(phase_stats(log, flow, t0, t1)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
