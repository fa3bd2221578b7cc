//! A scripted sender for unit tests: `send`, `ack`, `lose`, `advance`, so each test reads as a scenario.

use std::collections::VecDeque;

use ccscope_core::{Dur, Time};

use crate::common::{PacketSendState, RateSampler};
use crate::{AckEvent, CongestionEvent, Controller, LossCause, LossEvent, PacketAcked, SendEvent};

pub struct Script<C: Controller> {
    pub cc: C,
    pub now: Time,
    next_seq: u64,
    /// (seq, send time, tag) of packets in flight, oldest first.
    pub in_flight: VecDeque<(u64, Time, u64)>,
    pub bytes: u32,
    /// What ACKs report as `in_recovery`: set by `congestion`, cleared by `recovery_exit` and `rto`.
    pub in_recovery: bool,
    /// Delivery-rate sampling, as the transports do it; each ACK carries its sample.
    pub rate: RateSampler,
    /// (seq, send state) of packets sent, oldest first; entries of lost packets are dropped lazily.
    rate_state: VecDeque<(u64, PacketSendState)>,
    /// What ACKs report as the receiving host's cumulative arrivals (`AckEvent::host_bytes`).
    pub host_bytes: Option<u64>,
    /// ACKs carry rate samples; as the transports do, only when the controller reads them.
    pub rate_samples: bool,
}

impl<C: Controller> Script<C> {
    pub fn new(cc: C) -> Self {
        let rate_samples = cc.wants_rate_sample();
        Script {
            cc,
            now: Time::ZERO,
            next_seq: 0,
            in_flight: VecDeque::new(),
            bytes: 1500,
            in_recovery: false,
            rate: RateSampler::default(),
            rate_state: VecDeque::new(),
            host_bytes: None,
            rate_samples,
        }
    }

    /// Let `d` pass, firing each timer at the time it asked for (as the simulator does). A controller
    /// whose timer keeps asking for the instant it just fired at would hang the simulator: it panics here.
    pub fn advance(&mut self, d: Dur) {
        let end = self.now + d;
        let mut same_instant = 0u32;
        while let Some(t) = self.cc.next_timer() {
            if t > end {
                break;
            }
            let at = t.max(self.now);
            same_instant = if at == self.now { same_instant + 1 } else { 1 };
            assert!(
                same_instant <= 1000,
                "the timer fired 1000 times at {at:?} without moving on"
            );
            self.now = at;
            self.cc.on_timer(self.now);
        }
        self.now = end;
    }

    pub fn send(&mut self, n: usize) {
        for _ in 0..n {
            self.send_one(false);
        }
    }

