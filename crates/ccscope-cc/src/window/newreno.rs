//! TCP NewReno: slow start and congestion avoidance (RFC 5681 §3.1), one window reduction per loss
//! episode (RFC 5681 §3.2, RFC 6582 §3.2) and the loss window after a retransmission timeout
//! (RFC 5681 §3.1), with the 10-packet initial window of RFC 6928.
//!
//! The reliable transport keeps the recovery state (RFC 6582 recovery point, RFC 6675 pipe); this file
//! only sets the window, in packets. Choices:
//! - no window inflation (RFC 5681 §3.2 steps 4-5): the transport counts the pipe, so cwnd simply stays
//!   at ssthresh until the recovery point is acknowledged, and ACKs in recovery do not grow it;
//! - congestion avoidance counts acknowledged packets and adds one packet per window of them (RFC 5681
//!   §3.1's RECOMMENDED byte counting), so the window grows by exactly one packet per round trip;
//! - slow start adds every newly acknowledged packet up to ssthresh and passes the rest to congestion
//!   avoidance (Linux `tcp_slow_start`); `slow_start_limit` caps it per ACK (RFC 3465 §2.2's L; 1 is
//!   ns-3.37's `TcpNewReno::SlowStart`, which matters with delayed ACKs);
//! - ssthresh is half the flight in whole packets, rounded down (RFC 5681 eq. 4 in bytes allows a
//!   fraction of a segment);
//! - FlightSize at an RTO is the in-flight count of the last send or ACK before it: the transport
//!   declares the whole flight lost before it calls `on_rto`.

use ccscope_core::Time;
use serde::{Deserialize, Serialize};

use crate::common::reno::{
    check_reno_params, halved_ssthresh, slow_start, AckCounter, Phase, Undo,
};
use crate::params::{invalid, ParamError, ParamSpec};
use crate::{AckEvent, CongestionEvent, Controller, SendEvent};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Initial window in packets (RFC 6928 §2: 10 segments).
    pub initial_window: u32,
    /// Initial slow-start threshold in packets; the default 4294967295 stands for "arbitrarily high"
    /// (RFC 5681 §3.1).
    pub initial_ssthresh: u32,
    /// Window after a retransmission timeout in packets (RFC 5681 §3.1: loss window = 1 segment).
    pub loss_window: u32,
    /// Most packets one ACK adds in slow start (RFC 3465 §2.2 L); the default 4294967295 = no limit
    /// (Linux `tcp_slow_start`); 1 = ns-3.37 `TcpNewReno::SlowStart` (one segment per ACK).
    pub slow_start_limit: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            initial_window: 10,
            initial_ssthresh: u32::MAX,
            loss_window: 1,
            slow_start_limit: u32::MAX,
        }
    }
}

impl crate::params::Params for Params {
    const SPEC: &'static [ParamSpec] = &[
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
            name: "loss_window",
            unit: "packets",
            doc: "window after a retransmission timeout (RFC 5681 §3.1: 1)",
        },
        ParamSpec {
            name: "slow_start_limit",
            unit: "packets/ACK",
            doc: "most packets one ACK adds in slow start (RFC 3465 §2.2 L; 4294967295 = none, as Linux; ns-3.37 NewReno: 1)",
        },
    ];
    fn validate(&self) -> Result<(), ParamError> {
        check_reno_params(self.initial_window, self.initial_ssthresh)?;
        if self.loss_window < 1 {
            return Err(invalid("loss_window", "must be >= 1"));
        }
        if self.slow_start_limit < 1 {
            return Err(invalid("slow_start_limit", "must be >= 1"));
        }
        Ok(())
    }
}

#[derive(Debug)]
pub struct NewReno {
    p: Params,
    cwnd: u32,
    ssthresh: u32,
    ca: AckCounter,
    /// Packets in flight at the last send or ACK: FlightSize for an RTO (RFC 5681 eq. 4).
    flight_size: u32,
    in_recovery: bool,
    undo: Undo,
}

impl NewReno {
    pub fn new(p: Params) -> Self {
        NewReno {
            cwnd: p.initial_window,
            ssthresh: p.initial_ssthresh,
            ca: AckCounter::default(),
            flight_size: 0,
            in_recovery: false,
            undo: Undo::default(),
            p,
        }
    }

    pub fn ssthresh(&self) -> u32 {
        self.ssthresh
    }
}

impl Controller for NewReno {
    fn on_send(&mut self, _now: Time, ev: &SendEvent) -> u64 {
        self.flight_size = ev.in_flight;
        0
    }

