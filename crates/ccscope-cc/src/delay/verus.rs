//! Verus (Zaki et al., "Adaptive Congestion Control for Unpredictable Cellular Networks", SIGCOMM
//! 2015), following the reference implementation yzaki/verus (`verus_server.cpp`), as reproduced in
//! paper 004 (Verus with R = 2, 4, 6 against Cubic).
//!
//! Verus learns a *delay profile*: for every window `w` it keeps an EWMA of the RTTs of packets sent
//! while the target window was `w` (the window travels in the packet; here in the `on_send` tag), and
//! once a second fits a smoothing cubic spline to those points (`common::spline`). Every 5 ms epoch
//! it moves a target delay `d_est` (down by `delta2` when the smoothed epoch maximum `d_max_last`
//! exceeds `R d_min`, down by `delta1` when the epoch maximum rose, up by `delta2` otherwise), reads the
//! target window `w_bar` off the profile (the largest `w` whose fitted delay stays <= `d_est`), and
//! sends `S = max(0, w_bar + w_crt (2 - n) / (n - 1))` packets, `n = ceil(d_t_bar / epoch)`.
//!
//! Losses: a packet missing for `loss_timeout_ms` after a later one was ACKed is lost; the first such
//! loss starts a loss phase with `w_bar = min(w_bar, 0.7 w_lost)` and `d_est = profile(w_bar)`, during which the
//! profile is frozen and each ACK adds `1 / w_bar`; the phase ends on an ACK of a packet whose window
//! was <= `w_bar`. Slow start grows `w_bar` by one per ACK from 1 and ends on an RTT above 500 ms or
//! a loss. A no-ACK timeout restarts slow start if nothing was ACKed, else enters the loss phase with
//! `d_est = d_min`. Slow start also restarts (forgetting `d_min` and the profile) when the profile has
//! no window whose delay exceeds `d_est`, and when a refit finds no recorded window of 5 or more.
//!
//! Mapping onto ccscope's window-based senders (see docs/deviations.md, "Verus"):
//! - **Epoch budget as a window.** Verus sends its `S` packets as a burst at the start of the epoch
//!   and nothing else until the next one. `cwnd()` is therefore `in_flight + budget`, where `budget`
//!   is set to `S` at each epoch and drops by one per packet sent: the sender sends exactly `S`
//!   packets at the epoch tick, and ACKs arriving mid-epoch (which lower `in_flight`) do not open the
//!   window. (A pacing rate of `S` per epoch would spread the burst over the epoch instead.) In slow
//!   start Verus keeps `w_bar` packets in flight, so there `cwnd() = w_bar`.
//! - **`w_crt`** is the sender's count of packets in flight (from the events), minus packets of an
//!   earlier slow-start session (Verus ignores their ACKs).
//! - **Losses.** The datagram sender declares a packet lost three packets later (or at the no-ACK
//!   timeout) and then never reports its ACK. Verus's own rule is kept: the controller records each
//!   packet's window by sequence number, marks the unACKed ones below an ACKed sequence number as
//!   missing, and treats them as lost `loss_timeout_ms` later (checked at each epoch). `on_loss`
//!   only updates the in-flight count.
//! - The reference's payload is 1450 bytes (MTU); here the packet size is the scenario's.
//! - The packet tag carries the slow-start session in its high 32 bits and `floor(w_bar)` at send
//!   time in its low 32 bits.

use std::collections::VecDeque;

use ccscope_core::{Dur, Time};
use serde::{Deserialize, Serialize};

use crate::common::SmoothingSpline;
use crate::params::{check_timer_ms, invalid, ParamError, ParamSpec};
use crate::{AckEvent, Controller, LossEvent, SendEvent};

/// Weight of a new RTT sample in the profile points and in `d_t_bar` (reference: ewma(.., 0.875)).
const EWMA_WEIGHT: f64 = 1.0 / 8.0;
/// Weight of the old value in `d_max_last = 0.2 d_max_last + 0.8 d_max` (reference: ewma(.., 0.2)).
const D_MAX_LAST_KEEP: f64 = 0.2;
/// `d_min` is raised by this much when `d_est` is pinned at `d_min` with under 2 packets in flight.
const D_MIN_BUMP_MS: f64 = 10.0;
/// After a loss ends slow start, profile points at windows >= max(this, w_lost) are dropped at the refit.
const CURVE_STOP_FLOOR: u32 = 100;
/// A refit that finds no recorded window at or above this restarts slow start (reference: the
/// spline needs `M = max_w / N >= 5` basis functions for some `N >= 1`, else "Alglib M<4!").
const MIN_PROFILE_WINDOW: usize = 5;
/// The no-ACK timeout is this many times the latest RTT, clamped (reference: 5 x delay).
const TIMEOUT_RTT_MULTIPLE: f64 = 5.0;
/// `delta_d_bar` must exceed this (ms) to count as a rise (reference: 0.0001).
const RISE_EPSILON_MS: f64 = 1e-4;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Epoch length (Verus §3: 5 ms; reference EPOCH).
    pub epoch_ms: f64,
    /// How often the delay profile is refitted (reference CURVE_TIMER: 1 s).
    pub profile_refit_ms: f64,
    /// Decrease of `d_est` when the epoch's maximum delay rose (reference DELTA1: 1 ms).
    pub delta1_ms: f64,
    /// Decrease of `d_est` when `d_max_last / d_min > R`, and increase otherwise (reference DELTA2: 2 ms).
    pub delta2_ms: f64,
    /// R, the tolerated ratio `d_max / d_min` (paper 004 runs 2, 4, 6; reference VERUS_R: 6, earlier 2).
    pub r: f64,
    /// Multiplicative decrease of the lost packet's window (reference VERUS_M_DECREASE: 0.7).
    pub md_factor: f64,
    /// Slow start ends when an RTT exceeds this (reference SS_EXIT_THRESHOLD: 500 ms).
    pub ss_exit_rtt_ms: f64,
    /// No-ACK timeout before any RTT sample (reference SS_INIT_TIMEOUT: 1000 ms).
    pub initial_timeout_ms: f64,
    /// Lower clamp of the no-ACK timeout 5 x RTT (reference MIN_TIMEOUT: 150 ms).
    pub min_timeout_ms: f64,
    /// Upper clamp of the no-ACK timeout 5 x RTT (reference MAX_TIMEOUT: 1000 ms).
    pub max_timeout_ms: f64,
    /// A missing packet is lost this long after a later one was ACKed (reference MISSING_PKT_EXPIRY: 150 ms).
    pub loss_timeout_ms: f64,
    /// Smoothing parameter lambda of the profile spline, packets^3 (ours; the reference's alglib fit uses rho = 2).
    pub spline_lambda: f64,
    /// Largest window in packets the profile covers (reference MAX_W_DELAY_CURVE: 40000).
    pub max_window: u32,
    /// Record (delay, window) training samples for paper 000's model (§4.1); off by default.
    pub record: Record,
}

