"""ccscope's `stack = "linux"` TCP against the Linux kernel's TCP through a real mm-link: reads the runs
record_tcp.sh recorded (TCP_INFO samples and Mahimahi uplink logs), runs ccscope on each run's scenario (the
same trace, started at the same opportunity, 20 ms each way, the same drop-tail queue, 1504-byte packets
and 56-byte ACKs as Mahimahi counts them), and writes docs/kernel/summary.csv (one row per run and
simulator) and a cwnd figure per link case (a panel per controller) beside it.

    python experiments/mahimahi/kernel_compare.py RUN_DIR... [-o docs/kernel]

Each RUN_DIR holds `CC-TRACE-qN-rK.csv` and `.up.log` files and the traces they ran (`TRACE.trace`).
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from ccscope import api
from ccscope.analysis import figures as F
from ccscope.experiment import check_data_destination, run_id, save_figure, write_data

ROOT = Path(__file__).resolve().parents[2]
RUN = re.compile(r"^(reno|cubic|bbr)-([a-z0-9-]+)-q(\d+)-r(\d+)\.csv$")
CONTROLLER = {"reno": "newreno", "cubic": "cubic", "bbr": "bbr"}
DELAY_MS = 20
WIRE, MSS, ACK_WIRE = 1504, 1448, 56  # IP packet + 4 bytes of TUN packet information (deviations.md)
FIELDS = ["case", "source", "run", "start_ms", "goodput_mbps", "drops", "retransmissions", "rtos",
          "qdelay_mean_ms", "qdelay_p95_ms", "median_cwnd"]


def bad(where: str, what: str) -> None:
    raise ValueError(f"{where}: {what}")


def read_log(path: Path) -> tuple[int, list[tuple[int, str, list[int]]]]:
    """(base timestamp, events (t ms, kind, numbers)) of a Mahimahi uplink log."""
    base, events = None, []
    with path.open() as f:
        for n, line in enumerate(f, 1):
            if line.startswith("#"):
                if line.startswith("# base timestamp:"):
                    base = int(line.split(":")[1])
                continue
            parts = line.split()
            if len(parts) < 3 or parts[1] not in "+-#d" or not all(p.isdigit() for p in parts[:1] + parts[2:]):
                bad(f"{path}:{n}", f"not a Mahimahi log line: `{line.strip()}`")
            events.append((int(parts[0]), parts[1], [int(p) for p in parts[2:]]))
    if base is None:
        bad(str(path), "no `# base timestamp:` header")
    return base, events


def p95(delays: Sequence[int]) -> float:
    # ccscope-sim metrics.rs: percentile = sorted[floor(0.95 n)]
    s = sorted(delays)
    return float(s[min(len(s) - 1, int(0.95 * len(s)))]) if s else float("nan")


def kernel_run(csv_path: Path, seconds: float) -> dict:
    """One kernel run: its TCP_INFO samples and the uplink log's drops and queueing delays over the sending."""
    rows = list(csv.DictReader(csv_path.open()))
    if len(rows) < 2:
        bad(str(csv_path), "fewer than two TCP_INFO samples")
    last = rows[-1]
    base, events = read_log(csv_path.with_suffix(".up.log"))
    first = next((t for t, k, v in events if k == "+" and v[0] == WIRE), None)
    if first is None:
        bad(str(csv_path.with_suffix(".up.log")), f"no {WIRE}-byte arrival")
    # The socket connected about one handshake (2 x DELAY_MS + 1 ms) before its first data packet reached the link.
    end = first + seconds * 1000 - (2 * DELAY_MS + 1)
    delays = [v[1] for t, k, v in events if k == "-" and v[0] == WIRE and first <= t <= end]
    t = np.array([float(r["t_s"]) for r in rows])
    cwnd = np.array([float(r["snd_cwnd"]) for r in rows])
    return {
        "start_ms": first - base,
        "goodput_mbps": (int(last["bytes_acked"]) - 1) * 8 / seconds / 1e6,
        "drops": sum(v[0] for tt, k, v in events if k == "d" and first <= tt <= end),
        "retransmissions": int(last["total_retrans"]),
        "rtos": int(last["total_rto"]),
        "qdelay_mean_ms": float(np.mean(delays)),
        "qdelay_p95_ms": p95(delays),
        "median_cwnd": float(np.median(cwnd)),
        "t_s": t, "cwnd": cwnd,
    }


