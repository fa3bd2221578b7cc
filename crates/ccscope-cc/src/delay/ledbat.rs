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
//! "at most once per RTT"); an RTO drops it to one packet (§2.4.2 "on timeout").
//!
//! `plus_plus = true` turns on LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus; section numbers are
//! draft -01's, read through open implementations, docs/deviations.md): round-trip delay samples
//! instead of one-way ones, a 60 ms target (§4.5), a gain of 1/min(16, ceil(2 TARGET / base)) (§4.2),
//! GAIN packets per round trip below target and a multiplicative decrease above it (Constant 1, at
//! most half the window per round trip) (§4.3), a slow start at that gain whose initial run also ends
//! at 3/4 of the target (§4.1), and slowdowns (§4.4): 2 round trips after the initial slow start, then
//! each time 9 slowdown durations after the last, the window drops to 2 packets for 2 round trips and
//! slow-starts back to where it was, so that the queue drains and every LEDBAT++ flow on the path sees
//! the true base delay; a timeout restarts the initial slow start. Defaults (`plus_plus = false`) are
//! RFC 6817 unchanged.

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
    /// ALLOWED_INCREASE, packets above the flight the window may reach (RFC 6817 §2.5: MUST be > 0; 1).
    pub allowed_increase: f64,
    /// INIT_CWND in packets (RFC 6817 §2.5: 2).
    pub initial_window: u32,
    /// MIN_CWND in packets (RFC 6817 §2.5: 2).
    pub min_cwnd: u32,
    /// LEDBAT++ instead of RFC 6817 LEDBAT (draft-irtf-iccrg-ledbat-plus-plus); off by default.
    pub plus_plus: bool,
    /// LEDBAT++ TARGET (draft-irtf-iccrg-ledbat-plus-plus-01 §4.5: 60 ms); `target_ms` is RFC 6817's.
    pub pp_target_ms: f64,
    /// LEDBAT++ gain cap: GAIN = 1 / min(this, ceil(2 TARGET / base)) (draft-01 §4.2: 16).
    pub pp_gain_divisor_max: f64,
    /// LEDBAT++ multiplicative-decrease Constant (draft-01 §4.3: 1).
    pub pp_decrease_constant: f64,
    /// Round trips the window stays at 2 packets in a slowdown (draft-01 §4.4: 2).
    pub pp_slowdown_rtts: f64,
    /// Slowdown durations between the end of one slowdown and the next (draft-01 §4.4: 9, a 10% duty cycle).
    pub pp_slowdown_interval: f64,
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
            plus_plus: false,
            pp_target_ms: 60.0,
            pp_gain_divisor_max: 16.0,
            pp_decrease_constant: 1.0,
            pp_slowdown_rtts: 2.0,
            pp_slowdown_interval: 9.0,
        }
    }
}

