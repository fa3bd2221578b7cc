//! SCTP congestion control for one destination address (RFC 4960 §7.2; paper 002 §3.2 rules 2-6),
//! in bytes, as the CMT association of ccscope-sim runs it: one instance per destination.
//!
//! The association (not this file) keeps the TSNs, OUT, the SACK scoreboard, the retransmission timer
//! and the split-fast-retransmit missing counts; it hands each destination the bytes a SACK newly
//! acknowledged on it, whether that SACK advanced the destination's pseudo-cumulative ack (CMT's
//! CUC, Iyengar et al. 2006 §3.2), and its flight before the SACK. Choices:
//! - slow start (cwnd < ssthresh, paper rule 2a) adds min(NEWACK, MTU) (paper eq. 2; its printed
//!   form drops "CWND +") only when the SACK advances the (pseudo-)cumulative ack, the window was
//!   fully used before it and the destination is not in fast recovery (RFC 4960 §7.2.1's three
//!   conditions);
//! - congestion avoidance (cwnd >= ssthresh, rule 2b) adds the newly acked bytes to partially acked
//!   bytes (PBA) on such a SACK, and once PBA >= cwnd with OUT >= cwnd before the SACK, cwnd += MTU
//!   and PBA -= cwnd (paper eq. 3, RFC 4960 §7.2.2); PBA returns to 0 when nothing is outstanding;
//! - a growth is a request (`on_sack` returns it) that the association's window management may grant
//!   in part or deny (`grow`); a denied CA step still spends its PBA (the round's one MTU is gone);
//! - fast retransmit (rule 4): ssthresh = cwnd/2, cwnd = ssthresh, PBA = 0; model mode floors to
//!   whole MTUs with no 4-MTU floor (specs/002-cmt.md A6, at least one MTU), RFC mode takes
//!   max(cwnd/2, 4 MTU) (RFC 4960 §7.2.3);
//! - T3-rtx expiry (rule 5): ssthresh as above, cwnd = 1 MTU (RFC 4960 §7.2.3), fast recovery ends;
//! - the initial window is min(4 MTU, max(2 MTU, 4380 B)) (RFC 4960 §7.2.1), floored to whole MTUs
//!   in model mode (2 MTU at 1500 B, the Markov chain's restart window (2, 2, t), paper §4.3).
//!
//! Through the `Controller` trait (packets; used by the property harness and a single-path
//! sender) a packet is one MTU: an ACK of n packets is a SACK advancing the cumulative ack by n MTU.

use ccscope_core::Time;
use serde::{Deserialize, Serialize};

use crate::params::{invalid, ParamError, ParamSpec};
use crate::{AckEvent, CongestionEvent, Controller, SendEvent};

/// Which rule set: the paper's model (§3.2, specs/002-cmt.md A9) or RFC 4960.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Missing count 4, halving floored to whole MTUs with no 4-MTU floor, RTO = 3 SRTT.
    Model,
    /// Missing count 3, ssthresh >= 4 MTU, RFC 4960 §6.3 RTO.
    Rfc4960,
}

impl Mode {
    /// Missing reports that declare a TSN lost (paper §3.2 rule 4: four; RFC 4960 §7.2.4: three).
    pub fn missing_threshold(self) -> u8 {
        match self {
            Mode::Model => 4,
            Mode::Rfc4960 => 3,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Model => "model",
            Mode::Rfc4960 => "rfc4960",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Rule set: "model" (paper 002 §3.2 as the models read it) or "rfc4960".
    pub mode: Mode,
    /// Path MTU in bytes: the unit of growth and of the windows (paper §6.1.1: 1500 B packets).
    pub mtu_bytes: u32,
    /// Initial slow-start threshold in bytes; 4294967295 stands for "arbitrarily high" (RFC 4960 §7.2.1).
    pub initial_ssthresh_bytes: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            mode: Mode::Model,
            mtu_bytes: 1500,
            initial_ssthresh_bytes: u32::MAX,
        }
    }
}

impl crate::params::Params for Params {
    const SPEC: &'static [ParamSpec] = &[
        ParamSpec {
            name: "mode",
            unit: "name",
            doc: "\"model\" (paper 002 §3.2: missing count 4, no 4-MTU floor) or \"rfc4960\"",
        },
        ParamSpec {
            name: "mtu_bytes",
            unit: "bytes",
            doc: "path MTU, the unit of window growth (paper 002 §6.1.1: 1500)",
        },
        ParamSpec {
            name: "initial_ssthresh_bytes",
            unit: "bytes",
            doc: "initial slow-start threshold (RFC 4960 §7.2.1: arbitrarily high, 4294967295)",
        },
    ];
    fn validate(&self) -> Result<(), ParamError> {
        if !(28..=65535).contains(&self.mtu_bytes) {
            return Err(invalid("mtu_bytes", "must be in 28..=65535"));
        }
        if (self.initial_ssthresh_bytes as u64) < self.mtu_bytes as u64 {
            return Err(invalid(
                "initial_ssthresh_bytes",
                "must be at least one MTU",
            ));
        }
        Ok(())
    }
}

