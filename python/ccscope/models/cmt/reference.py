"""Reference TCP throughput formulas the CMT models are compared with (paper 002 §4.4 footnote 4 cites PFTK).

- Mathis, Semke, Mahdavi, Ott, "The macroscopic behavior of the TCP congestion avoidance algorithm",
  CCR 27(3), 1997: BW = (MSS / RTT) * C / sqrt(p), C = sqrt(3/2) for periodic loss with one ACK per packet.
- Padhye, Firoiu, Towsley, Kurose, "Modeling TCP throughput: a simple model and its empirical validation",
  SIGCOMM 1998 (PFTK): the full model with triple-duplicate and timeout loss indications and the receiver
  window limit W_max (§2.3), b packets acknowledged per ACK, T0 the first timeout.
Both return Mbit/s of packets of `packet_bytes`.
"""

from __future__ import annotations

import math

from ccscope.models.cmt.inputs import CmtInputError, _whole, check_loss_rate, check_packet_bytes, check_positive, mbps

MATHIS_C = math.sqrt(1.5)


def mathis_throughput(p: float, rtt_s: float, packet_bytes: int = 1500, c: float = MATHIS_C) -> float:
    """Mathis et al. 1997: BW = (MSS / RTT) * C / sqrt(p), in Mbit/s."""
    p = check_loss_rate(p)
    rtt_s = check_positive(rtt_s, "rtt", "s")
    packet_bytes = check_packet_bytes(packet_bytes)
    c = check_positive(c, "c", "")
    return mbps(c / (rtt_s * math.sqrt(p)), packet_bytes)


def pftk_unconstrained_window(p: float, b: int = 1) -> float:
    """PFTK 1998 §2.1: E[W_u] = (2+b)/(3b) + sqrt(8(1-p)/(3bp) + ((2+b)/(3b))^2)."""
    k = (2.0 + b) / (3.0 * b)
    return k + math.sqrt(8.0 * (1.0 - p) / (3.0 * b * p) + k * k)


def pftk_q_hat(p: float, w: float) -> float:
    """PFTK 1998 §2.2: Q^(w) = min(1, (1-(1-p)^3)(1+(1-p)^3(1-(1-p)^(w-3))) / (1-(1-p)^w)),
    the probability that a loss indication in a window of w is a timeout. Each 1 - (1-p)^n is taken by
    expm1 (the printed form is 0/0 once 1 - p rounds to 1)."""
    ln_q = math.log1p(-p)
    a3, a_w3, a_w = -math.expm1(3.0 * ln_q), -math.expm1((w - 3.0) * ln_q), -math.expm1(w * ln_q)
    return min(1.0, a3 * (1.0 + math.exp(3.0 * ln_q) * a_w3) / a_w)


def pftk_f(p: float) -> float:
    """PFTK 1998 §2.2: f(p) = 1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 + 32p^6 (timeout back-off, doubling up to 64 T0)."""
    return 1.0 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6


def pftk_throughput(
    p: float, rtt_s: float, rto_s: float, w_max_packets: float, packet_bytes: int = 1500, b: int = 1
) -> float:
    """PFTK 1998 §2.3 (the full model with window limitation), in Mbit/s.

    E[W_u] < W_max: ((1-p)/p + E[W_u] + Q^(E[W_u])/(1-p)) / (RTT (b E[W_u]/2 + 1) + Q^(E[W_u]) T0 f(p)/(1-p));
    otherwise:      ((1-p)/p + W_max + Q^(W_max)/(1-p)) / (RTT (b W_max/8 + (1-p)/(p W_max) + 2) + Q^(W_max) T0 f(p)/(1-p))."""
    p = check_loss_rate(p)
    rtt_s = check_positive(rtt_s, "rtt", "s")
    rto_s = check_positive(rto_s, "rto", "s")
    w_max = check_positive(w_max_packets, "w_max", "packets")
    packet_bytes = check_packet_bytes(packet_bytes)
    if not _whole(b, "b") or b < 1:
        raise CmtInputError("b", f"{b!r} must be a whole number of packets >= 1")
    w_u = pftk_unconstrained_window(p, b)
    timeout_cost = rto_s * pftk_f(p) / (1.0 - p)
    if w_u < w_max:
        q_hat = pftk_q_hat(p, w_u)
        sent = (1.0 - p) / p + w_u + q_hat / (1.0 - p)
        time = rtt_s * (b * w_u / 2.0 + 1.0) + q_hat * timeout_cost
    else:
        q_hat = pftk_q_hat(p, w_max)
        sent = (1.0 - p) / p + w_max + q_hat / (1.0 - p)
        time = rtt_s * (b * w_max / 8.0 + (1.0 - p) / (p * w_max) + 2.0) + q_hat * timeout_cost
    return mbps(sent / time, packet_bytes)