/// Which (delay, window) training samples Verus records for paper 000's model (§4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Record {
    /// None.
    None,
    /// Per epoch: the largest delay perceived in it and the packets sent in it.
    Epoch,
    /// Per ACK: its delay and the window its packet was sent with.
    Packet,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            epoch_ms: 5.0,
            profile_refit_ms: 1000.0,
            delta1_ms: 1.0,
            delta2_ms: 2.0,
            r: 6.0,
            md_factor: 0.7,
            ss_exit_rtt_ms: 500.0,
            initial_timeout_ms: 1000.0,
            min_timeout_ms: 150.0,
            max_timeout_ms: 1000.0,
            loss_timeout_ms: 150.0,
            spline_lambda: 1000.0,
            max_window: 40_000,
            record: Record::None,
        }
    }
}

impl crate::params::Params for Params {
    const SPEC: &'static [ParamSpec] = &[
        ParamSpec { name: "epoch_ms", unit: "ms", doc: "epoch length (Verus §3; reference: 5)" },
        ParamSpec { name: "profile_refit_ms", unit: "ms", doc: "delay-profile refit interval (reference: 1000)" },
        ParamSpec { name: "delta1_ms", unit: "ms", doc: "d_est decrease when the epoch max delay rose (reference: 1)" },
        ParamSpec { name: "delta2_ms", unit: "ms", doc: "d_est decrease when d_max/d_min > R, increase otherwise (reference: 2)" },
        ParamSpec { name: "r", unit: "ratio", doc: "R, tolerated d_max/d_min (paper 004: 2, 4, 6; reference: 6, earlier 2)" },
        ParamSpec { name: "md_factor", unit: "ratio", doc: "multiplicative decrease of the lost packet's window (reference: 0.7)" },
        ParamSpec { name: "ss_exit_rtt_ms", unit: "ms", doc: "slow start ends on an RTT above this (reference: 500)" },
        ParamSpec { name: "initial_timeout_ms", unit: "ms", doc: "no-ACK timeout before an RTT sample (reference: 1000)" },
        ParamSpec { name: "min_timeout_ms", unit: "ms", doc: "lower clamp of the 5 x RTT no-ACK timeout (reference: 150)" },
        ParamSpec { name: "max_timeout_ms", unit: "ms", doc: "upper clamp of the 5 x RTT no-ACK timeout (reference: 1000)" },
        ParamSpec { name: "loss_timeout_ms", unit: "ms", doc: "a missing packet is lost this long after a later ACK (reference: 150)" },
        ParamSpec { name: "spline_lambda", unit: "packets^3", doc: "smoothing of the delay-profile spline (ours: 1000)" },
        ParamSpec { name: "max_window", unit: "packets", doc: "largest window of the delay profile (reference: 40000)" },
        ParamSpec { name: "record", unit: "none|epoch|packet", doc: "record (delay, window) training samples (paper 000 §4.1): off, per epoch or per packet" },
    ];
    fn validate(&self) -> Result<(), ParamError> {
        let positive = |key: &str, v: f64| {
            if v > 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err(invalid(key, "must be > 0 and finite"))
            }
        };
        let non_negative = |key: &str, v: f64| {
            if v >= 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err(invalid(key, "must be >= 0 and finite"))
            }
        };
        check_timer_ms("epoch_ms", self.epoch_ms)?;
        check_timer_ms("profile_refit_ms", self.profile_refit_ms)?;
        non_negative("delta1_ms", self.delta1_ms)?;
        non_negative("delta2_ms", self.delta2_ms)?;
        if !(self.r >= 1.0 && self.r.is_finite()) {
            return Err(invalid("r", "must be >= 1 and finite"));
        }
        if !(self.md_factor > 0.0 && self.md_factor <= 1.0) {
            return Err(invalid("md_factor", "must be in (0, 1]"));
        }
        positive("ss_exit_rtt_ms", self.ss_exit_rtt_ms)?;
        check_timer_ms("initial_timeout_ms", self.initial_timeout_ms)?;
        check_timer_ms("min_timeout_ms", self.min_timeout_ms)?;
        check_timer_ms("max_timeout_ms", self.max_timeout_ms)?;
        if !(self.max_timeout_ms >= self.min_timeout_ms) {
            return Err(invalid("max_timeout_ms", "must be >= min_timeout_ms"));
        }
        check_timer_ms("loss_timeout_ms", self.loss_timeout_ms)?;
        if !(self.spline_lambda >= 0.0) {
            return Err(invalid("spline_lambda", "must be >= 0"));
        }
        if !(2..=1_000_000).contains(&self.max_window) {
            return Err(invalid("max_window", "must be in [2, 1000000]"));
        }
        Ok(())
    }
}

/// Verus's phases (reference flags `slowStart`, `lossPhase`, `exitSlowStart`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// `w_bar` + 1 per ACK, `cwnd = w_bar`.
    SlowStart,
    /// Epoch-driven delay-profile control.
    Normal,
    /// After a loss or timeout: profile frozen, `w_bar += 1 / w_bar` per ACK. `after_slow_start`:
    /// slow start ended on delay, and `d_est` is not cut for `d_max_last / d_min > R` until the phase ends.
    Loss { after_slow_start: bool },
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::SlowStart => "slow_start",
            Phase::Normal => "normal",
            Phase::Loss { .. } => "loss",
        }
    }
}

/// The delay profile: per-window RTT EWMAs and the spline fitted to them.
#[derive(Clone, Debug, Default)]
struct Profile {
    /// `points[w]`: EWMA of the RTTs (ms) of packets sent with window `w`.
    points: Vec<Option<f64>>,
    fit: Option<Fit>,
}

#[derive(Clone, Debug)]
struct Fit {
    spline: SmoothingSpline,
    /// `prefix_max[i]`: the largest fitted delay over windows 2..=2 + i (up to the last knot).
    prefix_max: Vec<f64>,
    last_knot: f64,
}

impl Profile {
    fn record(&mut self, w: u32, rtt_ms: f64) {
        let w = w as usize;
        if self.points.len() <= w {
            self.points.resize(w + 1, None);
        }
        let p = &mut self.points[w];
        *p = Some(p.map_or(rtt_ms, |v| (1.0 - EWMA_WEIGHT) * v + EWMA_WEIGHT * rtt_ms));
    }

    /// Refit the spline to the points below `stop` (dropping the others). Needs two distinct windows.
    fn refit(&mut self, lambda: f64, stop: Option<u32>) {
        if let Some(stop) = stop {
            self.points.truncate(stop as usize);
        }
        let (x, y): (Vec<f64>, Vec<f64>) = self
            .points
            .iter()
            .enumerate()
            .filter_map(|(w, p)| p.map(|d| (w as f64, d)))
            .filter(|&(w, _)| w >= 1.0)
            .unzip();
        self.fit = None;
        if x.len() < 2 {
            return;
        }
        let Ok(spline) = SmoothingSpline::fit(&x, &y, None, lambda) else {
            return;
        };
        let last_knot = *x.last().expect("two points");
        let mut prefix_max = Vec::with_capacity(last_knot as usize);
        let mut running = f64::NEG_INFINITY;
        for w in 2..=last_knot as u32 {
            running = running.max(spline.eval(w as f64));
            prefix_max.push(running);
        }
        if prefix_max.iter().all(|v| v.is_finite()) && spline.end_slope().is_finite() {
            self.fit = Some(Fit {
                spline,
                prefix_max,
                last_knot,
            });
        }
    }

