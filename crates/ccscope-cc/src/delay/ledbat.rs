//! LEDBAT, Low Extra Delay Background Transport (RFC 6817): a scavenger that measures one-way delay,
//! takes the queueing delay as the current delay (a MIN over the last few samples) less the base delay
//! (a MIN over ten one-minute buckets), and moves its window in proportion to how far that queueing
//! delay is from TARGET: it grows while the queue is short and backs off before a loss-based flow
//! would, yielding the bottleneck to it.
//!
//! The one-way delay of a packet is the receiver's arrival time less the sender's send time (the
//! simulator shares one clock; RFC 6817 §2.3 needs only differences, so a clock offset would cancel).
//! Choices (docs/deviations.md): no slow start (the RFC's pseudo-code has none); a congestion
//! episode, as the reliable transport signals it once per round trip, halves the window (§2.4.2
//! "at most once per RTT"); an RTO drops it to one packet (§2.4.2 "on timeout"). LEDBAT++ is not
//! implemented.

use ccscope_core::{Dur, Time};
use serde::{Deserialize, Serialize};

use crate::params::{check_positive, invalid, ParamError, ParamSpec};
use crate::{AckEvent, CongestionEvent, Controller};

/// The longest history the fixed-size filters hold (no allocation per packet).
const MAX_HISTORY: usize = 64;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// TARGET queueing delay (RFC 6817 §2.5: MUST be 100 ms or less; 100).
    pub target_ms: f64,
    /// GAIN, the window's reaction per window of ACKs (RFC 6817 §2.5: MUST be 1 or less; 1).
    pub gain: f64,
    /// BASE_HISTORY, one-minute buckets of minimum delay kept (RFC 6817 §2.5: 10).
    pub base_history: u32,
    /// Length of a base-delay bucket (RFC 6817 §2.4.2 `round_to_minute`: 60 s).
    pub bucket_s: f64,
    /// CURRENT_FILTER, samples the current delay is the minimum of (RFC 6817 §2.5: at least 4 per
    /// RTT, none older than an RTT; 4, as ns-3's TcpLedbat NoiseFilterLen).
    pub current_filter: u32,
    /// ALLOWED_INCREASE, packets above the flight the window may reach (RFC 6817 §2.5: 1).
    pub allowed_increase: f64,
    /// INIT_CWND in packets (RFC 6817 §2.5: 2).
    pub initial_window: u32,
    /// MIN_CWND in packets (RFC 6817 §2.5: 2).
    pub min_cwnd: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            target_ms: 100.0,
            gain: 1.0,
            base_history: 10,
            bucket_s: 60.0,
            current_filter: 4,
            allowed_increase: 1.0,
            initial_window: 2,
            min_cwnd: 2,
        }
    }
}

impl crate::params::Params for Params {
    const SPEC: &'static [ParamSpec] = &[
        ParamSpec { name: "target_ms", unit: "ms", doc: "TARGET queueing delay (RFC 6817 §2.5: at most 100; 100)" },
        ParamSpec { name: "gain", unit: "ratio", doc: "GAIN (RFC 6817 §2.5: at most 1; 1)" },
        ParamSpec { name: "base_history", unit: "buckets", doc: "BASE_HISTORY minimum-delay buckets kept (RFC 6817 §2.5: 10)" },
        ParamSpec { name: "bucket_s", unit: "s", doc: "length of a base-delay bucket (RFC 6817 §2.4.2: one minute)" },
        ParamSpec { name: "current_filter", unit: "samples", doc: "CURRENT_FILTER: current delay = min of this many samples (RFC 6817 §2.5: at least 4 per RTT; ns-3: 4)" },
        ParamSpec { name: "allowed_increase", unit: "packets", doc: "ALLOWED_INCREASE above the flight (RFC 6817 §2.5: 1)" },
        ParamSpec { name: "initial_window", unit: "packets", doc: "INIT_CWND (RFC 6817 §2.5: 2)" },
        ParamSpec { name: "min_cwnd", unit: "packets", doc: "MIN_CWND (RFC 6817 §2.5: 2)" },
    ];
    fn validate(&self) -> Result<(), ParamError> {
        check_positive("target_ms", self.target_ms)?;
        check_positive("gain", self.gain)?;
        check_positive("bucket_s", self.bucket_s)?;
        if !(self.allowed_increase >= 0.0 && self.allowed_increase.is_finite()) {
            return Err(invalid("allowed_increase", "must be >= 0 and finite"));
        }
        for (key, v) in [
            ("base_history", self.base_history),
            ("current_filter", self.current_filter),
        ] {
            if !(1..=MAX_HISTORY as u32).contains(&v) {
                return Err(invalid(key, format!("must be in 1..={MAX_HISTORY}")));
            }
        }
        if self.min_cwnd < 1 {
            return Err(invalid("min_cwnd", "must be >= 1"));
        }
        if self.initial_window < self.min_cwnd {
            return Err(invalid("initial_window", "must be >= min_cwnd"));
        }
        Ok(())
    }
}

