//! RACK-TLP (RFC 8985) state as Linux keeps it (net/ipv4/tcp_recovery.c, tcp_output.c 6.x): the
//! send time of the most recently sent packet known delivered, the reordering window, and the tail
//! loss probe's timeout. The reliable sender owns the per-packet records (their send times are the
//! ones it keeps for rate sampling) and walks them; this module holds only the per-flow state.

use ccscope_cc::common::Minmax;
use ccscope_core::{Dur, Time};

/// Linux `TCP_RACK_RECOVERY_THRESH`: recoveries an enlarged reordering window persists for.
const RECOVERY_THRESH: u32 = 16;
/// Linux `tcp_min_rtt_wlen`: the min-RTT filter's window (300 s).
const MIN_RTT_WINDOW: Dur = Dur::from_ms(300_000);
/// Linux `TCP_TIMEOUT_MIN_US`: added to the reordering timer and to the probe timeout (2 ms).
pub const TIMEOUT_MIN: Dur = Dur::from_ms(2);
/// Linux `tp->reordering` default (`sysctl_tcp_reordering` = 3): the duplicate threshold.
const DUPTHRESH: u32 = 3;

/// RFC 8985 §6.1 `RACK.xmit_ts`, `RACK.end_seq`, `RACK.rtt`, the reordering window state.
#[derive(Clone, Copy, Debug, Default)]
pub struct Rack {
    /// Send time of the most recently sent packet delivered (Linux `rack.mstamp`); `None` before any.
    xmit: Option<Time>,
    /// Its sequence number + 1 (Linux `rack.end_seq`, in packets).
    end_seq: u64,
    /// RTT of the last packet that advanced RACK (Linux `rack.rtt_us`).
    rtt: Dur,
    /// A delivered packet advanced RACK since the last scan (Linux `rack.advanced`).
    advanced: bool,
    min_rtt: Minmax,
    has_min_rtt: bool,
    /// Reordering observed (Linux `tp->reord_seen`).
    pub reord_seen: u64,
    /// Linux `rack.reo_wnd_steps`: the window in units of min_RTT/4 (1 to 255).
    reo_wnd_steps: u32,
    reo_wnd_persist: u32,
    dsack_seen: bool,
    /// Delivered count when the window last grew (Linux `rack.last_delivered`).
    last_delivered: u64,
}

