//! BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00; Linux `net/ipv4/tcp_bbr.c`): a model of the
//! path from two windowed filters, the bottleneck bandwidth (max delivery rate over 10 rounds) and the
//! round-trip propagation time (min RTT over 10 s); it paces at gain x bandwidth and caps the flight
//! at cwnd_gain x bandwidth x min RTT.
//!
//! Modes: STARTUP (gain 2/ln 2) until the bandwidth has not grown by 25% for 3 rounds; DRAIN (gain
//! ln 2 / 2) until the flight is down to one BDP; PROBE_BW cycling the pacing gain through
//! [5/4, 3/4, 1, 1, 1, 1, 1, 1] from a random phase; PROBE_RTT (cwnd 4 packets for max(200 ms, one
//! round)) when the min-RTT estimate is 10 s old. Units are packets and packets per second.
//!
//! Once the pipe is full, the cwnd target adds Linux's ACK-aggregation estimate
//! (`common::bbr::AckAggregation`, tcp_bbr.c `bbr_update_ack_aggregation`, at most 100 ms of bw).
//!
//! Choices (docs/deviations.md): the rate samples come from the transport (`AckEvent::rate`); the
//! long-term bandwidth (policer) estimate and the idle-restart pacing of Linux are not modelled (the
//! draft's v1 text has neither; a restart from idle while app-limited does open a new aggregation
//! epoch, as `bbr_cwnd_event` does); the send quantum is Linux's
//! `bbr_tso_segs_goal` without TSO (1 ms of data, at least 2 packets, 1 below 1.2 Mbit/s); the Loss
//! state after an RTO ends when a packet sent after every packet outstanding at the RTO is ACKed.

use ccscope_core::rng::{self, RngExt};
use ccscope_core::{Bandwidth, Dur, Time};
use serde::{Deserialize, Serialize};

use crate::common::bbr::{
    bdp, check_ack_aggregation_params, AckAggregation, AppLimitedSpan, CaState, LossTracker,
};
use crate::common::{Minmax, RateSample};
use crate::params::{check_positive, invalid, ParamError, ParamSpec};
use crate::{AckEvent, CongestionEvent, Controller, LossEvent, SendEvent};

/// tcp_bbr.c `bbr_pacing_gain`: probe up, drain the probe's queue, then cruise for six phases.
const PACING_GAIN: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// tcp_bbr.c `bbr_min_tso_rate`: below 1.2 Mbit/s the send quantum is one packet.
const MIN_TSO_RATE_BPS: f64 = 1.2e6;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// STARTUP pacing and cwnd gain, 2/ln 2 (draft §4.3.2.1; tcp_bbr.c `bbr_high_gain`).
    pub high_gain: f64,
    /// DRAIN pacing gain, ln 2 / 2 (draft §4.3.3; tcp_bbr.c `bbr_drain_gain`).
    pub drain_gain: f64,
    /// PROBE_BW cwnd gain (draft §4.3.4; tcp_bbr.c `bbr_cwnd_gain`: 2).
    pub cwnd_gain: f64,
    /// Bandwidth filter window in rounds (draft §4.1.1 BtlBwFilterLen; tcp_bbr.c `bbr_bw_rtts`: 10).
    pub bw_window_rounds: u32,
    /// Min-RTT filter window (draft §4.1.2 RTpropFilterLen; tcp_bbr.c `bbr_min_rtt_win_sec`: 10 s).
    pub min_rtt_window_s: f64,
    /// Time at least spent in PROBE_RTT (draft §4.3.5 ProbeRTTDuration; `bbr_probe_rtt_mode_ms`: 200).
    pub probe_rtt_ms: f64,
    /// Minimum cwnd, and cwnd in PROBE_RTT (draft §4.3.5 BBRMinPipeCwnd; `bbr_cwnd_min_target`: 4).
    pub min_cwnd: u32,
    /// Growth that counts as "still growing" in STARTUP (draft §4.3.2.2; `bbr_full_bw_thresh`: 1.25).
    pub full_bw_thresh: f64,
    /// Rounds without that growth before the pipe is full (draft §4.3.2.2; `bbr_full_bw_cnt`: 3).
    pub full_bw_rounds: u32,
    /// Initial window in packets (RFC 6928; tcp_bbr.c uses TCP_INIT_CWND: 10).
    pub initial_window: u32,
    /// Pace this many percent below the model's rate (tcp_bbr.c `bbr_pacing_margin_percent`: 1).
    pub pacing_margin_percent: f64,
    /// PROBE_BW starts at a random phase among this many (tcp_bbr.c `bbr_cycle_rand`: 7).
    pub cycle_rand: u32,
    /// Gain on the ACK-aggregation estimate in the cwnd target; 0 turns it off (tcp_bbr.c
    /// `bbr_extra_acked_gain`: 1).
    pub extra_acked_gain: f64,
    /// Rounds per slot of the two-slot aggregation max filter (tcp_bbr.c `bbr_extra_acked_win_rtts`: 5).
    pub extra_acked_win_rounds: u32,
    /// Cap on the aggregation cwnd, as time at the bandwidth (tcp_bbr.c `bbr_extra_acked_max_us`: 100 ms).
    pub extra_acked_max_ms: f64,
    /// Seed of the random start phase (the simulator gives each flow its own).
    pub seed: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            high_gain: 2.0 / std::f64::consts::LN_2,
            drain_gain: std::f64::consts::LN_2 / 2.0,
            cwnd_gain: 2.0,
            bw_window_rounds: 10,
            min_rtt_window_s: 10.0,
            probe_rtt_ms: 200.0,
            min_cwnd: 4,
            full_bw_thresh: 1.25,
            full_bw_rounds: 3,
            initial_window: 10,
            pacing_margin_percent: 1.0,
            cycle_rand: 7,
            extra_acked_gain: 1.0,
            extra_acked_win_rounds: 5,
            extra_acked_max_ms: 100.0,
            seed: 0,
        }
    }
}

