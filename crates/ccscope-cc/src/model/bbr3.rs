//! BBRv3 (draft-ietf-ccwg-bbr; Linux `net/ipv4/tcp_bbr.c` of the google/bbr `v3` branch): BBR's path
//! model (max bandwidth, min RTT) bounded by a long-term upper bound (`inflight_hi`, set where probing
//! met a loss rate above 2%) and a short-term lower bound (`bw_lo`, `inflight_lo`, cut by beta = 0.7 on
//! each round with loss while not probing), so that loss, not only bandwidth, shapes the flight.
//!
//! States: STARTUP (pacing gain 2.77, cwnd gain 2) until the bandwidth stops growing by 25% for 3
//! rounds or a recovery round loses more than 2% with at least 6 loss events; DRAIN (0.35) until the
//! flight is one BDP; PROBE_BW cycling DOWN (0.9) -> CRUISE (1.0, 15% headroom under `inflight_hi`) ->
//! REFILL (1.0, one round) -> UP (1.25, cwnd gain 2.25) with the next probe due after a random
//! 2-3 s of wall clock or min(63, BDP) + a random 0-1 packet-timed rounds, whichever is first;
//! PROBE_RTT (cwnd 0.5 BDP for max(200 ms, one round)) when the min RTT has not been re-measured for
//! 5 s. The max-bandwidth filter keeps the best sample of the last two PROBE_BW cycles.
//!
//! The cwnd target adds the ACK-aggregation estimate (`common::bbr::AckAggregation`, at most 100 ms
//! of the bandwidth); restarting from idle while app-limited paces at 1.0 x bw in PROBE_BW, may end
//! PROBE_RTT, and holds off a new PROBE_RTT until the first ACK of new data.
//!
//! Units are packets and packets per second. Choices (docs/deviations.md): ECN is ignored (the ACK
//! events carry no CE marks); the app-limited fast path and TLP-repaired-loss signals are not
//! modelled; each packet's send-time flight and loss count ride
//! in its tag (Linux `skb->tx.in_flight`, `tx.lost`); a lost packet's app-limited bit is unknown
//! (taken as not app-limited); the Loss state after an RTO ends as in `model/bbr.rs`.

use ccscope_core::rng::{self, RngExt};
use ccscope_core::{Bandwidth, Dur, Time};
use serde::{Deserialize, Serialize};

use crate::common::bbr::{
    bdp, check_ack_aggregation_params, AckAggregation, AppLimitedSpan, CaState, LossTracker,
};
use crate::params::{check_positive, invalid, ParamError, ParamSpec};
use crate::{AckEvent, CongestionEvent, Controller, LossEvent, SendEvent};

/// tcp_bbr.c `bbr_tso_segs_generic`: the pacing budget is the rate >> `sk_pacing_shift` (10), 1/1024 s.
const PACING_SHIFT_S: f64 = 1.0 / 1024.0;
/// tcp_bbr.c `bbr_tso_segs_generic`: 64 KB (GSO_LEGACY_MAX_SIZE) halved per 512 us of min RTT.
const GSO_MAX_BYTES: f64 = 65536.0;
/// tcp_bbr.c `bbr_tso_segs_generic`: the burst is capped at GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER.
const GSO_CAP_BYTES: f64 = 65536.0 - 1.0 - 320.0;
/// sysctl `tcp_min_tso_segs` default: a send quantum is at least 2 packets.
const MIN_TSO_SEGS: u32 = 2;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// STARTUP pacing gain (draft BBRStartupPacingGain 4 ln 2 = 2.77; tcp_bbr.c 277/100).
    pub startup_pacing_gain: f64,
    /// STARTUP and DRAIN cwnd gain (draft BBRStartupCwndGain: 2).
    pub startup_cwnd_gain: f64,
    /// DRAIN pacing gain (draft BBRDrainPacingGain: 0.35; tcp_bbr.c 1000/2885).
    pub drain_pacing_gain: f64,
    /// PROBE_BW cwnd gain (draft BBRDefaultCwndGain: 2).
    pub cwnd_gain: f64,
    /// ProbeBW_UP pacing gain (draft: 1.25).
    pub probe_up_pacing_gain: f64,
    /// ProbeBW_DOWN pacing gain (draft: 0.90; google/bbr v3 tcp_bbr.c uses 91/100, docs/deviations.md).
    pub probe_down_pacing_gain: f64,
    /// ProbeBW_UP cwnd gain added to `cwnd_gain` (draft 2.25 - 2; tcp_bbr.c `bbr_bw_probe_cwnd_gain` 1/4).
    pub probe_up_cwnd_gain_add: f64,
    /// Fraction kept on a loss round (draft BBRBeta: 0.7; tcp_bbr.c `bbr_beta` cuts 30%).
    pub beta: f64,
    /// Loss rate that means the flight was too high (draft BBRLossThresh: 2%; tcp_bbr.c 2/100).
    pub loss_thresh: f64,
    /// Headroom left under `inflight_hi` while cruising (draft BBRHeadroom: 0.15).
    pub headroom: f64,
    /// Bandwidth growth that keeps STARTUP or UP going (draft: 1.25; `bbr_full_bw_thresh`).
    pub full_bw_thresh: f64,
    /// Rounds without that growth before the pipe is full (draft: 3; `bbr_full_bw_cnt`).
    pub full_bw_rounds: u32,
    /// Loss events in a recovery round that end STARTUP (draft BBRStartupFullLossCnt: 6).
    pub full_loss_cnt: u32,
    /// Min-RTT filter window (draft MinRTTFilterLen: 10 s).
    pub min_rtt_window_s: f64,
    /// Time without a new probe-RTT minimum before PROBE_RTT (draft ProbeRTTInterval: 5 s).
    pub probe_rtt_interval_s: f64,
    /// Least time in PROBE_RTT (draft ProbeRTTDuration: 200 ms).
    pub probe_rtt_ms: f64,
    /// PROBE_RTT cwnd as a fraction of the BDP (draft BBRProbeRTTCwndGain: 0.5).
    pub probe_rtt_cwnd_gain: f64,
    /// Minimum cwnd (draft BBRMinPipeCwnd: 4 packets).
    pub min_cwnd: u32,
    /// Initial window in packets (RFC 6928: 10).
    pub initial_window: u32,
    /// Pace this many percent below the model's rate (draft BBRPacingMarginPercent: 1).
    pub pacing_margin_percent: f64,
    /// Least wall-clock wait from ProbeBW_DOWN to the next probe (tcp_bbr.c `bbr_bw_probe_base_us`: 2 s).
    pub probe_wait_base_s: f64,
    /// Random extra wait, uniform in [0, this) (tcp_bbr.c `bbr_bw_probe_rand_us`: 1 s).
    pub probe_wait_rand_s: f64,
    /// Random head start of the round count, uniform in [0, this) (tcp_bbr.c `bbr_bw_probe_rand_rounds`: 2).
    pub probe_rand_rounds: u32,
    /// Rounds after which a Reno flow of this BDP would probe, at most (`bbr_bw_probe_max_rounds`: 63).
    pub probe_max_rounds: u32,
    /// Gain on the ACK-aggregation estimate in the cwnd target; 0 turns it off (tcp_bbr.c
    /// `bbr_extra_acked_gain`: 1).
    pub extra_acked_gain: f64,
    /// Rounds per slot of the two-slot aggregation max filter (tcp_bbr.c `bbr_extra_acked_win_rtts`: 5).
    pub extra_acked_win_rounds: u32,
    /// Cap on the aggregation cwnd, as time at the bandwidth (tcp_bbr.c `bbr_extra_acked_max_us`: 100 ms).
    pub extra_acked_max_ms: f64,
    /// Seed of the probe timing (the simulator gives each flow its own).
    pub seed: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            startup_pacing_gain: 2.77,
            startup_cwnd_gain: 2.0,
            drain_pacing_gain: 0.35,
            cwnd_gain: 2.0,
            probe_up_pacing_gain: 1.25,
            probe_down_pacing_gain: 0.90,
            probe_up_cwnd_gain_add: 0.25,
            beta: 0.7,
            loss_thresh: 0.02,
            headroom: 0.15,
            full_bw_thresh: 1.25,
            full_bw_rounds: 3,
            full_loss_cnt: 6,
            min_rtt_window_s: 10.0,
            probe_rtt_interval_s: 5.0,
            probe_rtt_ms: 200.0,
            probe_rtt_cwnd_gain: 0.5,
            min_cwnd: 4,
            initial_window: 10,
            pacing_margin_percent: 1.0,
            probe_wait_base_s: 2.0,
            probe_wait_rand_s: 1.0,
            probe_rand_rounds: 2,
            probe_max_rounds: 63,
            extra_acked_gain: 1.0,
            extra_acked_win_rounds: 5,
            extra_acked_max_ms: 100.0,
            seed: 0,
        }
    }
}

