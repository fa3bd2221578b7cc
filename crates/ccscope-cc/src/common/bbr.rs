//! Model arithmetic BBR v1 (`model/bbr.rs`) and BBRv3 (`model/bbr3.rs`) share: the BDP from the
//! bandwidth and min-RTT estimates, the PROBE_RTT app-limited span (tcp_bbr.c marks the flight
//! sent while the cwnd is cut so that its low delivery rates do not lower the bandwidth model), and
//! the ACK-aggregation estimate (tcp_bbr.c `bbr_update_ack_aggregation`, the same in Linux v1 and v3).

use ccscope_core::{Dur, Time};

use crate::params::{invalid, ParamError};
use crate::AckEvent;

/// tcp_bbr.c `bbr_bdp` (draft-ietf-ccwg-bbr BBRBDPMultiple): ceil(bw x min_rtt x gain) packets, or the
/// initial window before any RTT sample.
pub fn bdp(bw_pps: f64, min_rtt: Option<Dur>, gain: f64, initial_window: u32) -> u32 {
    let Some(rtt) = min_rtt else {
        return initial_window;
    };
    (bw_pps * rtt.as_secs_f64() * gain)
        .ceil()
        .min(u32::MAX as f64) as u32
}

/// The delivered-count span [C.delivered at the first mark, C.delivered + flight at the last] whose
/// packets count as app-limited (tcp_bbr.c `bbr_update_min_rtt`: "Ignore low rate samples during this
/// mode" sets `tp->app_limited` on every ACK in PROBE_RTT).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AppLimitedSpan(Option<(u64, u64)>);

impl AppLimitedSpan {
    /// Forget the span (a new PROBE_RTT visit starts one afresh).
    pub fn clear(&mut self) {
        self.0 = None;
    }

    /// An ACK in PROBE_RTT: everything up to the current flight is app-limited (Linux keeps 1 for 0).
    pub fn extend(&mut self, delivered: u64, in_flight: u32) {
        let mark = (delivered + in_flight as u64).max(1);
        let lo = self.0.map_or(delivered, |(lo, _)| lo);
        self.0 = Some((lo, mark));
    }

    /// A rate sample whose packet was sent at `prior_delivered` falls in the span.
    pub fn covers(&self, prior_delivered: u64) -> bool {
        self.0
            .is_some_and(|(lo, hi)| prior_delivered >= lo && prior_delivered <= hi)
    }
}

/// Range checks of the ACK-aggregation parameters both BBR versions take.
pub fn check_ack_aggregation_params(
    gain: f64,
    max_ms: f64,
    win_rounds: u32,
) -> Result<(), ParamError> {
    for (key, v) in [("extra_acked_gain", gain), ("extra_acked_max_ms", max_ms)] {
        if !(v >= 0.0 && v.is_finite()) {
            return Err(invalid(key, "must be >= 0 and finite"));
        }
    }
    if !(1..=31).contains(&win_rounds) {
        // tcp_bbr.c: "Max allowed val is 31" (a 5-bit counter).
        return Err(invalid("extra_acked_win_rounds", "must be in 1..=31"));
    }
    Ok(())
}

/// tcp_bbr.c `bbr_ack_epoch_acked_reset_thresh`: an epoch this many packets long is restarted.
const ACK_EPOCH_RESET: u32 = 1 << 20;
/// tcp_bbr.c: `ack_epoch_acked` is a 20-bit field.
const ACK_EPOCH_MAX: u32 = 0xF_FFFF;

/// The ACK-aggregation estimate (tcp_bbr.c `bbr_update_ack_aggregation`; draft-ietf-ccwg-bbr
/// BBRUpdateACKAggregation): the most packets ACKed beyond bw x elapsed since an aggregation epoch
/// began, kept as a max over two windows of `win_rounds` rounds each (so 1-2 windows old).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckAggregation {
    /// Start of the current epoch (tcp_bbr.c `ack_epoch_mstamp`).
    epoch_start: Time,
    /// Packets ACKed since it (tcp_bbr.c `ack_epoch_acked`).
    epoch_acked: u32,
    /// Rounds since the current slot opened (tcp_bbr.c `extra_acked_win_rtts`).
    win_rounds: u32,
    idx: usize,
    /// Max excess of each slot (tcp_bbr.c `extra_acked[2]`).
    extra: [u32; 2],
}

impl AckAggregation {
    /// tcp_bbr.c `bbr_extra_acked`: the max over both slots, packets.
    pub fn extra_acked(&self) -> u32 {
        self.extra[0].max(self.extra[1])
    }

    /// tcp_bbr.c `bbr_cwnd_event(CA_EVENT_TX_START)`: restarting after idle opens a fresh epoch.
    pub fn restart_epoch(&mut self, now: Time) {
        self.epoch_start = now;
        self.epoch_acked = 0;
    }

    /// tcp_bbr.c `bbr_update_ack_aggregation` on a valid sample that ACKed `acked` packets at `now`
    /// (Linux `tp->delivered_mstamp`); `win_rounds` is the slot length (v3: 1 before the pipe is full).
    pub fn update(
        &mut self,
        now: Time,
        acked: u32,
        round_start: bool,
        win_rounds: u32,
        bw_pps: f64,
        cwnd: u32,
    ) {
        if acked == 0 {
            return;
        }
        if round_start {
            self.win_rounds = (self.win_rounds + 1).min(0x1F);
            if self.win_rounds >= win_rounds {
                self.win_rounds = 0;
                self.idx ^= 1;
                self.extra[self.idx] = 0;
            }
        }
        // Packets the bandwidth estimate would have delivered over the epoch, rounded down.
        let epoch_s = now.since(self.epoch_start).as_secs_f64();
        let mut expected = (bw_pps * epoch_s).floor().min(u32::MAX as f64) as u32;
        // A slower-than-expected ACK stream, or a very long epoch, starts a new epoch here.
        if self.epoch_acked <= expected || self.epoch_acked.saturating_add(acked) >= ACK_EPOCH_RESET
        {
            self.epoch_acked = 0;
            self.epoch_start = now;
            expected = 0;
        }
        self.epoch_acked = self.epoch_acked.saturating_add(acked).min(ACK_EPOCH_MAX);
        let extra = (self.epoch_acked - expected).min(cwnd);
        if extra > self.extra[self.idx] {
            self.extra[self.idx] = extra;
        }
    }