/// What one SACK did for one destination.
#[derive(Clone, Copy, Debug, Default)]
pub struct SackUpdate {
    /// Bytes of this destination's TSNs the SACK newly acknowledged, cumulatively or by gap blocks.
    pub newly_acked: u64,
    /// The SACK advanced this destination's (pseudo-)cumulative ack (CMT's CUC).
    pub cumack_advanced: bool,
    /// Bytes outstanding to this destination before the SACK (RFC 4960 §7.2.1 "fully utilized").
    pub flight_before: u64,
    /// Bytes outstanding to this destination after it.
    pub flight_after: u64,
}

/// One destination's congestion state, in bytes.
#[derive(Clone, Debug)]
pub struct Sctp {
    p: Params,
    cwnd: u64,
    ssthresh: u64,
    /// Partially acknowledged bytes (RFC 4960 §7.2.2).
    pba: u64,
    in_fast_recovery: bool,
    /// Largest window the association allows (model mode: W whole packets of RBUF), bytes.
    max_cwnd: u64,
    /// Trait use only: packets in flight at the last send or ACK.
    flight_packets: u32,
    fast_retransmits: u64,
    timeouts: u64,
}

impl Sctp {
    pub fn new(p: Params) -> Self {
        let mtu = p.mtu_bytes as u64;
        // RFC 4960 §7.2.1: min(4 MTU, max(2 MTU, 4380 bytes)).
        let rfc = (4 * mtu).min((2 * mtu).max(4380));
        let cwnd = match p.mode {
            Mode::Model => (rfc / mtu).max(1) * mtu,
            Mode::Rfc4960 => rfc,
        };
        Sctp {
            cwnd,
            ssthresh: p.initial_ssthresh_bytes as u64,
            pba: 0,
            in_fast_recovery: false,
            max_cwnd: u64::MAX,
            flight_packets: 0,
            fast_retransmits: 0,
            timeouts: 0,
            p,
        }
    }

    pub fn mode(&self) -> Mode {
        self.p.mode
    }
    pub fn mtu(&self) -> u64 {
        self.p.mtu_bytes as u64
    }
    pub fn cwnd_bytes(&self) -> u64 {
        self.cwnd
    }
    pub fn ssthresh_bytes(&self) -> u64 {
        self.ssthresh
    }
    pub fn pba(&self) -> u64 {
        self.pba
    }
    pub fn in_fast_recovery(&self) -> bool {
        self.in_fast_recovery
    }

    /// Start with at most `bytes` of window (whole MTUs, at least one): a shared receive buffer
    /// smaller than the destinations' initial windows together.
    pub fn cap_initial(&mut self, bytes: u64) {
        let mtu = self.mtu();
        self.cwnd = self.cwnd.min((bytes / mtu).max(1) * mtu);
    }

    /// Cap the window at `bytes` (at least one MTU); growth stops there (as FreeBSD's
    /// SCTP_MAX_CWND socket option does).
    pub fn set_max_cwnd(&mut self, bytes: u64) {
        self.max_cwnd = bytes.max(self.mtu());
        self.cwnd = self.cwnd.min(self.max_cwnd);
    }

    /// Paper §3.2 rules 2-3 for one SACK: updates PBA and returns the growth it asks for (bytes,
    /// at most one MTU); apply what is granted with [`Sctp::grow`].
    pub fn on_sack(&mut self, u: &SackUpdate) -> u64 {
        let mtu = self.mtu();
        let mut want = 0;
        // RFC 4960 §7.2.1 conditions 2 and 3 (the CUC pseudo-cumack stands in for the cumack).
        if u.cumack_advanced && !self.in_fast_recovery {
            if self.cwnd < self.ssthresh {
                // Paper eq. 2 under RFC 4960 §7.2.1 condition 1 (the window was fully used).
                if u.flight_before >= self.cwnd {
                    want = u.newly_acked.min(mtu);
                }
            } else {
                // Paper eq. 3, RFC 4960 §7.2.2.
                self.pba += u.newly_acked;
                if self.pba >= self.cwnd && u.flight_before >= self.cwnd {
                    self.pba -= self.cwnd;
                    want = mtu;
                }
            }
        }
        // RFC 4960 §7.2.2: PBA restarts once everything sent has been acknowledged.
        if u.flight_after == 0 {
            self.pba = 0;
        }
        want.min(self.max_cwnd.saturating_sub(self.cwnd))
    }