impl crate::params::Params for Params {
    const SPEC: &'static [ParamSpec] = &[
        ParamSpec { name: "high_gain", unit: "ratio", doc: "STARTUP pacing and cwnd gain (draft §4.3.2.1, tcp_bbr.c: 2/ln 2)" },
        ParamSpec { name: "drain_gain", unit: "ratio", doc: "DRAIN pacing gain (draft §4.3.3, tcp_bbr.c: ln 2 / 2)" },
        ParamSpec { name: "cwnd_gain", unit: "ratio", doc: "PROBE_BW cwnd gain (draft §4.3.4, tcp_bbr.c: 2)" },
        ParamSpec { name: "bw_window_rounds", unit: "rounds", doc: "max-bandwidth filter window (draft §4.1.1, tcp_bbr.c bbr_bw_rtts: 10)" },
        ParamSpec { name: "min_rtt_window_s", unit: "s", doc: "min-RTT filter window (draft §4.1.2, tcp_bbr.c: 10)" },
        ParamSpec { name: "probe_rtt_ms", unit: "ms", doc: "least time in PROBE_RTT (draft §4.3.5, tcp_bbr.c: 200)" },
        ParamSpec { name: "min_cwnd", unit: "packets", doc: "minimum cwnd and PROBE_RTT cwnd (draft §4.3.5, tcp_bbr.c: 4)" },
        ParamSpec { name: "full_bw_thresh", unit: "ratio", doc: "bandwidth growth per round that keeps STARTUP going (draft §4.3.2.2, tcp_bbr.c: 1.25)" },
        ParamSpec { name: "full_bw_rounds", unit: "rounds", doc: "rounds without that growth before the pipe is full (draft §4.3.2.2, tcp_bbr.c: 3)" },
        ParamSpec { name: "initial_window", unit: "packets", doc: "initial window (RFC 6928, tcp_bbr.c TCP_INIT_CWND: 10)" },
        ParamSpec { name: "pacing_margin_percent", unit: "%", doc: "pace this far below the model's rate (tcp_bbr.c: 1)" },
        ParamSpec { name: "cycle_rand", unit: "phases", doc: "PROBE_BW starts at a random one of this many phases (tcp_bbr.c bbr_cycle_rand: 7)" },
        ParamSpec { name: "extra_acked_gain", unit: "ratio", doc: "gain on the ACK-aggregation cwnd term, 0 = off (tcp_bbr.c bbr_extra_acked_gain: 1)" },
        ParamSpec { name: "extra_acked_win_rounds", unit: "rounds", doc: "rounds per slot of the 2-slot aggregation max filter (tcp_bbr.c: 5)" },
        ParamSpec { name: "extra_acked_max_ms", unit: "ms", doc: "cap on the aggregation cwnd as time at the bandwidth (tcp_bbr.c: 100)" },
        ParamSpec { name: "seed", unit: "integer", doc: "seed of the random start phase (the simulator sets one per flow)" },
    ];
    fn validate(&self) -> Result<(), ParamError> {
        check_positive("high_gain", self.high_gain)?;
        check_positive("drain_gain", self.drain_gain)?;
        check_positive("cwnd_gain", self.cwnd_gain)?;
        check_positive("min_rtt_window_s", self.min_rtt_window_s)?;
        check_positive("probe_rtt_ms", self.probe_rtt_ms)?;
        if !(self.full_bw_thresh > 1.0 && self.full_bw_thresh.is_finite()) {
            return Err(invalid("full_bw_thresh", "must be > 1 and finite"));
        }
        if !(self.pacing_margin_percent >= 0.0 && self.pacing_margin_percent < 100.0) {
            return Err(invalid("pacing_margin_percent", "must be in [0, 100)"));
        }
        for (key, v) in [
            ("bw_window_rounds", self.bw_window_rounds),
            ("min_cwnd", self.min_cwnd),
            ("full_bw_rounds", self.full_bw_rounds),
            ("initial_window", self.initial_window),
        ] {
            if v < 1 {
                return Err(invalid(key, "must be >= 1"));
            }
        }
        check_ack_aggregation_params(
            self.extra_acked_gain,
            self.extra_acked_max_ms,
            self.extra_acked_win_rounds,
        )?;
        if !(1..=8).contains(&self.cycle_rand) {
            return Err(invalid("cycle_rand", "must be in 1..=8"));
        }
        Ok(())
    }
}

