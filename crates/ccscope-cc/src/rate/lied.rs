//! Generic linear-increase/exponential-decrease rate control of paper 003 (Tuan and Park, §3.1.1 eq. 3),
//! driven by the loss-penalised throughput gamma_k = (1 - c)^k nu (§3.1.2 eq. 4), in the reference
//! discretisation of specs/003-mtsc.md §2.1.
//!
//! - **Epochs.** lambda (packets/s) is constant within an epoch of tau = max(srtt, `tau_floor_ms`) taken
//!   at the epoch's start; packets are paced at lambda and tagged with their epoch (the `on_send` tag).
//!   The first epoch starts with the first packet; an epoch in which nothing was sent is extended.
//! - **Measurement.** nu_e = bytes of epoch e delivered / (first arrival of epoch e+1 - first arrival of
//!   e), c_e = lost_e / sent_e, gamma_e = (1 - c_e)^k nu_e. It is computed here, at the sender, from the
//!   packets each ACK delivers (`on_packet_acked`, by their own epoch tags), the arrival time the ACK
//!   echoes, and the loss events. With an ACK per packet (the paper's datagrams) it equals the
//!   receiver's definition: ACKs are never lost on the paper's uncongested reverse path, so the ACKed
//!   packets of an epoch are the packets that arrived, with their arrival times; and the epoch is only
//!   measured once each of its packets is ACKed or declared lost, so lost = sent - arrived except for a
//!   packet declared lost that still arrives (a spurious loss, which a FIFO path without reordering only
//!   produces past the 1 s no-ACK timeout). A delayed ACK reports only its earliest packet's arrival
//!   (RFC 7323 §4.3): the span then runs between the first reported arrivals, and nu counts the bytes
//!   that arrived within it (an epoch's packets acknowledged before its first reported arrival belong to
//!   the span before), so it is still the arrival rate over the span. An epoch with nothing delivered
//!   has gamma = 0 and no span; the previous epoch's span then runs to the next arrival (one whose
//!   packets all arrived unreported takes the previous epoch's nu).
//! - **Update**, once per measured epoch: s = sign(gamma_e - gamma_{e-1}) sign(lambda_e - lambda_{e-1});
//!   s >= 0 (or no earlier epoch): lambda += delta / tau; s < 0: lambda *= 1 - a; then lambda is clamped
//!   to [1 packet / tau, `max_rate_mbps`]. An epoch held at the upper clamp (lambda_e = lambda_{e-1} =
//!   the clamp) is compared with the last epoch sent below it: otherwise s = 0 at every epoch there and
//!   the decrease could never fire again (docs/deviations.md, "Paper 003: LIED and SAC").
//! - **Sending.** Packets are paced at lambda as it was at the epoch's start (an update takes effect at
//!   the next epoch); `cwnd` is `window_pkts` (huge), so only pacing limits sending (spec §1.2).

use std::collections::VecDeque;

use ccscope_core::{Bandwidth, Dur, Time};
use serde::{Deserialize, Serialize};

use crate::common::RttEstimator;
use crate::params::{check_timer_ms, invalid, ParamError, ParamSpec};
use crate::{AckEvent, Controller, LossEvent, PacketAcked, SendEvent};

/// Packet size assumed before the first packet is sent (paper 003 §4.1: MSS 1 kB).
const DEFAULT_PACKET_BYTES: u32 = 1000;
/// Unmeasured epochs kept at most; older ones are dropped unmeasured (a path that stopped answering).
const MAX_PENDING_EPOCHS: usize = 4096;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Linear increase delta per epoch, in packets per tau (spec §2.1 [D]: 1, the TCP-CA analogue).
    pub delta_pkts: f64,
    /// Exponential decrease: lambda *= 1 - a (spec §2.1 [D]: 0.125, DECbit's x0.875).
    pub a: f64,
    /// Loss penalty exponent of gamma_k = (1 - c)^k nu (paper 003 eq. 4; spec §2.1 [D]: 1).
    pub k: f64,
    /// Floor of the epoch length tau = srtt (spec §2.1 [D]: 20 ms).
    pub tau_floor_ms: f64,
    /// Upper clamp of lambda, the access-link rate (spec §1.1, §2.1: 10 Mbit/s).
    pub max_rate_mbps: f64,
    /// Initial lambda in packets per tau (ours: 1, the lower clamp).
    pub initial_pkts_per_tau: f64,
    /// Window in packets, large so that only pacing limits sending (spec §1.2 [D]).
    pub window_pkts: u32,
    /// No-ACK time before the datagram transport declares packets lost and sends one (datagrump: 1000 ms).
    pub timeout_ms: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            delta_pkts: 1.0,
            a: 0.125,
            k: 1.0,
            tau_floor_ms: 20.0,
            max_rate_mbps: 10.0,
            initial_pkts_per_tau: 1.0,
            window_pkts: 100_000,
            timeout_ms: 1000.0,
        }
    }
}

