"""The emulator's timing in record_tcp.sh runs: how bunched the ACKs reached the sender (downlink log), how
long the uplink sat idle (uplink log), and when the kernel left slow start (TCP_INFO CSV). One line per run.

    python experiments/mahimahi/ack_timing.py RUN_DIR...

Each RUN_DIR holds `CC-TRACE-qN-rK.csv` files; a run's `.down.log` (DOWNLINK_LOG=1) gives the ACK columns,
its `.up.log` the idle ones; a missing log leaves its columns as `-`.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Optional, Sequence

RUN = re.compile(r"^(reno|cubic|bbr)-([a-z0-9-]+)-q(\d+)-r(\d+)\.csv$")
WIRE = 1504
ACK_MAX = 200  # ACKs are 56 bytes, up to 84 with three SACK blocks; data packets are 1504
NO_SSTHRESH = 2147483647  # TCP_INFO's "infinite" ssthresh (TCP_INFINITE_SSTHRESH)
HYSTART_ACK_DELTA_MS = 2  # tcp_cubic.c: ACKs at most 2 ms apart count as one train


def bad(where: str, what: str) -> None:
    raise ValueError(f"{where}: {what}")


def events(path: Path):
    """(t ms, kind, numbers) of a Mahimahi log, header lines skipped."""
    with path.open() as f:
        for n, line in enumerate(f, 1):
            if line.startswith("#"):
                continue
            parts = line.split()
            if len(parts) < 3 or not parts[0].isdigit() or not all(p.isdigit() for p in parts[2:]):
                bad(f"{path}:{n}", f"not a Mahimahi log line: `{line.strip()}`")
            yield int(parts[0]), parts[1], [int(p) for p in parts[2:]]


def ack_columns(path: Path, seconds: float) -> dict:
    """ACK departures towards the sender while the flow sent: gaps of 20 ms or more, the most in one ms, and
    (over the first 2 s, slow start) the share of consecutive ACKs more than HyStart's 2 ms apart."""
    times = [t for t, k, v in events(path) if k == "-" and v[0] <= ACK_MAX]
    if len(times) < 2:
        bad(str(path), "fewer than two ACK departures")
    # The handshake's packets come a second before the data: start at the first ACK of a full-sized segment run.
    start = next(i for i in range(len(times) - 1) if times[i + 1] - times[i] < 10)
    # Up to the end of the sending (the handshake took 41 ms of the SECONDS), not the FIN exchange after it.
    times = [t for t in times[start:] if t <= times[start] + int(seconds * 1000) - 41]
    gaps = [b - a for a, b in zip(times, times[1:])]
    per_ms = Counter(times)
    early = [g for a, g in zip(times, gaps) if a < times[0] + 2000]
    return {
        "acks": len(times),
        "gaps_ge20": sum(g >= 20 for g in gaps),
        "max_gap_ms": max(gaps),
        "max_per_ms": max(per_ms.values()),
        "ms_ge10": sum(c >= 10 for c in per_ms.values()),
        "ss_gaps_gt2_pct": 100.0 * sum(g > HYSTART_ACK_DELTA_MS for g in early) / max(1, len(early)),
    }


def idle_columns(path: Path, seconds: float) -> dict:
    """Opportunities of the uplink that carried no data packet while the flow sent, and the longest run of them."""
    ev = list(events(path))
    first = next((t for t, k, v in ev if k == "+" and v[0] == WIRE), None)
    if first is None:
        bad(str(path), f"no {WIRE}-byte arrival")
    end = first + int(seconds * 1000) - 41
    used = Counter(t for t, k, v in ev if k == "-" and v[0] == WIRE and first <= t <= end)
    opps = sorted({t for t, k, v in ev if k == "#" and first <= t <= end})
    idle = [t for t in opps if not used.get(t)]
    longest = run = 0
    prev = None
    for t in idle:
        run = run + 1 if prev is not None and t == prev + 1 else 1
        longest, prev = max(longest, run), t
    return {"idle_ms": len(idle), "longest_idle_ms": longest}


def ss_columns(path: Path) -> dict:
    """The first finite ssthresh in TCP_INFO, when it appeared, and the congestion-avoidance state then."""
    for row in csv.DictReader(path.open()):
        if int(row["snd_ssthresh"]) < NO_SSTHRESH:
            return {"ss_exit_s": float(row["t_s"]), "ssthresh": int(row["snd_ssthresh"]),
                    "ca_state": int(row["ca_state"])}
    return {"ss_exit_s": float("nan"), "ssthresh": -1, "ca_state": -1}


COLUMNS = ["acks", "gaps_ge20", "max_gap_ms", "max_per_ms", "ms_ge10", "ss_gaps_gt2_pct", "idle_ms",
           "longest_idle_ms", "ss_exit_s", "ssthresh", "ca_state"]


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dirs", type=Path, nargs="+")
    ap.add_argument("--seconds", type=float, default=60.0, help="How long each kernel run sent")
    args = ap.parse_args(argv)
    try:
        lines = []
        for d in args.run_dirs:
            if not d.is_dir():
                bad(str(d), "not a directory")
            for p in sorted(d.iterdir()):
                if not RUN.match(p.name):
                    continue
                row = ss_columns(p)
                down, up = p.with_suffix(".down.log"), p.with_suffix(".up.log")
                if down.exists():
                    row |= ack_columns(down, args.seconds)
                if up.exists():
                    row |= idle_columns(up, args.seconds)
                lines.append([f"{d}/{p.stem}"] + [
                    f"{row[c]:.3f}" if isinstance(row.get(c), float) else row.get(c, "-") for c in COLUMNS])
        # Written only once every run has been read, so a bad log leaves just the error line.
        csv.writer(sys.stdout).writerows([["run"] + COLUMNS] + lines)
        return 0
    except (ValueError, OSError, KeyError) as e:
        print(f"error: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