    /// Reference `calcDelayCurve`: scanning w = 2, 3, ..., the first w whose profile delay exceeds
    /// `d_est`, minus one; `None` if there is none below `max_window` (the reference then restarts slow
    /// start). Without a fit, the raw points are scanned and the largest recorded window is the answer
    /// if none exceeds `d_est`.
    fn window_for(&self, d_est: f64, max_window: u32) -> Option<u32> {
        let Some(fit) = &self.fit else {
            for (w, p) in self.points.iter().enumerate().skip(2) {
                if p.is_some_and(|d| d > d_est) {
                    return Some(w as u32 - 1);
                }
            }
            return Some(
                self.points
                    .iter()
                    .rposition(Option::is_some)
                    .unwrap_or(1)
                    .max(1) as u32,
            );
        };
        let i = fit.prefix_max.partition_point(|&m| m <= d_est);
        if i < fit.prefix_max.len() {
            return Some((i + 2 - 1) as u32);
        }
        // Beyond the last knot the fit is a line: solve f(w) > d_est for the first integer w.
        let slope = fit.spline.end_slope();
        if !(slope > 0.0) {
            return None;
        }
        let crossing = fit.last_knot + (d_est - fit.spline.eval(fit.last_knot)) / slope;
        let first = (crossing.floor() + 1.0)
            .max(fit.last_knot.floor() + 1.0)
            .max(2.0);
        if first - 1.0 > max_window as f64 {
            return None;
        }
        Some(first as u32 - 1)
    }

    /// Reference `calcDelayCurveInv`: the profile delay at window `w` (fitted, else the raw points,
    /// interpolated linearly between recorded windows). `None` without any point.
    fn delay_at(&self, w: f64) -> Option<f64> {
        if let Some(fit) = &self.fit {
            return Some(fit.spline.eval(w));
        }
        let below = self
            .points
            .iter()
            .enumerate()
            .take((w.floor() as usize).saturating_add(1))
            .rev()
            .find_map(|(i, p)| p.map(|d| (i as f64, d)));
        let above = self
            .points
            .iter()
            .enumerate()
            .skip(w.ceil() as usize)
            .find_map(|(i, p)| p.map(|d| (i as f64, d)));
        match (below, above) {
            (Some((x0, y0)), Some((x1, y1))) if x1 > x0 => {
                Some(y0 + (y1 - y0) * (w - x0) / (x1 - x0))
            }
            (Some((_, y)), _) | (None, Some((_, y))) => Some(y),
            (None, None) => None,
        }
    }

    /// The largest window with a recorded delay (0 if none).
    fn largest_window(&self) -> usize {
        self.points.iter().rposition(Option::is_some).unwrap_or(0)
    }

    fn has_fit(&self) -> bool {
        self.fit.is_some()
    }
}

/// A packet's tag: the slow-start session and the window when it was sent.
fn tag_of(session: u32, w: u32) -> u64 {
    ((session as u64) << 32) | w as u64
}

fn untag(tag: u64) -> (u32, u32) {
    ((tag >> 32) as u32, tag as u32)
}

/// Windows of the packets sent and not yet ACKed or found missing, by sequence number. The sender's
/// sequence numbers are consecutive, so a ring replaces a map: nothing is allocated per packet.
#[derive(Debug, Default)]
struct SentRing {
    base: u64,
    slots: VecDeque<Option<u32>>,
}

impl SentRing {
    fn insert(&mut self, seq: u64, w: u32) {
        if self.slots.is_empty() {
            self.base = seq;
        }
        if seq < self.base {
            return;
        }
        let i = (seq - self.base) as usize;
        if i >= self.slots.len() {
            self.slots.resize(i + 1, None);
        }
        self.slots[i] = Some(w);
    }

    fn remove(&mut self, seq: u64) -> Option<u32> {
        let i = seq.checked_sub(self.base)? as usize;
        let v = self.slots.get_mut(i)?.take();
        self.trim();
        v
    }

    /// Take every entry in [lo, hi) in sequence order.
    fn drain_range(&mut self, lo: u64, hi: u64, mut f: impl FnMut(u64, u32)) {
        let end = hi.min(self.base + self.slots.len() as u64);
        for s in lo.max(self.base)..end {
            if let Some(w) = self.slots[(s - self.base) as usize].take() {
                f(s, w);
            }
        }
        self.trim();
    }

    fn trim(&mut self) {
        while self.slots.front() == Some(&None) {
            self.slots.pop_front();
            self.base += 1;
        }
    }

    fn clear(&mut self) {
        self.slots.clear();
    }
}

#[derive(Debug)]
pub struct Verus {
    /// Training samples (paper 000 §4.1), when `record` asks for them.
    samples: Vec<crate::DelayWindowSample>,
    /// Packets sent since the last epoch began, and the largest delay seen in it (for samples).
    sent_this_epoch: u32,
    sample_max_rtt: Option<f64>,
    last_sample_d: Option<f64>,
    p: Params,
    phase: Phase,
    /// Target window `W_bar` in packets.
    w_bar: f64,
    /// Target delay `D_est`, ms.
    d_est: f64,
    /// Smallest RTT of this session, ms (infinite before the first).
    d_min: f64,
    /// `D_max_last`, ms: EWMA of the epochs' maximum delay (`None` until the first epoch).
    d_max_last: Option<f64>,
    /// `D_t_bar`, ms: EWMA 1/8 of the RTT.
    d_t_bar: Option<f64>,
    /// Largest RTT of the current epoch, ms.
    epoch_max_rtt: Option<f64>,
    profile: Profile,
    /// Packets Verus may still send this epoch.
    budget: u32,
    /// Packets in flight as the sender counts them.
    in_flight: u32,
    /// Of those, packets of an earlier slow-start session.
    stale_in_flight: u32,
    /// Slow-start session, carried in the tags (reference `ss_id`).
    session: u32,
    /// Window of each packet sent and not yet ACKed or found missing, by sequence number.
    sent: SentRing,
    /// Packets found missing: (when, window), by sequence number.
    missing: VecDeque<(u64, Time, u32)>,
    /// Highest sequence number ACKed in this session (reference `seqLast`).
    highest_acked: Option<u64>,
    /// When `highest_acked` last advanced.
    last_ack: Option<Time>,
    /// Highest sequence number sent.
    last_sent: Option<u64>,
    /// Latest RTT, ms, for the no-ACK timeout.
    latest_rtt_ms: Option<f64>,
    next_epoch: Option<Time>,
    next_refit: Option<Time>,
    /// After slow start ends on a loss, drop profile points at and above this window at the next refit.
    curve_stop: Option<u32>,
}

