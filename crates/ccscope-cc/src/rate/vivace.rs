//! PCC Vivace (Dong et al., "PCC Vivace: Online-Learning Congestion Control", NSDI 2018; reference
//! PCCproject/PCC-Uspace `pcc_sender.cpp`, `pcc_vivace_sender.cpp`, `pcc_utility_manager.cpp`): the
//! sender tries a rate for one monitor interval (MI, about one min RTT), scores it with the latency
//! utility u = x^0.9 - 900 x max(0, dRTT/dT) - 11.35 x L (x in Mbit/s, L the MI's loss rate), and
//! moves the rate by online gradient ascent on u.
//!
//! Modes: STARTING doubles the rate each MI while the utility grows, then halves it and probes;
//! PROBING runs pairs of MIs at r(1 + eps) and r(1 - eps) (eps = 0.05, in random order, three pairs)
//! and decides a direction when the pairs agree; DECISION_MADE moves by theta x gamma (the utility
//! gradient gamma, the confidence amplifier ((k+1)/2)^1.2 after k same-direction steps, bounded by
//! the dynamic change boundary omega = 0.05 + 0.05 i of the rate) until the utility stops improving.
//!
//! MI accounting: `on_send` tags each packet of a useful MI with the MI's id; every packet an ACK
//! delivers comes back with its own tag (`on_packet_acked`, so a delayed ACK's two packets may go to
//! two MIs), as does a loss, so the MI's sent, acked and lost counts and its RTT regression need no
//! side table. The delivery-rate sample is not used: Vivace scores the rate it sent at.
//!
//! RTT handling as the reference's (pcc_monitor_interval_queue.cpp, pcc_utility_manager.cpp): an ACK's
//! RTT sample joins the MI of each packet it delivered, at that packet's number, one ACK later, once
//! the next ACK interval shows whether it came in an ACK burst (then it is unreliable); an MI ends
//! only after 4 reliable samples and one min RTT, doubled once if under 80% of its samples are
//! reliable; its RTT gradient counts when it exceeds its fitting error
//! or when the trend of the last 6 MIs' mean RTTs rises outside 2 deviations of its running average;
//! STARTING ends early when the smoothed RTT exceeds (1 + 100) x the RTT at the MI's start.
//!
//! Choices (docs/deviations.md): the reference's RTT-deviation tolerance is not modelled (it feeds only
//! the Scavenger utility's deviation penalty, not Vivace's); the in-flight cap is 2.5 x rate x min RTT (the reference's
//! `bytes_in_flight_gain` over `GetCongestionWindow`), a window the transport needs.

use std::collections::VecDeque;

use ccscope_core::rng::{self, RngExt};
use ccscope_core::{Bandwidth, Dur, Time};
use serde::{Deserialize, Serialize};

use crate::params::{check_positive, invalid, ParamError, ParamSpec};
use crate::{AckEvent, Controller, LossEvent, PacketAcked, SendEvent};

/// pcc_vivace_sender.cpp `kMegabit`: the reference converts gradients with 2^20 bits.
const MEGABIT: f64 = 1024.0 * 1024.0;
/// pcc_utility_manager.cpp `kMaxPacketSize`: the transfer time of one packet pads an MI's duration.
const MAX_PACKET_BYTES: f64 = 1500.0;
/// Useful MIs kept at once: 2 x the largest number of probing pairs accepted.
const MAX_USEFUL: usize = 16;
/// pcc_utility_manager.cpp `kRttHistoryLen`: MIs in the RTT trend.
const RTT_HISTORY: usize = 6;
/// pcc_utility_manager.cpp `kAlpha`: weight of a new trend in its running average and deviation.
const TREND_ALPHA: f64 = 0.1;
/// pcc_utility_manager.cpp `kBeta`: a trend this many times below the least seen restarts tracking.
const TREND_BETA: f64 = 100.0;
/// pcc_utility_manager.cpp `kInflationToleranceGainHigh`/`Low` (both 2): deviations a trend may stray.
const TREND_GAIN: f64 = 2.0;
/// pcc_monitor_interval_queue.cpp: an ACK interval 50 x the running ratio marks an ACK burst.
const BURST_RATIO: f64 = 50.0;
/// pcc_sender.cpp `FLAGS_max_rtt_fluctuation_tolerance_ratio_in_decision_made`: tolerance outside STARTING.
const TOLERANCE_AFTER_STARTING: f64 = 1.0;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Exponent t of the throughput term (Vivace §3 Eq. 1; pcc_utility_manager.cpp kSendingRateExponent: 0.9).
    pub utility_exponent: f64,
    /// Latency coefficient b (Vivace §3; kLatencyCoefficient: 900).
    pub latency_coefficient: f64,
    /// Loss coefficient c (Vivace §3; kVivaceLossCoefficient: 11.35).
    pub loss_coefficient: f64,
    /// Probing step eps (Vivace §4.1; pcc_vivace_sender.cpp kProbingStepSize: 0.05).
    pub probing_step: f64,
    /// Pairs of MIs per probing round (pcc_sender.cpp kNumIntervalGroupsInProbingPrimary: 3).
    pub probing_pairs: u32,
    /// theta_0, rate change per unit utility gradient (Vivace §4.2; kUtilityGradientToRateChangeFactor: 1).
    pub rate_change_factor: f64,
    /// Exponent of the confidence amplifier (Vivace §4.2; kRateChangeAmplifyExponent: 1.2).
    pub amplify_exponent: f64,
    /// omega_0, the initial change boundary as a fraction of the rate (Vivace §4.2; kInitialMaxStepSize: 0.05).
    pub initial_max_step: f64,
    /// delta, the boundary's increment per exceeded step (Vivace §4.2; kIncrementalStepSize: 0.05).
    pub incremental_step: f64,
    /// Smallest rate change (pcc_vivace_sender.cpp kMinRateChange: 500 kbit/s).
    pub min_rate_change_kbps: f64,
    /// Smallest sending rate (pcc_vivace_sender.cpp kMinSendingRate: 500 kbit/s).
    pub min_rate_kbps: f64,
    /// Initial rate = this many packets per `initial_rtt_ms` (pcc_sender.cpp: initial cwnd 10).
    pub initial_window: u32,
    /// RTT assumed before the first sample (pcc_sender.cpp kInitialRtt: 100 ms).
    pub initial_rtt_ms: f64,
    /// MI length in min RTTs (pcc_sender.cpp `monitor_duration_ = min_rtt_ * 1.0`).
    pub mi_rtts: f64,
    /// Reliable RTT samples an MI needs before it can end or be scored (pcc_monitor_interval_queue.cpp
    /// kMinReliableRtt: 4).
    pub min_reliable_rtts: u32,
    /// Share of reliable RTT samples under which an MI is lengthened once, x2 (pcc_sender.cpp
    /// kMinReliabilityRatio: 0.8).
    pub min_reliability_ratio: f64,
    /// RTT fluctuation tolerance ratio in STARTING: gradients under 1000/duration are ignored when it
    /// exceeds 50, and STARTING ends once the smoothed RTT passes (1 + it) x the MI's starting RTT
    /// (pcc_sender.cpp FLAGS_max_rtt_fluctuation_tolerance_ratio_in_starting: 100).
    pub starting_rtt_tolerance: f64,
    /// In-flight cap as a multiple of rate x min RTT (pcc_sender.cpp FLAGS_bytes_in_flight_gain: 2.5).
    pub cwnd_gain: f64,
    /// Seed of the random order within each probing pair (the simulator sets one per flow).
    pub seed: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            utility_exponent: 0.9,
            latency_coefficient: 900.0,
            loss_coefficient: 11.35,
            probing_step: 0.05,
            probing_pairs: 3,
            rate_change_factor: 1.0,
            amplify_exponent: 1.2,
            initial_max_step: 0.05,
            incremental_step: 0.05,
            min_rate_change_kbps: 500.0,
            min_rate_kbps: 500.0,
            initial_window: 10,
            initial_rtt_ms: 100.0,
            mi_rtts: 1.0,
            min_reliable_rtts: 4,
            min_reliability_ratio: 0.8,
            starting_rtt_tolerance: 100.0,
            cwnd_gain: 2.5,
            seed: 0,
        }
    }
}

