"""The packet-level scenarios of paper 002's experiments, written as ccscope TOML.

Configured from the paper's path parameters only (rate, round-trip delay, loss, RBUF): nothing here
calls the analytic models, so the simulation is an independent check of them (issue 10).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import tomli_w

# Paper 002 §6.1.1: 1500 B packets; SACKs are small. RBUF in bytes, KB = 1000 B (specs/002-cmt.md A11).
PACKET_BYTES = 1500
SACK_BYTES = 60
# Reverse paths carry only SACKs: fast and lossless, so the path's loss and rate are the forward ones.
REVERSE_MBPS = 1000.0
# The forward queue never overflows: the association never has more than RBUF outstanding, so every
# loss is the path's random loss p, as the models assume (§3.1).
QUEUE_PACKETS = 100_000


@dataclass(frozen=True)
class Path:
    """One path of paper 002 Fig. 2: bottleneck rate b (Mbit/s), round-trip delay d (ms), loss p."""

    b_mbps: float
    d_ms: float
    p: float


def _links(i: int, path: Path, loss: str) -> dict:
    # The round-trip propagation delay d of eq. 8, split evenly over the two directions.
    half = path.d_ms / 2
    return {
        f"p{i}": {
            "rate_mbps": path.b_mbps,
            "delay_ms": half,
            "queue": {"kind": "droptail", "packets": QUEUE_PACKETS},
            "loss": {"kind": loss, "p": path.p},
        },
        f"p{i}_back": {"rate_mbps": REVERSE_MBPS, "delay_ms": half},
    }


def association(
    paths: Sequence[Path],
    rbuf_bytes: int,
    duration_s: float,
    *,
    loss: str = "round_correlated",
    management: str = "none",
    limits: Optional[Sequence[int]] = None,
    mode: str = "model",
    name: str = "cmt",
) -> str:
    """One bulk SCTP-CMT association over `paths` sharing a receive buffer of `rbuf_bytes`."""
    links: dict = {}
    for i, path in enumerate(paths):
        links.update(_links(i, path, loss))
    flow: dict = {
        "controller": "sctp",
        "transport": "cmt",
        "cmt_mode": mode,
        "rbuf_bytes": int(rbuf_bytes),
        "packet_bytes": PACKET_BYTES,
        "ack_bytes": SACK_BYTES,
        "window_management": management,
        "paths": [{"route": [f"p{i}"], "ack_route": [f"p{i}_back"]} for i in range(len(paths))],
    }
    if limits is not None:
        flow["cwnd_limits_packets"] = [int(c) for c in limits]
    doc = {
        "name": name,
        "seed": 1,
        "duration_s": float(duration_s),
        "bin_ms": 1000,
        "timeseries": "none",
        "links": links,
        "flows": [flow],
    }
    return tomli_w.dumps(doc)


def duration_for(paths: Sequence[Path], rbuf_bytes: int, loss_events: int, cap_s: float) -> float:
    """A run long enough for about `loss_events` loss events, from an upper bound on the send rate.

    A path sends at most min(b, RBUF/d) packets/s, and a loss event (a round with a loss) comes about
    once per 1/p packets, so this under-estimates the time needed; the runner checks the count it got.
    """
    rate = 0.0
    for path in paths:
        pps = min(path.b_mbps * 1e6 / 8 / PACKET_BYTES, rbuf_bytes / PACKET_BYTES / (path.d_ms / 1e3))
        rate += pps * path.p
    return min(cap_s, max(60.0, loss_events / rate))
