//! Reno building blocks shared by the loss-based window controllers (RFC 5681 §3.1-3.2), in packets.

use crate::params::{invalid, ParamError};

/// ssthresh after a loss, in whole packets: max(FlightSize / 2, 2 SMSS) (RFC 5681 §3.1 eq. 4).
pub fn halved_ssthresh(flight_size: u32) -> u32 {
    (flight_size / 2).max(2)
}

/// Slow start (RFC 5681 §3.1): add every acknowledged packet, but stop at ssthresh.
///
/// Returns the new window and the packets left over for congestion avoidance (Linux `tcp_slow_start`).
pub fn slow_start(cwnd: u32, ssthresh: u32, acked: u32) -> (u32, u32) {
    let grown = cwnd.saturating_add(acked).min(ssthresh.max(cwnd));
    (grown, acked - (grown - cwnd))
}

/// Congestion avoidance by counting acknowledged packets: one more packet for each full window of them
/// (RFC 5681 §3.1, the RECOMMENDED byte-counting form of eq. 3; Linux `tcp_cong_avoid_ai`).
#[derive(Clone, Copy, Debug, Default)]
pub struct AckCounter {
    acked: u32,
}

impl AckCounter {
    /// Count `acked` packets at window `cwnd`; returns the grown window.
    pub fn increase(&mut self, cwnd: u32, acked: u32) -> u32 {
        let w = cwnd.max(1);
        self.acked = self.acked.saturating_add(acked);
        let delta = self.acked / w;
        self.acked -= delta * w;
        cwnd.saturating_add(delta)
    }

    /// Forget credit earned at an older, larger window (Linux clears `snd_cwnd_cnt` on a reduction).
    pub fn reset(&mut self) {
        self.acked = 0;
    }
}

/// The window and ssthresh from before a timeout, so that a timeout the transport finds spurious
/// (F-RTO, RFC 5682) can be undone as Linux does (`prior_cwnd`, `prior_ssthresh`,
/// `tcp_undo_cwnd_reduction` with `tcp_reno_undo_cwnd`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Undo {
    prior: Option<(f64, f64)>,
}

impl Undo {
    /// At a timeout. Linux `tcp_current_ssthresh`: outside a window reduction, ssthresh counts as
    /// at least 3/4 of the window.
    pub fn save(&mut self, cwnd: f64, ssthresh: f64, in_recovery: bool) {
        let ssthresh = if in_recovery {
            ssthresh
        } else {
            ssthresh.max(0.75 * cwnd)
        };
        self.prior = Some((cwnd, ssthresh));
    }

    /// The restored (cwnd, ssthresh): each the larger of now and before; unchanged with nothing saved.
    pub fn restore(&mut self, cwnd: f64, ssthresh: f64) -> (f64, f64) {
        match self.prior.take() {
            Some((c, s)) => (cwnd.max(c), ssthresh.max(s)),
            None => (cwnd, ssthresh),
        }
    }
}

/// Where a loss-based controller is (RFC 5681 §3), reported by `state_name`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    SlowStart,
    CongestionAvoidance,
    /// Between a congestion event and its recovery point (RFC 6582 §3.2): the window holds.
    Recovery,
}

impl Phase {
    /// RFC 5681 §3.1: slow start while cwnd < ssthresh, congestion avoidance from ssthresh on.
    pub fn of(cwnd: f64, ssthresh: f64, in_recovery: bool) -> Phase {
        if in_recovery {
            Phase::Recovery
        } else if cwnd < ssthresh {
            Phase::SlowStart
        } else {
            Phase::CongestionAvoidance
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Phase::SlowStart => "slow_start",
            Phase::CongestionAvoidance => "congestion_avoidance",
            Phase::Recovery => "recovery",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undo_restores_the_larger_window_and_linux_current_ssthresh_once() {
        let mut u = Undo::default();
        assert_eq!(u.restore(1.0, 5.0), (1.0, 5.0));
        // Outside recovery ssthresh counts as at least 3/4 cwnd (tcp_current_ssthresh).
        u.save(40.0, 20.0, false);
        assert_eq!(u.restore(2.0, 20.0), (40.0, 30.0));
        assert_eq!(u.restore(2.0, 20.0), (2.0, 20.0));
        u.save(40.0, 20.0, true);
        assert_eq!(u.restore(50.0, 10.0), (50.0, 20.0));
    }

    #[test]
    fn ssthresh_is_half_the_flight_rounded_down_but_at_least_two() {
        assert_eq!(halved_ssthresh(20), 10);
        assert_eq!(halved_ssthresh(21), 10);
        assert_eq!(halved_ssthresh(3), 2);
        assert_eq!(halved_ssthresh(0), 2);
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_the_rest() {
        assert_eq!(slow_start(10, 100, 3), (13, 0));
        assert_eq!(slow_start(10, 12, 5), (12, 3));
        // The window saturates instead of overflowing; what did not fit is left over.
        assert_eq!(slow_start(10, u32::MAX, u32::MAX), (u32::MAX, 10));
    }

    #[test]
    fn ack_counter_adds_one_packet_per_window_acknowledged() {
        let mut c = AckCounter::default();
        let mut cwnd = 10;
        for _ in 0..9 {
            cwnd = c.increase(cwnd, 1);
        }
        assert_eq!(cwnd, 10);
        cwnd = c.increase(cwnd, 1);
        assert_eq!(cwnd, 11);
        // A stretch ACK for 23 packets at 11: two more, one packet of credit kept.
        assert_eq!(c.increase(11, 23), 13);
        assert_eq!(c.acked, 1);
    }
}

/// Range checks shared by the Reno-family controllers.
pub fn check_reno_params(initial_window: u32, initial_ssthresh: u32) -> Result<(), ParamError> {
    if initial_window < 1 {
        return Err(invalid("initial_window", "must be >= 1"));
    }
    // RFC 5681 eq. 4 never sets ssthresh below 2 segments.
    if initial_ssthresh < 2 {
        return Err(invalid("initial_ssthresh", "must be >= 2"));
    }
    Ok(())
}
