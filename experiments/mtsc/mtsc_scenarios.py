"""The scenarios of paper 003's experiments, as ccscope TOML dicts: the background of Figs. 1-3 and the SAC and
generic-LIED runs of Figs. 9-18.

Built from examples/pareto_background.toml (specs/003-mtsc.md §1.1-1.2): 32 NewReno ON/OFF clients on the
access-link topology, Pareto file sizes with the mean held at 32 kB across alpha (so k = 32 kB (alpha - 1) /
alpha), exponential idle times, the bottleneck's 10 ms link series. The controlled flows (connection 33 and up)
are appended after the background, so the background's per-flow draws (keyed by seed and flow index) are the
same for every controller variant under one seed (common random numbers). The parameters and the calibrated
idle means registered before the runs (spec A1) are in experiments/mtsc/registered.toml.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Optional, Sequence

import tomli_w

from ccscope import api

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parents[1] / "examples" / "pareto_background.toml"
REGISTERED_FILE = HERE / "registered.toml"
REGISTERED = tomllib.loads(REGISTERED_FILE.read_text())
# Spec §1.2 [D]: the mean file size is held fixed across alpha.
MEAN_BYTES = int(REGISTERED["background"]["mean_bytes"])
# The example's idle mean, calibrated for 5 Mbit/s at alpha = 1.35 (see the example's header).
EXAMPLE_IDLE_MEAN_S = 1.5603
BIN_S = 0.010
# Fig. 7: every link 10 Mbit/s and 5 ms; the base RTT of a 1 kB packet is 3 x 2 x 5 ms plus serialisation.
ACCESS_DELAY_MS = 5.0
BASE_RTT_MS = 32.5


def _idle_tables() -> dict:
    """(bottleneck Mbit/s, size law, load Mbit/s) -> {alpha: idle mean s}, from registered.toml."""
    out: dict = {}
    for e in REGISTERED.get("idle_mean", []):
        key = (float(e["bottleneck_mbps"]), e["size"], float(e["load_mbps"]))
        out.setdefault(key, {}).update({round(float(a), 2): float(m) for a, m in e["by_alpha"].items()})
    return out


IDLE_TABLES = _idle_tables()
# Figs. 1-3's table: 5 Mbit/s of Pareto background on the 10 Mbit/s bottleneck.
IDLE_MEAN_S: dict = IDLE_TABLES.get((10.0, "pareto", 5.0), {})


def pareto_k_bytes(alpha: float, mean_bytes: float = MEAN_BYTES) -> float:
    """The Pareto scale k giving `mean_bytes`: mean = alpha k / (alpha - 1)."""
    return mean_bytes * (alpha - 1.0) / alpha


def idle_mean_for(alpha: float) -> float:
    """The calibrated idle mean at `alpha` for 5 Mbit/s (the example's if `alpha` was not calibrated)."""
    return IDLE_MEAN_S.get(round(float(alpha), 2), EXAMPLE_IDLE_MEAN_S)


def registered_idle_mean(alpha: float, load_mbps: float, bottleneck_mbps: float = 10.0, size: str = "pareto") -> float:
    """The registered idle mean of one background; a combination never calibrated is an error (spec A1)."""
    table = IDLE_TABLES.get((float(bottleneck_mbps), size, float(load_mbps)), {})
    key = round(float(alpha), 2) if size == "pareto" else 0.0
    if key not in table:
        raise ValueError(f"{REGISTERED_FILE}: no idle mean registered for {size} background, alpha {alpha}, "
                         f"{load_mbps} Mbit/s on {bottleneck_mbps} Mbit/s (run experiments/mtsc/calibrate.py)")
    return table[key]


def background_dict(alpha: float, duration_s: float, *, idle_mean_s: float, name: Optional[str] = None,
                    bottleneck_mbps: float = 10.0, size: str = "pareto") -> dict:
    """The example's background at Pareto shape `alpha` (or the light-tailed log-normal control), as a dict."""
    if not alpha > 1.0:
        raise ValueError(f"alpha = {alpha}: the mean file size is finite only for alpha > 1")
    d = api.Scenario.load(EXAMPLE).to_dict()
    d["name"] = name or f"mtsc_background_a{alpha:.2f}"
    d["duration_s"] = float(duration_s)
    d["bin_ms"] = int(round(BIN_S * 1000))
    d["timeseries"] = "link"
    if bottleneck_mbps != 10.0:
        # §4.3.5 variant (spec §1.1 [D]): the server-side links rise with the bottleneck so G1-G2 stays the
        # only bottleneck; client access links stay at 10 Mbit/s.
        for link in ("bottleneck", "server0", "server1"):
            d["links"][link]["rate_mbps"] = float(bottleneck_mbps)
    for f in d["flows"]:
        t = f["traffic"]
        if t.get("kind") != "onoff" or t.get("size") != "pareto":
            raise ValueError(f"{EXAMPLE}: every flow must be Pareto ON/OFF background")
        if size == "pareto":
            t["alpha"] = float(alpha)
        elif size == "lognormal":
            # Spec A3's light-tailed control: log-normal sizes of the same mean, CV 1 (all moments finite).
            t.pop("alpha", None)
            t["size"] = "lognormal"
            t["std_bytes"] = float(REGISTERED["background"]["light_std_bytes"])
        else:
            raise ValueError(f"size = {size!r}: pareto or lognormal")
        t["mean_bytes"] = MEAN_BYTES
        t["off_mean_s"] = float(idle_mean_s)
    return d


def background(alpha: float, duration_s: float, *, idle_mean_s: Optional[float] = None,
               name: Optional[str] = None, bottleneck_mbps: float = 10.0, size: str = "pareto") -> str:
    """The example's background at Pareto shape `alpha`, run for `duration_s`, as TOML text."""
    m = idle_mean_for(alpha) if idle_mean_s is None else float(idle_mean_s)
    return tomli_w.dumps(background_dict(alpha, duration_s, idle_mean_s=m, name=name,
                                         bottleneck_mbps=bottleneck_mbps, size=size))


def controller_params(controller: str, **over) -> dict:
    """The registered LIED (and, for sac, SAC) parameters, with `over` on top."""
    c = REGISTERED["controller"]
    p = {k: c[k] for k in ("delta_pkts", "a", "k", "tau_floor_ms")}
    if controller == "sac":
        p.update({k: c[k] for k in ("theta_star", "t1_s", "t2_s")})
    p.update(over)
    return p


def access_delay_for_rtt(rtt_ms: float) -> float:
    """The controlled flow's access-link delay giving base RTT `rtt_ms` (spec §6 item 8: only that delay moves)."""
    d = ACCESS_DELAY_MS + (rtt_ms - BASE_RTT_MS) / 2.0
    if d < 0:
        raise ValueError(f"rtt_ms = {rtt_ms}: below the path's {BASE_RTT_MS - 2 * ACCESS_DELAY_MS} ms without the access link")
    return d


def with_controlled(d: dict, controller: str, params: dict, *, count: int = 1, rtt_ms: float = BASE_RTT_MS,
                    flow_series: bool = False) -> dict:
    """`d` with `count` infinite controlled flows appended (connection 33 and up, spec §1.2): paced, over the
    datagram transport; clients alternate servers (spec §1.1 [D]). `flow_series` keeps their 10 ms series."""
    if count < 1:
        raise ValueError(f"count = {count}: at least one controlled flow")
    access = "access"
    if abs(rtt_ms - BASE_RTT_MS) > 1e-9:
        access = "sac_access"
        d["links"]["sac_access"] = {**d["links"]["access"], "delay_ms": access_delay_for_rtt(rtt_ms)}
        d["links"]["sac_access_back"] = {**d["links"]["access_back"], "delay_ms": access_delay_for_rtt(rtt_ms)}
    n0 = (count + 1) // 2
    for server, n in (("server0", n0), ("server1", count - n0)):
        if n == 0:
            continue
        f = {"controller": controller, "count": n, "transport": "datagram", "packet_bytes": 1000, "ack_bytes": 40,
             "route": [access, "bottleneck", server], "ack_route": [f"{server}_back", "bottleneck_back", f"{access}_back"],
             **params}
        if flow_series:
            f["timeseries"] = True
        d["flows"].append(f)
    return d


def controlled_indices(d: dict) -> Sequence[int]:
    """Flow numbers of the controlled (non-ON/OFF) flows, in order."""
    out, i = [], 0
    for f in d["flows"]:
        n = int(f.get("count", 1))
        if (f.get("traffic") or {}).get("kind") != "onoff":
            out.extend(range(i, i + n))
        i += n
    return out