/// BBR's mode (draft §4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

#[derive(Debug)]
pub struct Bbr {
    p: Params,
    mode: Mode,
    cwnd: u32,
    /// Packets per second.
    pacing_rate: f64,
    bytes: u32,
    /// Windowed max of the delivery rate in packets/s over `bw_window_rounds` (draft BtlBwFilter).
    max_bw: Minmax,
    /// Packets delivered so far (Linux `tp->delivered`).
    delivered: u64,
    /// Round count and the delivered mark that ends the current round (draft §4.1.1.3).
    rtt_cnt: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    /// RTprop and when it was last set (draft §4.1.2).
    min_rtt: Option<Dur>,
    min_rtt_stamp: Time,
    probe_rtt_done_stamp: Option<Time>,
    probe_rtt_round_done: bool,
    /// Packets sent in PROBE_RTT are app-limited (tcp_bbr.c sets `tp->app_limited` there).
    probe_rtt_app_limited: AppLimitedSpan,
    ack_aggregation: AckAggregation,
    /// cwnd before recovery or PROBE_RTT, restored after (draft §4.2.3.4 BBRSaveCwnd).
    prior_cwnd: u32,
    packet_conservation: bool,
    prev_ca_state: CaState,
    /// In the Loss state until a packet above this sequence is ACKed.
    loss: LossTracker,
    highest_sent: u64,
    /// Packets declared lost since the last ACK (Linux `rs->losses`).
    losses: u32,
    cycle_idx: usize,
    cycle_stamp: Time,
    full_bw: f64,
    full_bw_cnt: u32,
    full_bw_reached: bool,
    pacing_gain: f64,
    cwnd_gain: f64,
    has_seen_rtt: bool,
    rng: rng::Rng,
    probe_rtt_entries: u64,
}

impl Bbr {
    pub fn new(p: Params) -> Self {
        // tcp_bbr.c bbr_init_pacing_rate_from_rtt with no RTT yet: high_gain x init cwnd / 1 ms.
        let pacing_rate = p.high_gain * p.initial_window as f64 / 1e-3;
        Bbr {
            mode: Mode::Startup,
            cwnd: p.initial_window,
            pacing_rate,
            bytes: 1500,
            max_bw: Minmax::default(),
            delivered: 0,
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            min_rtt: None,
            min_rtt_stamp: Time::ZERO,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            probe_rtt_app_limited: AppLimitedSpan::default(),
            ack_aggregation: AckAggregation::default(),
            prior_cwnd: 0,
            packet_conservation: false,
            prev_ca_state: CaState::Open,
            loss: LossTracker::default(),
            highest_sent: 0,
            losses: 0,
            cycle_idx: 0,
            cycle_stamp: Time::ZERO,
            full_bw: 0.0,
            full_bw_cnt: 0,
            full_bw_reached: false,
            pacing_gain: p.high_gain,
            cwnd_gain: p.high_gain,
            has_seen_rtt: false,
            rng: rng::stream(p.seed, 0),
            probe_rtt_entries: 0,
            p,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// BtlBw in packets per second (0 before the first valid sample).
    pub fn max_bw(&self) -> f64 {
        self.max_bw.get()
    }

    /// tcp_bbr.c `bbr_extra_acked`: the ACK-aggregation estimate, packets.
    pub fn extra_acked(&self) -> u32 {
        self.ack_aggregation.extra_acked()
    }

    pub fn min_rtt(&self) -> Option<Dur> {
        self.min_rtt
    }

    pub fn cycle_idx(&self) -> usize {
        self.cycle_idx
    }

    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// tcp_bbr.c `bbr_tso_segs_goal` without TSO: 1 ms of data at the pacing rate, at least 2 packets
    /// (1 below 1.2 Mbit/s), at most 127.
    fn send_quantum(&self) -> u32 {
        let bps = self.pacing_rate * self.bytes as f64 * 8.0;
        let min_segs = if bps < MIN_TSO_RATE_BPS { 1 } else { 2 };
        let per_ms = (self.pacing_rate * 1e-3).floor() as u32;
        per_ms.clamp(min_segs, 127)
    }

    /// tcp_bbr.c `bbr_bdp`: ceil(bw x min_rtt x gain), or the initial window before any RTT.
    fn bdp(&self, bw: f64, gain: f64) -> u32 {
        bdp(bw, self.min_rtt, gain, self.p.initial_window)
    }

    /// tcp_bbr.c `bbr_quantization_budget`: 3 send quanta, rounded up to even, +2 in phase 0.
    fn quantization_budget(&self, cwnd: u32) -> u32 {
        let mut c = cwnd.saturating_add(3 * self.send_quantum());
        c = c.saturating_add(1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            c = c.saturating_add(2);
        }
        c
    }

    /// tcp_bbr.c `bbr_inflight` (draft §4.2.3.2 BBRInflight): BDP x gain plus the quantization budget.
    fn inflight(&self, bw: f64, gain: f64) -> u32 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// Linux `bbr_save_cwnd` (draft BBRSaveCwnd): remember the cwnd to restore after recovery or PROBE_RTT.
    fn save_cwnd(&mut self) {
        self.prior_cwnd = if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.cwnd
        } else {
            self.prior_cwnd.max(self.cwnd)
        };
    }

    /// tcp_bbr.c `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self, now: Time) {
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN.len();
        self.cycle_stamp = now;
    }

