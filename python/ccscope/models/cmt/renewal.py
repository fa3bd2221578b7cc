"""The renewal throughput model of one CMT path (paper 002, Wallace & Shami, §4.4, eqs. 23-55; eq. 62 of §6.1.2).

A sawtooth of congestion-avoidance (CA) periods, each ended by fast retransmit or, with probability P^TO,
by a timeout followed by exponential back-off (EB) and slow start (SS); the throughput is eq. 55.
Readings (docs/deviations.md, "Paper 002: renewal model (§4.4) and window allocation (§5)"):
- A7: eq. 32 reads E[W] = 2E[X] - 2 (its printed second line "2E[X] + 1" does not follow from its first);
  eqs. 33, 34, 39-41 and 44-55 are implemented as printed, inconsistencies noted there.
- Round times: every round lasts eq. 8's RTT at its own CWND (§4.2), so E[T^CA] (eq. 36) sums eq. 8 over the
  CA period's rounds (CWND rising one packet a round from W/2 to W, eqs. 25 and 29; then E[V] rounds at W_max,
  Fig. 4) and E[T^SS] (eq. 54) over the slow-start rounds 1, 2, 4, ... (eq. 47). Once CWND > b d, a round
  lasts CWND/b: the model then carries queueing delay and no window cap at the BDP. RTO = 3 RTT (eq. 10) of
  the round that timed out (CWND = W), capped at RTO_max, and M consecutive doublings (eq. 18).
- The model is derived for the correlated loss model (eqs. 26-27); loss="independent" is refused, and so is a
  p whose E[W] is below one packet (p > 8/13 with eq. 33), where eq. 55 turns negative.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Optional

from ccscope.models.cmt.inputs import CmtInputError, check_path, mbps, packets_per_second

LOSS_LIMITED = "loss-limited"
WINDOW_LIMITED = "window-limited"


@dataclass(frozen=True)
class RenewalResult:
    """Throughput of paper 002's renewal model and every intermediate quantity of eqs. 26-55 (packets, seconds)."""

    throughput_mbps: float
    throughput_pps: float
    regime: str  # "loss-limited" (E[W] < W_max, eqs. 33-34) or "window-limited" (eqs. 39-41)
    w_max: int  # W_max = floor(RBUF / packet) (footnote 8)
    expected_window: float  # E[W], eq. 33 (or the root of eq. 31 with eq. 62), before the W_max cap
    window: float  # the window the CA period runs at: E[W] or W_max
    expected_rounds_x: float  # E[X], eq. 34 or eq. 41
    expected_v: Optional[float]  # E[V], rounds at W_max (eq. 40); None when loss-limited
    rounds: float  # E[R] = E[X] + 1 (eq. 35)
    p_timeout: float  # P^TO (eq. 44)
    rtt_s: float  # eq. 36's RTT: E[T^CA] / E[R], the mean of eq. 8 over the CA period's rounds
    rtt_last_s: float  # eq. 8 at CWND = window, the last round of the period
    rto_s: float  # 3 rtt_last_s (eq. 10), capped at RTO_max
    backoff_m: int  # M (eq. 18)
    sent_ca: float  # E[S^CA] (eq. 28; eq. 39 when window-limited)
    lost_ca: float  # E[L^CA] = window/2 (§4.4.1), or eq. 62
    time_ca_s: float  # E[T^CA] (eq. 36)
    time_eb_s: float  # E[T^EB] (eq. 46)
    sent_ss: float  # E[S^SS] (eq. 53)
    time_ss_s: float  # E[T^SS] (eq. 54)
    eq62: bool

    def to_dict(self) -> dict:
        return asdict(self)


def _expected_window_eq33(p: float) -> float:
    # Paper 002 eq. 33: E[W] = sqrt(8(1-p)/(3p) + 1/9) - 1/3.
    return math.sqrt(8.0 * (1.0 - p) / (3.0 * p) + 1.0 / 9.0) - 1.0 / 3.0


def _expected_rounds_eq34(p: float) -> float:
    # Paper 002 eq. 34: E[X] = sqrt(2(1-p)/(3p) + 1/36) + 5/6 (= E[W]/2 + 1, A7).
    return math.sqrt(2.0 * (1.0 - p) / (3.0 * p) + 1.0 / 36.0) + 5.0 / 6.0