    /// Apply a granted growth.
    pub fn grow(&mut self, bytes: u64) {
        self.cwnd += bytes;
    }

    /// Window management takes up to `bytes` (never below one MTU); returns what it took.
    pub fn shrink(&mut self, bytes: u64) -> u64 {
        let take = bytes.min(self.cwnd.saturating_sub(self.mtu()));
        self.cwnd -= take;
        take
    }

    fn halved(&self) -> u64 {
        let mtu = self.mtu();
        match self.p.mode {
            // specs/002-cmt.md A6: floor(w/2) whole packets, no 4-MTU floor (at least one MTU).
            Mode::Model => (self.cwnd / 2 / mtu).max(1) * mtu,
            // RFC 4960 §7.2.3: max(cwnd/2, 4 MTU).
            Mode::Rfc4960 => (self.cwnd / 2).max(4 * mtu),
        }
    }

    /// A TSN sent to this destination was declared lost by missing reports, outside fast recovery:
    /// one reduction per window (paper rule 4, RFC 4960 §7.2.3-7.2.4).
    pub fn on_fast_retransmit(&mut self) {
        self.ssthresh = self.halved();
        self.cwnd = self.ssthresh;
        self.pba = 0;
        self.in_fast_recovery = true;
        self.fast_retransmits += 1;
    }

    /// The destination's pseudo-cumulative ack passed the fast-recovery exit point (RFC 4960 §7.2.4).
    pub fn on_recovery_exit(&mut self) {
        self.in_fast_recovery = false;
    }

    /// The destination's T3-rtx timer expired (paper rule 5, RFC 4960 §7.2.3). In fast recovery the
    /// window is already halved and §7.2.3 halves it again (ssthresh = max(cwnd/2, 4 MTU) of the
    /// current cwnd), as the chain's backoff entry 2^floor(log2(w/2)) from (w/2, x) does.
    pub fn on_t3_expiry(&mut self) {
        self.ssthresh = self.halved();
        self.cwnd = self.mtu();
        self.pba = 0;
        self.in_fast_recovery = false;
        self.timeouts += 1;
    }

    fn phase(&self) -> &'static str {
        if self.in_fast_recovery {
            "recovery"
        } else if self.cwnd < self.ssthresh {
            "slow_start"
        } else {
            "congestion_avoidance"
        }
    }
}

impl Controller for Sctp {
    fn on_send(&mut self, _now: Time, ev: &SendEvent) -> u64 {
        self.flight_packets = ev.in_flight;
        0
    }

    fn on_ack(&mut self, _now: Time, ev: &AckEvent) {
        let mtu = self.mtu();
        let before = (ev.in_flight as u64 + ev.newly_acked as u64) * mtu;
        self.flight_packets = ev.in_flight;
        let u = SackUpdate {
            newly_acked: ev.newly_acked as u64 * mtu,
            cumack_advanced: ev.newly_acked > 0,
            flight_before: before,
            flight_after: ev.in_flight as u64 * mtu,
        };
        let want = self.on_sack(&u);
        self.grow(want);
    }

    fn on_congestion_event(&mut self, _now: Time, _ev: &CongestionEvent) {
        self.on_fast_retransmit();
    }

    fn on_recovery_exit(&mut self, _now: Time) {
        Sctp::on_recovery_exit(self);
    }

    fn on_rto(&mut self, _now: Time) {
        self.on_t3_expiry();
    }

    fn cwnd(&self) -> u32 {
        (self.cwnd / self.mtu()).clamp(1, u32::MAX as u64) as u32
    }

    fn state_name(&self) -> &'static str {
        self.phase()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("fast_retransmits", self.fast_retransmits),
            ("timeouts", self.timeouts),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params as _;
    use crate::testing::Script;
    use crate::LossCause;
    use ccscope_core::Dur;

    const MTU: u64 = 1500;
    const RTT: Dur = Dur::from_ms(80);

    fn sctp(mode: Mode) -> Sctp {
        Sctp::new(Params {
            mode,
            ..Default::default()
        })
    }

    fn sack(newly: u64, before: u64) -> SackUpdate {
        SackUpdate {
            newly_acked: newly,
            cumack_advanced: true,
            flight_before: before,
            flight_after: before.saturating_sub(newly),
        }
    }

