"""Paper 002's renewal model (§4.4, eqs. 26-55, eq. 62) and the Mathis / PFTK reference formulas, against
numbers worked by hand from the printed equations, the closed forms against the sums they come from, and the
model's monotonicity in p, d, b and RBUF (with the two places where the printed equations break it)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ccscope.models.cmt import CmtInputError, mathis_throughput, pftk_throughput, renewal_throughput
from ccscope.models.cmt.reference import pftk_q_hat
from ccscope.models.cmt.renewal import lost_eq62, p_timeout_eq44, ramp_time_eq8, reference_rtt, rtt_eq8, time_eb_eq46

FOCUS = dict(p=1e-3, b_mbps=21.0, d_ms=40.0, rbuf_bytes=128_000)  # §6.1.1's focus point, KB = 1000 B (A11)


# --- hand-worked numbers ---------------------------------------------------------------------------


def test_focus_point_matches_the_hand_worked_equations():
    r = renewal_throughput(**FOCUS)
    assert r.w_max == 85  # floor(128000 / 1500), footnote 8
    # Eq. 33: sqrt(8 * 0.999 / 0.003 + 1/9) - 1/3 = sqrt(2664.1111) - 0.3333 = 51.2817 < 85: loss-limited.
    assert r.expected_window == pytest.approx(51.28169, abs=1e-5)
    assert r.regime == "loss-limited" and r.window == r.expected_window
    # Eq. 34: sqrt(2 * 0.999 / 0.003 + 1/36) + 5/6 = 26.6408; eq. 35: E[R] = 27.6408.
    assert r.expected_rounds_x == pytest.approx(26.64085, abs=1e-5)
    assert r.rounds == pytest.approx(27.64085, abs=1e-5)
    # Eq. 8: b = 21e6 / 12000 = 1750 packets/s, b d = 70 >= 51.28, so RTT = 0.04 + 1/1750 = 0.0405714 s.
    assert r.rtt_s == pytest.approx(0.04 + 1 / 1750, rel=1e-12)
    # Eq. 10: RTO = 3 RTT = 0.121714 s; eq. 18: M = floor(log2(60 / 0.121714)) = floor(8.945) = 8.
    assert r.rto_s == pytest.approx(0.1217143, abs=1e-7) and r.backoff_m == 8
    # Eq. 28: E[S^CA] = 999 + 51.2817; E[L^CA] = E[W]/2 = 25.6408; eq. 36: E[T^CA] = 27.6408 * 0.0405714 = 1.12143 s.
    assert r.sent_ca == pytest.approx(1050.28169, abs=1e-5)
    assert r.lost_ca == pytest.approx(25.64085, abs=1e-5)
    assert r.time_ca_s == pytest.approx(1.121429, abs=1e-6)
    # Eq. 44 with q = 0.999, q^8 = 0.992028, q^4 = 0.996006, q^W = 0.949987: 0.004178 / 0.050013 = 0.08353.
    assert r.p_timeout == pytest.approx(0.083534, abs=1e-6)
    # Eq. 46: 0.999 * (1 + 0.002 + ... + 0.002^7) * 0.121714 + 1e-24 * 60 / 0.999 = 0.121836 s.
    assert r.time_eb_s == pytest.approx(0.121836, abs=1e-6)
    # Eqs. 53-54: E[S^SS] = 50.2817, E[T^SS] = log2(51.2817) * RTT = 5.6804 * 0.0405714 = 0.230461 s.
    assert r.sent_ss == pytest.approx(50.28169, abs=1e-5)
    assert r.time_ss_s == pytest.approx(0.230461, abs=1e-6)
    # Eq. 55: (1050.2817 - 25.6408 + 0.083534 * 50.2817) / (1.121429 + 0.083534 * (0.121836 + 0.230461))
    #       = 1028.841 / 1.150857 = 893.98 packets/s = 10.7277 Mbit/s.
    assert r.throughput_pps == pytest.approx(893.978, abs=1e-3)
    assert r.throughput_mbps == pytest.approx(10.72773, abs=1e-5)


def test_window_limited_point_uses_eqs_39_to_41_as_printed():
    r = renewal_throughput(1e-4, 21.0, 40.0, 128_000)
    # Eq. 33 at p = 1e-4 gives E[W] = 162.96 >= W_max = 85.
    assert r.expected_window == pytest.approx(162.95816, abs=1e-5)
    assert r.regime == "window-limited" and r.window == 85.0
    # Eq. 40: 0.9999 / 0.0085 - 3 * 85 / 8 + 3/4 = 117.635294 - 31.875 + 0.75 = 86.510294.
    assert r.expected_v == pytest.approx(86.510294, abs=1e-6)
    # Eq. 41 as printed: 117.635294 + 85 / 8 + 3/4 = 129.010294 (the printed 3/4, not E[U] + E[V]).
    assert r.expected_rounds_x == pytest.approx(129.010294, abs=1e-6)
    # Eq. 39 with eq. 40 equals eq. 28 at W = W_max: 9999 + 85 = 10084.
    assert r.sent_ca == pytest.approx(10084.0, abs=1e-9)
    # Eq. 36 with eq. 8 per round: E[X] - E[V] = 42.5 rounds rise from 42.5 to 85 packets, d + 1/b = 0.0405714 s up
    # to b d = 70, CWND/b above: 27.5 * 0.0405714 + (85^2 - 70^2) / 3500 = 1.115714 + 0.664286 = 1.78 s; then
    # E[V] + 1 = 87.510294 rounds at 85 / 1750 = 0.0485714 s = 4.250500 s; E[T^CA] = 6.030500 s over 130.010294 rounds.
    assert r.time_ca_s == pytest.approx(6.030500, abs=1e-6)
    assert r.rtt_s == pytest.approx(6.030500 / 130.010294, rel=1e-6)
    # Eq. 10: RTO = 3 RTT of the last round, 3 * 85 / 1750.
    assert r.rtt_last_s == pytest.approx(85 / 1750, rel=1e-12) and r.rto_s == pytest.approx(3 * 85 / 1750, rel=1e-12)


def test_small_bandwidth_point_charges_each_round_eq8_at_its_own_window():
    # Fig. 6 at b = 1 Mbit/s (p 1e-3, d 40 ms, 128 KB): b = 1e6 / 12000 = 83.3333 packets/s, b d = 3.33 packets,
    # below E[W]/2 = 25.6408 (eq. 33: E[W] = 51.2817), so every CA round is queued: eq. 8 gives CWND / b.
    r = renewal_throughput(1e-3, 1.0, 40.0, 128_000)
    assert r.regime == "loss-limited" and r.expected_window == pytest.approx(51.28169, abs=1e-5)
    # Eq. 36: E[X] = 26.64085 rounds rising from 25.6408 to 51.2817 (eqs. 25, 29), mean 3 E[W] / 4 = 38.4613
    # packets, 0.461535 s each: 12.295690 s; eq. 35's last round at E[W]: 51.2817 / 83.3333 = 0.615380 s.
    assert r.time_ca_s == pytest.approx(12.295690 + 0.615380, abs=2e-6)
    assert r.rtt_s == pytest.approx(12.911071 / 27.640847, rel=1e-6)
    # Eq. 10: RTO = 3 * 0.615380 = 1.846141 s; eq. 18: M = floor(log2(60 / 1.846141)) = floor(5.022) = 5;
    # eq. 46: 0.999 * (1 + 0.002 + ... + 0.002^4) * 1.846141 + 1e-15 * 60 / 0.999 = 1.847991 s.
    assert r.rto_s == pytest.approx(1.846141, abs=1e-6) and r.backoff_m == 5
    assert r.time_eb_s == pytest.approx(1.847991, abs=1e-6)
    # Eq. 54 with eq. 8 per round: log2(51.2817) = 5.680372 rounds of CWND 1, 2 (d + 1/b = 0.052 s each), 4, 8, 16
    # (CWND / b: 0.048, 0.096, 0.192 s) and 0.680372 of a round of 32 (0.384 s): 0.701263 s.
    assert r.time_ss_s == pytest.approx(0.701263, abs=1e-6)
    # Eq. 55: (1050.281695 - 25.640847 + 0.0835338 * 50.281695) / (12.911071 + 0.0835338 * (1.847991 + 0.701263))
    #       = 1028.841069 / 13.124023 = 78.3937 packets/s = 0.940725 Mbit/s: 94% of b, not the 0.707 b that eq. 8
    #       at the peak window E[W] for every round gave (docs/deviations.md, paper 002 renewal).
    assert r.throughput_pps == pytest.approx(78.3937, abs=1e-4)
    assert r.throughput_mbps == pytest.approx(0.940725, abs=1e-6)


def test_mathis_matches_the_hand_worked_formula():
    # Mathis 1997: sqrt(3/2) / (0.1 * sqrt(0.01)) = 122.4745 packets/s of 1500 B = 1.469694 Mbit/s.
    assert mathis_throughput(0.01, 0.1) == pytest.approx(1.469694, abs=1e-6)
    # C scales it linearly; the packet size too.
    assert mathis_throughput(0.01, 0.1, packet_bytes=1000, c=1.0) == pytest.approx(0.8, abs=1e-12)


def test_pftk_matches_the_hand_worked_full_model():
    # E[W_u] = 1 + sqrt(8 * 0.99 / 0.03 + 1) = 17.27882 < 100; Q^ = 0.0335537 / 0.159416 = 0.210479;
    # f(0.01) = 1.010204; sent = 99 + 17.27882 + 0.21049 / 0.99 = 116.4914;
    # time = 0.1 * (17.27882 / 2 + 1) + 0.21049 * 0.4 * 1.010204 / 0.99 = 1.049853 s; 110.96 packets/s.
    assert pftk_throughput(0.01, 0.1, 0.4, 100) == pytest.approx(1.33152, abs=2e-5)
    assert pftk_q_hat(0.01, 17.278821) == pytest.approx(0.210479, abs=2e-6)


def test_pftk_window_limited_matches_the_hand_worked_full_model():
    # W_max = 10 < E[W_u]: Q^(10) = 0.031659 / 0.095618 = 0.33110; sent = 109 + 0.33110 / 0.99 = 109.33444;
    # time = 0.1 * (10/8 + 0.99 / 0.1 + 2) + 0.33110 * 0.408163 = 1.450143 s; 75.396 packets/s.
    assert pftk_throughput(0.01, 0.1, 0.4, 10) == pytest.approx(0.904749, abs=2e-5)


def test_pftk_approaches_mathis_when_timeouts_vanish():
    # With b = 1, no window limit and p -> 0, PFTK's E[W_u] -> sqrt(8/(3p)) and Q^ -> 0: Mathis's sqrt(3/(2p)) / RTT.
    ratio = pftk_throughput(1e-7, 0.05, 0.15, 1e9) / mathis_throughput(1e-7, 0.05)
    assert ratio == pytest.approx(1.0, abs=2e-3)
    assert pftk_throughput(1e-2, 0.05, 0.15, 1e9) < mathis_throughput(1e-2, 0.05)  # timeouts cost throughput


def test_pftk_delayed_acks_lower_the_throughput():
    assert pftk_throughput(1e-3, 0.05, 0.2, 1e6, b=2) < pftk_throughput(1e-3, 0.05, 0.2, 1e6, b=1)


# --- closed forms against the sums they come from --------------------------------------------------


@pytest.mark.parametrize("p", [1e-4, 1e-3, 0.02, 0.3])
@pytest.mark.parametrize("w", [4, 5, 17, 85])
def test_eq44_closed_form_equals_the_sum_of_eq43(p, w):
    q = 1 - p
    pj = [p * q**j / (1 - q**w) for j in range(w)]  # eq. 43
    direct = sum(pj[:4]) + sum(pj[j] for j in range(4, w)) * sum(p * q**k for k in range(4))
    assert p_timeout_eq44(p, w) == pytest.approx(direct, rel=1e-12)


def test_eq44_is_one_when_the_window_cannot_send_four_packets():
    assert p_timeout_eq44(1e-3, 3.5) == 1.0 and p_timeout_eq44(0.2, 2.0) == 1.0


@pytest.mark.parametrize("p", [1e-3, 0.1, 0.5, 0.6])
@pytest.mark.parametrize("m", [1, 3, 8])
def test_eq46_equals_the_series_over_eq45(p, m):
    rto, rto_max = 0.12, 60.0
    # Eq. 45 as printed: T_j = 2^(j-1) RTO for j <= M, (j - M) RTO_max beyond; weights (1-p) p^(j-1).
    series = sum((2 ** (j - 1) * rto if j <= m else (j - m) * rto_max) * (1 - p) * p ** (j - 1) for j in range(1, 400))
    assert time_eb_eq46(p, rto, rto_max, m) == pytest.approx(series, rel=1e-12)


@pytest.mark.parametrize("p,w", [(1e-3, 51.0), (0.01, 7.0), (0.2, 3.0)])
def test_eq62_closed_form_equals_its_sum(p, w):
    direct = sum(i * p * (1 - p) ** (i - 1) for i in range(1, int(w) + 1))
    assert lost_eq62(p, w) == pytest.approx(direct, rel=1e-12)


@pytest.mark.parametrize("p", [1e-5, 1e-3, 0.05, 0.5])
def test_eq33_and_eq34_satisfy_a7(p):
    r = renewal_throughput(p, 1000.0, 40.0, 10**9)
    w, x = r.expected_window, r.expected_rounds_x
    assert w == pytest.approx(2 * x - 2, rel=1e-12)  # A7: eq. 32 reads E[W] = 2E[X] - 2
    # Eq. 31 with eq. 30's bracket (E[W]/2 + E[W]) and E[B] = E[W]/2: (1-p)/p + W = X/2 * 3W/2 + W/2.
    assert (1 - p) / p + w == pytest.approx(x / 2 * 1.5 * w + w / 2, rel=1e-12)


def test_eq62_window_solves_eq31_with_eq62_losses():
    p = 1e-3
    r = renewal_throughput(p, 21.0, 40.0, 10**7, eq62=True)
    w = r.expected_window
    # (1-p)/p + W = X/2 * 3W/2 + (W - E[L](W)) with X = W/2 + 1 (A7).
    assert (1 - p) / p + w == pytest.approx((w / 2 + 1) / 2 * 1.5 * w + w - lost_eq62(p, w), rel=1e-12)
    assert r.lost_ca == pytest.approx(lost_eq62(p, w), rel=1e-15)
    assert r.eq62 and not renewal_throughput(p, 21.0, 40.0, 10**7).eq62


# --- eq. 8 -----------------------------------------------------------------------------------------


def test_eq8_queues_a_window_above_the_bdp():
    assert rtt_eq8(40, 1000.0, 0.05) == pytest.approx(0.05 + 1e-3)  # b d = 50 >= 40
    assert rtt_eq8(80, 1000.0, 0.05) == pytest.approx(0.08)  # CWND / b


@pytest.mark.parametrize("bdp", [5.0, 33.3, 40.0, 60.0])
def test_ramp_time_is_eq8_summed_over_a_fine_ramp_of_windows(bdp):
    # Eq. 36 per round: the closed form of ramp_time_eq8 against eq. 8 at 200,000 evenly spaced windows in [25, 50].
    b, n = 1000.0, 200_000
    d = bdp / b
    fine = sum(rtt_eq8(25.0 + 25.0 * (i + 0.5) / n, b, d) for i in range(n)) / n
    assert ramp_time_eq8(25.0, 50.0, 10.0, b, d) == pytest.approx(10.0 * fine, rel=1e-6)


def test_reference_rtt_is_the_renewal_models_rtt():
    r = renewal_throughput(**FOCUS)
    assert reference_rtt(**FOCUS) == (r.rtt_s, r.rto_s)


# --- monotonicity ----------------------------------------------------------------------------------


def test_throughput_falls_with_loss_rate():
    t = [renewal_throughput(p, 21.0, 40.0, 128_000).throughput_mbps for p in np.logspace(-5, -0.3, 120)]
    assert np.all(np.diff(t) < 0)


def test_throughput_falls_with_delay_once_the_window_fits_the_bdp():
    # Below b d = E[W], eq. 8 gives RTT = CWND / b whatever d is: flat; beyond, it falls.
    t = np.array([renewal_throughput(1e-3, 21.0, d, 128_000).throughput_mbps for d in np.linspace(1, 300, 300)])
    assert np.all(np.diff(t) <= 0)
    assert t[-1] < t[100] < t[40]


def test_throughput_rises_with_bandwidth_apart_from_the_step_of_eq8():
    bs = np.linspace(0.5, 100, 400)
    rs = [renewal_throughput(1e-3, b, 40.0, 128_000) for b in bs]
    t = np.array([r.throughput_mbps for r in rs])
    queued = np.array([b * 1e6 / 12000 * 0.04 < r.window for b, r in zip(bs, rs)])
    steps = np.flatnonzero(np.diff(t) < 0)
    # The only fall is where b d crosses the window: eq. 8's RTT jumps from CWND/b = d to d + 1/b.
    assert len(steps) == 1 and queued[steps[0]] and not queued[steps[0] + 1]
    assert t[-1] > t[0]


def test_throughput_rises_with_rbuf_and_saturates_once_loss_limited():
    for p in (1e-3, 1e-2):
        rs = [renewal_throughput(p, 21.0, 40.0, w * 1500) for w in range(1, 400)]
        t = np.array([r.throughput_mbps for r in rs])
        assert np.all(np.diff(t) >= 0)
        limited = [r.regime == "loss-limited" for r in rs]
        first = limited.index(True)
        assert all(limited[first:]) and np.all(t[first:] == t[first])


def test_throughput_rises_with_rbuf_until_every_window_limited_round_queues():
    # p = 1e-4, b d = 70 packets: throughput rises with W_max while part of the CA period runs below the BDP; once
    # nearly every round is queued (W_max/2 about b d) eq. 36 costs ((1-p)/p + 7W/4)/b against eq. 39's sends
    # ((1-p)/p + W), so it falls, by under 0.3%, until E[W] (162.96) < W_max makes it loss-limited and flat.
    rs = {w: renewal_throughput(1e-4, 21.0, 40.0, w * 1500) for w in range(2, 200)}
    t = {w: r.throughput_mbps for w, r in rs.items()}
    peak = max(range(2, 163), key=t.get)
    assert 135 <= peak <= 140  # about 2 b d
    assert all(t[w + 1] > t[w] for w in range(2, peak))
    assert all(t[w + 1] < t[w] for w in range(peak, 162)) and t[162] > 0.997 * t[peak]
    assert rs[162].regime == "window-limited" and rs[163].regime == "loss-limited"
    assert all(t[w] == t[163] for w in range(163, 200))


def test_same_input_gives_identical_output():
    assert renewal_throughput(**FOCUS) == renewal_throughput(**FOCUS)
    assert renewal_throughput(**FOCUS, eq62=True) == renewal_throughput(**FOCUS, eq62=True)


# --- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs,field",
    [
        (dict(p=0.0), "p"),
        (dict(p=1.0), "p"),
        (dict(p=-0.1), "p"),
        (dict(b_mbps=0.0), "b"),
        (dict(b_mbps=-5.0), "b"),
        (dict(d_ms=-1.0), "d"),
        (dict(rbuf_bytes=1499), "rbuf"),
        (dict(loss="bursty"), "loss"),
        (dict(loss="independent"), "loss"),
        (dict(p=0.9), "p"),  # E[W] of eq. 33 below one packet
        (dict(rto_max_s=0.0), "rto_max"),
        (dict(packet_bytes=0), "packet_bytes"),
        # Not numbers at all: one CmtInputError naming the field, not Python's int()/float() message.
        (dict(p=None), "p"),
        (dict(rbuf_bytes=math.nan), "rbuf"),
        (dict(rbuf_bytes="128KB"), "rbuf"),
        (dict(rbuf_bytes=None), "rbuf"),
        (dict(packet_bytes=math.nan), "packet_bytes"),
        (dict(b_mbps=None), "b"),
    ],
)
def test_bad_input_names_the_field(kwargs, field):
    with pytest.raises(CmtInputError) as e:
        renewal_throughput(**{**FOCUS, **kwargs})
    assert e.value.field == field and str(e.value).startswith(f"{field}: ")


@pytest.mark.parametrize("field,arg", [("p", "p"), ("b", "b_mbps"), ("d", "d_ms"), ("rto_max", "rto_max_s"),
                                       ("rbuf", "rbuf_bytes"), ("packet_bytes", "packet_bytes")])
@pytest.mark.parametrize("bad", ["0.1", "1500", True, False])
def test_text_and_bools_are_not_numbers_to_the_renewal_model(field, arg, bad):
    # float("0.1") and int(True) == True would read them as numbers: a typo'd call would model another path.
    with pytest.raises(CmtInputError) as e:
        renewal_throughput(**{**FOCUS, arg: bad})
    assert e.value.field == field and repr(bad) in str(e.value)


@pytest.mark.parametrize("bad", ["0.1", True])
def test_text_and_bools_are_not_numbers_to_the_reference_formulas(bad):
    for call, field in [(lambda: mathis_throughput(bad, 0.1), "p"), (lambda: mathis_throughput(0.01, bad), "rtt"),
                        (lambda: mathis_throughput(0.01, 0.1, c=bad), "c"),
                        (lambda: pftk_throughput(0.01, 0.1, bad, 10), "rto"),
                        (lambda: pftk_throughput(0.01, 0.1, 0.3, bad), "w_max"),
                        (lambda: pftk_throughput(0.01, 0.1, 0.3, 10, b=bad), "b")]:
        with pytest.raises(CmtInputError) as e:
            call()
        assert e.value.field == field and repr(bad) in str(e.value)


def test_the_rate_and_delay_bounds_are_the_simulators_own():
    # One bound, in ccscope-core: the native module's constants, not a copy of their values.
    from ccscope import _native
    from ccscope.models.cmt import inputs

    assert inputs.RATE_RANGE_MBPS == (_native.MIN_RATE_MBPS, _native.MAX_RATE_MBPS) == (1e-6, 1e9)
    assert inputs.MAX_DELAY_MS == _native.MAX_RUN_S * 1e3 == 1e10
    with pytest.raises(CmtInputError, match=r"^b: 2e\+09 Mbit/s is out of range: must be in \[1e-06, 1e\+09\]"):
        renewal_throughput(**{**FOCUS, "b_mbps": 2e9})


@pytest.mark.parametrize("kwargs,field", [(dict(p=1.2), "p"), (dict(rtt_s=0.0), "rtt")])
def test_reference_formulas_refuse_bad_input(kwargs, field):
    with pytest.raises(CmtInputError) as e:
        mathis_throughput(**{"p": 0.01, "rtt_s": 0.1, **kwargs})
    assert e.value.field == field
    with pytest.raises(CmtInputError) as e:
        pftk_throughput(0.01, 0.1, 0.3, 10, b=0)
    assert e.value.field == "b"
    assert math.isfinite(pftk_throughput(0.5, 0.1, 0.3, 2))


@pytest.mark.parametrize("p", [1e-3, 1e-9, 1e-12, 1e-17, 1e-30, 1e-300])
@pytest.mark.parametrize("w", [5.0, 85.0, 1e6])
def test_stable_forms_of_eqs_44_and_62_equal_the_printed_forms_and_stay_finite(p, w):
    from ccscope.models.cmt.reference import pftk_q_hat
    from ccscope.models.cmt.renewal import lost_eq62, p_timeout_eq44

    # Eq. 44, eq. 62 and PFTK's Q^ as printed, in exact rational arithmetic (the float p is a rational).
    from fractions import Fraction

    if w <= 85:  # the exact powers of a 1000-bit rational stay quick up to W = 85
        P, W = Fraction(p), int(w)
        Q = 1 - P
        exact_pto = (1 - Q**8 - (1 - Q**4) * Q**W) / (1 - Q**W)
        exact_lost = (1 - (1 + P * W) * Q**W) / P
        exact_qhat = min(Fraction(1), (1 - Q**3) * (1 + Q**3 * (1 - Q ** (W - 3))) / (1 - Q**W))
        assert p_timeout_eq44(p, w) == pytest.approx(float(exact_pto), rel=1e-12)
        assert lost_eq62(p, w) == pytest.approx(float(exact_lost), rel=1e-12)
        assert pftk_q_hat(p, w) == pytest.approx(float(exact_qhat), rel=1e-12)
    assert math.isfinite(p_timeout_eq44(p, w)) and math.isfinite(lost_eq62(p, w))


def test_a_subnormal_loss_rate_is_refused_naming_p():
    with pytest.raises(CmtInputError, match="^p: 5e-324 is below"):
        renewal_throughput(5e-324, 10, 40, 128_000)
