"""The CMT Markov-chain model of paper 002 §4.3 through the Python API (ccscope.models.cmt)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccscope.models.cmt import CmtMarkovError, MarkovResult, markov_throughput, markov_throughput_curve

FOCUS = dict(p=1e-3, b_mbps=21.0, d_ms=40.0, rbuf_bytes=128_000)  # paper 002 §6.1.1


def test_focus_point_reports_throughput_and_every_diagnostic():
    r = markov_throughput(**FOCUS)
    assert isinstance(r, MarkovResult)
    assert r.window_packets == 85  # floor(128,000 / 1500): KB = 1000 B (A11)
    assert r.loss == "correlated" and r.solver == "structured"
    assert 0 < r.throughput_mbps < 21.0
    assert r.throughput_mbps == pytest.approx(r.throughput_pps * 1500 * 8 / 1e6, rel=1e-12)
    # Eq. 19 from the moments the result carries.
    assert r.throughput_pps == pytest.approx((r.mean_sent - r.mean_lost) / r.mean_duration_s, rel=1e-12)
    assert r.residual <= 1e-10
    # CA (eq. 12) + backoff (|T| = 6 thresholds 1..32 by eq. 16, and k = 2..M = 8 by eq. 18) + SS
    # (eq. 15: 1 + 2 + 3 + 4 + 5 windows below the thresholds 2..32).
    assert r.states == (85 * 86 // 2 - 1) + (6 + 7) + 15
    assert r.nonzeros > r.states and r.iterations > 0 and r.solve_time_s >= 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.throughput_mbps = 0.0  # type: ignore[misc]


def test_timeout_share_of_loss_events_rises_with_p_as_eq_14_times_out_more_rounds():
    # Eq. 14: a loss round leaving x < 4 packets, or losing floor(w/2) or more, ends in a timeout;
    # smaller windows at higher p make that likelier (docs/deviations.md, paper 002 issue 10).
    shares = [markov_throughput(p, 21.0, 40.0, 128_000).timeout_share for p in (1e-3, 1e-2, 1e-1)]
    assert 0 < shares[0] < shares[1] < shares[2] < 1
    r = markov_throughput(**FOCUS)
    events = r.timeouts_per_round + r.fast_retransmits_per_round
    assert r.timeout_share == pytest.approx(r.timeouts_per_round / events, rel=1e-12)
    assert r.loss_events_per_s == pytest.approx(events / r.mean_duration_s, rel=1e-12)


def test_explicit_and_structured_agree_to_1e9():
    for loss in ("correlated", "independent"):
        a = markov_throughput(**FOCUS, loss=loss, solver="explicit")
        b = markov_throughput(**FOCUS, loss=loss, solver="structured")
        assert a.solver == "explicit" and b.solver == "structured"
        assert abs(a.throughput_pps - b.throughput_pps) <= 1e-9 * a.throughput_pps
        assert a.nonzeros == b.nonzeros and a.states == b.states


def test_independent_losses_cost_less_than_round_correlated_losses():
    c = markov_throughput(**FOCUS, loss="correlated").throughput_mbps
    i = markov_throughput(**FOCUS, loss="independent").throughput_mbps
    assert i > c


def test_window_packets_replaces_the_buffer():
    a = markov_throughput(**FOCUS)
    b = markov_throughput(FOCUS["p"], FOCUS["b_mbps"], FOCUS["d_ms"], 1, window_packets=85)
    assert a == dataclasses.replace(b, solve_time_s=a.solve_time_s, iterations=a.iterations, residual=a.residual)


def test_curve_matches_single_solves_and_rises_with_the_window():
    ws = [2, 3, 10, 40, 70]
    curve = markov_throughput_curve(1e-3, 21.0, 40.0, ws)
    assert isinstance(curve, np.ndarray) and curve.shape == (5,) and curve.dtype == float
    for w, eta in zip(ws, curve):
        assert eta == markov_throughput(1e-3, 21.0, 40.0, 0, window_packets=w).throughput_mbps
    assert np.all(np.diff(curve) > 0)


def test_a_four_megabyte_buffer_solves_quickly():
    r = markov_throughput(1e-3, 21.0, 40.0, 4_000_000)
    assert r.window_packets == 2666 and r.states > 3_500_000 and r.nonzeros > 2e9
    assert r.residual <= 1e-10
    assert r.solve_time_s < 10.0


@settings(max_examples=25, deadline=None)
@given(
    p=st.floats(1e-5, 0.2),
    b=st.floats(0.5, 100.0),
    d=st.floats(0.0, 300.0),
    kb=st.integers(3, 300),
    loss=st.sampled_from(["correlated", "independent"]),
)
def test_throughput_falls_with_loss_never_rises_with_delay_and_never_exceeds_the_link(p, b, d, kb, loss):
    r = markov_throughput(p, b, d, kb * 1000, loss=loss)
    assert 0 < r.throughput_mbps <= b * (1 + 1e-12) and r.residual <= 1e-10
    assert markov_throughput(min(p * 2, 0.9), b, d, kb * 1000, loss=loss).throughput_mbps < r.throughput_mbps
    slower = markov_throughput(p, b, d + 20.0, kb * 1000, loss=loss).throughput_mbps
    # Eq. 8: d lengthens only rounds whose window is below the BDP, and the backoff base RTO. Where
    # nearly all the mass sits above the BDP (b d < 2, or p tiny with a large W) the effect is below
    # float resolution, so random paths check "never rises"; the Rust grid checks the strict fall.
    assert slower <= r.throughput_mbps * (1 + 1e-12)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(p=0.0), "`p`"),
        (dict(p=1.0), "`p`"),
        (dict(p=math.nan), "`p`"),
        (dict(b_mbps=0.0), "`b_mbps`"),
        (dict(b_mbps=-3.0), "`b_mbps`"),
        (dict(d_ms=-1.0), "`d_ms`"),
        (dict(d_ms=math.inf), "`d_ms`"),
        (dict(rbuf_bytes=1000), "`rbuf_bytes`"),
        (dict(rbuf_bytes=-5), "`rbuf_bytes`"),
        (dict(rbuf_bytes=1.5), "`rbuf_bytes`"),
        (dict(rbuf_bytes=2000), "W = 1"),
        (dict(rbuf_bytes=10**12), "above the bound 8192"),
        (dict(rto_max_s=0.0), "`rto_max_s`"),
        (dict(packet_bytes=0), "`packet_bytes`"),
        (dict(loss="bursty"), "`loss`"),
        (dict(solver="lu"), "`solver`"),
        (dict(window_packets=1), "W = 1"),
        (dict(rbuf_bytes=4_000_000, solver="explicit"), "`solver`"),
        (dict(rbuf_bytes=10**30), "`rbuf_bytes`"),  # beyond 64 bits: was an OverflowError naming nothing
        (dict(window_packets=-(10**30)), "`window_packets`"),
        (dict(p=None), "`p`"),  # not a number: was float()'s TypeError
        (dict(d_ms="far"), "`d_ms`"),
        (dict(b_mbps=10**400), "`b_mbps`: int beyond the largest float"),  # was float()'s OverflowError
    ],
)
def test_bad_input_raises_one_error_naming_its_field(kwargs, field):
    args = {**FOCUS, **kwargs}
    with pytest.raises(CmtMarkovError, match=field):
        markov_throughput(**args)
    assert issubclass(CmtMarkovError, ValueError)


def test_a_curve_with_a_one_packet_window_is_refused():
    with pytest.raises(CmtMarkovError, match="W = 1"):
        markov_throughput_curve(1e-3, 21.0, 40.0, [2, 1])
    with pytest.raises(CmtMarkovError, match="`loss`"):
        markov_throughput_curve(1e-3, 21.0, 40.0, [2], loss="bursty")


@pytest.mark.parametrize("field", ["p", "b_mbps", "d_ms", "rto_max_s"])
@pytest.mark.parametrize("bad", ["0.1", b"40", True, False])
def test_text_and_bools_are_not_numbers_to_the_chain(field, bad):
    # float("0.1") and float(True) would read them as numbers: a typo'd call would solve another chain.
    with pytest.raises(CmtMarkovError, match=f"^field `{field}`: {bad!r} is not a number$"):
        markov_throughput(**{**FOCUS, field: bad})
    with pytest.raises(CmtMarkovError, match=f"^field `{field}`: {bad!r} is not a number$"):
        markov_throughput_curve(**{"p": 1e-3, "b_mbps": 21.0, "d_ms": 40.0, "windows": [2], field: bad})


def test_numpy_numbers_are_numbers_to_the_chain():
    r = markov_throughput(np.float64(1e-3), np.float32(21.0), np.int64(40), np.int64(128_000))
    assert r.throughput_mbps == markov_throughput(**FOCUS).throughput_mbps


# --- an independent check: the chain rebuilt densely from specs/002-cmt.md §2 and solved by numpy ----------

def _dense_eta(p: float, b_mbps: float, d_ms: float, w_cap: int, loss: str, rto_max_s: float = 60.0) -> tuple:
    """eta (eq. 19) and the state count of the §4.3 chain, built state by state as a dense Q from the spec's
    transition list (not from the Rust rules) and solved exactly (pi Q = pi, sum pi = 1)."""
    b = b_mbps * 1e6 / 12_000  # packets/s of 1500 B
    d = d_ms / 1e3
    q = 1.0 - p

    def pmf(g, x):  # eq. 6 (binomial) or eq. 7 (the first loss takes the rest of the round)
        if loss == "independent":
            return math.comb(x, g) * p**g * q ** (x - g)
        return q**x if g == 0 else p * q ** (x - g)

    def rtt(w):  # eq. 8
        return d + 1.0 / b if b * d >= w else w / b

    rto = 3.0 * (d + 1.0 / b)  # A8
    m = max(1, math.floor(math.log2(rto_max_s / rto)))  # eq. 18
    taus = [2**i for i in range(int(math.log2(w_cap // 2)) + 1)]  # eq. 16
    states = [("ca", w, x) for w in range(2, w_cap + 1) for x in range(1, w + 1)]  # eq. 12
    states += [("eb", 1, t) for t in taus] + [("eb", k, 1) for k in range(2, m + 1)]  # eq. 17, A5
    states += [("ss", 2**i, t) for t in taus for i in range(1, int(math.log2(t)) + 1)]  # eq. 15
    index = {s: i for i, s in enumerate(states)}
    n = len(states)
    big_q, dur, sent, lost = np.zeros((n, n)), np.zeros(n), np.zeros(n), np.zeros(n)

    def to(i, s, prob, seconds):
        big_q[i, index[s]] += prob
        dur[i] += prob * seconds  # A4: E[delta] = sum pi(i) Q(i, i') D(i, i')

    def entry(w):  # A2: (1, 1, 2^floor(log2(w/2)))
        return ("eb", 1, 2 ** int(math.log2(w // 2)))

    for i, (kind, u, v) in enumerate(states):
        if kind == "eb":  # §4.3.3: one packet
            sent[i], lost[i] = 1.0, p
            to(i, ("ss", 2, v) if u == 1 and v >= 2 else ("ca", 2, 2), q, rtt(1))
            to(i, ("eb", min(u + 1, m), 1), p, min(rto * 2**u, rto_max_s))
            continue
        w, x = (u, v) if kind == "ca" else (u, u)
        sent[i] = x
        lost[i] = sum(g * pmf(g, x) for g in range(x + 1))  # A3
        r = rtt(w)
        if kind == "ss":  # §4.3.2
            to(i, ("ss", 2 * w, v) if v > 2 * w else ("ca", 2 * w, 2 * w), pmf(0, w), r)
            for g in range(1, w):
                to(i, ("ca", 2 * w - g, 2 * (w - g)), pmf(g, w), r)
            to(i, entry(w), pmf(w, w), 3 * r)
        elif x == w:  # eq. 13, A1
            to(i, ("ca", min(w + 1, w_cap), min(w + 1, w_cap)), pmf(0, w), r)
            for g in range(1, w):
                to(i, ("ca", w, w - g), pmf(g, w), r)
            to(i, entry(w), pmf(w, w), 3 * r)
        elif x < 4:  # eq. 14: too few packets for four missing reports
            to(i, entry(w), 1.0, 3 * r)
        else:  # eq. 14, A6: halve to floor(w/2) when x - g > 3 and floor(w/2) - g > 0
            for g in range(x + 1):
                if x - g > 3 and w // 2 - g > 0:
                    to(i, ("ca", w // 2, w // 2 - g), pmf(g, x), r)
                else:
                    to(i, entry(w), pmf(g, x), 3 * r)
    assert np.allclose(big_q.sum(axis=1), 1.0, atol=1e-13, rtol=0)
    a = big_q.T - np.eye(n)
    a[-1, :] = 1.0
    pi = np.linalg.solve(a, np.r_[np.zeros(n - 1), 1.0])
    return (pi @ sent - pi @ lost) / (pi @ dur), n


@pytest.mark.parametrize("loss", ["correlated", "independent"])
@pytest.mark.parametrize("w", [2, 3, 4, 5, 6, 9, 12, 17])
@pytest.mark.parametrize("p,b,d", [(1e-3, 21.0, 40.0), (0.05, 1.0, 10.0), (0.3, 50.0, 100.0)])
def test_both_solvers_equal_a_dense_numpy_solve_of_the_chain_rebuilt_from_the_spec(loss, w, p, b, d):
    eta, states = _dense_eta(p, b, d, w, loss)
    for solver in ("explicit", "structured"):
        r = markov_throughput(p, b, d, 0, loss=loss, window_packets=w, solver=solver)
        assert r.states == states
        assert r.throughput_pps == pytest.approx(eta, rel=1e-9)
