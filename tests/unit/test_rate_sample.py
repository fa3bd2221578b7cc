"""The delivery-rate sample on a Python controller's ACK (draft-cheng-iccrg-delivery-rate-estimation):
a window above the BDP saturates a 12 Mbit/s link, so the samples measure the link's 1000 packets/s."""

from __future__ import annotations

import statistics

import ccscope
from ccscope.controller import Ack


class Window60(ccscope.Controller):
    """60 packets in flight on a 40-packet BDP: the link is the bottleneck once the queue builds."""

    cwnd = 60

    def __init__(self) -> None:
        self.samples: list[tuple[float, Ack]] = []

    def on_ack(self, now_ms: float, ack: Ack) -> None:
        self.samples.append((now_ms, ack))


def test_python_ack_carries_a_rate_sample_that_measures_the_bottleneck() -> None:
    ctl = Window60()
    ccscope.run("examples/bbr.toml", overrides={"duration_s": 5, "flows.0.controller": "python"},
                controllers={0: ctl})
    first = ctl.samples[0][1]
    # The first ACK: one packet delivered over one round trip from the flow's start.
    assert (first.rate_delivered, first.rate_prior_delivered, first.delivered_total) == (1, 0, 1)
    assert first.rate_interval_ms is not None and first.rate_interval_ms >= 40.0
    steady = [a for t, a in ctl.samples if t >= 1000.0]
    assert all(a.delivery_rate_pps is not None for a in steady)
    rate = statistics.median(a.delivery_rate_pps for a in steady)
    assert abs(rate - 1000.0) <= 10.0, rate
    assert not any(a.rate_app_limited for a in steady)
    # The fields agree with each other: rate = delivered / interval.
    a = steady[-1]
    assert abs(a.delivery_rate_pps - a.rate_delivered / (a.rate_interval_ms / 1e3)) < 1e-6


def test_python_ack_counts_the_packets_a_delayed_ack_covers() -> None:
    # Linux's receiver ACKs every second full segment: the ACKs of a bulk flow cover two packets.
    ctl = Window60()
    ccscope.run("examples/bbr.toml", overrides={"duration_s": 5, "flows.0.controller": "python",
                                                 "flows.0.transport": "reliable", "flows.0.delayed_ack": "linux"},
                controllers={0: ctl})
    acks = [a for _, a in ctl.samples]
    assert sum(a.newly_acked for a in acks) >= 0.99 * acks[-1].delivered_total
    assert statistics.median(a.newly_acked for a in acks) == 2
    assert all(a.snd_una_advanced and not a.in_recovery for a in acks)


class Paced60(Window60):
    """The same window, paced at the link's 12 Mbit/s: packets leave 1 ms apart."""

    pacing_rate_mbps = 12.0


def test_python_ack_gives_the_newest_packets_rtt_a_packet_gap_below_a_delayed_acks_echo() -> None:
    # A two-packet ACK echoes the older packet (RFC 7323); Linux's ca_rtt_us is the newer one's, sent
    # 1 ms later at this pacing rate; an ACK of one packet gives the same value twice.
    ctl = Paced60()
    ccscope.run("examples/bbr.toml", overrides={"duration_s": 5, "flows.0.controller": "python",
                                                 "flows.0.transport": "reliable", "flows.0.delayed_ack": "linux"},
                controllers={0: ctl})
    pairs = [a for t, a in ctl.samples if t >= 1000.0 and a.newly_acked == 2]
    assert len(pairs) > 1000
    gaps = [a.rtt_ms - a.ca_rtt_ms for a in pairs]
    assert abs(statistics.median(gaps) - 1.0) < 0.01, statistics.median(gaps)
    singles = [a for _, a in ctl.samples if a.newly_acked == 1]
    assert singles and all(a.ca_rtt_ms == a.rtt_ms for a in singles)