def ccscope_run(cc: str, trace: Path, packets: int, start_ms: int, seconds: float) -> dict:
    """The same case in ccscope: the flow starts when the kernel's first data packet reached the link (the
    trace's opportunities are at the same offsets) and sends for as long."""
    start_s = start_ms / 1e3
    sc = {
        "name": f"kernel-{cc}-{trace.stem}-q{packets}", "seed": 1, "bin_ms": 500,
        "duration_s": start_s + seconds - (2 * DELAY_MS + 1) / 1e3,
        "data_link": {"trace": str(trace), "delay_ms": DELAY_MS, "queue": {"kind": "droptail", "packets": packets}},
        "flows": [{"controller": CONTROLLER[cc], "start_s": start_s, "packet_bytes": WIRE, "ack_bytes": ACK_WIRE,
                   "stack": "linux"}],
    }
    r = api.run(sc, cwnd=True)
    f = r.flows.iloc[0]
    link = r.links[r.links["link"] == "data_link"].iloc[0]
    cw = r.cwnd[r.cwnd["flow"] == 0]
    # Time since the kernel's connect(): the flow starts one handshake after it.
    t = cw["time_ms"].to_numpy(float) / 1e3 - start_s + (2 * DELAY_MS + 1) / 1e3
    c = cw["cwnd"].to_numpy(float)
    # The median over time of a step function, sampled every 10 ms as TCP_INFO was.
    grid = np.arange(0.0, seconds, 0.01)
    at = c[np.clip(np.searchsorted(t, grid, side="right") - 1, 0, len(c) - 1)]
    return {
        "start_ms": start_ms,
        "goodput_mbps": f["goodput_bytes"] * MSS / WIRE * 8 / seconds / 1e6,
        "drops": int(link["dropped"]),
        "retransmissions": int(f["retransmissions"]),
        "rtos": int(f["rtos"]),
        "qdelay_mean_ms": float(link["queue_delay_mean_ms"]),
        "qdelay_p95_ms": float(link["queue_delay_p95_ms"]),
        "median_cwnd": float(np.median(at)),
        "t_s": t, "cwnd": c,
    }


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dirs", type=Path, nargs="+")
    ap.add_argument("-o", "--out", type=Path, default=ROOT / "docs" / "kernel")
    ap.add_argument("--seconds", type=float, default=60.0, help="How long each kernel run sent")
    args = ap.parse_args(argv)
    try:
        return _compare(args)
    except (ValueError, OSError, KeyError) as e:
        print(f"error: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
        return 2


def _compare(args: argparse.Namespace) -> int:
    runs: dict[tuple[str, str, int], list[tuple[int, Path]]] = {}
    for d in args.run_dirs:
        if not d.is_dir():
            bad(str(d), "not a directory")
        for p in sorted(d.iterdir()):
            m = RUN.match(p.name)
            if m:
                runs.setdefault((m[1], m[2], int(m[3])), []).append((int(m[4]), p))
    if not runs:
        bad(" ".join(map(str, args.run_dirs)), "no CC-TRACE-qN-rK.csv runs")
    links = sorted({(tr, q) for _, tr, q in runs}, key=lambda x: (x[0], -x[1]))
    names = ["summary.csv"] + [f"cwnd-{tr}-q{q}.png" for tr, q in links]
    args.out.mkdir(parents=True, exist_ok=True)
    check_data_destination(args.out, names)
    run = run_id()
    rows, panels = [], {lk: [] for lk in links}
    for cc in ("cubic", "reno", "bbr"):
        for tr, q in links:
            case = runs.get((cc, tr, q))
            if not case:
                continue
            name = f"{cc}-{tr}-q{q}"
            series, ccs = [], None
            for k, p in sorted(case):
                trace = p.parent / f"{tr}.trace"
                kr = kernel_run(p, args.seconds)
                sr = ccscope_run(cc, trace, q, kr["start_ms"], args.seconds)
                for src, r in (("kernel", kr), ("ccscope", sr)):
                    rows.append({"case": name, "source": src, "run": k, **{f: r[f] for f in FIELDS[3:]}})
                series.append(F.Series(f"kernel run {k}", kr["t_s"], kr["cwnd"]))
                if ccs is None:  # ccscope's first run; the others differ only in the trace offset
                    ccs = F.Series("ccscope", sr["t_s"], sr["cwnd"])
                print(f"{name} r{k}: kernel " + fmt(kr) + " | ccscope " + fmt(sr), file=sys.stderr)
            panels[(tr, q)].append(F.Panel(f"{cc}: {tr}, {q}-packet drop-tail, 20 ms each way",
                                           [ccs] + series))

    def write(path: Path) -> None:
        with path.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            w.writeheader()
            for r in rows:
                w.writerow({k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in r.items()})

    write_data(args.out / "summary.csv", write, run)
    for (tr, q), ps in panels.items():
        p = save_figure(F.time_figure(ps, ylabel="cwnd (packets)"), args.out / f"cwnd-{tr}-q{q}.png", dpi=110,
                        run=run)
        print(f"wrote {p}")
    return 0


def fmt(r: dict) -> str:
    return (f"{r['goodput_mbps']:.3f} Mbit/s, {r['drops']} drops, {r['retransmissions']} retx, {r['rtos']} RTOs, "
            f"qdelay {r['qdelay_mean_ms']:.1f}/{r['qdelay_p95_ms']:.0f} ms, cwnd {r['median_cwnd']:.0f}")


if __name__ == "__main__":
    sys.exit(main())
