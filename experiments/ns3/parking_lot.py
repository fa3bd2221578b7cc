"""The parking lot of examples/parking_lot.toml, ccscope beside ns-3 3.37, with the long flow over 1, 2 and 3 hops:
per-flow payload goodput, the long flow's share, per-link utilisation and drops, Jain's index
(docs/performance.md, "ns-3 comparison: parking lot").

    python experiments/ns3/parking_lot.py -o /tmp/ns3lot --tcp NewReno --sim-s 300
    python experiments/ns3/parking_lot.py -o /tmp/ns3lot --tcp NewReno --sim-s 300 --start-jitter 1 --seeds 10

ns-3 (not needed by CI, nor by anything else in ccscope): on Debian bookworm,
`apt-get install -y --no-install-recommends libns3-dev g++`. The script builds experiments/ns3/parking_lot.cc
into the -o folder (as ../shared/bench/ns3/build.sh builds dumbbell.cc), or takes one built elsewhere with
--ns3-bin, or reads its outputs recorded earlier with --ns3-json-dir. Every file it writes goes in the -o folder,
each as soon as its run ends, listed in the folder's ccscope-manifest.json; a same-named file ccscope did not write
stops it before any build or run, and the folder's other files are left alone.

Both sides run the same settings: the example's links, routes and start times (every flow at 0 s; or each
uniform in [0, --start-jitter) s, from each simulator's own generator), 1502-byte data packets and 54-byte ACKs
on the wire (ns-3: MSS 1448 + 12 B of timestamps + TCP/IP 40 B + PPP 2 B), initial window 10, an ACK per
segment, SACK, a 1 s minimum RTO. ccscope runs `stack = "ns3"` (ns-3.37's loss-recovery defaults) unless
--stack says otherwise. Goodput is payload bytes delivered in order to the application over --sim-s.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Optional, Sequence

from ccscope import _native, api
from ccscope.experiment import check_data_destination, write_data

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(__file__).resolve().with_name("parking_lot.cc")
EXAMPLE = ROOT / "examples" / "parking_lot.toml"
# build.sh's link line (Debian's ns3 .pc files are unusable as they ship).
NS3_LIBS = ["-lns3-applications", "-lns3-traffic-control", "-lns3-internet", "-lns3-bridge",
            "-lns3-point-to-point", "-lns3-network", "-lns3-stats", "-lns3-core"]
CONTROLLER = {"NewReno": "newreno", "Cubic": "cubic"}
MSS = 1448
WIRE_BYTES = 1502  # IP 1500 + PPP 2: what ns-3's point-to-point device serializes per data segment
ACK_BYTES = 54  # IP 20 + TCP 20 + timestamps 12 + PPP 2 (ns-3's ACKs grow by their SACK blocks)
HOPS = (1, 2, 3)
BINARY = "parking_lot"


def build(source: Path, out: Path) -> Path:
    """Compile parking_lot.cc as build.sh compiles dumbbell.cc, into `out` (staged, listed in the manifest)."""
    if shutil.which("g++") is None:
        raise ValueError("g++ not found (apt-get install g++ libns3-dev)")
    if not source.is_file():
        raise ValueError(f"{source}: no such file (--ns3-source)")
    write_data(out, lambda p: subprocess.run(["g++", "-std=c++17", "-O2", "-o", str(p), str(source), *NS3_LIBS],
                                             check=True))
    return out


def ns3_name(tcp: str, hops: int, seed: int) -> str:
    return f"ns3_{tcp.lower()}_{hops}hop_seed{seed}.json"


def ccscope_name(tcp: str, stack: str, hops: int, seed: int) -> str:
    return f"ccscope_{CONTROLLER[tcp]}_{stack}_{hops}hop_seed{seed}.json"


def table_name(tcp: str, stack: str) -> str:
    return f"parking_lot_{tcp.lower()}_{stack}.md"


def output_names(tcp: str, stack: str, seeds: Sequence[int], build_ns3: bool, record_ns3: bool) -> list[str]:
    """Every file a run writes in the -o folder."""
    names = [BINARY] if build_ns3 else []
    for h in HOPS:
        for s in seeds:
            names += [ns3_name(tcp, h, s)] if record_ns3 else []
            names.append(ccscope_name(tcp, stack, h, s))
    return names + [table_name(tcp, stack)]


def ns3_run(binary: Path, tcp: str, hops: int, sim_s: float, jitter_s: float, seed: int) -> dict:
    """One ns-3 run: its JSON (parking_lot.cc's output)."""
    cmd = [str(binary), f"--hops={hops}", f"--tcp={tcp}", f"--simTime={sim_s:g}", f"--startJitter={jitter_s:g}",
           f"--seed={seed}"]
    res = subprocess.run(cmd, check=True, capture_output=True, text=True)
    try:
        return check_run(json.loads(res.stdout), hops, f"{binary} --hops={hops}")
    except json.JSONDecodeError as e:
        raise ValueError(f"{binary} --hops={hops}: its output is not JSON ({e})") from None


def check_run(d: dict, hops: int, origin: str) -> dict:
    """A run's JSON must have a flow per path (the long one first) and a link per hop."""
    try:
        flows, links = d["flows"], d["links"]
        ok = (len(flows) == hops + 1 and len(links) == hops and all("goodput_mbps" in f for f in flows)
              and all({"utilization", "drops"} <= set(l) for l in links))
    except (KeyError, TypeError):
        ok = False
    if not ok:
        raise ValueError(f"{origin}: expected {hops + 1} flows with goodput_mbps and {hops} links with "
                         "utilization and drops")
    return d


def scenario_flows(hops: int) -> list[dict]:
    """The example's flows for a lot of `hops` links: its long flow over hop1..hop<hops>, ACKs back the same way,
    and the cross flows of those links."""
    flows = api.Scenario.load(EXAMPLE).to_dict()["flows"]
    long, cross = flows[0], flows[1:]
    if len(cross) != len(HOPS) or any(len(f["route"]) != 1 or len(f["ack_route"]) != 1 for f in cross):
        raise ValueError(f"{EXAMPLE}: expected one long flow and {len(HOPS)} one-link cross flows")
    route = [f["route"][0] for f in cross[:hops]]
    ack_route = [f["ack_route"][0] for f in cross[:hops]][::-1]
    if hops == len(HOPS) and (route != long["route"] or ack_route != long["ack_route"]):
        raise ValueError(f"{EXAMPLE}: the long flow does not cross the cross flows' links in order")
    return [{**long, "route": route, "ack_route": ack_route}] + [dict(f) for f in cross[:hops]]


def ccscope_overrides(tcp: str, stack: str, hops: int, sim_s: float, jitter_s: float, seed: int) -> dict:
    """`ccscope.run` overrides that make the example the ns-3 program's scenario."""
    # An ACK per segment, as the ns-3 program runs (DelAckCount = 1), whatever the preset's receiver does.
    same = {"controller": CONTROLLER[tcp], "packet_bytes": WIRE_BYTES, "ack_bytes": ACK_BYTES, "stack": stack,
            "delayed_ack": "none"}
    if jitter_s > 0:
        same["start_jitter_s"] = jitter_s
    return {"duration_s": sim_s, "seed": seed, "flows": [{**f, **same} for f in scenario_flows(hops)]}


def ccscope_run(tcp: str, stack: str, hops: int, sim_s: float, jitter_s: float, seed: int) -> dict:
    """One ccscope run in the ns-3 program's JSON shape; goodput in payload bytes (x MSS / wire bytes)."""
    r = api.run(EXAMPLE, overrides=ccscope_overrides(tcp, stack, hops, sim_s, jitter_s, seed))
    flows = [{"flow": int(f.flow), "goodput_mbps": f.goodput_bytes * 8 / sim_s / 1e6 * MSS / WIRE_BYTES,
              "retransmissions": int(f.retransmissions), "rtos": int(f.rtos), "dropped": int(f.dropped)}
             for f in r.flows.itertuples()]
    by_name = {l.link: l for l in r.links.itertuples()}
    links = [{"link": f"hop{k}", "utilization": float(by_name[f"hop{k}"].utilization),
              "drops": int(by_name[f"hop{k}"].dropped)} for k in range(1, hops + 1)]
    return {"config": {"hops": hops, "tcp": tcp, "stack": stack, "simTime": sim_s, "startJitter": jitter_s,
                       "seed": seed}, "flows": flows, "links": links}


def metrics(d: dict) -> dict:
    """The compared figures of one run: goodputs, the long flow's share (long / (long + mean cross), as
    crates/ccscope-sim/tests/topology.rs defines it), Jain's index over every flow, per-link utilisation and drops."""
    g = [float(f["goodput_mbps"]) for f in d["flows"]]
    cross = sum(g[1:]) / len(g[1:])
    m = {"long": g[0], **{f"cross{k}": x for k, x in enumerate(g[1:], 1)},
         "share": g[0] / (g[0] + cross) if g[0] + cross > 0 else float("nan"),
         "jain": sum(g) ** 2 / (len(g) * sum(x * x for x in g)) if any(g) else float("nan")}
    for l in d["links"]:
        m[f"{l['link']} util"] = float(l["utilization"])
        m[f"{l['link']} drops"] = float(l["drops"])
    m.update({"rtos long": float(d["flows"][0].get("rtos", float("nan")))})
    return m


def _fmt(key: str, v: float) -> str:
    if key.endswith("drops") or key.startswith("rtos"):
        return f"{v:,.1f}" if v != int(v) else f"{int(v):,}"
    if key.endswith("util") or key in ("share", "jain"):
        return f"{v:.3f}"
    return f"{v:.3f}"


def table(tcp: str, stack: str, results: dict) -> str:
    """Markdown: per hop count and figure, ns-3 and ccscope (mean over seeds, with min-max when several) and
    ccscope's difference. `results[hops]` = (ns-3 runs, ccscope runs)."""
    lines = [f'| hops | figure | ns-3.37 {tcp} | ccscope {CONTROLLER[tcp]}, `stack = "{stack}"` | difference |',
             "|---|---|---:|---:|---:|"]
    for hops, (ns, cc) in sorted(results.items()):
        mn, mc = [metrics(d) for d in ns], [metrics(d) for d in cc]
        for key in mn[0]:
            a, b = [m[key] for m in mn], [m[key] for m in mc]

            def cell(v: list) -> str:
                mean = sum(v) / len(v)
                return _fmt(key, mean) + (f" ({_fmt(key, min(v))}-{_fmt(key, max(v))})" if len(v) > 1 else "")

            ma, mb = sum(a) / len(a), sum(b) / len(b)
            diff = f"{mb / ma - 1:+.1%}" if ma and not (key.endswith("drops") or key.startswith("rtos")) else ""
            lines.append(f"| {hops} | {key} | {cell(a)} | {cell(b)} | {diff} |")
    return "\n".join(lines) + "\n"


def summary(tcp: str, stack: str, results: dict) -> str:
    """Markdown, one row per hop count and simulator: the long flow, the cross flows' mean, share, Jain's index,
    the hops' mean utilisation, drops over all hops and the long flow's RTOs; mean over seeds, with the median and
    min-max when several."""
    lines = ["| hops | simulator | long flow Mbit/s | cross flows (mean) | share | Jain | utilisation (mean of hops) | "
             "drops (all hops) | long flow RTOs |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for hops, runs in sorted(results.items()):
        for name, side in zip(("ns-3.37", f'ccscope `"{stack}"`'), runs):
            ms = [metrics(d) for d in side]
            cols = {"long": [m["long"] for m in ms],
                    "cross": [sum(m[f"cross{k}"] for k in range(1, hops + 1)) / hops for m in ms],
                    "share": [m["share"] for m in ms], "jain": [m["jain"] for m in ms],
                    "util": [sum(m[f"hop{k} util"] for k in range(1, hops + 1)) / hops for m in ms],
                    "drops": [sum(m[f"hop{k} drops"] for k in range(1, hops + 1)) for m in ms],
                    "rtos": [m["rtos long"] for m in ms]}
            fmt = {"long": "{:.3f}", "cross": "{:.3f}", "share": "{:.3f}", "jain": "{:.3f}", "util": "{:.4f}",
                   "drops": "{:,.0f}", "rtos": "{:.1f}" if len(ms) > 1 else "{:.0f}"}

            def cell(k: str) -> str:
                v, f = cols[k], fmt[k]
                text = f.format(sum(v) / len(v))
                return text + (f" ({f.format(statistics.median(v))}; {f.format(min(v))}-{f.format(max(v))})"
                               if len(v) > 1 else "")

            lines.append(f"| {hops} | {name} | " + " | ".join(cell(k) for k in cols) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", type=Path, required=True, help="Folder for ns-3's binary, every run's JSON and the table")
    ap.add_argument("--tcp", default="NewReno", choices=sorted(CONTROLLER))
    ap.add_argument("--sim-s", type=float, default=300.0, help="Simulated seconds per run")
    ap.add_argument("--start-jitter", type=float, default=0.0,
                    help="Flows start uniformly in [0, this) s (default 0: all at 0 s, as the example)")
    ap.add_argument("--seeds", type=int, default=1, help="Runs 1..N per hop count (seed / ns-3 --seed)")
    ap.add_argument("--stack", default="ns3", choices=("rfc", "ns3", "linux"), help="ccscope's transport preset")
    ap.add_argument("--ns3-bin", type=Path, default=None, help="parking_lot built already (default: build one)")
    ap.add_argument("--ns3-source", type=Path, default=SOURCE, help="parking_lot.cc to build")
    ap.add_argument("--ns3-json-dir", type=Path, default=None, help="Use ns-3 outputs recorded earlier (ns3_*.json)")
    args = ap.parse_args(argv)
    if not args.sim_s > 0 or args.seeds < 1 or not 0 <= args.start_jitter < args.sim_s:
        print("error: --sim-s must be > 0, --seeds >= 1 and --start-jitter in [0, --sim-s)", file=sys.stderr)
        return 2
    try:
        return _compare(args)
    except (ValueError, OSError, subprocess.CalledProcessError, _native.ScenarioError) as e:
        print(f"error: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
        return 2


def _compare(args: argparse.Namespace) -> int:
    out, tcp, stack = args.out, args.tcp, args.stack
    seeds = list(range(1, args.seeds + 1))
    record = args.ns3_json_dir is None
    build_ns3 = record and args.ns3_bin is None
    # Before any build or run: never over a file ccscope did not write (the folder's manifest lists the ones it did).
    check_data_destination(out, output_names(tcp, stack, seeds, build_ns3, record))
    given = {} if record else {
        (h, s): check_run(json.loads((args.ns3_json_dir / ns3_name(tcp, h, s)).read_text()), h,
                          str(args.ns3_json_dir / ns3_name(tcp, h, s)))
        for h in HOPS for s in seeds}
    binary = build(args.ns3_source, out / BINARY) if build_ns3 else args.ns3_bin
    results = {}
    for hops in HOPS:
        ns, cc = [], []
        for seed in seeds:
            # Each output is written as soon as its run ends, so a later failure loses none of them.
            if record:
                d = ns3_run(binary, tcp, hops, args.sim_s, args.start_jitter, seed)
                write_data(out / ns3_name(tcp, hops, seed), lambda p, d=d: p.write_text(json.dumps(d, indent=1) + "\n"))
            else:
                d = given[(hops, seed)]
            ns.append(d)
            c = ccscope_run(tcp, stack, hops, args.sim_s, args.start_jitter, seed)
            write_data(out / ccscope_name(tcp, stack, hops, seed), lambda p, c=c: p.write_text(json.dumps(c, indent=1) + "\n"))
            cc.append(c)
            print(f"{hops} hop(s), seed {seed}: long flow {d['flows'][0]['goodput_mbps']:.3f} (ns-3) / "
                  f"{c['flows'][0]['goodput_mbps']:.3f} (ccscope) Mbit/s", file=sys.stderr, flush=True)
        results[hops] = (ns, cc)
    text = table(tcp, stack, results) + "\n" + summary(tcp, stack, results)
    write_data(out / table_name(tcp, stack), lambda p: p.write_text(text))
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