impl Verus {
    pub fn new(p: Params) -> Self {
        Verus {
            p,
            phase: Phase::SlowStart,
            w_bar: 1.0,
            d_est: 0.0,
            d_min: f64::INFINITY,
            d_max_last: None,
            d_t_bar: None,
            epoch_max_rtt: None,
            profile: Profile::default(),
            budget: 0,
            in_flight: 0,
            stale_in_flight: 0,
            session: 0,
            samples: Vec::new(),
            sent_this_epoch: 0,
            sample_max_rtt: None,
            last_sample_d: None,
            sent: SentRing::default(),
            missing: VecDeque::new(),
            highest_acked: None,
            last_ack: None,
            last_sent: None,
            latest_rtt_ms: None,
            next_epoch: None,
            next_refit: None,
            curve_stop: None,
        }
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    fn transition_to(&mut self, next: Phase) {
        let legal = match (self.phase, next) {
            (_, Phase::SlowStart) => true,
            (Phase::SlowStart, Phase::Loss { .. })
            | (Phase::Normal, Phase::Loss { .. })
            | (Phase::Loss { .. }, Phase::Loss { .. }) => true,
            (Phase::Loss { .. }, Phase::Normal) => true,
            (Phase::SlowStart, Phase::Normal) | (Phase::Normal, Phase::Normal) => false,
        };
        debug_assert!(
            legal,
            "verus: illegal transition {:?} -> {:?}",
            self.phase, next
        );
        if self.phase == Phase::SlowStart && next != Phase::SlowStart {
            // The reference fits the profile as soon as slow start ends.
            self.next_refit = Some(Time::ZERO);
        }
        self.phase = next;
    }

    /// Verus's packets in flight `W_crt`.
    fn w_crt(&self) -> u32 {
        self.in_flight.saturating_sub(self.stale_in_flight)
    }

    /// `d_min` where a floor is needed (0 before any sample).
    fn d_min_floor(&self) -> f64 {
        if self.d_min.is_finite() {
            self.d_min
        } else {
            0.0
        }
    }

    /// Reference `calcDelayCurveInv(w_bar)` after a cut: the profile's delay at `w`, or `d_min` without data.
    fn profile_delay_or_d_min(&self, w: f64) -> f64 {
        self.profile
            .delay_at(w)
            .unwrap_or_else(|| self.d_min_floor())
    }

    /// The window a packet sent now carries.
    fn tag_window(&self) -> u32 {
        (self.w_bar.floor() as u32).clamp(1, self.p.max_window)
    }

    /// Reference `restartSlowStart`: forget everything learnt and start over at one packet.
    fn restart_slow_start(&mut self) {
        self.transition_to(Phase::SlowStart);
        self.w_bar = 1.0;
        self.d_est = 0.0;
        self.d_min = f64::INFINITY;
        self.d_max_last = None;
        self.d_t_bar = None;
        self.epoch_max_rtt = None;
        self.profile = Profile::default();
        self.budget = 0;
        self.session = self.session.wrapping_add(1);
        self.stale_in_flight = self.in_flight;
        self.sent.clear();
        self.missing.clear();
        self.highest_acked = None;
        self.last_ack = None;
        self.latest_rtt_ms = None;
        self.next_refit = None;
        self.curve_stop = None;
    }

    /// Start a loss phase for a packet sent with window `w_lost` (reference `removeExpiredPacketsFromSeqQueue`).
    fn on_verus_loss(&mut self, w_lost: u32) {
        if matches!(self.phase, Phase::Loss { .. }) {
            // One multiplicative decrease per loss phase.
            return;
        }
        let from_slow_start = self.phase == Phase::SlowStart;
        self.w_bar = (self.p.md_factor * w_lost as f64).min(self.w_bar).max(1.0);
        self.d_est = self.profile_delay_or_d_min(self.w_bar);
        if from_slow_start {
            self.curve_stop = Some(w_lost.max(CURVE_STOP_FLOOR));
        }
        self.budget = 0;
        self.transition_to(Phase::Loss {
            after_slow_start: false,
        });
    }

    /// Missing packets older than `loss_timeout_ms` are lost; the first one may start a loss phase.
    fn expire_missing(&mut self, now: Time) {
        let expiry = Dur::from_ms_f64(self.p.loss_timeout_ms);
        let mut first_lost = None;
        while let Some(&(_, noticed, w)) = self.missing.front() {
            if now.since(noticed) < expiry {
                break;
            }
            self.missing.pop_front();
            first_lost.get_or_insert(w);
        }
        if let Some(w) = first_lost {
            self.on_verus_loss(w);
        }
    }

    /// Reference `updateUponReceivingPacket`: an ACK Verus accepts.
    fn on_delay_sample(&mut self, rtt_ms: f64, w: u32) {
        self.epoch_max_rtt = Some(self.epoch_max_rtt.map_or(rtt_ms, |m| m.max(rtt_ms)));
        self.d_t_bar = Some(
            self.d_t_bar
                .map_or(rtt_ms, |d| (1.0 - EWMA_WEIGHT) * d + EWMA_WEIGHT * rtt_ms),
        );
        self.d_min = self.d_min.min(rtt_ms);
        if matches!(self.phase, Phase::Loss { .. }) {
            // Congestion avoidance while recovering; the profile is not updated.
            self.w_bar += 1.0 / self.w_bar;
            if self.profile.has_fit() {
                if let Some(d) = self.profile.delay_at(self.w_bar) {
                    self.d_est = self.d_est.min(d);
                }
            }
        } else {
            self.profile.record(w.clamp(1, self.p.max_window), rtt_ms);
        }
    }

    /// Verus §3 Eq. for S_{i+1}: packets to send this epoch, with the reference's integer arithmetic.
    fn send_budget(&self, w_bar: f64) -> u32 {
        let n = self
            .d_t_bar
            .map_or(0, |d| (d / self.p.epoch_ms).ceil() as i64);
        let w_crt = self.w_crt() as i64;
        let s = if n > 1 {
            w_bar + (w_crt * (2 - n) / (n - 1)) as f64
        } else {
            w_bar - w_crt as f64
        };
        s.max(0.0).min(self.p.max_window as f64) as u32
    }

    /// One epoch (reference main loop).
    fn on_epoch(&mut self, now: Time) {
        self.expire_missing(now);
        if self.phase == Phase::SlowStart {
            return;
        }
        if self.next_refit.is_none_or(|t| now >= t) {
            self.profile
                .refit(self.p.spline_lambda, self.curve_stop.take());
            self.next_refit = Some(now + Dur::from_ms_f64(self.p.profile_refit_ms));
            if self.profile.largest_window() < MIN_PROFILE_WINDOW {
                // Reference: too few windows to fit a profile, start over. Without this, a slow start
                // that ends on its first ACKs (an RTT above 500 ms behind other flows' queue) leaves a
                // profile of window 1 only: every lookup returns 1, only window 1 is ever recorded
                // again, and the flow sends one packet per RTT for good.
                self.restart_slow_start();
                return;
            }
        }
        let d_max = match self.epoch_max_rtt.take() {
            Some(m) => m,
            None => {
                let buffering = self.last_ack.map_or(0.0, |t| now.since(t).as_ms_f64());
                self.d_max_last.map_or(buffering, |l| l.max(buffering))
            }
        };
        let d_max_last = *self.d_max_last.get_or_insert(d_max);
        let mut hold = false;
        let d_min = self.d_min_floor();
        if self.d_min.is_finite() && d_max_last / self.d_min > self.p.r {
            if !matches!(
                self.phase,
                Phase::Loss {
                    after_slow_start: true
                }
            ) {
                self.d_est = (self.d_est - self.p.delta2_ms).max(d_min);
                if self.d_est == self.d_min {
                    if self.w_crt() < 2 {
                        // Reference: d_min is probably stale; let it rise.
                        self.d_min += D_MIN_BUMP_MS;
                    } else {
                        // Reference `dMinStop`: send nothing this epoch.
                        hold = true;
                    }
                }
            }
        } else if d_max - d_max_last > RISE_EPSILON_MS {
            self.d_est = (self.d_est - self.p.delta1_ms).max(d_min);
        } else {
            self.d_est += self.p.delta2_ms;
        }
        let Some(w) = self.profile.window_for(self.d_est, self.p.max_window) else {
            // Reference: "can't map delay on delay curve".
            self.restart_slow_start();
            return;
        };
        self.w_bar = (w as f64).max(1.0);
        let s = self.send_budget(self.w_bar);
        self.d_max_last = Some(D_MAX_LAST_KEEP * d_max_last + (1.0 - D_MAX_LAST_KEEP) * d_max);
        self.budget = if hold { 0 } else { s };
    }
}

impl Controller for Verus {
    fn on_send(&mut self, now: Time, ev: &SendEvent) -> u64 {
        self.in_flight = ev.in_flight;
        self.sent_this_epoch += 1;
        if !ev.after_timeout {
            self.budget = self.budget.saturating_sub(1);
        }
        if self.next_epoch.is_none() {
            self.next_epoch = Some(now + Dur::from_ms_f64(self.p.epoch_ms));
        }
        let w = self.tag_window();
        self.sent.insert(ev.seq, w);
        self.last_sent = Some(self.last_sent.map_or(ev.seq, |s| s.max(ev.seq)));
        tag_of(self.session, w)
    }

