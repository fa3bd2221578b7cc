//! Copa (Arun and Balakrishnan, "Copa: Practical Delay-Based Congestion Control for the Internet",
//! NSDI 2018), as the authors' implementation runs it: venkatarun95/genericCC `markoviancc.cc`,
//! `rtt-window.cc` and `estimators.cc` at commit 18299d6e439a630e1f2928f3f7bef82d56695bdf, with
//! Pantheon's configuration `do_ss:auto:0.5`. The sender steers its window toward the target
//! RTTstanding/(delta d_q), where d_q = RTTstanding - RTTmin is the measured queueing delay,
//! RTTstanding the least RTT over the last srtt/2 and RTTmin the least over max(10 s, 20 RTTmin). Each
//! ACK moves the window by v/(delta cwnd) toward the target; v doubles each RTT the net direction
//! repeats. It paces at 2 cwnd/RTTstanding.
//!
//! Competitive mode (§4; genericCC `auto:` mode): when the least RTT of the last 4 srtt is not under
//! RTTmin + 10% of the RTT range of the last 4 srtt (`RTTWindow::is_copa`), 1/delta grows by one per
//! RTT and halves on every ACK that reveals a loss (AIMD on 1/delta), delta never above 0.5.
//!
//! Agreement with genericCC is checked decision by decision on recorded scripts
//! (tests/copa_reference.rs, experiments/copa_reference); the remaining differences are in
//! docs/deviations.md.

use ccscope_core::{Bandwidth, Time};
use serde::{Deserialize, Serialize};

use crate::common::ExtremeWindow;
use crate::params::{check_positive, invalid, ParamError, ParamSpec};
use crate::{AckEvent, Controller, LossEvent, SendEvent};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// delta in default mode, the throughput/delay trade-off (§2.1 and §5: 0.5; Pantheon runs `auto:0.5`).
    pub delta: f64,
    /// Switch to competitive mode when a buffer-filler is detected (§4; genericCC `auto:` mode).
    pub mode_switching: bool,
    /// RTTmin window, stretched to 20 RTTmin when longer (§2.1: 10 s; rtt-window.cc max(10e3 ms, 20 min_rtt)).
    pub min_rtt_window_s: f64,
    /// RTTstanding window as a fraction of srtt (§2.1: tau = srtt/2; rtt-window.cc srtt x 0.5).
    pub standing_rtt_fraction: f64,
    /// Pacing rate as a multiple of cwnd/RTTstanding (§2.1: 2; markoviancc.cc intersend 0.5 rtt/window).
    pub pacing_gain: f64,
    /// Nearly-empty queue: d_q under this fraction of (RTTmax - RTTmin) (§4: 10%; rtt-window.cc is_copa).
    pub empty_queue_fraction: f64,
    /// RTTmax is the largest RTT over this many srtts (§4: last 4 RTTs; rtt-window.cc srtt x 4).
    pub max_rtt_window_rtts: f64,
    /// The least RTT over this many srtts must be nearly empty for default mode (rtt-window.cc
    /// is_copa_min: srtt x 4; §4's text says 5 RTTs).
    pub empty_queue_rtts: f64,
    /// Initial window and probe packets (markoviancc.hh num_probe_pkts: 10).
    pub initial_window: u32,
    /// Smallest window in packets (markoviancc.cc: max(2, window)).
    pub min_cwnd: u32,
    /// Loss rate over two RTTs above which cwnd is cut (genericCC estimators.cc ReduceOnLoss: 0.3).
    pub heavy_loss_rate: f64,
    /// The cut applied then (genericCC markoviancc.cc onACK: 0.7).
    pub heavy_loss_factor: f64,
    /// A timeout restarts the controller (init()) once this long has passed without an ACK (ctcp.hh: 2000 ms;
    /// on the ctcp datagram sender, whose own silence this is, a scenario may give only 2).
    pub restart_after_s: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            delta: 0.5,
            mode_switching: true,
            min_rtt_window_s: 10.0,
            standing_rtt_fraction: 0.5,
            pacing_gain: 2.0,
            empty_queue_fraction: 0.1,
            max_rtt_window_rtts: 4.0,
            empty_queue_rtts: 4.0,
            initial_window: 10,
            min_cwnd: 2,
            heavy_loss_rate: 0.3,
            heavy_loss_factor: 0.7,
            restart_after_s: 2.0,
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
            doc: "nearly empty at least once in this many srtts keeps default mode (genericCC is_copa: 4; Copa §4 text: 5)",
        },
        ParamSpec {
            name: "initial_window",
            unit: "packets",
            doc: "initial window and probe packets (genericCC num_probe_pkts: 10)",
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
        ParamSpec {
            name: "restart_after_s",
            unit: "s",
            doc: "a timeout restarts Copa after this long without an ACK (genericCC ctcp.hh: 2; the ctcp sender takes only 2)",
        },
    ];
    fn validate(&self) -> Result<(), ParamError> {
        check_positive("delta", self.delta)?;
        check_positive("min_rtt_window_s", self.min_rtt_window_s)?;
        check_positive("standing_rtt_fraction", self.standing_rtt_fraction)?;
        check_positive("pacing_gain", self.pacing_gain)?;
        check_positive("max_rtt_window_rtts", self.max_rtt_window_rtts)?;
        check_positive("empty_queue_rtts", self.empty_queue_rtts)?;
        check_positive("restart_after_s", self.restart_after_s)?;
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

/// Copa's operating mode (§4; genericCC `operation_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// delta fixed at its default (`DEFAULT_MODE`).
    Default,
    /// A buffer-filler shares the bottleneck: AIMD on 1/delta (`LOSS_SENSITIVE_MODE`).
    Competitive,
}