    /// tcp_bbr.c `bbr_reset_probe_bw_mode`: a random phase other than the 3/4 one (draft §4.3.4).
    fn enter_probe_bw(&mut self, now: Time) {
        self.mode = Mode::ProbeBw;
        let r = self.rng.gen_range(0..self.p.cycle_rand) as usize;
        self.cycle_idx = PACING_GAIN.len() - 1 - r;
        self.advance_cycle_phase(now);
    }

    /// tcp_bbr.c `bbr_reset_mode`.
    fn reset_mode(&mut self, now: Time) {
        if self.full_bw_reached {
            self.enter_probe_bw(now);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// tcp_bbr.c `bbr_update_bw` (draft §4.1.1.3-4.1.1.5): count rounds, feed the max filter.
    fn update_bw(&mut self, rs: &RateSample) {
        // A new round when the packet ACKed was sent after the previous round's end was.
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = self.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        let bw = rs.rate_pps();
        // App-limited samples only count when they raise the estimate (draft §4.1.1.5).
        if !self.app_limited(rs) || bw >= self.max_bw.get() {
            let win = self.p.bw_window_rounds as u64;
            self.max_bw.running_max(win, self.rtt_cnt, bw);
        }
    }

    fn app_limited(&self, rs: &RateSample) -> bool {
        rs.is_app_limited || self.probe_rtt_app_limited.covers(rs.prior_delivered)
    }

    /// tcp_bbr.c `bbr_is_next_cycle_phase` (draft §4.3.4 BBRIsNextCyclePhase).
    fn is_next_cycle_phase(&self, now: Time, prior_in_flight: u32) -> bool {
        let rtt = self.min_rtt.unwrap_or(Dur::ZERO);
        let full_length = now.since(self.cycle_stamp) > rtt;
        let gain = PACING_GAIN[self.cycle_idx];
        let bw = self.max_bw.get();
        if gain == 1.0 {
            return full_length;
        }
        if gain > 1.0 {
            // Probe until the flight reaches gain x BDP or a loss says the pipe is full.
            return full_length && (self.losses > 0 || prior_in_flight >= self.inflight(bw, gain));
        }
        // Drain until the flight is down to one BDP, at most one min RTT.
        full_length || prior_in_flight <= self.inflight(bw, 1.0)
    }

    /// tcp_bbr.c `bbr_check_full_bw_reached` (draft §4.3.2.2 BBRCheckFullPipe).
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || self.app_limited(rs) {
            return;
        }
        let bw = self.max_bw.get();
        if bw >= self.full_bw * self.p.full_bw_thresh {
            self.full_bw = bw;
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= self.p.full_bw_rounds;
    }

    /// tcp_bbr.c `bbr_check_drain` (draft §4.3.3): DRAIN once the pipe is full, PROBE_BW once the
    /// flight is down to one BDP.
    fn check_drain(&mut self, now: Time, in_flight: u32) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
        }
        if self.mode == Mode::Drain && in_flight <= self.inflight(self.max_bw.get(), 1.0) {
            self.enter_probe_bw(now);
        }
    }

