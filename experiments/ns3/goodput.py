"""Payload goodput on the ns-3 dumbbell of ../shared/bench/ns3, ccscope beside ns-3 3.37: 12 and 100 Mbit/s,
1 and 16 flows, 20 ms, 1000-packet drop-tail bottleneck (docs/performance.md, "Goodput against ns-3").

    python experiments/ns3/goodput.py --tcp Bbr [--ns3-bin /path/to/dumbbell]

Without --ns3-bin only ccscope's side runs. ns-3 (not needed by CI): `apt-get install libns3-dev`, then
`sh ../shared/bench/ns3/build.sh` builds `dumbbell`; each ns-3 case runs
`dumbbell --nFlows=N --tcp=TCP --queue=DropTail --bottleneckRate=RATE --simTime=T`.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import Optional, Sequence

from ccscope import api

# (flows, Mbit/s, simulated s): 300 s at 12 Mbit/s, 60 s at 100 Mbit/s (ns-3's runs stay short); 16 flows
# at 12 Mbit/s also over 30 s, before ns-3 3.37's TcpBbr stalls (docs/performance.md).
CASES = ((1, 12, 300), (16, 12, 300), (16, 12, 30), (1, 100, 60), (16, 100, 60))
# ns-3 counts TCP payload: 1448 of every 1500-byte packet (MSS with the timestamp option).
PAYLOAD = 1448 / 1500
CONTROLLER = {"Bbr": "bbr", "Cubic": "cubic", "NewReno": "newreno"}


def ccscope_goodput(controller: str, flows: int, rate_mbps: int, sim_s: int, extra: Optional[dict] = None) -> dict:
    """Payload goodput (Mbit/s) and loss counters of the dumbbell in ccscope."""
    flow = {"controller": controller, "count": flows, "start_jitter_s": 1, "packet_bytes": 1500, "ack_bytes": 52,
            **(extra or {})}
    sc = {
        "name": f"ns3-dumbbell-{controller}-{flows}", "seed": 1, "duration_s": sim_s, "bin_ms": 500,
        "data_link": {"rate_mbps": rate_mbps, "delay_ms": 20, "queue": {"kind": "droptail", "packets": 1000}},
        "ack_link": {"rate_mbps": rate_mbps, "delay_ms": 20},
        "flows": [flow],
    }
    r = api.run(sc)
    fl = r.flows
    return {"goodput": float(fl.goodput_mbps.sum()) * PAYLOAD, "drops": int(fl.dropped.sum()),
            "rtos": int(fl.rtos.sum()), "retx": int(fl.retransmissions.sum()), "jain": r.summary.get("jain_index")}


def ns3_goodput(binary: Path, tcp: str, flows: int, rate_mbps: int, sim_s: int) -> dict:
    out = subprocess.run([str(binary), f"--nFlows={flows}", f"--tcp={tcp}", "--queue=DropTail",
                          f"--bottleneckRate={rate_mbps}Mbps", f"--simTime={sim_s}"],
                         check=True, capture_output=True, text=True).stdout
    num = {k: float(v) for k, v in re.findall(r"^(\w+)=([0-9.]+)$", out, re.M)}
    return {"goodput": num["goodput_mbps"], "drops": int(num["qdisc_drops"])}


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tcp", default="Bbr", choices=sorted(CONTROLLER))
    ap.add_argument("--ns3-bin", type=Path, default=None, help="ns-3 dumbbell binary (default: ccscope only)")
    ap.add_argument("--stack", default="rfc", choices=("rfc", "linux"), help="ccscope's transport preset")
    args = ap.parse_args(argv)
    ctl = CONTROLLER[args.tcp]
    print(f'| case | ns-3.37 | ccscope `stack = "{args.stack}"` | ccscope drops / RTOs / retransmissions |')
    print("|---|---:|---:|---:|")
    for flows, rate, sim_s in CASES:
        c = ccscope_goodput(ctl, flows, rate, sim_s, {"stack": args.stack})
        ns = ns3_goodput(args.ns3_bin, args.tcp, flows, rate, sim_s) if args.ns3_bin else None
        rel = f" ({(c['goodput'] / ns['goodput'] - 1):+.1%})" if ns else ""
        print(f"| {flows} {args.tcp}, {rate} Mbit/s, {sim_s} s | {ns['goodput'] if ns else float('nan'):.3f} | "
              f"{c['goodput']:.3f}{rel} | {c['drops']:,} / {c['rtos']} / {c['retx']:,} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
