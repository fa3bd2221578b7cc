//! TCP Cubic (RFC 9438): after a reduction the window follows W_cubic(t) = C (t - K)^3 + W_max, a
//! concave approach to the window of the last congestion event and a convex probe beyond it, never
//! slower than the Reno-friendly estimate W_est.
//!
//! The reliable transport keeps the recovery state (RFC 6582, RFC 6675); this file sets the window in
//! packets, kept as `f64`. Choices:
//! - slow start adds every newly acknowledged packet up to ssthresh (RFC 5681 §3.1) and, with
//!   `hystart = "rfc9406"` (the default, RFC 9438 §4.10), leaves early through HyStart++'s
//!   Conservative Slow Start (RFC 9406, `common::hystart`) when the per-round minimum RTT rises; with
//!   `"linux"` or `"ns3"` (what `stack` picks) through the classic HyStart of Linux's `tcp_cubic.c` or
//!   ns-3.37's `TcpCubic`, which sets ssthresh = cwnd at once;
//! - the reduction is computed from cwnd, ssthresh = max(cwnd beta_cubic, 2), as Linux and Windows do;
//!   RFC 9438 §4.6 writes `flight_size beta_cubic` and asks cwnd-based senders to stop cwnd growing
//!   while application-limited, which ccscope does not do (bulk flows are always window-limited);
//! - no window inflation and no growth while in recovery: cwnd stays at ssthresh until the recovery
//!   point is acknowledged;
//! - t runs from the first ACK in congestion avoidance after a reduction (RFC 9438 §4.2) and includes
//!   idle periods; RTT in W_cubic(t + RTT) is the smoothed RTT (RFC 6298) of the ACKs seen so far;
//! - each ACK moves cwnd by (target - cwnd) / cwnd per newly acknowledged packet (at most the whole
//!   distance to the target);
//! - a spurious congestion event (RFC 9438 §4.9) is not undone.

use ccscope_core::Time;
use serde::{Deserialize, Serialize};

use crate::common::hystart::{
    linux_ack_delay, Classic, ClassicHyStart, Flavour as HyStartFlavour, HyStart,
    Phase as HyStartPhase,
};
use crate::common::reno::check_reno_params;
use crate::common::reno::{Phase, Undo};
use crate::common::RttEstimator;
use crate::params::{invalid, ParamError, ParamSpec, StackDefault};
use crate::{AckEvent, CongestionEvent, Controller};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// C, the aggressiveness of the cubic function in packets/s^3 (RFC 9438 §5.1: 0.4).
    pub c: f64,
    /// beta_cubic, the multiplicative decrease factor (RFC 9438 §4.6: 0.7).
    pub beta_cubic: f64,
    /// Release bandwidth faster when W_max falls (RFC 9438 §4.7: on).
    pub fast_convergence: bool,
    /// Never grow slower than the Reno estimate W_est (RFC 9438 §4.3: on).
    pub reno_friendly: bool,
    /// Initial window in packets (RFC 6928 §2: 10).
    pub initial_window: u32,
    /// Initial slow-start threshold in packets; 4294967295 stands for "arbitrarily high" (RFC 5681 §3.1).
    pub initial_ssthresh: u32,
    /// The slow-start exit: "rfc9406" (HyStart++, RFC 9438 §4.10), "linux" (tcp_cubic.c), "ns3"
    /// (ns-3.37 tcp-cubic.cc) or "off"; `true` is "rfc9406" and `false` "off".
    pub hystart: HyStartFlavour,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            c: 0.4,
            beta_cubic: 0.7,
            fast_convergence: true,
            reno_friendly: true,
            initial_window: 10,
            initial_ssthresh: u32::MAX,
            hystart: HyStartFlavour::Rfc9406,
        }
    }
}