/// The Params docs, shared with `sac` (which embeds these parameters).
pub(crate) const SPEC: &[ParamSpec] = &[
    ParamSpec {
        name: "delta_pkts",
        unit: "packets/tau",
        doc: "linear increase per epoch, delta (paper 003 eq. 3; spec §2.1 [D]: 1)",
    },
    ParamSpec {
        name: "a",
        unit: "ratio",
        doc: "exponential decrease lambda *= 1 - a (paper 003 eq. 3; spec §2.1 [D]: 0.125)",
    },
    ParamSpec {
        name: "k",
        unit: "exponent",
        doc: "loss penalty of gamma_k = (1 - c)^k nu (paper 003 eq. 4; spec §2.1 [D]: 1)",
    },
    ParamSpec {
        name: "tau_floor_ms",
        unit: "ms",
        doc: "floor of the epoch length tau = srtt (spec §2.1 [D]: 20)",
    },
    ParamSpec {
        name: "max_rate_mbps",
        unit: "Mbit/s",
        doc: "upper clamp of lambda, the access-link rate (spec §1.1, §2.1: 10)",
    },
    ParamSpec {
        name: "initial_pkts_per_tau",
        unit: "packets/tau",
        doc: "initial lambda (ours: 1, the lower clamp)",
    },
    ParamSpec {
        name: "window_pkts",
        unit: "packets",
        doc: "window, huge so only pacing limits sending (spec §1.2 [D])",
    },
    ParamSpec {
        name: "timeout_ms",
        unit: "ms",
        doc: "no-ACK time before losses are declared and one packet is sent (datagrump: 1000)",
    },
];

impl Params {
    pub(crate) fn check(&self) -> Result<(), ParamError> {
        let positive = |key: &str, v: f64| {
            if v > 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err(invalid(key, "must be > 0 and finite"))
            }
        };
        positive("delta_pkts", self.delta_pkts)?;
        if !(self.a > 0.0 && self.a < 1.0) {
            return Err(invalid("a", "must be in (0, 1)"));
        }
        if !(self.k >= 0.0 && self.k.is_finite()) {
            return Err(invalid("k", "must be >= 0 and finite"));
        }
        check_timer_ms("tau_floor_ms", self.tau_floor_ms)?;
        positive("max_rate_mbps", self.max_rate_mbps)?;
        positive("initial_pkts_per_tau", self.initial_pkts_per_tau)?;
        if self.window_pkts < 1 || self.window_pkts > 1_000_000 {
            return Err(invalid("window_pkts", "must be in [1, 1000000]"));
        }
        check_timer_ms("timeout_ms", self.timeout_ms)
    }
}

impl crate::params::Params for Params {
    const SPEC: &'static [ParamSpec] = SPEC;
    fn validate(&self) -> Result<(), ParamError> {
        self.check()
    }
}

/// gamma_k = (1 - c)^k nu (paper 003 §3.1.2 eq. 4).
pub fn penalised_throughput(nu: f64, c: f64, k: f64) -> f64 {
    (1.0 - c).max(0.0).powf(k) * nu
}

/// Which way an epoch's measurement moved lambda (eq. 3's two branches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Increase,
    Decrease,
}

/// One measured epoch and the update it caused.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Report {
    pub epoch: u64,
    /// nu_e in bytes/s.
    pub nu: f64,
    /// c_e, lost over sent.
    pub c: f64,
    /// gamma_e in bytes/s.
    pub gamma: f64,
    /// [first arrival of e, first arrival of the next epoch that had one); `None` if nothing arrived.
    pub span: Option<(Time, Time)>,
    /// Data bytes the receiving host got (every flow's) over the span's (start, end], from the host
    /// totals the two bounding ACKs reported; `None` without host feedback (`AckEvent::host_bytes`).
    pub host_bytes: Option<u64>,
    pub step: Step,
}

#[derive(Clone, Copy, Debug)]
struct Epoch {
    id: u64,
    /// lambda during the epoch, packets/s.
    lambda: f64,
    sent: u32,
    acked: u32,
    lost: u32,
    delivered_bytes: u64,
    /// Bytes of it that arrived before its first known arrival (a delayed ACK reports only the
    /// arrival of the packet it echoes): they fall in the previous epoch's span.
    early_bytes: u64,
    first_recv: Option<Time>,
    /// The host total the ACK of the first arrival reported.
    first_host: Option<u64>,
    /// No more packets will be sent in it.
    closed: bool,
}

