//! TCP Vegas (Brakmo and Peterson 1995, "TCP Vegas: End to End Congestion Avoidance on a Global
//! Internet", IEEE JSAC 13(8)), with the constants and round structure of Linux `tcp_vegas.c`.
//!
//! Once per round trip Vegas compares the expected rate cwnd / BaseRTT with the actual cwnd / RTT:
//! diff = cwnd (RTT - BaseRTT) / RTT is the number of its packets queued in the network (§3.2). In
//! congestion avoidance it adds a packet when fewer than alpha are queued, removes one when more than
//! beta are, and holds in between; slow start ends once more than gamma are queued (§3.3).
//!
//! Choices:
//! - a round ends with the first ACK of a packet sent after the round began (Linux `beg_snd_nxt`), and
//!   RTT is the smallest sample of the round, that ACK's included; BaseRTT is the smallest sample ever;
//! - diff divides by RTT as the paper does (Linux divides by BaseRTT, which counts more packets queued);
//! - a round with fewer than three RTT samples grows like Reno (Linux `cntRTT <= 2`);
//! - slow start adds every acknowledged packet (Linux), not the paper's doubling every other RTT; on
//!   leaving it cwnd = min(cwnd, floor(cwnd BaseRTT / RTT) + 1) and ssthresh = cwnd - 1 (Linux);
//! - losses are Reno's (Linux hands them to Reno): a congestion event halves the window to at least 2
//!   packets and holds it through recovery; an RTO sets cwnd = 1 and ssthresh = max(cwnd / 2, 2);
//! - Vegas adjustments never take cwnd below 2 packets; only an RTO does.

use ccscope_core::{Dur, Time};
use serde::{Deserialize, Serialize};

use crate::common::reno::check_reno_params;
use crate::common::reno::{halved_ssthresh, slow_start, AckCounter, Phase, Undo};
use crate::params::{invalid, ParamError, ParamSpec};
use crate::{AckEvent, CongestionEvent, Controller, SendEvent};

/// A round needs this many RTT samples for a Vegas decision; fewer fall back to Reno (Linux: `cntRTT <= 2`).
const MIN_SAMPLES: u32 = 3;

/// Vegas never shrinks the window below this many packets (Linux `tcp_vegas_cong_avoid`).
const MIN_CWND: u32 = 2;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Grow when fewer than this many packets are queued (Linux tcp_vegas: 2; the paper's §4 runs use 1).
    pub alpha: f64,
    /// Shrink when more than this many packets are queued (Linux tcp_vegas: 4; the paper's §4 runs use 3).
    pub beta: f64,
    /// Leave slow start when more than this many packets are queued (paper §3.3 and Linux: 1).
    pub gamma: f64,
    /// Initial window in packets (RFC 6928 §2: 10, as Linux).
    pub initial_window: u32,
    /// Initial slow-start threshold in packets; 4294967295 stands for "arbitrarily high" (RFC 5681 §3.1).
    pub initial_ssthresh: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            alpha: 2.0,
            beta: 4.0,
            gamma: 1.0,
            initial_window: 10,
            initial_ssthresh: u32::MAX,
        }
    }
}

impl crate::params::Params for Params {
    const SPEC: &'static [ParamSpec] = &[
        ParamSpec {
            name: "alpha",
            unit: "packets",
            doc: "grow when fewer are queued (Linux tcp_vegas: 2; paper: 1)",
        },
        ParamSpec {
            name: "beta",
            unit: "packets",
            doc: "shrink when more are queued (Linux tcp_vegas: 4; paper: 3)",
        },
        ParamSpec {
            name: "gamma",
            unit: "packets",
            doc: "leave slow start when more are queued (paper §3.3, Linux: 1)",
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
    ];
    fn validate(&self) -> Result<(), ParamError> {
        if !(self.alpha >= 0.0 && self.alpha.is_finite()) {
            return Err(invalid("alpha", "must be >= 0 and finite"));
        }
        if !(self.beta >= self.alpha && self.beta.is_finite()) {
            return Err(invalid("beta", "must be finite and >= alpha"));
        }
        if !(self.gamma >= 0.0 && self.gamma.is_finite()) {
            return Err(invalid("gamma", "must be >= 0 and finite"));
        }
        check_reno_params(self.initial_window, self.initial_ssthresh)
    }
}