impl crate::params::Params for Params {
    const SPEC: &'static [ParamSpec] = &[
        ParamSpec { name: "utility_exponent", unit: "ratio", doc: "t in x^t (Vivace §3; PCC-Uspace: 0.9)" },
        ParamSpec { name: "latency_coefficient", unit: "ratio", doc: "b, the RTT-gradient penalty (Vivace §3; PCC-Uspace: 900)" },
        ParamSpec { name: "loss_coefficient", unit: "ratio", doc: "c, the loss penalty (Vivace §3; PCC-Uspace: 11.35)" },
        ParamSpec { name: "probing_step", unit: "ratio", doc: "eps, probe at r(1 +- eps) (Vivace §4.1; PCC-Uspace: 0.05)" },
        ParamSpec { name: "probing_pairs", unit: "pairs", doc: "MI pairs per probing round (PCC-Uspace primary: 3)" },
        ParamSpec { name: "rate_change_factor", unit: "Mbit/s^2", doc: "theta_0 (Vivace §4.2; PCC-Uspace: 1)" },
        ParamSpec { name: "amplify_exponent", unit: "ratio", doc: "confidence amplifier exponent (Vivace §4.2; PCC-Uspace: 1.2)" },
        ParamSpec { name: "initial_max_step", unit: "ratio", doc: "omega_0, initial change boundary (Vivace §4.2; PCC-Uspace: 0.05)" },
        ParamSpec { name: "incremental_step", unit: "ratio", doc: "delta, boundary increment (Vivace §4.2; PCC-Uspace: 0.05)" },
        ParamSpec { name: "min_rate_change_kbps", unit: "kbit/s", doc: "smallest rate change (PCC-Uspace: 500)" },
        ParamSpec { name: "min_rate_kbps", unit: "kbit/s", doc: "smallest rate (PCC-Uspace: 500)" },
        ParamSpec { name: "initial_window", unit: "packets", doc: "initial rate = this many packets per initial RTT (PCC-Uspace: 10)" },
        ParamSpec { name: "initial_rtt_ms", unit: "ms", doc: "RTT before the first sample (PCC-Uspace kInitialRtt: 100)" },
        ParamSpec { name: "mi_rtts", unit: "min RTTs", doc: "monitor interval length (PCC-Uspace: 1 min RTT)" },
        ParamSpec { name: "min_reliable_rtts", unit: "samples", doc: "reliable RTT samples an MI needs to end (PCC-Uspace kMinReliableRtt: 4)" },
        ParamSpec { name: "min_reliability_ratio", unit: "ratio", doc: "reliable share under which an MI is doubled once (PCC-Uspace: 0.8)" },
        ParamSpec { name: "starting_rtt_tolerance", unit: "ratio", doc: "RTT fluctuation tolerance in STARTING (PCC-Uspace: 100)" },
        ParamSpec { name: "cwnd_gain", unit: "ratio", doc: "in-flight cap as a multiple of rate x min RTT (PCC-Uspace bytes_in_flight_gain: 2.5)" },
        ParamSpec { name: "seed", unit: "integer", doc: "seed of the probing order (the simulator sets one per flow)" },
    ];
    fn validate(&self) -> Result<(), ParamError> {
        check_positive("utility_exponent", self.utility_exponent)?;
        check_positive("rate_change_factor", self.rate_change_factor)?;
        check_positive("initial_max_step", self.initial_max_step)?;
        check_positive("min_rate_change_kbps", self.min_rate_change_kbps)?;
        check_positive("min_rate_kbps", self.min_rate_kbps)?;
        check_positive("initial_rtt_ms", self.initial_rtt_ms)?;
        check_positive("mi_rtts", self.mi_rtts)?;
        check_positive("cwnd_gain", self.cwnd_gain)?;
        for (key, v) in [
            ("latency_coefficient", self.latency_coefficient),
            ("loss_coefficient", self.loss_coefficient),
            ("amplify_exponent", self.amplify_exponent),
            ("incremental_step", self.incremental_step),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(invalid(key, "must be >= 0 and finite"));
            }
        }
        if !(self.probing_step > 0.0 && self.probing_step < 1.0) {
            return Err(invalid("probing_step", "must be in (0, 1)"));
        }
        if !(1..=(MAX_USEFUL as u32 / 2)).contains(&self.probing_pairs) {
            return Err(invalid("probing_pairs", "must be in 1..=8"));
        }
        if self.initial_window < 2 {
            return Err(invalid("initial_window", "must be >= 2"));
        }
        if self.min_reliable_rtts < 2 {
            return Err(invalid("min_reliable_rtts", "must be >= 2"));
        }
        if !(self.min_reliability_ratio >= 0.0 && self.min_reliability_ratio < 1.0) {
            return Err(invalid("min_reliability_ratio", "must be in [0, 1)"));
        }
        if !(self.starting_rtt_tolerance >= 0.0 && self.starting_rtt_tolerance.is_finite()) {
            return Err(invalid("starting_rtt_tolerance", "must be >= 0 and finite"));
        }
        Ok(())
    }
}

/// Vivace's mode (pcc_sender.h `SenderMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Starting,
    Probing,
    DecisionMade,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Increase,
    Decrease,
}

/// A useful monitor interval's accounting (pcc_mi.h `MonitorInterval`).
#[derive(Clone, Copy, Debug, Default)]
struct Mi {
    id: u64,
    /// Target rate in bits/s.
    rate_bps: f64,
    first_sent: Time,
    last_sent: Time,
    first_seq: u64,
    sent: u32,
    bytes_sent: u64,
    acked: u32,
    lost: u32,
    bytes_lost: u64,
    /// No more packets will join it (a newer MI has started).
    closed: bool,
    /// RTT fluctuation tolerance ratio of the mode it was created in (`rtt_fluctuation_tolerance_ratio`).
    tolerance: f64,
    /// Smoothed RTT (us) when it started, then at its first ACK (`rtt_on_monitor_start`); 0 if none.
    rtt_on_start_us: f64,
    /// RTT samples taken, and how many were reliable (`packet_rtt_samples`, `num_reliable_rtt`).
    samples: u32,
    reliable: u32,
    /// Lengthened once for too few reliable samples (`is_monitor_duration_extended`).
    extended: bool,
    /// Sums for the least-squares line of RTT (us) over packet number (pcc_utility_manager.cpp
    /// ComputeRttGradient), x taken from `first_seq`.
    n: f64,
    sx: f64,
    sy: f64,
    sxx: f64,
    sxy: f64,
    syy: f64,
}

impl Mi {
    /// One reliable (packet number, RTT us) point of the least-squares line.
    fn add_rtt_point(&mut self, x: f64, y: f64) {
        self.n += 1.0;
        self.sx += x;
        self.sy += y;
        self.sxx += x * x;
        self.sxy += x * y;
        self.syy += y * y;
    }