def one_minus_q_pow(p: float, n: float) -> float:
    """1 - (1-p)^n without cancellation: -expm1(n log1p(-p)) (1 - p rounds to 1 for p < 1.1e-16)."""
    return -math.expm1(n * math.log1p(-p))


def lost_eq62(p: float, w: float) -> float:
    """Paper 002 eq. 62: E[L] = sum_{i=1}^{W} i p (1-p)^{i-1} = (1 - (1 + pW)(1-p)^W) / p, as printed.

    With y = -W log1p(-p) the closed form is e^-y (e^y - 1 - pW) / p; for y <= 1 the bracket is summed as
    W (r S(y) + r - 1), r = y / (pW), S(y) = (e^y - 1 - y) / y, so small p neither cancels nor underflows."""
    r = -math.log1p(-p) / p
    y = w * p * r
    if y > 1.0:
        return (one_minus_q_pow(p, w) - p * w * math.exp(-y)) / p
    # S(y) = sum_{k>=2} y^(k-1) / k!, to the last bit (y <= 1: 18 terms at most).
    s, term, k = 0.0, 1.0, 1
    while True:
        k += 1
        term *= y / k
        if term <= 1e-17 * s:
            break
        s += term
    # r - 1 = sum_{k>=2} p^(k-1) / k for p < 1/2 (the subtraction would cancel), else as is.
    if p < 0.5:
        rm1, pk, k = 0.0, 1.0, 1
        while True:
            k += 1
            pk *= p
            if pk / k <= 1e-17 * rm1:
                break
            rm1 += pk / k
    else:
        rm1 = r - 1.0
    return math.exp(-y) * w * (r * s + rm1)


def _expected_window_eq62(p: float) -> float:
    """E[W] solving eq. 31 (with eq. 30's bracket, see A7) when E[B] = E[W] - E[L] and E[L] is eq. 62.

    With E[X] = E[W]/2 + 1 (eq. 32, A7): (1-p)/p = 3W^2/8 + 3W/4 - E[L](W); the right side increases in W
    (dE[L]/dW <= 1/e), so the root is unique and bracketed by [0, sqrt(16/(3p)) + 1]."""
    from scipy.optimize import brentq  # only the eq. 62 option needs a root finder (keeps the import light)

    target = (1.0 - p) / p

    def f(w: float) -> float:
        return 3.0 * w * w / 8.0 + 3.0 * w / 4.0 - lost_eq62(p, w) - target

    # sqrt(16/3)/sqrt(p), not sqrt(16/(3p)): the latter overflows to inf for p below ~3e-308.
    hi = math.sqrt(16.0 / 3.0) / math.sqrt(p) + 1.0
    return brentq(f, 0.0, hi, xtol=1e-12, maxiter=200)


def rtt_eq8(cwnd: float, b_pps: float, d_s: float) -> float:
    """Paper 002 eq. 8: RTT = d + 1/b if b d >= CWND, else CWND / b (b in packets/s, d the round-trip delay)."""
    if b_pps * d_s >= cwnd:
        return d_s + 1.0 / b_pps
    return cwnd / b_pps


def ramp_time_eq8(w_lo: float, w_hi: float, rounds: float, b_pps: float, d_s: float) -> float:
    """Time of `rounds` rounds whose CWND rises evenly from w_lo to w_hi (eq. 25: one packet a round), each
    lasting eq. 8 at its own CWND: rounds x the mean of eq. 8 over [w_lo, w_hi] (d + 1/b up to b d, CWND/b above)."""
    if w_hi <= w_lo:
        return rounds * rtt_eq8(w_hi, b_pps, d_s)
    bdp = b_pps * d_s
    flat = max(0.0, min(w_hi, bdp) - w_lo) * (d_s + 1.0 / b_pps)  # eq. 8, first case: b d >= CWND
    start = max(w_lo, bdp)
    queued = (w_hi * w_hi - start * start) / (2.0 * b_pps) if w_hi > start else 0.0  # eq. 8, second case
    return rounds * (flat + queued) / (w_hi - w_lo)


def ca_time_eq36(w: float, ramp_rounds: float, flat_rounds: float, b_pps: float, d_s: float) -> float:
    """E[T^CA] (eq. 36, E[R] rounds) with each round at eq. 8 of its CWND: E[X] - E[V] rounds rising from W/2 to
    W (eqs. 25, 29, 37), E[V] rounds at W_max (Fig. 4; 0 when loss-limited), and eq. 35's last round at W."""
    return ramp_time_eq8(w / 2.0, w, ramp_rounds, b_pps, d_s) + (flat_rounds + 1.0) * rtt_eq8(w, b_pps, d_s)


