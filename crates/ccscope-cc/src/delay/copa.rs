//! Copa (Arun and Balakrishnan, "Copa: Practical Delay-Based Congestion Control for the Internet",
//! NSDI 2018; reference implementation venkatarun95/genericCC `markoviancc.cc`, and facebook/mvfst
//! `quic/congestion_control/Copa.cpp`): the sender steers its rate toward the target 1/(delta d_q),
//! where d_q = RTTstanding - RTTmin is the measured queueing delay, RTTstanding the least RTT over the
//! last srtt/2 and RTTmin the least over 10 s. Each ACK moves cwnd by v/(delta cwnd) toward the target;
//! the velocity v doubles once the direction has held for three RTTs. It paces at 2 cwnd/RTTstanding.
//!
//! Competitive mode (§4): when the queue has not been nearly empty (the least RTT of the last 5 RTTs
//! under RTTmin + 10% of the RTT range of the last 4, genericCC `is_copa`), a buffer-filling flow shares
//! the bottleneck; 1/delta then grows by one per RTT and halves on a loss (AIMD on 1/delta), never
//! below 1/0.5.
//!
//! Choices (docs/deviations.md): the first 19 ACKs only probe, then slow start adds one packet per
//! packet ACKed until the window reaches the target (genericCC `do_ss`; mvfst doubles once per srtt
//! instead); the windowed extremes are exact (genericCC's monotone deques, `common::ExtremeWindow`);
//! the velocity follows mvfst and is halved while it exceeds delta x cwnd (genericCC); the reference's
//! heavy-loss guard (a loss rate above 30% over two RTTs cuts cwnd to 0.7x) is kept; an RTO restarts
//! from the initial window in slow start (ccp_copa, the authors' TCP datapath version).

use ccscope_core::{Bandwidth, Dur, Time};
use serde::{Deserialize, Serialize};

use crate::common::{ExtremeWindow, RttEstimator};
use crate::params::{check_positive, invalid, ParamError, ParamSpec};
use crate::{AckEvent, Controller, LossEvent};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// delta in default mode, the throughput/delay trade-off (§2.1 and §5: 0.5; Pantheon runs `auto:0.5`).
    pub delta: f64,
    /// Switch to competitive mode when a buffer-filler is detected (§4; genericCC `auto:` mode).
    pub mode_switching: bool,
    /// RTTmin window (§2.1: "smallest RTT observed over a long period of time", 10 s; mvfst kMinRTTWindowLength).
    pub min_rtt_window_s: f64,
    /// RTTstanding window as a fraction of srtt (§2.1: tau = srtt/2).
    pub standing_rtt_fraction: f64,
    /// RTTs the direction must hold before v doubles (§2.1: "three RTTs"; mvfst threshold 3).
    pub velocity_threshold_rtts: u32,
    /// Pacing rate as a multiple of cwnd/RTTstanding (§2.1: 2).
    pub pacing_gain: f64,
    /// Nearly-empty queue: d_q at most this fraction of (RTTmax - RTTmin) (§4: 10%; rtt-window.cc is_copa).
    pub empty_queue_fraction: f64,
    /// RTTmax is the largest RTT over this many srtts (§4: last 4 RTTs; rtt-window.cc srtt x 4).
    pub max_rtt_window_rtts: f64,
    /// The least RTT over this many srtts must be nearly empty for default mode (§4: 5; genericCC 4).
    pub empty_queue_rtts: f64,
    /// Initial window in packets (genericCC num_probe_pkts: 10; mvfst initCwndInMss: 10).
    pub initial_window: u32,
    /// Smallest window in packets (genericCC markoviancc.cc: max(2, window)).
    pub min_cwnd: u32,
    /// Loss rate over two RTTs above which cwnd is cut (genericCC estimators.cc ReduceOnLoss: 0.3).
    pub heavy_loss_rate: f64,
    /// The cut applied then (genericCC markoviancc.cc onACK: 0.7).
    pub heavy_loss_factor: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            delta: 0.5,
            mode_switching: true,
            min_rtt_window_s: 10.0,
            standing_rtt_fraction: 0.5,
            velocity_threshold_rtts: 3,
            pacing_gain: 2.0,
            empty_queue_fraction: 0.1,
            max_rtt_window_rtts: 4.0,
            empty_queue_rtts: 5.0,
            initial_window: 10,
            min_cwnd: 2,
            heavy_loss_rate: 0.3,
            heavy_loss_factor: 0.7,
        }
    }
}

