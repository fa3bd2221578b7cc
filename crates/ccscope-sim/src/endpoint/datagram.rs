//! The datagram sender (datagrump's): a controller's window, no retransmission; losses are reported.
//!
//! The sender keeps one record per outstanding packet in a ring indexed by sequence number, so an
//! ACK finds its packet in O(1) and nothing is allocated per packet once the ring has grown.
//!
//! Each record also keeps the packet's delivery-rate send state (`common::rate_sample`), and every
//! ACK carries the sample of the packet it delivered.
//!
//! `DatagramMode::Datagrump` counts its window as datagrump's `sender.cc` does (keithw/sourdough
//! `datagrump/sender.cc`, `window_is_open()` and `got_ack()`); `Standard` is ccscope's own count.

use std::collections::{BTreeMap, VecDeque};

use ccscope_cc::common::{PacketSendState, RateSample, RateSampler};
use ccscope_cc::{
    AckEvent, AnyController, CongestionEvent, Controller as _, LossCause, LossEvent, SendEvent,
};
use ccscope_core::{Dur, Time};
use ccscope_net::{Ack, Packet};

use crate::traffic::{Poll, TransferPlan};

/// RFC 9002 §6.1.1: a packet is lost once a packet this many sequence numbers later is ACKed.
pub const PACKET_THRESHOLD: u64 = 3;

/// How the sender counts the packets its window limits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DatagramMode {
    /// In flight = packets neither ACKed nor declared lost: a loss frees its slot, so a timeout
    /// that declares packets lost refills the window; a late ACK only counts as spurious.
    #[default]
    Standard,
    /// datagrump `sender.cc`: in flight = next sequence number - next ACK expected (one past the
    /// highest ACKed), so a timeout sends one datagram and a loss frees no slot; an ACK for a
    /// packet declared lost still reaches the controller, as every ACK does in `got_ack()`.
    Datagrump,
}

impl DatagramMode {
    /// The name used in scenario files (`datagram_mode = "..."`).
    pub fn parse(name: &str) -> Option<DatagramMode> {
        match name {
            "standard" => Some(DatagramMode::Standard),
            "datagrump" => Some(DatagramMode::Datagrump),
            _ => None,
        }
    }
}

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
    /// The path it was sent on and its number in that path's own sending order.
    path: u8,
    path_seq: u64,
    /// Delivery-rate state when it was sent.
    rate: PacketSendState,
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
    rate: RateSampler,
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
    pub mode: DatagramMode,
    /// datagrump `got_ack()`: max(next_ack_expected, acked + 1) over every ACK received.
    next_ack_expected: u64,
    /// Datagrump mode: packets declared lost, by sequence number, kept until an ACK shows up for them.
    given_up: BTreeMap<u64, Outstanding>,
    /// Packets sent on each path so far; the next packet takes the path after the last one's.
    path_sent: Vec<u64>,
    next_path: u8,
}

impl DatagramSender {
    pub fn new(
        flow: u32,
        cc: AnyController,
        packet_bytes: u32,
        plan: Option<TransferPlan>,
    ) -> DatagramSender {
        DatagramSender {
            flow,
            cc,
            packet_bytes,
            next_seq: 0,
            ring: VecDeque::with_capacity(16),
            base_seq: 0,
            in_flight: 0,
            active: false,
            next_send_at: Time::ZERO,
            rate: RateSampler::default(),
            last_ack: Time::ZERO,
            sent: 0,
            acked: 0,
            lost: 0,
            spurious: 0,
            recovery_point: None,
            plan,
            mode: DatagramMode::Standard,
            next_ack_expected: 0,
            given_up: BTreeMap::new(),
            path_sent: vec![0],
            next_path: 0,
        }
    }

    /// Send over `n` paths, round-robin; loss detection then counts packets per path.
    pub fn with_paths(mut self, n: u8) -> DatagramSender {
        self.path_sent = vec![0; n.max(1) as usize];
        self
    }

