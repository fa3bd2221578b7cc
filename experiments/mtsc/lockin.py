"""Lock-in of the Fig. 14 alpha-1.05 runs (docs/deviations.md, "Measured at the spec's run length"): when the
TCP background collapses beside generic LIED or on-line inverse SAC, what the background and the controlled
flow were doing before, and whether the run ever leaves the collapse.

    python experiments/mtsc/lockin.py run DIR [--runs online:11 online:12 generic:18 ...] [--duration-s 10000]
    python experiments/mtsc/lockin.py table DIR

`run` writes each scenario exactly as experiments/mtsc/sac_runs.py builds it (report seed, 5 Mbit/s,
alpha 1.05), with the controlled flow's 10 ms series kept (measurement only), and traces it with
`cargo run --release -p ccscope-sim --example lied_trace`; a same-named file ccscope did not write stops it
before any run, and each run's files are committed together, listed in DIR's ccscope-manifest.json. `table`
reads the traces and prints one row per run.

Criterion: the background is the bottleneck's departures minus the controlled flow's, in 10 s blocks; the
lock-in starts at the first block that begins a run of at least HOLD_S seconds of blocks below
THRESHOLD_MBPS, and is left if such a run ends before the run does. A lull is a stretch of at least LULL_S
seconds in which no more than LULL_ACTIVE of the 32 clients have a transfer under way (a client is idle
during its OFF periods, on a 0.1 s grid). The clamp is the access-link rate, 1,250 packets/s.
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BLOCK_S = 10.0
THRESHOLD_MBPS = 1.0
HOLD_S = 100.0
LULL_S = 1.0
LULL_ACTIVE = 2
N_CLIENTS = 32
# On-line SAC's collapse seeds and two kept ones; generic LIED's one collapse seed (18) and a kept one
# (docs/reproductions/mtsc/sac_runs.jsonl).
DEFAULT_RUNS = ("online:11", "online:14", "online:18", "online:19", "online:12", "online:16",
                "generic:18", "generic:12")


def parse_run(text: str) -> tuple[str, int]:
    """'online:11' -> ('online', 11)."""
    variant, sep, seed = text.partition(":")
    if not sep or variant not in ("online", "generic") or not seed.isdigit():
        raise ValueError(f"--runs {text!r}: VARIANT:SEED with VARIANT online or generic")
    return variant, int(seed)


def blocks(values: np.ndarray, bin_s: float, block_s: float = BLOCK_S) -> np.ndarray:
    """Means of `values` (one per bin of `bin_s`) over whole blocks of `block_s`."""
    b = int(round(block_s / bin_s))
    n = len(values) // b * b
    return values[:n].reshape(-1, b).mean(axis=1)


def below_runs(x: np.ndarray, threshold: float) -> list[tuple[int, int]]:
    """[start, end) index ranges where x < threshold, in order."""
    low = np.concatenate([[False], x < threshold, [False]])
    edges = np.flatnonzero(np.diff(low.astype(np.int8)))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


def lock_in(bg_blocks: np.ndarray, block_s: float = BLOCK_S, threshold: float = THRESHOLD_MBPS,
            hold_s: float = HOLD_S) -> Optional[tuple[float, float]]:
    """(start s, end s) of the first run of blocks below `threshold` lasting `hold_s` or more, or None."""
    need = int(np.ceil(hold_s / block_s))
    for a, b in below_runs(bg_blocks, threshold):
        if b - a >= need:
            return a * block_s, b * block_s
    return None


def active_transfers(off: pd.DataFrame, times: np.ndarray, n_clients: int = N_CLIENTS) -> np.ndarray:
    """Clients with a transfer under way at each of `times` (every client is ON outside its OFF periods)."""
    starts = np.sort(off["start_s"].to_numpy())
    ends = np.sort(off["end_s"].to_numpy())
    idle = np.searchsorted(starts, times, side="right") - np.searchsorted(ends, times, side="right")
    return n_clients - idle


def lulls(active: np.ndarray, step_s: float, most: int = LULL_ACTIVE, min_s: float = LULL_S) -> list[tuple[float, float]]:
    """(start s, length s) of every stretch of at least `min_s` with no more than `most` clients active."""
    out = []
    for a, b in below_runs(active, most + 0.5):
        if (b - a) * step_s >= min_s:
            out.append((a * step_s, (b - a) * step_s))
    return out


@dataclass
class Trace:
    """One run's trace (lied_trace's files): the bottleneck's and the controlled flow's 10 ms series in Mbit/s,
    the bottleneck's drops per bin, the clients' OFF periods, and the SAC rows or the LIED epochs."""

    name: str
    bin_s: float
    link_mbps: np.ndarray
    own_mbps: np.ndarray
    dropped: np.ndarray
    off: pd.DataFrame
    sac: Optional[pd.DataFrame]
    epochs: Optional[pd.DataFrame]


def load(prefix: Path) -> Trace:
    link = pd.read_csv(f"{prefix}.link.csv")
    bin_s = float(link["t"].iloc[1] - link["t"].iloc[0])
    to_mbps = 8 / bin_s / 1e6
    sac = pd.read_csv(f"{prefix}.sac.csv")
    epochs = pd.read_csv(f"{prefix}.epochs.csv")
    return Trace(prefix.name, bin_s, link["departed_bytes"].to_numpy() * to_mbps,
                 link["series_bytes"].to_numpy() * to_mbps, link["dropped"].to_numpy(),
                 pd.read_csv(f"{prefix}.off.csv"),
                 sac if len(sac) else None, epochs if len(epochs) else None)


# The files `run` writes for one run `{variant}_{seed}`: its scenario and lied_trace's traces.
OUTPUTS = (".toml", ".epochs.csv", ".sac.csv", ".link.csv", ".off.csv", ".flows.csv")


def output_names(runs: Sequence[tuple[str, int]]) -> list[str]:
    return [f"{variant}_{seed}{ext}" for variant, seed in runs for ext in OUTPUTS]


def scenarios(runs: Sequence[tuple[str, int]], duration_s: float) -> list[tuple[str, str]]:
    """(stem, TOML text) of each run's scenario as sac_runs builds it, with the controlled flow's series kept."""
    import tomli_w

    sys.path.insert(0, str(HERE))
    import sac_runs

    out = []
    for variant, seed in runs:
        d = sac_runs.scenario_dict(sac_runs.Run(variant, seed, duration_s))
        d["seed"] = seed
        d["flows"][-1]["timeseries"] = True
        out.append((f"{variant}_{seed}", tomli_w.dumps(d)))
    return out


def run(out: Path, runs: Sequence[tuple[str, int]], duration_s: float) -> None:
    """Trace each run into `out`: never over a file ccscope did not write (checked before any run), each run's
    files committed together into the folder's manifest once lied_trace has written them all."""
    from ccscope import store

    store.FolderWriter(out, overwrite=True, merge=True, names=output_names(runs), option="run").abort()
    for (stem, text), r in zip(scenarios(runs, duration_s), runs):
        with store.FolderWriter(out, overwrite=True, merge=True, names=output_names([r]), option="run") as w:
            p = w.stage / f"{stem}.toml"
            p.write_text(text)
            cmd = ["nice", "-n", "10", "cargo", "run", "-q", "--release", "-p", "ccscope-sim", "--example",
                   "lied_trace", "--", str(p), str(w.stage / stem)]
            print(" ".join(cmd), flush=True)
            subprocess.run(cmd, cwd=ROOT, check=True)


