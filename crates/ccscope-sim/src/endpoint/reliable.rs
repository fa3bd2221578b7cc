//! The reliable (TCP-like) sender, in packet sequence space (one packet = one MSS).
//!
//! - Cumulative ACK plus SACK (RFC 2018): SACKed packets leave the pipe and are never resent.
//! - Loss detection: the third duplicate ACK (RFC 5681 §3.2), or a packet SACKed at least three
//!   sequence numbers above an outstanding one (RFC 6675 `IsLost` with DupThresh = 3, counted in
//!   sequence space), or a partial ACK during recovery (RFC 6582 §3.2 step 5).
//! - NewReno recovery (RFC 6582): one congestion event per episode; the episode ends when the
//!   recovery point (highest sequence sent at its start) is cumulatively ACKed.
//! - Pipe accounting (RFC 6675 §4): `in_flight` counts packets sent and neither ACKed, SACKed nor
//!   declared lost, so the window needs no inflation during recovery.
//! - Retransmission timer (RFC 6298): srtt/rttvar with gains 1/8 and 1/4, RTO = srtt + max(G, 4
//!   rttvar) clamped to [min, max], doubled on each expiry, restarted when new data is ACKed.
//!   RTT samples come from the echoed send time of the packet that triggered each ACK (the
//!   timestamp option, RFC 7323 §4), so retransmissions give valid samples.

use std::collections::VecDeque;

use ccscope_cc::common::RttEstimator;
use ccscope_cc::{AckEvent, AnyController, CongestionEvent, LossCause, LossEvent, SendEvent};
use ccscope_core::{Dur, Time};
use ccscope_net::{Packet, PacketKind};

use crate::traffic::{OnOffParams, Poll, TransferPlan};

/// What the application gives the transport.
#[derive(Clone, Debug, PartialEq)]
pub enum App {
    /// Always has data.
    Bulk,
    /// A sequence of transfers (sizes in packets); the next starts `think` after the previous one is
    /// fully acknowledged.
    Transfers { packets: Vec<u64>, think: Dur },
    /// Paper 000 §6.6 ON/OFF user: files and OFF periods drawn from (seed, flow), a new connection
    /// per ON period.
    OnOff(OnOffParams),
}

/// RFC 6298 timer settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RtoParams {
    pub initial: Dur,
    pub min: Dur,
    pub max: Dur,
}

impl Default for RtoParams {
    fn default() -> Self {
        // RFC 6298 §2.1 initial 1 s, §2.4 minimum 1 s (as ns-3; Linux uses 200 ms), §2.5 max 60 s.
        RtoParams { initial: Dur::from_ms(1000), min: Dur::from_ms(1000), max: Dur::from_ms(60_000) }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Sent (or resent) and not yet ACKed, SACKed or declared lost: counted in the pipe.
    Outstanding,
    Sacked,
    /// Declared lost, waiting for retransmission.
    Lost,
}

#[derive(Clone, Copy, Debug)]
struct Seg {
    sent: Time,
    tag: u64,
    state: State,
    retransmitted: bool,
}

pub struct ReliableSender {
    pub flow: u32,
    pub cc: AnyController,
    pub packet_bytes: u32,
    pub active: bool,
    /// The application's transfers; `None` = bulk.
    pub plan: Option<TransferPlan>,
    snd_una: u64,
    snd_nxt: u64,
    ring: VecDeque<Seg>,
    in_flight: u32,
    /// Lowest sequence that may be in state Lost (retransmission scan start).
    lost_scan: u64,
    lost_waiting: u32,
    /// Sequences below this were already examined by the SACK-based loss rule.
    sack_scan: u64,
    highest_sacked: Option<u64>,
    dupacks: u32,
    /// RFC 6675 §5 step 3: on entering recovery the first lost packet is resent at once, whatever
    /// the pipe says.
    fast_retransmit: bool,
    recovery_point: Option<u64>,
    /// After an RTO, losses of packets sent before it do not start a new episode.
    rto_point: Option<u64>,
    rtt: RttEstimator,
    rto: RtoParams,
    backoff: u32,
    rto_deadline: Option<Time>,
    pub sent: u64,
    pub retransmitted: u64,
    pub lost: u64,
    pub rtos: u64,
    pub acked: u64,
}

impl ReliableSender {
    pub fn new(flow: u32, cc: AnyController, packet_bytes: u32, plan: Option<TransferPlan>, rto: RtoParams) -> ReliableSender {
        ReliableSender {
            flow,
            cc,
            packet_bytes,
            active: false,
            plan,
            snd_una: 0,
            snd_nxt: 0,
            ring: VecDeque::with_capacity(1024),
            in_flight: 0,
            lost_scan: 0,
            lost_waiting: 0,
            sack_scan: 0,
            highest_sacked: None,
            dupacks: 0,
            fast_retransmit: false,
            recovery_point: None,
            rto_point: None,
            rtt: RttEstimator::default(),
            rto,
            backoff: 0,
            rto_deadline: None,
            sent: 0,
            retransmitted: 0,
            lost: 0,
            rtos: 0,
            acked: 0,
        }
    }