    pub fn with_mode(mut self, mode: DatagramMode) -> DatagramSender {
        self.mode = mode;
        self
    }

    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// The packets the window limits, as the mode counts them.
    fn window_in_flight(&self) -> u64 {
        match self.mode {
            DatagramMode::Standard => self.in_flight as u64,
            // datagrump sender.cc window_is_open(): sequence_number_ - next_ack_expected_.
            DatagramMode::Datagrump => self.next_seq - self.next_ack_expected,
        }
    }

    fn send_one(&mut self, now: Time, after_timeout: bool, out: &mut Vec<Packet>) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let rate = self.rate.on_send(now, self.in_flight == 0);
        self.in_flight += 1;
        self.sent += 1;
        if self.ring.is_empty() {
            self.base_seq = seq;
        }
        let ev = SendEvent {
            seq,
            bytes: self.packet_bytes,
            in_flight: self.in_flight,
            after_timeout,
            retransmission: false,
            app_limited: self.rate.is_app_limited(),
        };
        let tag = self.cc.on_send(now, &ev);
        debug_assert_eq!(self.base_seq + self.ring.len() as u64, seq);
        let path = self.next_path;
        self.next_path = ((path as usize + 1) % self.path_sent.len()) as u8;
        let path_seq = self.path_sent[path as usize];
        self.path_sent[path as usize] += 1;
        self.ring.push_back(Outstanding {
            sent: now,
            tag,
            state: State::InFlight,
            path,
            path_seq,
            rate,
        });
        if let Some(rate) = self.cc.pacing_rate() {
            self.next_send_at = now + rate.tx_time(self.packet_bytes as u64);
        }
        out.push(Packet {
            path,
            ..Packet::data(self.flow, seq, self.packet_bytes, now)
        });
    }

    /// Send while the window and pacing allow. Returns a wake-up time if pacing holds packets back.
    pub fn try_send(&mut self, now: Time, out: &mut Vec<Packet>) -> Option<Time> {
        if self.active
            && self
                .plan
                .as_mut()
                .is_some_and(|p| p.poll(now, self.next_seq) == Poll::NewConnection)
        {
            self.new_connection(now);
        }
        while self.active && self.window_in_flight() < self.cc.cwnd() as u64 && self.has_data() {
            if self.cc.pacing_rate().is_some() && now < self.next_send_at {
                return Some(self.next_send_at);
            }
            self.send_one(now, false, out);
        }
        if self.active && self.window_in_flight() < self.cc.cwnd() as u64 && !self.has_data() {
            // The application has nothing to send with the window open (tcp_rate_check_app_limited).
            self.rate.on_app_limited(self.in_flight);
        }
        // Waiting out an OFF period.
        self.plan
            .as_ref()
            .and_then(|p| p.wake())
            .filter(|&t| t > now && self.active)
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
        self.next_ack_expected = self.next_seq;
        self.given_up.clear();
        self.recovery_point = None;
        self.next_send_at = now;
        self.rate = RateSampler::default();
        self.last_ack = now;
    }

    /// Tell the plan how far every packet is resolved (ACKed or declared lost).
    fn update_plan(&mut self, now: Time) {
        let upto = if self.ring.is_empty() {
            self.next_seq
        } else {
            self.base_seq
        };
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
            let ev = CongestionEvent {
                in_flight: self.in_flight,
                send_time: self.ring[idx].sent,
                cause,
            };
            self.cc.on_congestion_event(now, &ev);
        }
        let o = &mut self.ring[idx];
        debug_assert_eq!(o.state, State::InFlight);
        o.state = State::Lost;
        if self.mode == DatagramMode::Datagrump {
            self.given_up.insert(seq, *o);
        }
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
    pub fn on_ack(&mut self, now: Time, ack: &Ack, out: &mut Vec<Packet>) -> Option<Time> {
        self.last_ack = now;
        if self.mode == DatagramMode::Datagrump {
            // datagrump sender.cc got_ack(): the counter only moves forward.
            self.next_ack_expected = self.next_ack_expected.max(ack.seq + 1);
        }
        let idx = ack.seq.checked_sub(self.base_seq).map(|i| i as usize);
        if idx.is_none_or(|i| i >= self.ring.len() || self.ring[i].state != State::InFlight) {
            // Declared lost earlier (or a duplicate), delivered late.
            self.spurious += 1;
            if let Some(rec) = self.given_up.remove(&ack.seq) {
                // datagrump sender.cc got_ack(): every ACK goes to the controller.
                let rate = self.rate_sample(now, ack.seq, &rec);
                let ev = self.ack_event(now, ack, &rec, rate);
                self.cc.on_ack(now, &ev);
            }
            return self.try_send(now, out);
        }
        let idx = idx.expect("checked above");
        self.ring[idx].state = State::Acked;
        self.in_flight -= 1;
        self.acked += 1;
        let rec = self.ring[idx];
        // Packet-threshold loss detection on everything sent PACKET_THRESHOLD before this one on
        // its path: each path is its own packet-number space (as in draft-ietf-quic-multipath), so a
        // faster path overtaking a slower one is not loss.
        let mut i = 0;
        while i < idx {
            let o = self.ring[i];
            if o.state == State::InFlight
                && o.path == rec.path
                && o.path_seq + PACKET_THRESHOLD <= rec.path_seq
            {
                self.declare_lost(now, i, LossCause::Reordering);
            }
            i += 1;
        }
        let rate = self.rate_sample(now, ack.seq, &rec);
        let ev = self.ack_event(now, ack, &rec, rate);
        self.cc.on_ack(now, &ev);
        self.compact();
        self.update_plan(now);
        self.try_send(now, out)
    }

    /// The delivery-rate sample of an ACK that delivered packet `seq`.
    fn rate_sample(&mut self, now: Time, seq: u64, rec: &Outstanding) -> Option<RateSample> {
        self.rate.on_delivered(now, &rec.rate, rec.sent, seq);
        self.rate.generate(now, now - rec.sent)
    }

    fn ack_event(
        &self,
        now: Time,
        ack: &Ack,
        rec: &Outstanding,
        rate: Option<RateSample>,
    ) -> AckEvent {
        AckEvent {
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
            rate,
            host_bytes: ack.host_bytes,
        }
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
            // datagrump sender.cc loop(): a poll timeout sends one datagram regardless of the window.
            self.send_one(now, true, out);
        }
        // Standard: the losses just declared reopen the window; Datagrump: they do not.
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