    /// pcc_monitor_interval_queue.cpp `IsUtilityAvailable`: enough reliable RTTs and every packet resolved.
    fn done(&self, min_reliable: u32) -> bool {
        self.closed && self.reliable >= min_reliable && self.acked + self.lost >= self.sent
    }
}

/// A packet an ACK delivered (`on_packet_acked`): its MI's tag and its own packet number.
#[derive(Clone, Copy, Debug)]
struct AckedPacket {
    tag: u64,
    seq: u64,
}

/// An ACK whose RTT sample waits for the next ACK interval (pcc_monitor_interval_queue.cpp
/// `pending_rtt_`, `pending_avg_rtt_`, `pending_ack_interval_`; its packets are `Vivace::pending_packets`).
#[derive(Clone, Copy, Debug)]
struct Pending {
    rtt_us: f64,
    avg_rtt_us: f64,
    ack_interval_us: f64,
}

/// The trend of recent MIs' mean RTTs and its running statistics (pcc_utility_manager.cpp
/// `mi_avg_rtt_history_`, `avg_/min_/dev_/last_trending_gradient_`; -1 is unset).
#[derive(Clone, Debug)]
struct RttTrend {
    history: VecDeque<f64>,
    avg: f64,
    min: f64,
    dev: f64,
    last: f64,
}

impl Default for RttTrend {
    fn default() -> Self {
        RttTrend {
            history: VecDeque::with_capacity(RTT_HISTORY + 1),
            avg: -1.0,
            min: -1.0,
            dev: -1.0,
            last: -1.0,
        }
    }
}

impl RttTrend {
    /// pcc_utility_manager.cpp `ProcessRttTrend` and `DetermineToleranceInflation`: add an MI's mean
    /// RTT (us); true when the trend (least-squares slope over the last 6) rises outside
    /// avg +- 2 dev, so the MI's RTT gradient is not to be tolerated.
    fn rising_outlier(&mut self, avg_rtt_us: f64) -> bool {
        self.history.push_back(avg_rtt_us);
        if self.history.len() > RTT_HISTORY {
            self.history.pop_front();
        }
        if self.history.len() < RTT_HISTORY {
            return false;
        }
        // ComputeTrendingGradient: slope of mean RTT over MI index.
        let n = self.history.len() as f64;
        let x_avg = (n - 1.0) / 2.0;
        let y_avg = self.history.iter().sum::<f64>() / n;
        let (mut gx, mut gy) = (0.0, 0.0);
        for (i, y) in self.history.iter().enumerate() {
            let dx = i as f64 - x_avg;
            gx += dx * dx;
            gy += dx * (y - y_avg);
        }
        let tg = gy / gx;
        if self.min < 0.000001 || tg.abs() < self.min / TREND_BETA {
            // A new (or far smaller) trend scale: restart the running statistics from it.
            self.avg = 0.0;
            self.min = tg.abs();
            self.dev = tg.abs();
            self.last = tg;
            return false;
        }
        let (lo, hi) = (
            self.avg - TREND_GAIN * self.dev,
            self.avg + TREND_GAIN * self.dev,
        );
        let outlier = tg < lo || tg > hi;
        if !outlier {
            self.dev = self.dev * (1.0 - TREND_ALPHA) + (tg - self.last).abs() * TREND_ALPHA;
            self.avg = self.avg * (1.0 - TREND_ALPHA) + tg * TREND_ALPHA;
            self.last = tg;
        }
        self.min = self.min.min(tg.abs());
        outlier && tg > 0.0
    }
}

/// (sending rate in bits/s, utility) of one finished MI (pcc_sender.h `UtilityInfo`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UtilityInfo {
    pub rate_bps: f64,
    pub utility: f64,
}

#[derive(Debug)]
pub struct Vivace {
    p: Params,
    mode: Mode,
    /// The central sending rate in bits/s (`sending_rate_` with the probing offset taken out).
    rate_bps: f64,
    direction: Direction,
    rounds: u32,
    latest: UtilityInfo,
    /// Boundary increments earned (`incremental_rate_change_step_allowance_`).
    allowance: u32,
    /// The MI being sent: (id, useful, rate in bits/s, first send, packets sent).
    current: Option<(u64, bool, f64, Time, u32)>,
    next_id: u64,
    useful: VecDeque<Mi>,
    /// Direction of the current probing pair's first MI.
    pair_first: Direction,
    latest_rtt: Option<Dur>,
    min_rtt: Option<Dur>,
    /// Smoothed RTT, us, 0 before a sample (pcc_sender.cpp `avg_rtt_`: 7/8 old + 1/8 new).
    avg_rtt_us: f64,
    /// Smoothed RTT when the current MI started (its `rtt_on_monitor_start` if it is not useful).
    current_rtt_on_start_us: f64,
    last_ack: Option<Time>,
    /// Packets the ACK being handled delivered, handed over by `on_packet_acked` before its `on_ack`.
    arrived: Vec<AckedPacket>,
    pending: Option<Pending>,
    /// The pending ACK's packets (pcc_monitor_interval_queue.cpp `pending_acked_packets_`).
    pending_packets: Vec<AckedPacket>,
    /// Running ratio of consecutive ACK intervals, -1 unset (`avg_interval_ratio_`), and the ACK
    /// burst in progress (`burst_flag_`).
    avg_interval_ratio: f64,
    burst: bool,
    /// How long the current useful MI must last (pcc_sender.cpp `monitor_duration_`).
    monitor_duration: Dur,
    trend: RttTrend,
    starting_rtt_exits: u64,
    bytes: u32,
    rng: rng::Rng,
    decisions: u64,
    mis: u64,
    utilities: [UtilityInfo; MAX_USEFUL],
}