def ss_time_eq54(w: float, b_pps: float, d_s: float) -> float:
    """E[T^SS] (eq. 54): max(1, log2 W) rounds of CWND 1, 2, 4, ... (eq. 47), each at eq. 8 of its CWND; a
    fractional last round counts by its fraction."""
    h = max(1.0, math.log2(w))
    full = math.floor(h)
    t = sum(rtt_eq8(2.0**k, b_pps, d_s) for k in range(full))
    return t + (h - full) * rtt_eq8(2.0**full, b_pps, d_s)


def backoff_m(rto_s: float, rto_max_s: float) -> int:
    """Paper 002 eq. 18: M = max(1, floor(log2(RTO_max / RTO)))."""
    return max(1, math.floor(math.log2(rto_max_s / rto_s)))


def p_timeout_eq44(p: float, w: float) -> float:
    """Paper 002 eq. 44: P^TO = (1 - (1-p)^8 - (1 - (1-p)^4)(1-p)^W) / (1 - (1-p)^W).

    The closed form sums eq. 43 over j = 0..3 and j = 4..W-1; for W <= 4 every j < W is a timeout, P^TO = 1
    (the closed form exceeds 1 there). Evaluated as a_4 (1 + a_W - a_4) / a_W, a_n = 1 - (1-p)^n by expm1
    (the numerator is (1 - q^4)(1 + q^4 - q^W)): the printed form is 0/0 once 1 - p rounds to 1."""
    if w <= 4.0:
        return 1.0
    a4, aw = one_minus_q_pow(p, 4.0), one_minus_q_pow(p, w)
    return a4 * (1.0 + (aw - a4)) / aw


def time_eb_eq46(p: float, rto_s: float, rto_max_s: float, m: int) -> float:
    """Paper 002 eq. 46: E[T^EB] = (1-p)(1-(2p)^M)/(1-2p) RTO + p^M/(1-p) RTO_max, from eq. 45 as printed.

    The first term is summed as the finite geometric series it comes from, so p = 1/2 needs no special case."""
    geometric = sum((2.0 * p) ** j for j in range(m))  # sum_{j=1}^{M} (2p)^{j-1}
    return (1.0 - p) * geometric * rto_s + p**m / (1.0 - p) * rto_max_s


def _ca_period(p: float, e_w: float, w_max: int, eq62: bool) -> tuple:
    """(regime, W, E[X], E[V] or None, E[S^CA]) of a CA period (§4.4.1): eqs. 28, 34 below W_max, 39-41 at it."""
    if e_w < w_max:
        # Eq. 34 as printed; with eq. 62, E[X] = E[W]/2 + 1 (eq. 32 under A7); E[S^CA] from eq. 28.
        e_x = e_w / 2.0 + 1.0 if eq62 else _expected_rounds_eq34(p)
        return LOSS_LIMITED, e_w, e_x, None, (1.0 - p) / p + e_w
    w = float(w_max)
    e_v = (1.0 - p) / (p * w) - 3.0 * w / 8.0 + 3.0 / 4.0  # eq. 40
    e_x = (1.0 - p) / (p * w) + w / 8.0 + 3.0 / 4.0  # eq. 41, as printed
    sent_ca = 3.0 / 8.0 * w * w + w * e_v + w / 4.0  # eq. 39 (equals eq. 28 at W = W_max by eq. 40)
    return WINDOW_LIMITED, w, e_x, e_v, sent_ca