#[cfg(test)]
mod tests {
    use super::*;
    use ccscope_cc::Controller;
    use std::sync::{Arc, Mutex};

    /// What the controller was told: (seq, rtt ms) per ACK, seq per loss.
    #[derive(Default)]
    struct Seen {
        acks: Vec<(u64, u64)>,
        losses: Vec<u64>,
    }

    /// A fixed window of `w` with a 100 ms timeout that records its events.
    struct Probe {
        w: u32,
        seen: Arc<Mutex<Seen>>,
    }

    impl Controller for Probe {
        fn on_ack(&mut self, _now: Time, ev: &AckEvent) {
            self.seen
                .lock()
                .unwrap()
                .acks
                .push((ev.seq, ev.rtt.as_ns() / 1_000_000));
        }
        fn on_loss(&mut self, _now: Time, ev: &LossEvent) {
            self.seen.lock().unwrap().losses.push(ev.seq);
        }
        fn cwnd(&self) -> u32 {
            self.w
        }
        fn timeout(&self) -> Dur {
            Dur::from_ms(100)
        }
    }

    fn sender(mode: DatagramMode, w: u32) -> (DatagramSender, Arc<Mutex<Seen>>, Vec<u64>) {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let mut s = DatagramSender::new(
            0,
            AnyController::boxed(Probe {
                w,
                seen: seen.clone(),
            }),
            1504,
            None,
        )
        .with_mode(mode);
        s.start(Time::ZERO);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        (s, seen, out.iter().map(|p| p.seq).collect())
    }

    fn ack(s: &mut DatagramSender, seq: u64, ms: u64) -> Vec<u64> {
        let now = Time::from_ms(ms);
        let a = Ack::of(&Packet::data(0, seq, 1504, Time::ZERO), 80, now);
        let mut out = Vec::new();
        s.on_ack(now, &a, &mut out);
        out.iter().map(|p| p.seq).collect()
    }

