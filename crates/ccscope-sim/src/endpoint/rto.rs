//! The reliable sender's retransmission timeout: RFC 6298 as written, or as Linux computes it.
//!
//! - `Rfc6298` (the default, as ns-3's `TcpSocketBase`): SRTT and RTTVAR with gains 1/8 and 1/4
//!   (§2.2-2.3), RTO = SRTT + max(G, 4 RTTVAR) with G = 1 ms, clamped to [min, max] (§2.4-2.5).
//! - `Linux` (net/ipv4/tcp_input.c `tcp_rtt_estimator`, include/net/tcp.h `__tcp_set_rto`): the same
//!   smoothing in integer microseconds (srtt scaled by 8, mdev by 4), but RTO = SRTT + RTTVAR where
//!   RTTVAR is the largest mean deviation seen over the last round trip, never below `tcp_rto_min`
//!   (200 ms), decaying towards it by a quarter per round; a falling RTT moves mdev 8 times more
//!   slowly. So the RTO keeps a margin of at least `rto_min` over SRTT, which spares the spurious
//!   timeouts RFC 6298's RTO (about SRTT when the RTT is steady) takes behind a full queue.
//!
//! Both double on each expiry (RFC 6298 §5.5; Linux `icsk_backoff`) and cap at `max`.

use ccscope_cc::common::RttEstimator;

use super::prr::PrrFlavour;
use super::receiver::DelayedAck;
use ccscope_core::Dur;

/// Which RTO computation a reliable flow uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RtoEstimatorKind {
    #[default]
    Rfc6298,
    Linux,
}

/// Retransmission timeouts and loss recovery: the timer's settings and the switches of the reliable
/// transport's optional mechanisms (all off by default, as the RFCs' baseline; see `linux()`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RtoParams {
    pub initial: Dur,
    /// RFC 6298: the lower clamp on the RTO. Linux: `tcp_rto_min`, the floor of RTTVAR.
    pub min: Dur,
    pub max: Dur,
    pub estimator: RtoEstimatorKind,
    /// F-RTO spurious-timeout detection and undo (RFC 5682; Linux `tcp_frto`, on by default there).
    pub frto: bool,
    /// Limited transmit (RFC 3042): a new packet on each of the first two duplicate ACKs while
    /// SND.NXT - SND.UNA stays within cwnd + 2.
    pub limited_transmit: bool,
    /// Proportional rate reduction during fast recovery (RFC 6937, Linux `tcp_cwnd_reduction`).
    pub prr: bool,
    /// Whose PRR: Linux's (the default) or ns-3.37's `TcpPrrRecovery` (`stack = "ns3"`).
    pub prr_flavour: PrrFlavour,
    /// RACK time-based loss detection (RFC 8985 §6, Linux `tcp_recovery` = 1), replacing the
    /// duplicate-ACK and SACK-count rules.
    pub rack: bool,
    /// Tail loss probe (RFC 8985 §7, Linux `tcp_early_retrans` = 3).
    pub tlp: bool,
    /// The receiver reports duplicate packets with DSACK (RFC 2883, Linux `tcp_dsack` = 1).
    pub dsack: bool,
    /// When the receiver ACKs: every packet (the default), or delayed as ns-3.37 or Linux do.
    pub delayed_ack: DelayedAck,
    /// During fast recovery only the first partial ACK restarts the retransmission timer (RFC 6582
    /// §3.2 step 5, the "Impatient" variant, as ns-3.37's `NewAck(ack, m_isFirstPartialAck)`); off:
    /// every ACK of new data restarts it (RFC 6298 §5.3, Linux).
    pub impatient: bool,
    /// Resending the lowest unacknowledged packet restarts the timer at the current RTO unless RACK's
    /// reordering timer is pending (Linux `tcp_xmit_retransmit_queue`); off: only ACKs of new data
    /// restart it (RFC 6298 §5.3, ns-3.37's `SendDataPacket` arms it only when it is not running).
    pub head_retransmit_restarts: bool,
    /// An ACK that advances nothing but newly SACKs a never-resent packet sent before the lowest
    /// unacknowledged packet's latest transmission restarts the timer at the current RTO, so a
    /// resent head still queued behind them keeps a whole RTO (net/ipv4/tcp_input.c
    /// `tcp_clean_rtx_queue`: FLAG_SET_XMIT_TIMER when the SACK RTT exceeds the head's age); off:
    /// only ACKs of new data restart it (RFC 6298 §5.3).
    pub sack_restarts: bool,
    /// One retransmission timer, as Linux's `icsk_pending` (RETRANS, REO_TIMEOUT, LOSS_PROBE):
    /// while RACK's reordering timer is pending the RTO does not run; when the reordering or probe
    /// timer gives way (its expiry, or an ACK of new data on which RACK arms nothing and no probe
    /// can be scheduled) the RTO is armed at the head's last send time + RTO
    /// (net/ipv4/tcp_input.c `tcp_rearm_rto`); off: the three deadlines run side by side.
    pub one_timer: bool,
}