    fn on_ack(&mut self, _now: Time, ev: &AckEvent) {
        self.flight_size = ev.in_flight;
        self.in_recovery = ev.in_recovery;
        // RFC 6582 §3.2 step 4, without inflation: the window holds until the recovery point is ACKed.
        // RFC 5681 §3.1: grow only on an ACK of new data (Linux tcp_may_raise_cwnd, FLAG_DATA_ACKED).
        if ev.in_recovery || !ev.snd_una_advanced {
            return;
        }
        let mut acked = ev.newly_acked;
        if self.cwnd < self.ssthresh {
            // RFC 5681 §3.1 eq. 2: slow start, at most L packets per ACK (RFC 3465 §2.2).
            let counted = acked.min(self.p.slow_start_limit);
            let (cwnd, left) = slow_start(self.cwnd, self.ssthresh, counted);
            self.cwnd = cwnd;
            // ns-3.37 TcpNewReno::IncreaseWindow: what SlowStart leaves goes to congestion avoidance
            // only once cwnd has reached ssthresh.
            acked = if cwnd < self.ssthresh {
                0
            } else {
                left + (acked - counted)
            };
        }
        if acked > 0 {
            // RFC 5681 §3.1: one packet per window of acknowledged packets.
            self.cwnd = self.ca.increase(self.cwnd, acked);
        }
    }

    fn on_congestion_event(&mut self, _now: Time, ev: &CongestionEvent) {
        // RFC 5681 §3.2 step 2 (eq. 4) and step 3 without inflation; RFC 6582 §3.2 step 2.
        self.ssthresh = halved_ssthresh(ev.in_flight);
        self.cwnd = self.ssthresh;
        self.ca.reset();
        self.in_recovery = true;
    }

    fn on_recovery_exit(&mut self, _now: Time) {
        // RFC 6582 §3.2 step 3 (full ACK): cwnd is already ssthresh, there being no inflation to deflate.
        self.in_recovery = false;
    }

    fn on_rto(&mut self, _now: Time) {
        self.undo
            .save(self.cwnd as f64, self.ssthresh as f64, self.in_recovery);
        // RFC 5681 §3.1: ssthresh by eq. 4, cwnd = loss window.
        self.ssthresh = halved_ssthresh(self.flight_size);
        self.cwnd = self.p.loss_window;
        self.ca.reset();
        self.in_recovery = false;
    }

    fn on_rto_repeated(&mut self, _now: Time) {
        // RFC 5681 §3.1: ssthresh held constant; cwnd = loss window.
        self.cwnd = self.p.loss_window;
        self.ca.reset();
    }