    #[test]
    fn initial_window_is_rfc4960s_and_whole_packets_in_model_mode() {
        // RFC 4960 §7.2.1: min(4 * 1500, max(3000, 4380)) = 4380.
        assert_eq!(sctp(Mode::Rfc4960).cwnd_bytes(), 4380);
        assert_eq!(sctp(Mode::Model).cwnd_bytes(), 2 * MTU);
    }

    #[test]
    fn slow_start_adds_the_lesser_of_newly_acked_bytes_and_one_mtu() {
        let mut c = sctp(Mode::Model);
        // Eq. 2: a SACK of two packets adds one MTU; of 500 bytes, 500.
        assert_eq!(c.on_sack(&sack(2 * MTU, 2 * MTU)), MTU);
        assert_eq!(c.on_sack(&sack(500, 2 * MTU)), 500);
        // RFC 4960 §7.2.1: no growth when the window was not fully used, or without cumack progress.
        assert_eq!(c.on_sack(&sack(MTU, MTU)), 0);
        assert_eq!(
            c.on_sack(&SackUpdate {
                cumack_advanced: false,
                ..sack(MTU, 2 * MTU)
            }),
            0
        );
    }

    /// ACK the oldest packet and refill the window, as a bulk sender does.
    fn ack_and_refill(s: &mut Script<Sctp>) {
        s.ack_oldest(RTT);
        s.fill_window();
    }

    #[test]
    fn slow_start_through_the_trait_adds_one_mtu_per_packet_acked_from_a_full_window() {
        let mut s = Script::new(sctp(Mode::Model));
        s.bytes = MTU as u32;
        s.fill_window();
        for expected in 3..=12 {
            ack_and_refill(&mut s);
            assert_eq!(s.cc.cwnd(), expected);
        }
        assert_eq!(s.cc.state_name(), "slow_start");
        // Acked without refilling, the window is no longer fully used: it stops growing.
        s.ack_all(RTT);
        assert_eq!(s.cc.cwnd(), 13);
    }

    #[test]
    fn congestion_avoidance_adds_one_mtu_per_cwnd_of_partially_acked_bytes_when_the_window_is_full()
    {
        let mut c = Sctp::new(Params {
            initial_ssthresh_bytes: 3000,
            ..Default::default()
        });
        assert_eq!(c.cwnd_bytes(), 3000);
        // Eq. 3: PBA 1500 < cwnd: nothing; 3000 >= cwnd and OUT >= cwnd: +1 MTU, PBA -= cwnd.
        assert_eq!(c.on_sack(&sack(MTU, 3000)), 0);
        assert_eq!(c.pba(), 1500);
        assert_eq!(c.on_sack(&sack(MTU, 3000)), MTU);
        c.grow(MTU);
        assert_eq!((c.cwnd_bytes(), c.pba()), (4500, 0));
        // OUT below cwnd before the SACK: PBA grows but the window does not.
        assert_eq!(c.on_sack(&sack(2 * MTU, 4400)), 0);
        assert_eq!(c.pba(), 3000);
        assert_eq!(c.on_sack(&sack(2 * MTU, 4500)), MTU);
        assert_eq!(c.pba(), 1500);
        // Everything acknowledged: PBA restarts (RFC 4960 §7.2.2).
        c.on_sack(&sack(MTU, MTU));
        assert_eq!(c.pba(), 0);
    }

    #[test]
    fn a_denied_congestion_avoidance_step_spends_its_partially_acked_bytes() {
        let mut c = Sctp::new(Params {
            initial_ssthresh_bytes: 3000,
            ..Default::default()
        });
        c.on_sack(&sack(MTU, 3000));
        assert_eq!(c.on_sack(&sack(MTU, 3000)), MTU);
        // Window management grants nothing: cwnd holds and the PBA of this round is used up.
        c.grow(0);
        assert_eq!((c.cwnd_bytes(), c.pba()), (3000, 0));
    }

    #[test]
    fn fast_retransmit_halves_to_whole_packets_without_a_four_mtu_floor_in_model_mode() {
        let mut c = sctp(Mode::Model);
        c.grow(5 * MTU); // 7 packets
        c.on_fast_retransmit();
        // A6: floor(7 / 2) = 3 packets; RFC 4960 would give max(5250, 6000).
        assert_eq!((c.ssthresh_bytes(), c.cwnd_bytes()), (3 * MTU, 3 * MTU));
        assert_eq!(c.state_name(), "recovery");
        // No growth in fast recovery (RFC 4960 §7.2.1 condition 3).
        assert_eq!(c.on_sack(&sack(MTU, 3 * MTU)), 0);
        c.on_recovery_exit();
        assert_eq!(c.state_name(), "congestion_avoidance");
        let mut r = sctp(Mode::Rfc4960);
        r.grow(7 * MTU - 4380);
        r.on_fast_retransmit();
        assert_eq!((r.ssthresh_bytes(), r.cwnd_bytes()), (4 * MTU, 4 * MTU));
    }

