#!/usr/bin/env python3
"""Writes the black-box regression scenarios of tests/scenarios.rs, one folder per family.

Deterministic: the same script writes the same files. Each family's full grid is enumerated in a fixed
order (a scenario's seed is its index in that grid, so thinning never changes a kept scenario), then the
switch families (recovery, onoff) are thinned to a per-stack pairwise covering set: every stack
sees every value of every switch next to every value of every other switch at least once.

    python3 crates/ccscope-sim/tests/scenarios/gen.py

It replaces only the *.toml files in the family folders below (all written by this script).
"""

import itertools
from pathlib import Path

HERE = Path(__file__).resolve().parent
STACKS = ["rfc", "linux", "ns3"]
TRI = [None, True, False]  # switch left at the stack's default, forced on, forced off


def word(v):
    return {None: "def", True: "on", False: "off"}.get(v, v)


def switches(row, keys):
    return "".join(f"{k} = {str(row[k]).lower()}\n" for k in keys if row[k] is not None)


def cover(rows, factors):
    """Greedy per-stack pairwise cover: the earliest row that adds the most unseen
    (stack, factor a = x, factor b = y) triples, until every triple some row has is seen."""

    def feats(r):
        return {(r["stack"], a, r[a], b, r[b]) for a, b in itertools.combinations(factors, 2)}

    todo = set().union(*(feats(r) for r in rows))
    kept = []
    while todo:
        best = max(rows, key=lambda r: len(feats(r) & todo))  # max keeps the earliest on ties
        kept.append(best)
        todo -= feats(best)
    return sorted(kept, key=lambda r: r["seed"])


def recovery():
    """Gilbert-Elliott bursts, a 20 ms minimum RTO and a 0.4 s datagram burst: spurious timeouts, F-RTO."""
    rows = []
    for stack, rack, tlp, dsack, frto, cc in itertools.product(
        STACKS, TRI, TRI, TRI, [None, False, True], ["newreno", "cubic"]
    ):
        if cc == "cubic" and (dsack is False or tlp is None or frto is not None):
            continue
        if frto is not None and (rack is None or dsack is None):
            continue
        rows.append(dict(stack=stack, rack=rack, tlp=tlp, dsack=dsack, frto=frto, cc=cc, seed=len(rows) + 3))
    for r in cover(rows, ["rack", "tlp", "dsack", "frto", "cc"]):
        name = (
            f"{r['stack']}_rack-{word(r['rack'])}_tlp-{word(r['tlp'])}_dsack-{word(r['dsack'])}"
            f"_frto-{word(r['frto'])}_{r['cc']}"
        )
        yield name, f"""seed = {r['seed']}
duration_s = 15
bin_ms = 100
[links.fwd]
rate_mbps = 12
delay_ms = 5
queue = {{ kind = "droptail", packets = 150 }}
loss = {{ kind = "gilbert_elliott", p_gb = 0.005, p_bg = 0.4, loss_good = 0.002, loss_bad = 0.4 }}
[links.back]
rate_mbps = 100
delay_ms = 0
[[flows]]
controller = "{r['cc']}"
transport = "reliable"
stack = "{r['stack']}"
{switches(r, ['rack', 'tlp', 'dsack', 'frto'])}count = 2
min_rto_ms = 20
initial_rto_ms = 30
start_jitter_s = 0.5
route = ["fwd"]
ack_route = ["back"]
[[flows]]
controller = "fixed"
window = 400
transport = "datagram"
route = ["fwd"]
ack_route = ["back"]
start_s = 3
stop_s = 3.4
"""


# Application limits of the onoff family: none, a small receive buffer, a per-send overhead, a small
# send buffer read out at 5 Mbit/s (a read rate needs a limited receive buffer, hence rbuf_bytes).
ONOFF_EXTRA = {
    "plain": "",
    "rbuf": "rbuf_bytes = 30000\n",
    "overhead": "send_overhead_ms = 2\n",
    "sndbuf": "sndbuf_bytes = 20000\nread_rate_mbps = 5\nrbuf_bytes = 60000\n",
}


def onoff():
    """ON/OFF and finite-transfer applications over lossy links both ways, delayed-ACK flavours."""
    rows = []
    for stack, rack, tlp, frto, dack, extra in itertools.product(
        STACKS, [None, False, True], [None, False, True], [None, True], ["none", "linux", "ns3"], list(ONOFF_EXTRA)
    ):
        if (rack is not None) + (tlp is not None) + (frto is not None) > 1 and extra != "plain":
            continue
        rows.append(dict(stack=stack, rack=rack, tlp=tlp, frto=frto, dack=dack, extra=extra, seed=len(rows) + 1))
    for r in cover(rows, ["rack", "tlp", "frto", "dack", "extra"]):
        opts = switches(r, ["rack", "tlp", "frto"]) + ONOFF_EXTRA[r["extra"]]
        name = (
            f"{r['stack']}_rack-{word(r['rack'])}_tlp-{word(r['tlp'])}_frto-{word(r['frto'])}"
            f"_dack-{r['dack']}_{r['extra']}"
        )
        yield name, f"""seed = {r['seed']}
duration_s = 30
bin_ms = 100
packet_log = true
[links.fwd]
rate_mbps = 6
delay_ms = 15
queue = {{ kind = "droptail", packets = 20 }}
loss = {{ kind = "bernoulli", p = 0.01 }}
[links.back]
rate_mbps = 6
delay_ms = 15
loss = {{ kind = "bernoulli", p = 0.02 }}
[[flows]]
controller = "newreno"
stack = "{r['stack']}"
delayed_ack = "{r['dack']}"
{opts}count = 3
traffic = {{ kind = "onoff", mean_bytes = 60000, off_mean_s = 0.3 }}
route = ["fwd"]
ack_route = ["back"]
[[flows]]
controller = "cubic"
stack = "{r['stack']}"
delayed_ack = "{r['dack']}"
{opts}transfers_bytes = [3000, 150000, 1, 40000]
think_s = 0.5
route = ["fwd"]
ack_route = ["back"]
"""


