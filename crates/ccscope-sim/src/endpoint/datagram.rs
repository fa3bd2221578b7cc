//! The datagram sender (datagrump's): a controller's window, no retransmission; losses are reported.
//!
//! The sender keeps one record per outstanding packet in a ring indexed by sequence number, so an
//! ACK finds its packet in O(1) and nothing is allocated per packet once the ring has grown.
//!
//! Each record also keeps the packet's delivery-rate send state (`common::rate_sample`), and every
//! ACK carries the sample of the packet it delivered.
//!
//! `DatagramMode::Datagrump` counts its window as datagrump's `sender.cc` does (keithw/sourdough
//! `datagrump/sender.cc`, `window_is_open()` and `got_ack()`); `DatagramMode::Ctcp` is genericCC's
//! sender loop (venkatarun95/genericCC `ctcp.hh` `send_data`, the sender Pantheon runs Copa with);
//! `Standard` is ccscope's own count.

use std::collections::{BTreeMap, VecDeque};

use ccscope_cc::common::{PacketSendState, RateSample, RateSampler};
use ccscope_cc::{
    AckEvent, AnyController, CongestionEvent, Controller as _, LossCause, LossEvent, PacketAcked,
    SendEvent,
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
    /// genericCC `ctcp.hh` `send_data`: send while seq < largest_ack + 1 + window (largest_ack = the
    /// highest ACKed seq + 1), paced by `_last_send_time += intersend` with its "hopeless" reset;
    /// every ACK reaches the controller; an ACK of a packet still outstanding declares every earlier
    /// outstanding packet lost (markoviancc.cc onACK's gap rule); no retransmission, no timeout
    /// send; after more than 2 s without an ACK the sender forgets what is outstanding and the
    /// controller restarts (`on_rto`, ctcp.hh's `init()`). docs/deviations.md (Copa) lists the rest.
    Ctcp,
}