/// Linux `tcp_skb_sent_after`: t1 later than t2, ties broken by sequence.
pub fn sent_after(t1: Time, seq1: u64, t2: Time, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Rack {
    pub fn new() -> Rack {
        Rack {
            reo_wnd_steps: 1,
            ..Rack::default()
        }
    }

    /// Linux `tcp_update_rtt_min`: every RTT sample feeds the windowed minimum.
    pub fn on_rtt_sample(&mut self, now: Time, rtt: Dur) {
        let v = rtt.as_ns() as f64;
        if self.has_min_rtt {
            self.min_rtt
                .running_min(MIN_RTT_WINDOW.as_ns(), now.as_ns(), v);
        } else {
            self.min_rtt.reset(now.as_ns(), v);
            self.has_min_rtt = true;
        }
    }

    /// Linux `tcp_min_rtt` (`None` before any sample, Linux's ~0U).
    pub fn min_rtt(&self) -> Option<Dur> {
        self.has_min_rtt.then(|| Dur(self.min_rtt.get() as u64))
    }

    /// RFC 8985 §6.2 step 2, Linux `tcp_rack_advance`: packet `seq`, (last) sent at `sent`, was
    /// delivered; a retransmission delivered within min_RTT of its sending is ambiguous and skipped.
    pub fn advance(&mut self, now: Time, seq: u64, sent: Time, retransmitted: bool) {
        let rtt = now - sent;
        if retransmitted && self.min_rtt().is_none_or(|m| rtt < m) {
            return;
        }
        self.advanced = true;
        self.rtt = rtt;
        if self
            .xmit
            .is_none_or(|x| sent_after(sent, seq + 1, x, self.end_seq))
        {
            self.xmit = Some(sent);
            self.end_seq = seq + 1;
        }
    }

    /// Take the `advanced` flag (Linux `tcp_rack_mark_lost` scans only after an advance).
    pub fn take_advanced(&mut self) -> bool {
        std::mem::take(&mut self.advanced)
    }

    /// Linux `tcp_rack_reo_wnd`: zero in recovery or past the duplicate threshold until reordering is
    /// seen, else min_RTT/4 per step, at most SRTT.
    pub fn reo_wnd(&self, in_recovery: bool, sacked_out: u32, srtt: Dur) -> Dur {
        if self.reord_seen == 0 && (in_recovery || sacked_out >= DUPTHRESH) {
            return Dur::ZERO;
        }
        let m = self.min_rtt().unwrap_or(Dur::ZERO);
        Dur((m.as_ns() / 4).saturating_mul(self.reo_wnd_steps as u64)).min(srtt)
    }

    /// Whether a packet sent at `sent` (`seq`) was sent before the most recent delivered one.
    pub fn is_before_newest(&self, sent: Time, seq: u64) -> bool {
        self.xmit
            .is_some_and(|x| sent_after(x, self.end_seq, sent, seq + 1))
    }

    /// Linux `tcp_rack_skb_timeout`: time left (ns, may be negative) before a packet sent at `sent`
    /// is deemed lost: RACK.rtt + reo_wnd - (now - sent).
    pub fn remaining(&self, now: Time, sent: Time, reo_wnd: Dur) -> i64 {
        (self.rtt.as_ns() + reo_wnd.as_ns()) as i64 - (now - sent).as_ns() as i64
    }

    /// Linux `tcp_dsack_seen`: a DSACK arrived.
    pub fn on_dsack(&mut self) {
        self.dsack_seen = true;
    }

    /// Linux `tcp_rack_update_reo_wnd`, once per ACK with its rate sample's `prior_delivered` and
    /// the flow's delivered count: a DSACK (at most once per round) widens the window by a step.
    pub fn update_reo_wnd(&mut self, prior_delivered: u64, delivered: u64) {
        if prior_delivered == 0 {
            return;
        }
        if prior_delivered < self.last_delivered {
            self.dsack_seen = false;
        }
        if self.dsack_seen {
            self.reo_wnd_steps = (self.reo_wnd_steps + 1).min(0xFF);
            self.dsack_seen = false;
            self.last_delivered = delivered;
            self.reo_wnd_persist = RECOVERY_THRESH;
        } else if self.reo_wnd_persist == 0 {
            self.reo_wnd_steps = 1;
        }
    }

    /// Linux `tcp_try_undo_recovery` without an undo: one recovery closer to the default window.
    pub fn on_recovery_exit(&mut self) {
        self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
    }

    pub fn reo_wnd_steps(&self) -> u32 {
        self.reo_wnd_steps
    }
}

/// RFC 8985 §7.2 WCDelAckT, the worst-case delayed ACK (Linux adds `tcp_rto_min`, 200 ms by default).
pub const WC_DEL_ACK: Dur = Dur::from_ms(200);

/// RFC 8985 §7.2, Linux `tcp_schedule_loss_probe`: PTO = 2 SRTT, plus WCDelAckT with one packet
/// outstanding or `TCP_TIMEOUT_MIN` otherwise; the initial RTO without an RTT sample; never later
/// than the RTO would fire (`rto_left`).
pub fn probe_timeout(srtt: Option<Dur>, packets_out: u64, initial: Dur, rto_left: Dur) -> Dur {
    let pto = match srtt {
        Some(s) => {
            let extra = if packets_out == 1 {
                WC_DEL_ACK
            } else {
                TIMEOUT_MIN
            };
            Dur(2 * s.as_ns()) + extra
        }
        None => initial,
    };
    if rto_left > Dur::ZERO {
        pto.min(rto_left)
    } else {
        pto
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time(n * 1_000_000)
    }

    #[test]
    fn rack_follows_the_most_recently_sent_delivered_packet_and_skips_ambiguous_retransmissions() {
        let mut r = Rack::new();
        r.on_rtt_sample(ms(40), Dur::from_ms(40));
        r.advance(ms(40), 0, ms(0), false);
        r.advance(ms(41), 5, ms(3), false);
        // An older packet delivered later moves RACK.rtt but not RACK.xmit_ts.
        r.advance(ms(42), 2, ms(1), false);
        assert!(r.is_before_newest(ms(2), 4));
        assert!(!r.is_before_newest(ms(3), 5));
        assert_eq!(r.remaining(ms(42), ms(1), Dur::ZERO), 0);
        // A retransmission SACKed 10 ms after it was resent (< min_RTT 40 ms): the original's.
        r.advance(ms(60), 1, ms(50), true);
        assert!(!r.is_before_newest(ms(4), 6));
        assert!(r.take_advanced());
        assert!(!r.take_advanced());
    }

    #[test]
    fn the_reordering_window_is_zero_past_dupthresh_and_a_quarter_min_rtt_otherwise() {
        let mut r = Rack::new();
        r.on_rtt_sample(ms(0), Dur::from_ms(40));
        let srtt = Dur::from_ms(100);
        assert_eq!(r.reo_wnd(false, 2, srtt), Dur::from_ms(10));
        assert_eq!(r.reo_wnd(false, 3, srtt), Dur::ZERO);
        assert_eq!(r.reo_wnd(true, 0, srtt), Dur::ZERO);
        r.reord_seen = 1;
        assert_eq!(r.reo_wnd(true, 5, srtt), Dur::from_ms(10));
        // A DSACK adds a step (once per round), capped at SRTT; sixteen recoveries later it is back to one.
        r.on_dsack();
        r.update_reo_wnd(10, 20);
        assert_eq!(r.reo_wnd_steps(), 2);
        assert_eq!(r.reo_wnd(false, 0, srtt), Dur::from_ms(20));
        r.on_dsack();
        r.update_reo_wnd(15, 25);
        assert_eq!(
            r.reo_wnd_steps(),
            2,
            "a round has not passed since delivered 20"
        );
        for _ in 0..16 {
            r.on_recovery_exit();
        }
        r.update_reo_wnd(30, 40);
        assert_eq!(r.reo_wnd_steps(), 1);
        assert_eq!(r.reo_wnd(false, 0, Dur::from_ms(5)), Dur::from_ms(5));
    }

    #[test]
    fn the_probe_timeout_is_two_srtt_plus_a_margin_and_never_after_the_rto() {
        let (init, far) = (Dur::from_ms(1000), Dur::from_ms(5000));
        let srtt = Some(Dur::from_ms(40));
        assert_eq!(probe_timeout(srtt, 10, init, far), Dur::from_ms(82));
        assert_eq!(probe_timeout(srtt, 1, init, far), Dur::from_ms(280));
        assert_eq!(probe_timeout(None, 10, init, far), init);
        assert_eq!(
            probe_timeout(srtt, 10, init, Dur::from_ms(50)),
            Dur::from_ms(50)
        );
    }
}