/// The last `len` delays, oldest dropped first (RFC 6817 §2.4.2's `current_delays` and
/// `base_delays` lists), in a fixed array.
#[derive(Clone, Copy, Debug)]
struct DelayRing {
    v: [Dur; MAX_HISTORY],
    len: usize,
    /// Index of the newest entry.
    head: usize,
    filled: usize,
}

impl DelayRing {
    fn new(len: usize) -> Self {
        DelayRing {
            v: [Dur::MAX; MAX_HISTORY],
            len,
            head: 0,
            filled: 0,
        }
    }

    /// Append, dropping the oldest when full.
    fn push(&mut self, d: Dur) {
        self.head = if self.filled == 0 {
            0
        } else {
            (self.head + 1) % self.len
        };
        self.v[self.head] = d;
        self.filled = (self.filled + 1).min(self.len);
    }

    /// The newest entry, lowered to `d` if `d` is smaller.
    fn lower_tail(&mut self, d: Dur) {
        self.v[self.head] = self.v[self.head].min(d);
    }

    fn min(&self) -> Option<Dur> {
        (0..self.filled).map(|i| self.v[i]).min()
    }
}

#[derive(Debug)]
pub struct Ledbat {
    p: Params,
    /// Window in packets.
    cwnd: f64,
    current: DelayRing,
    base: DelayRing,
    /// The bucket (`now / bucket_s`) of the last base-delay rollover; `None` before any sample.
    last_rollover: Option<u64>,
    /// Queueing delay at the last ACK.
    queuing_delay: Option<Dur>,
}

impl Ledbat {
    pub fn new(p: Params) -> Self {
        Ledbat {
            cwnd: p.initial_window as f64,
            current: DelayRing::new(p.current_filter as usize),
            base: DelayRing::new(p.base_history as usize),
            last_rollover: None,
            queuing_delay: None,
            p,
        }
    }

    /// The latest queueing-delay estimate (current delay less base delay).
    pub fn queuing_delay(&self) -> Option<Dur> {
        self.queuing_delay
    }

    pub fn cwnd_f64(&self) -> f64 {
        self.cwnd
    }

    /// RFC 6817 §2.4.2 `update_base_delay`: a new bucket each minute, else the newest bucket's minimum.
    fn update_base_delay(&mut self, now: Time, delay: Dur) {
        let bucket = (now.as_secs_f64() / self.p.bucket_s).floor() as u64;
        if self.last_rollover != Some(bucket) {
            self.last_rollover = Some(bucket);
            self.base.push(delay);
        } else {
            self.base.lower_tail(delay);
        }
    }

    fn min_cwnd(&self) -> f64 {
        self.p.min_cwnd as f64
    }
}

impl Controller for Ledbat {
    fn on_ack(&mut self, now: Time, ev: &AckEvent) {
        // RFC 6817 §2.3: the one-way delay the receiver measured for the packet this ACK is for.
        let delay = ev.recv_time.since(ev.send_time);
        self.update_base_delay(now, delay);
        self.current.push(delay);
        let (Some(current), Some(base)) = (self.current.min(), self.base.min()) else {
            return;
        };
        // §2.4.2: queuing_delay = FILTER(current_delays) - MIN(base_delays).
        let queuing = current - base;
        self.queuing_delay = Some(queuing);
        let target = self.p.target_ms * 1e-3;
        // §2.4.2: off_target = (TARGET - queuing_delay) / TARGET.
        let off_target = (target - queuing.as_secs_f64()) / target;
        let acked = ev.newly_acked as f64;
        // §2.4.2: cwnd += GAIN * off_target * bytes_newly_acked * MSS / cwnd (in packets).
        self.cwnd += self.p.gain * off_target * acked / self.cwnd;
        // §2.4.2: never more than ALLOWED_INCREASE above the flight before this ACK.
        let flight = ev.in_flight as f64 + acked;
        self.cwnd = self.cwnd.min(flight + self.p.allowed_increase);
        self.cwnd = self.cwnd.max(self.min_cwnd());
    }

    fn on_congestion_event(&mut self, _now: Time, _ev: &CongestionEvent) {
        // §2.4.2 on loss: cwnd = min(cwnd, max(cwnd / 2, MIN_CWND)), once per round trip.
        self.cwnd = self.cwnd.min((self.cwnd / 2.0).max(self.min_cwnd()));
    }

    fn on_rto(&mut self, _now: Time) {
        // §2.4.2 on timeout: one packet.
        self.cwnd = 1.0;
    }

    fn cwnd(&self) -> u32 {
        (self.cwnd.floor() as u32).max(1)
    }