    /// tcp_bbr.c `bbr_update_min_rtt` (draft §4.1.2.3, §4.3.5): the min-RTT filter and PROBE_RTT.
    fn update_min_rtt(&mut self, now: Time, rtt: Dur, in_flight: u32) {
        let window = Dur::from_secs_f64(self.p.min_rtt_window_s);
        let expired = self.min_rtt.is_some() && now > self.min_rtt_stamp + window;
        if self.min_rtt.is_none_or(|m| rtt < m) || expired {
            self.min_rtt = Some(rtt);
            self.min_rtt_stamp = now;
        }
        if expired && self.mode != Mode::ProbeRtt {
            // Draft §4.3.5: drain the queue to re-measure RTprop.
            self.save_cwnd();
            self.mode = Mode::ProbeRtt;
            self.probe_rtt_done_stamp = None;
            self.probe_rtt_entries += 1;
            self.probe_rtt_app_limited.clear();
        }
        if self.mode != Mode::ProbeRtt {
            return;
        }
        // tcp_bbr.c: "Ignore low rate samples during this mode": the flight is app-limited.
        self.probe_rtt_app_limited.extend(self.delivered, in_flight);
        match self.probe_rtt_done_stamp {
            None if in_flight <= self.p.min_cwnd => {
                // The flight is down: stay max(probe_rtt_ms, one round).
                self.probe_rtt_done_stamp = Some(now + Dur::from_ms_f64(self.p.probe_rtt_ms));
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = self.delivered;
            }
            Some(done) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && now > done {
                    // tcp_bbr.c bbr_check_probe_rtt_done: the new min RTT holds for another window.
                    self.min_rtt_stamp = now;
                    self.cwnd = self.cwnd.max(self.prior_cwnd);
                    self.reset_mode(now);
                }
            }
            None => {}
        }
    }

    /// tcp_bbr.c `bbr_update_gains` (draft §4.3).
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (self.p.high_gain, self.p.high_gain),
            Mode::Drain => (self.p.drain_gain, self.p.high_gain),
            Mode::ProbeBw => (PACING_GAIN[self.cycle_idx], self.p.cwnd_gain),
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// tcp_bbr.c `bbr_set_pacing_rate` (draft §4.2.1 BBRSetPacingRateWithGain).
    fn set_pacing_rate(&mut self, rtt: Dur) {
        if !self.has_seen_rtt && rtt > Dur::ZERO {
            // tcp_bbr.c bbr_init_pacing_rate_from_rtt: high_gain x init cwnd / first RTT.
            self.has_seen_rtt = true;
            let r = self.p.high_gain * self.p.initial_window as f64 / rtt.as_secs_f64();
            self.pacing_rate = r * (1.0 - self.p.pacing_margin_percent / 100.0);
        }
        let rate =
            self.pacing_gain * self.max_bw.get() * (1.0 - self.p.pacing_margin_percent / 100.0);
        // Only raise the rate until the pipe is full (the draft keeps STARTUP's rate from falling).
        if rate > 0.0 && (self.full_bw_reached || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        }
    }

    /// tcp_bbr.c `bbr_set_cwnd_to_recover_or_restore` (draft §4.2.3.4): packet conservation for the
    /// first round of recovery, the saved cwnd back at its end. `Some` when it decides the cwnd.
    fn recover_or_restore(&mut self, state: CaState, acked: u32, in_flight: u32) -> Option<u32> {
        let mut cwnd = self.cwnd;
        if self.losses > 0 {
            cwnd = cwnd.saturating_sub(self.losses).max(1);
        }
        if state == CaState::Recovery && self.prev_ca_state != CaState::Recovery {
            // Entering recovery: send one packet per packet ACKed for one round.
            self.packet_conservation = true;
            self.next_rtt_delivered = self.delivered;
            cwnd = in_flight + acked;
        } else if self.prev_ca_state >= CaState::Recovery && state < CaState::Recovery {
            // Leaving recovery or loss: restore the cwnd saved on entry.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return Some(cwnd.max(in_flight + acked));
        }
        self.cwnd = cwnd;
        None
    }

    /// tcp_bbr.c `bbr_set_cwnd` (draft §4.2.3).
    fn set_cwnd(&mut self, state: CaState, acked: u32, in_flight: u32) {
        if acked > 0 {
            if let Some(c) = self.recover_or_restore(state, acked, in_flight) {
                self.cwnd = c;
            } else {
                // tcp_bbr.c bbr_ack_aggregation_cwnd: room for ACK bursts once the pipe is full.
                let aggr = if self.full_bw_reached {
                    let max_s = self.p.extra_acked_max_ms / 1e3;
                    let bw = self.max_bw.get();
                    self.ack_aggregation
                        .cwnd(self.p.extra_acked_gain, bw, max_s)
                } else {
                    0
                };
                let bdp = self.bdp(self.max_bw.get(), self.cwnd_gain);
                let target = self.quantization_budget(bdp.saturating_add(aggr));
                let mut cwnd = self.cwnd;
                if self.full_bw_reached {
                    // Grow toward the target, never past it.
                    cwnd = cwnd.saturating_add(acked).min(target);
                } else if cwnd < target || self.delivered < self.p.initial_window as u64 {
                    // Before the pipe is full: grow by what is ACKed (slow-start-like).
                    cwnd = cwnd.saturating_add(acked);
                }
                self.cwnd = cwnd.max(self.p.min_cwnd);
            }
        }
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(self.p.min_cwnd);
        }
    }
}