/// rtt-window.cc `RTTWindow`: the smoothed RTT and the four windowed extremes. All times here are
/// f64 milliseconds, as genericCC keeps them, so that its rounding (and its ties) are reproduced.
#[derive(Debug)]
struct RttWindow {
    /// srtt in ms, gain 1/16, 0 before the first sample.
    srtt: f64,
    latest: f64,
    min_rtt: ExtremeWindow,
    unjittered: ExtremeWindow,
    is_copa_min: ExtremeWindow,
    is_copa_max: ExtremeWindow,
}

impl RttWindow {
    fn new() -> Self {
        RttWindow {
            srtt: 0.0,
            latest: 0.0,
            min_rtt: ExtremeWindow::min(),
            unjittered: ExtremeWindow::min(),
            is_copa_min: ExtremeWindow::min(),
            is_copa_max: ExtremeWindow::max(),
        }
    }

    /// rtt-window.cc `clear` (the latest RTT stays, as there).
    fn clear(&mut self) {
        self.srtt = 0.0;
        self.min_rtt.clear();
        self.unjittered.clear();
        self.is_copa_min.clear();
        self.is_copa_max.clear();
    }

    /// rtt-window.cc `new_rtt_sample`.
    fn on_sample(&mut self, p: &Params, rtt: f64, now: f64) {
        // rtt-window.cc: the first sample sets srtt, then srtt = rtt/16 + 15/16 srtt.
        if self.srtt == 0.0 {
            self.srtt = rtt;
        }
        let alpha = 1.0 / 16.0;
        self.srtt = alpha * rtt + (1.0 - alpha) * self.srtt;
        self.latest = rtt;
        // rtt-window.cc: max(10 s, 20 min_rtt) with min_rtt's value before this sample (none yet:
        // genericCC's 20 x DBL_MAX, unbounded).
        let min = self.min_rtt.get();
        let max_time = if min.is_nan() {
            f64::INFINITY
        } else {
            (p.min_rtt_window_s * 1e3).max(20.0 * min)
        };
        self.min_rtt.update(max_time, now, rtt);
        let standing = max_time.min(self.srtt * p.standing_rtt_fraction);
        self.unjittered.update(standing, now, rtt);
        let recent = max_time.min(self.srtt * p.empty_queue_rtts);
        self.is_copa_min.update(recent, now, rtt);
        let range = max_time.min(self.srtt * p.max_rtt_window_rtts);
        self.is_copa_max.update(range, now, rtt);
    }