    /// tcp_bbr.c `bbr_ack_aggregation_cwnd`: gain x the estimate, at most bw x `max_s` (100 ms).
    pub fn cwnd(&self, gain: f64, bw_pps: f64, max_s: f64) -> u32 {
        let cap = (bw_pps * max_s).floor().min(u32::MAX as f64) as u32;
        let aggr = (gain * self.extra_acked() as f64)
            .floor()
            .min(u32::MAX as f64) as u32;
        aggr.min(cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_acks_counts_what_the_bandwidth_could_not_have_delivered() {
        let mut a = AckAggregation::default();
        let ms = Time::from_ms;
        // 500 packets/s: 10 ms should deliver 5. The first ACK opens the epoch (expected 0).
        a.update(ms(100), 1, false, 5, 500.0, 100);
        assert_eq!(a.extra_acked(), 1);
        // 10 more at the same instant, then 10 more 10 ms later: 21 ACKed, 5 expected.
        a.update(ms(100), 10, false, 5, 500.0, 100);
        assert_eq!(a.extra_acked(), 11);
        a.update(ms(110), 10, false, 5, 500.0, 100);
        assert_eq!(a.extra_acked(), 16);
        // 100 ms later only 1 more ACK: 21 <= 55 expected, so a new epoch starts with it.
        a.update(ms(210), 1, false, 5, 500.0, 100);
        assert_eq!(a.extra_acked(), 16);
        // cwnd term: gain 1 x 16, at most 100 ms of 500 packets/s = 50, or of 50 packets/s = 5.
        assert_eq!(a.cwnd(1.0, 500.0, 0.1), 16);
        assert_eq!(a.cwnd(1.0, 50.0, 0.1), 5);
        // Each sample is capped by the cwnd at the time.
        let mut b = AckAggregation::default();
        b.update(ms(0), 10, false, 5, 500.0, 8);
        assert_eq!(b.extra_acked(), 8);
    }

    #[test]
    fn the_estimate_is_forgotten_after_two_windows_of_rounds() {
        let mut a = AckAggregation::default();
        a.update(Time::from_ms(0), 7, false, 2, 500.0, 100);
        assert_eq!(a.extra_acked(), 7);
        // Round 1 of the window: the slot stays; round 2 flips to the other (empty) slot.
        let mut t = 10;
        for (round, kept) in [(1, 7), (2, 7), (3, 7), (4, 1)] {
            t += 1000;
            // One ACK 1 s after the last: a new epoch with 1 extra.
            a.update(Time::from_ms(t), 1, true, 2, 500.0, 100);
            assert_eq!(a.extra_acked(), kept, "round {round}");
        }
        a.restart_epoch(Time::from_ms(t));
        a.update(Time::from_ms(t), 3, false, 2, 500.0, 100);
        assert_eq!(a.extra_acked(), 3);
    }

    #[test]
    fn bdp_rounds_up_and_falls_back_to_the_initial_window() {
        assert_eq!(bdp(500.0, Some(Dur::from_ms(40)), 1.0, 10), 20);
        assert_eq!(bdp(500.0, Some(Dur::from_ms(40)), 0.5, 10), 10);
        assert_eq!(bdp(501.0, Some(Dur::from_ms(40)), 1.0, 10), 21);
        assert_eq!(bdp(500.0, None, 2.0, 10), 10);
    }

    #[test]
    fn the_span_covers_from_its_first_mark_to_its_last() {
        let mut s = AppLimitedSpan::default();
        assert!(!s.covers(0));
        s.extend(100, 20);
        s.extend(110, 10);
        assert!(s.covers(100) && s.covers(120) && !s.covers(99) && !s.covers(121));
        s.clear();
        assert!(!s.covers(100));
        s.extend(0, 0);
        assert!(s.covers(0) && s.covers(1));
    }
}

/// The transport's loss state as BBR tracks it (Linux `icsk_ca_state`, ordered as there).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    Recovery,
    /// After an RTO, until every packet outstanding at it is resolved.
    Loss,
}

/// The Loss state after a timeout: it lasts until an ACK passes the highest packet sent before it.
#[derive(Clone, Copy, Debug, Default)]
pub struct LossTracker(Option<u64>);

impl LossTracker {
    /// A timeout: Loss until everything up to `highest_sent` is resolved.
    pub fn enter(&mut self, highest_sent: u64) {
        self.0 = Some(highest_sent);
    }

    pub fn clear(&mut self) {
        self.0 = None;
    }

    /// The Linux CA state this ACK leaves the transport in.
    pub fn ca_state(&mut self, ev: &AckEvent) -> CaState {
        if let Some(high) = self.0 {
            if ev.seq <= high {
                return CaState::Loss;
            }
            self.0 = None;
        }
        if ev.in_recovery {
            CaState::Recovery
        } else {
            CaState::Open
        }
    }
}