/// RTT samples of the current round (Linux `minRTT`, `cntRTT`).
#[derive(Clone, Copy, Debug, Default)]
struct Round {
    min_rtt: Option<Dur>,
    samples: u32,
}

#[derive(Debug)]
pub struct Vegas {
    p: Params,
    cwnd: u32,
    ssthresh: u32,
    /// BaseRTT: the smallest RTT seen (paper §3.2).
    base_rtt: Option<Dur>,
    /// The round ends with an ACK for this sequence number or a later one (Linux `beg_snd_nxt`).
    round_end: u64,
    round: Round,
    /// Highest sequence number sent + 1.
    snd_nxt: u64,
    /// Reno's additive increase for rounds with too few samples.
    reno: AckCounter,
    /// diff of the latest Vegas decision, in packets.
    diff: Option<f64>,
    in_recovery: bool,
    undo: Undo,
}

impl Vegas {
    pub fn new(p: Params) -> Self {
        Vegas {
            cwnd: p.initial_window,
            ssthresh: p.initial_ssthresh,
            base_rtt: None,
            round_end: 0,
            round: Round::default(),
            snd_nxt: 0,
            reno: AckCounter::default(),
            diff: None,
            in_recovery: false,
            undo: Undo::default(),
            p,
        }
    }

    pub fn ssthresh(&self) -> u32 {
        self.ssthresh
    }

    /// Packets queued by the latest once-per-RTT decision (paper §3.2 diff), if one was made.
    pub fn diff(&self) -> Option<f64> {
        self.diff
    }

    fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Start a new round with the packets not yet sent (Linux `vegas_enable`).
    fn restart_round(&mut self) {
        self.round_end = self.snd_nxt;
        self.round = Round::default();
    }

    /// The once-per-RTT decision at the end of a round (paper §3.2-3.3, Linux `tcp_vegas_cong_avoid`).
    fn end_of_round(&mut self, acked: u32) {
        let (Some(base), Some(rtt)) = (self.base_rtt, self.round.min_rtt) else {
            return;
        };
        if self.round.samples < MIN_SAMPLES {
            // Linux: too few samples for a Vegas decision; Reno's slow start or additive increase.
            self.reno_increase(acked);
            return;
        }
        let (base_ns, rtt_ns) = (base.as_ns(), rtt.as_ns().max(1));
        // Paper §3.2: diff = (Expected - Actual) BaseRTT = cwnd (RTT - BaseRTT) / RTT, in packets.
        let diff = self.cwnd as f64 * rtt_ns.saturating_sub(base_ns) as f64 / rtt_ns as f64;
        self.diff = Some(diff);
        if self.in_slow_start() {
            if diff > self.p.gamma {
                // Paper §3.3: leave slow start; Linux: cwnd = min(cwnd, cwnd BaseRTT / RTT + 1), ssthresh below it.
                let target = (self.cwnd as u128 * base_ns as u128 / rtt_ns as u128) as u32 + 1;
                self.cwnd = self.cwnd.min(target);
                self.ssthresh = self.ssthresh.min(self.cwnd.saturating_sub(1));
            } else {
                (self.cwnd, _) = slow_start(self.cwnd, self.ssthresh, acked);
            }
        } else if diff > self.p.beta {
            // Paper §3.2: more than beta queued, decrease linearly (Linux also lowers ssthresh to stay in CA).
            self.cwnd = self.cwnd.saturating_sub(1);
            self.ssthresh = self.ssthresh.min(self.cwnd.saturating_sub(1));
        } else if diff < self.p.alpha {
            // Paper §3.2: fewer than alpha queued, increase linearly.
            self.cwnd += 1;
        }
        self.cwnd = self.cwnd.max(MIN_CWND);
    }

