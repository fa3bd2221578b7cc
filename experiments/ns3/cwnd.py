"""The congestion window over time, ccscope against ns-3 3.37, for Cubic, NewReno and BBR: one flow on the
12 Mbit/s, 20 ms dumbbell of ../shared/bench/ns3 (1000-packet drop-tail bottleneck). Writes
docs/ns3/cwnd.png (and .svg) and the traces beside it as CSV, each as soon as its run ends, listed in the folder's
ccscope-manifest.json with the run of this script that wrote it (`runs`: start time and process id; after a failure
half way, the folder holds this run's traces beside an older run's figure and traces, and the manifest tells which
is which); a same-named file ccscope did not write stops it before any run, and the folder's other files are left
alone.

    python experiments/ns3/cwnd.py -o docs/ns3/cwnd.png

Getting ns-3 (not needed by CI, nor by anything else in ccscope): on Debian bookworm,

    apt-get update && apt-get install -y --no-install-recommends libns3-dev g++

This script then builds its tracer from the peer's own source, ../shared/bench/ns3/dumbbell.cc (the same
topology that docs/performance.md's goodput table ran), with one addition: a callback on flow 0's
`CongestionWindow` trace source that prints every change. Or give a tracer built elsewhere with --ns3-bin
(it must accept dumbbell's options and print `cwnd <seconds> <bytes>` lines), or traces recorded earlier
with --ns3-csv-dir.
"""

from __future__ import annotations

import argparse
import csv
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from ccscope import api, store
from ccscope.analysis import figures as F
from ccscope.experiment import check_data_destination, run_id, save_figure, write_data

ROOT = Path(__file__).resolve().parents[2]
PEER = ROOT.parent / "shared" / "bench" / "ns3" / "dumbbell.cc"
# build.sh's link line (Debian's ns3 .pc files are unusable as they ship).
NS3_LIBS = ["-lns3-applications", "-lns3-traffic-control", "-lns3-internet", "-lns3-bridge",
            "-lns3-point-to-point", "-lns3-network", "-lns3-stats", "-lns3-core"]
# (label, ns-3 --tcp, ccscope controller)
SCHEMES = (("Cubic", "Cubic", "cubic"), ("NewReno", "NewReno", "newreno"), ("BBR", "Bbr", "bbr"))
STACKS = ("rfc", "linux")
FORMATS = ("png", "svg")
MSS = 1448

# The tracer's addition to dumbbell.cc: its own code, inserted at two anchors of the peer's source.
TRACE_FN = r'''
static void CcsCwnd(uint32_t, uint32_t now_bytes) {
  std::printf("cwnd %.6f %u\n", Simulator::Now().GetSeconds(), now_bytes);
}
static void CcsHook(Ptr<BulkSendApplication> app) {
  app->GetSocket()->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&CcsCwnd));
}
'''
START_ANCHOR = "        ba.Start(Seconds(startJitter->GetValue(0.0, 1.0)));\n"
START_NEW = ("        double ccsStart = startJitter->GetValue(0.0, 1.0);\n"
             "        ba.Start(Seconds(ccsStart));\n"
             # The socket exists once the application has started; flow 0 only.
             "        if (i == 0) Simulator::Schedule(Seconds(ccsStart + 1e-6), &CcsHook,\n"
             "                                        DynamicCast<BulkSendApplication>(ba.Get(0)));\n")


def build_tracer(peer: Path, out: Path) -> Path:
    """Compile dumbbell.cc plus the cwnd hook into `out`; one clear error if an anchor moved."""
    src = peer.read_text()
    if START_ANCHOR not in src or "int\nmain(" not in src and "int main(" not in src:
        raise ValueError(f"{peer}: the start line this script hooks into is not there any more")
    main_at = src.find("int\nmain(") if "int\nmain(" in src else src.find("int main(")
    patched = src[:main_at] + TRACE_FN + "\n" + src[main_at:].replace(START_ANCHOR, START_NEW, 1)
    cc = out.with_suffix(".cc")
    cc.write_text(patched)
    if shutil.which("g++") is None:
        raise ValueError("g++ not found (apt-get install g++ libns3-dev)")
    subprocess.run(["g++", "-std=c++17", "-O2", "-o", str(out), str(cc), *NS3_LIBS], check=True)
    return out


def ns3_trace(binary: Path, tcp: str, sim_s: float) -> np.ndarray:
    """(t s, cwnd packets) of flow 0 from one ns-3 run."""
    res = subprocess.run([str(binary), "--nFlows=1", f"--tcp={tcp}", "--queue=DropTail", f"--simTime={sim_s:g}"],
                         check=True, capture_output=True, text=True)
    rows = [(float(a), int(b) / MSS) for _, a, b in (ln.split() for ln in res.stdout.splitlines() if ln.startswith("cwnd "))]
    if not rows:
        raise ValueError(f"{binary} --tcp={tcp}: printed no `cwnd` lines")
    return np.array(rows)