    fn on_ack(&mut self, now: Time, ev: &AckEvent) {
        self.in_flight = ev.in_flight;
        let (session, w) = untag(ev.tag);
        let rtt = ev.rtt.as_ms_f64();
        match self.p.record {
            Record::Epoch => {
                self.sample_max_rtt = Some(self.sample_max_rtt.map_or(rtt, |m| m.max(rtt)))
            }
            Record::Packet => self.samples.push(crate::DelayWindowSample {
                t: now,
                d_ms: rtt.round() as u32,
                w,
            }),
            Record::None => {}
        }
        if session != self.session {
            // A packet of an earlier slow-start session: Verus discards its ACK.
            self.stale_in_flight = self.stale_in_flight.saturating_sub(1);
            return;
        }
        let rtt_ms = ev.rtt.as_ms_f64();
        self.latest_rtt_ms = Some(rtt_ms);
        if self.phase == Phase::SlowStart && rtt_ms > self.p.ss_exit_rtt_ms {
            // Reference: slow start exceeded SS_EXIT_THRESHOLD.
            self.w_bar = (self.p.md_factor * w as f64).max(1.0);
            // Reference with VERUS_R 6: d_est = calcDelayCurveInv(w_bar) (its R = 2 version: 0.75 d_min R).
            self.d_est = self.profile_delay_or_d_min(self.w_bar);
            self.budget = 0;
            self.transition_to(Phase::Loss {
                after_slow_start: true,
            });
        }
        if matches!(self.phase, Phase::Loss { .. }) && w as f64 <= self.w_bar {
            // The first packet sent with the reduced window is back: the loss phase is over.
            self.epoch_max_rtt = None;
            self.transition_to(Phase::Normal);
        }
        let expected = self.highest_acked.map_or(0, |h| h + 1);
        let accepted = if ev.seq >= expected {
            // Everything unACKed below this sequence number is missing from now on.
            let missing = &mut self.missing;
            self.sent
                .drain_range(expected, ev.seq, |s, ws| missing.push_back((s, now, ws)));
            self.highest_acked = Some(ev.seq);
            self.last_ack = Some(now);
            true
        } else {
            // Out of order: accepted only while still missing (not yet declared lost).
            match self.missing.binary_search_by_key(&ev.seq, |m| m.0) {
                Ok(i) => self.missing.remove(i).is_some(),
                Err(_) => false,
            }
        };
        self.sent.remove(ev.seq);
        if accepted {
            self.on_delay_sample(rtt_ms, w);
        }
        if self.phase == Phase::SlowStart {
            self.w_bar = (self.w_bar + 1.0).min(self.p.max_window as f64);
        }
    }

    fn on_loss(&mut self, _now: Time, ev: &LossEvent) {
        // Verus detects losses itself (`expire_missing`); the sender's report only frees the window.
        self.in_flight = ev.in_flight;
        if untag(ev.tag).0 != self.session {
            self.stale_in_flight = self.stale_in_flight.saturating_sub(1);
        }
    }

    fn on_timeout(&mut self, _now: Time) {
        if self.highest_acked.is_none() {
            // Reference: "lost first packet".
            self.restart_slow_start();
            return;
        }
        let after_slow_start = matches!(
            self.phase,
            Phase::Loss {
                after_slow_start: true
            }
        );
        self.transition_to(Phase::Loss { after_slow_start });
        self.d_est = self.d_min_floor();
        // Everything outstanding is written off: later ACKs of it are ignored.
        if let Some(last) = self.last_sent {
            self.highest_acked = self.highest_acked.max(Some(last));
        }
        self.sent.clear();
        self.missing.clear();
    }

    fn on_timer(&mut self, now: Time) {
        if self.next_epoch.is_some_and(|t| now >= t) {
            self.next_epoch = Some(now + Dur::from_ms_f64(self.p.epoch_ms));
            // Paper 000 §4.1: per epoch, the largest delay perceived and the packets sent. An epoch
            // without an ACK perceives, as Verus's own epoch does, the larger of the last epoch's delay
            // and the time since the last ACK; before the first ACK there is no sample.
            if self.p.record == Record::Epoch {
                let d = self.sample_max_rtt.take().or_else(|| {
                    let buffering = now.since(self.last_ack?).as_ms_f64();
                    Some(self.last_sample_d.map_or(buffering, |l| l.max(buffering)))
                });
                if let Some(d) = d {
                    self.last_sample_d = Some(d);
                    self.samples.push(crate::DelayWindowSample {
                        t: now,
                        d_ms: d.round() as u32,
                        w: self.sent_this_epoch,
                    });
                }
            }
            self.sent_this_epoch = 0;
            self.on_epoch(now);
        }
    }

    fn next_timer(&self) -> Option<Time> {
        self.next_epoch
    }

    fn take_samples(&mut self) -> Vec<crate::DelayWindowSample> {
        std::mem::take(&mut self.samples)
    }

    fn cwnd(&self) -> u32 {
        let w = match self.phase {
            Phase::SlowStart => self.w_bar as u32 + self.stale_in_flight,
            Phase::Normal | Phase::Loss { .. } => self.in_flight.saturating_add(self.budget),
        };
        w.max(1)
    }