impl crate::params::Params for Params {
    const SPEC: &'static [ParamSpec] = &[
        ParamSpec {
            name: "delta",
            unit: "1/packets",
            doc: "delta in default mode (Copa §2.1, §5: 0.5)",
        },
        ParamSpec {
            name: "mode_switching",
            unit: "bool",
            doc: "competitive mode when a buffer-filler is detected (Copa §4; genericCC auto mode)",
        },
        ParamSpec {
            name: "min_rtt_window_s",
            unit: "s",
            doc: "RTTmin window (Copa §2.1: 10)",
        },
        ParamSpec {
            name: "standing_rtt_fraction",
            unit: "srtt",
            doc: "RTTstanding window (Copa §2.1: srtt/2)",
        },
        ParamSpec {
            name: "velocity_threshold_rtts",
            unit: "RTTs",
            doc: "same-direction RTTs before v doubles (Copa §2.1: 3)",
        },
        ParamSpec {
            name: "pacing_gain",
            unit: "ratio",
            doc: "pace at this x cwnd/RTTstanding (Copa §2.1: 2)",
        },
        ParamSpec {
            name: "empty_queue_fraction",
            unit: "ratio",
            doc: "nearly empty: d_q at most this x (RTTmax - RTTmin) (Copa §4: 0.1)",
        },
        ParamSpec {
            name: "max_rtt_window_rtts",
            unit: "srtt",
            doc: "RTTmax window (Copa §4: 4 RTTs)",
        },
        ParamSpec {
            name: "empty_queue_rtts",
            unit: "srtt",
            doc: "nearly empty at least once in this many RTTs keeps default mode (Copa §4: 5)",
        },
        ParamSpec {
            name: "initial_window",
            unit: "packets",
            doc: "initial window (genericCC, mvfst: 10)",
        },
        ParamSpec {
            name: "min_cwnd",
            unit: "packets",
            doc: "smallest window (genericCC: 2)",
        },
        ParamSpec {
            name: "heavy_loss_rate",
            unit: "ratio",
            doc: "loss rate over two RTTs that cuts cwnd (genericCC ReduceOnLoss: 0.3)",
        },
        ParamSpec {
            name: "heavy_loss_factor",
            unit: "ratio",
            doc: "that cut (genericCC: 0.7)",
        },
    ];
    fn validate(&self) -> Result<(), ParamError> {
        check_positive("delta", self.delta)?;
        check_positive("min_rtt_window_s", self.min_rtt_window_s)?;
        check_positive("standing_rtt_fraction", self.standing_rtt_fraction)?;
        check_positive("pacing_gain", self.pacing_gain)?;
        check_positive("max_rtt_window_rtts", self.max_rtt_window_rtts)?;
        check_positive("empty_queue_rtts", self.empty_queue_rtts)?;
        if !(self.empty_queue_fraction >= 0.0 && self.empty_queue_fraction <= 1.0) {
            return Err(invalid("empty_queue_fraction", "must be in [0, 1]"));
        }
        if !(self.heavy_loss_rate > 0.0 && self.heavy_loss_rate <= 1.0) {
            return Err(invalid("heavy_loss_rate", "must be in (0, 1]"));
        }
        if !(self.heavy_loss_factor > 0.0 && self.heavy_loss_factor <= 1.0) {
            return Err(invalid("heavy_loss_factor", "must be in (0, 1]"));
        }
        for (key, v) in [
            ("velocity_threshold_rtts", self.velocity_threshold_rtts),
            ("initial_window", self.initial_window),
            ("min_cwnd", self.min_cwnd),
        ] {
            if v < 1 {
                return Err(invalid(key, "must be >= 1"));
            }
        }
        Ok(())
    }
}