impl Vivace {
    pub fn new(p: Params) -> Self {
        // pcc_sender.cpp: initial cwnd x MSS over kInitialRtt.
        let rate_bps = p.initial_window as f64 * MAX_PACKET_BYTES * 8.0 / (p.initial_rtt_ms / 1e3);
        Vivace {
            mode: Mode::Starting,
            rate_bps,
            direction: Direction::Increase,
            rounds: 1,
            latest: UtilityInfo::default(),
            allowance: 0,
            current: None,
            next_id: 0,
            useful: VecDeque::with_capacity(MAX_USEFUL),
            pair_first: Direction::Increase,
            latest_rtt: None,
            min_rtt: None,
            avg_rtt_us: 0.0,
            current_rtt_on_start_us: 0.0,
            last_ack: None,
            arrived: Vec::new(),
            pending: None,
            pending_packets: Vec::new(),
            avg_interval_ratio: -1.0,
            burst: false,
            monitor_duration: Dur::ZERO,
            trend: RttTrend::default(),
            starting_rtt_exits: 0,
            bytes: 1500,
            rng: rng::stream(p.seed, 0),
            decisions: 0,
            mis: 0,
            utilities: [UtilityInfo::default(); MAX_USEFUL],
            p,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// The central sending rate in bits/s.
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }
    pub fn direction(&self) -> Direction {
        self.direction
    }
    pub fn rounds(&self) -> u32 {
        self.rounds
    }
    /// The rate of the MI being sent, in bits/s.
    pub fn mi_rate_bps(&self) -> f64 {
        self.current.map_or(self.rate_bps, |c| c.2)
    }

    fn min_rate(&self) -> f64 {
        self.p.min_rate_kbps * 1e3
    }

    fn pairs(&self) -> usize {
        self.p.probing_pairs as usize
    }

    /// pcc_sender.cpp `CreateNewInterval`: a useful MI ends after `min_reliable_rtts` reliable RTT
    /// samples and the monitor duration; with 80% or fewer of its samples reliable, the duration is
    /// doubled once first.
    fn create_new_interval(&mut self, now: Time) -> bool {
        let Some((id, useful, _, first, _)) = self.current else {
            return true;
        };
        if self.latest_rtt.is_none() {
            return false;
        }
        if self.useful.is_empty() {
            return true;
        }
        if !useful {
            return false;
        }
        let Some(m) = self.useful.iter_mut().find(|m| m.id == id) else {
            return true;
        };
        if m.reliable < self.p.min_reliable_rtts || now.since(first) < self.monitor_duration {
            return false;
        }
        if m.reliable as f64 / m.samples as f64 > self.p.min_reliability_ratio || m.extended {
            return true;
        }
        self.monitor_duration = self.monitor_duration + self.monitor_duration;
        m.extended = true;
        false
    }

    /// pcc_sender.cpp `GetMaxRttFluctuationTolerance` (its deviation-based branch is unreachable there).
    fn tolerance(&self) -> f64 {
        if self.mode == Mode::Starting {
            self.p.starting_rtt_tolerance
        } else {
            TOLERANCE_AFTER_STARTING
        }
    }

    /// pcc_sender.cpp `CheckForRttInflation`: in STARTING, the smoothed RTT has passed (1 + tolerance)
    /// x the current MI's starting RTT while the latest sample is above it.
    fn rtt_inflated(&self, latest_rtt_us: f64) -> bool {
        let Some((id, useful, ..)) = self.current else {
            return false;
        };
        let oldest = self
            .useful
            .front()
            .map_or(self.current_rtt_on_start_us, |m| m.rtt_on_start_us);
        if oldest == 0.0 || latest_rtt_us <= self.avg_rtt_us {
            return false;
        }
        let start = if useful {
            self.useful
                .iter()
                .find(|m| m.id == id)
                .map_or(self.current_rtt_on_start_us, |m| m.rtt_on_start_us)
        } else {
            self.current_rtt_on_start_us
        };
        (1.0 + self.tolerance()) * start < self.avg_rtt_us
    }

    /// pcc_monitor_interval_queue.cpp `OnCongestionEvent` (lines 147-216): each packet the pending ACK
    /// delivered is acked in the MI holding it, with an RTT sample at its own packet number carrying
    /// that ACK's RTT; MI by MI, each sample is reliable unless it came in an ACK burst (the interval
    /// before the ACK 50 x the running ratio to the one after it, until an RTT below the smoothed one
    /// is followed by a larger one).
    fn record_samples(&mut self, p: Pending, latest_rtt_us: f64, ack_interval_us: f64) {
        let packets = std::mem::take(&mut self.pending_packets);
        for idx in 0..self.useful.len() {
            // pcc_monitor_interval_queue.cpp:153: an MI whose utility is available takes nothing more.
            if self.useful[idx].done(self.p.min_reliable_rtts) {
                continue;
            }
            let tag = self.useful[idx].id + 1;
            for a in packets.iter().filter(|a| a.tag == tag) {
                // pcc_monitor_interval_queue.cpp:175-200: the burst filter runs once per packet.
                let reliable = self.sample_reliable(&p, latest_rtt_us, ack_interval_us);
                let m = &mut self.useful[idx];
                if m.acked == 0 {
                    m.rtt_on_start_us = p.avg_rtt_us;
                }
                m.acked += 1;
                m.samples += 1;
                if reliable {
                    m.reliable += 1;
                    // pcc_monitor_interval_queue.cpp:209: the packet's own number, the ACK's RTT.
                    m.add_rtt_point(a.seq.saturating_sub(m.first_seq) as f64, p.rtt_us);
                }
            }
        }
        self.pending_packets = packets;
    }

    /// pcc_monitor_interval_queue.cpp:176-200: whether a sample of the pending ACK is reliable, updating
    /// the running ACK-interval ratio and the burst flag.
    fn sample_reliable(&mut self, p: &Pending, latest_rtt_us: f64, ack_interval_us: f64) -> bool {
        if p.ack_interval_us == 0.0 {
            return false;
        }
        let mut reliable = false;
        let mut ratio = p.ack_interval_us / ack_interval_us;
        if ratio < 1.0 {
            ratio = 1.0 / ratio;
        }
        if self.avg_interval_ratio < 0.0 {
            self.avg_interval_ratio = ratio;
        }
        if ratio > BURST_RATIO * self.avg_interval_ratio {
            self.burst = true;
        } else if self.burst {
            if latest_rtt_us > p.rtt_us && p.rtt_us < p.avg_rtt_us {
                self.burst = false;
            }
        } else {
            reliable = true;
        }
        self.avg_interval_ratio = self.avg_interval_ratio * 0.9 + ratio * 0.1;
        reliable
    }

    /// pcc_sender.cpp `CreateUsefulInterval`: one useful MI at a time, 2 x pairs while probing.
    fn create_useful_interval(&self) -> bool {
        if self.latest_rtt.is_none() {
            return false;
        }
        let max = if self.mode == Mode::Probing {
            2 * self.pairs()
        } else {
            1
        };
        self.useful.len() < max
    }

    /// pcc_sender.cpp `MaybeSetSendingRate`: the rate of the next MI; in PROBING each pair runs at
    /// r(1 + eps) and r(1 - eps), the first of the pair in random order, then the central rate.
    fn next_mi_rate(&mut self, useful: bool) -> f64 {
        if self.mode != Mode::Probing || !useful {
            return self.rate_bps;
        }
        let k = self.useful.len();
        let dir = if k % 2 == 0 {
            self.pair_first = if self.rng.gen_range(0..2u32) == 1 {
                Direction::Increase
            } else {
                Direction::Decrease
            };
            self.pair_first
        } else {
            match self.pair_first {
                Direction::Increase => Direction::Decrease,
                Direction::Decrease => Direction::Increase,
            }
        };
        match dir {
            Direction::Increase => self.rate_bps * (1.0 + self.p.probing_step),
            Direction::Decrease => self.rate_bps * (1.0 - self.p.probing_step),
        }
    }

    /// pcc_utility_manager.cpp `CalculateUtilityProportional` with Vivace's coefficients (Vivace §3),
    /// after `PrepareStatistics` (which also feeds the RTT trend).
    fn utility(&mut self, mi: &Mi) -> f64 {
        // ComputeSimpleMetrics: the MI lasts from its first to its last send plus one packet's transfer.
        let pkt_us = MAX_PACKET_BYTES * 8.0 / mi.rate_bps * 1e6;
        let duration_us = mi.last_sent.since(mi.first_sent).as_ns() as f64 / 1e3 + pkt_us;
        let x_mbps = mi.bytes_sent as f64 * 8.0 / duration_us;
        let loss = if mi.bytes_sent > 0 {
            mi.bytes_lost as f64 / mi.bytes_sent as f64
        } else {
            0.0
        };
        let (mut g, mut error, mut avg_rtt) = (0.0, 0.0, None);
        if mi.n >= 2.0 {
            let sxx = mi.sxx - mi.sx * mi.sx / mi.n;
            if sxx > 0.0 {
                let sxy = mi.sxy - mi.sx * mi.sy / mi.n;
                let syy = mi.syy - mi.sy * mi.sy / mi.n;
                let slope = sxy / sxx;
                let avg = mi.sy / mi.n;
                // ComputeRttGradientError: RMS residual of the line relative to the mean RTT.
                let rss = (syy - slope * sxy).max(0.0);
                error = (rss / mi.n).sqrt() / avg.max(1e-9);
                // us of RTT per packet over us per packet at the MI's rate: dRTT/dT.
                g = slope / pkt_us;
                avg_rtt = Some(avg);
            }
        }
        // DetermineToleranceGeneral: a gradient within its fitting error is noise...
        let mut tolerable = error >= g.abs();
        // ...unless the RTT trend over recent MIs rises beyond its usual spread (ProcessRttTrend).
        if let Some(avg) = avg_rtt {
            if self.trend.rising_outlier(avg) {
                tolerable = false;
            }
        }
        let mut gradient = if tolerable { 0.0 } else { g };
        // A tolerance ratio over 50 (STARTING) ignores gradients under 1000/duration.
        if mi.tolerance > 50.0 && gradient.abs() < 1000.0 / duration_us {
            gradient = 0.0;
        }
        gradient = gradient.max(0.0);
        x_mbps.powf(self.p.utility_exponent)
            - self.p.latency_coefficient * gradient * x_mbps
            - self.p.loss_coefficient * loss * x_mbps
    }

    /// pcc_vivace_sender.cpp `ComputeRateChange` (Vivace §4.2): gradient x theta_0, amplified by
    /// ((k+1)/2)^1.2 in DECISION_MADE, bounded by omega = omega_0 + i delta of the rate.
    fn compute_rate_change(&mut self, u: &[UtilityInfo]) -> f64 {
        let (d_rate, d_util) = if self.mode == Mode::Probing {
            let d_rate = (u[0].rate_bps - u[1].rate_bps).abs();
            let mut d_util = 0.0;
            for i in 0..self.pairs() {
                if pair_says_increase(&u[2 * i], &u[2 * i + 1])
                    != (self.direction == Direction::Increase)
                {
                    continue;
                }
                d_util += (u[2 * i].utility - u[2 * i + 1].utility).abs();
            }
            (d_rate, d_util / self.pairs() as f64)
        } else {
            (
                (u[0].rate_bps - self.latest.rate_bps).abs(),
                (u[0].utility - self.latest.utility).abs(),
            )
        };
        let mut change = if d_rate > 0.0 {
            let gradient = MEGABIT * d_util / d_rate;
            gradient * MEGABIT * self.p.rate_change_factor
        } else {
            0.0
        };
        if self.mode == Mode::DecisionMade {
            // Integer division as in the reference: the amplifier grows every second round.
            let k = ((self.rounds + 1) / 2) as f64;
            change *= k.powf(self.p.amplify_exponent);
        } else {
            self.allowance = 0;
        }
        let max = self.rate_bps
            * (self.p.initial_max_step + self.p.incremental_step * self.allowance as f64);
        if change > max {
            change = max;
            self.allowance += 1;
        } else if self.allowance > 0 {
            self.allowance -= 1;
        }
        change.max(self.p.min_rate_change_kbps * 1e3)
    }

    /// pcc_sender.cpp `EnterProbing` (from STARTING: half the rate; from PROBING: another round).
    fn enter_probing(&mut self) {
        match self.mode {
            Mode::Starting => self.rate_bps *= 0.5,
            Mode::Probing => {
                self.rounds += 1;
                return;
            }
            Mode::DecisionMade => {}
        }
        self.mode = Mode::Probing;
        self.rounds = 1;
    }

    /// pcc_vivace_sender.cpp `EnterProbing(utility_info)`: leave DECISION_MADE, undoing the last step.
    fn enter_probing_from_decision(&mut self, u: &[UtilityInfo]) {
        self.rounds = 1;
        let change = self.compute_rate_change(u);
        match self.direction {
            Direction::Increase => self.rate_bps -= change,
            Direction::Decrease => self.rate_bps += change,
        }
        if self.rate_bps < self.min_rate() {
            self.rate_bps = self.min_rate();
            self.allowance = 0;
        }
        self.mode = Mode::Probing;
    }

    /// pcc_vivace_sender.cpp `EnterDecisionMade`.
    fn enter_decision_made(&mut self, u: &[UtilityInfo]) {
        if self.mode == Mode::Probing {
            self.rate_bps *= match self.direction {
                Direction::Increase => 1.0 + self.p.probing_step,
                Direction::Decrease => 1.0 - self.p.probing_step,
            };
        }
        self.rounds = if self.mode == Mode::Probing {
            1
        } else {
            self.rounds + 1
        };
        let change = self.compute_rate_change(u);
        match self.direction {
            Direction::Increase => self.rate_bps += change,
            Direction::Decrease => self.rate_bps -= change,
        }
        if self.rate_bps < self.min_rate() {
            self.rate_bps = self.min_rate();
            self.mode = Mode::Probing;
            self.rounds = 1;
            self.allowance = 0;
        } else {
            self.mode = Mode::DecisionMade;
        }
    }

    /// pcc_vivace_sender.cpp `CanMakeDecision` and `SetRateChangeDirection`: a majority of pairs
    /// favouring the higher rate, or all favouring the lower; the best MI of a winning pair is kept.
    fn decide(&mut self, u: &[UtilityInfo]) -> bool {
        let n = self.pairs();
        if u.len() < 2 * n {
            return false;
        }
        let up = (0..n)
            .filter(|&i| pair_says_increase(&u[2 * i], &u[2 * i + 1]))
            .count();
        let down = n - up;
        if !(up > n / 2 || down == n) {
            return false;
        }
        self.direction = if up > down {
            Direction::Increase
        } else {
            Direction::Decrease
        };
        for i in 0..n {
            if pair_says_increase(&u[2 * i], &u[2 * i + 1])
                == (self.direction == Direction::Increase)
            {
                self.latest = if u[2 * i].utility > u[2 * i + 1].utility {
                    u[2 * i]
                } else {
                    u[2 * i + 1]
                };
            }
        }
        true
    }

    /// pcc_vivace_sender.cpp `OnUtilityAvailable`.
    fn on_utility_available(&mut self, u: &[UtilityInfo]) {
        match self.mode {
            Mode::Starting => {
                if u[0].utility > self.latest.utility {
                    // Vivace §4.1 starting phase: double while the utility grows.
                    self.rate_bps *= 2.0;
                    self.latest = u[0];
                    self.rounds += 1;
                } else {
                    self.enter_probing();
                }
            }
            Mode::Probing => {
                if self.decide(u) {
                    self.decisions += 1;
                    self.enter_decision_made(u);
                } else {
                    self.enter_probing();
                }
                if (self.rounds > 1 || self.mode == Mode::DecisionMade)
                    && self.rate_bps <= self.min_rate()
                {
                    self.rate_bps = self.min_rate();
                    self.allowance = 0;
                    self.rounds = 1;
                    self.mode = Mode::Starting;
                }
            }
            Mode::DecisionMade => {
                let (up, better) = (
                    u[0].rate_bps > self.latest.rate_bps,
                    u[0].utility > self.latest.utility,
                );
                let down = u[0].rate_bps < self.latest.rate_bps;
                let worse = u[0].utility < self.latest.utility;
                let consistent = match self.direction {
                    Direction::Increase => (better && up) || (worse && down),
                    Direction::Decrease => (better && down) || (worse && up),
                };
                if consistent {
                    self.enter_decision_made(u);
                    self.latest = u[0];
                } else {
                    self.enter_probing_from_decision(u);
                }
            }
        }
    }

    /// When every useful MI is accounted for, score them all and act (pcc_mi_queue.cpp).
    fn maybe_finish(&mut self) {
        let min_reliable = self.p.min_reliable_rtts;
        if self.useful.is_empty() || !self.useful.iter().all(|m| m.done(min_reliable)) {
            return;
        }
        let n = self.useful.len();
        for i in 0..n {
            let mi = self.useful[i];
            self.utilities[i] = UtilityInfo {
                rate_bps: mi.rate_bps,
                utility: self.utility(&mi),
            };
        }
        self.useful.clear();
        let u = self.utilities;
        self.on_utility_available(&u[..n]);
    }

    fn mi_of(&mut self, tag: u64) -> Option<&mut Mi> {
        let id = tag.checked_sub(1)?;
        self.useful.iter_mut().find(|m| m.id == id)
    }
}

/// Whether a pair's utilities favour the higher rate (the reference's `increase_i`).
fn pair_says_increase(a: &UtilityInfo, b: &UtilityInfo) -> bool {
    if a.utility > b.utility {
        a.rate_bps > b.rate_bps
    } else {
        a.rate_bps < b.rate_bps
    }
}

impl Controller for Vivace {
    fn on_send(&mut self, now: Time, ev: &SendEvent) -> u64 {
        self.bytes = ev.bytes.max(1);
        if ev.retransmission {
            return 0;
        }
        if self.create_new_interval(now) {
            if let Some((id, true, ..)) = self.current {
                if let Some(m) = self.useful.iter_mut().find(|m| m.id == id) {
                    m.closed = true;
                }
                // Its packets may all be accounted for already.
                self.maybe_finish();
            }
            let useful = self.create_useful_interval();
            let rate = self.next_mi_rate(useful);
            // pcc_sender.cpp OnPacketSent: each new MI lasts one min RTT (doubled at most once).
            self.monitor_duration = self.min_rtt.map_or(Dur::ZERO, |r| {
                Dur::from_secs_f64(self.p.mi_rtts * r.as_secs_f64())
            });
            let id = self.next_id;
            self.next_id += 1;
            self.mis += 1;
            self.current = Some((id, useful, rate, now, 0));
            self.current_rtt_on_start_us = self.avg_rtt_us;
            if useful {
                self.useful.push_back(Mi {
                    id,
                    rate_bps: rate,
                    first_sent: now,
                    first_seq: ev.seq,
                    tolerance: self.tolerance(),
                    rtt_on_start_us: self.avg_rtt_us,
                    ..Default::default()
                });
            }
        }
        let Some((id, useful, ..)) = self.current.as_mut().map(|c| {
            c.4 += 1;
            *c
        }) else {
            return 0;
        };
        if !useful {
            return 0;
        }
        let bytes = ev.bytes as u64;
        if let Some(m) = self.useful.back_mut() {
            m.sent += 1;
            m.bytes_sent += bytes;
            m.last_sent = now;
        }
        id + 1
    }