impl crate::params::Params for Params {
    const SPEC: &'static [ParamSpec] = &[
        ParamSpec {
            name: "c",
            unit: "packets/s^3",
            doc: "C, aggressiveness of the cubic function (RFC 9438 §5.1: 0.4)",
        },
        ParamSpec {
            name: "beta_cubic",
            unit: "ratio",
            doc: "multiplicative decrease factor (RFC 9438 §4.6: 0.7)",
        },
        ParamSpec {
            name: "fast_convergence",
            unit: "bool",
            doc: "lower W_max when a loss comes below the previous one (RFC 9438 §4.7: on)",
        },
        ParamSpec {
            name: "reno_friendly",
            unit: "bool",
            doc: "never grow slower than the Reno estimate W_est (RFC 9438 §4.3: on)",
        },
        ParamSpec {
            name: "initial_window",
            unit: "packets",
            doc: "initial window (RFC 6928 §2: 10)",
        },
        ParamSpec {
            name: "initial_ssthresh",
            unit: "packets",
            doc: "initial slow-start threshold (RFC 5681 §3.1: arbitrarily high, 4294967295)",
        },
        ParamSpec {
            name: "hystart",
            unit: "name",
            doc: "slow-start exit: \"rfc9406\" HyStart++ (RFC 9438 §4.10), \"linux\" or \"ns3\" classic HyStart (tcp_cubic.c, ns-3.37), \"off\"; true = \"rfc9406\", false = \"off\"; `stack` picks its own",
        },
    ];
    /// Linux 6.x and ns-3.37 run the classic HyStart, not RFC 9406's HyStart++.
    const STACK: &'static [StackDefault] = &[
        StackDefault {
            stack: "linux",
            param: "hystart",
            value: "linux",
        },
        StackDefault {
            stack: "ns3",
            param: "hystart",
            value: "ns3",
        },
    ];
    fn validate(&self) -> Result<(), ParamError> {
        if !(self.c > 0.0 && self.c.is_finite()) {
            return Err(invalid("c", "must be > 0 and finite"));
        }
        if !(self.beta_cubic > 0.0 && self.beta_cubic < 1.0) {
            return Err(invalid("beta_cubic", "must be in (0, 1)"));
        }
        check_reno_params(self.initial_window, self.initial_ssthresh)
    }
}

/// Which part of RFC 9438 §4 set the window at the latest ACK in congestion avoidance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    /// §4.3: W_cubic(t) < W_est; cwnd follows the Reno estimate.
    RenoFriendly,
    /// §4.4: cwnd < W_max.
    Concave,
    /// §4.5: cwnd >= W_max.
    Convex,
}

/// One congestion-avoidance stage: the curve W_cubic is anchored at its start (RFC 9438 §4.2).
#[derive(Clone, Copy, Debug)]
struct Epoch {
    /// t_epoch: the first ACK in congestion avoidance.
    start: Time,
    /// K in seconds (§4.2 eq. 2).
    k_s: f64,
    /// W_max the curve levels off at, in packets.
    w_max: f64,
    /// W_est, the Reno-friendly estimate in packets (§4.3).
    w_est: f64,
}

impl Epoch {
    /// W_cubic(t) in packets, t in seconds since t_epoch (§4.2 eq. 1).
    fn w_cubic(&self, c: f64, t_s: f64) -> f64 {
        c * (t_s - self.k_s).powi(3) + self.w_max
    }
}

#[derive(Debug)]
pub struct Cubic {
    p: Params,
    cwnd: f64,
    ssthresh: f64,
    /// W_max: the window before the last reduction, in packets; 0 before the first (RFC 9438 §4.6-4.7).
    w_max: f64,
    /// cwnd_prior: the window when ssthresh was last set, for W_est's alpha (RFC 9438 §4.3).
    cwnd_prior: f64,
    epoch: Option<Epoch>,
    /// The next stage is the first after an RTO: K = 0 and W_max = cwnd_epoch (RFC 9438 §4.8).
    after_rto: bool,
    undo: Undo,
    rtt: RttEstimator,
    in_recovery: bool,
    region: Region,
    hystart: HyStart,
    /// The classic HyStart, with `hystart = "linux"` or `"ns3"`.
    classic: Option<ClassicHyStart>,
    /// SND.NXT in packets, where the classic HyStart's round restarts after an RTO.
    next_seq: u64,
}

