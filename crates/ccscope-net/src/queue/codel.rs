//! CoDel (RFC 8289): drop at dequeue when the sojourn time has stayed above `target` for `interval`.

use ccscope_core::{Dur, Time};

use super::{Fifo, Limits};
use crate::Packet;

#[derive(Clone, Debug, PartialEq)]
pub struct CodelParams {
    /// Acceptable standing queue delay (RFC 8289 §4.4: 5 ms).
    pub target: Dur,
    /// Window over which the minimum sojourn must exceed target (RFC 8289 §4.5: 100 ms).
    pub interval: Dur,
    /// Physical buffer (tail drop beyond it).
    pub limit: Limits,
    /// Below one MTU of backlog CoDel never drops (RFC 8289 §4.2 maxpacket).
    pub mtu_bytes: u32,
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams {
            target: Dur::from_ms(5),
            interval: Dur::from_ms(100),
            limit: Limits::default(),
            mtu_bytes: 1500,
        }
    }
}

#[derive(Debug)]
pub struct Codel {
    p: CodelParams,
    pub(super) fifo: Fifo,
    first_above_time: Option<Time>,
    drop_next: Time,
    count: u32,
    lastcount: u32,
    dropping: bool,
}

impl Codel {
    pub fn new(p: CodelParams) -> Self {
        Codel {
            p,
            fifo: Fifo::with_capacity(1024),
            first_above_time: None,
            drop_next: Time::ZERO,
            count: 0,
            lastcount: 0,
            dropping: false,
        }
    }

    pub(super) fn enqueue(&mut self, pkt: Packet, drops: &mut Vec<Packet>) {
        if self.p.limit.fits(
            self.fifo.packets() + 1,
            self.fifo.bytes() + pkt.bytes as u64,
        ) {
            self.fifo.push(pkt);
        } else {
            drops.push(pkt);
        }
    }

    // RFC 8289 §5.7 control law: next drop after interval / sqrt(count).
    fn control_law(&self, t: Time) -> Time {
        t + Dur((self.p.interval.as_ns() as f64 / (self.count.max(1) as f64).sqrt()) as u64)
    }

    // RFC 8289 §5.5 dodequeue: pop and decide whether the sojourn permits a drop.
    fn do_dequeue(&mut self, now: Time) -> (Option<Packet>, bool) {
        let Some(p) = self.fifo.pop() else {
            self.first_above_time = None;
            return (None, false);
        };
        let sojourn = now.since(p.enqueued);
        let mut ok_to_drop = false;
        if sojourn < self.p.target || self.fifo.bytes() <= self.p.mtu_bytes as u64 {
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                None => self.first_above_time = Some(now + self.p.interval),
                Some(t) if now >= t => ok_to_drop = true,
                Some(_) => {}
            }
        }
        (Some(p), ok_to_drop)
    }

    // RFC 8289 §5.6 dequeue.
    pub(super) fn dequeue(&mut self, now: Time, drops: &mut Vec<Packet>) -> Option<Packet> {
        let (mut p, ok) = self.do_dequeue(now);
        if self.dropping {
            if !ok {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                drops.push(p.take().expect("ok_to_drop implies a packet"));
                self.count += 1;
                let (np, ok) = self.do_dequeue(now);
                p = np;
                if !ok {
                    self.dropping = false;
                } else {
                    self.drop_next = self.control_law(self.drop_next);
                }
            }
        } else if ok {
            drops.push(p.take().expect("ok_to_drop implies a packet"));
            let (np, _) = self.do_dequeue(now);
            p = np;
            self.dropping = true;
            let delta = self.count.saturating_sub(self.lastcount);
            self.count =
                if delta > 1 && now.since(self.drop_next) < Dur(16 * self.p.interval.as_ns()) {
                    delta
                } else {
                    1
                };
            self.drop_next = self.control_law(now);
            self.lastcount = self.count;
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{AnyQueue, QueueConfig};
    use ccscope_core::Bandwidth;

    #[test]
    fn a_standing_queue_above_target_for_an_interval_starts_dropping() {
        let mut q = AnyQueue::new(
            &QueueConfig::Codel(CodelParams::default()),
            ccscope_core::rng::stream(1, 1),
            Bandwidth(0),
        );
        let mut d = Vec::new();
        // 100 packets arrive at t = 0 and are served one per 10 ms: sojourn grows past 5 ms at once.
        for s in 0..100 {
            q.enqueue(Packet::data(0, s, 1500, Time::ZERO), Time::ZERO, &mut d);
        }
        let mut served = Vec::new();
        let mut t = Time::ZERO;
        while let Some(p) = q.dequeue(t, &mut d) {
            served.push((t, p.seq));
            t += Dur::from_ms(10);
        }
        // Nothing is dropped in the first interval (100 ms after the first above-target dequeue).
        assert!(d.iter().all(|p| p.seq >= 10), "early drop: {:?}", d.first());
        assert!(!d.is_empty());
        assert_eq!(d.len() + served.len(), 100);
    }

    #[test]
    fn short_sojourns_never_drop() {
        let mut q = AnyQueue::new(
            &QueueConfig::Codel(CodelParams::default()),
            ccscope_core::rng::stream(1, 1),
            Bandwidth(0),
        );
        let mut d = Vec::new();
        for s in 0..1000u64 {
            let t = Time::from_ms(s);
            q.enqueue(Packet::data(0, s, 1500, t), t, &mut d);
            q.enqueue(Packet::data(0, s, 1500, t), t, &mut d);
            q.dequeue(t + Dur::from_ms(1), &mut d);
            q.dequeue(t + Dur::from_ms(1), &mut d);
        }
        assert!(d.is_empty());
    }
}