    fn state_name(&self) -> &'static str {
        match self.queuing_delay {
            Some(q) if q.as_secs_f64() * 1e3 >= self.p.target_ms => "above_target",
            Some(_) => "below_target",
            None => "no_sample",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params as _;
    use crate::testing::{assert_close, Script};
    use crate::LossCause;

    /// ACK the oldest packet in flight with a one-way delay of `owd_ms` (and an RTT twice that).
    fn ack(s: &mut Script<Ledbat>, owd_ms: u64) {
        let (seq, sent, tag) = s.in_flight.pop_front().expect("in flight");
        s.now = s.now.max(sent + Dur::from_ms(2 * owd_ms));
        let ev = AckEvent {
            seq,
            bytes: 1500,
            send_time: sent,
            recv_time: sent + Dur::from_ms(owd_ms),
            rtt: Dur::from_ms(2 * owd_ms),
            in_flight: s.in_flight.len() as u32,
            last_sent_seq: seq,
            tag,
            newly_acked: 1,
            in_recovery: false,
            rate: None,
        };
        s.cc.on_ack(s.now, &ev);
    }

    #[test]
    fn grows_by_gain_times_off_target_per_window_of_acks() {
        let mut s = Script::new(Ledbat::new(Params::default()));
        // Base 20 ms; no queue: off_target 1, +1/cwnd per ACK, capped at flight + 1.
        s.send(2);
        ack(&mut s, 20);
        // cwnd 2 + 1/2 = 2.5; flight before the ACK 2, cap 3.
        assert_close(s.cc.cwnd_f64(), 2.5);
        ack(&mut s, 20);
        // cwnd 2.5 + 1/2.5 = 2.9; flight before 1: cap 2 -> 2 (the window cannot run ahead of the flight).
        assert_close(s.cc.cwnd_f64(), 2.0);
        s.send(2);
        ack(&mut s, 20);
        ack(&mut s, 20);
        assert_eq!(s.cc.queuing_delay(), Some(Dur::ZERO));
    }

    #[test]
    fn shrinks_in_proportion_to_queueing_delay_above_target() {
        let mut s = Script::new(Ledbat::new(Params {
            initial_window: 20,
            ..Default::default()
        }));
        // More in flight than the window, so the flight cap (flight + 1) stays out of the way.
        s.send(30);
        ack(&mut s, 20);
        // cwnd 20 + 1/20 = 20.05.
        assert_close(s.cc.cwnd_f64(), 20.05);
        // Four samples at 170 ms fill the current filter: queueing delay 150 ms, off_target -0.5.
        let mut w = s.cc.cwnd_f64();
        for i in 0..4 {
            ack(&mut s, 170);
            if i < 3 {
                // The filter still holds the 20 ms sample: no queue yet.
                w += 1.0 / w;
            } else {
                w -= 0.5 / w;
            }
            assert_close(s.cc.cwnd_f64(), w);
        }
        assert_eq!(s.cc.queuing_delay(), Some(Dur::from_ms(150)));
        assert_eq!(s.cc.state_name(), "above_target");
    }

    #[test]
    fn the_base_delay_forgets_a_minimum_older_than_ten_minutes() {
        let mut s = Script::new(Ledbat::new(Params::default()));
        s.send(1);
        ack(&mut s, 20);
        // One 50 ms sample a minute: each opens a new bucket; the 20 ms bucket is one of the ten
        // kept until the eleventh bucket opens.
        for i in 0..9 {
            s.advance(Dur::from_ms(60_000));
            s.send(1);
            ack(&mut s, 50);
            assert_eq!(s.cc.base.min(), Some(Dur::from_ms(20)));
            // Once the 20 ms sample has left the 4-sample current filter, 30 ms of queue shows.
            let q = if i >= 3 { 30 } else { 0 };
            assert_eq!(s.cc.queuing_delay(), Some(Dur::from_ms(q)));
        }
        s.advance(Dur::from_ms(60_000));
        s.send(1);
        ack(&mut s, 50);
        assert_eq!(s.cc.base.min(), Some(Dur::from_ms(50)));
        assert_eq!(s.cc.queuing_delay(), Some(Dur::ZERO));
    }

    #[test]
    fn a_loss_halves_the_window_and_an_rto_drops_it_to_one() {
        let mut s = Script::new(Ledbat::new(Params {
            initial_window: 10,
            ..Default::default()
        }));
        s.send(10);
        s.congestion(LossCause::Reordering);
        assert_close(s.cc.cwnd_f64(), 5.0);
        s.congestion(LossCause::Reordering);
        s.congestion(LossCause::Reordering);
        assert_close(s.cc.cwnd_f64(), 2.0);
        s.rto();
        assert_eq!(s.cc.cwnd(), 1);
    }

    #[test]
    fn bad_params_are_rejected_by_key() {
        let bad = |p: Params, key: &str| assert_eq!(p.validate().unwrap_err().key(), Some(key));
        bad(
            Params {
                target_ms: 0.0,
                ..Default::default()
            },
            "target_ms",
        );
        bad(
            Params {
                current_filter: 0,
                ..Default::default()
            },
            "current_filter",
        );
        bad(
            Params {
                base_history: 65,
                ..Default::default()
            },
            "base_history",
        );
        bad(
            Params {
                initial_window: 1,
                ..Default::default()
            },
            "initial_window",
        );
    }
}
