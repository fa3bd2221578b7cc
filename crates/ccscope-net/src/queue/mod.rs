//! Queues in front of a link: a FIFO base that owns the limits, and the disciplines over it.

mod codel;
mod pie;
mod red;

use std::collections::VecDeque;

use ccscope_core::rng::Rng;
use ccscope_core::{Bandwidth, Dur, Time};

use crate::Packet;

pub use codel::{Codel, CodelFlavour, CodelParams};
pub use pie::{Pie, PieDecision, PieFlavour, PieParams, PieReplay, PieUpdate};
pub use red::{Red, RedParams};

/// Packet and byte limits; `None` is unlimited.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Limits {
    pub packets: Option<u64>,
    pub bytes: Option<u64>,
}

impl Limits {
    fn fits(&self, packets: u64, bytes: u64) -> bool {
        self.packets.is_none_or(|l| packets <= l) && self.bytes.is_none_or(|l| bytes <= l)
    }
}

/// No queue of any discipline holds more packets than this (48 B each, at most 192 MiB of storage): an
/// arrival beyond it is tail-dropped, so an infinite queue (or an AQM without a hard limit) under
/// sustained overload keeps memory bounded. At 1 Gbit/s and 1500 B that is 50 s of queue.
pub const MAX_QUEUED_PACKETS: u64 = 1 << 22;

/// Which discipline, with its parameters (validated by the scenario loader).
#[derive(Clone, Debug, PartialEq)]
pub enum QueueConfig {
    Infinite,
    /// Drop the arriving packet when it would exceed a limit (Mahimahi `droptail`).
    DropTail(Limits),
    /// Drop from the head until the arriving packet fits (Mahimahi `drophead`).
    DropHead(Limits),
    Red(RedParams),
    Codel(CodelParams),
    Pie(PieParams),
}

/// FIFO storage with byte and packet counts.
#[derive(Debug, Default)]
pub struct Fifo {
    q: VecDeque<Packet>,
    bytes: u64,
}

impl Fifo {
    fn with_capacity(n: usize) -> Self {
        Fifo {
            q: VecDeque::with_capacity(n),
            bytes: 0,
        }
    }
    #[inline]
    fn push(&mut self, p: Packet) {
        self.bytes += p.bytes as u64;
        self.q.push_back(p);
    }
    #[inline]
    fn pop(&mut self) -> Option<Packet> {
        let p = self.q.pop_front()?;
        self.bytes -= p.bytes as u64;
        Some(p)
    }
    pub fn packets(&self) -> u64 {
        self.q.len() as u64
    }
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    fn check(&self) {
        debug_assert!(
            self.q.len() > 64 || self.bytes == self.q.iter().map(|p| p.bytes as u64).sum::<u64>()
        );
    }
}

/// A queue of any discipline (enum dispatch: no virtual call per packet).
#[derive(Debug)]
pub enum AnyQueue {
    Infinite(Fifo),
    DropTail(Fifo, Limits),
    DropHead(Fifo, Limits),
    Red(Red),
    Codel(Codel),
    Pie(Pie),
}

impl AnyQueue {
    /// `link_rate` is the link's (mean) rate, which RED needs to age its average across idle time.
    pub fn new(cfg: &QueueConfig, rng: Rng, link_rate: Bandwidth) -> AnyQueue {
        match cfg {
            QueueConfig::Infinite => AnyQueue::Infinite(Fifo::with_capacity(1024)),
            QueueConfig::DropTail(l) => AnyQueue::DropTail(Fifo::with_capacity(1024), *l),
            QueueConfig::DropHead(l) => AnyQueue::DropHead(Fifo::with_capacity(1024), *l),
            QueueConfig::Red(p) => AnyQueue::Red(Red::new(p.clone(), rng, link_rate)),
            QueueConfig::Codel(p) => AnyQueue::Codel(Codel::new(p.clone())),
            QueueConfig::Pie(p) => AnyQueue::Pie(Pie::new(p.clone(), rng)),
        }
    }

    fn fifo(&self) -> &Fifo {
        match self {
            AnyQueue::Infinite(f) | AnyQueue::DropTail(f, _) | AnyQueue::DropHead(f, _) => f,
            AnyQueue::Red(r) => &r.fifo,
            AnyQueue::Codel(c) => &c.fifo,
            AnyQueue::Pie(p) => &p.fifo,
        }
    }