    /// Reno growth (RFC 5681 §3.1) for the packets of one ACK.
    fn reno_increase(&mut self, acked: u32) {
        let mut acked = acked;
        if self.in_slow_start() {
            (self.cwnd, acked) = slow_start(self.cwnd, self.ssthresh, acked);
        }
        if acked > 0 {
            self.cwnd = self.reno.increase(self.cwnd, acked);
        }
    }
}

impl Controller for Vegas {
    fn on_send(&mut self, _now: Time, ev: &SendEvent) -> u64 {
        self.snd_nxt = self.snd_nxt.max(ev.seq + 1);
        0
    }

    fn on_ack(&mut self, _now: Time, ev: &AckEvent) {
        self.snd_nxt = self.snd_nxt.max(ev.last_sent_seq + 1);
        // Paper §3.2: BaseRTT is the minimum of all measured RTTs; Linux keeps sampling in recovery.
        self.base_rtt = Some(self.base_rtt.map_or(ev.rtt, |b| b.min(ev.rtt)));
        self.round.min_rtt = Some(self.round.min_rtt.map_or(ev.rtt, |m| m.min(ev.rtt)));
        self.round.samples = self.round.samples.saturating_add(1);
        self.in_recovery = ev.in_recovery;
        // RFC 6582 §3.2: the window holds in recovery (Linux switches Vegas off outside the Open state).
        // Linux calls tcp_vegas_cong_avoid only on an ACK of new data (tcp_may_raise_cwnd).
        if ev.in_recovery || !ev.snd_una_advanced {
            return;
        }
        if ev.seq >= self.round_end {
            self.end_of_round(ev.newly_acked);
            self.restart_round();
        } else if self.in_slow_start() {
            // Linux: slow start on every ACK between the once-per-RTT decisions.
            (self.cwnd, _) = slow_start(self.cwnd, self.ssthresh, ev.newly_acked);
        }
    }

    fn on_congestion_event(&mut self, _now: Time, _ev: &CongestionEvent) {
        // Linux tcp_vegas uses Reno's reduction: ssthresh = max(cwnd / 2, 2) (RFC 5681 §3.2 step 2), cwnd = ssthresh.
        self.ssthresh = halved_ssthresh(self.cwnd);
        self.cwnd = self.ssthresh;
        self.reno.reset();
        self.in_recovery = true;
    }

    fn on_recovery_exit(&mut self, _now: Time) {
        // Linux `vegas_enable` on returning to the Open state: a fresh round.
        self.in_recovery = false;
        self.restart_round();
    }

    fn on_rto(&mut self, _now: Time) {
        self.undo
            .save(self.cwnd as f64, self.ssthresh as f64, self.in_recovery);
        // RFC 5681 §3.1 via Linux Reno: ssthresh = max(cwnd / 2, 2), cwnd = 1 segment.
        self.ssthresh = halved_ssthresh(self.cwnd);
        self.cwnd = 1;
        self.reno.reset();
        self.in_recovery = false;
        self.restart_round();
    }

    fn on_rto_repeated(&mut self, _now: Time) {
        // RFC 5681 §3.1: ssthresh held constant; cwnd = 1 segment.
        self.cwnd = 1;
        self.reno.reset();
        self.restart_round();
    }

    fn on_undo(&mut self, _now: Time) {
        let (c, s) = self.undo.restore(self.cwnd as f64, self.ssthresh as f64);
        (self.cwnd, self.ssthresh) = (c as u32, s as u32);
        self.reno.reset();
    }

    fn cwnd(&self) -> u32 {
        self.cwnd.max(1)
    }