impl Epoch {
    fn new(id: u64, lambda: f64) -> Epoch {
        Epoch {
            id,
            lambda,
            sent: 0,
            acked: 0,
            lost: 0,
            delivered_bytes: 0,
            early_bytes: 0,
            first_recv: None,
            first_host: None,
            closed: false,
        }
    }
    fn resolved(&self) -> bool {
        self.closed && self.acked + self.lost >= self.sent
    }
}

#[derive(Debug)]
pub struct Lied {
    p: Params,
    rtt: RttEstimator,
    packet_bytes: u32,
    /// lambda, packets/s: updated as epochs are measured.
    lambda: f64,
    /// The pacing rate, packets/s: lambda at the current epoch's start (constant within an epoch, spec §2.1).
    paced: f64,
    /// Length of the current epoch.
    tau: Dur,
    /// End of the current epoch; `None` before the first packet.
    epoch_end: Option<Time>,
    /// Unmeasured epochs, oldest first; the back one is the current epoch.
    epochs: VecDeque<Epoch>,
    /// (lambda, gamma) of the last measured epoch.
    prev: Option<(f64, f64)>,
    /// (lambda, gamma) of the last measured epoch sent below the upper clamp.
    below_cap: Option<(f64, f64)>,
    /// nu of the last measured epoch, bytes/s.
    last_nu: f64,
    measured: u64,
    increases: u64,
    decreases: u64,
    dropped: u64,
}

impl Lied {
    pub fn new(p: Params) -> Self {
        let tau = Dur::from_ms_f64(p.tau_floor_ms);
        let lambda = p.initial_pkts_per_tau / tau.as_secs_f64();
        let mut l = Lied {
            p,
            rtt: RttEstimator::default(),
            packet_bytes: DEFAULT_PACKET_BYTES,
            lambda,
            paced: lambda,
            tau,
            epoch_end: None,
            epochs: VecDeque::new(),
            prev: None,
            below_cap: None,
            last_nu: 0.0,
            measured: 0,
            increases: 0,
            decreases: 0,
            dropped: 0,
        };
        l.lambda = l.clamped(lambda);
        l.paced = l.lambda;
        l
    }

    /// lambda in packets/s (the next epoch's rate).
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// The current epoch length tau.
    pub fn tau(&self) -> Dur {
        self.tau
    }

    fn max_rate_pkts(&self) -> f64 {
        self.p.max_rate_mbps * 1e6 / (8.0 * self.packet_bytes as f64)
    }

    // Spec §2.1 [D]: lambda in [1 packet / tau, access-link rate].
    fn clamped(&self, lambda: f64) -> f64 {
        let lo = 1.0 / self.tau.as_secs_f64();
        lambda
            .min(self.max_rate_pkts())
            .max(lo.min(self.max_rate_pkts()))
    }

    /// Add `pkts_per_tau` packets per tau to lambda, then clamp (SAC's a_t, paper 003 §3.2.2).
    pub fn add_rate(&mut self, pkts_per_tau: f64) {
        self.lambda = self.clamped(self.lambda + pkts_per_tau / self.tau.as_secs_f64());
    }

    /// Eq. 3 discretised (spec §2.1 [D]): the update for an epoch sent at `lambda_e` that measured `gamma_e`.
    pub(crate) fn apply(&mut self, lambda_e: f64, gamma_e: f64) -> Step {
        let cap = self.max_rate_pkts();
        let s = match (self.prev, self.below_cap) {
            (None, _) => 0.0,
            // Eq. 3 reads dgamma/dlambda from a rate change: held at the upper clamp an increase cannot move
            // lambda, so the rate is judged against the last epoch sent below it (else s = 0 for ever);
            // only while lambda is still held there, so an epoch in flight across a cut does not cut again.
            (Some((l0, _)), Some((l1, g1)))
                if lambda_e == l0 && lambda_e >= cap && self.lambda >= cap =>
            {
                sign(gamma_e - g1) * sign(lambda_e - l1)
            }
            (Some((l0, g0)), _) => sign(gamma_e - g0) * sign(lambda_e - l0),
        };
        self.prev = Some((lambda_e, gamma_e));
        if lambda_e < cap {
            self.below_cap = Some((lambda_e, gamma_e));
        }
        let step = if s >= 0.0 {
            // dgamma/dlambda > 0 (or no evidence of < 0): lambda += delta, delta in packets per tau.
            self.lambda += self.p.delta_pkts / self.tau.as_secs_f64();
            self.increases += 1;
            Step::Increase
        } else {
            // dgamma/dlambda < 0: lambda -= a lambda.
            self.lambda *= 1.0 - self.p.a;
            self.decreases += 1;
            Step::Decrease
        };
        self.lambda = self.clamped(self.lambda);
        step
    }

