//! Proportional rate reduction (RFC 6937) as Linux's `tcp_cwnd_reduction` runs it (net/ipv4/
//! tcp_input.c, 6.x): during fast recovery the packets sent follow the packets delivered, scaled by
//! ssthresh / RecoverFS while the pipe is above ssthresh (the proportional part), and at most the
//! packets delivered plus one (slow-start reduction bound, SSRB) once it is below.
//!
//! The controller stays sans-IO and owns ssthresh and cwnd: it sets its window once at the congestion
//! event (Reno-family controllers to ssthresh, held until recovery ends), and the transport reads that
//! window as ssthresh on every ACK. PRR only bounds what the transport sends in the meantime; at the end
//! of recovery the controller's window is in force again (Linux `tcp_end_cwnd_reduction`: cwnd =
//! ssthresh).

/// Whose reading of RFC 6937 to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PrrFlavour {
    /// Linux 6.x `tcp_cwnd_reduction`: RecoverFS is the window before the cut; the slow-start bound
    /// adds one packet on an ACK that advances SND.UNA and reveals no new loss.
    #[default]
    Linux,
    /// ns-3.37 `TcpPrrRecovery`: RecoverFS is FlightSize (SND.NXT - SND.UNA) at entry, as RFC 6937
    /// §3 says; the slow-start bound adds one packet only when the ACK covers retransmitted data,
    /// else it sends just DeliveredData.
    Ns3,
}

/// One recovery episode's PRR state, in packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prr {
    flavour: PrrFlavour,
    /// RFC 6937's RecoverFS: Linux `prior_cwnd` (the controller's window when recovery began), or
    /// ns-3's FlightSize at entry.
    prior_cwnd: u32,
    /// RFC 6937 `prr_delivered`: packets delivered (ACKed or SACKed) since recovery began.
    delivered: u64,
    /// RFC 6937 `prr_out`: packets sent since recovery began.
    out: u64,
    /// The send limit the last ACK set (Linux `snd_cwnd` = pipe + sndcnt).
    window: u32,
}

impl Prr {
    /// Recovery begins (Linux `tcp_init_cwnd_reduction`) with the controller's window before its cut.
    pub fn new(prior_cwnd: u32) -> Prr {
        Prr::with_recover_fs(PrrFlavour::Linux, prior_cwnd)
    }

    /// Recovery begins with RecoverFS `recover_fs` (the window before the cut for Linux, FlightSize
    /// for ns-3: `TcpPrrRecovery::EnterRecovery`'s `unAckDataCount`).
    pub fn with_recover_fs(flavour: PrrFlavour, recover_fs: u32) -> Prr {
        let prior_cwnd = recover_fs;
        Prr {
            flavour,
            prior_cwnd: prior_cwnd.max(1),
            delivered: 0,
            out: 0,
            window: prior_cwnd.max(1),
        }
    }

    /// A packet (new or resent) left during recovery (Linux `prr_out += pcount`).
    pub fn on_sent(&mut self) {
        self.out += 1;
    }

    /// The send limit in packets: at most this many in flight until the next ACK.
    pub fn window(&self) -> u32 {
        self.window
    }