impl Cubic {
    pub fn new(p: Params) -> Self {
        Cubic {
            cwnd: p.initial_window as f64,
            ssthresh: p.initial_ssthresh as f64,
            w_max: 0.0,
            cwnd_prior: 0.0,
            epoch: None,
            after_rto: false,
            undo: Undo::default(),
            rtt: RttEstimator::default(),
            in_recovery: false,
            region: Region::Concave,
            hystart: HyStart::default(),
            classic: match p.hystart {
                HyStartFlavour::Linux => Some(ClassicHyStart::new(Classic::Linux)),
                HyStartFlavour::Ns3 => Some(ClassicHyStart::new(Classic::Ns3)),
                HyStartFlavour::Rfc9406 | HyStartFlavour::Off => None,
            },
            next_seq: 0,
            p,
        }
    }

    /// alpha_cubic = 3 (1 - beta) / (1 + beta) (RFC 9438 §4.3).
    fn alpha_cubic(&self) -> f64 {
        3.0 * (1.0 - self.p.beta_cubic) / (1.0 + self.p.beta_cubic)
    }

    /// Start a congestion-avoidance stage at `now` with the current window as cwnd_epoch (RFC 9438 §4.2).
    fn start_epoch(&mut self, now: Time) -> Epoch {
        let cwnd_epoch = self.cwnd;
        if self.after_rto || self.w_max <= 0.0 {
            // §4.8: the first stage after an RTO levels off where it starts (K = 0); so does one with no loss yet.
            self.w_max = cwnd_epoch;
            self.after_rto = false;
        }
        // §4.2 eq. 2: K = cbrt((W_max - cwnd_epoch) / C); negative when cwnd_epoch is above W_max.
        let k_s = ((self.w_max - cwnd_epoch) / self.p.c).cbrt();
        Epoch {
            start: now,
            k_s,
            w_max: self.w_max,
            w_est: cwnd_epoch,
        }
    }

    /// Congestion avoidance for `acked` packets (RFC 9438 §4.2-4.5).
    fn congestion_avoidance(&mut self, now: Time, acked: f64) {
        let mut e = match self.epoch {
            Some(e) => e,
            None => self.start_epoch(now),
        };
        let c = self.p.c;
        let t_s = now.since(e.start).as_secs_f64();
        // §4.3: alpha_cubic until W_est reaches cwnd_prior, then Reno's 1.
        let alpha = if e.w_est >= self.cwnd_prior {
            1.0
        } else {
            self.alpha_cubic()
        };
        // §4.3: W_est += alpha * segments_acked / cwnd.
        e.w_est += alpha * acked / self.cwnd;
        if self.p.reno_friendly && e.w_cubic(c, t_s) < e.w_est {
            // §4.3: in the Reno-friendly region cwnd = W_est.
            self.cwnd = e.w_est;
            self.region = Region::RenoFriendly;
        } else {
            let rtt_s = self.rtt.srtt().map_or(0.0, |r| r.as_secs_f64());
            // §4.2: target = W_cubic(t + RTT), kept within [cwnd, 1.5 cwnd].
            let target = e
                .w_cubic(c, t_s + rtt_s)
                .min(1.5 * self.cwnd)
                .max(self.cwnd);
            // §4.4-4.5: cwnd += (target - cwnd) / cwnd for each packet acknowledged.
            self.cwnd += (target - self.cwnd) * (acked / self.cwnd).min(1.0);
            self.region = if self.cwnd < e.w_max {
                Region::Concave
            } else {
                Region::Convex
            };
        }
        self.epoch = Some(e);
    }

    pub fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    /// W_max in packets (0 before the first reduction).
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// K of the current congestion-avoidance stage in seconds, if one has begun.
    pub fn k_s(&self) -> Option<f64> {
        self.epoch.map(|e| e.k_s)
    }

    /// W_est of the current congestion-avoidance stage, if one has begun.
    pub fn w_est(&self) -> Option<f64> {
        self.epoch.map(|e| e.w_est)
    }

    /// W_cubic(t) of the current stage at `now` in packets, if one has begun (RFC 9438 §4.2 eq. 1).
    pub fn w_cubic_at(&self, now: Time) -> Option<f64> {
        self.epoch
            .map(|e| e.w_cubic(self.p.c, now.since(e.start).as_secs_f64()))
    }

