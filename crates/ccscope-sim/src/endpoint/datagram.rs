//! The datagram sender (datagrump's): a controller's window, no retransmission; losses are reported.
//!
//! The sender keeps one record per outstanding packet in a ring indexed by sequence number, so an
//! ACK finds its packet in O(1) and nothing is allocated per packet once the ring has grown.

use std::collections::VecDeque;

use ccscope_cc::{AckEvent, AnyController, CongestionEvent, LossCause, LossEvent, SendEvent};
use ccscope_core::{Dur, Time};
use ccscope_net::{Packet, PacketKind};

use crate::traffic::{Poll, TransferPlan};

/// RFC 9002 §6.1.1: a packet is lost once a packet this many sequence numbers later is ACKed.
pub const PACKET_THRESHOLD: u64 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    InFlight,
    Acked,
    Lost,
}

#[derive(Clone, Copy, Debug)]
struct Outstanding {
    sent: Time,
    tag: u64,
    state: State,
}

pub struct DatagramSender {
    pub flow: u32,
    pub cc: AnyController,
    pub packet_bytes: u32,
    next_seq: u64,
    /// Records for seqs base_seq.. ; the front is always InFlight (resolved ones are popped).
    ring: VecDeque<Outstanding>,
    base_seq: u64,
    in_flight: u32,
    pub active: bool,
    /// Earliest time pacing allows the next packet.
    next_send_at: Time,
    /// Last time an ACK arrived (or the flow started), for the no-ACK timeout.
    pub last_ack: Time,
    pub sent: u64,
    pub acked: u64,
    pub lost: u64,
    pub spurious: u64,
    /// Highest sequence number outstanding when the current loss episode began.
    recovery_point: Option<u64>,
    /// The application's transfers; `None` = always has data. A transfer is over once each of its
    /// packets is ACKed or declared lost; nothing is sent during the OFF period that follows.
    pub plan: Option<TransferPlan>,
}