    pub fn start(&mut self, now: Time) {
        self.active = true;
        if let Some(p) = &mut self.plan {
            p.start(now, self.snd_nxt);
        }
    }

    /// A new connection for a new ON period: a fresh controller (built-in ones) and fresh
    /// per-connection state (RTT estimate, back-off, dupacks, recovery). Nothing is outstanding
    /// here; sequence numbers continue where the old connection stopped, as a new ISN would.
    fn new_connection(&mut self) {
        if let Some(cc) = self.plan.as_mut().and_then(|p| p.respawn(&mut self.cc)) {
            self.cc = cc;
        }
        debug_assert_eq!(self.snd_una, self.snd_nxt);
        self.rtt = RttEstimator::default();
        self.backoff = 0;
        self.rto_deadline = None;
        self.dupacks = 0;
        self.fast_retransmit = false;
        self.recovery_point = None;
        self.rto_point = None;
        self.highest_sacked = None;
        self.lost_scan = self.snd_una;
        self.sack_scan = self.snd_una;
    }

    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    pub fn in_recovery(&self) -> bool {
        self.recovery_point.is_some()
    }

    /// The current RTO (RFC 6298 §2), with back-off.
    pub fn rto(&self) -> Dur {
        let base = match (self.rtt.srtt(), self.rtt.rttvar()) {
            (Some(s), Some(v)) => s + Dur::from_ms(1).max(Dur(4 * v.as_ns())),
            _ => self.rto.initial,
        };
        let b = Dur(base.as_ns().saturating_mul(1u64 << self.backoff.min(30)));
        b.max(self.rto.min).min(self.rto.max)
    }

    fn has_new_data(&self) -> bool {
        self.plan.as_ref().is_none_or(|p| p.may_send(self.snd_nxt))
    }

    fn seg(&mut self, seq: u64) -> &mut Seg {
        let i = (seq - self.snd_una) as usize;
        &mut self.ring[i]
    }