def steps(tr: Trace) -> pd.DataFrame:
    """One row per measurement of the controlled flow: t, the rate the measured epoch was paced at (packets/s),
    eq. 3's decreases, its losses and gamma (kB/s), and for SAC the level l of S_t, E(L2 | l) and a_t (NaN for
    generic LIED)."""
    if tr.sac is not None:
        s = tr.sac
        return pd.DataFrame({"t": s["t"], "paced": s["sent_pps"].ffill(), "dec": s["dec"], "lost": s["lost"],
                             "gamma": s["gamma_kBps"], "level": s["level"], "expected": s["expected_l2"],
                             "a_t": s["a_t"].where(s["inc"] > 0)})
    e = tr.epochs
    nan = np.full(len(e), np.nan)
    lost = (e["sent"] * e["c"]).round()
    return pd.DataFrame({"t": e["t"], "paced": e["paced_pps"], "dec": (e["step"] == "dec").astype(int),
                         "lost": lost, "gamma": e["gamma_kBps"], "level": nan, "expected": nan, "a_t": nan})


def stretches(mask: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) index ranges where `mask` holds."""
    return below_runs(np.where(mask, 0.0, 1.0), 0.5)


def at_clamp_since(st: pd.DataFrame, t: float, clamp: float) -> float:
    """Start of the stretch of measurements at the clamp that holds at time `t` (the last one below it)."""
    before = st[(st["t"] <= t) & (st["paced"] < clamp - 1e-6)]
    return float(before["t"].iloc[-1]) if len(before) else 0.0


def clamp_visits(st: pd.DataFrame, clamp: float) -> pd.DataFrame:
    """One row per stretch of measured epochs sent at the clamp: start t, epochs, the reference gamma (that of
    the last epoch sent below it, what eq. 3 judges clamp epochs against) and how many of its epochs fell below."""
    at = st["paced"].to_numpy() >= clamp - 1e-6
    t, g = st["t"].to_numpy(), st["gamma"].to_numpy()
    rows = [(t[a], b - a, g[a - 1], int((g[a:b] < g[a - 1]).sum())) for a, b in stretches(at) if a > 0]
    return pd.DataFrame(rows, columns=["t", "epochs", "ref", "below_ref"])


def summarise(tr: Trace, clamp: float = 1250.0, lull_active: int = LULL_ACTIVE) -> dict:
    """The row of one run (module docstring's criterion)."""
    bg = np.clip(tr.link_mbps - tr.own_mbps, 0.0, None)
    dur = len(bg) * tr.bin_s
    bg_blocks = blocks(bg, tr.bin_s)
    li = lock_in(bg_blocks)
    st = steps(tr)
    grid = np.arange(0.0, dur, 0.1)
    active = active_transfers(tr.off, grid)
    row: dict = {"run": tr.name, "bg_mbps": bg.mean(), "own_mbps": tr.own_mbps.mean()}
    row["lock_in_s"] = li[0] if li else math.nan
    row["left_s"] = (li[1] if li[1] < dur else math.nan) if li else math.nan
    # The lock-in's clamp stretch starts at t0; the comparisons below are over [0, t0) (the whole run if none).
    t0 = at_clamp_since(st, li[0] + BLOCK_S, clamp) if li else dur
    row["clamp_from_s"] = t0 if li else math.nan
    ls = [x for x in lulls(active, 0.1, most=lull_active) if x[0] + x[1] < t0 - 30.0]
    row["lulls_per_ks"] = len(ls) / max(t0 - 30.0, 1.0) * 1000.0
    row["longest_lull_s"] = max((x[1] for x in ls), default=0.0)
    # Visits to the clamp before t0 (stretches of epochs sent at it); those held for 3 epochs or more, and how
    # many of these measured an epoch below the reference (the gamma of the epoch before the stretch).
    v = clamp_visits(st, clamp)
    v = v[v["t"] < t0 - 1.0]
    row["touches_per_ks"] = len(v) / max(t0, 1.0) * 1000.0
    held = v[v["epochs"] >= 3]
    row["held3"] = len(held)
    row["held3_below_ref"] = int((held["below_ref"] > 0).sum())
    row["held3_ref_median"] = float(held["ref"].median()) if len(held) else math.nan
    if li is None:
        return row
    i0 = int(t0 / tr.bin_s)
    row["bg_prev10_mbps"] = bg[max(0, i0 - int(10 / tr.bin_s)): i0].mean()
    row["bg_prev60_mbps"] = bg[max(0, i0 - int(60 / tr.bin_s)): i0].mean()
    # How unusual that 10 s was: the share of earlier 10 s windows (1 s apart) with no more background.
    per_s = blocks(bg[:i0], tr.bin_s, 1.0)
    win = np.convolve(per_s, np.ones(10) / 10, mode="valid")[:-10]
    row["prev10_rank"] = float(np.mean(win <= row["bg_prev10_mbps"])) if len(win) else math.nan
    w = (grid >= t0 - 10.0) & (grid < t0)
    row["active_prev10_min"] = int(active[w].min())
    row["active_prev10_mean"] = float(active[w].mean())
    # The lull that ends nearest the clamp: the stretch with at most `lull_active` active ending in [t0 - 10, t0 + 5].
    near = [(a * 0.1, (b - a) * 0.1) for a, b in below_runs(active, lull_active + 0.5)
            if t0 - 10.0 <= b * 0.1 <= t0 + 5.0]
    row["lull_before_s"] = max((x[1] for x in near), default=0.0)
    row["lulls_as_long"] = sum(1 for x in ls if x[1] >= row["lull_before_s"])
    pre = st[(st["t"] >= t0 - 10.0) & (st["t"] < t0)]
    row["dec_prev10"] = int(pre["dec"].sum())
    row["level_prev10"] = float(pre["level"].mean())
    row["a_t_prev10"] = float(pre["a_t"].mean())
    post = st[st["t"] >= t0 + 10.0]
    row["dec_after"] = int(post["dec"].sum())
    row["gamma_min_after"] = float(post["gamma"].min())
    # Eq. 3 at the clamp judges each epoch against the last one sent below it (deviations.md, "At the upper
    # clamp"): that epoch's gamma, and how far the lowest gamma measured at the clamp stays above it.
    ref = st[(st["t"] <= t0) & (st["paced"] < clamp - 1e-6)]
    row["gamma_ref"] = float(ref["gamma"].iloc[-1]) if len(ref) else math.nan
    row["gamma_min_clamp"] = float(st[st["t"] > t0]["gamma"].min())
    late = int((t0 + 100.0) / tr.bin_s)
    row["drops_after"] = int(tr.dropped[late:].sum())
    row["own_lost_after"] = int(st[st["t"] >= t0 + 100.0]["lost"].sum())
    # One RTO expiry per client per rto_max (60 s, RFC 6298 §2.5) over the same time.
    row["rto_attempts_after"] = N_CLIENTS * (dur - t0 - 100.0) / 60.0
    row["level_after"] = float(post["level"].mean())
    row["a_t_after"] = float(post["a_t"].mean())
    row["active_after_min"] = int(active[grid >= t0 + 60.0].min()) if (grid >= t0 + 60.0).any() else -1
    row["bg_after_mbps"] = bg[i0 + int(100 / tr.bin_s):].mean()
    return row


COLUMNS = {
    "run": "run", "bg_mbps": "bg Mbit/s", "lock_in_s": "lock-in s", "left_s": "left s", "clamp_from_s": "clamp from s",
    "bg_prev60_mbps": "bg prev 60 s", "bg_prev10_mbps": "bg prev 10 s", "prev10_rank": "rank",
    "active_prev10_min": "act min", "active_prev10_mean": "act mean", "lull_before_s": "lull s",
    "lulls_as_long": "earlier lulls >=", "lulls_per_ks": "lulls/1000 s", "longest_lull_s": "longest lull s",
    "touches_per_ks": "clamp visits/1000 s", "held3": "held >= 3 epochs", "held3_below_ref": "of which < ref",
    "held3_ref_median": "their ref", "dec_prev10": "dec prev 10 s",
    "level_prev10": "l prev 10 s", "a_t_prev10": "a_t prev 10 s", "gamma_ref": "gamma ref kB/s",
    "gamma_min_clamp": "min gamma at clamp", "dec_after": "dec after", "level_after": "l after",
    "active_after_min": "act after min", "bg_after_mbps": "bg after", "drops_after": "drops after",
    "rto_attempts_after": "32 x T/60 s", "own_lost_after": "own lost after",
}


def table(rows: Sequence[dict]) -> str:
    df = pd.DataFrame(rows)
    df = df[[c for c in COLUMNS if c in df]].rename(columns=COLUMNS)
    def fmt(x: float) -> str:
        if abs(x) >= 100:
            return f"{x:.0f}"
        return f"{x:.3g}" if x == 0 or abs(x) >= 0.001 else "<0.001"
    return df.to_string(index=False, float_format=fmt, na_rep="-")


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="write the scenarios and trace them")
    r.add_argument("dir", type=Path)
    r.add_argument("--runs", nargs="+", default=list(DEFAULT_RUNS), metavar="VARIANT:SEED")
    r.add_argument("--duration-s", type=float, default=10_000.0)
    t = sub.add_parser("table", help="one row per traced run")
    t.add_argument("dir", type=Path)
    a = ap.parse_args(argv)
    if a.cmd == "run":
        try:
            runs = [parse_run(x) for x in a.runs]
        except ValueError as e:
            print(f"lockin.py: {e}", file=sys.stderr)
            return 2
        from ccscope import store

        try:
            run(a.dir, runs, a.duration_s)
        except store.OutputError as e:
            print(f"lockin.py: {e}", file=sys.stderr)
            return 2
        return 0
    prefixes = sorted(p.with_suffix("").with_suffix("") for p in a.dir.glob("*.link.csv"))
    if not prefixes:
        print(f"lockin.py: {a.dir}: no traces (*.link.csv); run `lockin.py run {a.dir}` first", file=sys.stderr)
        return 2
    print(table([summarise(load(p)) for p in prefixes]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
