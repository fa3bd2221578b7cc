//! Delivery-rate sampling (draft-cheng-iccrg-delivery-rate-estimation-02; Linux `net/ipv4/tcp_rate.c`):
//! every packet remembers how much had been delivered, and when, at the moment it was sent; when it is
//! acknowledged the sender divides what was delivered since by the longer of the send and ACK
//! intervals, so neither bursty sending nor ACK compression overstates the rate.
//!
//! Sans-IO: a transport keeps one `RateSampler` per connection and one `PacketSendState` inside the
//! record it already holds for each outstanding packet (no allocation per packet); it calls `on_send`
//! for every transmission, `on_delivered` for every packet newly ACKed or SACKed by an ACK, then
//! `generate` once per ACK and puts the result on the `AckEvent`. Counts are in packets.

use ccscope_core::{Dur, Time};

use crate::common::minmax::Minmax;

/// Linux `tcp_min_rtt_wlen`: the minimum RTT that bounds a valid interval is taken over 300 s.
const MIN_RTT_WINDOW: Dur = Dur(300 * 1_000_000_000);

/// What the sender knew when it sent a packet (draft §3.2 "per-packet state"; Linux `skb->tx`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketSendState {
    /// C.delivered when the packet was sent (P.delivered).
    pub delivered: u64,
    /// C.delivered_time when the packet was sent (P.delivered_time).
    pub delivered_time: Time,
    /// C.first_sent_time when the packet was sent: start of the send interval (P.first_sent_time).
    pub first_sent_time: Time,
    /// Sent while the application had nothing more to send (P.is_app_limited).
    pub is_app_limited: bool,
}

/// One delivery-rate sample, produced by an ACK that newly delivered at least one packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    /// Packets delivered over the interval (C.delivered - P.delivered).
    pub delivered: u64,
    /// max(send_elapsed, ack_elapsed) (draft §3.3; `tcp_rate_gen`).
    pub interval: Dur,
    /// How long the sender took to send the packets delivered (P.sent_time - P.first_sent_time).
    pub send_elapsed: Dur,
    /// How long the receiver took to ACK them (now - P.delivered_time).
    pub ack_elapsed: Dur,
    /// P.delivered of the most recently sent packet this ACK delivered.
    pub prior_delivered: u64,
    /// C.delivered after this ACK: packets delivered on the connection so far.
    pub delivered_total: u64,
    /// RTT of the most recently sent packet this ACK delivered.
    pub rtt: Dur,
    /// That packet was sent while application-limited: the rate may understate the path.
    pub is_app_limited: bool,
}

impl RateSample {
    /// The delivery rate in packets per second.
    pub fn rate_pps(&self) -> f64 {
        self.delivered as f64 / self.interval.as_secs_f64()
    }
}

/// The sample being assembled from the packets one ACK delivers (draft §3.3 `rs`).
#[derive(Clone, Copy, Debug, Default)]
struct Pending {
    prior: Option<(PacketSendState, Time, u64)>,
}

/// A connection's delivery-rate state (draft §3.1 "connection state", C.*).
#[derive(Clone, Copy, Debug, Default)]
pub struct RateSampler {
    /// C.delivered: packets ACKed or SACKed so far.
    delivered: u64,
    /// C.delivered_time: when C.delivered last changed.
    delivered_time: Time,
    /// C.first_sent_time: send time of the packet that last set the sample's prior.
    first_sent_time: Time,
    /// C.app_limited: 0, or the C.delivered + in-flight mark after which samples are no longer
    /// app-limited (Linux keeps 1 when that sum is 0; so do we).
    app_limited: u64,
    /// The connection's minimum RTT over `MIN_RTT_WINDOW` (Linux `tcp_min_rtt`); `None` before a sample.
    min_rtt: Option<Minmax>,
    pending: Pending,
}