def renewal_throughput(
    p: float,
    b_mbps: float,
    d_ms: float,
    rbuf_bytes: int,
    loss: str = "correlated",
    rto_max_s: float = 60.0,
    packet_bytes: int = 1500,
    *,
    eq62: bool = False,
) -> RenewalResult:
    """Throughput of one path under paper 002's renewal model (§4.4, eq. 55).

    p: loss probability (eq. 7, correlated); b_mbps: bottleneck bandwidth; d_ms: round-trip delay (eq. 8's d);
    rbuf_bytes: receive buffer, W_max = floor(rbuf / packet_bytes); eq62: E[L] from eq. 62 instead of E[W]/2,
    with E[W] then solved numerically from eq. 31 (§6.1.2 suggests it; off by default)."""
    p, b_mbps, d_ms, w_max, loss, rto_max_s, packet_bytes = check_path(
        p, b_mbps, d_ms, rbuf_bytes, loss, rto_max_s, packet_bytes
    )
    if loss != "correlated":
        raise CmtInputError("loss", "the renewal model (paper 002 §4.4, eqs. 26-27) is derived for correlated loss only")
    b_pps = packets_per_second(b_mbps, packet_bytes)
    d_s = d_ms / 1000.0

    e_w = _expected_window_eq62(p) if eq62 else _expected_window_eq33(p)
    if e_w < 1.0:
        # Below one packet eqs. 53-55 turn negative (E[S^SS] = E[W] - 1); eq. 33 gives E[W] >= 1 iff p <= 8/13.
        raise CmtInputError("p", f"{p!r} is outside the renewal model's domain (E[W] = {e_w:.3f} < 1 packet)")
    regime, w, e_x, e_v, sent_ca = _ca_period(p, e_w, w_max, eq62)
    lost_ca = lost_eq62(p, w) if eq62 else w / 2.0  # §4.4.1: L uniform on 1..W, E[L] = W/2; or eq. 62
    rounds = e_x + 1.0  # eq. 35
    # Eq. 36, each round at eq. 8 of its own CWND: E[X] - E[V] rising rounds, E[V] at W_max, the last at W.
    time_ca = ca_time_eq36(w, e_x - (e_v or 0.0), e_v or 0.0, b_pps, d_s)
    rtt = time_ca / rounds  # the mean round time, eq. 36's RTT
    rtt_last = rtt_eq8(w, b_pps, d_s)  # eq. 8 at CWND = W: the round that ends the period (and may time out)
    rto = min(3.0 * rtt_last, rto_max_s)  # eq. 10 for the round that timed out, never above RTO_max
    m = backoff_m(rto, rto_max_s)  # eq. 18
    p_to = p_timeout_eq44(p, w)  # eq. 44
    time_eb = time_eb_eq46(p, rto, rto_max_s, m)  # eq. 46
    sent_ss = w - 1.0  # eq. 53
    time_ss = ss_time_eq54(w, b_pps, d_s)  # eq. 54 (w >= 1)
    # Eq. 55: (E[S^CA] - E[L^CA] + P^TO E[S^SS]) / (E[T^CA] + P^TO (E[T^EB] + E[T^SS])).
    eta = (sent_ca - lost_ca + p_to * sent_ss) / (time_ca + p_to * (time_eb + time_ss))
    return RenewalResult(
        throughput_mbps=mbps(eta, packet_bytes),
        throughput_pps=eta,
        regime=regime,
        w_max=w_max,
        expected_window=e_w,
        window=w,
        expected_rounds_x=e_x,
        expected_v=e_v,
        rounds=rounds,
        p_timeout=p_to,
        rtt_s=rtt,
        rtt_last_s=rtt_last,
        rto_s=rto,
        backoff_m=m,
        sent_ca=sent_ca,
        lost_ca=lost_ca,
        time_ca_s=time_ca,
        time_eb_s=time_eb,
        sent_ss=sent_ss,
        time_ss_s=time_ss,
        eq62=eq62,
    )


def reference_rtt(p: float, b_mbps: float, d_ms: float, rbuf_bytes: int, rto_max_s: float = 60.0,
                  packet_bytes: int = 1500) -> tuple:
    """(RTT, RTO) in s for the reference formulas: the renewal model's own (eq. 36's mean round time over the CA
    period of eq. 33's E[W], capped at W_max, and RTO = 3 RTT of its last round, eq. 10, capped at RTO_max);
    the same for both loss models."""
    p, b_mbps, d_ms, w_max, _, rto_max_s, packet_bytes = check_path(
        p, b_mbps, d_ms, rbuf_bytes, "correlated", rto_max_s, packet_bytes
    )
    b_pps, d_s = packets_per_second(b_mbps, packet_bytes), d_ms / 1000.0
    _, w, e_x, e_v, _ = _ca_period(p, _expected_window_eq33(p), w_max, False)
    rtt = ca_time_eq36(w, e_x - (e_v or 0.0), e_v or 0.0, b_pps, d_s) / (e_x + 1.0)
    return rtt, min(3.0 * rtt_eq8(w, b_pps, d_s), rto_max_s)