    /// rtt-window.cc `is_copa`: the least recent RTT strictly under RTTmin + 10% of the recent range.
    fn is_copa(&self, fraction: f64) -> bool {
        let min = self.min_rtt.get();
        let threshold = min + fraction * (self.is_copa_max.get() - min);
        self.is_copa_min.get() < threshold
    }
}

/// estimators.cc `ReduceOnLoss`: packets and losses over a window of more than two RTTs.
#[derive(Debug, Default)]
struct ReduceOnLoss {
    lost: u32,
    pkts: u32,
    /// ms.
    start: f64,
}

impl ReduceOnLoss {
    /// estimators.cc `ReduceOnLoss::update`: true when a closed window's loss rate exceeds `rate`.
    fn update(&mut self, lost: bool, now: f64, rtt: f64, rate: f64) -> bool {
        if lost {
            self.lost += 1;
        }
        self.pkts += 1;
        if now > self.start + 2.0 * rtt && self.pkts > 20 {
            let r = self.lost as f64 / self.pkts as f64;
            *self = ReduceOnLoss {
                lost: 0,
                pkts: 0,
                start: now,
            };
            return r > rate;
        }
        false
    }
}

#[derive(Debug)]
pub struct Copa {
    p: Params,
    /// markoviancc.cc `_the_window`, packets (fractional).
    window: f64,
    /// markoviancc.cc `_intersend_time` in ms; 0 sends unpaced.
    intersend: f64,
    delta: f64,
    mode: Mode,
    slow_start: bool,
    rtt: RttWindow,
    /// markoviancc.cc `update_amt` (the velocity v), `update_dir`, `prev_update_dir`,
    /// `last_update_time` (ms).
    update_amt: f64,
    update_dir: i64,
    prev_update_dir: i64,
    last_update_time: f64,
    /// markoviancc.cc `prev_delta_update_time` and `prev_delta_update_time_loss`, ms (zero: never).
    prev_delta_update: f64,
    prev_delta_update_loss: f64,
    reduce_on_loss: ReduceOnLoss,
    /// markoviancc.cc `num_pkts_acked`: the first 2 x 10 - 1 ACKs only probe.
    acked: u64,
    /// Losses the transport reported since the last ACK: genericCC learns of them in the next onACK.
    pending_losses: u32,
    /// ctcp.hh `last_ack_time` (ms): the flow's first send, then the last ACK or restart (NaN before
    /// the first send).
    last_ack: f64,
    bytes: u32,
    mode_switches: u64,
    restarts: u64,
}

impl Copa {
    pub fn new(p: Params) -> Self {
        let mut c = Copa {
            window: 0.0,
            intersend: 0.0,
            delta: p.delta,
            mode: Mode::Default,
            slow_start: true,
            rtt: RttWindow::new(),
            update_amt: 1.0,
            update_dir: 1,
            prev_update_dir: 1,
            last_update_time: 0.0,
            prev_delta_update: 0.0,
            prev_delta_update_loss: 0.0,
            reduce_on_loss: ReduceOnLoss::default(),
            acked: 0,
            pending_losses: 0,
            last_ack: f64::NAN,
            bytes: 1500,
            mode_switches: 0,
            restarts: 0,
            p,
        };
        c.init();
        c
    }

    /// markoviancc.cc `init()` (ctcp.hh calls it at the start and after 2 s without an ACK).
    fn init(&mut self) {
        self.intersend = 0.0;
        self.window = self.p.initial_window as f64;
        // markoviancc.cc init: outside constant-delta mode delta is 1 until the first ACK sets it.
        if self.p.mode_switching {
            self.delta = 1.0;
        }
        self.rtt.clear();
        self.update_dir = 1;
        self.prev_update_dir = 1;
        self.update_amt = 1.0;
        self.last_update_time = 0.0;
        self.acked = 0;
        self.mode = Mode::Default;
        self.prev_delta_update = 0.0;
        self.prev_delta_update_loss = 0.0;
        self.reduce_on_loss = ReduceOnLoss::default();
        self.slow_start = true;
        self.pending_losses = 0;
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }
    pub fn delta(&self) -> f64 {
        self.delta
    }
    /// The velocity v (markoviancc.cc `update_amt`).
    pub fn velocity(&self) -> f64 {
        self.update_amt
    }
    pub fn in_slow_start(&self) -> bool {
        self.slow_start
    }
    /// The window before rounding up to whole packets.
    pub fn cwnd_f64(&self) -> f64 {
        self.window
    }
    /// The time between packets at the pacing rate, seconds (0: unpaced).
    pub fn intersend_s(&self) -> f64 {
        self.intersend / 1e3
    }
    /// The current RTTmin in seconds (NaN before the first ACK).
    pub fn rtt_min_s(&self) -> f64 {
        self.rtt.min_rtt.get() / 1e3
    }
    /// The current RTTstanding in seconds (NaN before the first ACK).
    pub fn rtt_standing_s(&self) -> f64 {
        self.rtt.unjittered.get() / 1e3
    }