/// Copa's operating mode (§4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// delta fixed at its default.
    Default,
    /// A buffer-filler shares the bottleneck: AIMD on 1/delta.
    Competitive,
}

/// Which way cwnd moved over the last window (§2.1 velocity).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Up,
    Down,
}

/// The velocity state (§2.1; mvfst `VelocityState`).
#[derive(Clone, Copy, Debug)]
struct Velocity {
    v: f64,
    direction: Direction,
    same_count: u32,
    /// (time, cwnd) recorded at the start of the current window.
    record: Option<(Time, f64)>,
}

#[derive(Debug)]
pub struct Copa {
    p: Params,
    /// Window in packets (fractional: each ACK moves it by v/(delta cwnd)).
    cwnd: f64,
    delta: f64,
    mode: Mode,
    slow_start: bool,
    velocity: Velocity,
    rtt: RttEstimator,
    /// rtt-window.cc `min_rtt`, `unjittered_rtt`, `is_copa_max` and `is_copa_min`: exact windowed extremes.
    min_rtt: ExtremeWindow,
    standing_rtt: ExtremeWindow,
    max_rtt: ExtremeWindow,
    recent_min_rtt: ExtremeWindow,
    /// Last RTTstanding (s), for pacing.
    rtt_standing_s: f64,
    /// Packets ACKed so far (markoviancc.cc `num_pkts_acked`): the first 2 x 10 - 1 only probe.
    acks: u64,
    /// genericCC `prev_delta_update_time` and `prev_delta_update_time_loss`.
    delta_update: Option<Time>,
    delta_loss_update: Option<Time>,
    /// genericCC ReduceOnLoss: packets and losses in the current two-RTT window and its start.
    loss_window: (u32, u32, Time),
    bytes: u32,
    mode_switches: u64,
}