    fn state_name(&self) -> &'static str {
        Phase::of(self.cwnd as f64, self.ssthresh as f64, self.in_recovery).name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params as _;
    use crate::testing::{assert_close, Script};
    use crate::LossCause;

    const BASE_RTT: Dur = Dur::from_ms(100);

    /// Congestion avoidance from the start (ssthresh 2) at `w` packets.
    fn vegas_in_ca(w: u32) -> Script<Vegas> {
        Script::new(Vegas::new(Params {
            initial_window: w,
            initial_ssthresh: 2,
            ..Default::default()
        }))
    }

    /// Fill the window, then ACK all of it `rtt` after sending. The first ACK of each window ends the
    /// round of the window before.
    fn round(s: &mut Script<Vegas>, rtt_ms: u64) {
        s.fill_window();
        s.ack_all(Dur::from_ms(rtt_ms));
    }

    #[test]
    fn grows_when_fewer_than_alpha_packets_are_queued() {
        let mut s = vegas_in_ca(10);
        // BaseRTT 100 ms; the first round has one sample only (Reno credit, no growth yet).
        round(&mut s, 100);
        assert_eq!(
            (s.cc.cwnd(), s.cc.state_name()),
            (10, "congestion_avoidance")
        );
        // RTT 110 ms from here. The round that ends first still has a 100 ms minimum: diff 0.
        round(&mut s, 110);
        assert_eq!(s.cc.cwnd(), 11);
        // Then diff = cwnd * 10 / 110: 1.0 at 11, ..., 1.909 at 21, all below alpha = 2: one packet per RTT.
        for expected in 12..=22 {
            let w = s.cc.cwnd() as f64;
            round(&mut s, 110);
            assert_close(s.cc.diff().unwrap(), w * 10.0 / 110.0);
            assert_eq!(s.cc.cwnd(), expected);
        }
        // At 22, diff = 2.0 is not below alpha: the window holds.
        round(&mut s, 110);
        assert_close(s.cc.diff().unwrap(), 2.0);
        assert_eq!(s.cc.cwnd(), 22);
    }

    #[test]
    fn shrinks_when_more_than_beta_are_queued() {
        let mut s = vegas_in_ca(30);
        round(&mut s, 100);
        // The round that ends first still has a 100 ms minimum: diff 0, one packet more.
        round(&mut s, 150);
        assert_eq!(s.cc.cwnd(), 31);
        // RTT 150 ms over BaseRTT 100 ms: diff = cwnd / 3 packets queued, one packet less per RTT.
        for expected in (12..31).rev() {
            let w = s.cc.cwnd() as f64;
            round(&mut s, 150);
            assert_close(s.cc.diff().unwrap(), w / 3.0);
            assert_eq!(s.cc.cwnd(), expected);
            assert_eq!(s.cc.state_name(), "congestion_avoidance");
        }
        // 12 / 3 = 4 is not above beta: the window holds.
        round(&mut s, 150);
        assert_close(s.cc.diff().unwrap(), 4.0);
        assert_eq!(s.cc.cwnd(), 12);
    }

    #[test]
    fn holds_between_alpha_and_beta() {
        let mut s = vegas_in_ca(30);
        round(&mut s, 100);
        round(&mut s, 110);
        assert_eq!(s.cc.cwnd(), 31);
        // diff = 31 * 10 / 110 = 2.82 packets queued: between alpha = 2 and beta = 4, round after round.
        for _ in 0..10 {
            round(&mut s, 110);
            assert_close(s.cc.diff().unwrap(), 31.0 * 10.0 / 110.0);
            assert_eq!(s.cc.cwnd(), 31);
        }
    }