impl crate::params::Params for Params {
    const SPEC: &'static [ParamSpec] = &[
        ParamSpec { name: "target_ms", unit: "ms", doc: "TARGET queueing delay (RFC 6817 §2.5: at most 100; 100)" },
        ParamSpec { name: "gain", unit: "ratio", doc: "GAIN (RFC 6817 §2.5: at most 1; 1)" },
        ParamSpec { name: "base_history", unit: "buckets", doc: "BASE_HISTORY minimum-delay buckets kept (RFC 6817 §2.5: 10)" },
        ParamSpec { name: "bucket_s", unit: "s", doc: "length of a base-delay bucket (RFC 6817 §2.4.2: one minute)" },
        ParamSpec { name: "current_filter", unit: "samples", doc: "CURRENT_FILTER: current delay = min of this many samples, none older than an RTT (RFC 6817 §2.5: at least 4 per RTT; ns-3: 4)" },
        ParamSpec { name: "allowed_increase", unit: "packets", doc: "ALLOWED_INCREASE above the flight (RFC 6817 §2.5: > 0; 1)" },
        ParamSpec { name: "initial_window", unit: "packets", doc: "INIT_CWND (RFC 6817 §2.5: 2)" },
        ParamSpec { name: "min_cwnd", unit: "packets", doc: "MIN_CWND (RFC 6817 §2.5: 2)" },
        ParamSpec { name: "plus_plus", unit: "bool", doc: "LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus) instead of RFC 6817" },
        ParamSpec { name: "pp_target_ms", unit: "ms", doc: "LEDBAT++ TARGET (draft-01 §4.5: 60)" },
        ParamSpec { name: "pp_gain_divisor_max", unit: "ratio", doc: "LEDBAT++ GAIN = 1/min(this, ceil(2 TARGET/base)) (draft-01 §4.2: 16)" },
        ParamSpec { name: "pp_decrease_constant", unit: "ratio", doc: "LEDBAT++ multiplicative-decrease Constant (draft-01 §4.3: 1)" },
        ParamSpec { name: "pp_slowdown_rtts", unit: "RTTs", doc: "LEDBAT++ slowdown length at 2 packets (draft-01 §4.4: 2)" },
        ParamSpec { name: "pp_slowdown_interval", unit: "slowdowns", doc: "LEDBAT++ wait between slowdowns in slowdown durations (draft-01 §4.4: 9)" },
    ];
    fn validate(&self) -> Result<(), ParamError> {
        check_positive("target_ms", self.target_ms)?;
        check_positive("gain", self.gain)?;
        check_positive("bucket_s", self.bucket_s)?;
        check_positive("pp_target_ms", self.pp_target_ms)?;
        check_positive("pp_slowdown_rtts", self.pp_slowdown_rtts)?;
        check_positive("pp_slowdown_interval", self.pp_slowdown_interval)?;
        if !(self.pp_gain_divisor_max >= 1.0 && self.pp_gain_divisor_max.is_finite()) {
            return Err(invalid("pp_gain_divisor_max", "must be >= 1 and finite"));
        }
        if !(self.pp_decrease_constant >= 0.0 && self.pp_decrease_constant.is_finite()) {
            return Err(invalid("pp_decrease_constant", "must be >= 0 and finite"));
        }
        // RFC 6817 §2.5: ALLOWED_INCREASE MUST be greater than 0.
        if !(self.allowed_increase > 0.0 && self.allowed_increase.is_finite()) {
            return Err(invalid("allowed_increase", "must be > 0 and finite"));
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
    /// When each entry was taken (the ACK's arrival).
    at: [Time; MAX_HISTORY],
    len: usize,
    /// Index of the newest entry.
    head: usize,
    filled: usize,
}

impl DelayRing {
    fn new(len: usize) -> Self {
        DelayRing {
            v: [Dur::MAX; MAX_HISTORY],
            at: [Time::ZERO; MAX_HISTORY],
            len,
            head: 0,
            filled: 0,
        }
    }

    /// Append the delay taken at `at`, dropping the oldest when full.
    fn push(&mut self, d: Dur, at: Time) {
        self.head = if self.filled == 0 {
            0
        } else {
            (self.head + 1) % self.len
        };
        self.v[self.head] = d;
        self.at[self.head] = at;
        self.filled = (self.filled + 1).min(self.len);
    }

    /// The newest entry, lowered to `d` if `d` is smaller.
    fn lower_tail(&mut self, d: Dur) {
        self.v[self.head] = self.v[self.head].min(d);
    }

    fn min(&self) -> Option<Dur> {
        (0..self.filled).map(|i| self.v[i]).min()
    }

    /// The minimum over the newest entry and those taken within `window` before `now`.
    fn min_within(&self, now: Time, window: Dur) -> Option<Dur> {
        (0..self.filled)
            .filter(|&i| i == self.head || now.since(self.at[i]) <= window)
            .map(|i| self.v[i])
            .min()
    }
}

/// LEDBAT++'s phase (draft-irtf-iccrg-ledbat-plus-plus-01 §4.1 modified slow start, §4.4 slowdowns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PpPhase {
    /// Slow start at GAIN per ACK until the window reaches `ssthresh` (or, in the initial one, the queue 3/4 of TARGET).
    SlowStart,
    /// Delay-driven congestion avoidance.
    Avoidance,
    /// The window is held at 2 packets until `until`; then slow start back to `ssthresh`.
    Slowdown,
}