    /// markoviancc.cc `update_delta`.
    fn update_delta(&mut self, lost: bool, now: f64, cur_rtt: f64) {
        if self.p.mode_switching {
            let mode = if self.rtt.is_copa(self.p.empty_queue_fraction) {
                Mode::Default
            } else {
                Mode::Competitive
            };
            if mode != self.mode {
                self.mode = mode;
                self.mode_switches += 1;
            }
        }
        match self.mode {
            Mode::Default => {
                if self.prev_delta_update == 0.0 || self.prev_delta_update_loss + cur_rtt < now {
                    self.delta = self.p.delta;
                    self.prev_delta_update = now;
                }
            }
            Mode::Competitive => {
                if self.prev_delta_update == 0.0 {
                    self.delta = self.p.delta;
                }
                // §4 multiplicative decrease of 1/delta; genericCC passes no RTT here, so every ACK
                // that reveals a loss halves it (unless one already did at this very instant).
                if lost && self.prev_delta_update_loss + cur_rtt < now {
                    self.delta *= 2.0;
                    self.prev_delta_update_loss = now;
                } else if self.prev_delta_update + cur_rtt < now {
                    // §4 additive increase: 1/delta grows by one per RTT.
                    self.delta = 1.0 / (1.0 / self.delta + 1.0);
                    self.prev_delta_update = now;
                }
                self.delta = self.delta.min(self.p.delta);
            }
        }
    }

    /// markoviancc.cc `update_intersend_time`.
    fn update_intersend_time(&mut self, now: f64) {
        // The first two RTTs are for probing.
        if self.acked < 2 * self.p.initial_window as u64 - 1 {
            return;
        }
        let rtt = self.rtt.unjittered.get();
        let queuing_delay = rtt - self.rtt.min_rtt.get();
        let target = if queuing_delay == 0.0 {
            f64::MAX
        } else {
            rtt / (queuing_delay * self.delta)
        };
        if self.slow_start {
            // do_ss: one packet per ACK until the window reaches the target.
            self.window += 1.0;
            if self.window >= target {
                self.slow_start = false;
            }
        } else {
            // §2.1 velocity: once per (latest) RTT, v doubles if the net direction of the last RTT's
            // steps repeats the previous one, else it restarts at 1.
            if self.last_update_time + self.rtt.latest < now {
                if self.prev_update_dir * self.update_dir > 0 {
                    if self.update_amt < 0.006 {
                        self.update_amt += 0.005;
                    } else {
                        self.update_amt = self.update_amt.trunc() * 2.0;
                    }
                } else {
                    self.update_amt = 1.0;
                    self.prev_update_dir *= -1;
                }
                self.last_update_time = now;
                self.update_dir = 0;
            }
            if self.update_amt > self.window * self.delta {
                self.update_amt /= 2.0;
            }
            self.update_amt = self.update_amt.max(1.0);
            // §2.1: increase while the window is under the target, else decrease, by v/(delta cwnd).
            if self.window < target {
                self.update_dir += 1;
                self.window += self.update_amt / (self.delta * self.window);
            } else {
                self.update_dir -= 1;
                self.window -= self.update_amt / (self.delta * self.window);
            }
        }
        self.window = self.window.max(self.p.min_cwnd as f64);
        self.intersend = (1.0 / self.p.pacing_gain) * rtt / self.window;
    }
}

/// A simulation time in genericCC's unit, double milliseconds.
fn ms(t: Time) -> f64 {
    t.as_ns() as f64 / 1e6
}