    fn timeout(&self) -> Dur {
        let ms = self.latest_rtt_ms.map_or(self.p.initial_timeout_ms, |rtt| {
            (TIMEOUT_RTT_MULTIPLE * rtt).clamp(self.p.min_timeout_ms, self.p.max_timeout_ms)
        });
        Dur::from_ms_f64(ms)
    }

    fn state_name(&self) -> &'static str {
        self.phase.name()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;
    use crate::params::Params as _;
    use crate::testing::{assert_close, Script};
    use crate::LossCause;

    fn ms(v: u64) -> Dur {
        Dur::from_ms(v)
    }

    /// A controller past slow start, in the normal phase, whose profile is `delay(w)` for w in 1..=max_w
    /// (fitted), with `w_bar` = 30, `d_min` = delay(1) and no refit for a long while.
    fn steady(p: Params, delay: impl Fn(u32) -> f64, max_w: u32) -> Script<Verus> {
        let mut cc = Verus::new(p);
        for w in 1..=max_w {
            cc.profile.record(w, delay(w));
        }
        cc.profile.refit(cc.p.spline_lambda, None);
        cc.phase = Phase::Normal;
        cc.w_bar = 30.0;
        cc.d_min = delay(1);
        cc.d_est = delay(30);
        cc.d_max_last = Some(delay(30));
        cc.d_t_bar = Some(delay(30));
        cc.next_refit = Some(Time::from_ms(1_000_000));
        cc.next_epoch = Some(Time::from_ms(5));
        Script::new(cc)
    }

    fn linear(w: u32) -> f64 {
        40.0 + 0.5 * w as f64
    }

    #[test]
    fn slow_start_grows_by_one_per_ack_and_ends_on_an_rtt_above_500_ms() {
        let mut s = Script::new(Verus::new(Params::default()));
        assert_eq!((s.cc.cwnd(), s.cc.state_name()), (1, "slow_start"));
        // The RTT grows with the queue: 110, 120, ... ms.
        for k in 1..=12 {
            s.fill_window();
            s.ack_oldest(ms(100 + 10 * k as u64));
            assert_eq!(s.cc.cwnd(), 1 + k, "after {k} ACKs");
        }
        // 500 ms is not above the threshold.
        s.fill_window();
        s.ack_oldest(ms(500));
        assert_eq!((s.cc.cwnd(), s.cc.phase()), (14, Phase::SlowStart));
        s.fill_window();
        let (_, _, tag) = *s.in_flight.front().expect("in flight");
        let w_sent = untag(tag).1;
        s.ack_oldest(ms(501));
        assert_eq!(
            s.cc.phase(),
            Phase::Loss {
                after_slow_start: true
            }
        );
        // Reference: w_bar = 0.7 w of the packet (8: 5.6), d_est = the raw profile at w_bar, between the
        // EWMAs of windows 5 (181.25 ms) and 6 (201.25 ms); not 0.75 d_min R = 495 ms.
        // The same ACK is the loss phase's first: + 1 / w_bar.
        assert_eq!(w_sent, 8);
        let w_bar = 0.7 * w_sent as f64;
        assert_close(s.cc.w_bar, w_bar + 1.0 / w_bar);
        assert_close(s.cc.profile.points[5].expect("point"), 181.25);
        assert_close(s.cc.profile.points[6].expect("point"), 201.25);
        assert_close(s.cc.d_est, 181.25 + 0.6 * (201.25 - 181.25));
        // Nothing more is sent until the next epoch.
        assert_eq!(s.cc.cwnd() as usize, s.in_flight.len());
    }

    /// Run the epochs due now (or the next one).
    fn next_epoch(s: &mut Script<Verus>) {
        let due = s.cc.next_timer().expect("epoch timer");
        s.advance(if due > s.now { due - s.now } else { Dur::ZERO });
    }

    #[test]
    fn a_profile_below_five_windows_restarts_slow_start_at_the_refit() {
        // Behind other flows' standing queue the first RTT is above 500 ms: slow start ends with
        // w_bar = max(1, 0.7 x 1) and a profile holding window 1 only.
        let mut s = Script::new(Verus::new(Params::default()));
        s.fill_window();
        s.ack_oldest(ms(800));
        assert_eq!(
            (s.cc.phase(), s.cc.profile.largest_window()),
            (Phase::Normal, 1)
        );
        // The refit at the first epoch finds no window >= 5 (reference: "Alglib M<4!"): slow start
        // again, in a new session. Before, the flow kept w_bar = 1 (every lookup of a one-window
        // profile gives 1, so only window 1 was ever recorded again) and sent one packet per RTT.
        next_epoch(&mut s);
        assert_eq!(
            (s.cc.phase(), s.cc.session, s.cc.cwnd()),
            (Phase::SlowStart, 1, 1)
        );
        assert_eq!(s.cc.d_min, f64::INFINITY);
        // This time windows 1, 2, 4 and 8 see RTTs under 500 ms before one above: the profile is kept.
        for rtt in [100, 150, 250, 450] {
            s.fill_window();
            s.ack_all(ms(rtt));
        }
        assert_eq!((s.cc.cwnd(), s.cc.profile.largest_window()), (16, 8));
        s.fill_window();
        s.ack_oldest(ms(600));
        assert_eq!(
            s.cc.phase(),
            Phase::Loss {
                after_slow_start: true
            }
        );
        next_epoch(&mut s);
        assert_eq!(
            (s.cc.phase(), s.cc.session),
            (
                Phase::Loss {
                    after_slow_start: true
                },
                1
            )
        );
        assert!(s.cc.profile.largest_window() >= MIN_PROFILE_WINDOW);
        assert!(s.cc.profile.has_fit());
    }

    #[test]
    fn a_loss_sets_w_bar_to_md_factor_times_the_lost_packets_window() {
        let mut s = steady(Params::default(), linear, 100);
        s.send(10);
        assert!(s.in_flight.iter().all(|&(_, _, tag)| untag(tag).1 == 30));
        // The sender declares the first lost; the ACK of the second shows it missing.
        assert!(s.lose_oldest(LossCause::Reordering));
        s.ack_oldest(ms(60));
        assert_eq!(
            s.cc.phase(),
            Phase::Normal,
            "a missing packet is not lost before loss_timeout_ms"
        );
        let noticed = s.now;
        s.now = noticed + ms(149);
        s.cc.expire_missing(s.now);
        assert_eq!(s.cc.phase(), Phase::Normal);
        s.now = noticed + ms(150);
        s.cc.expire_missing(s.now);
        assert_eq!(
            s.cc.phase(),
            Phase::Loss {
                after_slow_start: false
            }
        );
        assert_close(s.cc.w_bar, 21.0);
        // d_est = profile(w_bar): the fit of a line is that line.
        assert!(
            (s.cc.d_est - linear(21)).abs() < 1e-6,
            "d_est {}",
            s.cc.d_est
        );
        // A second loss in the same phase does not cut again.
        s.lose_oldest(LossCause::Reordering);
        s.ack_oldest(ms(60));
        s.now += ms(150);
        s.cc.expire_missing(s.now);
        assert_close(s.cc.w_bar, 21.0 + 1.0 / 21.0);
    }