impl Copa {
    pub fn new(p: Params) -> Self {
        Copa {
            cwnd: p.initial_window as f64,
            delta: p.delta,
            mode: Mode::Default,
            slow_start: true,
            velocity: Velocity {
                v: 1.0,
                direction: Direction::Up,
                same_count: 0,
                record: None,
            },
            rtt: RttEstimator::default(),
            min_rtt: ExtremeWindow::min(),
            standing_rtt: ExtremeWindow::min(),
            max_rtt: ExtremeWindow::max(),
            recent_min_rtt: ExtremeWindow::min(),
            rtt_standing_s: 0.0,
            acks: 0,
            delta_update: None,
            delta_loss_update: None,
            loss_window: (0, 0, Time::ZERO),
            bytes: 1500,
            mode_switches: 0,
            p,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }
    pub fn delta(&self) -> f64 {
        self.delta
    }
    pub fn velocity(&self) -> f64 {
        self.velocity.v
    }
    pub fn direction(&self) -> Direction {
        self.velocity.direction
    }
    pub fn in_slow_start(&self) -> bool {
        self.slow_start
    }
    /// The window before rounding up to whole packets.
    pub fn cwnd_f64(&self) -> f64 {
        self.cwnd
    }
    /// The current RTTmin in seconds (NaN before the first ACK).
    pub fn rtt_min_s(&self) -> f64 {
        self.min_rtt.get()
    }
    /// The last RTTstanding in seconds (0 before the first ACK).
    pub fn rtt_standing_s(&self) -> f64 {
        self.rtt_standing_s
    }

    /// markoviancc.cc update_intersend_time: the first 2 x num_probe_pkts - 1 ACKs leave the window alone.
    fn probing(&self) -> bool {
        self.acks < self.probe_acks()
    }

    fn probe_acks(&self) -> u64 {
        2 * self.p.initial_window as u64 - 1
    }

    /// mvfst `checkAndUpdateDirection` (§2.1): once per srtt compare cwnd with its value at the
    /// window's start; the same direction as last time for `velocity_threshold_rtts` windows doubles v.
    fn check_and_update_direction(&mut self, now: Time, srtt: Dur) {
        let Some((t0, w0)) = self.velocity.record else {
            self.velocity.record = Some((now, self.cwnd));
            return;
        };
        if now.since(t0) < srtt {
            return;
        }
        let dir = if self.cwnd > w0 {
            Direction::Up
        } else {
            Direction::Down
        };
        if dir != self.velocity.direction {
            self.velocity.v = 1.0;
            self.velocity.same_count = 0;
        } else {
            self.velocity.same_count += 1;
            if self.velocity.same_count >= self.p.velocity_threshold_rtts {
                self.velocity.v *= 2.0;
            }
        }
        self.velocity.direction = dir;
        self.velocity.record = Some((now, self.cwnd));
    }

    /// mvfst `changeDirection`: the target now lies the other way while v is large: start over at 1.
    fn change_direction(&mut self, dir: Direction, now: Time) {
        if self.velocity.direction == dir || self.velocity.v <= 1.0 {
            return;
        }
        self.velocity = Velocity {
            v: 1.0,
            direction: dir,
            same_count: 0,
            record: Some((now, self.cwnd)),
        };
    }

    /// §4 mode detection (genericCC rtt-window.cc `is_copa`): default mode while the least RTT of the
    /// last `empty_queue_rtts` srtts is under RTTmin + 10% of (RTTmax - RTTmin), strictly.
    fn update_mode(&mut self, recent_min: f64, rtt_min: f64, rtt_max: f64) {
        // With no RTT variation at all (rtt_max = rtt_min) we call the queue empty (docs/deviations.md).
        let empty = rtt_max <= rtt_min
            || recent_min < rtt_min + self.p.empty_queue_fraction * (rtt_max - rtt_min);
        if !self.p.mode_switching {
            return;
        }
        let mode = if empty {
            Mode::Default
        } else {
            Mode::Competitive
        };
        if mode != self.mode {
            self.mode = mode;
            self.mode_switches += 1;
        }
    }

    /// genericCC `update_delta` without a loss: default mode holds delta at its default; competitive
    /// mode adds one to 1/delta once per RTT (§4 additive increase).
    fn update_delta(&mut self, now: Time, rtt: Dur) {
        match self.mode {
            Mode::Default => {
                // markoviancc.cc: delta returns to its default once an RTT has passed since a loss halving.
                let due = self.delta_update.is_none()
                    || self.delta_loss_update.is_none_or(|t| t + rtt < now);
                if due {
                    self.delta = self.p.delta;
                    self.delta_update = Some(now);
                }
            }
            Mode::Competitive => {
                let due = self.delta_update.is_none_or(|t| t + rtt < now);
                if due {
                    self.delta = 1.0 / (1.0 / self.delta + 1.0);
                    self.delta_update = Some(now);
                }
                self.delta = self.delta.min(self.p.delta);
            }
        }
    }

    /// markoviancc.cc update_intersend_time after probing: slow start, then the §2.1 step toward the
    /// target window RTTstanding/(delta d_q).
    fn update_window(&mut self, now: Time, srtt: Dur, acked: f64, rtt_min: f64, rtt_standing: f64) {
        // mvfst onPacketAcked: skip an ACK whose RTTstanding is not above zero or under RTTmin.
        if rtt_standing < rtt_min || rtt_standing <= 0.0 {
            return;
        }
        let dq = rtt_standing - rtt_min;
        // markoviancc.cc: no queueing delay means an unbounded target.
        let target = if dq > 0.0 {
            rtt_standing / (dq * self.delta)
        } else {
            f64::INFINITY
        };
        if self.slow_start {
            // markoviancc.cc do_ss: one packet per packet ACKed; slow start ends once cwnd reaches the target.
            self.cwnd += acked;
            if self.cwnd >= target {
                self.slow_start = false;
            }
            return;
        }
        self.check_and_update_direction(now, srtt);
        // genericCC update_intersend_time: a velocity above delta x cwnd is halved, and v >= 1.
        if self.velocity.v > self.cwnd * self.delta {
            self.velocity.v = (self.velocity.v / 2.0).max(1.0);
        }
        let step = acked * self.velocity.v / (self.delta * self.cwnd);
        // §2.1 and mvfst: increase while the rate cwnd/RTTstanding is at most the target 1/(delta d_q).
        if self.cwnd <= target {
            self.change_direction(Direction::Up, now);
            self.cwnd += step;
        } else {
            self.change_direction(Direction::Down, now);
            self.cwnd = (self.cwnd - step).max(self.p.min_cwnd as f64);
        }
    }

    /// genericCC `ReduceOnLoss::update`: true when the loss rate of a finished two-RTT window of more
    /// than 20 packets exceeds `heavy_loss_rate`.
    fn heavy_loss(&mut self, lost: bool, now: Time) -> bool {
        let (n, l, start) = &mut self.loss_window;
        *n += 1;
        if lost {
            *l += 1;
        }
        let rtt = self.rtt.latest().unwrap_or(Dur::ZERO);
        if now > *start + rtt + rtt && *n > 20 {
            let rate = *l as f64 / *n as f64;
            *n = 0;
            *l = 0;
            *start = now;
            return rate > self.p.heavy_loss_rate;
        }
        false
    }

    fn cut_for_heavy_loss(&mut self) {
        self.cwnd = (self.cwnd * self.p.heavy_loss_factor).max(self.p.min_cwnd as f64);
    }
}

impl Controller for Copa {
    fn on_ack(&mut self, now: Time, ev: &AckEvent) {
        self.bytes = ev.bytes.max(1);
        let acked = ev.newly_acked.max(1) as f64;
        self.rtt.on_sample(ev.rtt);
        let srtt = self.rtt.srtt().unwrap_or(ev.rtt);
        let sample = ev.rtt.as_secs_f64();
        let t = now.as_ns();
        let srtts = |k: f64| (k * srtt.as_secs_f64() * 1e9) as u64;
        // rtt-window.cc new_rtt_sample: exact windowed extremes; the RTTmin window is max(10 s, 20 RTTmin).
        let prev_min = self.min_rtt.get();
        let min_window_s = if prev_min.is_nan() {
            self.p.min_rtt_window_s
        } else {
            self.p.min_rtt_window_s.max(20.0 * prev_min)
        };
        let rtt_min = self.min_rtt.update((min_window_s * 1e9) as u64, t, sample);
        // §2.1: RTTstanding over srtt/2; §4: RTTmax over 4 srtts, the recent minimum over 5.
        let rtt_standing = self
            .standing_rtt
            .update(srtts(self.p.standing_rtt_fraction), t, sample);
        let rtt_max = self
            .max_rtt
            .update(srtts(self.p.max_rtt_window_rtts), t, sample);
        let recent_min = self
            .recent_min_rtt
            .update(srtts(self.p.empty_queue_rtts), t, sample);
        self.rtt_standing_s = rtt_standing;
        self.update_mode(recent_min, rtt_min, rtt_max);
        self.update_delta(now, ev.rtt);
        let probing = self.probing();
        self.acks += acked as u64;
        if !probing {
            self.update_window(now, srtt, acked, rtt_min, rtt_standing);
        }
        // markoviancc.cc onACK: ReduceOnLoss after the window update.
        if self.heavy_loss(false, now) {
            self.cut_for_heavy_loss();
        }
    }