impl Controller for Copa {
    fn on_ack(&mut self, now: Time, ev: &AckEvent) {
        self.bytes = ev.bytes.max(1);
        // ctcp.hh and markoviancc.cc keep time in double ms; the RTT is cur_time - sent_time.
        let now = ms(now);
        let rtt = now - ms(ev.send_time);
        self.last_ack = now;
        // markoviancc.cc onACK, in its order: the RTT sample, delta, the window, then the losses this
        // ACK revealed (genericCC finds them here, as gaps in the ACKed sequence), then ReduceOnLoss.
        self.rtt.on_sample(&self.p, rtt, now);
        self.update_delta(false, now, rtt);
        // genericCC ACKs every packet; a cumulative ACK of several counts as that many.
        let packets = ev.newly_acked.max(1);
        for k in 0..packets {
            self.update_intersend_time(now);
            if k + 1 < packets {
                self.acked += 1;
            }
        }
        let latest = self.rtt.latest;
        let mut reduce = false;
        let lost = std::mem::take(&mut self.pending_losses);
        for _ in 0..lost {
            reduce |= self
                .reduce_on_loss
                .update(true, now, latest, self.p.heavy_loss_rate);
        }
        if lost > 0 {
            self.update_delta(true, now, 0.0);
        }
        for _ in 0..packets {
            reduce |= self
                .reduce_on_loss
                .update(false, now, latest, self.p.heavy_loss_rate);
        }
        if reduce {
            self.window = (self.window * self.p.heavy_loss_factor).max(self.p.min_cwnd as f64);
            self.intersend = (1.0 / self.p.pacing_gain) * self.rtt.unjittered.get() / self.window;
        }
        self.acked += 1;
    }

    fn on_send(&mut self, now: Time, _ev: &SendEvent) -> u64 {
        // ctcp.hh: `last_ack_time` starts at the flow's start (cur_time before init()), not at time zero.
        if self.last_ack.is_nan() {
            self.last_ack = ms(now);
        }
        0
    }

    fn on_loss(&mut self, _now: Time, _ev: &LossEvent) {
        // markoviancc.cc: a loss acts only in the onACK that reveals it (the transport reports it first).
        self.pending_losses = self.pending_losses.saturating_add(1);
    }

    fn on_rto(&mut self, now: Time) {
        // ctcp.hh: after more than 2 s without an ACK the sender calls init() (and forgets what is in
        // flight); a shorter silence changes nothing (markoviancc.cc onTimeout is empty).
        let now = ms(now);
        if now - self.last_ack > self.p.restart_after_s * 1e3 {
            self.init();
            self.last_ack = now;
            self.restarts += 1;
        }
    }

    fn cwnd(&self) -> u32 {
        // markoviancc.cc `_the_window`, rounded up to whole packets (ctcp.hh compares seq < ... + window;
        // the datagram transport's `ctcp` mode adds ctcp.hh's own +1 accounting of the largest ACK).
        (self.window.ceil().min(u32::MAX as f64) as u32).max(self.p.min_cwnd)
    }

