"""Every throughput model of one CMT path side by side (paper 002 §6.1: Markov, renewal; Mathis and PFTK).

What `ccscope cmt model` prints; a model that does not apply (the renewal model under independent loss or
outside its domain, the Markov model in a build without it) gives None and a reason instead of a number.
"""

from __future__ import annotations

import dataclasses

from ccscope.models.cmt.inputs import CmtInputError, check_path
from ccscope.models.cmt.reference import mathis_throughput, pftk_throughput
from ccscope.models.cmt.renewal import reference_rtt, renewal_throughput


def compare_models(
    p: float,
    b_mbps: float,
    d_ms: float,
    rbuf_bytes: int,
    loss: str = "correlated",
    rto_max_s: float = 60.0,
    packet_bytes: int = 1500,
    *,
    eq62: bool = False,
) -> dict:
    """{"inputs", "markov" (+ "markov_error"), "renewal" (+ "renewal_error"), "reference"}, JSON-ready.

    Inputs are checked first (CmtInputError names the field); the reference formulas use the renewal model's
    RTT and RTO (eq. 36's mean round time, eq. 8 per round, over the CA period of min(W_max, E[W]); eq. 10)."""
    p, b_mbps, d_ms, w, loss, rto_max_s, packet_bytes = check_path(
        p, b_mbps, d_ms, rbuf_bytes, loss, rto_max_s, packet_bytes
    )
    out: dict = {
        "inputs": {"p": p, "b_mbps": b_mbps, "d_ms": d_ms, "rbuf_bytes": rbuf_bytes, "loss": loss,
                   "rto_max_s": rto_max_s, "packet_bytes": packet_bytes, "w": w, "eq62": eq62},
    }
    try:
        from ccscope.models.cmt.markov import markov_throughput
    except ImportError as e:
        out["markov"], out["markov_error"] = None, f"the Markov model is not in this build ({e})"
    else:
        try:
            res = markov_throughput(p, b_mbps, d_ms, rbuf_bytes, loss=loss, rto_max_s=rto_max_s, packet_bytes=packet_bytes)
        except ValueError as e:  # the inputs passed check_path: the chain's own domain (W >= 2)
            out["markov"], out["markov_error"] = None, str(e)
        else:
            out["markov"] = dataclasses.asdict(res)
    try:
        out["renewal"] = renewal_throughput(p, b_mbps, d_ms, rbuf_bytes, loss, rto_max_s, packet_bytes, eq62=eq62).to_dict()
    except CmtInputError as e:  # the inputs passed check_path: this is the renewal model's own domain (loss, p)
        out["renewal"], out["renewal_error"] = None, f"{e.field}: {e.detail}"
    rtt, rto = reference_rtt(p, b_mbps, d_ms, rbuf_bytes, rto_max_s, packet_bytes)
    out["reference"] = {
        "rtt_s": rtt,
        "rto_s": rto,
        "mathis_mbps": mathis_throughput(p, rtt, packet_bytes),
        "pftk_mbps": pftk_throughput(p, rtt, rto, w, packet_bytes),
    }
    return out