LOSSES = {
    "bernoulli": '{ kind = "bernoulli", p = 0.02 }',
    "gilbert_elliott": '{ kind = "gilbert_elliott", p_gb = 0.01, p_bg = 0.3, loss_good = 0.001, loss_bad = 0.5 }',
    "list": '{ kind = "list", packets = [5, 6, 7, 30, 31, 100, 101, 102, 103, 104, 500, 1000, 1001] }',
    "round_correlated": '{ kind = "round_correlated", p = 0.01 }',
    "burst_after_loss": '{ kind = "burst_after_loss", p = 0.01, window_ms = 20 }',
}


def loss():
    """Every loss model on a dumbbell's data link (the memoryless ones on the ACK link too), each stack."""
    for (kind, model), stack in itertools.product(LOSSES.items(), STACKS):
        ack_loss = model if kind in ("bernoulli", "gilbert_elliott") else '{ kind = "none" }'
        yield f"{kind}_{stack}", f"""seed = 11
duration_s = 15
bin_ms = 50
packet_log = true
[data_link]
rate_mbps = 10
delay_ms = 10
queue = {{ kind = "droptail", packets = 25 }}
loss = {model}
[ack_link]
rate_mbps = 10
delay_ms = 10
loss = {ack_loss}
[[flows]]
controller = "newreno"
stack = "{stack}"
count = 3
start_jitter_s = 1
[[flows]]
controller = "cubic"
stack = "{stack}"
count = 1
"""


QUEUES = {
    "droptail": '{ kind = "droptail", packets = 50 }',
    "pie": '{ kind = "pie", packets = 100 }',
    "pie_rfc8033": '{ kind = "pie", flavour = "rfc8033", packets = 100 }',
    "codel": '{ kind = "codel", packets = 100 }',
    "red": '{ kind = "red", packets = 60 }',
    "drophead": '{ kind = "drophead", bytes = 60000 }',
    "infinite": '{ kind = "infinite" }',
}


def trace():
    """Mahimahi trace links both ways under every queue, per-flow access links, zero-delay hops, 9000-B packets."""
    for (qname, q), stack in itertools.product(QUEUES.items(), ["rfc", "linux"]):
        yield f"{qname}_{stack}", f"""seed = 4
duration_s = 12
bin_ms = 100
packet_log = true
monitor = "cell"
[links.access]
per_flow = true
rate_mbps = 50
delay_ms = 0
queue = {{ kind = "droptail", packets = 1000 }}
[links.cell]
trace = "Verizon-LTE-short.down"
delay_ms = 0
queue = {q}
[links.wire]
rate_mbps = 100
delay_ms = 20
[links.up]
trace = "Verizon-LTE-short.up"
delay_ms = 20
queue = {q}
loss = {{ kind = "bernoulli", p = 0.005 }}
[links.access_back]
per_flow = true
rate_mbps = 50
delay_ms = 0
[[flows]]
controller = "newreno"
stack = "{stack}"
count = 2
route = ["access", "cell", "wire"]
ack_route = ["up", "access_back"]
[[flows]]
controller = "bbr"
stack = "{stack}"
route = ["access", "cell"]
ack_route = ["up"]
monitor = "access"
[[flows]]
controller = "copa"
route = ["cell"]
ack_route = ["up"]
packet_bytes = 9000
"""


MULTIPATH = {
    "cmt_model": 'controller = "sctp"\ncmt_mode = "model"\nrbuf_bytes = 128000\nwindow_management = "dynamic"\ntransport = "cmt"\n',
    "cmt_rfc4960": 'controller = "sctp"\ncmt_mode = "rfc4960"\nrbuf_bytes = 64000\ntransport = "cmt"\n',
    "datagram": 'controller = "fixed"\nwindow = 60\n',
}