    fn send_one(&mut self, after_timeout: bool) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let ev = SendEvent {
            seq,
            bytes: self.bytes,
            in_flight: self.in_flight.len() as u32 + 1,
            after_timeout,
            retransmission: false,
            app_limited: self.rate.is_app_limited(),
        };
        let tag = self.cc.on_send(self.now, &ev);
        let state = self.rate.on_send(self.now, self.in_flight.is_empty());
        self.rate_state.push_back((seq, state));
        self.in_flight.push_back((seq, self.now, tag));
    }

    /// The rate sampler learns that `seq` (sent at `sent`) was delivered now.
    fn delivered(&mut self, seq: u64, sent: Time) {
        // Entries below the oldest packet in flight belong to lost packets.
        let oldest = self.in_flight.front().map_or(seq, |f| f.0.min(seq));
        while self.rate_state.front().is_some_and(|&(s, _)| s < oldest) {
            self.rate_state.pop_front();
        }
        if let Some(i) = self.rate_state.iter().position(|&(s, _)| s == seq) {
            let (_, state) = self.rate_state.remove(i).expect("found");
            self.rate.on_delivered(self.now, &state, sent, seq);
        }
    }

    /// The delivery-rate sample of the ACK being processed, when the controller reads one.
    fn rate_sample(&mut self, rtt: Dur) -> Option<crate::common::RateSample> {
        if !self.rate_samples {
            self.rate.skip();
            return None;
        }
        self.rate.generate(self.now, rtt)
    }

    /// The application has nothing more to send now (the transports' `tcp_rate_check_app_limited`).
    pub fn app_limited(&mut self) {
        self.rate.on_app_limited(self.in_flight.len() as u32);
    }

    /// Send until the window is full.
    pub fn fill_window(&mut self) {
        let cwnd = self.cc.cwnd() as usize;
        let n = cwnd.saturating_sub(self.in_flight.len());
        self.send(n);
    }

    /// ACK the oldest packet in flight, `rtt` after it was sent (the clock moves to that time).
    pub fn ack_oldest(&mut self, rtt: Dur) -> bool {
        self.deliver(0, rtt)
    }

    /// A duplicate ACK that SACKs the second-oldest packet in flight while the oldest is still missing:
    /// it delivers a packet but does not advance SND.UNA.
    pub fn sack_past_hole(&mut self, rtt: Dur) -> bool {
        self.deliver(1, rtt)
    }

    /// The ACK of packet `i` in flight (0 = oldest, which advances SND.UNA), `rtt` after it was sent.
    fn deliver(&mut self, i: usize, rtt: Dur) -> bool {
        let Some(p) = self.in_flight.remove(i) else {
            return false;
        };
        self.acknowledge(&[p], i == 0, rtt);
        true
    }

    /// One cumulative ACK of the `n` oldest packets in flight (a delayed ACK), `rtt` after the oldest was
    /// sent: it echoes the oldest (RFC 7323 §4.3) and acknowledges `n` packets.
    pub fn ack_oldest_n(&mut self, n: usize, rtt: Dur) -> bool {
        let n = n.min(self.in_flight.len());
        if n == 0 {
            return false;
        }
        let acked: Vec<_> = self.in_flight.drain(..n).collect();
        self.acknowledge(&acked, true, rtt);
        true
    }

    /// One ACK of the packets `acked` (taken out of flight already), echoing the first, `rtt` after it
    /// was sent (the clock moves to that time).
    fn acknowledge(&mut self, acked: &[(u64, Time, u64)], snd_una_advanced: bool, rtt: Dur) {
        let (seq, sent, tag) = acked[0];
        if sent + rtt > self.now {
            self.now = sent + rtt;
        }
        for &(s, t, _) in acked {
            self.delivered(s, t);
        }
        let recv_time = sent + Dur(rtt.as_ns() / 2);
        if self.cc.wants_packet_acks() {
            for (i, &(s, t, tag)) in acked.iter().enumerate() {
                let ev = PacketAcked {
                    seq: s,
                    bytes: self.bytes,
                    send_time: t,
                    tag,
                    // Only the echoed packet's arrival comes back (RFC 7323 §4.3).
                    recv_time: (i == 0).then_some(recv_time),
                    host_bytes: if i == 0 { self.host_bytes } else { None },
                };
                self.cc.on_packet_acked(self.now, &ev);
            }
        }
        let rate = self.rate_sample(rtt);
        let ev = AckEvent {
            seq,
            bytes: self.bytes,
            send_time: sent,
            recv_time,
            rtt,
            // The newest packet the ACK covers (the Script resends none).
            ca_rtt: self.now - acked.iter().map(|a| a.1).max().unwrap_or(sent),
            in_flight: self.in_flight.len() as u32,
            last_sent_seq: self.next_seq.saturating_sub(1),
            tag,
            newly_acked: acked.len() as u32,
            snd_una_advanced,
            in_recovery: self.in_recovery,
            rate,
            host_bytes: self.host_bytes,
        };
        self.cc.on_ack(self.now, &ev);
    }

    /// ACK everything in flight (not what those ACKs let the sender send).
    pub fn ack_all(&mut self, rtt: Dur) {
        let n = self.in_flight.len();
        for _ in 0..n {
            self.ack_oldest(rtt);
        }
    }

    /// One round over a path that delivers at most `cap` packets per `rtt`: send what the window
    /// allows, up to `cap`, at once, and ACK each `rtt` after it was sent.
    pub fn round(&mut self, cap: usize, rtt: Dur) {
        let room = (self.cc.cwnd() as usize).saturating_sub(self.in_flight.len());
        self.send(cap.min(room));
        self.ack_all(rtt);
    }

    /// The flow's timeout fired: tell the controller, then send one packet regardless of the window.
    pub fn timeout(&mut self) {
        self.cc.on_timeout(self.now);
        self.send_one(true);
    }

    /// Send one packet and ACK the oldest in flight `rtt` after it was sent.
    pub fn send_and_ack(&mut self, rtt: Dur) {
        self.send(1);
        self.ack_oldest(rtt);
    }

    /// Declare the oldest packet lost.
    pub fn lose_oldest(&mut self, cause: LossCause) -> bool {
        let Some((seq, sent, tag)) = self.in_flight.pop_front() else {
            return false;
        };
        let ev = LossEvent {
            seq,
            bytes: self.bytes,
            send_time: sent,
            in_flight: self.in_flight.len() as u32,
            cause,
            tag,
        };
        self.cc.on_loss(self.now, &ev);
        true
    }

    /// The reliable transport detects a loss (3 dup ACKs or SACK): `on_congestion_event` with the flight
    /// before the loss, then the oldest packet is declared lost; ACKs are in recovery from here on.
    pub fn congestion(&mut self, cause: LossCause) -> bool {
        let Some(&(_, sent, _)) = self.in_flight.front() else {
            return false;
        };
        let ev = CongestionEvent {
            in_flight: self.in_flight.len() as u32,
            send_time: sent,
            cause,
        };
        self.cc.on_congestion_event(self.now, &ev);
        self.in_recovery = true;
        self.lose_oldest(cause)
    }

    /// The recovery point was cumulatively acknowledged.
    pub fn recovery_exit(&mut self) {
        self.in_recovery = false;
        self.cc.on_recovery_exit(self.now);
    }

    /// The retransmission timer fired: every packet in flight is declared lost, then `on_rto` (the
    /// reliable transport's order).
    pub fn rto(&mut self) {
        while self.lose_oldest(LossCause::Timeout) {}
        self.in_recovery = false;
        self.cc.on_rto(self.now);
    }

    /// The timer fired again with nothing acknowledged since: as `rto`, then `on_rto_repeated`.
    pub fn rto_repeated(&mut self) {
        while self.lose_oldest(LossCause::Timeout) {}
        self.in_recovery = false;
        self.cc.on_rto_repeated(self.now);
    }
}