    fn pacing_rate(&self) -> Option<Bandwidth> {
        // markoviancc.cc: no intersend time (unpaced) until the first window update after probing.
        if self.intersend <= 0.0 {
            return None;
        }
        let bps = self.bytes as f64 * 8.0 * 1e3 / self.intersend;
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
        vec![
            ("mode_switches", self.mode_switches),
            ("restarts", self.restarts),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params as _;
    use crate::testing::{assert_close, Script};
    use ccscope_core::Dur;

    const RTT: Dur = Dur::from_ms(40);

    fn copa() -> Script<Copa> {
        Script::new(Copa::new(Params::default()))
    }

    #[test]
    fn the_first_19_acks_only_probe_then_slow_start_adds_a_packet_per_ack_until_the_window_reaches_the_target(
    ) {
        let mut s = copa();
        assert_eq!(s.cc.cwnd(), 10);
        // markoviancc.cc: the first 2 x 10 - 1 ACKs leave the window alone and set no intersend time.
        s.send(10);
        s.ack_all(RTT);
        s.send(9);
        s.ack_all(RTT);
        assert_close(s.cc.cwnd_f64(), 10.0);
        assert_eq!(s.cc.pacing_rate(), None);
        // The 20th ACK: d_q = 0, an unbounded target, one packet more; intersend 0.5 x 40 ms / 11.
        s.send_and_ack(RTT);
        assert_close(s.cc.cwnd_f64(), 11.0);
        assert_close(s.cc.intersend_s(), 0.5 * 0.040 / 11.0);
        assert_eq!(s.cc.state_name(), "slow_start");
        // RTT 60 ms against RTTmin 40: the target 0.06 / (0.02 x 0.5) = 6 packets. The ACK adds its
        // packet (12) and, the window now past the target, ends slow start (do_ss).
        s.send(1);
        s.ack_oldest(Dur::from_ms(60));
        assert!(!s.cc.in_slow_start());
        assert_close(s.cc.cwnd_f64(), 12.0);
    }

    #[test]
    fn the_window_is_the_fractional_window_rounded_up() {
        let mut s = copa();
        assert_eq!(s.cc.cwnd(), 10);
        s.send(10);
        s.ack_oldest(RTT);
        // The ACK only probes: still 10 (ctcp.hh's +1 beyond the largest ACK is the transport's).
        assert_eq!(s.cc.cwnd(), 10);
        let mut s = copa();
        past_slow_start(&mut s);
        s.send(1);
        s.ack_oldest(Dur::from_ms(60));
        assert_close(s.cc.cwnd_f64(), 12.0 - 2.0 / 6.0);
        assert_eq!(s.cc.cwnd(), 12);
    }

    /// Probing and slow start at 40 ms, then one ACK at 60 ms that ends slow start (cwnd 12).
    fn past_slow_start(s: &mut Script<Copa>) {
        s.send(10);
        s.ack_all(RTT);
        s.send(10);
        s.ack_all(RTT);
        s.send(1);
        s.ack_oldest(Dur::from_ms(60));
        assert!(!s.cc.in_slow_start());
    }

    #[test]
    fn velocity_doubles_when_the_net_direction_of_an_rtt_repeats_with_no_three_rtt_wait() {
        let mut s = copa();
        past_slow_start(&mut s);
        // markoviancc.cc: the first window update finds last_update_time + RTT < now with
        // prev_update_dir = update_dir = 1 (init), so v = (int)1 x 2 = 2 at once; the target is 6
        // packets (RTTstanding 60 ms, d_q 20 ms), so the step is down by 2 / (0.5 x 12).
        s.send(1);
        s.ack_oldest(Dur::from_ms(60));
        assert_close(s.cc.velocity(), 2.0);
        assert_close(s.cc.cwnd_f64(), 12.0 - 2.0 / 6.0);
        // Within the same RTT v holds; an RTT later the net direction (down) differs from the
        // remembered one (up): v restarts at 1.
        s.send(1);
        s.ack_oldest(Dur::from_ms(60));
        assert_close(s.cc.velocity(), 2.0);
        s.advance(Dur::from_ms(70));
        s.send(1);
        s.ack_oldest(Dur::from_ms(60));
        assert_close(s.cc.velocity(), 1.0);
    }

    #[test]
    fn with_no_rtt_variation_yet_the_queue_does_not_count_as_nearly_empty() {
        let mut s = copa();
        // rtt-window.cc is_copa: is_copa_min < min + 0.1 (max - min) is false when all RTTs are equal.
        s.send(1);
        s.ack_oldest(RTT);
        assert_eq!(s.cc.mode(), Mode::Competitive);
        assert_close(s.cc.delta(), 0.5);
        // A second, larger RTT makes the range; the least recent RTT (40) is under 40 + 0.1 x 10.
        s.send(1);
        s.ack_oldest(Dur::from_ms(50));
        assert_eq!(s.cc.mode(), Mode::Default);
        assert_eq!(s.cc.counters()[0], ("mode_switches", 2));
    }

    #[test]
    fn in_competitive_mode_every_ack_that_reveals_a_loss_halves_one_over_delta() {
        let mut s = copa();
        s.send(10);
        s.ack_all(RTT);
        // 60 ms RTTs every 60 ms: the 40 ms samples leave the 4-srtt window, so the queue never reads
        // as nearly empty; 1/delta grows by one per RTT.
        for _ in 0..20 {
            s.send_and_ack(Dur::from_ms(60));
        }
        assert_eq!(s.cc.mode(), Mode::Competitive);
        let before = 1.0 / s.cc.delta();
        assert!(before >= 8.0, "1/delta {before}");
        // Two losses revealed by two ACKs 1 ms apart: genericCC passes no RTT to the loss check, so
        // each halves 1/delta (no once-per-RTT guard). The ACK's own update comes first.
        s.send(4);
        s.lose_oldest(crate::LossCause::Reordering);
        s.advance(Dur::from_ms(1));
        s.ack_oldest(Dur::from_ms(60));
        let after_one = 1.0 / s.cc.delta();
        s.lose_oldest(crate::LossCause::Reordering);
        s.advance(Dur::from_ms(1));
        s.ack_oldest(Dur::from_ms(60));
        assert_close(1.0 / s.cc.delta(), after_one / 2.0);
        assert!(after_one <= before / 2.0 + 1e-9, "{after_one} vs {before}");
    }

    #[test]
    fn on_the_reliable_transport_losses_an_rto_reports_count_at_the_next_ack_even_if_the_rto_is_undone(
    ) {
        // Documents a departure (docs/deviations.md, Copa): genericCC never retransmits and has no RTO,
        // so a spurious timeout costs it nothing; on the reliable transport an RTO declares every
        // outstanding packet lost (`on_loss`, cause Timeout) before F-RTO can find it spurious, and
        // Copa applies those losses at the next ACK; `on_undo` does not take them back.
        let run = |rto_loss: bool| {
            let mut s = copa();
            s.send(10);
            s.ack_all(RTT);
            for _ in 0..20 {
                s.send_and_ack(Dur::from_ms(60));
            }
            assert_eq!(s.cc.mode(), Mode::Competitive);
            s.send(3);
            if rto_loss {
                s.lose_oldest(crate::LossCause::Timeout);
                s.cc.on_rto(s.now);
                s.cc.on_undo(s.now);
            } else {
                s.cc.on_rto(s.now);
                s.in_flight.pop_front();
            }
            s.ack_oldest(Dur::from_ms(60));
            1.0 / s.cc.delta()
        };
        // The ACK after the undone timeout halves 1/delta (competitive mode's multiplicative decrease).
        assert_close(run(true), run(false) / 2.0);
    }

    #[test]
    fn a_timeout_restarts_copa_only_after_more_than_2_s_without_an_ack() {
        let mut s = copa();
        past_slow_start(&mut s);
        s.send(5);
        let w = s.cc.cwnd_f64();
        // markoviancc.cc onTimeout is empty: 1 s of silence changes nothing.
        s.advance(Dur::from_ms(1000));
        s.cc.on_rto(s.now);
        assert_close(s.cc.cwnd_f64(), w);
        // ctcp.hh: more than 2000 ms since the last ACK: init(), back to 10 in probing and slow start.
        s.advance(Dur::from_ms(1100));
        s.cc.on_rto(s.now);
        assert_close(s.cc.cwnd_f64(), 10.0);
        assert!(s.cc.in_slow_start());
        assert_eq!(s.cc.pacing_rate(), None);
        assert!(s.cc.rtt_min_s().is_nan());
        assert_eq!(s.cc.counters()[1], ("restarts", 1));
    }

    #[test]
    fn a_flow_that_starts_late_does_not_restart_at_its_first_timeout_within_2_s_of_its_start() {
        let mut s = copa();
        s.advance(Dur::from_ms(5000));
        s.send(10);
        s.advance(Dur::from_ms(1000));
        s.cc.on_rto(s.now);
        assert_eq!(s.cc.counters()[1], ("restarts", 0));
        s.advance(Dur::from_ms(1100));
        s.cc.on_rto(s.now);
        assert_eq!(s.cc.counters()[1], ("restarts", 1));
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
                restart_after_s: -1.0,
                ..Default::default()
            },
            "restart_after_s",
        );
    }
}