    /// The window as kept, in fractional packets.
    pub fn cwnd_f64(&self) -> f64 {
        self.cwnd
    }
}

impl Controller for Cubic {
    fn on_send(&mut self, _now: Time, ev: &crate::SendEvent) -> u64 {
        self.next_seq = self.next_seq.max(ev.seq + 1);
        0
    }

    fn on_ack(&mut self, now: Time, ev: &AckEvent) {
        self.rtt.on_sample(ev.rtt);
        // Linux hands Cubic `ca_rtt_us`, the newest (S)ACKed packet's RTT; ns-3 the echo.
        let ca_rtt = match self.p.hystart {
            HyStartFlavour::Linux => ev.ca_rtt,
            _ => ev.rtt,
        };
        if let Some(h) = self.classic.as_mut() {
            // tcp_cubic.c L463 (tcp-cubic.cc PktsAcked): no delay samples right after a reduction.
            if !self
                .epoch
                .is_some_and(|e| now.since(e.start) < h.discard_after_epoch())
            {
                h.on_rtt(ca_rtt);
            }
        }
        self.in_recovery = ev.in_recovery;
        // RFC 6582 §3.2 step 4, without inflation: the window holds until the recovery point is ACKed.
        // RFC 5681 §3.1: grow only on an ACK of new data (Linux tcp_may_raise_cwnd, FLAG_DATA_ACKED).
        if ev.in_recovery || !ev.snd_una_advanced {
            return;
        }
        let mut acked = ev.newly_acked as f64;
        if self.cwnd < self.ssthresh {
            let mut divisor = 1.0;
            if self.p.hystart == HyStartFlavour::Rfc9406 {
                divisor = self.hystart.on_ack(now, ev.seq, ev.last_sent_seq, ev.rtt);
                if self.hystart.phase() == HyStartPhase::Done {
                    // RFC 9406 §4.2: CSS is over: ssthresh = cwnd, on to congestion avoidance.
                    self.ssthresh = self.cwnd;
                }
            } else if let Some(h) = self.classic.as_mut().filter(|h| !h.found()) {
                let ack_delay = linux_ack_delay(self.cwnd, ev.bytes, self.rtt.srtt());
                // tcp_cubic.c L426/L446: a test fired: ssthresh = cwnd, this ACK already in avoidance.
                if h.on_slow_start_ack(now, ev.seq, ev.last_sent_seq, ca_rtt, self.cwnd, ack_delay)
                {
                    self.ssthresh = self.cwnd;
                }
            }
            // RFC 5681 §3.1 eq. 2 (RFC 9438 §4.10): slow start up to ssthresh, the rest to congestion
            // avoidance; Conservative Slow Start grows by a quarter (RFC 9406 §4.2).
            let grown = (self.cwnd + acked / divisor).min(self.ssthresh);
            acked = (acked - (grown - self.cwnd) * divisor).max(0.0);
            self.cwnd = grown;
        }
        if acked > 0.0 {
            self.congestion_avoidance(now, acked);
        }
    }

    fn on_congestion_event(&mut self, _now: Time, _ev: &CongestionEvent) {
        let beta = self.p.beta_cubic;
        // RFC 9438 §4.7: fast convergence.
        self.w_max = if self.p.fast_convergence && self.cwnd < self.w_max {
            self.cwnd * (1.0 + beta) / 2.0
        } else {
            self.cwnd
        };
        // RFC 9438 §4.6: cwnd_prior, ssthresh = cwnd beta_cubic (at least 2), cwnd = ssthresh.
        self.cwnd_prior = self.cwnd;
        self.ssthresh = (self.cwnd * beta).max(2.0);
        self.cwnd = self.ssthresh;
        self.epoch = None;
        self.after_rto = false;
        self.in_recovery = true;
        self.hystart.reset();
    }

    fn on_recovery_exit(&mut self, _now: Time) {
        self.in_recovery = false;
    }