    fn index(&self, tag: u64) -> Option<usize> {
        let front = self.epochs.front()?.id;
        let i = tag.checked_sub(front)? as usize;
        (i < self.epochs.len()).then_some(i)
    }

    /// Measure the oldest epoch if it is complete and apply eq. 3 for it; `None` if it is not yet.
    /// Callers loop until `None` (SAC acts between two measurements).
    pub fn next_report(&mut self) -> Option<Report> {
        let e = *self.epochs.front()?;
        if !e.resolved() {
            return None;
        }
        let c = if e.sent == 0 {
            0.0
        } else {
            e.lost as f64 / e.sent as f64
        };
        let (nu, span, host_bytes) = match e.first_recv {
            None if e.delivered_bytes == 0 => (0.0, None, None),
            // Arrivals without a reported time (a delayed ACK's later packets): they fell inside the
            // previous span, whose rate they share.
            None => (self.last_nu, None, None),
            Some(r0) => {
                // The next epoch with an arrival bounds this one's receive span; what arrived in it is
                // this epoch's bytes from r0 on and the later epochs' bytes that came before r1.
                let mut bytes = e.delivered_bytes - e.early_bytes;
                let mut bound = None;
                for x in self.epochs.iter().skip(1) {
                    bytes += x.early_bytes;
                    if let Some(r) = x.first_recv {
                        bound = Some((r, x.first_host));
                        break;
                    }
                }
                let (r1, h1) = bound?;
                let secs = r1.since(r0).as_secs_f64().max(1e-9);
                // The host's arrivals between the two bounding ACKs' reports (spec §6 item 1).
                let host = e.first_host.zip(h1).map(|(h0, h1)| h1.saturating_sub(h0));
                (bytes as f64 / secs, Some((r0, r1.max(r0))), host)
            }
        };
        self.last_nu = nu;
        self.epochs.pop_front();
        let gamma = penalised_throughput(nu, c, self.p.k);
        let step = self.apply(e.lambda, gamma);
        self.measured += 1;
        Some(Report {
            epoch: e.id,
            nu,
            c,
            gamma,
            span,
            host_bytes,
            step,
        })
    }

    /// Count a packet an ACK delivered into the epoch it was sent in (`on_packet_acked`: a delayed ACK's
    /// two packets may belong to two epochs); its arrival, when the ACK echoes it, bounds the epoch's span.
    pub fn record_packet(&mut self, ev: &PacketAcked) {
        if let Some(i) = self.index(ev.tag) {
            let e = &mut self.epochs[i];
            e.acked += 1;
            e.delivered_bytes += ev.bytes as u64;
            match ev.recv_time {
                Some(recv) => {
                    if e.first_recv.is_none_or(|r| recv < r) {
                        e.first_recv = Some(recv);
                        e.first_host = ev.host_bytes;
                    }
                }
                // A delayed ACK echoes its earliest packet, so this one came after an earlier epoch's.
                None if e.first_recv.is_none() => e.early_bytes += ev.bytes as u64,
                None => {}
            }
        }
    }

    /// The ACK itself (the first half of `on_ack`, after its packets; `next_report` measures): its RTT.
    pub fn record_ack(&mut self, ev: &AckEvent) {
        self.rtt.on_sample(ev.rtt);
    }

    /// Count a loss into its epoch (the first half of `on_loss`).
    pub fn record_loss(&mut self, ev: &LossEvent) {
        if let Some(i) = self.index(ev.tag) {
            self.epochs[i].lost += 1;
        }
    }

    /// The epoch clock (the first half of `on_timer`): a new epoch at the end of one in which something
    /// was sent; one in which nothing was sent goes on for another tau.
    pub fn tick(&mut self, now: Time) {
        let Some(end) = self.epoch_end else { return };
        if now < end {
            return;
        }
        if self.epochs.back().is_some_and(|e| e.sent > 0) {
            self.start_epoch(now);
        } else {
            self.epoch_end = Some(now + self.tau);
        }
    }

    fn measure_all(&mut self) {
        while self.next_report().is_some() {}
    }

    /// `on_send`: opens the first epoch; the tag is the epoch id.
    pub fn send(&mut self, now: Time, ev: &SendEvent) -> u64 {
        self.packet_bytes = ev.bytes.max(1);
        if self.epoch_end.is_none() {
            self.start_epoch(now);
        }
        let e = self
            .epochs
            .back_mut()
            .expect("an epoch is open once the first packet is sent");
        e.sent += 1;
        e.id
    }