impl DatagramSender {
    pub fn new(flow: u32, cc: AnyController, packet_bytes: u32, plan: Option<TransferPlan>) -> DatagramSender {
        DatagramSender {
            flow,
            cc,
            packet_bytes,
            next_seq: 0,
            ring: VecDeque::with_capacity(256),
            base_seq: 0,
            in_flight: 0,
            active: false,
            next_send_at: Time::ZERO,
            last_ack: Time::ZERO,
            sent: 0,
            acked: 0,
            lost: 0,
            spurious: 0,
            recovery_point: None,
            plan,
        }
    }

    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    fn send_one(&mut self, now: Time, after_timeout: bool, out: &mut Vec<Packet>) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.in_flight += 1;
        self.sent += 1;
        if self.ring.is_empty() {
            self.base_seq = seq;
        }
        let ev = SendEvent { seq, bytes: self.packet_bytes, in_flight: self.in_flight, after_timeout, retransmission: false };
        let tag = self.cc.on_send(now, &ev);
        debug_assert_eq!(self.base_seq + self.ring.len() as u64, seq);
        self.ring.push_back(Outstanding { sent: now, tag, state: State::InFlight });
        if let Some(rate) = self.cc.pacing_rate() {
            self.next_send_at = now + rate.tx_time(self.packet_bytes as u64);
        }
        out.push(Packet::data(self.flow, seq, self.packet_bytes, now));
    }

    /// Send while the window and pacing allow. Returns a wake-up time if pacing holds packets back.
    pub fn try_send(&mut self, now: Time, out: &mut Vec<Packet>) -> Option<Time> {
        if self.active && self.plan.as_mut().is_some_and(|p| p.poll(now, self.next_seq) == Poll::NewConnection) {
            self.new_connection(now);
        }
        while self.active && self.in_flight < self.cc.cwnd() && self.has_data() {
            if self.cc.pacing_rate().is_some() && now < self.next_send_at {
                return Some(self.next_send_at);
            }
            self.send_one(now, false, out);
        }
        // Waiting out an OFF period.
        self.plan.as_ref().and_then(|p| p.wake()).filter(|&t| t > now && self.active)
    }

    fn idle(&self) -> bool {
        self.in_flight == 0 && self.plan.as_ref().is_some_and(|p| p.idle())
    }

    fn has_data(&self) -> bool {
        self.plan.as_ref().is_none_or(|p| p.may_send(self.next_seq))
    }

    /// A new connection for a new ON period: a fresh controller (built-in ones), no loss episode,
    /// no pacing debt, the no-ACK timer restarted. Every earlier packet is resolved; sequence
    /// numbers continue (as a new ISN would), so a late ACK of the old connection stays spurious.
    fn new_connection(&mut self, now: Time) {
        if let Some(cc) = self.plan.as_mut().and_then(|p| p.respawn(&mut self.cc)) {
            self.cc = cc;
        }
        debug_assert_eq!(self.in_flight, 0);
        self.recovery_point = None;
        self.next_send_at = now;
        self.last_ack = now;
    }

    /// Tell the plan how far every packet is resolved (ACKed or declared lost).
    fn update_plan(&mut self, now: Time) {
        let upto = if self.ring.is_empty() { self.next_seq } else { self.base_seq };
        if let Some(p) = &mut self.plan {
            p.on_resolved(now, upto);
        }
    }

    // Pop resolved records from the front so the front is the oldest packet in flight.
    fn compact(&mut self) {
        while let Some(o) = self.ring.front() {
            if o.state == State::InFlight {
                break;
            }
            self.ring.pop_front();
            self.base_seq += 1;
        }
    }

    fn declare_lost(&mut self, now: Time, idx: usize, cause: LossCause) {
        let seq = self.base_seq + idx as u64;
        // A loss of a packet sent after the last episode began starts a new episode (once per RTT).
        if self.recovery_point.is_none_or(|rp| seq > rp) {
            self.recovery_point = Some(self.next_seq.saturating_sub(1));
            let ev = CongestionEvent { in_flight: self.in_flight, send_time: self.ring[idx].sent, cause };
            self.cc.on_congestion_event(now, &ev);
        }
        let o = &mut self.ring[idx];
        debug_assert_eq!(o.state, State::InFlight);
        o.state = State::Lost;
        self.in_flight -= 1;
        self.lost += 1;
        let ev = LossEvent {
            seq: self.base_seq + idx as u64,
            bytes: self.packet_bytes,
            send_time: o.sent,
            in_flight: self.in_flight,
            cause,
            tag: o.tag,
        };
        self.cc.on_loss(now, &ev);
    }

    /// An ACK for `ack.seq` arrived.
    pub fn on_ack(&mut self, now: Time, ack: &Packet, out: &mut Vec<Packet>) -> Option<Time> {
        debug_assert_eq!(ack.kind, PacketKind::Ack);
        self.last_ack = now;
        let Some(idx) = ack.seq.checked_sub(self.base_seq).map(|i| i as usize) else {
            // Already resolved and compacted (declared lost earlier, then delivered late).
            self.spurious += 1;
            return self.try_send(now, out);
        };
        if idx >= self.ring.len() || self.ring[idx].state != State::InFlight {
            self.spurious += 1;
            return self.try_send(now, out);
        }
        self.ring[idx].state = State::Acked;
        self.in_flight -= 1;
        self.acked += 1;
        let rec = self.ring[idx];
        // Packet-threshold loss detection on everything sent PACKET_THRESHOLD before this one.
        let mut i = 0;
        while i < self.ring.len() && self.base_seq + (i as u64) + PACKET_THRESHOLD <= ack.seq {
            if self.ring[i].state == State::InFlight {
                self.declare_lost(now, i, LossCause::Reordering);
            }
            i += 1;
        }
        let ev = AckEvent {
            seq: ack.seq,
            bytes: self.packet_bytes,
            send_time: rec.sent,
            recv_time: ack.recv,
            rtt: now - rec.sent,
            in_flight: self.in_flight,
            last_sent_seq: self.next_seq.saturating_sub(1),
            tag: rec.tag,
            newly_acked: 1,
            in_recovery: self.recovery_point.is_some_and(|rp| ack.seq <= rp),
        };
        self.cc.on_ack(now, &ev);
        self.compact();
        self.update_plan(now);
        self.try_send(now, out)
    }

    /// No ACK for the controller's timeout: packets older than it are lost; send one packet anyway.
    pub fn on_timeout(&mut self, now: Time, out: &mut Vec<Packet>) -> Option<Time> {
        if self.idle() {
            return self.try_send(now, out);
        }
        let timeout = self.cc.timeout();
        let mut i = 0;
        while i < self.ring.len() && now.since(self.ring[i].sent) >= timeout {
            if self.ring[i].state == State::InFlight {
                self.declare_lost(now, i, LossCause::Timeout);
            }
            i += 1;
        }
        self.compact();
        self.update_plan(now);
        self.cc.on_timeout(now);
        self.last_ack = now;
        if self.active && self.has_data() {
            // datagrump: on timeout the sender transmits regardless of the window.
            self.send_one(now, true, out);
        }
        self.try_send(now, out)
    }

    /// When the no-ACK timeout would fire, given the last ACK.
    pub fn timeout_deadline(&self) -> Option<Time> {
        // Idle between transfers with nothing outstanding: no timer (the OFF wake-up restarts it).
        if self.idle() {
            return None;
        }
        Some(self.last_ack + self.cc.timeout())
    }

    pub fn start(&mut self, now: Time) {
        self.active = true;
        self.last_ack = now;
        if let Some(p) = &mut self.plan {
            p.start(now, self.next_seq);
        }
    }

    pub fn timeout(&self) -> Dur {
        self.cc.timeout()
    }
}