    fn on_rto(&mut self, now: Time) {
        self.undo.save(self.cwnd, self.ssthresh, self.in_recovery);
        // RFC 9438 §4.8: ssthresh as in §4.6, cwnd = 1 (RFC 5681 §3.1), a fresh stage with K = 0.
        self.cwnd_prior = self.cwnd;
        self.ssthresh = (self.cwnd * self.p.beta_cubic).max(2.0);
        self.cwnd = 1.0;
        self.hystart.reset();
        if let Some(h) = self.classic.as_mut() {
            h.on_rto(now, self.next_seq);
        }
        self.epoch = None;
        self.after_rto = true;
        self.in_recovery = false;
    }

    fn on_rto_repeated(&mut self, now: Time) {
        // RFC 5681 §3.1: ssthresh held constant; cwnd = 1, a fresh stage.
        self.cwnd = 1.0;
        self.hystart.reset();
        if let Some(h) = self.classic.as_mut() {
            // Linux enters TCP_CA_Loss again (tcp_enter_loss), and cubictcp_state resets.
            h.on_rto(now, self.next_seq);
        }
        self.epoch = None;
        self.after_rto = true;
    }

    fn on_undo(&mut self, _now: Time) {
        // Linux: tcp_reno_undo_cwnd for CUBIC; the next ACK starts a new epoch from the old W_max.
        (self.cwnd, self.ssthresh) = self.undo.restore(self.cwnd, self.ssthresh);
        self.epoch = None;
        self.after_rto = false;
    }

    fn cwnd(&self) -> u32 {
        // `as` saturates; the floor keeps one packet going.
        (self.cwnd as u32).max(1)
    }