    pub fn packets(&self) -> u64 {
        self.fifo().packets()
    }

    pub fn bytes(&self) -> u64 {
        self.fifo().bytes()
    }

    pub fn is_empty(&self) -> bool {
        self.fifo().q.is_empty()
    }

    pub fn for_each(&self, f: &mut impl FnMut(&Packet)) {
        self.fifo().q.iter().for_each(f);
    }

    /// Offer `pkt` at `now`; dropped packets (the arrival or others) are pushed onto `drops`.
    #[inline]
    pub fn enqueue(&mut self, mut pkt: Packet, now: Time, drops: &mut Vec<Packet>) {
        pkt.enqueued = now;
        // The storage bound is checked in each arm, beside the discipline's own limit (one load).
        let full = |f: &Fifo| f.packets() >= MAX_QUEUED_PACKETS;
        match self {
            AnyQueue::Infinite(f) => {
                if full(f) {
                    drops.push(pkt);
                } else {
                    f.push(pkt);
                }
            }
            AnyQueue::DropTail(f, l) => {
                if !full(f) && l.fits(f.packets() + 1, f.bytes() + pkt.bytes as u64) {
                    f.push(pkt);
                } else {
                    drops.push(pkt);
                }
            }
            AnyQueue::DropHead(f, l) => {
                if full(f) {
                    drops.push(pkt);
                } else {
                    f.push(pkt);
                    while !l.fits(f.packets(), f.bytes()) {
                        drops.push(f.pop().expect("over a limit, so non-empty"));
                    }
                }
            }
            AnyQueue::Red(r) => {
                if full(&r.fifo) {
                    drops.push(pkt);
                } else {
                    r.enqueue(pkt, now, drops);
                }
            }
            AnyQueue::Codel(c) => {
                if full(&c.fifo) {
                    drops.push(pkt);
                } else {
                    c.enqueue(pkt, drops);
                }
            }
            // PIE updates before its limits, so it applies the storage bound itself.
            AnyQueue::Pie(p) => p.enqueue(pkt, now, drops),
        }
        self.fifo().check();
    }

    /// A packet reaching this queue while it is empty and its link idle: what `enqueue` then `dequeue`
    /// would give, without storing it (`Ok(None)`: dropped). `Err` gives the packet back for an AQM,
    /// which must see both calls.
    #[inline]
    pub fn through_empty(
        &mut self,
        mut pkt: Packet,
        now: Time,
        drops: &mut Vec<Packet>,
    ) -> Result<Option<Packet>, Packet> {
        debug_assert!(self.is_empty());
        match self {
            AnyQueue::Infinite(_) => {}
            // Alone in the queue, it is dropped (tail or head) exactly when it alone exceeds a limit.
            AnyQueue::DropTail(_, l) | AnyQueue::DropHead(_, l) => {
                if !l.fits(1, pkt.bytes as u64) {
                    pkt.enqueued = now;
                    drops.push(pkt);
                    return Ok(None);
                }
            }
            AnyQueue::Red(_) | AnyQueue::Codel(_) | AnyQueue::Pie(_) => return Err(pkt),
        }
        pkt.enqueued = now;
        Ok(Some(pkt))
    }

    /// Take the next packet to transmit at `now`; AQMs that drop at dequeue push onto `drops`.
    #[inline]
    pub fn dequeue(&mut self, now: Time, drops: &mut Vec<Packet>) -> Option<Packet> {
        let p = match self {
            AnyQueue::Infinite(f) | AnyQueue::DropTail(f, _) | AnyQueue::DropHead(f, _) => f.pop(),
            AnyQueue::Red(r) => r.dequeue(now),
            AnyQueue::Codel(c) => c.dequeue(now, drops),
            AnyQueue::Pie(p) => p.dequeue(now),
        };
        self.fifo().check();
        p
    }
}