/// LEDBAT++ state beside RFC 6817's.
#[derive(Clone, Copy, Debug)]
struct PlusPlus {
    phase: PpPhase,
    /// The window slow start returns to (the window when the slowdown began); infinite at first.
    ssthresh: f64,
    /// End of the 2-packet part of the current slowdown.
    until: Time,
    /// Start of the current slowdown (its duration runs to the end of the slow start after it).
    slowdown_start: Option<Time>,
    next_slowdown: Option<Time>,
    /// RFC 6298 smoothed RTT, the draft's round-trip unit for slowdown timing.
    srtt: Option<Dur>,
    slowdowns: u64,
    /// In the initial slow start (the connection's first, or the one a timeout restarts).
    initial: bool,
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
    pp: PlusPlus,
}

impl Ledbat {
    pub fn new(p: Params) -> Self {
        Ledbat {
            cwnd: p.initial_window as f64,
            current: DelayRing::new(p.current_filter as usize),
            base: DelayRing::new(p.base_history as usize),
            last_rollover: None,
            queuing_delay: None,
            pp: PlusPlus {
                phase: PpPhase::SlowStart,
                ssthresh: f64::INFINITY,
                until: Time::ZERO,
                slowdown_start: None,
                next_slowdown: None,
                srtt: None,
                slowdowns: 0,
                initial: true,
            },
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

    /// The base delay (minimum over the kept buckets).
    pub fn base_delay(&self) -> Option<Dur> {
        self.base.min()
    }

    /// LEDBAT++'s phase (meaningful with `plus_plus`).
    pub fn pp_phase(&self) -> PpPhase {
        self.pp.phase
    }

    /// When the next LEDBAT++ slowdown is due, once scheduled.
    pub fn next_slowdown(&self) -> Option<Time> {
        self.pp.next_slowdown
    }

    /// The TARGET in force in ms: RFC 6817's or LEDBAT++'s.
    fn target_ms(&self) -> f64 {
        if self.p.plus_plus {
            self.p.pp_target_ms
        } else {
            self.p.target_ms
        }
    }

    fn target_s(&self) -> f64 {
        self.target_ms() * 1e-3
    }

    /// RFC 6817 §2.4.2 `update_base_delay`: a new bucket each minute, else the newest bucket's minimum.
    fn update_base_delay(&mut self, now: Time, delay: Dur) {
        let bucket = (now.as_secs_f64() / self.p.bucket_s).floor() as u64;
        if self.last_rollover != Some(bucket) {
            self.last_rollover = Some(bucket);
            self.base.push(delay, now);
        } else {
            self.base.lower_tail(delay);
        }
    }

    fn min_cwnd(&self) -> f64 {
        self.p.min_cwnd as f64
    }

    /// draft-01 §4.2: GAIN = 1 / min(16, ceil(2 TARGET / base delay)), the base delay a round trip.
    fn pp_gain(&self, base: Dur) -> f64 {
        let ratio = (2.0 * self.target_s() / base.as_secs_f64().max(1e-9)).ceil();
        1.0 / ratio.clamp(1.0, self.p.pp_gain_divisor_max)
    }

    fn pp_rtt(&self) -> Dur {
        self.pp.srtt.unwrap_or(Dur::ZERO)
    }

    /// Slow start is over: schedule the slowdown that follows it (draft-01 §4.4).
    fn pp_end_slow_start(&mut self, now: Time) {
        self.pp.phase = PpPhase::Avoidance;
        self.pp.initial = false;
        self.pp.next_slowdown = Some(match self.pp.slowdown_start.take() {
            // draft §4.4: the initial slowdown comes 2 RTTs after the initial slow start completes.
            None => now + Dur(self.pp_rtt().as_ns() * 2),
            // draft §4.4: the next one 9 times the last slowdown's duration (2-packet hold and ramp) later.
            Some(start) => {
                now + Dur::from_secs_f64(
                    now.since(start).as_secs_f64() * self.p.pp_slowdown_interval,
                )
            }
        });
    }

    /// draft-01 §4.1 slow start, §4.3 decrease, §4.4 slowdowns, on one ACK with queueing delay `queuing` over `base`.
    fn pp_on_ack(&mut self, now: Time, ev: &AckEvent, queuing: Dur, base: Dur) {
        let target = self.target_s();
        let q = queuing.as_secs_f64();
        let gain = self.pp_gain(base);
        let acked = ev.newly_acked as f64;
        if self.pp.phase == PpPhase::Slowdown {
            if now < self.pp.until {
                // draft-01 §4.4: the window is frozen at 2 packets for 2 RTTs.
                self.cwnd = self.min_cwnd();
                return;
            }
            self.pp.phase = PpPhase::SlowStart;
        }
        match self.pp.phase {
            PpPhase::SlowStart => {
                // draft §4.1 modified slow start: grow by GAIN per ACK; every slow start ends at ssthresh.
                self.cwnd += gain * acked;
                if self.cwnd >= self.pp.ssthresh {
                    self.cwnd = self.pp.ssthresh;
                    self.pp_end_slow_start(now);
                // draft §4.1: the exit at 3/4 of TARGET applies only to the initial slow start, not to a slowdown's ramp.
                } else if q > 0.75 * target && self.pp.initial {
                    self.pp_end_slow_start(now);
                }
            }
            PpPhase::Avoidance | PpPhase::Slowdown => {
                let per_rtt = if q <= target {
                    // draft-01 §4.3: below target W += GAIN per round trip (slower than Reno's 1).
                    gain
                } else {
                    // draft-01 §4.3: above target W += max(GAIN - Constant W (delay/TARGET - 1), -W/2) per round trip.
                    let c = self.p.pp_decrease_constant;
                    (gain - c * self.cwnd * (q / target - 1.0)).max(-self.cwnd / 2.0)
                };
                self.cwnd += per_rtt * acked / self.cwnd;
            }
        }
        // RFC 6817 §2.4.2: never more than ALLOWED_INCREASE above the flight before this ACK.
        let flight = ev.in_flight as f64 + acked;
        self.cwnd = self.cwnd.min(flight + self.p.allowed_increase);
        self.cwnd = self.cwnd.max(self.min_cwnd());
        if self.pp.phase == PpPhase::Avoidance && self.pp.next_slowdown.is_some_and(|t| now >= t) {
            // draft-01 §4.4: set ssthresh to the window, drop to 2 packets for 2 round trips.
            self.pp.ssthresh = self.cwnd;
            self.pp.phase = PpPhase::Slowdown;
            self.pp.slowdown_start = Some(now);
            self.pp.until =
                now + Dur::from_secs_f64(self.pp_rtt().as_secs_f64() * self.p.pp_slowdown_rtts);
            self.pp.next_slowdown = None;
            self.pp.slowdowns += 1;
            self.cwnd = self.min_cwnd();
        }
    }
}

impl Controller for Ledbat {
    fn on_ack(&mut self, now: Time, ev: &AckEvent) {
        let delay = if self.p.plus_plus {
            // draft-irtf-iccrg-ledbat-plus-plus measures round-trip delay: no receiver timestamps needed.
            let s = self.pp.srtt.map_or(ev.rtt, |s| {
                Dur(s.as_ns() - s.as_ns() / 8 + ev.rtt.as_ns() / 8)
            });
            self.pp.srtt = Some(s);
            ev.rtt
        } else {
            // RFC 6817 §2.3: the one-way delay the receiver measured for the packet this ACK is for.
            ev.recv_time.since(ev.send_time)
        };
        self.update_base_delay(now, delay);
        self.current.push(delay, now);
        // RFC 6817 §2.5: CURRENT_FILTER MUST be limited so that no sample is older than an RTT (this ACK's).
        let current = self.current.min_within(now, ev.rtt);
        let (Some(current), Some(base)) = (current, self.base.min()) else {
            return;
        };
        // §2.4.2: queuing_delay = FILTER(current_delays) - MIN(base_delays).
        let queuing = current - base;
        self.queuing_delay = Some(queuing);
        if self.p.plus_plus {
            self.pp_on_ack(now, ev, queuing, base);
            return;
        }
        let target = self.target_s();
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

    fn on_congestion_event(&mut self, now: Time, _ev: &CongestionEvent) {
        // §2.4.2 on loss: cwnd = min(cwnd, max(cwnd / 2, MIN_CWND)), once per round trip.
        self.cwnd = self.cwnd.min((self.cwnd / 2.0).max(self.min_cwnd()));
        if self.p.plus_plus && self.pp.phase == PpPhase::SlowStart {
            // A loss ends slow start as it ends Reno's (the draft keeps RFC 6817's loss response).
            self.pp_end_slow_start(now);
        }
    }

    fn on_rto(&mut self, _now: Time) {
        if self.p.plus_plus {
            // ns-3 TcpLedbatPp and Apple XNU tcp_ledbat.c: a timeout restarts the initial slow start, ssthresh max(W/2, 2).
            self.pp.ssthresh = (self.cwnd / 2.0).max(self.min_cwnd());
            self.pp.phase = PpPhase::SlowStart;
            self.pp.initial = true;
            self.pp.slowdown_start = None;
            self.pp.next_slowdown = None;
        }
        // §2.4.2 on timeout: one packet.
        self.cwnd = 1.0;
    }

    fn cwnd(&self) -> u32 {
        (self.cwnd.floor() as u32).max(1)
    }

    fn state_name(&self) -> &'static str {
        if self.p.plus_plus && self.pp.phase != PpPhase::Avoidance {
            return match self.pp.phase {
                PpPhase::SlowStart => "slow_start",
                _ => "slowdown",
            };
        }
        match self.queuing_delay {
            Some(q) if q.as_secs_f64() * 1e3 >= self.target_ms() => "above_target",
            Some(_) => "below_target",
            None => "no_sample",
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        if !self.p.plus_plus {
            return Vec::new();
        }
        let base_us = self.base.min().map_or(0, |b| b.as_ns() / 1000);
        vec![("slowdowns", self.pp.slowdowns), ("base_delay_us", base_us)]
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
            ca_rtt: Dur::from_ms(2 * owd_ms),
            in_flight: s.in_flight.len() as u32,
            last_sent_seq: seq,
            tag,
            newly_acked: 1,
            snd_una_advanced: true,
            in_recovery: false,
            rate: None,
            host_bytes: None,
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
        for _ in 0..9 {
            s.advance(Dur::from_ms(60_000));
            s.send(1);
            ack(&mut s, 50);
            assert_eq!(s.cc.base.min(), Some(Dur::from_ms(20)));
            // The earlier samples are minutes old, not current (§2.5): 30 ms of queue shows at once.
            assert_eq!(s.cc.queuing_delay(), Some(Dur::from_ms(30)));
        }
        s.advance(Dur::from_ms(60_000));
        s.send(1);
        ack(&mut s, 50);
        assert_eq!(s.cc.base.min(), Some(Dur::from_ms(50)));
        assert_eq!(s.cc.queuing_delay(), Some(Dur::ZERO));
    }

    #[test]
    fn the_current_delay_forgets_samples_older_than_a_round_trip() {
        let mut s = Script::new(Ledbat::new(Params::default()));
        s.send(1);
        ack(&mut s, 20);
        // Half a second later one packet sees a 50 ms one-way delay (a 100 ms RTT): the 20 ms sample is
        // five round trips old, so only the new one is current (RFC 6817 §2.5 CURRENT_FILTER).
        s.advance(Dur::from_ms(500));
        s.send(2);
        ack(&mut s, 50);
        assert_eq!(s.cc.queuing_delay(), Some(Dur::from_ms(30)));
        // Within a round trip both count: a 60 ms sample 20 ms later leaves the current delay at 50 ms.
        ack(&mut s, 60);
        assert_eq!(s.cc.queuing_delay(), Some(Dur::from_ms(30)));
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

    fn pp(initial_window: u32) -> Script<Ledbat> {
        let mut s = Script::new(Ledbat::new(Params {
            plus_plus: true,
            initial_window,
            ..Default::default()
        }));
        // A deep flight, so the flight + ALLOWED_INCREASE cap stays out of the way.
        s.send(200);
        s
    }

    /// ACK with a round-trip delay of `rtt_ms` (LEDBAT++ measures round trips).
    fn ack_rtt(s: &mut Script<Ledbat>, rtt_ms: u64) {
        if s.in_flight.len() < 100 {
            s.send(100);
        }
        ack(s, rtt_ms / 2);
    }

    #[test]
    fn ledbat_pp_slow_starts_at_its_gain_and_stops_at_three_quarters_of_the_60_ms_target() {
        let mut s = pp(20);
        // Base RTT 40 ms: GAIN = 1 / min(16, ceil(2 x 60 / 40)) = 1/3, added per ACK in slow start.
        ack_rtt(&mut s, 40);
        assert_close(s.cc.cwnd_f64(), 20.0 + 1.0 / 3.0);
        assert_eq!(s.cc.pp_phase(), PpPhase::SlowStart);
        ack_rtt(&mut s, 40);
        // Four 90 ms samples fill the current filter: a 50 ms queue > 45 ms ends slow start.
        for i in 0..4 {
            ack_rtt(&mut s, 90);
            let phase = if i < 3 {
                PpPhase::SlowStart
            } else {
                PpPhase::Avoidance
            };
            assert_eq!(s.cc.pp_phase(), phase);
        }
        assert_close(s.cc.cwnd_f64(), 22.0);
        assert_eq!(s.cc.queuing_delay(), Some(Dur::from_ms(50)));
        // The initial slowdown is due 2 smoothed RTTs later: srtt 40, 40, then 1/8 steps toward 90 ms
        // give 60.690919 ms; the ACK was at 90 ms.
        assert_eq!(
            s.cc.next_slowdown(),
            Some(Time(90_000_000 + 2 * 60_690_919))
        );
        // Below target (a 40 ms sample makes the filter's minimum 40 ms again: no queue): GAIN packets
        // per round trip, GAIN/W per ACK, a third of Reno's increase.
        let mut w = s.cc.cwnd_f64();
        for _ in 0..7 {
            ack_rtt(&mut s, 40);
            w += (1.0 / 3.0) / w;
            assert_close(s.cc.cwnd_f64(), w);
        }
    }

    #[test]
    fn ledbat_pp_decreases_multiplicatively_above_target_at_most_half_a_window_per_rtt() {
        let mut s = pp(30);
        ack_rtt(&mut s, 40);
        // A 150 ms RTT (110 ms queue) for four ACKs: slow start ends (82.5 > 45) on the fourth.
        for _ in 0..4 {
            ack_rtt(&mut s, 150);
        }
        assert_eq!(s.cc.pp_phase(), PpPhase::Avoidance);
        // 110/60 - 1 = 5/6: GAIN - 1 x W x 5/6 < -W/2, so the cap holds: -W/2 per RTT, -1/2 per ACK.
        let w = s.cc.cwnd_f64();
        ack_rtt(&mut s, 150);
        assert_close(s.cc.cwnd_f64(), w - 0.5);
        // A 70 ms queue (110 ms RTT): 70/60 - 1 = 1/6: W += (1/3 - W/6) / W per ACK.
        for _ in 0..3 {
            ack_rtt(&mut s, 110);
        }
        let w = s.cc.cwnd_f64();
        ack_rtt(&mut s, 110);
        assert_eq!(s.cc.queuing_delay(), Some(Dur::from_ms(70)));
        assert_close(s.cc.cwnd_f64(), w + (1.0 / 3.0 - w / 6.0) / w);
    }

    #[test]
    fn ledbat_pp_slows_down_to_2_packets_for_2_rtts_then_waits_9_slowdown_durations() {
        let mut s = pp(20);
        ack_rtt(&mut s, 40);
        for _ in 0..4 {
            ack_rtt(&mut s, 90);
        }
        let due = s.cc.next_slowdown().expect("scheduled after slow start");
        while s.cc.pp_phase() != PpPhase::Slowdown {
            s.now += Dur::from_ms(5);
            ack_rtt(&mut s, 40);
        }
        let start = s.now;
        assert!(start >= due && start < due + Dur::from_ms(45));
        assert_eq!(s.cc.cwnd(), 2);
        assert_eq!(s.cc.state_name(), "slowdown");
        let ssthresh = s.cc.pp.ssthresh;
        let until = s.cc.pp.until;
        // 2 smoothed RTTs at 2 packets, whatever the ACKs say.
        while s.now + Dur::from_ms(5) < until {
            s.now += Dur::from_ms(5);
            ack_rtt(&mut s, 40);
            assert_eq!(s.cc.cwnd_f64(), 2.0);
        }
        // Then slow start back to the window held before; the next slowdown is 9 durations later.
        while s.cc.pp_phase() != PpPhase::Avoidance {
            s.now += Dur::from_ms(5);
            ack_rtt(&mut s, 40);
        }
        assert_close(s.cc.cwnd_f64(), ssthresh);
        let end = s.now;
        assert_eq!(
            s.cc.next_slowdown(),
            Some(end + Dur::from_secs_f64(end.since(start).as_secs_f64() * 9.0))
        );
        assert_eq!(
            s.cc.counters(),
            [("slowdowns", 1), ("base_delay_us", 40_000)]
        );
    }

    #[test]
    fn ledbat_pp_ramp_after_a_slowdown_ignores_delay_and_ends_at_the_window_it_held() {
        let mut s = pp(20);
        ack_rtt(&mut s, 40);
        for _ in 0..4 {
            ack_rtt(&mut s, 90);
        }
        assert_eq!(s.cc.pp_phase(), PpPhase::Avoidance);
        while s.cc.pp_phase() != PpPhase::Slowdown {
            s.now += Dur::from_ms(5);
            ack_rtt(&mut s, 40);
        }
        let ssthresh = s.cc.pp.ssthresh;
        s.now = s.cc.pp.until;
        // The 2-packet hold is over: slow start back at GAIN (1/3 at a 40 ms base RTT) per ACK.
        ack_rtt(&mut s, 40);
        assert_eq!(s.cc.pp_phase(), PpPhase::SlowStart);
        let mut w = 2.0 + 1.0 / 3.0;
        assert_close(s.cc.cwnd_f64(), w);
        // A 50 ms queue (above 3/4 of 60 ms) ended the initial slow start; the ramp keeps growing.
        for _ in 0..4 {
            ack_rtt(&mut s, 90);
            w += 1.0 / 3.0;
            assert_close(s.cc.cwnd_f64(), w);
            assert_eq!(s.cc.pp_phase(), PpPhase::SlowStart);
        }
        assert_eq!(s.cc.queuing_delay(), Some(Dur::from_ms(50)));
        // It ends where the window was when the slowdown began.
        while s.cc.pp_phase() == PpPhase::SlowStart {
            ack_rtt(&mut s, 90);
        }
        assert_eq!(s.cc.pp_phase(), PpPhase::Avoidance);
        assert_close(s.cc.cwnd_f64(), ssthresh);
    }

    #[test]
    fn ledbat_pp_restarts_its_initial_slow_start_after_a_timeout() {
        let mut s = pp(20);
        ack_rtt(&mut s, 40);
        for _ in 0..4 {
            ack_rtt(&mut s, 90);
        }
        assert_eq!(s.cc.pp_phase(), PpPhase::Avoidance);
        assert_close(s.cc.cwnd_f64(), 20.0 + 5.0 / 3.0);
        assert!(s.cc.next_slowdown().is_some());
        // A timeout: one packet, ssthresh half the window, the initial slow start again, no slowdown due.
        s.rto();
        assert_eq!(s.cc.cwnd(), 1);
        assert_eq!(s.cc.pp_phase(), PpPhase::SlowStart);
        assert_close(s.cc.pp.ssthresh, (20.0 + 5.0 / 3.0) / 2.0);
        assert_eq!(s.cc.next_slowdown(), None);
        // GAIN per ACK (1/3 at a 40 ms base RTT), not below MIN_CWND.
        ack_rtt(&mut s, 40);
        assert_close(s.cc.cwnd_f64(), 2.0);
        ack_rtt(&mut s, 40);
        assert_close(s.cc.cwnd_f64(), 2.0 + 1.0 / 3.0);
        // As the initial slow start, it ends at 3/4 of TARGET and the first slowdown is 2 RTTs later.
        for _ in 0..4 {
            ack_rtt(&mut s, 90);
        }
        assert_eq!(s.cc.pp_phase(), PpPhase::Avoidance);
        assert_close(s.cc.cwnd_f64(), 2.0 + 5.0 / 3.0);
        let srtt = s.cc.pp.srtt.expect("sampled");
        assert_eq!(s.cc.next_slowdown(), Some(s.now + Dur(2 * srtt.as_ns())));
    }

    #[test]
    fn ledbat_defaults_are_rfc_6817_and_report_no_counters() {
        let p = Params::default();
        assert!(!p.plus_plus);
        assert_eq!(p.target_ms, 100.0);
        let s = Script::new(Ledbat::new(p));
        assert!(s.cc.counters().is_empty());
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
        // RFC 6817 §2.5: ALLOWED_INCREASE MUST be greater than 0 (0 would never let the window grow).
        bad(
            Params {
                allowed_increase: 0.0,
                ..Default::default()
            },
            "allowed_increase",
        );
    }
}