impl Default for RtoParams {
    fn default() -> Self {
        // RFC 6298 §2.1 initial 1 s, §2.4 minimum 1 s (as ns-3; Linux uses 200 ms), §2.5 max 60 s.
        RtoParams {
            initial: Dur::from_ms(1000),
            min: Dur::from_ms(1000),
            max: Dur::from_ms(60_000),
            estimator: RtoEstimatorKind::Rfc6298,
            frto: false,
            limited_transmit: false,
            prr: false,
            prr_flavour: PrrFlavour::Linux,
            rack: false,
            tlp: false,
            dsack: false,
            delayed_ack: DelayedAck::None,
            impatient: false,
            head_retransmit_restarts: false,
            sack_restarts: false,
            one_timer: false,
        }
    }
}

impl RtoParams {
    /// Linux 6.x defaults: TCP_TIMEOUT_INIT 1 s, TCP_RTO_MIN 200 ms, TCP_RTO_MAX 120 s, tcp_frto = 2,
    /// tcp_recovery = 1 (RACK), tcp_early_retrans = 3 (TLP), PRR (always on in Linux), tcp_dsack = 1,
    /// delayed ACKs with quick-ACK mode (`__tcp_ack_snd_check`), one retransmission timer shared by
    /// the RTO, RACK's reordering timer and the probe (`icsk_pending`), restarted by a resent head and
    /// by SACKs of packets sent before it (`tcp_xmit_retransmit_queue`, `tcp_clean_rtx_queue`).
    /// Limited transmit stays off: Linux has no separate mechanism, its pipe (`tcp_packets_in_flight`,
    /// SACKed packets out) already lets one new packet out per duplicate ACK, as this transport's does.
    pub fn linux() -> RtoParams {
        RtoParams {
            initial: Dur::from_ms(1000),
            min: Dur::from_ms(200),
            max: Dur::from_ms(120_000),
            estimator: RtoEstimatorKind::Linux,
            frto: true,
            limited_transmit: false,
            prr: true,
            prr_flavour: PrrFlavour::Linux,
            rack: true,
            tlp: true,
            dsack: true,
            delayed_ack: DelayedAck::Linux,
            impatient: false,
            head_retransmit_restarts: true,
            sack_restarts: true,
            one_timer: true,
        }
    }

    /// ns-3.37's TcpSocketBase defaults that this transport models: RFC 6298 timer with a 1 s minimum,
    /// PRR recovery as `TcpPrrRecovery` (`TcpL4Protocol::RecoveryType`), the timer restarted only on the
    /// first partial ACK of a recovery episode, delayed ACKs (`DelAckCount` 2, `DelAckTimeout` 200 ms),
    /// no F-RTO, RACK or TLP. ns-3's
    /// `LimitedTransmit` (true) acts only without SACK; with SACK its pipe does the same as ours.
    pub fn ns3() -> RtoParams {
        RtoParams {
            prr: true,
            prr_flavour: PrrFlavour::Ns3,
            impatient: true,
            delayed_ack: DelayedAck::Ns3,
            ..RtoParams::default()
        }
    }
}

/// RTT smoothing and the RTO it gives (before back-off). Fields in declaration order (`repr(C)`):
/// the Linux state, unused by the default estimator, last, so an ACK touches fewer cache lines.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct RtoEstimator {
    params: RtoParams,
    sampled: bool,
    /// RFC 6298 smoothing (shared with the controllers).
    rfc: RttEstimator,
    // Linux state, in us: srtt << 3, mdev << 2, and the per-round maximum.
    srtt_us8: i64,
    mdev_us4: i64,
    mdev_max_us: i64,
    rttvar_us: i64,
    /// Linux `rtt_seq`: the round ends when SND.UNA passes it.
    rtt_seq: u64,
}

