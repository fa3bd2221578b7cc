//! Model arithmetic BBR v1 (`model/bbr.rs`) and BBRv3 (`model/bbr3.rs`) share: the BDP from the
//! bandwidth and min-RTT estimates, and the PROBE_RTT app-limited span (tcp_bbr.c marks the flight
//! sent while the cwnd is cut so that its low delivery rates do not lower the bandwidth model).

use ccscope_core::Dur;

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

#[cfg(test)]
mod tests {
    use super::*;

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