    #[test]
    fn leaves_slow_start_when_queueing_exceeds_gamma() {
        let mut s = Script::new(Vegas::new(Params::default()));
        // Slow start, one packet per ACK: 10 -> 20 at the 100 ms BaseRTT.
        round(&mut s, 100);
        assert_eq!((s.cc.cwnd(), s.cc.state_name()), (20, "slow_start"));
        // RTT 102 ms: the round ending here had a 100 ms minimum (diff 0), so 20 -> 40.
        round(&mut s, 102);
        assert_eq!(s.cc.cwnd(), 40);
        // diff = 40 * 2 / 102 = 0.78 <= gamma = 1: slow start goes on, 40 -> 80.
        round(&mut s, 102);
        assert_close(s.cc.diff().unwrap(), 40.0 * 2.0 / 102.0);
        assert_eq!((s.cc.cwnd(), s.cc.state_name()), (80, "slow_start"));
        // diff = 80 * 2 / 102 = 1.57 > gamma at the first ACK of the next window: slow start ends with
        // cwnd = min(80, floor(80 * 100 / 102) + 1) = 79 and ssthresh = 78; the other ACKs add nothing.
        round(&mut s, 102);
        assert_close(s.cc.diff().unwrap(), 80.0 * 2.0 / 102.0);
        assert_eq!((s.cc.cwnd(), s.cc.ssthresh()), (79, 78));
        assert_eq!(s.cc.state_name(), "congestion_avoidance");
    }

    #[test]
    fn rounds_with_fewer_than_three_samples_grow_like_reno() {
        let mut s = vegas_in_ca(2);
        // Two ACKs per round: one round-end ACK of credit per round, one packet per two rounds.
        round(&mut s, 100);
        round(&mut s, 100);
        assert_eq!(s.cc.cwnd(), 3);
        assert_eq!(s.cc.diff(), None);
    }

    #[test]
    fn duplicate_acks_that_only_sack_leave_the_window_alone() {
        let mut s = Script::new(Vegas::new(Params::default()));
        s.fill_window();
        let before = s.cc.cwnd();
        // Linux runs tcp_vegas_cong_avoid only on an ACK of new data.
        s.sack_past_hole(BASE_RTT);
        s.sack_past_hole(BASE_RTT);
        assert_eq!(s.cc.cwnd(), before);
        s.ack_oldest(BASE_RTT);
        assert_eq!(s.cc.cwnd(), before + 1);
    }

    #[test]
    fn congestion_event_halves_the_window_once_and_holds_it_in_recovery() {
        let mut s = vegas_in_ca(20);
        s.fill_window();
        s.congestion(LossCause::Reordering);
        assert_eq!(
            (s.cc.ssthresh(), s.cc.cwnd(), s.cc.state_name()),
            (10, 10, "recovery")
        );
        s.lose_oldest(LossCause::Reordering);
        s.ack_all(BASE_RTT);
        assert_eq!(s.cc.cwnd(), 10);
        s.recovery_exit();
        assert_eq!(s.cc.state_name(), "congestion_avoidance");
        // Never below 2.
        let mut s = vegas_in_ca(3);
        s.fill_window();
        s.congestion(LossCause::Reordering);
        assert_eq!(s.cc.cwnd(), 2);
    }

    #[test]
    fn rto_sets_cwnd_to_one_then_slow_starts() {
        let mut s = vegas_in_ca(20);
        s.fill_window();
        s.rto();
        assert_eq!(
            (s.cc.ssthresh(), s.cc.cwnd(), s.cc.state_name()),
            (10, 1, "slow_start")
        );
        round(&mut s, 100);
        assert_eq!(s.cc.cwnd(), 2);
    }

    #[test]
    fn validate_rejects_beta_below_alpha() {
        let key = |p: Params| p.validate().err().and_then(|e| e.key().map(str::to_string));
        assert_eq!(
            key(Params {
                beta: 1.0,
                ..Default::default()
            })
            .as_deref(),
            Some("beta")
        );
        assert_eq!(
            key(Params {
                alpha: -1.0,
                ..Default::default()
            })
            .as_deref(),
            Some("alpha")
        );
        assert_eq!(
            key(Params {
                gamma: f64::NAN,
                ..Default::default()
            })
            .as_deref(),
            Some("gamma")
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
}