impl RtoEstimator {
    pub fn new(params: RtoParams) -> RtoEstimator {
        RtoEstimator {
            params,
            sampled: false,
            rfc: RttEstimator::default(),
            srtt_us8: 0,
            mdev_us4: 0,
            mdev_max_us: 0,
            rttvar_us: 0,
            rtt_seq: 0,
        }
    }

    pub fn params(&self) -> &RtoParams {
        &self.params
    }

    /// An RTT sample taken when the cumulative ACK is `snd_una` and the next new sequence `snd_nxt`.
    pub fn on_sample(&mut self, rtt: Dur, snd_una: u64, snd_nxt: u64) {
        match self.params.estimator {
            RtoEstimatorKind::Rfc6298 => self.rfc.on_sample(rtt),
            RtoEstimatorKind::Linux => self.linux_sample(rtt, snd_una, snd_nxt),
        }
        self.sampled = true;
    }

    fn linux_sample(&mut self, rtt: Dur, snd_una: u64, snd_nxt: u64) {
        let rto_min_us = (self.params.min.as_ns() / 1000) as i64;
        let mut m = (rtt.as_ns() / 1000) as i64;
        if !self.sampled {
            // tcp_rtt_estimator, first sample: srtt = m, mdev = m/2 (so RTO starts at 3 m).
            self.srtt_us8 = m << 3;
            self.mdev_us4 = m << 1;
            self.rttvar_us = self.mdev_us4.max(rto_min_us);
            self.mdev_max_us = self.rttvar_us;
            self.rtt_seq = snd_nxt;
        } else {
            m -= self.srtt_us8 >> 3;
            self.srtt_us8 += m;
            if m < 0 {
                // A falling RTT updates mdev with gain 1/32 instead of 1/4 (the Eifel-like rule).
                m = -m - (self.mdev_us4 >> 2);
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= self.mdev_us4 >> 2;
            }
            self.mdev_us4 += m;
            if self.mdev_us4 > self.mdev_max_us {
                self.mdev_max_us = self.mdev_us4;
                self.rttvar_us = self.rttvar_us.max(self.mdev_max_us);
            }
            // Once per round: RTTVAR decays towards the round's largest mdev, never below rto_min.
            if snd_una > self.rtt_seq {
                if self.mdev_max_us < self.rttvar_us {
                    self.rttvar_us -= (self.rttvar_us - self.mdev_max_us) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max_us = rto_min_us;
            }
        }
        self.srtt_us8 = self.srtt_us8.max(1);
    }

    pub fn srtt(&self) -> Option<Dur> {
        self.sampled.then(|| match self.params.estimator {
            RtoEstimatorKind::Rfc6298 => self.rfc.srtt().unwrap_or(Dur::ZERO),
            RtoEstimatorKind::Linux => Dur::from_us((self.srtt_us8 >> 3) as u64),
        })
    }

    /// The RTO after `backoff` expiries.
    pub fn rto(&self, backoff: u32) -> Dur {
        let p = &self.params;
        let base = match (self.sampled, p.estimator) {
            (false, _) => p.initial,
            // RFC 6298 §2.3: RTO = SRTT + max(G, 4 RTTVAR), G = 1 ms; §2.4 clamps below.
            (true, RtoEstimatorKind::Rfc6298) => match (self.rfc.srtt(), self.rfc.rttvar()) {
                (Some(s), Some(v)) => s + Dur::from_ms(1).max(Dur(4 * v.as_ns())),
                _ => p.initial,
            },
            // __tcp_set_rto: srtt + rttvar (rttvar already carries the 4x and the rto_min floor).
            (true, RtoEstimatorKind::Linux) => {
                Dur::from_us(((self.srtt_us8 >> 3) + self.rttvar_us) as u64)
            }
        };
        let b = Dur(base.as_ns().saturating_mul(1u64 << backoff.min(30)));
        match p.estimator {
            RtoEstimatorKind::Rfc6298 => b.max(p.min).min(p.max),
            // tcp_bound_rto: only the upper bound (the floor is in RTTVAR).
            RtoEstimatorKind::Linux => b.min(p.max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc6298_rto_follows_rfc_weights_and_clamps_to_min() {
        let mut e = RtoEstimator::new(RtoParams::default());
        assert_eq!(e.rto(0), Dur::from_ms(1000));
        e.on_sample(Dur::from_ms(100), 0, 10);
        // SRTT 100, RTTVAR 50: 100 + 200 = 300 ms, below the 1 s floor.
        assert_eq!(e.rto(0), Dur::from_ms(1000));
        e.on_sample(Dur::from_ms(200), 1, 11);
        assert_eq!(e.srtt(), Some(Dur::from_ms_f64(112.5)));
        let mut p = RtoParams::default();
        p.min = Dur::from_ms(1);
        let mut e = RtoEstimator::new(p);
        e.on_sample(Dur::from_ms(100), 0, 10);
        assert_eq!(e.rto(0), Dur::from_ms(300));
        assert_eq!(e.rto(2), Dur::from_ms(1200));
    }

    #[test]
    fn linux_first_rto_is_three_rtt_or_rtt_plus_rto_min() {
        let mut e = RtoEstimator::new(RtoParams::linux());
        e.on_sample(Dur::from_ms(40), 0, 10);
        // mdev = 2 m = 80 ms < rto_min: RTO = 40 + 200.
        assert_eq!(e.rto(0), Dur::from_ms(240));
        let mut e = RtoEstimator::new(RtoParams::linux());
        e.on_sample(Dur::from_ms(300), 0, 10);
        // mdev = 600 ms > rto_min: RTO = 300 + 600 = 3 RTT.
        assert_eq!(e.rto(0), Dur::from_ms(900));
    }

    #[test]
    fn linux_rto_keeps_rto_min_over_a_steady_rtt_where_rfc6298_collapses_to_it() {
        let mut linux = RtoEstimator::new(RtoParams::linux());
        let mut rfc = RtoEstimator::new(RtoParams {
            min: Dur::from_ms(1),
            ..RtoParams::default()
        });
        // A steady 1 s RTT (a full 1000-packet queue at 12 Mbit/s) for many rounds of 100 ACKs.
        for i in 0..10_000u64 {
            linux.on_sample(Dur::from_ms(1000), i, i + 100);
            rfc.on_sample(Dur::from_ms(1000), i, i + 100);
        }
        let margin = |e: &RtoEstimator| e.rto(0) - e.srtt().unwrap();
        assert!(
            margin(&rfc) <= Dur::from_ms(2),
            "RFC 6298 margin {:?}",
            margin(&rfc)
        );
        assert!(
            margin(&linux) >= Dur::from_ms(200),
            "Linux margin {:?}",
            margin(&linux)
        );
        assert!(
            margin(&linux) <= Dur::from_ms(210),
            "Linux margin {:?}",
            margin(&linux)
        );
    }

    #[test]
    fn linux_rttvar_rises_at_once_and_decays_by_a_quarter_per_round() {
        let mut e = RtoEstimator::new(RtoParams::linux());
        e.on_sample(Dur::from_ms(100), 0, 10);
        for i in 1..200 {
            e.on_sample(Dur::from_ms(100), i, i + 10);
        }
        let steady = e.rto(0);
        // A 400 ms jump raises mdev by (300 - mdev/4)/4 us at once; RTTVAR follows in the same ACK.
        e.on_sample(Dur::from_ms(400), 200, 210);
        assert!(e.rto(0) > steady + Dur::from_ms(100));
        let high = e.rto(0);
        // Steady again: each round takes a quarter of the gap to the round's largest mdev.
        for i in 201..260 {
            e.on_sample(Dur::from_ms(100), i * 20, i * 20 + 10);
        }
        assert!(e.rto(0) < high);
        assert!(e.rto(0) >= e.srtt().unwrap() + Dur::from_ms(200));
    }

    #[test]
    fn linux_bounds_only_above_and_backs_off_to_max() {
        let mut e = RtoEstimator::new(RtoParams::linux());
        e.on_sample(Dur::from_ms(10), 0, 10);
        assert_eq!(e.rto(0), Dur::from_ms(210));
        assert_eq!(e.rto(30), Dur::from_ms(120_000));
    }
}