impl RateSampler {
    /// A packet is sent at `now`; `nothing_outstanding` when no packet was unacknowledged before it
    /// (draft §3.2: SND.NXT == SND.UNA restarts both clocks). Returns what to keep with the packet.
    pub fn on_send(&mut self, now: Time, nothing_outstanding: bool) -> PacketSendState {
        if nothing_outstanding {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        PacketSendState {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            is_app_limited: self.app_limited != 0,
        }
    }

    /// One packet, sent at `sent` with sequence `seq` and state `p`, is newly delivered at `now`
    /// (draft §3.3 `UpdateRateSample`; Linux `tcp_rate_skb_delivered`). Call once per packet.
    pub fn on_delivered(&mut self, now: Time, p: &PacketSendState, sent: Time, seq: u64) {
        self.delivered += 1;
        self.delivered_time = now;
        // The most recently sent packet wins; same send time: the higher sequence (`tcp_skb_sent_after`).
        let newest = self
            .pending
            .prior
            .is_none_or(|(_, t, s)| sent > t || (sent == t && seq > s));
        if newest {
            self.pending.prior = Some((*p, sent, seq));
            // C.first_sent_time = P.sent_time: the next interval starts where this one ended.
            self.first_sent_time = sent;
        }
    }

    /// The application has nothing to send: mark the flight app-limited (draft §3.4;
    /// `tcp_rate_check_app_limited`). The transport calls it only when it is not window-limited and
    /// has no loss waiting for retransmission.
    pub fn on_app_limited(&mut self, in_flight: u32) {
        self.app_limited = (self.delivered + in_flight as u64).max(1);
    }

    /// Whether the connection is marked app-limited now.
    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// Packets delivered so far on this connection.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Finish the ACK at `now` (draft §3.3 `GenerateRateSample`; Linux `tcp_rate_gen`): `rtt` is the
    /// ACK's RTT sample. `None` when it delivered nothing or the interval is shorter than the
    /// minimum RTT (an ACK-compression artifact the draft discards).
    pub fn generate(&mut self, now: Time, rtt: Dur) -> Option<RateSample> {
        let (t, v) = (now.as_ns(), rtt.as_ns() as f64);
        let min_rtt = match &mut self.min_rtt {
            Some(m) => m.running_min(MIN_RTT_WINDOW.as_ns(), t, v),
            None => self.min_rtt.insert(Minmax::default()).reset(t, v),
        };
        let (p, sent, _) = self.end_ack()?;
        let send_elapsed = sent.since(p.first_sent_time);
        let ack_elapsed = now.since(p.delivered_time);
        let interval = send_elapsed.max(ack_elapsed);
        if interval.as_ns() == 0 || (interval.as_ns() as f64) < min_rtt {
            return None;
        }
        Some(RateSample {
            delivered: self.delivered - p.delivered,
            interval,
            send_elapsed,
            ack_elapsed,
            prior_delivered: p.delivered,
            delivered_total: self.delivered,
            rtt: now.since(sent),
            is_app_limited: p.is_app_limited,
        })
    }

    /// Finish an ACK whose sample nobody reads (`Controller::wants_rate_sample` is false): the
    /// app-limited mark ends as in `generate`, and no sample or minimum-RTT filter is computed.
    pub fn skip(&mut self) {
        self.end_ack();
    }

    /// The part of `generate` every ACK needs: the app-limited flight ends once it is delivered;
    /// the ACK's most recently sent delivered packet is taken.
    fn end_ack(&mut self) -> Option<(PacketSendState, Time, u64)> {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            // The app-limited flight has been delivered.
            self.app_limited = 0;
        }
        std::mem::take(&mut self.pending).prior
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time::from_ms(n)
    }

    /// Send `n` packets starting at `t0`, one every `gap_ms`, with `outstanding` already in flight.
    fn send_paced(
        r: &mut RateSampler,
        t0: u64,
        gap_ms: u64,
        n: u64,
        outstanding: u64,
    ) -> Vec<(PacketSendState, Time)> {
        (0..n)
            .map(|i| {
                let t = ms(t0 + i * gap_ms);
                (r.on_send(t, outstanding + i == 0), t)
            })
            .collect()
    }

    #[test]
    fn a_paced_flight_at_a_known_rate_samples_that_rate() {
        // A first flight of 10 packets, one per ms, 40 ms RTT, each ACKed alone.
        let mut r = RateSampler::default();
        let flight = send_paced(&mut r, 0, 1, 10, 0);
        let mut last = None;
        for (i, (p, sent)) in flight.iter().enumerate() {
            let now = *sent + Dur::from_ms(40);
            r.on_delivered(now, p, *sent, i as u64);
            last = r.generate(now, Dur::from_ms(40));
        }
        // Packet 9: P.delivered 0 and both clocks 0 (the flight's start), sent at 9 ms, ACKed at 49 ms.
        let rs = last.expect("valid");
        assert_eq!(
            (rs.delivered, rs.prior_delivered, rs.delivered_total),
            (10, 0, 10)
        );
        assert_eq!(
            (rs.send_elapsed, rs.ack_elapsed),
            (Dur::from_ms(9), Dur::from_ms(49))
        );
        assert_eq!(rs.interval, Dur::from_ms(49));

        // Steady state: each ACK (packet i at 40 + i ms) releases one new packet at once.
        let mut r = RateSampler::default();
        let mut sent = send_paced(&mut r, 0, 1, 10, 0);
        let mut samples = Vec::new();
        for i in 0..30u64 {
            let (p, s) = sent[i as usize];
            let now = s + Dur::from_ms(40);
            r.on_delivered(now, &p, s, i);
            samples.push(r.generate(now, Dur::from_ms(40)));
            sent.push((r.on_send(now, false), now));
        }
        // Packet 20 left at 50 ms, when 11 packets were delivered (the last at 50 ms, packet 10, sent
        // at 10 ms): P.delivered 11, P.delivered_time 50 ms, P.first_sent_time 10 ms. At 90 ms 21 are.
        let rs = samples[20].expect("valid");
        assert_eq!((rs.prior_delivered, rs.delivered), (11, 10));
        assert_eq!(
            (rs.send_elapsed, rs.ack_elapsed),
            (Dur::from_ms(40), Dur::from_ms(40))
        );
        // 10 packets in 40 ms: 250 packets/s, one window per RTT, the rate this sender keeps.
        assert!((rs.rate_pps() - 250.0).abs() < 1e-9, "{}", rs.rate_pps());
    }