    fn on_packet_acked(&mut self, _now: Time, ev: &PacketAcked) {
        self.arrived.push(AckedPacket {
            tag: ev.tag,
            seq: ev.seq,
        });
    }

    /// pcc_sender.cpp `OnCongestionEvent`, after the packets the ACK delivered (`on_packet_acked`).
    fn on_ack(&mut self, now: Time, ev: &AckEvent) {
        // quic_sent_packet_manager.cc MaybeInvokeCongestionEvent: an ACK acking nothing new is no event.
        if self.arrived.is_empty() {
            return;
        }
        self.bytes = ev.bytes.max(1);
        let ack_interval_us = self
            .last_ack
            .map_or(0.0, |t| now.since(t).as_ns() as f64 / 1e3);
        self.last_ack = Some(now);
        let rtt_us = ev.rtt.as_ns() as f64 / 1e3;
        // UpdateRtt.
        self.avg_rtt_us = if self.avg_rtt_us == 0.0 {
            rtt_us
        } else {
            0.875 * self.avg_rtt_us + 0.125 * rtt_us
        };
        self.min_rtt = Some(self.min_rtt.map_or(ev.rtt, |m| m.min(ev.rtt)));
        if self.latest_rtt.is_none() && ev.rtt > Dur::ZERO {
            // A first RTT under kInitialRtt scales the initial rate up.
            let initial = Dur::from_ms_f64(self.p.initial_rtt_ms);
            if ev.rtt < initial {
                self.rate_bps *= initial.as_secs_f64() / ev.rtt.as_secs_f64();
            }
        }
        self.latest_rtt = Some(ev.rtt);
        if self.mode == Mode::Starting && self.rtt_inflated(rtt_us) {
            // OnRttInflationInStarting drops every MI; EnterProbing halves the rate.
            self.useful.clear();
            self.current = None;
            self.arrived.clear();
            self.starting_rtt_exits += 1;
            self.enter_probing();
            return;
        }
        // pcc_monitor_interval_queue.cpp:141: with no useful MI the ACK is skipped altogether.
        if self.useful.is_empty() {
            self.arrived.clear();
            return;
        }
        if let Some(p) = self.pending.take() {
            self.record_samples(p, rtt_us, ack_interval_us);
        }
        // pcc_monitor_interval_queue.cpp:230-236: this ACK's packets and RTT wait for the next ACK.
        std::mem::swap(&mut self.pending_packets, &mut self.arrived);
        self.arrived.clear();
        self.pending = Some(Pending {
            rtt_us,
            avg_rtt_us: self.avg_rtt_us,
            ack_interval_us,
        });
        self.maybe_finish();
    }