    #[test]
    fn loss_phase_adds_one_over_w_bar_per_ack_and_ends_on_a_packet_sent_with_the_reduced_window() {
        let mut s = steady(Params::default(), linear, 100);
        s.send(3);
        s.cc.on_verus_loss(30);
        assert_close(s.cc.w_bar, 21.0);
        // Packets sent before the loss carry w = 30 > w_bar: still in the loss phase.
        s.ack_oldest(ms(60));
        assert_close(s.cc.w_bar, 21.0 + 1.0 / 21.0);
        assert_eq!(s.cc.state_name(), "loss");
        s.send(1);
        assert_eq!(untag(s.in_flight.back().expect("sent").2).1, 21);
        s.ack_oldest(ms(60));
        s.ack_oldest(ms(60));
        assert_eq!(s.cc.state_name(), "loss");
        // The packet sent with w = 21 <= w_bar ends the phase; its RTT feeds the profile again.
        s.ack_oldest(ms(77));
        assert_eq!(s.cc.phase(), Phase::Normal);
        assert_close(
            s.cc.profile.points[21].expect("point"),
            linear(21) * 7.0 / 8.0 + 77.0 / 8.0,
        );
    }

    /// Run one epoch at the current time after ACKing the packets in flight with `rtt`.
    fn epoch_after_acks(s: &mut Script<Verus>, rtt: Dur) {
        s.ack_all(rtt);
        let due = s.cc.next_timer().expect("epoch timer");
        if due > s.now {
            s.advance(due - s.now);
        } else {
            s.advance(Dur::ZERO);
        }
    }

    #[test]
    fn d_est_falls_by_delta2_when_d_max_last_over_d_min_exceeds_r() {
        // d_min = 40.5; R = 6: a smoothed maximum of 300 ms is above 6 x 40.5 = 243.
        let mut s = steady(Params::default(), linear, 100);
        s.cc.d_max_last = Some(300.0);
        s.cc.d_est = 100.0;
        s.send(4);
        epoch_after_acks(&mut s, ms(300));
        assert_close(s.cc.d_est, 98.0);
        // d_max_last = 0.2 x 300 + 0.8 x 300.
        assert_close(s.cc.d_max_last.expect("set"), 300.0);
    }

    #[test]
    fn d_est_rises_by_delta2_when_delay_is_flat_and_falls_by_delta1_when_it_rises() {
        let mut s = steady(Params::default(), linear, 100);
        s.cc.d_max_last = Some(60.0);
        s.cc.d_est = 60.0;
        s.send(4);
        epoch_after_acks(&mut s, ms(60));
        assert_close(s.cc.d_est, 62.0);
        assert_close(s.cc.d_max_last.expect("set"), 60.0);
        s.send(4);
        epoch_after_acks(&mut s, ms(70));
        assert_close(s.cc.d_est, 61.0);
        assert_close(s.cc.d_max_last.expect("set"), 0.2 * 60.0 + 0.8 * 70.0);
        // An epoch without ACKs uses max(d_max_last, time since the last ACK): 5 ms here, so flat.
        let before = s.cc.d_max_last.expect("set");
        s.advance(ms(5));
        assert_close(s.cc.d_est, 63.0);
        assert_close(s.cc.d_max_last.expect("set"), before);
    }

    #[test]
    fn epoch_budget_matches_hand_worked_values_for_n_1_and_n_3() {
        let mut s = steady(Params::default(), linear, 100);
        s.send(12);
        assert_eq!(s.cc.w_crt(), 12);
        // n = ceil(4 / 5) = 1: S = w_bar - w_crt = 30 - 12.
        s.cc.d_t_bar = Some(4.0);
        assert_eq!(s.cc.send_budget(30.0), 18);
        // n = ceil(12 / 5) = 3: S = w_bar + w_crt (2 - 3) / (3 - 1) = 30 - 12 / 2.
        s.cc.d_t_bar = Some(12.0);
        assert_eq!(s.cc.send_budget(30.0), 24);
        // The reference divides integers, truncating toward zero: 30 - 13 / 2 = 30 - 6.
        s.send(1);
        assert_eq!(s.cc.send_budget(30.0), 24);
        // Never negative: 5 - 13 / 2 < 0.
        assert_eq!(s.cc.send_budget(5.0), 0);
    }

    #[test]
    fn epoch_budget_is_sent_at_the_tick_and_acks_do_not_reopen_the_window() {
        let mut s = steady(Params::default(), linear, 100);
        s.send(12);
        s.cc.d_t_bar = Some(12.0);
        s.cc.d_est = 53.0;
        s.cc.d_max_last = Some(300.0);
        let due = s.cc.next_timer().expect("epoch timer");
        s.advance(due - s.now);
        // d_est 53 -> 51 (ratio above R); the largest w with 40 + w / 2 <= 51 is 22.
        assert_close(s.cc.w_bar, 22.0);
        assert_eq!(s.cc.budget, 22 - 6);
        assert_eq!(s.cc.cwnd(), 12 + 16);
        s.fill_window();
        assert_eq!(s.in_flight.len(), 28);
        assert_eq!(s.cc.cwnd(), 28);
        s.ack_oldest(ms(1));
        assert_eq!(s.cc.cwnd(), 27, "an ACK mid-epoch does not let more out");
    }

    #[test]
    fn profile_lookup_returns_the_largest_w_whose_fitted_delay_is_within_d_est() {
        let s = steady(Params::default(), linear, 100);
        let profile = &s.cc.profile;
        // 40 + w / 2 <= 60 up to w = 40.
        assert_eq!(profile.window_for(60.0, 40_000), Some(40));
        assert_eq!(profile.window_for(60.4, 40_000), Some(40));
        assert_eq!(profile.window_for(60.5, 40_000), Some(41));
        // Beyond the data the fit is extended linearly: w <= 120 for 100 ms.
        assert_eq!(profile.window_for(100.0, 40_000), Some(120));
        // Below the profile's delay at w = 2, one packet.
        assert_eq!(profile.window_for(30.0, 40_000), Some(1));
        // No crossing below the largest window: the reference restarts slow start.
        assert_eq!(profile.window_for(1e6, 40_000), None);
        // A curved profile: delay flat at 40 ms up to w = 50, then 1 ms per packet.
        let knee = |w: u32| 40.0 + w.saturating_sub(50) as f64;
        let s = steady(
            Params {
                spline_lambda: 0.0,
                ..Default::default()
            },
            knee,
            120,
        );
        assert_eq!(s.cc.profile.window_for(70.0, 40_000), Some(80));
        for d in [45.0, 70.0, 95.5] {
            let w = s.cc.profile.window_for(d, 40_000).expect("crossing");
            let f = |w: u32| s.cc.profile.delay_at(w as f64).expect("fit");
            assert!(
                f(w) <= d + 1e-9 && f(w + 1) > d,
                "d {d}: w {w}, f(w) {}, f(w+1) {}",
                f(w),
                f(w + 1)
            );
        }
    }