    fn on_undo(&mut self, _now: Time) {
        let (c, s) = self.undo.restore(self.cwnd as f64, self.ssthresh as f64);
        (self.cwnd, self.ssthresh) = (c as u32, s as u32);
        self.ca.reset();
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
    use crate::testing::Script;
    use crate::LossCause;
    use ccscope_core::Dur;

    const RTT: Dur = Dur::from_ms(100);

    fn newreno(p: Params) -> Script<NewReno> {
        Script::new(NewReno::new(p))
    }

    /// Fill the window and ACK all of it: one round trip.
    fn round(s: &mut Script<NewReno>) {
        s.fill_window();
        s.ack_all(RTT);
    }

    #[test]
    fn slow_start_adds_one_packet_per_ack() {
        let mut s = newreno(Params::default());
        assert_eq!(s.cc.cwnd(), 10);
        assert_eq!(s.cc.state_name(), "slow_start");
        s.fill_window();
        for expected in 11..=20 {
            s.ack_oldest(RTT);
            assert_eq!(s.cc.cwnd(), expected);
        }
        round(&mut s);
        assert_eq!(s.cc.cwnd(), 40);
    }

    #[test]
    fn duplicate_acks_that_only_sack_leave_the_window_alone() {
        for ssthresh in [u32::MAX, 10] {
            let mut s = newreno(Params {
                initial_ssthresh: ssthresh,
                ..Default::default()
            });
            s.fill_window();
            for _ in 0..9 {
                s.ack_oldest(RTT);
            }
            let before = s.cc.cwnd();
            // RFC 5681 §3.1: only an ACK of new data grows the window (Linux tcp_may_raise_cwnd).
            s.fill_window();
            s.sack_past_hole(RTT);
            s.sack_past_hole(RTT);
            assert_eq!(s.cc.cwnd(), before, "ssthresh {ssthresh}");
            // The ACK that fills the hole counts only the packet it delivers.
            s.ack_oldest(RTT);
            let grown = if ssthresh == 10 { 11 } else { before + 1 };
            assert_eq!(s.cc.cwnd(), grown, "ssthresh {ssthresh}");
        }
    }

    #[test]
    fn slow_start_adds_every_packet_a_delayed_ack_covers_by_default() {
        let mut s = newreno(Params::default());
        s.fill_window();
        for expected in [12, 14, 16, 18, 20] {
            s.ack_oldest_n(2, RTT);
            assert_eq!(s.cc.cwnd(), expected);
        }
    }

    #[test]
    fn with_a_slow_start_limit_of_one_a_delayed_ack_adds_one_packet_as_ns3_newreno() {
        let mut s = newreno(Params {
            slow_start_limit: 1,
            ..Default::default()
        });
        s.fill_window();
        // ns-3.37 TcpNewReno::SlowStart: one segment per ACK, however many it acknowledges.
        for expected in 11..=15 {
            s.ack_oldest_n(2, RTT);
            assert_eq!(s.cc.cwnd(), expected);
        }
        // Per-packet ACKs grow it as before.
        s.fill_window();
        s.ack_oldest(RTT);
        assert_eq!(s.cc.cwnd(), 16);
    }

    #[test]
    fn what_the_slow_start_limit_holds_back_counts_for_congestion_avoidance_only_from_ssthresh() {
        let mut s = newreno(Params {
            slow_start_limit: 1,
            initial_ssthresh: 11,
            ..Default::default()
        });
        s.fill_window();
        // 10 -> 11 = ssthresh; the second packet this ACK covers is congestion-avoidance credit
        // (SlowStart returns segmentsAcked - 1 to IncreaseWindow).
        s.ack_oldest_n(2, RTT);
        assert_eq!(s.cc.cwnd(), 11);
        s.fill_window();
        for _ in 0..9 {
            s.ack_oldest(RTT);
        }
        assert_eq!(s.cc.cwnd(), 11);
        s.ack_oldest(RTT);
        assert_eq!(s.cc.cwnd(), 12);
        // Below ssthresh, what the limit held back is dropped.
        let mut s = newreno(Params {
            slow_start_limit: 1,
            initial_ssthresh: 100,
            ..Default::default()
        });
        s.fill_window();
        s.ack_oldest_n(10, RTT);
        assert_eq!(s.cc.cwnd(), 11);
    }

    #[test]
    fn slow_start_stops_at_ssthresh() {
        let mut s = newreno(Params {
            initial_ssthresh: 15,
            ..Default::default()
        });
        round(&mut s);
        // 5 ACKs of slow start to 15, then 5 packets of credit towards the 16th.
        assert_eq!(s.cc.cwnd(), 15);
        assert_eq!(s.cc.state_name(), "congestion_avoidance");
        s.fill_window();
        for _ in 0..10 {
            s.ack_oldest(RTT);
        }
        assert_eq!(s.cc.cwnd(), 16);
    }

    #[test]
    fn congestion_avoidance_adds_one_packet_per_round_trip() {
        let mut s = newreno(Params {
            initial_ssthresh: 10,
            ..Default::default()
        });
        assert_eq!(s.cc.state_name(), "congestion_avoidance");
        for expected in 11..=20 {
            s.fill_window();
            // The window holds until a whole window of packets has been acknowledged.
            for _ in 1..expected - 1 {
                s.ack_oldest(RTT);
            }
            assert_eq!(s.cc.cwnd(), expected - 1);
            s.ack_oldest(RTT);
            assert_eq!(s.cc.cwnd(), expected);
        }
    }

    #[test]
    fn three_dup_acks_halve_the_window_once() {
        let mut s = newreno(Params::default());
        round(&mut s);
        s.fill_window();
        assert_eq!((s.cc.cwnd(), s.in_flight.len()), (20, 20));
        // RFC 5681 eq. 4: ssthresh = 20 / 2; cwnd = ssthresh.
        s.congestion(LossCause::Reordering);
        assert_eq!((s.cc.ssthresh(), s.cc.cwnd()), (10, 10));
        assert_eq!(s.cc.state_name(), "recovery");
        // More losses of the same episode reach only `on_loss`: no second reduction.
        s.lose_oldest(LossCause::Reordering);
        s.lose_oldest(LossCause::Reordering);
        assert_eq!(s.cc.cwnd(), 10);
        // ACKs in recovery do not grow the window.
        for _ in 0..7 {
            s.ack_oldest(RTT);
        }
        assert_eq!((s.cc.cwnd(), s.in_flight.len()), (10, 10));
        s.recovery_exit();
        assert_eq!(s.cc.state_name(), "congestion_avoidance");
        // Congestion avoidance resumes: one packet after a window of 10 ACKs.
        for _ in 0..9 {
            s.ack_oldest(RTT);
        }
        assert_eq!(s.cc.cwnd(), 10);
        s.ack_oldest(RTT);
        assert_eq!(s.cc.cwnd(), 11);
    }

    #[test]
    fn rto_sets_cwnd_to_one_and_ssthresh_to_half_the_flight() {
        let mut s = newreno(Params::default());
        s.fill_window();
        s.ack_oldest(RTT);
        s.ack_oldest(RTT);
        s.fill_window();
        assert_eq!((s.cc.cwnd(), s.in_flight.len()), (12, 12));
        s.rto();
        // RFC 5681 §3.1: ssthresh = 12 / 2, cwnd = 1 (the flight was declared lost first).
        assert_eq!((s.cc.ssthresh(), s.cc.cwnd()), (6, 1));
        assert_eq!(s.cc.state_name(), "slow_start");
        // Slow start again: 1, 2, 4, then 6 = ssthresh.
        for expected in [2, 4, 6] {
            round(&mut s);
            assert_eq!(s.cc.cwnd(), expected);
        }
        assert_eq!(s.cc.state_name(), "congestion_avoidance");
    }

    #[test]
    fn repeated_rto_holds_ssthresh_and_a_spurious_one_is_undone() {
        let mut s = newreno(Params::default());
        s.fill_window();
        s.ack_oldest(RTT);
        s.ack_oldest(RTT);
        s.fill_window();
        s.rto();
        assert_eq!((s.cc.ssthresh(), s.cc.cwnd()), (6, 1));
        // RFC 5681 §3.1: a second expiry for the same data keeps ssthresh (the flight is now 1).
        s.send(1);
        s.cc.on_rto_repeated(s.now);
        assert_eq!((s.cc.ssthresh(), s.cc.cwnd()), (6, 1));
        // F-RTO found the timeouts spurious: cwnd 12 again, and ssthresh what it was before the first
        // (Linux tcp_undo_cwnd_reduction): still the initial "infinite" one, so slow start resumes.
        s.cc.on_undo(s.now);
        assert_eq!((s.cc.ssthresh(), s.cc.cwnd()), (u32::MAX, 12));
        assert_eq!(s.cc.state_name(), "slow_start");
    }

    #[test]
    fn rto_in_recovery_ends_recovery() {
        let mut s = newreno(Params::default());
        s.fill_window();
        s.congestion(LossCause::Reordering);
        assert_eq!(s.cc.state_name(), "recovery");
        s.ack_oldest(RTT);
        s.rto();
        // The last ACK before the timeout saw 8 in flight (10 sent, one lost, one ACKed).
        assert_eq!((s.cc.ssthresh(), s.cc.cwnd()), (4, 1));
        assert_eq!(s.cc.state_name(), "slow_start");
    }

    #[test]
    fn ssthresh_never_below_two() {
        let mut s = newreno(Params::default());
        s.send(3);
        s.congestion(LossCause::Reordering);
        // max(3 / 2, 2) = 2.
        assert_eq!((s.cc.ssthresh(), s.cc.cwnd()), (2, 2));
        s.recovery_exit();
        s.ack_all(RTT);
        s.send(1);
        s.rto();
        // max(1 / 2, 2) = 2; the loss window is 1.
        assert_eq!((s.cc.ssthresh(), s.cc.cwnd()), (2, 1));
    }

    #[test]
    fn validate_rejects_empty_windows() {
        let key = |p: Params| p.validate().err().and_then(|e| e.key().map(str::to_string));
        assert_eq!(
            key(Params {
                initial_window: 0,
                ..Default::default()
            })
            .as_deref(),
            Some("initial_window")
        );
        assert_eq!(
            key(Params {
                initial_ssthresh: 1,
                ..Default::default()
            })
            .as_deref(),
            Some("initial_ssthresh")
        );
        assert_eq!(
            key(Params {
                loss_window: 0,
                ..Default::default()
            })
            .as_deref(),
            Some("loss_window")
        );
        assert_eq!(key(Params::default()), None);
    }
}