impl DatagramMode {
    /// The name used in scenario files (`datagram_mode = "..."`).
    pub fn parse(name: &str) -> Option<DatagramMode> {
        match name {
            "standard" => Some(DatagramMode::Standard),
            "datagrump" => Some(DatagramMode::Datagrump),
            "ctcp" => Some(DatagramMode::Ctcp),
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
    /// The controller counts acknowledged packets by their tags (`Controller::wants_packet_acks`).
    packet_acks: bool,
    /// The controller reads delivery-rate samples (`Controller::wants_rate_sample`).
    rate_samples: bool,
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
    /// Datagrump and ctcp modes: packets declared lost, by sequence number, kept until an ACK shows up
    /// for them (at most GIVEN_UP_MAX, the oldest forgotten first).
    given_up: BTreeMap<u64, Outstanding>,
    /// Packets sent on each path so far; the next packet takes the path after the last one's.
    path_sent: Vec<u64>,
    next_path: u8,
    /// Ctcp mode: the sender loop's own state (ctcp.hh `send_data`).
    ctcp: CtcpLoop,
}

/// ctcp.hh `send_data`'s loop state. The loop is modelled as infinitely fast: it runs at every ACK,
/// at every pacing deadline it waits for and, in between, continuously (poll's whole-ms timeout is
/// not modelled), so a "hopeless" reset holds `_last_send_time` at the current instant.
#[derive(Clone, Copy, Debug)]
struct CtcpLoop {
    /// ctcp.hh `_largest_ack`: -1, then max(ACKed seq + 1), `seq - 1` at a restart.
    largest_ack: i64,
    /// ctcp.hh `_last_send_time`: advanced by the intersend time per packet sent.
    last_send: Time,
    /// The last iteration ended in the "hopeless" state (seq >= _largest_ack + window): every later
    /// instant resets `_last_send_time` again until an event changes the state.
    resetting: bool,
    /// The pacing deadline the loop waits for (an iteration of its own).
    wake: Option<Time>,
}

/// The most given-up packets a sender remembers for a late ACK: memory stays bounded over a long lossy
/// run (the real senders need no record: datagrump and genericCC read the echoed send time).
const GIVEN_UP_MAX: usize = 1 << 16;

/// ctcp.hh send_data: restart after more than this long without an ACK (`cur_time - last_ack_time > 2000`).
pub const CTCP_RESTART_AFTER: Dur = Dur::from_ms(2000);

impl DatagramSender {
    pub fn new(
        flow: u32,
        cc: AnyController,
        packet_bytes: u32,
        plan: Option<TransferPlan>,
    ) -> DatagramSender {
        DatagramSender {
            flow,
            packet_acks: cc.wants_packet_acks(),
            rate_samples: cc.wants_rate_sample(),
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
            ctcp: CtcpLoop {
                largest_ack: -1,
                last_send: Time::ZERO,
                resetting: false,
                wake: None,
            },
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
            // ctcp.hh: seq < _largest_ack + 1 + window, i.e. seq - (_largest_ack + 1) < ceil(window).
            DatagramMode::Ctcp => {
                (self.next_seq as i64 - (self.ctcp.largest_ack + 1)).max(0) as u64
            }
        }
    }

    /// The controller's time between packets (ctcp.hh `get_intersend_time()`); zero when unpaced.
    fn intersend(&self) -> Dur {
        self.cc
            .pacing_rate()
            .map_or(Dur::ZERO, |r| r.tx_time(self.packet_bytes as u64))
    }

    /// One pass of ctcp.hh's sender loop at `now` (lines 216-240); returns the pacing deadline.
    fn ctcp_iterate(&mut self, now: Time, out: &mut Vec<Packet>) -> Option<Time> {
        if self.ctcp.resetting {
            // ctcp.hh 236-240: every instant since the last event reset _last_send_time.
            self.ctcp.last_send = now;
        }
        self.ctcp.wake = None;
        // ctcp.hh 216-235: send while the window is open and the pacing clock is due.
        while self.active && self.has_data() && self.window_in_flight() < self.cc.cwnd() as u64 {
            let at = self.ctcp.last_send + self.intersend();
            if at > now {
                self.ctcp.wake = Some(at);
                break;
            }
            self.send_one(now, false, out);
            self.ctcp.last_send = at;
        }
        // ctcp.hh 236-240: "hopeless" when behind by an intersend time or within one packet of the
        // window (seq >= _largest_ack + window, i.e. seq - _largest_ack >= ceil(window)).
        self.ctcp.resetting = self.next_seq as i64 - self.ctcp.largest_ack >= self.cc.cwnd() as i64;
        if now.since(self.ctcp.last_send) >= self.intersend() || self.ctcp.resetting {
            self.ctcp.last_send = now;
            self.ctcp.wake = None;
        }
        self.ctcp.wake
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
        if self.mode == DatagramMode::Ctcp {
            // Only the loop's own deadlines are iterations (a stale wake-up is not).
            let due = self.ctcp.wake == Some(now);
            return self.ctcp_send(now, out, due);
        }
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
        let o = *o;
        if matches!(self.mode, DatagramMode::Datagrump | DatagramMode::Ctcp) {
            self.give_up(seq, o);
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
        if self.mode == DatagramMode::Ctcp {
            // ctcp.hh 256, 300: _largest_ack = max(_largest_ack, seq + 1).
            self.ctcp.largest_ack = self.ctcp.largest_ack.max(ack.seq as i64 + 1);
        }
        let idx = ack.seq.checked_sub(self.base_seq).map(|i| i as usize);
        if idx.is_none_or(|i| i >= self.ring.len() || self.ring[i].state != State::InFlight) {
            // Declared lost earlier (or a duplicate), delivered late.
            self.spurious += 1;
            if let Some(rec) = self.given_up.remove(&ack.seq) {
                // datagrump sender.cc got_ack(), ctcp.hh 292: every ACK goes to the controller.
                let rate = self.rate_sample(now, ack.seq, &rec);
                let ev = self.ack_event(now, ack, &rec, rate);
                self.ack_controller(now, &ev);
            }
            return self.after_ack_send(now, out);
        }
        let idx = idx.expect("checked above");
        self.ring[idx].state = State::Acked;
        self.in_flight -= 1;
        self.acked += 1;
        let rec = self.ring[idx];
        // Packet-threshold loss detection on everything sent PACKET_THRESHOLD before this one on
        // its path: each path is its own packet-number space (as in draft-ietf-quic-multipath), so a
        // faster path overtaking a slower one is not loss.
        // Ctcp: markoviancc.cc onACK counts every outstanding packet before the ACKed one as lost.
        let threshold = if self.mode == DatagramMode::Ctcp {
            1
        } else {
            PACKET_THRESHOLD
        };
        let mut i = 0;
        while i < idx {
            let o = self.ring[i];
            if o.state == State::InFlight
                && o.path == rec.path
                && o.path_seq + threshold <= rec.path_seq
            {
                self.declare_lost(now, i, LossCause::Reordering);
            }
            i += 1;
        }
        let rate = self.rate_sample(now, ack.seq, &rec);
        let ev = self.ack_event(now, ack, &rec, rate);
        self.ack_controller(now, &ev);
        self.compact();
        self.update_plan(now);
        self.after_ack_send(now, out)
    }

    /// After an ACK: ctcp.hh's loop runs again at once; the other modes send what they may.
    fn after_ack_send(&mut self, now: Time, out: &mut Vec<Packet>) -> Option<Time> {
        if self.mode == DatagramMode::Ctcp {
            return self.ctcp_send(now, out, true);
        }
        self.try_send(now, out)
    }

    /// Ctcp mode: the plan's next transfer starts the loop now; a new connection (ON/OFF traffic) is a
    /// new genericCC sender (its loop state as ctcp.hh's constructor leaves it, sequence numbers
    /// continuing); then one pass of the loop if `iterate` or due; the loop's pacing deadline, or else
    /// the end of an OFF period.
    fn ctcp_send(&mut self, now: Time, out: &mut Vec<Packet>, iterate: bool) -> Option<Time> {
        if !self.active {
            return None;
        }
        let (was_off, poll, on) = match self.plan.as_mut() {
            Some(p) => (p.wake().is_some(), p.poll(now, self.next_seq), !p.idle()),
            None => (false, Poll::Nothing, true),
        };
        if poll == Poll::NewConnection {
            self.new_connection(now);
            self.ctcp.largest_ack = self.next_seq as i64 - 1;
            self.ctcp.resetting = false;
        }
        if was_off && on {
            // A loop that kept running while there was nothing to send has its clock at now.
            self.ctcp.last_send = now;
            self.ctcp.wake = Some(now);
        }
        let wake = if iterate || self.ctcp.wake == Some(now) {
            self.ctcp_iterate(now, out)
        } else {
            self.ctcp.wake
        };
        wake.or_else(|| {
            self.plan
                .as_ref()
                .and_then(|p| p.wake())
                .filter(|&t| t > now)
        })
    }

    /// Keep `rec` for a late ACK of `seq`, forgetting the oldest record beyond GIVEN_UP_MAX.
    fn give_up(&mut self, seq: u64, rec: Outstanding) {
        self.given_up.insert(seq, rec);
        if self.given_up.len() > GIVEN_UP_MAX {
            self.given_up.pop_first();
        }
    }

    /// The delivery-rate sample of an ACK that delivered packet `seq`.
    fn rate_sample(&mut self, now: Time, seq: u64, rec: &Outstanding) -> Option<RateSample> {
        self.rate.on_delivered(now, &rec.rate, rec.sent, seq);
        if !self.rate_samples {
            self.rate.skip();
            return None;
        }
        self.rate.generate(now, now - rec.sent)
    }

    /// The controller gets the ACK (and first, if it asks, the one packet it delivers).
    fn ack_controller(&mut self, now: Time, ev: &AckEvent) {
        if self.packet_acks {
            let packet = PacketAcked {
                seq: ev.seq,
                bytes: ev.bytes,
                send_time: ev.send_time,
                tag: ev.tag,
                recv_time: Some(ev.recv_time),
                host_bytes: ev.host_bytes,
            };
            self.cc.on_packet_acked(now, &packet);
        }
        self.cc.on_ack(now, ev);
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
            // One datagram per ACK, never resent: its own RTT.
            ca_rtt: now - rec.sent,
            in_flight: self.in_flight,
            last_sent_seq: self.next_seq.saturating_sub(1),
            tag: rec.tag,
            newly_acked: 1,
            snd_una_advanced: true,
            in_recovery: self.recovery_point.is_some_and(|rp| ack.seq <= rp),
            rate,
            host_bytes: ack.host_bytes,
        }
    }

    /// No ACK for the controller's timeout: packets older than it are lost; send one packet anyway.
    pub fn on_timeout(&mut self, now: Time, out: &mut Vec<Packet>) -> Option<Time> {
        if self.mode == DatagramMode::Ctcp {
            return self.ctcp_restart(now, out);
        }
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

    /// ctcp.hh 206-214: more than 2 s without an ACK: the controller restarts (`init()`), the sender
    /// forgets what is outstanding (`_largest_ack = seq_num - 1`: neither lost nor ACKed for the
    /// controller, a late ACK still reaches it), the pacing clock and the no-ACK clock restart.
    fn ctcp_restart(&mut self, now: Time, out: &mut Vec<Packet>) -> Option<Time> {
        if !self.active || now.since(self.last_ack) <= CTCP_RESTART_AFTER {
            return self.ctcp.wake;
        }
        self.cc.on_rto(now);
        for o in self.ring.iter_mut().filter(|o| o.state == State::InFlight) {
            o.state = State::Lost;
        }
        let base = self.base_seq;
        for k in 0..self.ring.len() {
            let o = self.ring[k];
            if o.state == State::Lost && !self.given_up.contains_key(&(base + k as u64)) {
                self.give_up(base + k as u64, o);
            }
        }
        self.lost += self.in_flight as u64;
        self.in_flight = 0;
        self.recovery_point = None;
        self.compact();
        self.update_plan(now);
        self.ctcp.largest_ack = self.next_seq as i64 - 1;
        self.ctcp.last_send = now;
        self.ctcp.resetting = false;
        self.last_ack = now;
        // A restart that gives up a transfer's last packets ends it: the OFF period's (or think
        // time's) end is then the only wake-up left, as in `ctcp_send`.
        self.ctcp_iterate(now, out).or_else(|| {
            self.plan
                .as_ref()
                .and_then(|p| p.wake())
                .filter(|&t| t > now)
        })
    }

    /// When the no-ACK timeout would fire, given the last ACK.
    pub fn timeout_deadline(&self) -> Option<Time> {
        if self.mode == DatagramMode::Ctcp {
            // ctcp.hh 206: the first instant strictly more than 2 s after the last ACK (or restart).
            // Idle between transfers with nothing outstanding: no restart (the OFF wake-up starts a new sender).
            return (self.active && !self.idle())
                .then(|| self.last_ack + CTCP_RESTART_AFTER + Dur(1));
        }
        // Idle between transfers with nothing outstanding: no timer (the OFF wake-up restarts it).
        if self.idle() {
            return None;
        }
        Some(self.last_ack + self.cc.timeout())
    }

    pub fn start(&mut self, now: Time) {
        self.active = true;
        self.last_ack = now;
        // ctcp.hh 197-198: _last_send_time and last_ack_time start now; the loop's first pass is now.
        self.ctcp.last_send = now;
        self.ctcp.wake = Some(now);
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

    /// What the controller was told: (seq, rtt ms) per ACK, seq per loss, ms per `on_rto`.
    #[derive(Default)]
    struct Seen {
        acks: Vec<(u64, u64)>,
        losses: Vec<u64>,
        rtos: Vec<u64>,
    }

    /// A fixed window of `w` with a 100 ms timeout that records its events (unpaced).
    struct Probe {
        w: u32,
        seen: Arc<Mutex<Seen>>,
    }

    /// A fixed window of `w` paced at one 1504-byte packet per 10 ms (ctcp.hh's intersend time).
    struct Paced(Probe);

    impl Controller for Paced {
        fn on_ack(&mut self, now: Time, ev: &AckEvent) {
            self.0.on_ack(now, ev)
        }
        fn on_loss(&mut self, now: Time, ev: &LossEvent) {
            self.0.on_loss(now, ev)
        }
        fn on_rto(&mut self, now: Time) {
            self.0.on_rto(now)
        }
        fn cwnd(&self) -> u32 {
            self.0.w
        }
        fn pacing_rate(&self) -> Option<ccscope_core::Bandwidth> {
            Some(ccscope_core::Bandwidth::from_bps(1504 * 8 * 100))
        }
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
        fn on_rto(&mut self, now: Time) {
            self.seen.lock().unwrap().rtos.push(now.as_ns() / 1_000_000);
        }
        fn cwnd(&self) -> u32 {
            self.w
        }
        fn timeout(&self) -> Dur {
            Dur::from_ms(100)
        }
    }

    fn sender(mode: DatagramMode, w: u32) -> (DatagramSender, Arc<Mutex<Seen>>, Vec<u64>) {
        sender_with(mode, w, false)
    }

    fn sender_with(
        mode: DatagramMode,
        w: u32,
        paced: bool,
    ) -> (DatagramSender, Arc<Mutex<Seen>>, Vec<u64>) {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let probe = Probe {
            w,
            seen: seen.clone(),
        };
        let cc = if paced {
            AnyController::boxed(Paced(probe))
        } else {
            AnyController::boxed(probe)
        };
        let mut s = DatagramSender::new(0, cc, 1504, None).with_mode(mode);
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
    fn a_sender_remembers_at_most_given_up_max_lost_packets_forgetting_the_oldest() {
        let (mut s, _, _) = sender(DatagramMode::Ctcp, 3);
        let rec = s.ring[0];
        for seq in 0..GIVEN_UP_MAX as u64 + 2 {
            s.give_up(seq, rec);
        }
        assert_eq!(s.given_up.len(), GIVEN_UP_MAX);
        assert_eq!(s.given_up.first_key_value().map(|(k, _)| *k), Some(2));
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

    fn wake(s: &mut DatagramSender, ms: u64) -> Vec<u64> {
        let mut out = Vec::new();
        s.try_send(Time::from_ms(ms), &mut out);
        out.iter().map(|p| p.seq).collect()
    }

    #[test]
    fn ctcp_mode_allows_one_packet_beyond_the_window_past_the_largest_ack() {
        // ctcp.hh 216: seq < _largest_ack + 1 + window; _largest_ack = -1, then the ACKed seq + 1.
        let (mut s, _, first) = sender(DatagramMode::Ctcp, 3);
        assert_eq!(first, [0, 1, 2]);
        assert_eq!(ack(&mut s, 0, 50), [3, 4]);
        // Datagrump's count (next_ack_expected = ACKed seq + 1) lets only one more go.
        let (mut s, _, _) = sender(DatagramMode::Datagrump, 3);
        assert_eq!(ack(&mut s, 0, 50), [3]);
    }

    #[test]
    fn ctcp_mode_declares_every_earlier_outstanding_packet_lost_when_a_later_one_is_acked() {
        // markoviancc.cc onACK: every unacknowledged id below the ACKed one is lost (no threshold).
        let (mut s, seen, _) = sender(DatagramMode::Ctcp, 4);
        ack(&mut s, 2, 50);
        assert_eq!(seen.lock().unwrap().losses, [0, 1]);
        // ctcp.hh 292: a late ACK of a packet counted lost still reaches the controller, and reveals nothing.
        ack(&mut s, 0, 60);
        assert_eq!(seen.lock().unwrap().acks, [(2, 50), (0, 60)]);
        assert_eq!(seen.lock().unwrap().losses, [0, 1]);
        assert_eq!((s.lost, s.spurious), (2, 1));
        // The standard mode waits for three later packets.
        let (mut s, seen, _) = sender(DatagramMode::Standard, 4);
        ack(&mut s, 2, 50);
        assert!(seen.lock().unwrap().losses.is_empty());
    }

    #[test]
    fn ctcp_mode_paces_by_intersend_steps_and_within_one_packet_of_the_window_waits_for_an_ack() {
        // ctcp.hh 197, 217: _last_send_time starts at the start; a packet leaves once it is an
        // intersend time (10 ms) old, then _last_send_time += 10 ms.
        let (mut s, _, first) = sender_with(DatagramMode::Ctcp, 4, true);
        assert!(first.is_empty());
        assert_eq!(s.ctcp.wake, Some(Time::from_ms(10)));
        // A wake-up that is not the loop's own deadline is no iteration.
        assert!(wake(&mut s, 5).is_empty());
        assert_eq!(wake(&mut s, 10), [0]);
        assert_eq!(wake(&mut s, 20), [1]);
        assert_eq!(wake(&mut s, 30), [2]);
        // ctcp.hh 236-240: seq 3 >= _largest_ack (-1) + window (4): "hopeless", _last_send_time = now
        // at every pass, so the fourth slot is never due until an ACK moves _largest_ack.
        assert_eq!(s.ctcp.wake, None);
        // The ACK at 45 ms finds _last_send_time held at 45: the next packet leaves at 55, then 65.
        assert!(ack(&mut s, 0, 45).is_empty());
        assert_eq!(s.ctcp.wake, Some(Time::from_ms(55)));
        assert_eq!(wake(&mut s, 55), [3]);
        assert_eq!(wake(&mut s, 65), [4]);
        assert_eq!(s.ctcp.wake, None);
    }

    #[test]
    fn ctcp_mode_restarts_after_more_than_2_s_without_an_ack_and_forgets_what_is_outstanding() {
        let (mut s, seen, _) = sender(DatagramMode::Ctcp, 4);
        // ctcp.hh 206: cur_time - last_ack_time > 2000, the first instant after 2 s.
        assert_eq!(s.timeout_deadline(), Some(Time::from_ms(2000) + Dur(1)));
        assert!(timeout(&mut s, 2000).is_empty());
        assert!(seen.lock().unwrap().rtos.is_empty());
        let mut out = Vec::new();
        s.on_timeout(Time::from_ms(2000) + Dur(1), &mut out);
        // init() (the controller's on_rto), _largest_ack = seq - 1: a fresh window of 4, no loss reported.
        assert_eq!(seen.lock().unwrap().rtos, [2000]);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), [4, 5, 6, 7]);
        assert!(seen.lock().unwrap().losses.is_empty());
        assert_eq!(s.lost, 4);
        // A late ACK of a forgotten packet reaches the controller and reveals no loss of the others.
        ack(&mut s, 1, 2100);
        assert_eq!(seen.lock().unwrap().acks, [(1, 2100)]);
        assert!(seen.lock().unwrap().losses.is_empty());
        // The no-ACK clock restarted at that ACK.
        assert_eq!(s.timeout_deadline(), Some(Time::from_ms(4100) + Dur(1)));
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