/// Sojourn time of a packet leaving the queue at `now`.
pub fn sojourn(p: &Packet, now: Time) -> Dur {
    now.since(p.enqueued)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(seq: u64, bytes: u32) -> Packet {
        Packet::data(0, seq, bytes, Time::ZERO)
    }

    fn q(cfg: QueueConfig) -> AnyQueue {
        AnyQueue::new(
            &cfg,
            ccscope_core::rng::stream(1, 1),
            Bandwidth::from_mbps(10.0),
        )
    }

    #[test]
    fn through_empty_gives_what_enqueue_then_dequeue_give_and_leaves_aqms_alone() {
        let lim = Limits {
            packets: Some(1),
            bytes: Some(1500),
        };
        let fifos = [
            QueueConfig::Infinite,
            QueueConfig::DropTail(lim),
            QueueConfig::DropHead(lim),
        ];
        for cfg in fifos {
            for bytes in [40, 1500, 1501] {
                let (mut d1, mut d2) = (Vec::new(), Vec::new());
                let mut a = q(cfg.clone());
                a.enqueue(pkt(7, bytes), Time(5), &mut d1);
                let want = a.dequeue(Time(5), &mut d1);
                let got = q(cfg.clone()).through_empty(pkt(7, bytes), Time(5), &mut d2);
                assert_eq!((got, d2), (Ok(want), d1), "{cfg:?} {bytes}");
            }
        }
        let mut red = q(QueueConfig::Red(RedParams::default()));
        assert_eq!(
            red.through_empty(pkt(1, 100), Time(0), &mut Vec::new()),
            Err(pkt(1, 100))
        );
    }

    #[test]
    fn droptail_drops_the_arrival_when_either_limit_is_exceeded() {
        let mut d = Vec::new();
        let mut q = q(QueueConfig::DropTail(Limits {
            packets: Some(2),
            bytes: Some(2500),
        }));
        q.enqueue(pkt(0, 1000), Time(0), &mut d);
        q.enqueue(pkt(1, 1000), Time(0), &mut d);
        q.enqueue(pkt(2, 100), Time(0), &mut d); // packet limit
        assert_eq!(d.iter().map(|p| p.seq).collect::<Vec<_>>(), [2]);
        q.dequeue(Time(0), &mut d);
        q.enqueue(pkt(3, 1600), Time(0), &mut d); // byte limit: 1000 + 1600 > 2500
        assert_eq!(d.iter().map(|p| p.seq).collect::<Vec<_>>(), [2, 3]);
        assert_eq!((q.packets(), q.bytes()), (1, 1000));
    }

    #[test]
    fn drophead_evicts_the_oldest_to_admit_the_arrival() {
        let mut d = Vec::new();
        let mut q = q(QueueConfig::DropHead(Limits {
            packets: Some(2),
            bytes: None,
        }));
        for s in 0..4 {
            q.enqueue(pkt(s, 1500), Time(0), &mut d);
        }
        assert_eq!(d.iter().map(|p| p.seq).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(q.dequeue(Time(0), &mut d).map(|p| p.seq), Some(2));
    }

    #[test]
    fn every_discipline_stops_storing_at_the_storage_bound() {
        let mut q = q(QueueConfig::Infinite);
        let mut drops = Vec::new();
        for i in 0..MAX_QUEUED_PACKETS + 2 {
            q.enqueue(pkt(i, 100), Time::ZERO, &mut drops);
        }
        assert_eq!(q.packets(), MAX_QUEUED_PACKETS);
        assert_eq!(
            drops.iter().map(|p| p.seq).collect::<Vec<_>>(),
            [MAX_QUEUED_PACKETS, MAX_QUEUED_PACKETS + 1]
        );
        // Below the bound again, it stores.
        assert!(q.dequeue(Time::ZERO, &mut drops).is_some());
        q.enqueue(pkt(0, 100), Time::ZERO, &mut drops);
        assert_eq!((q.packets(), drops.len()), (MAX_QUEUED_PACKETS, 2));
    }

    #[test]
    fn infinite_never_drops() {
        let mut d = Vec::new();
        let mut q = q(QueueConfig::Infinite);
        for s in 0..10_000 {
            q.enqueue(pkt(s, 1500), Time(0), &mut d);
        }
        assert!(d.is_empty());
        assert_eq!(q.bytes(), 15_000_000);
    }
}