    fn timeout(s: &mut DatagramSender, ms: u64) -> Vec<u64> {
        let mut out = Vec::new();
        s.on_timeout(Time::from_ms(ms), &mut out);
        out.iter().map(|p| p.seq).collect()
    }

    #[test]
    fn datagrump_mode_counts_a_skipped_packet_as_out_once_a_later_one_is_acked() {
        // sender.cc window_is_open(): 3 sent, ACK of 1 -> next_ack_expected 2 -> 1 in flight, 2 may go.
        let (mut s, _, first) = sender(DatagramMode::Datagrump, 3);
        assert_eq!(first, [0, 1, 2]);
        assert_eq!(ack(&mut s, 1, 50), [3, 4]);
        // Standard mode still counts packet 0 in flight.
        let (mut s, _, _) = sender(DatagramMode::Standard, 3);
        assert_eq!(ack(&mut s, 1, 50), [3]);
    }

    #[test]
    fn a_timeout_sends_one_datagram_in_datagrump_mode_and_refills_the_window_in_standard_mode() {
        // sender.cc loop(): PollResult::Timeout -> one send_datagram(); the losses free no slot.
        let (mut s, seen, _) = sender(DatagramMode::Datagrump, 4);
        assert_eq!(timeout(&mut s, 100), [4]);
        assert_eq!(seen.lock().unwrap().losses, [0, 1, 2, 3]);
        let (mut s, _, _) = sender(DatagramMode::Standard, 4);
        assert_eq!(timeout(&mut s, 100), [4, 5, 6, 7]);
    }

    #[test]
    fn an_ack_for_a_packet_given_up_on_reaches_the_controller_in_datagrump_mode_only() {
        let (mut s, seen, _) = sender(DatagramMode::Datagrump, 4);
        timeout(&mut s, 100);
        // sender.cc got_ack(): the late ACK moves next_ack_expected to 1 (4 of 5 out: still closed).
        assert_eq!(ack(&mut s, 0, 150), Vec::<u64>::new());
        assert_eq!(seen.lock().unwrap().acks, [(0, 150)]);
        assert_eq!((s.spurious, s.lost), (1, 4));
        // A second ACK for the same packet is a duplicate and is not passed on.
        ack(&mut s, 0, 160);
        assert_eq!(seen.lock().unwrap().acks.len(), 1);
        // The ACK of 1 opens one slot: 5 sent - next_ack_expected 2 = 3 in flight.
        assert_eq!(ack(&mut s, 1, 170), [5]);
        let (mut s, seen, _) = sender(DatagramMode::Standard, 4);
        timeout(&mut s, 100);
        ack(&mut s, 0, 150);
        assert!(seen.lock().unwrap().acks.is_empty());
        assert_eq!(s.spurious, 1);
    }

    #[test]
    fn a_fast_path_overtaking_a_slow_one_is_not_loss_but_a_gap_on_one_path_is() {
        // Two paths, round-robin: even seqs on path 0, odd on path 1. Path 0's ACKs for 0, 2, 4, 6
        // arrive before any of path 1's: nothing on path 1 is declared lost.
        let seen = Arc::new(Mutex::new(Seen::default()));
        let mut s = DatagramSender::new(
            0,
            AnyController::boxed(Probe {
                w: 10,
                seen: seen.clone(),
            }),
            1504,
            None,
        )
        .with_paths(2);
        s.start(Time::ZERO);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        assert_eq!(
            out.iter()
                .map(|p| (p.seq, p.path))
                .take(4)
                .collect::<Vec<_>>(),
            [(0, 0), (1, 1), (2, 0), (3, 1)]
        );
        for seq in [0, 2, 4, 6] {
            ack(&mut s, seq, 10);
        }
        assert!(seen.lock().unwrap().losses.is_empty());
        // On path 1, 3 is missing when 5, 7, 9 (three later on its own path) are ACKed: lost.
        for seq in [1, 5, 7] {
            ack(&mut s, seq, 20);
        }
        assert!(seen.lock().unwrap().losses.is_empty());
        ack(&mut s, 9, 20);
        assert_eq!(seen.lock().unwrap().losses, [3]);
    }
}