    fn on_loss(&mut self, now: Time, _ev: &LossEvent) {
        // genericCC update_delta(pkt_lost): in competitive mode 1/delta halves, at most once per RTT
        // (ccp_copa delta_manager.rs: "so we don't decrease twice within the same RTT").
        if self.mode == Mode::Competitive {
            let rtt = self.rtt.latest().unwrap_or(Dur::ZERO);
            let due = self.delta_loss_update.is_none_or(|t| t + rtt < now);
            if due {
                self.delta = (self.delta * 2.0).min(self.p.delta);
                self.delta_loss_update = Some(now);
            }
        }
        if self.heavy_loss(true, now) {
            self.cut_for_heavy_loss();
        }
    }

    fn on_rto(&mut self, _now: Time) {
        // ccp_copa lib.rs handle_timeout (genericCC restarts with init() after 2 s without an ACK):
        // back to the initial window, in slow start.
        self.cwnd = self.p.initial_window as f64;
        self.slow_start = true;
    }

    fn cwnd(&self) -> u32 {
        // genericCC ctcp.hh sends while seq < largest ACK + 1 + window: a fractional window lets one more go.
        (self.cwnd.ceil().min(u32::MAX as f64) as u32).max(self.p.min_cwnd)
    }

    fn pacing_rate(&self) -> Option<Bandwidth> {
        // markoviancc.cc: no intersend time (no pacing) before the first ACK after probing.
        if self.rtt_standing_s <= 0.0 || self.acks <= self.probe_acks() {
            return None;
        }
        // §2.1: pace at 2 cwnd / RTTstanding so that ACK bursts do not build a queue.
        let pps = self.p.pacing_gain * self.cwnd / self.rtt_standing_s;
        let bps = pps * self.bytes as f64 * 8.0;
        Some(Bandwidth::from_bps(bps.clamp(1.0, 1e15) as u64))
    }