impl crate::params::Params for Params {
    const SPEC: &'static [ParamSpec] = &[
        ParamSpec {
            name: "startup_pacing_gain",
            unit: "ratio",
            doc: "STARTUP pacing gain (draft-ietf-ccwg-bbr BBRStartupPacingGain: 2.77)",
        },
        ParamSpec {
            name: "startup_cwnd_gain",
            unit: "ratio",
            doc: "STARTUP and DRAIN cwnd gain (draft BBRStartupCwndGain: 2)",
        },
        ParamSpec {
            name: "drain_pacing_gain",
            unit: "ratio",
            doc: "DRAIN pacing gain (draft BBRDrainPacingGain: 0.35)",
        },
        ParamSpec {
            name: "cwnd_gain",
            unit: "ratio",
            doc: "PROBE_BW cwnd gain (draft BBRDefaultCwndGain: 2)",
        },
        ParamSpec {
            name: "probe_up_pacing_gain",
            unit: "ratio",
            doc: "ProbeBW_UP pacing gain (draft: 1.25)",
        },
        ParamSpec {
            name: "probe_down_pacing_gain",
            unit: "ratio",
            doc: "ProbeBW_DOWN pacing gain (draft: 0.90; tcp_bbr.c v3: 0.91)",
        },
        ParamSpec {
            name: "probe_up_cwnd_gain_add",
            unit: "ratio",
            doc: "cwnd gain added in ProbeBW_UP (draft 2.25 - 2; tcp_bbr.c: 1/4)",
        },
        ParamSpec {
            name: "beta",
            unit: "ratio",
            doc: "fraction of bw_lo/inflight_lo kept per loss round (draft BBRBeta: 0.7)",
        },
        ParamSpec {
            name: "loss_thresh",
            unit: "ratio",
            doc: "loss rate that marks the flight too high (draft BBRLossThresh: 0.02)",
        },
        ParamSpec {
            name: "headroom",
            unit: "ratio",
            doc: "headroom under inflight_hi while cruising (draft BBRHeadroom: 0.15)",
        },
        ParamSpec {
            name: "full_bw_thresh",
            unit: "ratio",
            doc: "growth that keeps STARTUP or ProbeBW_UP going (draft: 1.25)",
        },
        ParamSpec {
            name: "full_bw_rounds",
            unit: "rounds",
            doc: "rounds without that growth before the pipe is full (draft: 3)",
        },
        ParamSpec {
            name: "full_loss_cnt",
            unit: "events",
            doc:
                "loss events in a recovery round that end STARTUP (draft BBRStartupFullLossCnt: 6)",
        },
        ParamSpec {
            name: "min_rtt_window_s",
            unit: "s",
            doc: "min-RTT filter window (draft MinRTTFilterLen: 10)",
        },
        ParamSpec {
            name: "probe_rtt_interval_s",
            unit: "s",
            doc:
                "time without a new probe-RTT minimum before PROBE_RTT (draft ProbeRTTInterval: 5)",
        },
        ParamSpec {
            name: "probe_rtt_ms",
            unit: "ms",
            doc: "least time in PROBE_RTT (draft ProbeRTTDuration: 200)",
        },
        ParamSpec {
            name: "probe_rtt_cwnd_gain",
            unit: "ratio",
            doc: "PROBE_RTT cwnd as a fraction of the BDP (draft BBRProbeRTTCwndGain: 0.5)",
        },
        ParamSpec {
            name: "min_cwnd",
            unit: "packets",
            doc: "minimum cwnd (draft BBRMinPipeCwnd: 4)",
        },
        ParamSpec {
            name: "initial_window",
            unit: "packets",
            doc: "initial window (RFC 6928: 10)",
        },
        ParamSpec {
            name: "pacing_margin_percent",
            unit: "%",
            doc: "pace this far below the model's rate (draft BBRPacingMarginPercent: 1)",
        },
        ParamSpec {
            name: "probe_wait_base_s",
            unit: "s",
            doc: "least wall-clock wait before the next bandwidth probe (tcp_bbr.c: 2)",
        },
        ParamSpec {
            name: "probe_wait_rand_s",
            unit: "s",
            doc: "uniform random extra wait before the next probe (tcp_bbr.c: 1)",
        },
        ParamSpec {
            name: "probe_rand_rounds",
            unit: "rounds",
            doc: "uniform random head start of the probe round count (tcp_bbr.c: 2)",
        },
        ParamSpec {
            name: "probe_max_rounds",
            unit: "rounds",
            doc: "most packet-timed rounds between probes (tcp_bbr.c bbr_bw_probe_max_rounds: 63)",
        },
        ParamSpec {
            name: "extra_acked_gain",
            unit: "ratio",
            doc:
                "gain on the ACK-aggregation cwnd term, 0 = off (tcp_bbr.c bbr_extra_acked_gain: 1)",
        },
        ParamSpec {
            name: "extra_acked_win_rounds",
            unit: "rounds",
            doc: "rounds per slot of the 2-slot aggregation max filter (tcp_bbr.c: 5)",
        },
        ParamSpec {
            name: "extra_acked_max_ms",
            unit: "ms",
            doc: "cap on the aggregation cwnd as time at the bandwidth (tcp_bbr.c: 100)",
        },
        ParamSpec {
            name: "seed",
            unit: "integer",
            doc: "seed of the random probe timing (the simulator sets one per flow)",
        },
    ];
    fn validate(&self) -> Result<(), ParamError> {
        for (key, v) in [
            ("startup_pacing_gain", self.startup_pacing_gain),
            ("startup_cwnd_gain", self.startup_cwnd_gain),
            ("drain_pacing_gain", self.drain_pacing_gain),
            ("cwnd_gain", self.cwnd_gain),
            ("probe_up_pacing_gain", self.probe_up_pacing_gain),
            ("probe_down_pacing_gain", self.probe_down_pacing_gain),
            ("min_rtt_window_s", self.min_rtt_window_s),
            ("probe_rtt_interval_s", self.probe_rtt_interval_s),
            ("probe_rtt_ms", self.probe_rtt_ms),
            ("probe_rtt_cwnd_gain", self.probe_rtt_cwnd_gain),
            ("probe_wait_base_s", self.probe_wait_base_s),
        ] {
            check_positive(key, v)?;
        }
        for (key, v) in [
            ("beta", self.beta),
            ("loss_thresh", self.loss_thresh),
            ("headroom", self.headroom),
        ] {
            if !(v > 0.0 && v < 1.0) {
                return Err(invalid(key, "must be in (0, 1)"));
            }
        }
        if !(self.probe_up_cwnd_gain_add >= 0.0 && self.probe_up_cwnd_gain_add.is_finite()) {
            return Err(invalid("probe_up_cwnd_gain_add", "must be >= 0 and finite"));
        }
        check_ack_aggregation_params(
            self.extra_acked_gain,
            self.extra_acked_max_ms,
            self.extra_acked_win_rounds,
        )?;
        if !(self.probe_wait_rand_s >= 0.0 && self.probe_wait_rand_s.is_finite()) {
            return Err(invalid("probe_wait_rand_s", "must be >= 0 and finite"));
        }
        if !(self.full_bw_thresh > 1.0 && self.full_bw_thresh.is_finite()) {
            return Err(invalid("full_bw_thresh", "must be > 1 and finite"));
        }
        if !(self.pacing_margin_percent >= 0.0 && self.pacing_margin_percent < 100.0) {
            return Err(invalid("pacing_margin_percent", "must be in [0, 100)"));
        }
        if self.probe_rtt_interval_s > self.min_rtt_window_s {
            // tcp_bbr.c: "bbr_probe_rtt_win_ms must be <= bbr_min_rtt_win_sec * MSEC_PER_SEC".
            return Err(invalid(
                "probe_rtt_interval_s",
                "must be <= min_rtt_window_s",
            ));
        }
        for (key, v) in [
            ("full_bw_rounds", self.full_bw_rounds),
            ("min_cwnd", self.min_cwnd),
            ("initial_window", self.initial_window),
            ("probe_rand_rounds", self.probe_rand_rounds),
            ("probe_max_rounds", self.probe_max_rounds),
        ] {
            if v < 1 {
                return Err(invalid(key, "must be >= 1"));
            }
        }
        Ok(())
    }
}

/// BBR's state (draft-ietf-ccwg-bbr "State Machine").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// The PROBE_BW phase (tcp_bbr.c `bbr_pacing_gain_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Up,
    Down,
    Cruise,
    Refill,
}