    #[test]
    fn epoch_reads_w_bar_off_the_profile_at_d_est() {
        let mut s = steady(Params::default(), linear, 100);
        s.cc.d_est = 58.0;
        s.cc.d_max_last = Some(60.0);
        s.send(2);
        epoch_after_acks(&mut s, ms(60));
        // d_est 58 -> 60: w_bar = 40.
        assert_close(s.cc.d_est, 60.0);
        assert_close(s.cc.w_bar, 40.0);
    }

    #[test]
    fn a_timeout_before_any_ack_restarts_slow_start() {
        let mut s = Script::new(Verus::new(Params::default()));
        s.fill_window();
        s.advance(ms(1000));
        s.timeout();
        assert_eq!((s.cc.phase(), s.cc.session), (Phase::SlowStart, 1));
        // One new packet went out after the timeout; the old one still holds its place.
        assert_eq!(s.in_flight.len(), 2);
        assert_eq!(s.cc.cwnd(), 2);
        // The old session's ACK is discarded: no growth, no RTT sample.
        s.ack_oldest(ms(1200));
        assert_eq!((s.cc.cwnd(), s.cc.latest_rtt_ms), (1, None));
        s.ack_oldest(ms(80));
        assert_eq!(s.cc.cwnd(), 2);
        assert_eq!(s.cc.timeout(), ms(400));
    }

    #[test]
    fn a_timeout_after_an_ack_enters_the_loss_phase_with_d_est_at_d_min() {
        let mut s = steady(Params::default(), linear, 100);
        s.send(5);
        s.ack_oldest(ms(45));
        s.advance(ms(1000));
        s.timeout();
        assert_eq!(
            s.cc.phase(),
            Phase::Loss {
                after_slow_start: false
            }
        );
        assert_close(s.cc.d_est, linear(1));
        // Packets outstanding at the timeout are written off: their ACKs are ignored.
        let d_t_bar = s.cc.d_t_bar;
        s.ack_oldest(ms(1100));
        assert_eq!(s.cc.d_t_bar, d_t_bar);
    }

    #[test]
    fn timeout_is_five_rtts_clamped_to_150_and_1000_ms() {
        let mut s = Script::new(Verus::new(Params::default()));
        assert_eq!(s.cc.timeout(), ms(1000));
        s.send_and_ack(ms(20));
        assert_eq!(s.cc.timeout(), ms(150));
        s.send_and_ack(ms(100));
        assert_eq!(s.cc.timeout(), ms(500));
        s.send_and_ack(ms(400));
        assert_eq!(s.cc.timeout(), ms(1000));
    }

    #[test]
    fn a_packet_declared_lost_is_ignored_if_its_ack_comes_late() {
        let mut s = steady(Params::default(), linear, 100);
        s.send(3);
        // ACK the second and third first: the first is missing.
        let first = s.in_flight.pop_front().expect("sent");
        s.ack_all(ms(60));
        assert!(s.cc.missing.iter().any(|m| m.0 == first.0));
        s.now += ms(150);
        s.cc.expire_missing(s.now);
        assert_eq!(s.cc.state_name(), "loss");
        s.in_flight.push_front(first);
        let d_t_bar = s.cc.d_t_bar;
        s.ack_oldest(ms(400));
        assert_eq!(s.cc.d_t_bar, d_t_bar);
    }

    /// A bottleneck of `rate` packets per ms, an infinite FIFO queue and `base_ms` of propagation
    /// delay, driven for `secs`; returns the mean packets in flight and mean RTT (ms) over the second half.
    fn bottleneck(p: Params, rate: f64, base_ms: u64, secs: u64) -> (f64, f64) {
        let mut s = Script::new(Verus::new(p));
        let mut rtts: VecDeque<Dur> = VecDeque::new();
        let mut link_free = Time::ZERO;
        let service = Dur::from_ms_f64(1.0 / rate);
        let end = Time::from_ms(secs * 1000);
        let (mut n, mut in_flight_sum, mut rtt_sum) = (0u64, 0.0, 0.0);
        loop {
            let before = s.in_flight.len();
            s.fill_window();
            for _ in before..s.in_flight.len() {
                link_free = link_free.max(s.now) + service;
                rtts.push_back((link_free - s.now) + ms(base_ms));
            }
            let next_ack = s.in_flight.front().map(|&(_, sent, _)| sent + rtts[0]);
            let next_timer = s.cc.next_timer();
            let t = match (next_ack, next_timer) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => a.or(b).expect("something to wait for"),
            };
            if t > end {
                break;
            }
            s.advance(t - s.now);
            if next_ack == Some(t) {
                let rtt = rtts.pop_front().expect("rtt");
                s.ack_oldest(rtt);
                if s.now > Time::from_ms(secs * 500) {
                    n += 1;
                    in_flight_sum += s.in_flight.len() as f64;
                    rtt_sum += rtt.as_ms_f64();
                }
            }
        }
        (in_flight_sum / n as f64, rtt_sum / n as f64)
    }

    #[test]
    fn larger_r_allows_more_delay_and_a_larger_window() {
        // 1 packet/ms (12 Mbit/s of 1500-byte packets), 40 ms: a BDP of 40 packets.
        let run = |r: f64| {
            bottleneck(
                Params {
                    r,
                    ..Default::default()
                },
                1.0,
                40,
                30,
            )
        };
        let (w2, d2) = run(2.0);
        let (w4, d4) = run(4.0);
        let (w6, d6) = run(6.0);
        assert!(w2 < w4 && w4 < w6, "windows {w2} {w4} {w6}");
        assert!(d2 < d4 && d4 < d6, "delays {d2} {d4} {d6}");
        // R bounds the delay: the queue settles near (R - 1) x 40 ms or below.
        assert!(d2 < 2.5 * 40.0 && d6 < 6.5 * 40.0, "delays {d2} {d6}");
        // And the link stays busy: at least a BDP in flight.
        assert!(w2 >= 40.0, "window {w2}");
    }

    #[test]
    fn validate_rejects_out_of_range_params() {
        let key = |p: Params| p.validate().err().and_then(|e| e.key().map(str::to_string));
        assert_eq!(key(Params::default()), None);
        assert_eq!(
            key(Params {
                r: 0.5,
                ..Default::default()
            })
            .as_deref(),
            Some("r")
        );
        assert_eq!(
            key(Params {
                md_factor: 0.0,
                ..Default::default()
            })
            .as_deref(),
            Some("md_factor")
        );
        assert_eq!(
            key(Params {
                epoch_ms: 0.0,
                ..Default::default()
            })
            .as_deref(),
            Some("epoch_ms")
        );
        assert_eq!(
            key(Params {
                max_timeout_ms: 100.0,
                ..Default::default()
            })
            .as_deref(),
            Some("max_timeout_ms")
        );
        assert_eq!(
            key(Params {
                spline_lambda: f64::NAN,
                ..Default::default()
            })
            .as_deref(),
            Some("spline_lambda")
        );
        assert_eq!(
            key(Params {
                max_window: 1,
                ..Default::default()
            })
            .as_deref(),
            Some("max_window")
        );
    }
}