    pub fn out(&self) -> u64 {
        self.out
    }

    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// An ACK delivered `newly` packets (`una_advanced`: SND.UNA moved; `newly_lost`: packets it
    /// showed lost; `retx_acked`: it cumulatively acknowledged a retransmitted packet, ns-3's
    /// `m_isRetransDataAcked`, read by the ns-3 flavour only; docs/deviations.md says why counting a
    /// SACKed retransmission gives ns-3's value); `ssthresh` is the controller's window, `pipe` the
    /// packets in flight now.
    pub fn on_ack(
        &mut self,
        ssthresh: u32,
        pipe: u32,
        newly: u32,
        una_advanced: bool,
        newly_lost: u32,
        retx_acked: bool,
    ) -> u32 {
        // tcp_cwnd_reduction: an ACK that delivered nothing leaves the window as it was.
        if newly == 0 {
            return self.window;
        }
        self.delivered += newly as u64;
        let delta = ssthresh as i64 - pipe as i64;
        let mut sndcnt = if delta < 0 {
            // RFC 6937 §3.1: sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out.
            let target = (ssthresh as u64 * self.delivered).div_ceil(self.prior_cwnd as u64);
            target as i64 - self.out as i64
        } else {
            // RFC 6937 §3.1 SSRB: MAX(prr_delivered - prr_out, DeliveredData) + 1 MSS.
            let s = match self.flavour {
                // Linux adds the MSS only on an ACK that advances SND.UNA and reveals no new loss.
                PrrFlavour::Linux => {
                    let s = (self.delivered as i64 - self.out as i64).max(newly as i64);
                    s + (una_advanced && newly_lost == 0) as i64
                }
                // tcp-prr-recovery.cc DoRecovery: the bound when m_isRetransDataAcked, else DeliveredData.
                PrrFlavour::Ns3 if retx_acked => {
                    (self.delivered as i64 - self.out as i64).max(newly as i64) + 1
                }
                PrrFlavour::Ns3 => newly as i64,
            };
            s.min(delta)
        };
        // Linux: "Force a fast retransmit upon entering fast recovery".
        sndcnt = sndcnt.max(if self.out > 0 { 0 } else { 1 });
        self.window = (pipe as i64 + sndcnt).clamp(0, u32::MAX as i64) as u32;
        self.window
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn above_ssthresh_prr_sends_ssthresh_over_recoverfs_of_what_is_delivered() {
        // RFC 6937 Appendix A's example in packets: RecoverFS 20, ssthresh 10, one packet per ACK.
        let mut p = Prr::new(20);
        // First ACK: 1 delivered -> CEIL(1 * 10 / 20) - 0 = 1 (and the forced fast retransmit).
        assert_eq!(p.on_ack(10, 18, 1, false, 1, false), 19);
        p.on_sent();
        // Second: CEIL(2 * 10 / 20) - 1 = 0: nothing new.
        assert_eq!(p.on_ack(10, 17, 1, false, 0, false), 17);
        // Third: CEIL(30 / 20) - 1 = 1.
        assert_eq!(p.on_ack(10, 16, 1, false, 0, false), 17);
        p.on_sent();
        // While the pipe stays above ssthresh one packet goes per two delivered.
        for pipe in (11..16).rev() {
            let w = p.on_ack(10, pipe, 1, false, 0, false);
            if w > pipe {
                p.on_sent();
            }
        }
        assert_eq!((p.delivered(), p.out()), (8, 4));
    }

    #[test]
    fn below_ssthresh_the_slow_start_bound_sends_one_more_than_delivered_on_a_cumulative_ack() {
        let mut p = Prr::new(20);
        p.on_sent();
        // Pipe 4 is 6 below ssthresh 10: a cumulative ACK of 2 allows MAX(2 - 1, 2) + 1 = 3.
        assert_eq!(p.on_ack(10, 4, 2, true, 0, false), 7);
        // A SACK that also reveals a loss: MAX(4 - 1, 2) = 3, no extra packet.
        assert_eq!(p.on_ack(10, 4, 2, false, 1, false), 7);
        // Never past ssthresh: pipe 9 leaves room for one.
        assert_eq!(p.on_ack(10, 9, 5, true, 0, false), 10);
    }

    #[test]
    fn an_ack_that_delivers_nothing_keeps_the_last_limit() {
        let mut p = Prr::new(10);
        assert_eq!(p.on_ack(5, 8, 1, false, 1, false), 9);
        assert_eq!(p.on_ack(5, 3, 0, false, 0, false), 9);
    }

    #[test]
    fn ns3_prr_takes_flight_size_as_recover_fs_and_bounds_slow_start_by_delivered_data() {
        // RecoverFS = FlightSize 30 (ns-3 EnterRecovery's unAckDataCount), ssthresh 10.
        let mut p = Prr::with_recover_fs(PrrFlavour::Ns3, 30);
        // CEIL(1 * 10 / 30) - 0 = 1: the fast retransmit.
        assert_eq!(p.on_ack(10, 25, 1, false, 1, false), 26);
        p.on_sent();
        // CEIL(3 * 10 / 30) - 1 = 0 (Linux with RecoverFS 20 would allow CEIL(30 / 20) - 1 = 1).
        assert_eq!(p.on_ack(10, 23, 2, false, 0, false), 23);
        // Below ssthresh, a cumulative ACK of new data only: DeliveredData, no extra MSS.
        assert_eq!(p.on_ack(10, 4, 2, true, 0, false), 6);
        // An ACK of retransmitted data: MAX(prr_delivered - prr_out, DeliveredData) + 1 = MAX(7 - 1, 2) + 1.
        assert_eq!(p.on_ack(10, 2, 2, true, 0, true), 9);
    }
}