    #[test]
    fn fast_retransmit_never_leaves_less_than_one_mtu() {
        let mut c = sctp(Mode::Model);
        c.shrink(10 * MTU);
        assert_eq!(c.cwnd_bytes(), MTU);
        c.on_fast_retransmit();
        assert_eq!(c.cwnd_bytes(), MTU);
    }

    #[test]
    fn t3_expiry_leaves_one_mtu_and_half_the_window_as_ssthresh() {
        let mut s = Script::new(sctp(Mode::Model));
        s.bytes = MTU as u32;
        s.fill_window();
        for _ in 0..14 {
            ack_and_refill(&mut s);
        }
        assert_eq!(s.cc.cwnd(), 16);
        s.congestion(LossCause::Reordering);
        s.rto();
        // Paper rule 5: cwnd = 1 MTU; ssthresh = floor(8 / 2) packets; fast recovery is over.
        assert_eq!((s.cc.cwnd_bytes(), s.cc.ssthresh_bytes()), (MTU, 4 * MTU));
        assert_eq!(s.cc.state_name(), "slow_start");
        // A second expiry: ssthresh floor(1/2) -> one MTU, so the destination resumes in CA (A5).
        s.rto();
        assert_eq!((s.cc.cwnd_bytes(), s.cc.ssthresh_bytes()), (MTU, MTU));
        assert_eq!(s.cc.state_name(), "congestion_avoidance");
        assert_eq!(
            s.cc.counters(),
            vec![("fast_retransmits", 1), ("timeouts", 2)]
        );
    }

    #[test]
    fn t3_in_fast_recovery_halves_the_already_halved_window_per_rfc4960_7_2_3() {
        let mut c = sctp(Mode::Model);
        c.grow(14 * MTU); // 16 packets
        c.on_fast_retransmit();
        assert_eq!(c.cwnd_bytes(), 8 * MTU);
        // §7.2.3: ssthresh = cwnd/2 of the cwnd at expiry (8), not of the window before the loss.
        c.on_t3_expiry();
        assert_eq!((c.ssthresh_bytes(), c.cwnd_bytes()), (4 * MTU, MTU));
        assert!(!c.in_fast_recovery());
        let mut r = sctp(Mode::Rfc4960);
        r.grow(32 * MTU - 4380);
        r.on_fast_retransmit();
        r.on_t3_expiry();
        // RFC mode: max(16 MTU / 2, 4 MTU) = 8 MTU.
        assert_eq!((r.ssthresh_bytes(), r.cwnd_bytes()), (8 * MTU, MTU));
    }

    #[test]
    fn growth_stops_at_the_window_cap() {
        let mut c = sctp(Mode::Model);
        c.set_max_cwnd(3 * MTU);
        assert_eq!(c.on_sack(&sack(MTU, 2 * MTU)), MTU);
        c.grow(MTU);
        assert_eq!(c.on_sack(&sack(MTU, 3 * MTU)), 0, "at the cap: no growth");
        let mut d = sctp(Mode::Model);
        d.set_max_cwnd(1000);
        assert_eq!(d.cwnd_bytes(), MTU, "never below one MTU");
    }

    #[test]
    fn shrink_takes_whole_requests_down_to_one_mtu() {
        let mut c = sctp(Mode::Model);
        assert_eq!(c.shrink(MTU), MTU);
        assert_eq!(c.shrink(MTU), 0);
        assert_eq!(c.cwnd_bytes(), MTU);
        let mut d = sctp(Mode::Model);
        d.cap_initial(1000);
        assert_eq!(d.cwnd_bytes(), MTU);
    }

    #[test]
    fn validate_rejects_a_tiny_mtu_and_a_threshold_below_it() {
        let key = |p: Params| p.validate().err().and_then(|e| e.key().map(str::to_string));
        assert_eq!(
            key(Params {
                mtu_bytes: 10,
                ..Default::default()
            })
            .as_deref(),
            Some("mtu_bytes")
        );
        assert_eq!(
            key(Params {
                initial_ssthresh_bytes: 100,
                ..Default::default()
            })
            .as_deref(),
            Some("initial_ssthresh_bytes")
        );
        assert_eq!(key(Params::default()), None);
    }
}