/// What the ACKs arriving now say about bandwidth probing (tcp_bbr.c `bbr_ack_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// The rate sample fields tcp_bbr.c reads, gathered for one ACK or one lost packet.
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    /// A valid delivery-rate sample came with the ACK (`rs->interval_us > 0`).
    valid: bool,
    /// Delivery rate in packets/s (`ctx->sample_bw`), 0 without a valid sample.
    bw: f64,
    /// Packets delivered over the sample's interval (`rs->delivered`).
    delivered: u64,
    prior_delivered: u64,
    is_app_limited: bool,
    /// Packets in flight when the packet was sent (`rs->tx_in_flight`).
    tx_in_flight: u32,
    /// Packets declared lost between its send and now (`rs->lost`).
    lost: u32,
    /// Packets declared lost since the previous ACK (`rs->losses`).
    losses: u32,
    /// Packets newly ACKed (`rs->acked_sacked`).
    acked: u32,
    /// The flight before this ACK (`rs->prior_in_flight`).
    prior_in_flight: u32,
}

/// The send-time flight and loss count a packet carries in its tag (Linux `skb->tx`).
fn tag_of(in_flight: u32, lost_total: u32) -> u64 {
    (in_flight as u64) << 32 | lost_total as u64
}

fn untag(tag: u64) -> (u32, u32) {
    ((tag >> 32) as u32, tag as u32)
}

#[derive(Debug)]
pub struct Bbr3 {
    p: Params,
    mode: Mode,
    phase: Phase,
    ack_phase: AckPhase,
    cwnd: u32,
    /// Packets per second.
    pacing_rate: f64,
    bytes: u32,
    /// Max delivery rate of this and the previous PROBE_BW cycle (tcp_bbr.c `bw_hi[2]`).
    bw_hi: [f64; 2],
    /// Short-term lower bounds (draft BBR.bw_shortterm, BBR.inflight_shortterm); `None` is unbounded.
    bw_lo: Option<f64>,
    inflight_lo: Option<u32>,
    /// Long-term upper bound on the flight (draft BBR.inflight_longterm); `None` is unbounded.
    inflight_hi: Option<u32>,
    /// Max rate and delivered volume of the latest round (draft BBR.bw_latest, BBR.inflight_latest).
    bw_latest: f64,
    inflight_latest: u64,
    /// Packets delivered (Linux `tp->delivered`) and declared lost (`tp->lost`) so far.
    delivered: u64,
    lost_total: u32,
    /// Packet-timed rounds (draft BBRUpdateRound).
    next_rtt_delivered: u64,
    round_start: bool,
    rounds: u64,
    rounds_since_probe: u32,
    /// Loss rounds (tcp_bbr.c `loss_round_delivered`, `loss_round_start`).
    loss_round_delivered: u64,
    loss_round_start: bool,
    loss_in_round: bool,
    loss_events_in_round: u32,
    /// Losses reported since the previous ACK.
    losses: u32,
    min_rtt: Option<Dur>,
    min_rtt_stamp: Time,
    probe_rtt_min: Option<Dur>,
    probe_rtt_min_stamp: Time,
    probe_rtt_done_stamp: Option<Time>,
    probe_rtt_round_done: bool,
    probe_rtt_app_limited: AppLimitedSpan,
    /// Sending restarted from idle while app-limited; cleared by the first ACK of new data
    /// (tcp_bbr.c `idle_restart`).
    idle_restart: bool,
    ack_aggregation: AckAggregation,
    prior_cwnd: u32,
    prev_ca_state: CaState,
    loss: LossTracker,
    highest_sent: u64,
    full_bw: f64,
    full_bw_cnt: u32,
    full_bw_now: bool,
    full_bw_reached: bool,
    pacing_gain: f64,
    cwnd_gain: f64,
    has_seen_rtt: bool,
    /// Start of the current PROBE_BW phase clock (tcp_bbr.c `cycle_mstamp`).
    cycle_stamp: Time,
    probe_wait: Dur,
    bw_probe_up_rounds: u32,
    bw_probe_up_cnt: u32,
    bw_probe_up_acks: u32,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    /// The window was full at some send this round or the last (Linux `tp->is_cwnd_limited`).
    cwnd_limited_now: bool,
    cwnd_limited_prev: bool,
    /// State saved on a congestion event for `on_undo` (tcp_bbr.c `undo_*`).
    undo: (Option<f64>, Option<u32>, Option<u32>),
    rng: rng::Rng,
    probe_rtt_entries: u64,
    bw_probes: u64,
}

impl Bbr3 {
    pub fn new(p: Params) -> Self {
        // tcp_bbr.c bbr_init_pacing_rate_from_rtt with no RTT yet: startup gain x init cwnd / 1 ms.
        let pacing_rate = p.startup_pacing_gain * p.initial_window as f64 / 1e-3
            * (1.0 - p.pacing_margin_percent / 100.0);
        Bbr3 {
            mode: Mode::Startup,
            phase: Phase::Down,
            ack_phase: AckPhase::Init,
            cwnd: p.initial_window,
            pacing_rate,
            bytes: 1500,
            bw_hi: [0.0; 2],
            bw_lo: None,
            inflight_lo: None,
            inflight_hi: None,
            bw_latest: 0.0,
            inflight_latest: 0,
            delivered: 0,
            lost_total: 0,
            next_rtt_delivered: 0,
            round_start: false,
            rounds: 0,
            rounds_since_probe: 0,
            // tcp_bbr.c bbr_init: loss rounds start after the first full flight is ACKed.
            loss_round_delivered: 1,
            loss_round_start: false,
            loss_in_round: false,
            loss_events_in_round: 0,
            losses: 0,
            min_rtt: None,
            min_rtt_stamp: Time::ZERO,
            probe_rtt_min: None,
            probe_rtt_min_stamp: Time::ZERO,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            probe_rtt_app_limited: AppLimitedSpan::default(),
            idle_restart: false,
            ack_aggregation: AckAggregation::default(),
            prior_cwnd: 0,
            prev_ca_state: CaState::Open,
            loss: LossTracker::default(),
            highest_sent: 0,
            full_bw: 0.0,
            full_bw_cnt: 0,
            full_bw_now: false,
            full_bw_reached: false,
            pacing_gain: p.startup_pacing_gain,
            cwnd_gain: p.startup_cwnd_gain,
            has_seen_rtt: false,
            cycle_stamp: Time::ZERO,
            probe_wait: Dur::ZERO,
            bw_probe_up_rounds: 0,
            bw_probe_up_cnt: u32::MAX,
            bw_probe_up_acks: 0,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            cwnd_limited_now: false,
            cwnd_limited_prev: false,
            undo: (None, None, None),
            rng: rng::stream(p.seed, 0),
            probe_rtt_entries: 0,
            bw_probes: 0,
            p,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// tcp_bbr.c `bbr_max_bw`: the max filter over the last two cycles, packets/s.
    pub fn max_bw(&self) -> f64 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// tcp_bbr.c `bbr_bw`: the max bandwidth bounded by the short-term `bw_lo`.
    pub fn bw(&self) -> f64 {
        self.bw_lo.map_or(self.max_bw(), |lo| lo.min(self.max_bw()))
    }

    pub fn min_rtt(&self) -> Option<Dur> {
        self.min_rtt
    }

    pub fn inflight_hi(&self) -> Option<u32> {
        self.inflight_hi
    }

    pub fn inflight_lo(&self) -> Option<u32> {
        self.inflight_lo
    }

    pub fn bw_lo(&self) -> Option<f64> {
        self.bw_lo
    }

    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// tcp_bbr.c `bbr_extra_acked`: the ACK-aggregation estimate, packets.
    pub fn extra_acked(&self) -> u32 {
        self.ack_aggregation.extra_acked()
    }

    /// The wall-clock wait drawn for the current PROBE_BW cycle.
    pub fn probe_wait(&self) -> Dur {
        self.probe_wait
    }

    fn is_cwnd_limited(&self) -> bool {
        self.cwnd_limited_now || self.cwnd_limited_prev
    }

    /// tcp_bbr.c `bbr_tso_segs_generic` without TSO hardware: 1/1024 s at the pacing rate plus 64 KB
    /// halved per 512 us of min RTT, capped at one GSO burst, at least `tcp_min_tso_segs`.
    fn send_quantum(&self) -> u32 {
        let mut bytes = self.pacing_rate * self.bytes as f64 * PACING_SHIFT_S;
        let rtt_us = self.min_rtt.map_or(u64::MAX, |r| r.as_ns() / 1000);
        let halvings = rtt_us >> 9;
        if halvings < 32 {
            bytes += GSO_MAX_BYTES / (1u64 << halvings) as f64;
        }
        let segs = (bytes.min(GSO_CAP_BYTES) / self.bytes as f64).floor() as u32;
        segs.max(MIN_TSO_SEGS)
    }

    /// tcp_bbr.c `bbr_quantization_budget` (v3): at least 3 send quanta and min_cwnd, +2 in ProbeBW_UP.
    fn quantization_budget(&self, cwnd: u32) -> u32 {
        let mut c = cwnd.max(3 * self.send_quantum()).max(self.p.min_cwnd);
        if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
            c = c.saturating_add(2);
        }
        c
    }

    fn bdp(&self, bw: f64, gain: f64) -> u32 {
        bdp(bw, self.min_rtt, gain, self.p.initial_window)
    }

    /// tcp_bbr.c `bbr_inflight` (draft BBRInflight): gain x BDP plus the quantization budget.
    fn inflight(&self, bw: f64, gain: f64) -> u32 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// tcp_bbr.c `bbr_target_inflight`: our BDP unless congestion cut the cwnd.
    fn target_inflight(&self) -> u32 {
        self.inflight(self.bw(), 1.0).min(self.cwnd)
    }

    /// tcp_bbr.c `bbr_inflight_with_headroom` (draft BBRInflightWithHeadroom): 15% under `inflight_hi`.
    fn inflight_with_headroom(&self) -> u32 {
        let Some(hi) = self.inflight_hi else {
            return u32::MAX;
        };
        let headroom = ((hi as f64 * self.p.headroom).floor() as u32).max(1);
        hi.saturating_sub(headroom).max(self.p.min_cwnd)
    }

    fn probe_rtt_cwnd(&self) -> u32 {
        // tcp_bbr.c bbr_probe_rtt_cwnd (draft BBRProbeRTTCwnd): half a BDP, at least min_cwnd.
        self.bdp(self.bw(), self.p.probe_rtt_cwnd_gain)
            .max(self.p.min_cwnd)
    }

    fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup
            || (self.mode == Mode::ProbeBw && matches!(self.phase, Phase::Refill | Phase::Up))
    }