    fn start_epoch(&mut self, now: Time) {
        let next = self.epochs.back().map_or(0, |e| e.id + 1);
        if let Some(e) = self.epochs.back_mut() {
            e.closed = true;
        }
        if self.epochs.len() >= MAX_PENDING_EPOCHS {
            self.epochs.pop_front();
            self.dropped += 1;
        }
        // Spec §2.1 [D]: tau = srtt at the epoch's start, floor 20 ms.
        let floor = Dur::from_ms_f64(self.p.tau_floor_ms);
        self.tau = self.rtt.srtt().map_or(floor, |s| s.max(floor));
        self.lambda = self.clamped(self.lambda);
        self.paced = self.lambda;
        self.epochs.push_back(Epoch::new(next, self.lambda));
        self.epoch_end = Some(now + self.tau);
    }

    pub(crate) fn counters_into(&self, v: &mut Vec<(&'static str, u64)>) {
        v.push(("lied_epochs_measured", self.measured));
        v.push(("lied_increases", self.increases));
        v.push(("lied_decreases", self.decreases));
        v.push(("lied_epochs_dropped", self.dropped));
    }
}

fn sign(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

impl Controller for Lied {
    fn on_send(&mut self, now: Time, ev: &SendEvent) -> u64 {
        self.send(now, ev)
    }
    fn on_packet_acked(&mut self, _now: Time, ev: &PacketAcked) {
        self.record_packet(ev);
    }
    fn on_ack(&mut self, _now: Time, ev: &AckEvent) {
        self.record_ack(ev);
        self.measure_all();
    }
    fn on_loss(&mut self, _now: Time, ev: &LossEvent) {
        self.record_loss(ev);
        self.measure_all();
    }
    fn on_timer(&mut self, now: Time) {
        self.tick(now);
        self.measure_all();
    }
    fn next_timer(&self) -> Option<Time> {
        self.epoch_end
    }
    fn cwnd(&self) -> u32 {
        self.p.window_pkts
    }
    fn pacing_rate(&self) -> Option<Bandwidth> {
        Some(Bandwidth::from_bps(
            (self.paced * self.packet_bytes as f64 * 8.0)
                .round()
                .max(1.0) as u64,
        ))
    }
    fn timeout(&self) -> Dur {
        Dur::from_ms_f64(self.p.timeout_ms)
    }
    fn state_name(&self) -> &'static str {
        match self.prev {
            None => "start",
            Some(_) => "run",
        }
    }
    fn wants_packet_acks(&self) -> bool {
        true
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut v = Vec::new();
        self.counters_into(&mut v);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params as _;
    use crate::testing::{assert_close, Script};
    use crate::LossCause;

    fn lied() -> Lied {
        Lied::new(Params::default())
    }

    #[test]
    fn initial_rate_is_one_packet_per_tau_floor_and_paced() {
        let l = lied();
        assert_close(l.lambda(), 50.0);
        // 50 packets/s of 1000 B = 400 kbit/s.
        assert_eq!(l.pacing_rate(), Some(Bandwidth::from_bps(400_000)));
        assert_eq!(l.cwnd(), 100_000);
        assert_eq!(
            l.next_timer(),
            None,
            "the epoch clock starts with the first packet"
        );
    }

    #[test]
    fn rising_rate_with_rising_gamma_increases_by_delta_per_tau() {
        let mut l = lied();
        assert_eq!(
            l.apply(50.0, 1000.0),
            Step::Increase,
            "no earlier epoch: increase"
        );
        assert_close(l.lambda(), 100.0);
        // lambda up, gamma up: s = +1.
        assert_eq!(l.apply(100.0, 2000.0), Step::Increase);
        assert_close(l.lambda(), 150.0);
        // lambda down, gamma down: s = +1 as well (dgamma/dlambda > 0).
        assert_eq!(l.apply(90.0, 1500.0), Step::Increase);
        // Equal rates: increase whatever gamma did.
        assert_eq!(l.apply(90.0, 100.0), Step::Increase);
        // Equal gamma: s = 0, increase.
        assert_eq!(l.apply(95.0, 100.0), Step::Increase);
        assert_close(l.lambda(), 300.0);
    }

    #[test]
    fn opposite_moves_of_rate_and_gamma_cut_by_one_minus_a() {
        let mut l = lied();
        l.apply(100.0, 5000.0);
        assert_close(l.lambda(), 100.0);
        // lambda up, gamma down: s = -1, lambda *= 0.875.
        assert_eq!(l.apply(120.0, 4000.0), Step::Decrease);
        assert_close(l.lambda(), 87.5);
        // lambda down, gamma up: s = -1 again.
        assert_eq!(l.apply(110.0, 4500.0), Step::Decrease);
        assert_close(l.lambda(), 76.5625);
        assert_eq!(
            l.counters(),
            [
                ("lied_epochs_measured", 0),
                ("lied_increases", 1),
                ("lied_decreases", 2),
                ("lied_epochs_dropped", 0)
            ]
        );
    }

    #[test]
    fn rate_is_clamped_to_one_packet_per_tau_and_the_access_rate() {
        let mut l = lied();
        l.apply(100.0, 5000.0);
        for i in 0..40 {
            l.apply(200.0 + i as f64, 4000.0 - i as f64);
        }
        // 1 packet per 20 ms.
        assert_close(l.lambda(), 50.0);
        let mut l = Lied::new(Params {
            delta_pkts: 1000.0,
            ..Default::default()
        });
        l.apply(1.0, 1.0);
        // 10 Mbit/s of 1000 B packets = 1250 packets/s.
        assert_close(l.lambda(), 1250.0);
    }

    #[test]
    fn held_at_the_access_rate_a_gamma_below_the_last_epoch_under_it_cuts_lambda() {
        // 24 packets per 20 ms = 1200 packets/s; the clamp is 1250 (10 Mbit/s of 1000 B).
        let mut l = Lied::new(Params {
            initial_pkts_per_tau: 24.0,
            ..Default::default()
        });
        assert_eq!(l.apply(1200.0, 1_200_000.0), Step::Increase);
        assert_close(l.lambda(), 1250.0);
        // Rate up to the clamp, gamma up: increase (a no-op at the clamp).
        assert_eq!(l.apply(1250.0, 1_240_000.0), Step::Increase);
        assert_close(l.lambda(), 1250.0);
        // Held at the clamp (lambda_e = lambda_e-1): eq. 3's dgamma/dlambda is read against the last epoch
        // sent below it (1200 packets/s, 1.2 MB/s); gamma above it keeps the rate.
        assert_eq!(l.apply(1250.0, 1_210_000.0), Step::Increase);
        assert_close(l.lambda(), 1250.0);
        // Gamma below it: the rate rose and gamma fell, dgamma/dlambda < 0: lambda *= 1 - a.
        assert_eq!(l.apply(1250.0, 1_100_000.0), Step::Decrease);
        assert_close(l.lambda(), 1093.75);
        // Rate down, gamma down: increase; below the clamp an unchanged rate still increases whatever
        // gamma did (spec §2.1 [D]).
        assert_eq!(l.apply(1093.75, 1_000_000.0), Step::Increase);
        assert_eq!(l.apply(1093.75, 900_000.0), Step::Increase);
        assert_close(l.lambda(), 1193.75);
    }

    #[test]
    fn an_epoch_sent_at_the_clamp_before_the_cut_took_effect_does_not_cut_again() {
        let mut l = Lied::new(Params {
            initial_pkts_per_tau: 24.0,
            ..Default::default()
        });
        l.apply(1200.0, 1_200_000.0);
        l.apply(1250.0, 1_240_000.0);
        assert_eq!(l.apply(1250.0, 1_100_000.0), Step::Decrease);
        assert_close(l.lambda(), 1093.75);
        // The next epoch was sent at the clamp before that cut (an update takes effect at the next
        // epoch): lambda is no longer held there, so the same evidence must not cut a second time;
        // an unchanged rate increases (spec §2.1 [D]).
        assert_eq!(l.apply(1250.0, 1_150_000.0), Step::Increase);
        assert_close(l.lambda(), 1143.75);
    }

    #[test]
    fn an_epoch_is_measured_from_arrival_times_and_losses() {
        let mut s = Script::new(lied());
        s.bytes = 1000;
        // Epoch 0 at t = 0 (tau = 20 ms, no RTT yet): 4 packets.
        s.send(4);
        assert_eq!(s.cc.next_timer(), Some(Time::from_ms(20)));
        s.advance(Dur::from_ms(20));
        // Epoch 1 at t = 20 ms: 2 packets.
        s.send(2);
        // Packets 0, 1, 2 of epoch 0 arrive at 10 ms (RTT 20 ms); packet 3 is lost.
        s.ack_oldest(Dur::from_ms(20));
        s.ack_oldest(Dur::from_ms(20));
        s.ack_oldest(Dur::from_ms(20));
        s.lose_oldest(LossCause::Reordering);
        assert_eq!(s.cc.measured, 0, "epoch 0 needs epoch 1's first arrival");
        let mut out = Vec::new();
        // Packet 4 (epoch 1, sent at 20 ms) arrives at 35 ms.
        ack_at(&mut s, 35, 30, &mut out);
        assert_eq!(out.len(), 1);
        let r = out[0];
        assert_eq!(r.epoch, 0);
        // nu = 3000 B / 25 ms; c = 1/4; gamma_1 = 0.75 nu (eq. 4, k = 1).
        assert_close(r.nu, 120_000.0);
        assert_close(r.c, 0.25);
        assert_close(r.gamma, 90_000.0);
        assert_eq!(r.span, Some((Time::from_ms(10), Time::from_ms(35))));
        assert_eq!(r.step, Step::Increase);
        // The current epoch's tau is still the 20 ms floor: +1 packet per 20 ms.
        assert_close(s.cc.lambda(), 100.0);
    }

    #[test]
    fn a_delayed_ack_credits_every_packet_it_delivers_to_the_epoch() {
        // As above, with packets 0 and 1 acknowledged by one delayed ACK: the same 3000 B arrive.
        let mut s = Script::new(lied());
        s.bytes = 1000;
        s.send(4);
        s.advance(Dur::from_ms(20));
        s.send(2);
        s.ack_oldest_n(2, Dur::from_ms(20));
        s.ack_oldest(Dur::from_ms(20));
        s.lose_oldest(LossCause::Reordering);
        let mut out = Vec::new();
        ack_at(&mut s, 35, 30, &mut out);
        assert_eq!(out.len(), 1);
        assert_close(out[0].nu, 120_000.0);
        assert_close(out[0].c, 0.25);
    }

    /// ACK the oldest packet in flight as arriving at `recv_ms`, collecting the measured epochs.
    fn ack_at(s: &mut Script<Lied>, recv_ms: u64, rtt_ms: u64, out: &mut Vec<Report>) {
        ack_n_at(s, 1, recv_ms, rtt_ms, out)
    }

    /// One ACK of the `n` oldest packets in flight (a delayed ACK when `n` > 1), reporting the first's
    /// arrival at `recv_ms` only (RFC 7323 §4.3), collecting the measured epochs.
    fn ack_n_at(s: &mut Script<Lied>, n: usize, recv_ms: u64, rtt_ms: u64, out: &mut Vec<Report>) {
        let (seq, sent, tag) = *s.in_flight.front().expect("a packet in flight");
        for i in 0..n {
            let (seq, sent, tag) = s.in_flight.pop_front().expect("a packet in flight");
            s.cc.record_packet(&PacketAcked {
                seq,
                bytes: 1000,
                send_time: sent,
                tag,
                recv_time: (i == 0).then(|| Time::from_ms(recv_ms)),
                host_bytes: None,
            });
        }
        let ev = AckEvent {
            seq,
            bytes: 1000,
            send_time: sent,
            recv_time: Time::from_ms(recv_ms),
            rtt: Dur::from_ms(rtt_ms),
            ca_rtt: Dur::from_ms(rtt_ms),
            in_flight: 0,
            last_sent_seq: seq,
            tag,
            newly_acked: n as u32,
            snd_una_advanced: true,
            in_recovery: false,
            rate: None,
            host_bytes: None,
        };
        s.cc.record_ack(&ev);
        while let Some(r) = s.cc.next_report() {
            out.push(r);
        }
    }

    #[test]
    fn a_delayed_ack_across_an_epoch_boundary_counts_each_packet_in_its_epoch_and_its_arrival_in_the_span_it_fell_in(
    ) {
        let mut s = Script::new(lied());
        s.bytes = 1000;
        // Epochs 0, 1, 2 at 0, 20, 40 ms: packets 0-2, 3-5, 6.
        s.send(3);
        s.advance(Dur::from_ms(20));
        s.send(3);
        s.advance(Dur::from_ms(20));
        s.send(1);
        let mut out = Vec::new();
        ack_n_at(&mut s, 2, 10, 20, &mut out);
        // Packets 2 and 3 in one ACK echoing 2: packet 3 (epoch 1) arrived after epoch 0's first arrival.
        ack_n_at(&mut s, 2, 12, 20, &mut out);
        assert!(out.is_empty());
        ack_n_at(&mut s, 2, 30, 20, &mut out);
        ack_at(&mut s, 50, 20, &mut out);
        assert_eq!(out.len(), 2);
        // Epoch 0's 3000 B and packet 3's 1000 B arrived in [10, 30) ms.
        assert_eq!(out[0].span, Some((Time::from_ms(10), Time::from_ms(30))));
        assert_close(out[0].nu, 200_000.0);
        // Epoch 1 is complete (its three packets acknowledged, none lost): packets 4 and 5 in [30, 50) ms.
        assert_eq!(out[1].span, Some((Time::from_ms(30), Time::from_ms(50))));
        assert_close(out[1].nu, 100_000.0);
        assert_close(out[1].c, 0.0);
    }

    #[test]
    fn an_epoch_with_nothing_delivered_has_zero_gamma_and_the_span_before_it_runs_to_the_next_arrival(
    ) {
        let mut s = Script::new(lied());
        // Epochs 0, 1, 2 at 0, 20, 40 ms, one packet each.
        for _ in 0..3 {
            s.send(1);
            s.advance(Dur::from_ms(20));
        }
        let mut out = Vec::new();
        ack_at(&mut s, 10, 20, &mut out);
        s.lose_oldest(LossCause::Reordering);
        assert!(out.is_empty() && s.cc.measured == 0);
        ack_at(&mut s, 50, 20, &mut out);
        assert_eq!(out.len(), 2);
        // Epoch 0: 1000 B over [10, 50) ms.
        assert_eq!(
            (out[0].epoch, out[0].span),
            (0, Some((Time::from_ms(10), Time::from_ms(50))))
        );
        assert_close(out[0].gamma, 25_000.0);
        assert_eq!(
            (out[1].epoch, out[1].gamma, out[1].c, out[1].span),
            (1, 0.0, 1.0, None)
        );
    }

    #[test]
    fn an_epoch_without_packets_is_extended_not_closed() {
        let mut s = Script::new(lied());
        s.send(1);
        s.advance(Dur::from_ms(20));
        assert_eq!(s.cc.epochs.len(), 2);
        s.advance(Dur::from_ms(20));
        assert_eq!(s.cc.epochs.len(), 2, "epoch 1 sent nothing: it goes on");
        assert_eq!(s.cc.next_timer(), Some(Time::from_ms(60)));
    }

    #[test]
    fn tau_follows_srtt_above_the_floor() {
        let mut s = Script::new(lied());
        s.send(1);
        s.ack_oldest(Dur::from_ms(50));
        s.send(1);
        s.advance(Dur::ZERO);
        assert_eq!(s.cc.tau(), Dur::from_ms(50));
        assert_eq!(s.cc.next_timer(), Some(Time::from_ms(100)));
    }

    /// M/M/1/n (spec §2.2): blocking P_n = (1 - rho) rho^n / (1 - rho^(n+1)), c = P_n, nu = lambda (1 - P_n).
    fn mm1n_gamma(lambda: f64, mu: f64, n: i32, k: f64) -> f64 {
        let rho = lambda / mu;
        let p_n = (1.0 - rho) * rho.powi(n) / (1.0 - rho.powi(n + 1));
        penalised_throughput(lambda * (1.0 - p_n), p_n, k)
    }

    /// Index of the maximum and whether the curve rises then falls with no other turn.
    fn shape(ys: &[f64]) -> (usize, bool) {
        let arg = ys
            .iter()
            .enumerate()
            .fold(0, |b, (i, &y)| if y > ys[b] { i } else { b });
        let unimodal = ys[..=arg].windows(2).all(|w| w[1] >= w[0])
            && ys[arg..].windows(2).all(|w| w[1] <= w[0]);
        (arg, unimodal && arg > 0 && arg + 1 < ys.len())
    }

    #[test]
    fn mm1n_gamma_k_is_unimodal_and_its_argmax_falls_as_k_rises() {
        // Paper 003 Fig. 5: mu = 1, n = 10, lambda over (0, 4) avoiding rho = 1 exactly.
        let lambdas: Vec<f64> = (0..400).map(|i| 0.005 + 0.01 * i as f64).collect();
        let mut argmax = Vec::new();
        for k in [1.0, 2.0, 4.0, 8.0] {
            let ys: Vec<f64> = lambdas.iter().map(|&l| mm1n_gamma(l, 1.0, 10, k)).collect();
            let (arg, unimodal) = shape(&ys);
            assert!(unimodal, "k = {k}: gamma_k not unimodal");
            argmax.push(lambdas[arg]);
        }
        assert!(
            argmax.windows(2).all(|w| w[1] < w[0]),
            "argmax {argmax:?} does not fall with k"
        );
        // Raw throughput (k = 0) only rises: eq. 4's penalty is what makes the curve unimodal.
        let raw: Vec<f64> = lambdas
            .iter()
            .map(|&l| mm1n_gamma(l, 1.0, 10, 0.0))
            .collect();
        assert!(raw.windows(2).all(|w| w[1] >= w[0]));
        assert!(!shape(&raw).1);
    }

    #[test]
    fn validate_rejects_a_decrease_outside_zero_one() {
        for a in [0.0, 1.0, f64::NAN] {
            let e = Params {
                a,
                ..Default::default()
            }
            .validate()
            .unwrap_err();
            assert_eq!(e.key(), Some("a"));
        }
        assert_eq!(
            Params {
                k: -1.0,
                ..Default::default()
            }
            .validate()
            .unwrap_err()
            .key(),
            Some("k")
        );
    }
}