    fn transmit(&mut self, now: Time, seq: u64, retransmission: bool, out: &mut Vec<Packet>) {
        self.in_flight += 1;
        self.sent += 1;
        let ev = SendEvent { seq, bytes: self.packet_bytes, in_flight: self.in_flight, after_timeout: false, retransmission };
        let tag = self.cc.on_send(now, &ev);
        if retransmission {
            self.retransmitted += 1;
            let s = self.seg(seq);
            *s = Seg { sent: now, tag, state: State::Outstanding, retransmitted: true };
        } else {
            self.ring.push_back(Seg { sent: now, tag, state: State::Outstanding, retransmitted: false });
        }
        // RFC 6298 §5.1: start the timer when sending with none running.
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto());
        }
        out.push(Packet::data(self.flow, seq, self.packet_bytes, now));
    }

    pub fn try_send(&mut self, now: Time, out: &mut Vec<Packet>) -> Option<Time> {
        if self.active && self.plan.as_mut().is_some_and(|p| p.poll(now, self.snd_nxt) == Poll::NewConnection) {
            self.new_connection();
        }
        while self.active && (self.in_flight < self.cc.cwnd() || (self.fast_retransmit && self.lost_waiting > 0)) {
            self.fast_retransmit = false;
            if self.lost_waiting > 0 {
                // Retransmit the lowest packet declared lost.
                let mut seq = self.lost_scan.max(self.snd_una);
                while self.seg(seq).state != State::Lost {
                    seq += 1;
                }
                self.lost_scan = seq + 1;
                self.lost_waiting -= 1;
                self.transmit(now, seq, true, out);
            } else if self.has_new_data() {
                let seq = self.snd_nxt;
                self.snd_nxt += 1;
                self.transmit(now, seq, false, out);
            } else {
                break;
            }
        }
        // A transfer waiting for its think (OFF) time wants a wake-up.
        self.plan.as_ref().and_then(|p| p.wake()).filter(|&t| t > now && self.active)
    }

    fn mark_lost(&mut self, now: Time, seq: u64, cause: LossCause) {
        let in_flight_before = self.in_flight;
        let s = *self.seg(seq);
        debug_assert_eq!(s.state, State::Outstanding);
        let new_episode = self.recovery_point.is_none() && self.rto_point.is_none_or(|p| seq > p);
        if new_episode {
            // RFC 6582 §3.2 step 2: record the recovery point; RFC 5681 §3.2 step 2: one reduction.
            self.recovery_point = Some(self.snd_nxt.saturating_sub(1));
            let ev = CongestionEvent { in_flight: in_flight_before, send_time: s.sent, cause };
            self.cc.on_congestion_event(now, &ev);
            self.fast_retransmit = true;
        }
        self.seg(seq).state = State::Lost;
        self.in_flight -= 1;
        self.lost += 1;
        self.lost_waiting += 1;
        self.lost_scan = self.lost_scan.min(seq);
        let ev = LossEvent { seq, bytes: self.packet_bytes, send_time: s.sent, in_flight: self.in_flight, cause, tag: s.tag };
        self.cc.on_loss(now, &ev);
    }

    pub fn on_ack(&mut self, now: Time, ack: &Packet, out: &mut Vec<Packet>) -> Option<Time> {
        debug_assert_eq!(ack.kind, PacketKind::Ack);
        let rtt = now - ack.sent;
        self.rtt.on_sample(rtt);
        let echoed_tag = if ack.seq >= self.snd_una && ack.seq < self.snd_nxt { self.seg(ack.seq).tag } else { 0 };
        let mut newly = 0u32;
        let cum = ack.ack_cum.min(self.snd_nxt);
        let advanced = cum > self.snd_una;
        if advanced {
            while self.snd_una < cum {
                let s = self.ring.pop_front().expect("outstanding");
                match s.state {
                    State::Outstanding => {
                        self.in_flight -= 1;
                        newly += 1;
                    }
                    State::Lost => {
                        // Arrived after all (or its retransmission did): no longer waiting.
                        self.lost_waiting -= 1;
                        newly += 1;
                    }
                    State::Sacked => {}
                }
                self.snd_una += 1;
            }
            self.dupacks = 0;
            self.backoff = 0;
            // RFC 6298 §5.2-5.3: stop the timer when all is ACKed, else restart it.
            self.rto_deadline = (self.snd_una < self.snd_nxt).then(|| now + self.rto());
            if self.rto_point.is_some_and(|p| self.snd_una > p) {
                self.rto_point = None;
            }
        } else if cum == self.snd_una && self.snd_una < self.snd_nxt && ack.sack.iter().all(|b| b.0 >= b.1 || b.1 <= self.snd_una) {
            self.dupacks += 1;
        } else if cum == self.snd_una && self.snd_una < self.snd_nxt {
            // A duplicate ACK carrying SACK information (RFC 6675 §2: counts as a dupack).
            self.dupacks += 1;
        }
        for &(lo, hi) in &ack.sack {
            let (lo, hi) = (lo.max(self.snd_una), hi.min(self.snd_nxt));
            for seq in lo..hi {
                let s = self.seg(seq);
                match s.state {
                    State::Outstanding => {
                        s.state = State::Sacked;
                        self.in_flight -= 1;
                        newly += 1;
                    }
                    State::Lost => {
                        s.state = State::Sacked;
                        self.lost_waiting -= 1;
                        newly += 1;
                    }
                    State::Sacked => {}
                }
            }
            if hi > lo {
                self.highest_sacked = Some(self.highest_sacked.map_or(hi - 1, |h| h.max(hi - 1)));
            }
        }
        self.acked += newly as u64;
        self.detect_losses(now, advanced);
        // RFC 6582 §3.2 step 6: a full ACK ends recovery.
        if self.recovery_point.is_some_and(|rp| self.snd_una > rp) {
            self.recovery_point = None;
            self.cc.on_recovery_exit(now);
        }
        self.finish_transfer(now);
        let ev = AckEvent {
            seq: ack.seq,
            bytes: self.packet_bytes,
            send_time: ack.sent,
            recv_time: ack.recv,
            rtt,
            in_flight: self.in_flight,
            last_sent_seq: self.snd_nxt.saturating_sub(1),
            tag: echoed_tag,
            newly_acked: newly,
            in_recovery: self.recovery_point.is_some(),
        };
        self.cc.on_ack(now, &ev);
        self.try_send(now, out)
    }

    fn detect_losses(&mut self, now: Time, advanced: bool) {
        if self.snd_una >= self.snd_nxt {
            return;
        }
        // RFC 5681 §3.2: the third duplicate ACK; RFC 6582 §3.2 step 5: a partial ACK in recovery.
        let partial = advanced && self.recovery_point.is_some_and(|rp| self.snd_una <= rp);
        if self.dupacks >= 3 || partial {
            let una = self.snd_una;
            let s = *self.seg(una);
            if s.state == State::Outstanding && !s.retransmitted {
                self.mark_lost(now, una, LossCause::Reordering);
            }
        }
        // RFC 6675 IsLost: three packets SACKed above an outstanding one.
        if let Some(h) = self.highest_sacked {
            let limit = h.saturating_sub(2).min(self.snd_nxt);
            let mut seq = self.sack_scan.max(self.snd_una);
            while seq < limit {
                let s = *self.seg(seq);
                if s.state == State::Outstanding && !s.retransmitted {
                    self.mark_lost(now, seq, LossCause::Reordering);
                }
                seq += 1;
            }
            self.sack_scan = self.sack_scan.max(limit);
        }
    }

    fn finish_transfer(&mut self, now: Time) {
        if let Some(p) = &mut self.plan {
            p.on_resolved(now, self.snd_una);
        }
    }

    /// RFC 6298 §5.4-5.7 and RFC 5681 §3.1: the retransmission timer expired.
    pub fn on_timeout(&mut self, now: Time, out: &mut Vec<Packet>) -> Option<Time> {
        if self.rto_deadline.is_none_or(|t| t > now) {
            return self.try_send(now, out);
        }
        self.rtos += 1;
        // Every outstanding packet is presumed lost (RFC 6675 §5.1); they leave the pipe.
        for i in 0..self.ring.len() {
            if self.ring[i].state == State::Outstanding {
                let seq = self.snd_una + i as u64;
                let s = self.ring[i];
                self.ring[i].state = State::Lost;
                self.in_flight -= 1;
                self.lost += 1;
                self.lost_waiting += 1;
                let ev = LossEvent { seq, bytes: self.packet_bytes, send_time: s.sent, in_flight: self.in_flight, cause: LossCause::Timeout, tag: s.tag };
                self.cc.on_loss(now, &ev);
            }
        }
        self.lost_scan = self.snd_una;
        self.recovery_point = None;
        self.rto_point = Some(self.snd_nxt.saturating_sub(1));
        self.dupacks = 0;
        self.cc.on_rto(now);
        self.backoff += 1;
        self.rto_deadline = (self.snd_una < self.snd_nxt).then(|| now + self.rto());
        self.try_send(now, out)
    }

    pub fn timeout_deadline(&self) -> Option<Time> {
        self.rto_deadline.or_else(|| self.plan.as_ref().and_then(|p| p.wake()))
    }

    pub fn goodput_packets(&self) -> u64 {
        self.snd_una
    }
}