    fn state_name(&self) -> &'static str {
        match Phase::of(self.cwnd, self.ssthresh, self.in_recovery) {
            Phase::CongestionAvoidance if self.epoch.is_some() => match self.region {
                Region::RenoFriendly => "reno_friendly",
                Region::Concave => "concave",
                Region::Convex => "convex",
            },
            phase => phase.name(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params as _;
    use crate::testing::{assert_close, Script};
    use crate::LossCause;
    use ccscope_core::Dur;

    const RTT: Dur = Dur::from_ms(100);

    fn cubic(p: Params) -> Script<Cubic> {
        Script::new(Cubic::new(p))
    }

    /// A flow at `w` packets that has just lost one: the congestion event, then the rest of the flight
    /// ACKed in recovery and the recovery point reached.
    fn after_loss_at(w: u32, p: Params) -> Script<Cubic> {
        let mut s = cubic(Params {
            initial_window: w,
            ..p
        });
        s.fill_window();
        s.congestion(LossCause::Reordering);
        s.ack_all(RTT);
        s.recovery_exit();
        s
    }

    #[test]
    fn beta_cubic_reduction_is_0_7() {
        let s = after_loss_at(100, Params::default());
        // RFC 9438 §4.6: ssthresh = cwnd = 100 * 0.7; W_max = 100.
        assert_close(s.cc.ssthresh(), 70.0);
        assert_eq!(s.cc.cwnd(), 70);
        assert_eq!(s.cc.w_max(), 100.0);
        // Never below 2 packets: 2 * 0.7 = 1.4 -> 2.
        let s = after_loss_at(2, Params::default());
        assert_eq!((s.cc.ssthresh(), s.cc.cwnd()), (2.0, 2));
    }

    #[test]
    fn acks_in_recovery_leave_the_window_alone() {
        let mut s = cubic(Params {
            initial_window: 100,
            ..Default::default()
        });
        s.fill_window();
        s.congestion(LossCause::Reordering);
        assert_eq!(s.cc.state_name(), "recovery");
        s.lose_oldest(LossCause::Reordering);
        s.ack_all(RTT);
        assert_close(s.cc.cwnd_f64(), 70.0);
        assert!(s.cc.k_s().is_none(), "no congestion-avoidance stage yet");
    }

    #[test]
    fn duplicate_acks_that_only_sack_leave_the_window_alone() {
        // Slow start: RFC 5681 §3.1 grows only on an ACK of new data (Linux tcp_may_raise_cwnd).
        let mut s = cubic(Params::default());
        s.fill_window();
        s.sack_past_hole(RTT);
        s.sack_past_hole(RTT);
        assert_eq!(s.cc.cwnd_f64(), 10.0);
        s.ack_oldest(RTT);
        assert_eq!(s.cc.cwnd_f64(), 11.0);
        // Congestion avoidance: nor do they begin the cubic stage.
        let mut s = after_loss_at(100, Params::default());
        s.fill_window();
        s.sack_past_hole(RTT);
        s.sack_past_hole(RTT);
        assert_eq!(s.cc.cwnd_f64(), 70.0);
        assert!(s.cc.w_cubic_at(s.now).is_none());
        s.ack_oldest(RTT);
        assert!(s.cc.w_cubic_at(s.now).is_some());
    }

    #[test]
    fn k_matches_rfc9438_eq2() {
        let mut s = after_loss_at(100, Params::default());
        // The stage (and its K) begins with the first ACK in congestion avoidance.
        s.fill_window();
        s.ack_oldest(RTT);
        // K = cbrt((W_max - cwnd_epoch) / C) = cbrt(100 * 0.3 / 0.4) = cbrt(75) = 4.2172 s.
        let k = s.cc.k_s().expect("stage begun");
        assert_close(k, 75f64.cbrt());
        assert!((k - 4.217).abs() < 1e-3, "K {k}");
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_below_previous() {
        let mut s = after_loss_at(100, Params::default());
        // A second loss at 70, below W_max = 100: W_max = 70 (1 + 0.7) / 2 = 59.5, cwnd 70 * 0.7 = 49.
        s.fill_window();
        s.congestion(LossCause::Reordering);
        assert_close(s.cc.w_max(), 59.5);
        assert_close(s.cc.cwnd_f64(), 49.0);

        let mut s = after_loss_at(
            100,
            Params {
                fast_convergence: false,
                ..Default::default()
            },
        );
        s.fill_window();
        s.congestion(LossCause::Reordering);
        assert_close(s.cc.w_max(), 70.0);
    }

    /// Keep the window full, ACKing the oldest packet one RTT after it was sent, until `until`.
    fn ack_clocked(s: &mut Script<Cubic>, until: Time) {
        while s.now < until {
            s.ack_oldest(RTT);
            s.fill_window();
        }
    }

    #[test]
    fn window_follows_the_cubic_function_between_losses() {
        let mut s = after_loss_at(100, Params::default());
        assert_eq!(s.cc.cwnd(), 70);
        // One window spread evenly over an RTT, then ACK-clocked: each ACK sends what the window allows.
        let start = s.now;
        for i in 0..70 {
            s.now = start + Dur(RTT.as_ns() * i / 70);
            s.send(1);
        }
        ack_clocked(&mut s, start + RTT);
        let t_epoch = start + RTT;
        let k = 75f64.cbrt();
        // Every RTT for 5 s, cwnd tracks W_cubic(t) = 0.4 (t - K)^3 + 100 (RFC 9438 §4.2 eq. 1) with
        // t counted from the first ACK in congestion avoidance, to within 0.1%. Each ACK
        // aims at target = W_cubic(t + RTT) but moves 1/cwnd of the way there, so over one RTT of ACKs
        // the window arrives where the curve is at the end of that RTT: it lags the target by one RTT
        // (up to 2.7% below W_cubic(t + RTT) early in the stage) and never overshoots it.
        for round in 1..=50u64 {
            ack_clocked(&mut s, t_epoch + Dur(RTT.as_ns() * round));
            let t = s.now.since(t_epoch).as_secs_f64();
            let w = 0.4 * (t - k).powi(3) + 100.0;
            assert_close(s.cc.w_cubic_at(s.now).unwrap(), w);
            let cwnd = s.cc.cwnd_f64();
            assert!(
                (cwnd - w).abs() <= 0.001 * w,
                "t {t:.3}s: cwnd {cwnd:.3}, W_cubic(t) {w:.3}"
            );
            let target = 0.4 * (t + RTT.as_secs_f64() - k).powi(3) + 100.0;
            assert!(
                cwnd <= target,
                "t {t:.3}s: cwnd {cwnd:.3} above W_cubic(t + RTT) {target:.3}"
            );
            let w_est = s.cc.w_est().unwrap();
            assert!(
                w_est < w,
                "t {t:.3}s: W_est {w_est:.3} overtook W_cubic {w:.3}"
            );
            let region = if t < k { "concave" } else { "convex" };
            assert_eq!(s.cc.state_name(), region, "t {t:.3}s");
        }
    }

    #[test]
    fn reno_friendly_region_wins_when_cubic_is_slower() {
        // W_max 10 at a 10 ms RTT: W_cubic needs K = cbrt(7.5) = 1.96 s to climb back from 7 to 10,
        // while W_est gains alpha_cubic = 3 * 0.3 / 1.7 = 0.529 packets per RTT.
        let rtt = Dur::from_ms(10);
        let mut s = cubic(Params {
            initial_window: 10,
            ..Default::default()
        });
        s.fill_window();
        s.congestion(LossCause::Reordering);
        s.ack_all(rtt);
        s.recovery_exit();
        let mut prev = s.cc.cwnd_f64();
        for _ in 0..5 {
            s.fill_window();
            s.ack_all(rtt);
            let w = s.cc.cwnd_f64();
            assert_eq!(s.cc.state_name(), "reno_friendly");
            assert_eq!(w, s.cc.w_est().unwrap());
            assert!(w > s.cc.w_cubic_at(s.now).unwrap());
            // floor(w) ACKs of alpha / w each: a little under alpha per round.
            let gain = w - prev;
            assert!(gain > 0.45 && gain < 0.53, "gain {gain}");
            prev = w;
        }
        // Past cwnd_prior = 10, alpha becomes 1 (RFC 9438 §4.3): Reno's packet per RTT.
        for _ in 0..5 {
            s.fill_window();
            s.ack_all(rtt);
        }
        let w = s.cc.cwnd_f64();
        assert!(s.cc.w_est().unwrap() >= 10.0);
        for _ in 0..10 {
            s.fill_window();
            s.ack_all(rtt);
        }
        let gain = (s.cc.cwnd_f64() - w) / 10.0;
        assert!(gain > 0.9 && gain <= 1.0, "gain per RTT {gain}");
        assert_eq!(s.cc.state_name(), "reno_friendly");
    }

    #[test]
    fn rto_resets_to_one_packet() {
        let mut s = cubic(Params {
            initial_window: 100,
            ..Default::default()
        });
        s.fill_window();
        s.ack_oldest(RTT);
        s.rto();
        // RFC 9438 §4.8: ssthresh = 101 * 0.7, cwnd = 1.
        assert_eq!(s.cc.cwnd(), 1);
        assert_close(s.cc.ssthresh(), 70.7);
        assert_eq!(s.cc.state_name(), "slow_start");
        // Slow start 1, 2, 4, ..., 64.
        for expected in [2, 4, 8, 16, 32, 64] {
            s.fill_window();
            s.ack_all(RTT);
            assert_eq!(s.cc.cwnd(), expected);
        }
        s.fill_window();
        for _ in 0..6 {
            s.ack_oldest(RTT);
        }
        assert_eq!((s.cc.cwnd(), s.cc.state_name()), (70, "slow_start"));
        // The 7th ACK: 0.7 of it reaches ssthresh, 0.3 starts congestion avoidance.
        s.ack_oldest(RTT);
        // The first stage after an RTO has K = 0 and W_max = cwnd_epoch = 70.7 (RFC 9438 §4.8).
        assert_eq!(s.cc.k_s(), Some(0.0));
        assert_close(s.cc.w_max(), 70.7);
        // W_cubic(0) = W_max = 70.7 is below W_est = 70.7 + 0.529 * 0.3 / 70.7: Reno-friendly.
        assert_eq!(s.cc.state_name(), "reno_friendly");
        assert_close(s.cc.cwnd_f64(), 70.7 + 0.9 / 1.7 * 0.3 / 70.7);
    }

    #[test]
    fn validate_rejects_out_of_range_constants() {
        let key = |p: Params| p.validate().err().and_then(|e| e.key().map(str::to_string));
        assert_eq!(
            key(Params {
                c: 0.0,
                ..Default::default()
            })
            .as_deref(),
            Some("c")
        );
        assert_eq!(
            key(Params {
                beta_cubic: 1.0,
                ..Default::default()
            })
            .as_deref(),
            Some("beta_cubic")
        );
        assert_eq!(
            key(Params {
                beta_cubic: f64::NAN,
                ..Default::default()
            })
            .as_deref(),
            Some("beta_cubic")
        );
        assert_eq!(
            key(Params {
                initial_window: 0,
                ..Default::default()
            })
            .as_deref(),
            Some("initial_window")
        );
        assert_eq!(key(Params::default()), None);
    }
    fn slow_start_exit_on_a_1000_pps_path(
        hystart: HyStartFlavour,
    ) -> (f64, crate::testing::PathTotals) {
        let path = crate::testing::PacedPath {
            rate_pps: 1000.0,
            buffer: 1000,
            delay: Dur::from_ms(20),
            bytes: 1500,
        };
        let mut c = Cubic::new(Params {
            hystart,
            ..Default::default()
        });
        let totals = path.run(&mut c, Time::from_ms(400));
        (c.ssthresh(), totals)
    }

    /// Linux HyStart, 16 packets ACKed one by one at 40 ms (delay_min 40 ms), then 32 sent as 16 pairs
    /// 2.5 ms apart, the second of each pair `gap` after the first, each pair ACKed by one delayed ACK
    /// 45.5 ms after its first packet left (ACKs 2.5 ms apart: no ACK train). The cwnd at which slow
    /// start ended, if it did.
    fn linux_exit_after_delayed_acks(gap: Dur) -> Option<f64> {
        let mut s = cubic(Params {
            initial_window: 16,
            hystart: HyStartFlavour::Linux,
            ..Default::default()
        });
        for _ in 0..16 {
            s.send(1);
            s.advance(Dur::from_ms(1));
        }
        for _ in 0..16 {
            s.ack_oldest(Dur::from_ms(40));
        }
        for _ in 0..16 {
            s.send(1);
            s.advance(gap);
            s.send(1);
            s.advance(Dur::from_us(2500) - gap);
        }
        for _ in 0..16 {
            s.ack_oldest_n(2, Dur::from_us(45_500));
        }
        (s.cc.ssthresh() < u32::MAX as f64).then(|| s.cc.ssthresh())
    }

    #[test]
    fn linux_hystart_reads_the_rtt_of_the_newest_packet_an_ack_covers() {
        // Both packets of a pair sent together: 45.5 ms > 40 + clamp(40 / 8, 4, 16) = 45 ms, so the
        // delay test fires at the ninth sample of the round (tcp_cubic.c HYSTART_MIN_SAMPLES), cwnd 32 + 16.
        assert_eq!(linux_exit_after_delayed_acks(Dur::ZERO), Some(48.0));
        // The second sent 1.5 ms later: Linux's sample is its RTT (`ca_rtt_us`), 44 ms, under the
        // threshold, though the ACK echoes the first at 45.5 ms.
        assert_eq!(linux_exit_after_delayed_acks(Dur::from_us(1500)), None);
    }

    #[test]
    fn classic_hystart_ends_slow_start_at_once_where_the_rtt_rises() {
        // 1,000 packets/s, 40 ms path RTT: every ACK queues one more packet (+1 ms RTT). Linux: round 1
        // (ACKs 41-50 ms) sets delay_min 41; round 2 starts at the ACK of packet 10 (51 ms RTT), and
        // its ninth sample, at cwnd 28, keeps a minimum of 51 > 41 + clamp(41 / 8, 4, 16) = 46.1 ms.
        let (linux, t) = slow_start_exit_on_a_1000_pps_path(HyStartFlavour::Linux);
        assert_eq!((linux, t.lost), (28.0, 0));
        // ns-3.37 needs the RTT to double (41 + 41 ms): later, and still before a loss.
        let (ns3, t) = slow_start_exit_on_a_1000_pps_path(HyStartFlavour::Ns3);
        assert_eq!((ns3, t.lost), (89.0, 0));
        // HyStart++ leaves through 5 rounds of CSS; without any exit slow start is still on.
        let (rfc, _) = slow_start_exit_on_a_1000_pps_path(HyStartFlavour::Rfc9406);
        assert_eq!(rfc, 73.25);
        let (off, _) = slow_start_exit_on_a_1000_pps_path(HyStartFlavour::Off);
        assert_eq!(off, u32::MAX as f64);
    }
}