/// Assert two floats agree to 1e-9 (relative for large values): hand-worked numbers are rounded by f64.
#[track_caller]
pub fn assert_close(actual: f64, expected: f64) {
    let tol = 1e-9 * expected.abs().max(1.0);
    assert!(
        (actual - expected).abs() <= tol,
        "got {actual}, expected {expected}"
    );
}

/// A paced sender over one FIFO bottleneck (`rate_pps` packets/s, `buffer` packets, DropTail) with a
/// one-way delay `delay` after it and the same delay back for the ACK: enough of a network to close a
/// rate controller's loop in a unit test. Losses are reported `2 delay` after the drop.
pub struct PacedPath {
    pub rate_pps: f64,
    pub buffer: usize,
    pub delay: Dur,
    pub bytes: u32,
}

/// (time, seq, send time, arrival time or `None` for a loss, tag) of an ACK or loss report due.
type PathEvent = (Time, u64, Time, Option<Time>, u64);

/// What `PacedPath::run` saw.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PathTotals {
    pub sent: u64,
    pub delivered: u64,
    pub lost: u64,
}

impl PacedPath {
    /// Drive `cc` from time zero to `until`: send at its pacing rate (window permitting), ACK or lose each
    /// packet, fire its timer.
    pub fn run<C: Controller>(&self, cc: &mut C, until: Time) -> PathTotals {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let service = Dur::from_secs_f64(1.0 / self.rate_pps);
        let mut totals = PathTotals::default();
        let mut events: BinaryHeap<Reverse<PathEvent>> = BinaryHeap::new();
        let mut queue: VecDeque<Time> = VecDeque::new();
        let (mut busy_until, mut next_send, mut seq) = (Time::ZERO, Time::ZERO, 0u64);
        let mut in_flight = 0u32;
        let mut rate = RateSampler::default();
        let mut states: Vec<PacketSendState> = Vec::new();
        loop {
            let t_ev = events
                .peek()
                .map(|Reverse(e)| e.0)
                .unwrap_or(Time(u64::MAX));
            let t_timer = cc.next_timer().unwrap_or(Time(u64::MAX));
            let t_send = if in_flight < cc.cwnd() {
                next_send
            } else {
                Time(u64::MAX)
            };
            let now = t_ev.min(t_timer).min(t_send);
            if now > until {
                return totals;
            }
            if now == t_ev {
                let Reverse((_, s, sent, recv, tag)) = events.pop().expect("peeked");
                in_flight -= 1;
                match recv {
                    Some(recv_time) => {
                        rate.on_delivered(now, &states[s as usize], sent, s);
                        if cc.wants_packet_acks() {
                            let packet = PacketAcked {
                                seq: s,
                                bytes: self.bytes,
                                send_time: sent,
                                tag,
                                recv_time: Some(recv_time),
                                host_bytes: None,
                            };
                            cc.on_packet_acked(now, &packet);
                        }
                        let ev = AckEvent {
                            seq: s,
                            bytes: self.bytes,
                            send_time: sent,
                            recv_time,
                            rtt: now - sent,
                            ca_rtt: now - sent,
                            in_flight,
                            last_sent_seq: seq.saturating_sub(1),
                            tag,
                            newly_acked: 1,
                            snd_una_advanced: true,
                            in_recovery: false,
                            rate: rate.generate(now, now - sent),
                            host_bytes: None,
                        };
                        cc.on_ack(now, &ev);
                    }
                    None => cc.on_loss(
                        now,
                        &LossEvent {
                            seq: s,
                            bytes: self.bytes,
                            send_time: sent,
                            in_flight,
                            cause: LossCause::Reordering,
                            tag,
                        },
                    ),
                }
            } else if now == t_timer {
                cc.on_timer(now);
            } else {
                states.push(rate.on_send(now, in_flight == 0));
                in_flight += 1;
                totals.sent += 1;
                let tag = cc.on_send(
                    now,
                    &SendEvent {
                        seq,
                        bytes: self.bytes,
                        in_flight,
                        after_timeout: false,
                        retransmission: false,
                        app_limited: false,
                    },
                );
                while queue.front().is_some_and(|&d| d <= now) {
                    queue.pop_front();
                }
                if queue.len() >= self.buffer {
                    totals.lost += 1;
                    events.push(Reverse((
                        now + self.delay + self.delay,
                        seq,
                        now,
                        None,
                        tag,
                    )));
                } else {
                    totals.delivered += 1;
                    let depart = busy_until.max(now) + service;
                    busy_until = depart;
                    queue.push_back(depart);
                    let recv = depart + self.delay;
                    events.push(Reverse((recv + self.delay, seq, now, Some(recv), tag)));
                }
                seq += 1;
                let gap = cc
                    .pacing_rate()
                    .map_or(Dur::ZERO, |r| r.tx_time(self.bytes as u64));
                next_send = now + gap;
            }
        }
    }
}