impl Controller for Bbr {
    fn on_send(&mut self, now: Time, ev: &SendEvent) -> u64 {
        self.bytes = ev.bytes.max(1);
        if !ev.retransmission {
            self.highest_sent = self.highest_sent.max(ev.seq);
        }
        // tcp_bbr.c bbr_cwnd_event(CA_EVENT_TX_START): an app-limited restart opens a new ACK epoch.
        if ev.in_flight == 1 && ev.app_limited {
            self.ack_aggregation.restart_epoch(now);
        }
        0
    }

    fn on_ack(&mut self, now: Time, ev: &AckEvent) {
        self.bytes = ev.bytes.max(1);
        let acked = ev.newly_acked;
        self.delivered += acked as u64;
        // Linux rs->prior_in_flight: the flight before this ACK and the losses it revealed.
        let prior_in_flight = ev.in_flight + acked + self.losses;
        self.round_start = false;
        if let Some(rs) = &ev.rate {
            self.update_bw(rs);
        }
        if ev.rate.is_some_and(|r| r.interval > Dur::ZERO) && self.p.extra_acked_gain > 0.0 {
            // tcp_bbr.c bbr_update_ack_aggregation (bbr_update_model, after bbr_update_bw).
            let (bw, cwnd, win) = (self.max_bw.get(), self.cwnd, self.p.extra_acked_win_rounds);
            self.ack_aggregation
                .update(now, acked, self.round_start, win, bw, cwnd);
        }
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(now, prior_in_flight) {
            self.advance_cycle_phase(now);
        }
        if let Some(rs) = &ev.rate {
            self.check_full_bw_reached(rs);
        }
        self.check_drain(now, ev.in_flight);
        // tcp_bbr.c bbr_update_min_rtt reads rs->rtt_us, the newest (S)ACKed packet's RTT.
        self.update_min_rtt(now, ev.ca_rtt, ev.in_flight);
        self.update_gains();
        self.set_pacing_rate(ev.rtt);
        let state = self.loss.ca_state(ev);
        self.set_cwnd(state, acked, ev.in_flight);
        self.losses = 0;
    }

    fn on_loss(&mut self, _now: Time, _ev: &LossEvent) {
        self.losses = self.losses.saturating_add(1);
    }

    fn on_congestion_event(&mut self, _now: Time, _ev: &CongestionEvent) {
        // tcp_bbr.c bbr_ssthresh: entering recovery saves the cwnd.
        self.save_cwnd();
    }

    fn on_rto(&mut self, _now: Time) {
        // tcp_enter_loss: cwnd = in flight + 1 (nothing is in flight after an RTO); bbr_set_state:
        // the full-bandwidth count restarts.
        self.save_cwnd();
        self.prev_ca_state = CaState::Loss;
        self.loss.enter(self.highest_sent);
        self.full_bw = 0.0;
        self.round_start = true;
        self.packet_conservation = false;
        self.losses = 0;
        self.cwnd = 1;
    }

    fn sets_window_in_recovery(&self) -> bool {
        // tcp_bbr.c registers cong_control: bbr_set_cwnd runs recovery, not tcp_cwnd_reduction.
        true
    }

    fn cwnd(&self) -> u32 {
        self.cwnd
    }

    fn pacing_rate(&self) -> Option<Bandwidth> {
        let bps = self.pacing_rate * self.bytes as f64 * 8.0;
        Some(Bandwidth::from_bps(bps.clamp(1.0, 1e15) as u64))
    }