    fn app_limited(&self, rs: &Sample) -> bool {
        rs.is_app_limited || (rs.valid && self.probe_rtt_app_limited.covers(rs.prior_delivered))
    }

    /// tcp_bbr.c `bbr_save_cwnd`.
    fn save_cwnd(&mut self) {
        self.prior_cwnd = if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.cwnd
        } else {
            self.prior_cwnd.max(self.cwnd)
        };
    }

    fn reset_full_bw(&mut self) {
        self.full_bw = 0.0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    fn reset_lower_bounds(&mut self) {
        self.bw_lo = None;
        self.inflight_lo = None;
    }

    /// tcp_bbr.c `bbr_reset_congestion_signals`.
    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.bw_latest = 0.0;
        self.inflight_latest = 0;
    }

    /// tcp_bbr.c `bbr_is_inflight_too_high` (draft IsInflightTooHigh): loss rate above 2% (ECN unused).
    fn is_inflight_too_high(&self, rs: &Sample) -> bool {
        rs.lost > 0
            && rs.tx_in_flight > 0
            && rs.lost as f64 > (rs.tx_in_flight as f64 * self.p.loss_thresh).floor()
    }

    /// tcp_bbr.c `bbr_inflight_hi_from_lost_skb`: the flight at which the loss rate crossed the threshold.
    fn inflight_hi_from_lost(&self, rs: &Sample) -> u32 {
        let inflight_prev = rs.tx_in_flight.saturating_sub(1) as f64;
        let lost_prev = rs.lost.saturating_sub(1) as f64;
        let budget = (inflight_prev * self.p.loss_thresh).ceil();
        let prefix = if lost_prev >= budget {
            0.0
        } else {
            ((budget - lost_prev) / (1.0 - self.p.loss_thresh)).floor()
        };
        (inflight_prev + prefix).min(u32::MAX as f64) as u32
    }

    /// tcp_bbr.c `bbr_handle_inflight_too_high` (draft BBRHandleInflightTooHigh).
    fn handle_inflight_too_high(&mut self, now: Time, rs: &Sample) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !rs.is_app_limited {
            let cut = (self.target_inflight() as f64 * self.p.beta).floor() as u32;
            self.inflight_hi = Some(rs.tx_in_flight.max(cut));
        }
        if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
            self.start_probe_down(now);
        }
    }

    /// tcp_bbr.c `bbr_pick_probe_wait` (draft BBRPickProbeWait): random rounds and wall-clock wait.
    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = self.rng.gen_range(0..self.p.probe_rand_rounds);
        let extra = self.rng.gen_range(0.0..1.0) * self.p.probe_wait_rand_s;
        self.probe_wait = Dur::from_secs_f64(self.p.probe_wait_base_s + extra);
    }

    /// tcp_bbr.c `bbr_start_bw_probe_down` (draft BBRStartProbeBW_DOWN).
    fn start_probe_down(&mut self, now: Time) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = u32::MAX;
        self.pick_probe_wait();
        self.cycle_stamp = now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = self.delivered;
        self.phase = Phase::Down;
    }

    /// tcp_bbr.c `bbr_start_bw_probe_cruise` (draft BBRStartProbeBW_CRUISE).
    fn start_probe_cruise(&mut self) {
        if let (Some(lo), Some(hi)) = (self.inflight_lo, self.inflight_hi) {
            self.inflight_lo = Some(lo.min(hi));
        }
        self.phase = Phase::Cruise;
    }

    /// tcp_bbr.c `bbr_start_bw_probe_refill` (draft BBRStartProbeBW_REFILL).
    fn start_probe_refill(&mut self, up_rounds: u32) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = up_rounds;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = self.delivered;
        self.phase = Phase::Refill;
        self.bw_probes += 1;
    }

    /// tcp_bbr.c `bbr_start_bw_probe_up` (draft BBRStartProbeBW_UP).
    fn start_probe_up(&mut self, now: Time, rs: &Sample) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = self.delivered;
        self.cycle_stamp = now;
        self.reset_full_bw();
        self.full_bw = rs.bw;
        self.phase = Phase::Up;
        self.raise_inflight_hi_slope();
    }

    /// tcp_bbr.c `bbr_raise_inflight_hi_slope`: double the probe's growth each round of UP.
    fn raise_inflight_hi_slope(&mut self) {
        let growth = 1u32 << self.bw_probe_up_rounds.min(30);
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt = (self.cwnd / growth).max(1);
    }

    /// tcp_bbr.c `bbr_probe_inflight_hi_upward` (draft BBRProbeInflightLongtermUpward).
    fn probe_inflight_hi_upward(&mut self, rs: &Sample) {
        let Some(hi) = self.inflight_hi else {
            return;
        };
        if !self.is_cwnd_limited() || self.cwnd < hi {
            return;
        }
        self.bw_probe_up_acks = self.bw_probe_up_acks.saturating_add(rs.acked);
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = Some(hi.saturating_add(delta));
        }
        if self.round_start {
            self.raise_inflight_hi_slope();
        }
    }

    /// tcp_bbr.c `bbr_adapt_upper_bounds` (draft BBRAdaptLongTermModel). True if it changed the phase.
    fn adapt_upper_bounds(&mut self, now: Time, rs: &Sample) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // The probe's samples are over: the best time to age the max filter (tcp_bbr.c).
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == Mode::ProbeBw && !rs.is_app_limited && self.bw_hi[1] > 0.0 {
                self.bw_hi = [self.bw_hi[1], 0.0];
            }
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_probe_refill(0);
                return true;
            }
        }
        if self.is_inflight_too_high(rs) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(now, rs);
            }
            return false;
        }
        let Some(hi) = self.inflight_hi else {
            return false;
        };
        // Resilience to random loss: a flight that proved safe raises the bound.
        if rs.tx_in_flight > hi {
            self.inflight_hi = Some(rs.tx_in_flight);
        }
        if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
            self.probe_inflight_hi_upward(rs);
        }
        false
    }

    /// tcp_bbr.c `bbr_check_time_to_probe_bw` (draft BBRCheckTimeToProbeBW) without the ECN re-probe.
    fn check_time_to_probe_bw(&mut self, now: Time) -> bool {
        let reno_rounds = self.p.probe_max_rounds.min(self.target_inflight());
        if now > self.cycle_stamp + self.probe_wait || self.rounds_since_probe >= reno_rounds {
            self.start_probe_refill(0);
            return true;
        }
        false
    }

    /// tcp_bbr.c `bbr_update_cycle_phase` (draft BBRUpdateProbeBWCyclePhase).
    fn update_cycle_phase(&mut self, now: Time, rs: &Sample) {
        if !self.full_bw_reached || self.adapt_upper_bounds(now, rs) || self.mode != Mode::ProbeBw {
            return;
        }
        let inflight = rs.prior_in_flight;
        let bw = self.max_bw();
        match self.phase {
            Phase::Cruise => {
                self.check_time_to_probe_bw(now);
            }
            Phase::Refill => {
                // One round of REFILL: the samples now reflect it.
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_probe_up(now, rs);
                }
            }
            Phase::Up => {
                let mut done = false;
                if self.prev_probe_too_high && self.inflight_hi.is_some_and(|hi| inflight >= hi) {
                    self.stopped_risky_probe = true;
                    done = true;
                } else if self.is_cwnd_limited()
                    && self.inflight_hi.is_some_and(|hi| self.cwnd >= hi)
                {
                    // inflight_hi limits the growth: the plateau test starts over.
                    self.reset_full_bw();
                    self.full_bw = rs.bw;
                } else if self.full_bw_now {
                    done = true;
                }
                if done {
                    self.prev_probe_too_high = false;
                    self.start_probe_down(now);
                }
            }
            Phase::Down => {
                if self.check_time_to_probe_bw(now) {
                    return;
                }
                // tcp_bbr.c bbr_check_time_to_cruise: under the headroom and at most one BDP.
                if inflight <= self.inflight_with_headroom() && inflight <= self.inflight(bw, 1.0) {
                    self.start_probe_cruise();
                }
            }
        }
    }

    /// tcp_bbr.c `bbr_adapt_lower_bounds` (draft BBRAdaptLowerBoundsFromCongestion), loss part.
    fn adapt_lower_bounds(&mut self) {
        if self.is_probing_bandwidth() || !self.loss_in_round {
            return;
        }
        // bbr_init_lower_bounds, then bbr_loss_lower_bounds: cut by beta, not below the latest round.
        let bw_lo = self.bw_lo.unwrap_or(self.max_bw());
        let inflight_lo = self.inflight_lo.unwrap_or(self.cwnd);
        self.bw_lo = Some(self.bw_latest.max(bw_lo * self.p.beta));
        let cut = (inflight_lo as f64 * self.p.beta).floor() as u64;
        self.inflight_lo = Some(self.inflight_latest.max(cut).min(u32::MAX as u64) as u32);
    }

    /// tcp_bbr.c `bbr_update_congestion_signals` (draft BBRUpdateCongestionSignals).
    fn update_congestion_signals(&mut self, rs: &Sample) {
        if !rs.valid || rs.acked == 0 {
            return;
        }
        // App-limited samples only count when they raise the estimate (draft BBRUpdateMaxBw).
        if !self.app_limited(rs) || rs.bw >= self.max_bw() {
            self.bw_hi[1] = self.bw_hi[1].max(rs.bw);
        }
        self.loss_in_round |= rs.losses > 0;
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds();
        self.loss_in_round = false;
    }

    /// tcp_bbr.c `bbr_check_loss_too_high_in_startup` (draft BBRCheckStartupHighLoss).
    fn check_loss_too_high_in_startup(&mut self, state: CaState, rs: &Sample) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < 0xf {
            self.loss_events_in_round += 1;
        }
        if self.loss_round_start
            && state == CaState::Recovery
            && self.loss_events_in_round >= self.p.full_loss_cnt
            && self.is_inflight_too_high(rs)
        {
            // tcp_bbr.c bbr_handle_queue_too_high_in_startup.
            self.full_bw_reached = true;
            let bdp = self.inflight(self.max_bw(), 1.0);
            self.inflight_hi = Some(bdp.max(self.inflight_latest.min(u32::MAX as u64) as u32));
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// tcp_bbr.c `bbr_check_full_bw_reached` (v3: on every non-app-limited sample, counted per round).
    fn check_full_bw_reached(&mut self, rs: &Sample) {
        if self.full_bw_now || self.app_limited(rs) {
            return;
        }
        if rs.bw >= self.full_bw * self.p.full_bw_thresh {
            self.reset_full_bw();
            self.full_bw = rs.bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_now = self.full_bw_cnt >= self.p.full_bw_rounds;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// tcp_bbr.c `bbr_check_drain` (draft BBRCheckDrain).
    fn check_drain(&mut self, now: Time, in_flight: u32) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain && in_flight <= self.inflight(self.max_bw(), 1.0) {
            self.mode = Mode::ProbeBw;
            self.start_probe_down(now);
        }
    }

    /// tcp_bbr.c `bbr_update_min_rtt` (draft BBRUpdateMinRTT, BBRCheckProbeRTT).
    fn update_min_rtt(&mut self, now: Time, rtt: Dur, in_flight: u32, delivered: u64) {
        let interval = Dur::from_secs_f64(self.p.probe_rtt_interval_s);
        let probe_rtt_expired = now > self.probe_rtt_min_stamp + interval;
        if self.probe_rtt_min.is_none_or(|m| rtt < m) || probe_rtt_expired {
            self.probe_rtt_min = Some(rtt);
            self.probe_rtt_min_stamp = now;
        }
        let window = Dur::from_secs_f64(self.p.min_rtt_window_s);
        let min_rtt_expired = now > self.min_rtt_stamp + window;
        if self.probe_rtt_min <= self.min_rtt || self.min_rtt.is_none() || min_rtt_expired {
            self.min_rtt = self.probe_rtt_min;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
        // tcp_bbr.c: no PROBE_RTT while restarting from idle (the idle time already drained the queue).
        if probe_rtt_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = self.delivered;
            self.probe_rtt_app_limited.clear();
            self.probe_rtt_entries += 1;
        }
        if self.mode == Mode::ProbeRtt {
            self.update_probe_rtt(now, in_flight);
        }
        // tcp_bbr.c: the restart from idle ends with the first ACK of new data.
        if delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// tcp_bbr.c `bbr_update_min_rtt`, PROBE_RTT part (draft BBRHandleProbeRTT).
    fn update_probe_rtt(&mut self, now: Time, in_flight: u32) {
        self.probe_rtt_app_limited.extend(self.delivered, in_flight);
        match self.probe_rtt_done_stamp {
            None if in_flight <= self.probe_rtt_cwnd() => {
                self.probe_rtt_done_stamp = Some(now + Dur::from_ms_f64(self.p.probe_rtt_ms));
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = self.delivered;
            }
            Some(_) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(now);
                }
            }
            None => {}
        }
    }

    /// tcp_bbr.c `bbr_check_probe_rtt_done` (draft BBRCheckProbeRTTDone): 200 ms at the low flight
    /// are over; the next PROBE_RTT is 5 s from now.
    fn check_probe_rtt_done(&mut self, now: Time) {
        if self.probe_rtt_done_stamp.is_none_or(|done| now <= done) {
            return;
        }
        self.probe_rtt_min_stamp = now;
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        self.exit_probe_rtt(now);
    }

    /// tcp_bbr.c `bbr_exit_probe_rtt` (draft BBRExitProbeRTT).
    fn exit_probe_rtt(&mut self, now: Time) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw;
            self.start_probe_down(now);
            self.start_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// tcp_bbr.c `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (self.p.startup_pacing_gain, self.p.startup_cwnd_gain),
            Mode::Drain => (self.p.drain_pacing_gain, self.p.startup_cwnd_gain),
            Mode::ProbeBw => match self.phase {
                Phase::Up => (
                    self.p.probe_up_pacing_gain,
                    self.p.cwnd_gain + self.p.probe_up_cwnd_gain_add,
                ),
                Phase::Down => (self.p.probe_down_pacing_gain, self.p.cwnd_gain),
                Phase::Cruise | Phase::Refill => (1.0, self.p.cwnd_gain),
            },
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// tcp_bbr.c `bbr_set_pacing_rate` (draft BBRSetPacingRateWithGain).
    fn set_pacing_rate(&mut self, bw: f64, gain: f64, rtt: Dur) {
        let margin = 1.0 - self.p.pacing_margin_percent / 100.0;
        if !self.has_seen_rtt && rtt > Dur::ZERO {
            // tcp_bbr.c bbr_init_pacing_rate_from_rtt.
            self.has_seen_rtt = true;
            self.pacing_rate =
                self.p.startup_pacing_gain * self.cwnd as f64 / rtt.as_secs_f64() * margin;
        }
        let rate = gain * bw * margin;
        if rate > 0.0 && (self.full_bw_reached || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        }
    }

    /// tcp_bbr.c `bbr_set_cwnd` (v3, draft BBRSetCwnd).
    fn set_cwnd(&mut self, acked: u32, bw: f64) {
        if acked > 0 {
            // tcp_bbr.c bbr_ack_aggregation_cwnd (draft BBRUpdateMaxInflight): room for ACK bursts.
            let aggr = self.ack_aggregation.cwnd(
                self.p.extra_acked_gain,
                self.bw(),
                self.p.extra_acked_max_ms / 1e3,
            );
            let target =
                self.quantization_budget(self.bdp(bw, self.cwnd_gain).saturating_add(aggr));
            let mut cwnd = self.cwnd;
            if self.full_bw_reached {
                cwnd = cwnd.saturating_add(acked).min(target);
            } else if cwnd < target || cwnd < 2 * self.p.initial_window {
                cwnd = cwnd.saturating_add(acked);
            }
            self.cwnd = cwnd.max(self.p.min_cwnd);
        }
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(self.probe_rtt_cwnd());
        }
    }

    /// tcp_bbr.c `bbr_bound_cwnd_for_inflight_model` (draft BBRBoundCwndForModel).
    fn bound_cwnd_for_model(&mut self) {
        let mut cap = u32::MAX;
        if self.mode == Mode::ProbeBw && self.phase != Phase::Cruise {
            cap = self.inflight_hi.unwrap_or(u32::MAX);
        } else if self.mode == Mode::ProbeRtt || self.mode == Mode::ProbeBw {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_lo.unwrap_or(u32::MAX));
        cap = cap.max(self.p.min_cwnd);
        self.cwnd = self.cwnd.min(cap);
    }

    /// tcp_bbr.c `bbr_cwnd_event(CA_EVENT_TX_START)` (draft BBRHandleRestartFromIdle): restarting
    /// while app-limited opens a new aggregation epoch and paces at 1.0 x bw, which is all the
    /// application needs; a PROBE_RTT whose 200 ms are over ends now.
    fn on_restart_from_idle(&mut self, now: Time) {
        self.idle_restart = true;
        self.ack_aggregation.restart_epoch(now);
        match self.mode {
            Mode::ProbeBw => self.set_pacing_rate(self.bw(), 1.0, Dur::ZERO),
            Mode::ProbeRtt => self.check_probe_rtt_done(now),
            _ => {}
        }
    }

    fn sample(&self, ev: &AckEvent) -> Sample {
        let (tx_in_flight, tx_lost) = untag(ev.tag);
        let mut rs = Sample {
            tx_in_flight,
            lost: self.lost_total.wrapping_sub(tx_lost),
            losses: self.losses,
            acked: ev.newly_acked,
            prior_in_flight: ev.in_flight + ev.newly_acked + self.losses,
            ..Default::default()
        };
        if let Some(r) = &ev.rate {
            rs.valid = r.interval > Dur::ZERO;
            rs.bw = if rs.valid { r.rate_pps() } else { 0.0 };
            rs.delivered = r.delivered;
            rs.prior_delivered = r.prior_delivered;
            rs.is_app_limited = r.is_app_limited;
        }
        rs
    }
}