def multipath():
    """SCTP-CMT (both modes) and a datagram flow over a per-flow access link and two unlike paths."""
    for name, flow in MULTIPATH.items():
        yield name, f"""seed = 21
duration_s = 20
bin_ms = 100
packet_log = true
monitor = "p0"
[links.acc]
per_flow = true
rate_mbps = 40
delay_ms = 0
[links.p0]
rate_mbps = 12
delay_ms = 5
queue = {{ kind = "droptail", packets = 40 }}
loss = {{ kind = "bernoulli", p = 0.01 }}
[links.p0b]
rate_mbps = 100
delay_ms = 5
[links.p1]
rate_mbps = 8
delay_ms = 30
queue = {{ kind = "pie", packets = 40 }}
loss = {{ kind = "list", packets = [3, 4, 5, 50, 51, 300] }}
[links.p1b]
rate_mbps = 100
delay_ms = 0
[[flows]]
{flow}count = 2
paths = [
  {{ route = ["acc", "p0"], ack_route = ["p0b"] }},
  {{ route = ["acc", "p1"], ack_route = ["p1b"] }},
]
"""


def huge():
    """64-B, 1500-B and 65000-B packets on a constant-rate chain with zero-delay hops, per-flow monitor."""
    for pb in [64, 1500, 65000]:
        yield f"bytes_{pb}", f"""seed = 8
duration_s = 10
bin_ms = 100
packet_log = true
monitor = "b"
[links.a]
rate_mbps = 40
delay_ms = 0
[links.b]
rate_mbps = 10
delay_ms = 0
queue = {{ kind = "droptail", bytes = 300000 }}
loss = {{ kind = "gilbert_elliott", p_gb = 0.01, p_bg = 0.3, loss_good = 0.0, loss_bad = 0.3 }}
[links.c]
rate_mbps = 1000
delay_ms = 25
[links.back]
rate_mbps = 1000
delay_ms = 25
[[flows]]
controller = "cubic"
stack = "linux"
packet_bytes = {pb}
count = 2
route = ["a", "b", "c"]
ack_route = ["back"]
monitor = "a"
[[flows]]
controller = "newreno"
stack = "rfc"
packet_bytes = {pb}
route = ["b"]
ack_route = ["back"]
delayed_ack = "linux"
"""


def sac():
    """SAC datagram flows (one multipath) beside NewReno and LIED, a per-flow last hop, link time series.
    Seeds 1 and 3 of the 1-3 grid (seed k: loss k/1000, last hop k-1 ms); seed 2 lies between them."""
    for k in [1, 3]:
        yield f"seed{k}", f"""seed = {k}
duration_s = 30
bin_ms = 10
timeseries = "link"
packet_log = true
[links.bottleneck]
rate_mbps = 10
delay_ms = 5
queue = {{ kind = "droptail", packets = 50 }}
loss = {{ kind = "bernoulli", p = {k / 1000} }}
[links.last]
per_flow = true
rate_mbps = 9
delay_ms = {k - 1}
[links.other]
rate_mbps = 7
delay_ms = 0
queue = {{ kind = "pie", packets = 50 }}
[links.back]
rate_mbps = 10
delay_ms = 5
[[flows]]
controller = "newreno"
count = 3
route = ["bottleneck", "last"]
ack_route = ["back"]
[[flows]]
controller = "sac"
transport = "datagram"
count = 2
route = ["bottleneck", "last"]
ack_route = ["back"]
[[flows]]
controller = "sac"
transport = "datagram"
paths = [ {{ route = ["bottleneck", "last"], ack_route = ["back"] }}, {{ route = ["other"], ack_route = ["back"] }} ]
[[flows]]
controller = "lied"
transport = "datagram"
route = ["other"]
ack_route = ["back"]
"""


def flowdelay():
    """Per-flow data and ACK delays (zero ones included) on a CoDel dumbbell, on a trace and at a fixed rate."""
    for k, (name, rate) in enumerate([("trace", 'trace = "Verizon-LTE-short.down"'), ("fixed", "rate_mbps = 10")], 1):
        yield name, f"""seed = {k}
duration_s = 20
bin_ms = 50
packet_log = true
[data_link]
{rate}
delay_ms = 0
queue = {{ kind = "codel", packets = 200 }}
loss = {{ kind = "gilbert_elliott", p_gb = 0.01, p_bg = 0.3, loss_good = 0.0, loss_bad = 0.3 }}
[ack_link]
rate_mbps = 10
delay_ms = 0
[[flows]]
controller = "cubic"
stack = "linux"
count = 2
delay_ms = 0
ack_delay_ms = 13
[[flows]]
controller = "newreno"
stack = "rfc"
count = 2
delay_ms = 37
ack_delay_ms = 0
[[flows]]
controller = "copa"
delay_ms = 5
[[flows]]
controller = "sprout"
delay_ms = 20
"""


FAMILIES = [recovery, onoff, loss, trace, multipath, huge, sac, flowdelay]


def main():
    for family in FAMILIES:
        d = HERE / family.__name__
        d.mkdir(exist_ok=True)
        for old in d.glob("*.toml"):
            old.unlink()
        n = 0
        for name, text in family():
            (d / f"{name}.toml").write_text(f"# {family.__name__}: written by gen.py, do not edit\n{text}")
            n += 1
        print(f"{family.__name__}: {n}")


if __name__ == "__main__":
    main()