    /// Yes: the bandwidth filter and ACK aggregation read each sample (tcp_bbr.c `bbr_update_bw`).
    fn wants_rate_sample(&self) -> bool {
        true
    }
    fn state_name(&self) -> &'static str {
        match self.mode {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("probe_rtt_entries", self.probe_rtt_entries),
            ("rounds", self.rtt_cnt),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params as _;
    use crate::testing::{assert_close, Script};
    use crate::LossCause;

    const RTT: Dur = Dur::from_ms(40);

    fn bbr(seed: u64) -> Script<Bbr> {
        Script::new(Bbr::new(Params {
            seed,
            ..Default::default()
        }))
    }

    /// One round over a 500 packets/s path with a 40 ms RTT: every full round delivers 20 packets.
    fn round(s: &mut Script<Bbr>) {
        s.round(20, RTT);
    }

    /// Rounds until BBR leaves STARTUP; returns how many.
    fn through_startup(s: &mut Script<Bbr>) -> u32 {
        let mut n = 0;
        while s.cc.mode() == Mode::Startup {
            round(s);
            n += 1;
            assert!(n < 20, "STARTUP never ended");
        }
        n
    }

    #[test]
    fn min_rtt_is_the_rtt_of_the_newest_packet_a_delayed_ack_covers() {
        // Two packets 1 ms apart, one delayed ACK 41 ms after the first: it echoes the first (41 ms),
        // but tcp_bbr.c's sample is rs->rtt_us, the newest packet's 40 ms (draft: rs.rtt).
        let mut s = bbr(1);
        s.send(1);
        s.advance(Dur::from_ms(1));
        s.send(1);
        s.ack_oldest_n(2, Dur::from_ms(41));
        assert_eq!(s.cc.min_rtt(), Some(Dur::from_ms(40)));
    }

    #[test]
    fn startup_ends_after_three_rounds_without_25_percent_growth() {
        let mut s = bbr(1);
        // Round 1 sends the initial 10 (250 packets/s), round 2 20 (500), then 500 packets/s for good.
        // Round starts: full_bw 25 (round 1's first sample), 250, 500; rounds 4, 5, 6 add no 25%.
        for _ in 0..5 {
            round(&mut s);
            assert_eq!(s.cc.state_name(), "startup");
        }
        round(&mut s);
        assert!(s.cc.full_bw_reached());
        assert_close(s.cc.max_bw(), 500.0);
        assert_eq!(s.cc.min_rtt(), Some(RTT));
        // DRAIN and PROBE_BW on the same ACK: the flight (19) is already below one BDP (20) + 6.
        assert_eq!(s.cc.mode(), Mode::ProbeBw);
        let phase = s.cc.cycle_idx();
        // tcp_bbr.c: the random start phase is never the 3/4 (draining) one.
        assert_ne!(phase, 1);
        // cwnd = 2 BDP (40) + the 20-packet ACK burst of each scripted round (all its ACKs arrive at
        // one instant: bbr_ack_aggregation_cwnd, under its 100 ms = 50 cap) + 3 send quanta of 2
        // packets, even, +2 in phase 0; pacing 1% under gain x bw.
        assert_eq!(s.cc.extra_acked(), 20);
        let extra = if phase == 0 { 2 } else { 0 };
        assert_eq!(s.cc.cwnd(), 66 + extra);
        let pps = s.cc.pacing_rate().expect("paced").bps() as f64 / (1500.0 * 8.0);
        assert!(
            (pps - PACING_GAIN[phase] * 500.0 * 0.99).abs() < 1e-3,
            "{pps}"
        );
    }

    #[test]
    fn the_ack_aggregation_term_joins_the_cwnd_only_once_the_pipe_is_full() {
        let with = |gain: f64| {
            Script::new(Bbr::new(Params {
                seed: 1,
                extra_acked_gain: gain,
                ..Default::default()
            }))
        };
        let (mut on, mut off) = (with(1.0), with(0.0));
        // STARTUP already measures each round's burst (10, then 20 packets at one instant), but its
        // cwnd is the same without the term (tcp_bbr.c v1 gates it on bbr_full_bw_reached).
        while on.cc.mode() == Mode::Startup {
            round(&mut on);
            round(&mut off);
            if on.cc.mode() == Mode::Startup {
                assert_eq!(on.cc.cwnd(), off.cc.cwnd());
            }
        }
        assert_eq!((on.cc.extra_acked(), off.cc.extra_acked()), (20, 0));
        assert_eq!(on.cc.mode(), Mode::ProbeBw);
        assert_eq!(on.cc.cycle_idx(), off.cc.cycle_idx());
        let phase = if on.cc.cycle_idx() == 0 { 2 } else { 0 };
        assert_eq!((on.cc.cwnd(), off.cc.cwnd()), (66 + phase, 46 + phase));
    }

    #[test]
    fn probe_rtt_comes_when_the_min_rtt_is_10_s_old_and_lasts_200_ms_and_a_round() {
        let mut s = bbr(1);
        through_startup(&mut s);
        // The min RTT was set by the first ACK (40 ms) and never undercut: it expires after 10.04 s.
        let mut entered = None;
        let mut prior = 0;
        while entered.is_none() {
            prior = s.cc.cwnd();
            round(&mut s);
            if s.cc.mode() == Mode::ProbeRtt {
                entered = Some(s.now);
            }
        }
        // Rounds' ACKs come at multiples of 40 ms: the first after 10.04 s is at 10.08 s.
        assert_eq!(entered, Some(Time::from_ms(10_080)));
        assert_eq!(s.cc.cwnd(), 4);
        // The flight falls to 4 during that round (done at 10.28 s); the next round starts the
        // required round trip; the first ACK after 10.28 s is at 10.32 s.
        let mut left = None;
        while left.is_none() {
            round(&mut s);
            assert!(s.cc.cwnd() <= 4 || s.cc.mode() != Mode::ProbeRtt);
            if s.cc.mode() != Mode::ProbeRtt {
                // The exit ACK is the first of its round: it left at that round's ACK time.
                left = Some(s.now);
            }
        }
        assert_eq!(left, Some(Time::from_ms(10_320)));
        assert_eq!(s.cc.mode(), Mode::ProbeBw);
        // The cwnd saved on entry comes back (capped by the target of the new phase).
        let target = 66 + if s.cc.cycle_idx() == 0 { 2 } else { 0 };
        assert_eq!(s.cc.cwnd(), prior.min(target));
        assert_eq!(s.cc.counters()[0], ("probe_rtt_entries", 1));
    }

    #[test]
    fn recovery_conserves_packets_then_restores_the_saved_window() {
        let mut s = bbr(1);
        through_startup(&mut s);
        for _ in 0..3 {
            round(&mut s);
        }
        let before = s.cc.cwnd();
        s.send(20);
        // A loss: the oldest is lost, 19 stay in flight; the first ACK in recovery sets cwnd to
        // the flight plus what it ACKed after taking the loss off: in flight 18 + 1.
        s.congestion(LossCause::Reordering);
        s.ack_oldest(RTT);
        assert_eq!(s.cc.cwnd(), 19);
        // Packet conservation: cwnd never falls below flight + ACKed while it lasts.
        s.ack_oldest(RTT);
        assert_eq!(s.cc.cwnd(), 19);
        s.ack_all(RTT);
        s.recovery_exit();
        s.send(1);
        s.ack_oldest(RTT);
        assert_eq!(
            s.cc.cwnd(),
            before,
            "restored to the window saved on the congestion event"
        );
    }

    #[test]
    fn an_rto_drops_the_window_to_one_packet_until_data_sent_after_it_is_acked() {
        let mut s = bbr(1);
        through_startup(&mut s);
        let before = s.cc.cwnd();
        s.send(20);
        let first = s.in_flight.front().expect("in flight").0;
        s.rto();
        assert_eq!(s.cc.cwnd(), 1);
        // A retransmission of a packet outstanding at the RTO is ACKed: still in Loss, the window
        // grows by what is ACKed, to at least min_cwnd.
        let retx = AckEvent {
            seq: first,
            bytes: 1500,
            send_time: s.now,
            recv_time: s.now + Dur::from_ms(20),
            rtt: RTT,
            ca_rtt: RTT,
            in_flight: 0,
            last_sent_seq: first + 19,
            tag: 0,
            newly_acked: 1,
            snd_una_advanced: true,
            in_recovery: false,
            rate: None,
            host_bytes: None,
        };
        s.now += RTT;
        s.cc.on_ack(s.now, &retx);
        assert_eq!(s.cc.cwnd(), 4);
        // New data sent after the RTO is ACKed: the Loss state ends and the saved window returns.
        s.send(1);
        s.ack_oldest(RTT);
        assert_eq!(s.cc.cwnd(), before);
    }

    #[test]
    fn the_start_phase_comes_from_the_seed() {
        let phases = |seed: u64| -> Vec<usize> {
            let mut b = Bbr::new(Params {
                seed,
                ..Default::default()
            });
            (0..50)
                .map(|_| {
                    b.enter_probe_bw(Time::ZERO);
                    b.cycle_idx
                })
                .collect()
        };
        assert_eq!(phases(7), phases(7));
        assert_ne!(phases(7), phases(8));
        let seen: std::collections::BTreeSet<usize> = phases(7).into_iter().collect();
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), [0, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn bad_params_are_rejected_by_key() {
        let bad = |p: Params, key: &str| {
            assert_eq!(p.validate().unwrap_err().key(), Some(key));
        };
        bad(
            Params {
                full_bw_thresh: 1.0,
                ..Default::default()
            },
            "full_bw_thresh",
        );
        bad(
            Params {
                cycle_rand: 0,
                ..Default::default()
            },
            "cycle_rand",
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
                high_gain: f64::NAN,
                ..Default::default()
            },
            "high_gain",
        );
    }
}