impl Controller for Bbr3 {
    fn on_send(&mut self, now: Time, ev: &SendEvent) -> u64 {
        self.bytes = ev.bytes.max(1);
        if !ev.retransmission {
            self.highest_sent = self.highest_sent.max(ev.seq);
        }
        // Linux tcp_cwnd_validate: the window was the limit at this send.
        self.cwnd_limited_now |= ev.in_flight >= self.cwnd;
        // tcp_bbr.c bbr_cwnd_event(CA_EVENT_TX_START): the first send with nothing in flight.
        if ev.in_flight == 1 && ev.app_limited {
            self.on_restart_from_idle(now);
        }
        tag_of(ev.in_flight, self.lost_total)
    }

    /// tcp_bbr.c `bbr_main`.
    fn on_ack(&mut self, now: Time, ev: &AckEvent) {
        self.bytes = ev.bytes.max(1);
        self.delivered += ev.newly_acked as u64;
        let rs = self.sample(ev);
        let state = self.loss.ca_state(ev);
        // bbr_update_round_start (draft BBRUpdateRound).
        self.round_start = false;
        if rs.valid && rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = self.delivered;
            self.round_start = true;
            self.rounds += 1;
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xff);
            self.cwnd_limited_prev = self.cwnd_limited_now;
            self.cwnd_limited_now = false;
        }
        // bbr_update_latest_delivery_signals (draft BBRUpdateLatestDeliverySignals).
        self.loss_round_start = false;
        if rs.valid && rs.acked > 0 {
            self.bw_latest = self.bw_latest.max(rs.bw);
            self.inflight_latest = self.inflight_latest.max(rs.delivered);
            if rs.prior_delivered >= self.loss_round_delivered {
                self.loss_round_delivered = self.delivered;
                self.loss_round_start = true;
            }
        }
        // bbr_update_model.
        self.update_congestion_signals(&rs);
        if rs.valid && self.p.extra_acked_gain > 0.0 {
            // tcp_bbr.c bbr_update_ack_aggregation (v3: one-round slots until the pipe is full).
            let win = if self.full_bw_reached {
                self.p.extra_acked_win_rounds
            } else {
                1
            };
            let (bw, cwnd) = (self.bw(), self.cwnd);
            self.ack_aggregation
                .update(now, rs.acked, self.round_start, win, bw, cwnd);
        }
        self.check_loss_too_high_in_startup(state, &rs);
        self.check_full_bw_reached(&rs);
        self.check_drain(now, ev.in_flight);
        self.update_cycle_phase(now, &rs);
        // tcp_bbr.c bbr_update_min_rtt reads rs->rtt_us, the newest (S)ACKed packet's RTT.
        self.update_min_rtt(now, ev.ca_rtt, ev.in_flight, rs.delivered);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain, ev.rtt);
        // bbr_set_state: leaving the Loss state restores the saved cwnd (bbr_exit_loss_recovery).
        if self.prev_ca_state == CaState::Loss && state != CaState::Loss {
            self.cwnd = self.cwnd.max(self.prior_cwnd);
        }
        self.set_cwnd(rs.acked, bw);
        self.bound_cwnd_for_model();
        // bbr_advance_latest_delivery_signals (draft BBRAdvanceLatestDeliverySignals).
        if self.loss_round_start {
            self.bw_latest = rs.bw;
            self.inflight_latest = rs.delivered;
        }
        self.prev_ca_state = state;
        self.losses = 0;
    }

    /// tcp_bbr.c `bbr_skb_marked_lost` (draft BBRHandleLostPacket).
    fn on_loss(&mut self, now: Time, ev: &LossEvent) {
        self.lost_total = self.lost_total.wrapping_add(1);
        self.losses = self.losses.saturating_add(1);
        // bbr_note_loss: the loss round covers the flight outstanding now.
        if !self.loss_in_round {
            self.loss_round_delivered = self.delivered;
        }
        self.loss_in_round = true;
        if !self.bw_probe_samples {
            return;
        }
        let (tx_in_flight, tx_lost) = untag(ev.tag);
        let mut rs = Sample {
            tx_in_flight,
            lost: self.lost_total.wrapping_sub(tx_lost),
            ..Default::default()
        };
        if self.is_inflight_too_high(&rs) {
            rs.tx_in_flight = self.inflight_hi_from_lost(&rs);
            self.handle_inflight_too_high(now, &rs);
        }
    }

    /// tcp_bbr.c `bbr_ssthresh`: save the cwnd and the loss-adapted state for an undo.
    fn on_congestion_event(&mut self, _now: Time, _ev: &CongestionEvent) {
        self.save_cwnd();
        self.undo = (self.bw_lo, self.inflight_lo, self.inflight_hi);
    }

    fn on_rto(&mut self, _now: Time) {
        // bbr_ssthresh, then tcp_enter_loss (cwnd = flight + 1 = 1), then bbr_set_state(TCP_CA_Loss).
        self.save_cwnd();
        self.undo = (self.bw_lo, self.inflight_lo, self.inflight_hi);
        self.prev_ca_state = CaState::Loss;
        self.loss.enter(self.highest_sent);
        self.reset_full_bw();
        if !self.is_probing_bandwidth() && self.inflight_lo.is_none() {
            // bbr_adapt_lower_bounds needs the cwnd from before the RTO.
            self.inflight_lo = Some(self.cwnd.max(self.prior_cwnd));
        }
        self.losses = 0;
        self.cwnd = 1;
    }

    fn on_rto_repeated(&mut self, _now: Time) {
        // tcp_enter_loss again: the cwnd stays at one packet; nothing is saved again.
        self.prev_ca_state = CaState::Loss;
        self.loss.enter(self.highest_sent);
        self.losses = 0;
        self.cwnd = 1;
    }

    /// tcp_bbr.c `bbr_undo_cwnd`: the loss episode was spurious; restore the model and the cwnd.
    fn on_undo(&mut self, _now: Time) {
        self.reset_full_bw();
        self.loss_in_round = false;
        let (bw_lo, inflight_lo, inflight_hi) = self.undo;
        // Linux keeps ~0U for "unset": the max of an unset and a set bound is unset.
        self.bw_lo = self.bw_lo.zip(bw_lo).map(|(a, b)| a.max(b));
        self.inflight_lo = self.inflight_lo.zip(inflight_lo).map(|(a, b)| a.max(b));
        self.inflight_hi = self.inflight_hi.zip(inflight_hi).map(|(a, b)| a.max(b));
        self.loss.clear();
        self.prev_ca_state = CaState::Open;
        self.cwnd = self.cwnd.max(self.prior_cwnd).max(1);
    }

    fn cwnd(&self) -> u32 {
        self.cwnd.max(1)
    }

    fn pacing_rate(&self) -> Option<Bandwidth> {
        let bps = self.pacing_rate * self.bytes as f64 * 8.0;
        Some(Bandwidth::from_bps(bps.clamp(1.0, 1e15) as u64))
    }

    /// Yes: the bandwidth and inflight models read each sample (draft-ietf-ccwg-bbr §4.5.2).
    fn wants_rate_sample(&self) -> bool {
        true
    }
    fn state_name(&self) -> &'static str {
        match (self.mode, self.phase) {
            (Mode::Startup, _) => "startup",
            (Mode::Drain, _) => "drain",
            (Mode::ProbeRtt, _) => "probe_rtt",
            (Mode::ProbeBw, Phase::Down) => "probe_bw_down",
            (Mode::ProbeBw, Phase::Cruise) => "probe_bw_cruise",
            (Mode::ProbeBw, Phase::Refill) => "probe_bw_refill",
            (Mode::ProbeBw, Phase::Up) => "probe_bw_up",
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("probe_rtt_entries", self.probe_rtt_entries),
            ("bw_probes", self.bw_probes),
            ("rounds", self.rounds),
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

    fn bbr3(seed: u64) -> Script<Bbr3> {
        Script::new(Bbr3::new(Params {
            seed,
            ..Default::default()
        }))
    }

    /// One round over a 500 packets/s path with a 40 ms RTT: every full round delivers 20 packets.
    fn round(s: &mut Script<Bbr3>) {
        s.round(20, RTT);
    }

    fn pps(s: &Script<Bbr3>) -> f64 {
        s.cc.pacing_rate().expect("paced").bps() as f64 / (1500.0 * 8.0)
    }

    #[test]
    fn min_rtt_is_the_rtt_of_the_newest_packet_a_delayed_ack_covers() {
        // Two packets 1 ms apart, one delayed ACK 41 ms after the first: it echoes the first (41 ms),
        // but tcp_bbr.c's sample is rs->rtt_us, the newest packet's 40 ms (draft: rs.rtt).
        let mut s = bbr3(1);
        s.send(1);
        s.advance(Dur::from_ms(1));
        s.send(1);
        s.ack_oldest_n(2, Dur::from_ms(41));
        assert_eq!(s.cc.min_rtt(), Some(Dur::from_ms(40)));
    }

    #[test]
    fn startup_ends_after_three_rounds_without_25_percent_growth_and_cruises_at_one_bdp() {
        let mut s = bbr3(1);
        // Each round's samples ramp from 25 to 500 packets/s (all sent at once, ACKed 40 ms later).
        // full_bw ends round 2 at 475 (the last sample 25% above the one before); rounds 3, 4, 5 start
        // without a sample 25% above it: the pipe is full at the first ACK of round 5.
        for _ in 0..4 {
            round(&mut s);
            assert_eq!(s.cc.state_name(), "startup");
        }
        round(&mut s);
        assert!(s.cc.full_bw_reached());
        assert_close(s.cc.max_bw(), 500.0);
        assert_eq!(s.cc.min_rtt(), Some(RTT));
        // DRAIN, ProbeBW_DOWN and CRUISE on that ACK: the flight (19 + the 1 ACKed) is one BDP (20).
        assert_eq!(s.cc.state_name(), "probe_bw_cruise");
        // A scripted round's 20 ACKs arrive at one instant: 20 beyond what 0 s at 500 packets/s
        // delivers, so cwnd = 2 BDP + 20 (bbr_ack_aggregation_cwnd, under its 100 ms = 50 cap; 3
        // send quanta of 2 packets do not raise it); pacing at 1.0 x bw less 1%.
        assert_eq!(s.cc.extra_acked(), 20);
        assert_eq!(s.cc.cwnd(), 60);
        assert!((pps(&s) - 495.0).abs() < 1e-3, "{}", pps(&s));
        assert_eq!(s.cc.inflight_hi(), None);
        assert_eq!(s.cc.bw_lo(), None);
    }

    #[test]
    fn the_first_probe_comes_after_min_63_bdp_rounds_less_the_random_head_start() {
        for seed in [1, 2, 3, 4] {
            let mut s = bbr3(seed);
            for _ in 0..5 {
                round(&mut s);
            }
            let head = s.cc.rounds_since_probe;
            assert!(head < 2, "{head}");
            // The Reno-coexistence bound min(63, target inflight 20) comes before the 2-3 s clock.
            let mut n = 5;
            while s.cc.state_name() != "probe_bw_refill" {
                assert_ne!(s.cc.state_name(), "probe_bw_up");
                round(&mut s);
                n += 1;
            }
            assert_eq!(n, 5 + 20 - head, "seed {seed}");
            // One round of REFILL at gain 1, then UP at 1.25 with cwnd gain 2.25 (+2 packets).
            round(&mut s);
            assert_eq!(s.cc.state_name(), "probe_bw_up");
            assert!((pps(&s) - 1.25 * 495.0).abs() < 1e-3, "{}", pps(&s));
            assert_eq!(s.cc.counters()[1], ("bw_probes", 1));
        }
    }

    #[test]
    fn the_probe_wait_is_2_to_3_s_and_0_or_1_rounds_from_the_seed() {
        let draws = |seed: u64| -> Vec<(Dur, u32)> {
            let mut b = Bbr3::new(Params {
                seed,
                ..Default::default()
            });
            (0..50)
                .map(|_| {
                    b.start_probe_down(Time::ZERO);
                    (b.probe_wait(), b.rounds_since_probe)
                })
                .collect()
        };
        assert_eq!(draws(7), draws(7));
        assert_ne!(draws(7), draws(8));
        let d = draws(7);
        assert!(d
            .iter()
            .all(|&(w, _)| w >= Dur::from_ms(2000) && w < Dur::from_ms(3000)));
        let rounds: std::collections::BTreeSet<u32> = d.iter().map(|&(_, r)| r).collect();
        assert_eq!(rounds.into_iter().collect::<Vec<_>>(), [0, 1]);
    }

    #[test]
    fn probe_rtt_comes_5_s_after_the_last_minimum_at_half_a_bdp_for_200_ms_and_a_round() {
        let mut s = bbr3(1);
        let mut entries = Vec::new();
        let mut exits = Vec::new();
        let mut was = false;
        while entries.len() < 2 {
            round(&mut s);
            let now = s.cc.mode() == Mode::ProbeRtt;
            if now && !was {
                entries.push(s.now);
                // cwnd = max(4, 0.5 x BDP of 20).
                assert_eq!(s.cc.cwnd(), 10);
            }
            if !now && was {
                exits.push(s.now);
                assert_eq!(s.cc.state_name(), "probe_bw_cruise");
            }
            was = now;
        }
        // The first ACK (40 ms) sets the minimum; every later RTT equals it, so it expires after
        // 5.04 s: the first ACK after that is at 5.08 s. The flight is down to 10 in that round (done at
        // 5.28 s); the next round completes the required round trip; the first ACK after 5.28 s is at
        // 5.32 s, which also restarts the 5 s clock: the next visit is at the first ACK after 10.32 s.
        assert_eq!(entries, [Time::from_ms(5_080), Time::from_ms(10_360)]);
        assert_eq!(exits, [Time::from_ms(5_320)]);
        assert_eq!(s.cc.counters()[0], ("probe_rtt_entries", 2));
    }

    #[test]
    fn a_loss_round_while_cruising_cuts_inflight_lo_by_beta_but_not_below_the_latest_round() {
        let mut s = bbr3(1);
        for _ in 0..5 {
            round(&mut s);
        }
        assert_eq!(s.cc.state_name(), "probe_bw_cruise");
        s.send(20);
        s.congestion(LossCause::Reordering);
        // The next ACK starts a loss round: bw_lo = max(latest round's 500, 0.7 x 500) = 500 and
        // inflight_lo = max(latest round's 20 delivered, floor(0.7 x cwnd 60) = 42) = 42 (the cwnd is
        // 2 BDP + the 20-packet ACK burst of each scripted round).
        s.ack_oldest(RTT);
        assert_eq!(s.cc.inflight_lo(), Some(42));
        assert_close(s.cc.bw_lo().expect("set"), 500.0);
        assert_eq!(s.cc.cwnd(), 42);
        // Another loss-free round does not restore it; the next REFILL does (bbr_reset_lower_bounds).
        s.ack_all(RTT);
        s.recovery_exit();
        round(&mut s);
        assert_eq!(s.cc.cwnd(), 42);
        while s.cc.state_name() != "probe_bw_refill" {
            round(&mut s);
        }
        assert_eq!(s.cc.inflight_lo(), None);
        assert_eq!(s.cc.bw_lo(), None);
    }

    #[test]
    fn too_much_loss_while_probing_sets_inflight_hi_where_the_loss_rate_crossed_2_percent() {
        let mut b = Bbr3::new(Params::default());
        // A packet sent with 100 in flight and 0 lost before it; 3 losses since, this one the third:
        // 3 > floor(2% of 100) is too high; the 2 earlier losses already met ceil(2% of 99) = 2, so
        // inflight_hi = 99 (tcp_bbr.c bbr_inflight_hi_from_lost_skb).
        let rs = Sample {
            tx_in_flight: 100,
            lost: 3,
            ..Default::default()
        };
        assert!(b.is_inflight_too_high(&rs));
        assert_eq!(b.inflight_hi_from_lost(&rs), 99);
        let ok = Sample {
            tx_in_flight: 100,
            lost: 2,
            ..Default::default()
        };
        assert!(!b.is_inflight_too_high(&ok));
        // Through on_loss while probing: the tag carries (in flight, lost count) at send.
        b.bw_probe_samples = true;
        b.mode = Mode::ProbeBw;
        b.phase = Phase::Up;
        b.lost_total = 2;
        let ev = LossEvent {
            seq: 0,
            bytes: 1500,
            send_time: Time::ZERO,
            in_flight: 0,
            cause: LossCause::Reordering,
            tag: tag_of(100, 0),
        };
        b.on_loss(Time::from_ms(100), &ev);
        // inflight_hi = max(99, floor(0.7 x target inflight)); the probe stops: DOWN.
        assert_eq!(b.inflight_hi(), Some(99));
        assert_eq!(b.phase(), Phase::Down);
        assert!(!b.bw_probe_samples);
    }

    #[test]
    fn an_rto_drops_the_window_to_one_packet_and_an_undo_restores_it() {
        let mut s = bbr3(1);
        for _ in 0..5 {
            round(&mut s);
        }
        s.send(20);
        s.rto();
        assert_eq!(s.cc.cwnd(), 1);
        // Cruising, with no inflight_lo yet: it is set from the cwnd before the RTO (2 BDP + the
        // 20-packet ACK burst of each scripted round).
        assert_eq!(s.cc.inflight_lo(), Some(60));
        s.cc.on_undo(s.now);
        assert_eq!(s.cc.cwnd(), 60);
    }

    /// A round whose `n` ACKs come 2 ms apart, the spacing of a 500 packets/s bottleneck.
    fn spaced_round(s: &mut Script<Bbr3>, n: usize) {
        let room = (s.cc.cwnd() as usize).saturating_sub(s.in_flight.len());
        s.send(n.min(room));
        for i in 0..s.in_flight.len() {
            s.ack_oldest(RTT + Dur::from_ms(2 * i as u64));
        }
    }

    #[test]
    fn an_ack_burst_adds_its_excess_to_the_cwnd_until_two_windows_of_rounds_forget_it() {
        let mut off = Script::new(Bbr3::new(Params {
            seed: 1,
            extra_acked_gain: 0.0,
            ..Default::default()
        }));
        let mut s = bbr3(1);
        for _ in 0..5 {
            round(&mut s);
            round(&mut off);
        }
        // Same path model; only the 20-packet burst of each round separates the windows.
        assert_eq!(s.cc.state_name(), "probe_bw_cruise");
        assert_eq!(off.cc.state_name(), "probe_bw_cruise");
        assert_eq!((s.cc.extra_acked(), s.cc.cwnd()), (20, 60));
        assert_eq!((off.cc.extra_acked(), off.cc.cwnd()), (0, 40));
        // ACKs at the bottleneck's pace: each is 1 beyond the floor of what 2 ms delivered. The burst
        // stays in the older slot for 5-10 rounds (tcp_bbr.c bbr_extra_acked_win_rtts 5, two slots).
        let mut kept = 0;
        while s.cc.extra_acked() == 20 {
            spaced_round(&mut s, 20);
            kept += 1;
        }
        assert!((5..=10).contains(&kept), "{kept}");
        assert_eq!(s.cc.extra_acked(), 1);
        assert_eq!(s.cc.cwnd(), 41);
    }

    /// Five rounds to PROBE_BW, everything ACKed, then `idle` of silence with the application dry
    /// (or not) before one packet goes out.
    fn restart(s: &mut Script<Bbr3>, idle: Dur, app_limited: bool) {
        if app_limited {
            s.app_limited();
        }
        s.advance(idle);
        s.send(1);
    }

    #[test]
    fn restarting_from_idle_while_app_limited_paces_at_the_bandwidth_in_probe_up() {
        for app_limited in [true, false] {
            let mut s = bbr3(1);
            while s.cc.state_name() != "probe_bw_up" {
                round(&mut s);
            }
            assert!((pps(&s) - 1.25 * 495.0).abs() < 1e-3, "{}", pps(&s));
            restart(&mut s, Dur::from_ms(500), app_limited);
            let want = if app_limited { 495.0 } else { 1.25 * 495.0 };
            assert!((pps(&s) - want).abs() < 1e-3, "{app_limited}: {}", pps(&s));
            assert_eq!(s.cc.idle_restart, app_limited);
            // The first ACK of new data ends the restart.
            s.ack_all(RTT);
            assert!(!s.cc.idle_restart);
        }
    }

    #[test]
    fn an_app_limited_restart_after_the_probe_rtt_interval_skips_probe_rtt() {
        for app_limited in [true, false] {
            let mut s = bbr3(1);
            for _ in 0..5 {
                round(&mut s);
            }
            // 6 s of silence: the 5 s probe-RTT clock has run out when the next ACK comes.
            restart(&mut s, Dur::from_ms(6000), app_limited);
            s.ack_all(RTT);
            // (In PROBE_BW, the 2-3 s wall-clock probe wait is over too: a bandwidth probe starts.)
            let want = if app_limited {
                Mode::ProbeBw
            } else {
                Mode::ProbeRtt
            };
            assert_eq!(s.cc.mode(), want, "app-limited {app_limited}");
            assert_eq!(s.cc.counters()[0].1, u64::from(!app_limited));
            // That ACK restarted the clock: the next round does not enter PROBE_RTT either.
            round(&mut s);
            assert_eq!(s.cc.counters()[0].1, u64::from(!app_limited));
        }
    }

    #[test]
    fn an_app_limited_restart_ends_a_probe_rtt_whose_200_ms_are_over() {
        for app_limited in [true, false] {
            let mut s = bbr3(1);
            while s.cc.mode() != Mode::ProbeRtt {
                round(&mut s);
            }
            // The flight is down to half a BDP on that round's ACKs: the 200 ms clock runs.
            s.ack_all(RTT);
            assert!(s.cc.probe_rtt_done_stamp.is_some());
            restart(&mut s, Dur::from_ms(300), app_limited);
            let want = if app_limited {
                Mode::ProbeBw
            } else {
                Mode::ProbeRtt
            };
            assert_eq!(s.cc.mode(), want, "app-limited {app_limited}");
        }
    }

    #[test]
    fn bad_params_are_rejected_by_key() {
        let bad = |p: Params, key: &str| {
            assert_eq!(p.validate().unwrap_err().key(), Some(key));
        };
        bad(
            Params {
                beta: 1.0,
                ..Default::default()
            },
            "beta",
        );
        bad(
            Params {
                loss_thresh: 0.0,
                ..Default::default()
            },
            "loss_thresh",
        );
        bad(
            Params {
                probe_rtt_interval_s: 20.0,
                ..Default::default()
            },
            "probe_rtt_interval_s",
        );
        bad(
            Params {
                startup_pacing_gain: f64::NAN,
                ..Default::default()
            },
            "startup_pacing_gain",
        );
        bad(
            Params {
                probe_rand_rounds: 0,
                ..Default::default()
            },
            "probe_rand_rounds",
        );
    }
}