    fn state_name(&self) -> &'static str {
        match (self.slow_start, self.mode) {
            (true, _) => "slow_start",
            (false, Mode::Default) => "default",
            (false, Mode::Competitive) => "competitive",
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("mode_switches", self.mode_switches)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params as _;
    use crate::testing::{assert_close, Script};

    const RTT: Dur = Dur::from_ms(40);

    fn copa() -> Script<Copa> {
        Script::new(Copa::new(Params::default()))
    }

    /// Two rounds of 10 packets ACKed at 40 ms with no queue (the 19 probing ACKs and one slow-start
    /// ACK: cwnd 11), then one packet ACKed with 20 ms of queueing at 140 ms, which ends slow start.
    fn past_slow_start(s: &mut Script<Copa>) {
        s.send(10);
        s.ack_all(RTT);
        s.send(10);
        s.ack_all(RTT);
        s.send(1);
        s.ack_oldest(Dur::from_ms(60));
    }

    #[test]
    fn the_first_19_acks_only_probe_then_slow_start_adds_a_packet_per_ack_until_the_window_reaches_the_target(
    ) {
        let mut s = copa();
        assert_eq!(s.cc.cwnd(), 10);
        // markoviancc.cc: the first 2 x 10 - 1 ACKs leave the window alone and set no pacing rate.
        s.send(10);
        s.ack_all(RTT);
        s.send(9);
        s.ack_all(RTT);
        assert_eq!(s.cc.cwnd(), 10);
        assert_eq!(s.cc.pacing_rate(), None);
        // The 20th ACK: d_q = 0, an unbounded target, one packet more.
        s.send_and_ack(RTT);
        assert_eq!(s.cc.cwnd(), 11);
        assert_eq!(s.cc.state_name(), "slow_start");
        // RTT 60 ms against RTTmin 40: d_q = 20 ms, target window 0.06 / (0.5 x 0.02) = 6 packets. The
        // ACK still adds its packet (12) and, the window now past the target, ends slow start (do_ss).
        s.send(1);
        s.ack_oldest(Dur::from_ms(60));
        assert!(!s.cc.in_slow_start());
        assert_close(s.cc.cwnd_f64(), 12.0);
        // The next ACK steps down by v/(delta cwnd) = 1/(0.5 x 12) (§2.1).
        s.send(1);
        s.ack_oldest(Dur::from_ms(60));
        assert_close(s.cc.cwnd_f64(), 12.0 - 1.0 / 6.0);
        assert_eq!(s.cc.state_name(), "default");
        // §2.1: pace at 2 cwnd / RTTstanding (60 ms), in 1500-byte packets.
        let pps = 2.0 * (12.0 - 1.0 / 6.0) / 0.06;
        assert_eq!(
            s.cc.pacing_rate(),
            Some(Bandwidth::from_bps((pps * 1500.0 * 8.0) as u64))
        );
    }

    #[test]
    fn a_fractional_window_lets_one_more_packet_go() {
        let mut s = copa();
        past_slow_start(&mut s);
        s.send(1);
        s.ack_oldest(Dur::from_ms(60));
        // 11.83 packets: genericCC's sender keeps sending while seq < largest ACK + 1 + window.
        assert_close(s.cc.cwnd_f64(), 12.0 - 1.0 / 6.0);
        assert_eq!(s.cc.cwnd(), 12);
    }

    #[test]
    fn rtt_standing_is_the_least_rtt_of_the_last_half_srtt_even_after_older_minima_expire() {
        let mut s = copa();
        // (ACK time, RTT) in us; srtt stays within 200-205 ms, so srtt/2 is 100-102.5 ms.
        let samples: [(u64, u64); 7] = [
            (1_000_000, 200_000),
            (1_040_000, 206_000),
            (1_055_000, 207_000),
            (1_070_000, 208_000),
            (1_130_000, 209_000),
            (1_150_000, 209_500),
            (1_170_000, 209_800),
        ];
        for &(t, r) in &samples {
            s.advance((Time::ZERO + Dur::from_us(t - r)).since(s.now));
            s.send(1);
        }
        let mut standing = Vec::new();
        for &(_, r) in &samples {
            s.ack_oldest(Dur::from_us(r));
            standing.push((s.cc.rtt_standing_s() * 1e6).round() as u64);
        }
        // At 1.17 s the window reaches back past 1.0677 s: 208 ms (ACKed at 1.07 s) is the least in
        // it. A three-sample filter has dropped that sample by then and answers 209 ms.
        assert_eq!(
            standing,
            [200_000, 200_000, 200_000, 200_000, 206_000, 207_000, 208_000]
        );
    }

    #[test]
    fn velocity_doubles_once_the_direction_has_held_for_three_rtts() {
        let mut s = copa();
        past_slow_start(&mut s);
        assert_close(s.cc.cwnd_f64(), 12.0);
        // Back to an empty queue: every ACK is an increase; direction is judged once per srtt.
        let mut v = Vec::new();
        for _ in 0..8 {
            s.advance(Dur::from_ms(60));
            s.send_and_ack(RTT);
            v.push(s.cc.velocity());
        }
        // The first ACK records the window; the next two see it rising (Up, as before: v = 1), the third
        // doubles v (mvfst checkAndUpdateDirection), and from the fifth v = 8 exceeds delta x cwnd
        // (about 6.7-7.3 packets) and is halved back to 4 (genericCC).
        assert_eq!(s.cc.direction(), Direction::Up);
        assert_eq!(v, [1.0, 1.0, 1.0, 2.0, 4.0, 4.0, 4.0, 4.0]);
    }

    #[test]
    fn competitive_mode_when_the_least_rtt_of_the_last_five_srtts_is_not_nearly_empty_against_the_current_range(
    ) {
        let mut s = copa();
        // 40 ms, then an RTT every 60 ms of 60 ms: RTTmin 40, RTTmax 60, "nearly empty" under 42 ms.
        s.send(10);
        s.ack_all(RTT);
        let mut log = Vec::new();
        let mut sample = |s: &mut Script<Copa>, rtt_ms: u64| {
            s.send_and_ack(Dur::from_ms(rtt_ms));
            log.push((s.now.as_ns() / 1_000_000, s.cc.mode(), 1.0 / s.cc.delta()));
        };
        for _ in 0..8 {
            sample(&mut s, 60);
        }
        // One nearly empty RTT (41 ms), then 45 ms RTTs: once the 60 ms samples leave the 4-srtt
        // RTTmax window the range is 40-45 ms and 41 ms no longer counts as nearly empty (40.5 ms).
        sample(&mut s, 41);
        for _ in 0..10 {
            sample(&mut s, 45);
        }
        let modes: Vec<(u64, Mode)> = log
            .windows(2)
            .filter(|w| w[1].1 != w[0].1)
            .map(|w| (w[1].0, w[1].1))
            .collect();
        // The 40 ms samples (at 40 ms) leave the 5-srtt window at 340 ms (5 x 49.74 ms < 300 ms);
        // the 41 ms sample at 561 ms brings default mode back; at 741 ms the last 60 ms sample (520 ms)
        // is more than 4 srtt old. (Remembering the 41 ms sample as "empty" for 5 srtt would wait to 831.)
        assert_eq!(
            modes,
            [
                (340, Mode::Competitive),
                (561, Mode::Default),
                (741, Mode::Competitive)
            ]
        );
        // §4: 1/delta grows by one per RTT, counted from the last default-mode ACK (280 ms, 60 ms RTT),
        // then from 696 ms with 45 ms RTTs (an update needs more than 45 ms: every other ACK).
        let steps: Vec<(u64, f64)> = log
            .windows(2)
            .filter(|w| (w[1].2 - w[0].2).abs() > 1e-9 && w[1].1 == Mode::Competitive)
            .map(|w| (w[1].0, w[1].2.round()))
            .collect();
        assert_eq!(
            steps,
            [(400, 3.0), (520, 4.0), (786, 3.0), (876, 4.0), (966, 5.0)]
        );
        // A loss halves 1/delta (§4 multiplicative decrease; genericCC doubles delta, capped at 0.5).
        s.send(1);
        s.lose_oldest(crate::LossCause::Reordering);
        assert_close(1.0 / s.cc.delta(), 2.5);
        assert_eq!(s.cc.counters()[0], ("mode_switches", 3));
    }

    #[test]
    fn back_in_default_mode_delta_returns_to_its_default_only_an_rtt_after_a_loss_halved_it() {
        let mut s = copa();
        s.send(10);
        s.ack_all(RTT);
        // 60 ms RTTs every 60 ms: competitive from 340 ms, 1/delta = 3, 4, 5 at 400, 520, 640 ms.
        for _ in 0..10 {
            s.send_and_ack(Dur::from_ms(60));
        }
        assert_eq!(s.now, Time::from_ms(640));
        assert_close(1.0 / s.cc.delta(), 5.0);
        // A loss at 640 ms: 1/delta = 2.5.
        s.send(1);
        s.lose_oldest(crate::LossCause::Reordering);
        assert_close(1.0 / s.cc.delta(), 2.5);
        // A 40 ms RTT (the queue empty) at 680 ms: default mode, but not more than an RTT (40 ms)
        // after the halving, so delta stays (markoviancc.cc update_delta); at 720 ms it is 0.5.
        s.send_and_ack(RTT);
        assert_eq!(s.cc.mode(), Mode::Default);
        assert_close(1.0 / s.cc.delta(), 2.5);
        s.send_and_ack(RTT);
        assert_eq!(s.now, Time::from_ms(720));
        assert_close(s.cc.delta(), 0.5);
    }

    #[test]
    fn the_rtt_min_window_stretches_to_20_rtt_min_when_that_is_longer_than_10_s() {
        let mut s = copa();
        s.send(1);
        s.ack_oldest(Dur::from_ms(600));
        // rtt-window.cc: max(10 s, 20 x 600 ms) = 12 s: the 600 ms sample (at 0.6 s) is kept at 11 s.
        s.advance(Dur::from_ms(9_700));
        s.send(1);
        s.ack_oldest(Dur::from_ms(700));
        assert_eq!(s.now, Time::from_ms(11_000));
        assert_close(s.cc.rtt_min_s(), 0.6);
        // At 12.7 s it is older than 12 s.
        s.advance(Dur::from_ms(1_000));
        s.send(1);
        s.ack_oldest(Dur::from_ms(700));
        assert_close(s.cc.rtt_min_s(), 0.7);
    }

    #[test]
    fn an_rto_restarts_from_the_initial_window_in_slow_start() {
        let mut s = copa();
        past_slow_start(&mut s);
        s.send(12);
        s.rto();
        assert_eq!(s.cc.cwnd(), 10);
        assert!(s.cc.in_slow_start());
    }

    #[test]
    fn bad_params_are_rejected_by_key() {
        let bad = |p: Params, key: &str| {
            assert_eq!(p.validate().unwrap_err().key(), Some(key));
        };
        bad(
            Params {
                delta: 0.0,
                ..Default::default()
            },
            "delta",
        );
        bad(
            Params {
                empty_queue_fraction: 1.5,
                ..Default::default()
            },
            "empty_queue_fraction",
        );
        bad(
            Params {
                min_cwnd: 0,
                ..Default::default()
            },
            "min_cwnd",
        );
        bad(
            Params {
                heavy_loss_factor: f64::NAN,
                ..Default::default()
            },
            "heavy_loss_factor",
        );
    }
}