    fn on_loss(&mut self, _now: Time, ev: &LossEvent) {
        let bytes = ev.bytes as u64;
        if let Some(m) = self.mi_of(ev.tag) {
            m.lost += 1;
            m.bytes_lost += bytes;
        }
        self.maybe_finish();
    }

    fn cwnd(&self) -> u32 {
        // pcc_sender.cpp GetCongestionWindow (rate x min RTT) times bytes_in_flight_gain.
        let rtt = self
            .min_rtt
            .map_or(self.p.initial_rtt_ms / 1e3, |r| r.as_secs_f64());
        let pkts = self.p.cwnd_gain * self.mi_rate_bps() * rtt / (self.bytes as f64 * 8.0);
        (pkts.ceil().min(crate::MAX_CWND as f64) as u32).max(4)
    }

    fn pacing_rate(&self) -> Option<Bandwidth> {
        // pcc_sender.cpp PacingRate: the current MI's rate.
        Some(Bandwidth::from_bps(
            self.mi_rate_bps().clamp(1.0, 1e15) as u64
        ))
    }

    fn wants_packet_acks(&self) -> bool {
        true
    }

    fn state_name(&self) -> &'static str {
        match self.mode {
            Mode::Starting => "starting",
            Mode::Probing => "probing",
            Mode::DecisionMade => "decision_made",
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("decisions", self.decisions),
            ("monitor_intervals", self.mis),
            ("starting_rtt_exits", self.starting_rtt_exits),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params as _;
    use crate::testing::{assert_close, Script};

    const RTT: Dur = Dur::from_ms(40);

    fn vivace() -> Script<Vivace> {
        Script::new(Vivace::new(Params {
            seed: 1,
            ..Default::default()
        }))
    }

    /// A 10 Mbit/s FIFO bottleneck: a packet's ACK comes one base RTT after it was sent, or one
    /// packet time (1.2 ms) after the previous ACK if the queue holds it back (so the RTT climbs
    /// while the rate exceeds 10 Mbit/s and the queue drains at 10 Mbit/s after).
    const PKT_TIME: Dur = Dur::from_us(1200);

    /// Send for one min RTT (at least 5 packets) at the pacing rate, ACKing each packet at its time on
    /// the bottleneck above (MIs overlap their ACKs as on a real path); `last_ack` is the previous ACK.
    fn mi(s: &mut Script<Vivace>, last_ack: &mut Time) {
        let start = s.now;
        let mut n = 0;
        while n < 5 || s.now.since(start) < RTT {
            s.send(1);
            let next = s.now + s.cc.pacing_rate().expect("paced").tx_time(1500);
            while let Some(&(_, sent, _)) = s.in_flight.front() {
                let at = (sent + RTT).max(*last_ack + PKT_TIME);
                if at > next {
                    break;
                }
                s.ack_oldest(at.since(sent));
                *last_ack = at;
            }
            s.advance(next.since(s.now));
            n += 1;
        }
    }

    #[test]
    fn the_latency_utility_is_x_to_the_0_9_less_rtt_gradient_and_loss_penalties() {
        let mut v = Vivace::new(Params::default());
        // 100 packets of 1500 B over 99 ms + one packet's transfer at 12 Mbit/s (1 ms): 12 Mbit/s.
        let mut m = Mi {
            rate_bps: 12e6,
            first_sent: Time::ZERO,
            last_sent: Time::from_ms(99),
            sent: 100,
            bytes_sent: 150_000,
            closed: true,
            ..Default::default()
        };
        // Vivace §3: no RTT samples and no loss leaves x^0.9.
        assert_close(v.utility(&m), 12f64.powf(0.9));
        // 5% loss: - 11.35 x 0.05 x 12.
        m.bytes_lost = 7_500;
        assert_close(v.utility(&m), 12f64.powf(0.9) - 11.35 * 0.05 * 12.0);
        // RTT rising exactly 0.1 ms per packet (1 ms apart): dRTT/dT = 0.1, fitted with no error.
        m.bytes_lost = 0;
        for k in 0..10 {
            m.add_rtt_point(k as f64, 40_000.0 + 100.0 * k as f64);
        }
        assert_close(v.utility(&m), 12f64.powf(0.9) - 900.0 * 0.1 * 12.0);
        // A falling RTT earns nothing (pcc_utility_manager.cpp clamps the gradient at 0).
        m.sxy = m.sx * m.sy / m.n - (m.sxy - m.sx * m.sy / m.n);
        assert_close(v.utility(&m), 12f64.powf(0.9));
    }

    #[test]
    fn starting_doubles_per_mi_then_probing_pairs_decide_and_the_step_is_bounded() {
        let mut s = vivace();
        // 10 packets per 100 ms = 1.2 Mbit/s until the first RTT, 40 ms, scales it by 100/40.
        assert_close(s.cc.rate_bps(), 1.2e6);
        s.send(1);
        s.ack_oldest(RTT);
        assert_close(s.cc.rate_bps(), 3e6);
        // STARTING: one useful MI at a time (then a non-useful one while its ACKs return); each flat-RTT
        // MI scores higher than the last, so the rate doubles: 3, 6, 12 Mbit/s. An MI's last RTT sample
        // joins it one ACK later and it needs 4 reliable samples, so each rate lasts two sends or more.
        let mut rates = Vec::new();
        let mut k = Time::ZERO;
        while s.cc.mode() == Mode::Starting {
            rates.push(s.cc.rate_bps() / 1e6);
            mi(&mut s, &mut k);
            assert!(rates.len() < 20);
        }
        assert_eq!(rates, [3.0, 3.0, 3.0, 6.0, 6.0, 12.0, 12.0]);
        assert_eq!(s.cc.mode(), Mode::Probing);
        assert_close(s.cc.rate_bps(), 6e6);
        // PROBING: three pairs at 6 x 1.05 and 6 x 0.95 Mbit/s, each pair in a seeded random order (an
        // MI lasts until 4 reliable RTTs are in, so some span two of these sends), then the central rate.
        let mut probes = Vec::new();
        while s.cc.mode() == Mode::Probing {
            mi(&mut s, &mut k);
            probes.push(s.cc.mi_rate_bps());
            assert!(probes.len() <= 12, "{probes:?}");
        }
        assert_eq!(
            probes,
            [6.3e6, 5.7e6, 6.3e6, 5.7e6, 5.7e6, 5.7e6, 6.3e6, 6e6, 6.8e6]
        );
        // Under the capacity x^0.9 rewards the higher rate in every pair: DECISION_MADE upwards from
        // 6.3; the gradient's step, over the 5% boundary, is clamped to it (allowance 1), then raised to
        // the 500 kbit/s floor.
        assert_eq!(s.cc.mode(), Mode::DecisionMade);
        assert_eq!(s.cc.direction(), Direction::Increase);
        assert_close(s.cc.rate_bps(), 6.8e6);
        assert_eq!(s.cc.allowance, 1);
        // Each better MI moves on, the boundary growing by 5% per clamped step: x1.10, x1.15, x1.20.
        let mut expect = 6.8e6;
        for step in [1.10, 1.15, 1.20] {
            mi(&mut s, &mut k);
            mi(&mut s, &mut k);
            expect *= step;
            assert_eq!(s.cc.mode(), Mode::DecisionMade);
            assert_close(s.cc.rate_bps(), expect);
        }
        assert_eq!((s.cc.allowance, s.cc.rounds), (4, 4));
        // 10.32 Mbit/s overfills the path: the utility falls with the rate up, so the step is undone
        // with the boundary now 5% + 4 x 5% = 25%, and PROBING starts again around 7.74 Mbit/s.
        mi(&mut s, &mut k);
        mi(&mut s, &mut k);
        assert_eq!(s.cc.mode(), Mode::Probing);
        assert_close(s.cc.rate_bps(), expect * 0.75);
        assert_eq!(s.cc.counters()[0], ("decisions", 1));
    }

    #[test]
    fn a_delayed_ack_counts_every_packet_it_delivers_so_mis_still_complete() {
        // One ACK per two packets (a delayed-ACK receiver): an MI is done when acked + lost reaches sent,
        // so counting ACKs instead of packets never finished one and STARTING never ended.
        let mut s = vivace();
        s.send(1);
        s.ack_oldest(RTT);
        // A path with no bottleneck: each finished MI scores higher, so STARTING doubles the rate.
        for _ in 0..8 {
            let start = s.now;
            while s.now.since(start) < RTT {
                s.send(2);
                let next = s.now + s.cc.pacing_rate().expect("paced").tx_time(3000);
                while s
                    .in_flight
                    .front()
                    .is_some_and(|&(_, sent, _)| sent + RTT <= next)
                {
                    s.ack_oldest_n(2, RTT);
                }
                s.advance(next.since(s.now));
            }
        }
        assert_eq!(s.cc.mode(), Mode::Starting);
        assert!(
            s.cc.rate_bps() >= 12e6,
            "{} bit/s after 8 MIs",
            s.cc.rate_bps()
        );
    }

    #[test]
    fn an_ack_that_delivers_nothing_new_is_no_congestion_event() {
        let mut s = vivace();
        s.send(4);
        s.ack_oldest(RTT);
        s.ack_oldest(RTT);
        let before = (
            s.cc.last_ack,
            s.cc.avg_rtt_us,
            s.cc.latest_rtt,
            s.cc.avg_interval_ratio,
        );
        let pending = s.cc.pending.map(|p| (p.rtt_us, p.ack_interval_us));
        // A duplicate ACK 5 ms later with a 90 ms RTT sample: no packet came with it (`on_packet_acked`).
        s.advance(Dur::from_ms(5));
        let dup = AckEvent {
            seq: 1,
            bytes: 1500,
            send_time: Time::ZERO,
            recv_time: s.now,
            rtt: Dur::from_ms(90),
            ca_rtt: Dur::from_ms(90),
            in_flight: 2,
            last_sent_seq: 3,
            tag: 0,
            newly_acked: 0,
            snd_una_advanced: false,
            in_recovery: false,
            rate: None,
            host_bytes: None,
        };
        s.cc.on_ack(s.now, &dup);
        // QUIC's MaybeInvokeCongestionEvent: nothing acked, nothing lost, no event; so no RTT update,
        // no ACK interval, and the pending ACK's samples still wait for the next delivering ACK.
        assert_eq!(
            (
                s.cc.last_ack,
                s.cc.avg_rtt_us,
                s.cc.latest_rtt,
                s.cc.avg_interval_ratio
            ),
            before
        );
        assert_eq!(s.cc.pending.map(|p| (p.rtt_us, p.ack_interval_us)), pending);
    }

    #[test]
    fn a_delayed_ack_across_two_mis_credits_each_packet_and_the_acks_rtt_to_its_own_mi() {
        let mut s = vivace();
        s.send(1);
        s.ack_oldest(RTT);
        // PROBING keeps up to 6 useful MIs, so MI 2 follows MI 1 at once (no non-useful MI between).
        s.cc.mode = Mode::Probing;
        // MI 1: packets 1-6 sent at 40 ms; 1-5 ACKed one by one at 81-85 ms, so 1-4's RTTs have joined
        // it (5's waits for the next ACK): 4 reliable samples, and at 85 ms it is one min RTT old.
        s.send(6);
        for k in 1..=5 {
            s.ack_oldest(RTT + Dur::from_ms(k));
        }
        // MI 2: packets 7 and 8 at 85 ms.
        s.send(2);
        let ids: Vec<u64> = s.cc.useful.iter().map(|m| m.id).collect();
        assert_eq!(ids, [1, 2]);
        assert_eq!((s.cc.useful[0].sent, s.cc.useful[1].sent), (6, 2));
        // One delayed ACK of packets 6 (MI 1) and 7 (MI 2) at 86 ms, echoing 6 (RTT 46 ms); then 8's.
        s.ack_oldest_n(2, Dur::from_ms(46));
        s.ack_oldest(RTT);
        let (m1, m2) = (s.cc.useful[0], s.cc.useful[1]);
        // pcc_monitor_interval_queue.cpp OnCongestionEvent: each packet is acked in the MI holding it...
        assert_eq!((m1.acked, m2.acked), (6, 1));
        // ...with a (reliable) RTT sample at its own packet number carrying the event's RTT, 46 ms.
        assert_eq!(
            (m1.samples, m1.reliable, m2.samples, m2.reliable),
            (6, 6, 1, 1)
        );
        assert_eq!((m2.n, m2.sx, m2.sy), (1.0, 0.0, 46_000.0));
        // MI 1: packets 1-6 at x = 0-5 with RTTs 41-46 ms.
        assert_eq!((m1.sx, m1.sy), (15.0, 261_000.0));
    }

    #[test]
    fn a_rising_rtt_trend_outside_two_deviations_of_its_average_is_not_tolerated() {
        let mut t = RttTrend::default();
        // Six MIs whose mean RTT climbs 10 us each: the first trend (10 us/MI) sets the scale.
        for i in 0..6 {
            assert!(!t.rising_outlier(40_000.0 + 10.0 * i as f64));
        }
        assert_eq!((t.avg, t.min, t.dev, t.last), (0.0, 10.0, 10.0, 10.0));
        // The same slope again is within 0 +- 2 x 10: dev = 0.9 x 10, avg = 0.1 x 10.
        assert!(!t.rising_outlier(40_060.0));
        assert_close(t.dev, 9.0);
        assert_close(t.avg, 1.0);
        // A jump to 41 ms: slope 2500 / 17.5 = 142.9 us/MI > 1 + 2 x 9: the gradient counts.
        assert!(t.rising_outlier(41_000.0));
        // A fall as steep is an outlier too, but never makes a gradient count.
        let mut f = RttTrend::default();
        for i in 0..7 {
            f.rising_outlier(40_000.0 + 10.0 * i as f64);
        }
        assert!(!f.rising_outlier(39_000.0));
    }

    #[test]
    fn an_mi_with_80_percent_or_fewer_reliable_rtts_is_lengthened_once_to_twice_the_min_rtt() {
        let setup = |samples: u32, reliable: u32| {
            let mut v = Vivace::new(Params::default());
            v.latest_rtt = Some(RTT);
            v.current = Some((0, true, 6e6, Time::ZERO, 10));
            v.monitor_duration = RTT;
            v.useful.push_back(Mi {
                id: 0,
                samples,
                reliable,
                ..Default::default()
            });
            v
        };
        let ms = Time::from_ms;
        // 4 of 10 reliable: not before one min RTT; at it, doubled instead; then at 80 ms it ends.
        let mut v = setup(10, 4);
        assert!(!v.create_new_interval(ms(39)));
        assert!(!v.create_new_interval(ms(40)));
        assert_eq!(v.monitor_duration, Dur::from_ms(80));
        assert!(!v.create_new_interval(ms(79)));
        assert!(v.create_new_interval(ms(80)));
        // 5 of 5 reliable ends at one min RTT; 3 reliable samples never end it.
        assert!(setup(5, 5).create_new_interval(ms(40)));
        assert!(!setup(3, 3).create_new_interval(ms(400)));
    }

    #[test]
    fn starting_ends_at_half_the_rate_when_the_smoothed_rtt_passes_the_tolerance() {
        for (tolerance, mode) in [(0.3, Mode::Probing), (100.0, Mode::Starting)] {
            let mut s = Script::new(Vivace::new(Params {
                starting_rtt_tolerance: tolerance,
                ..Default::default()
            }));
            s.send(1);
            s.ack_oldest(RTT);
            // A useful MI starts at a smoothed RTT of 40 ms; its ACKs come back at 100 ms.
            s.send(10);
            s.ack_oldest(Dur::from_ms(100));
            // 7/8 x 40 + 1/8 x 100 = 47.5 ms, under 1.3 x 40 = 52.
            assert_eq!(s.cc.mode(), Mode::Starting);
            // 7/8 x 47.5 + 1/8 x 100 = 54.06 ms > 52: with the 0.3 tolerance STARTING ends.
            s.ack_oldest(Dur::from_ms(100));
            assert_eq!(s.cc.mode(), mode, "tolerance {tolerance}");
            let halved = if mode == Mode::Probing { 0.5 } else { 1.0 };
            assert_close(s.cc.rate_bps(), 3e6 * halved);
            assert_eq!(s.cc.counters()[2].1, u64::from(mode == Mode::Probing));
        }
    }

    #[test]
    fn bad_params_are_rejected_by_key() {
        let bad = |p: Params, key: &str| {
            assert_eq!(p.validate().unwrap_err().key(), Some(key));
        };
        bad(
            Params {
                probing_step: 1.0,
                ..Default::default()
            },
            "probing_step",
        );
        bad(
            Params {
                probing_pairs: 0,
                ..Default::default()
            },
            "probing_pairs",
        );
        bad(
            Params {
                latency_coefficient: f64::NAN,
                ..Default::default()
            },
            "latency_coefficient",
        );
        bad(
            Params {
                min_reliable_rtts: 1,
                ..Default::default()
            },
            "min_reliable_rtts",
        );
    }
}