    #[test]
    fn ack_compression_takes_the_longer_ack_interval_and_a_burst_the_longer_send_interval() {
        let mut r = RateSampler::default();
        // Warm-up: one packet at 0 ms ACKed at 40 ms (min RTT 40 ms).
        let p0 = r.on_send(ms(0), true);
        r.on_delivered(ms(40), &p0, ms(0), 0);
        r.generate(ms(40), Dur::from_ms(40));
        // Five packets 2 ms apart from 40 ms (send interval 8 ms), all ACKed together at 100 ms.
        let flight = send_paced(&mut r, 40, 2, 5, 0);
        for (i, (p, s)) in flight.iter().enumerate() {
            r.on_delivered(ms(100), p, *s, 1 + i as u64);
        }
        let rs = r.generate(ms(100), Dur::from_ms(52)).expect("valid");
        // Newest P: sent at 48 ms; P.first_sent_time = P.delivered_time = 40 ms.
        assert_eq!(
            (rs.send_elapsed, rs.ack_elapsed),
            (Dur::from_ms(8), Dur::from_ms(60))
        );
        assert_eq!(
            rs.interval,
            Dur::from_ms(60),
            "max(send, ack): the compressed ACKs"
        );
        assert_eq!(rs.delivered, 5);
        // A burst of 4 sent at once from idle at 100 ms, ACKed 10 ms apart from 140 ms: every send
        // interval is 0, so the ACK interval rules.
        let burst = send_paced(&mut r, 100, 0, 4, 0);
        for (i, (p, s)) in burst.iter().enumerate() {
            let now = ms(140 + 10 * i as u64);
            r.on_delivered(now, p, *s, 6 + i as u64);
            let rs = r
                .generate(now, Dur::from_ms(40 + 10 * i as u64))
                .expect("valid");
            assert_eq!(rs.send_elapsed, Dur::ZERO);
            assert_eq!(
                (rs.delivered, rs.interval),
                (1 + i as u64, Dur::from_ms(40 + 10 * i as u64))
            );
        }
        // An interval shorter than the minimum RTT is an artifact and gives no sample: a packet ACKed
        // 30 ms after an idle start, on an ACK whose own RTT sample says 40 ms.
        let p = r.on_send(ms(300), true);
        r.on_delivered(ms(330), &p, ms(300), 10);
        assert_eq!(r.generate(ms(330), Dur::from_ms(40)), None);
    }

    #[test]
    fn app_limited_marks_packets_until_the_marked_flight_is_delivered() {
        let mut r = RateSampler::default();
        let a = r.on_send(ms(0), true);
        let b = r.on_send(ms(1), false);
        assert!(!a.is_app_limited && !b.is_app_limited);
        // Nothing more to send with 2 in flight: the mark is delivered + in flight = 2.
        r.on_app_limited(2);
        assert!(r.is_app_limited());
        let c = r.on_send(ms(2), false);
        assert!(c.is_app_limited);
        r.on_delivered(ms(40), &a, ms(0), 0);
        assert!(
            !r.generate(ms(40), Dur::from_ms(40))
                .expect("valid")
                .is_app_limited
        );
        r.on_delivered(ms(41), &b, ms(1), 1);
        r.generate(ms(41), Dur::from_ms(40));
        assert!(r.is_app_limited(), "delivered 2 is not past the mark 2");
        r.on_delivered(ms(42), &c, ms(2), 2);
        let rs = r.generate(ms(42), Dur::from_ms(40)).expect("valid");
        assert!(rs.is_app_limited, "c was sent app-limited");
        assert!(!r.is_app_limited(), "delivered 3 > mark 2: cleared");
        assert!(!r.on_send(ms(43), true).is_app_limited);
        // Marking with nothing delivered and nothing in flight still marks (Linux: `?: 1`).
        let mut fresh = RateSampler::default();
        fresh.on_app_limited(0);
        assert!(fresh.is_app_limited());
    }

    #[test]
    fn an_ack_that_delivers_nothing_gives_no_sample() {
        let mut r = RateSampler::default();
        r.on_send(ms(0), true);
        assert_eq!(r.generate(ms(40), Dur::from_ms(40)), None);
    }
}