def ccscope_trace(controller: str, sim_s: float, stack: str = "rfc") -> np.ndarray:
    """(t s, cwnd packets) of the same dumbbell in ccscope (docs/performance.md's TOML, one flow), with the
    transport's `stack` preset ("rfc", the default, or "linux")."""
    sc = {
        "name": f"ns3-dumbbell-{controller}-1", "seed": 1, "duration_s": sim_s, "bin_ms": 500, "cwnd_log": True,
        "data_link": {"rate_mbps": 12, "delay_ms": 20, "queue": {"kind": "droptail", "packets": 1000}},
        "ack_link": {"rate_mbps": 12, "delay_ms": 20},
        "flows": [{"controller": controller, "count": 1, "start_jitter_s": 1, "packet_bytes": 1500, "ack_bytes": 52,
                   "stack": stack}],
    }
    cw = api.run(sc).cwnd
    cw = cw[cw["flow"] == 0]
    return np.column_stack([cw["time_ms"].to_numpy(float) / 1e3, cw["cwnd"].to_numpy(float)])


def output_names(out: Path, record_ns3: bool) -> list[str]:
    """The files a run writes beside `out`: the figure in each format, ccscope's traces and, when it records
    them, ns-3's."""
    names = [f"{out.stem}.{fmt}" for fmt in FORMATS]
    names += [f"ns3_{tcp.lower()}.csv" for _, tcp, _ in SCHEMES] if record_ns3 else []
    return names + [f"ccscope_{ctl}_{stack}.csv" for _, _, ctl in SCHEMES for stack in STACKS]


def _write_csv(path: Path, a: np.ndarray, run: str) -> None:
    def write(p: Path) -> None:
        with p.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["time_s", "cwnd_packets"])
            w.writerows((f"{t:.6f}", f"{c:.3f}") for t, c in a)

    write_data(path, write, run)


def _read_csv(path: Path) -> np.ndarray:
    return np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", type=Path, default=ROOT / "docs" / "ns3" / "cwnd.png")
    ap.add_argument("--sim-s", type=float, default=60.0, help="Simulated seconds per run")
    ap.add_argument("--ns3-bin", type=Path, default=None, help="A tracer built already (default: build one)")
    ap.add_argument("--ns3-source", type=Path, default=PEER, help="The peer's dumbbell.cc")
    ap.add_argument("--ns3-csv-dir", type=Path, default=None, help="Use ns-3 traces recorded earlier (ns3_<tcp>.csv)")
    args = ap.parse_args(argv)
    try:
        return _draw(args)
    except (ValueError, OSError, subprocess.CalledProcessError) as e:
        print(f"error: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
        return 2


def _draw(args: argparse.Namespace) -> int:
    """Record (or read) the traces and draw the figure; bad input raises ValueError/OSError."""
    store.check_file_destination(args.out)
    out_dir = args.out.parent
    record = args.ns3_csv_dir is None
    # Before any run: never over a file ccscope did not write (the folder's manifest lists the ones it did).
    check_data_destination(out_dir, output_names(args.out, record))
    # Traces recorded earlier are read first, so a missing one stops the script before any run too.
    given = {} if record else {tcp: _read_csv(args.ns3_csv_dir / f"ns3_{tcp.lower()}.csv") for _, tcp, _ in SCHEMES}
    run = run_id()  # each file's entry in the manifest names it
    with tempfile.TemporaryDirectory(prefix="ccscope-ns3-") as tmp:
        binary = args.ns3_bin
        if binary is None and record:
            binary = build_tracer(args.ns3_source, Path(tmp) / "dumbbell_cwnd")
        panels = []
        # Each trace is written as soon as its run ends, so a later failure loses none of them.
        for label, tcp, ctl in SCHEMES:
            if record:
                ns = ns3_trace(binary, tcp, args.sim_s)
                _write_csv(out_dir / f"ns3_{tcp.lower()}.csv", ns, run)
            else:
                ns = given[tcp]
            series = [F.Series("ns-3 3.37", ns[:, 0], ns[:, 1])]
            medians = [f"ns-3 {np.median(ns[:, 1]):.0f}"]
            for stack in STACKS:
                cc = ccscope_trace(ctl, args.sim_s, stack)
                _write_csv(out_dir / f"ccscope_{ctl}_{stack}.csv", cc, run)
                series.append(F.Series(f'ccscope,\nstack = "{stack}"', cc[:, 0], cc[:, 1]))
                medians.append(f"ccscope {stack} {np.median(cc[:, 1]):.0f}")
            panels.append(F.Panel(f"{label}: 1 flow, 12 Mbit/s, 20 ms, 1000-packet drop-tail", series))
            print(f"{label}: median cwnd (packets) " + ", ".join(medians), file=sys.stderr)
    for fmt in FORMATS:
        # experiment.save_figure writes one format and closes the figure: one figure per format, drawn alike.
        p = save_figure(F.time_figure(panels, ylabel="cwnd (packets)"), args.out.with_suffix(f".{fmt}"), dpi=200,
                        run=run)
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
