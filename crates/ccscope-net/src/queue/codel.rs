//! CoDel (RFC 8289): drop at dequeue when the sojourn time has stayed above `target` for `interval`.
//! Also as Mahimahi runs it (src/packet/codel_packet_queue.cc): see [`CodelFlavour`].

use ccscope_core::{Dur, Time};

use super::{Fifo, Limits};
use crate::Packet;

/// Whose reading of CoDel to run (docs/deviations.md, "Queues: CoDel and drop-head/drop-tail against
/// Mahimahi").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CodelFlavour {
    /// RFC 8289 §5: nanosecond clock; a drop discards the head and the packet behind it is sent.
    #[default]
    Rfc8289,
    /// Mahimahi `CODELPacketQueue`: whole-millisecond clock (`timestamp()`), the control law truncated to
    /// whole milliseconds; a drop discards the packet behind the head and the head is sent.
    Mahimahi,
}

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
    /// RFC 8289's or Mahimahi's reading (the scenario loader picks Mahimahi's on a trace link).
    pub flavour: CodelFlavour,
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams {
            target: Dur::from_ms(5),
            interval: Dur::from_ms(100),
            limit: Limits::default(),
            mtu_bytes: 1500,
            flavour: CodelFlavour::Rfc8289,
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

    /// The clock CoDel reads: `now` itself, or its whole milliseconds for Mahimahi (`timestamp()`).
    #[inline]
    fn clock(&self, t: Time) -> Time {
        match self.p.flavour {
            CodelFlavour::Rfc8289 => t,
            CodelFlavour::Mahimahi => Time::from_ms(t.as_ms_floor()),
        }
    }

    // RFC 8289 §5.7 control law: next drop after interval / sqrt(count).
    fn control_law(&self, t: Time) -> Time {
        let root = (self.count.max(1) as f64).sqrt();
        match self.p.flavour {
            CodelFlavour::Rfc8289 => t + Dur((self.p.interval.as_ns() as f64 / root) as u64),
            // mahimahi codel_packet_queue.cc control_law(): interval in ms / sqrt, cast to whole ms.
            CodelFlavour::Mahimahi => t + Dur::from_ms((self.p.interval.as_ms_f64() / root) as u64),
        }
    }

    // RFC 8289 §5.5 dodequeue: pop and decide whether the sojourn permits a drop.
    fn do_dequeue(&mut self, now: Time) -> (Option<Packet>, bool) {
        let Some(p) = self.fifo.pop() else {
            self.first_above_time = None;
            return (None, false);
        };
        // mahimahi codel_packet_queue.cc dodequeue(): now - arrival_time, both from timestamp().
        let sojourn = now.since(self.clock(p.enqueued));
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

    /// Drop one packet: RFC 8289 drops `p` and sends `next`; Mahimahi sends `p` and drops `next`
    /// (codel_packet_queue.cc dequeue(): the inner `r` shadows the one it returns).
    fn drop_one(&self, p: &mut Option<Packet>, next: Option<Packet>, drops: &mut Vec<Packet>) {
        match self.p.flavour {
            CodelFlavour::Rfc8289 => drops.extend(std::mem::replace(p, next)),
            CodelFlavour::Mahimahi => drops.extend(next),
        }
    }

    // RFC 8289 §5.6 dequeue.
    pub(super) fn dequeue(&mut self, now: Time, drops: &mut Vec<Packet>) -> Option<Packet> {
        let now = self.clock(now);
        let (mut p, ok) = self.do_dequeue(now);
        if self.dropping {
            if !ok {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                debug_assert!(p.is_some(), "ok_to_drop implies a packet");
                // RFC 8289 drops before it dequeues the next; the order of the two pops is the same.
                let (next, ok) = self.do_dequeue(now);
                self.count += 1;
                self.drop_one(&mut p, next, drops);
                if !ok {
                    self.dropping = false;
                } else {
                    self.drop_next = self.control_law(self.drop_next);
                }
            }
        } else if ok {
            let (next, _) = self.do_dequeue(now);
            self.drop_one(&mut p, next, drops);
            self.dropping = true;
            // Re-entry comes at least an interval after the last exit, so drop_next is never ahead of
            // now and the difference below cannot wrap (Mahimahi subtracts unsigned, Linux signed).
            debug_assert!(now >= self.drop_next);
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

    /// 100 packets of 1500 B queued at t = 0 and served one per 10 ms: (time in ms, seq) of each drop.
    fn standing_queue_drops(flavour: CodelFlavour) -> Vec<(u64, u64)> {
        let mut c = Codel::new(CodelParams {
            flavour,
            ..CodelParams::default()
        });
        let mut d = Vec::new();
        for s in 0..100 {
            c.enqueue(Packet::data(0, s, 1500, Time::ZERO), &mut d);
        }
        let mut drops = Vec::new();
        for k in 0..100 {
            let t = Time::from_ms(10 * k);
            let before = d.len();
            c.dequeue(t, &mut d);
            drops.extend(d[before..].iter().map(|p| (t.as_ms_floor(), p.seq)));
        }
        drops
    }

    // Hand-worked: first above target at 10 ms, so ok_to_drop at 110; drop_next = 110 + 100, then
    // + 100/sqrt(2) = 70.71 (280.71: the 290 dequeue), + 100/sqrt(3) = 57.74 (338.45: the 340 dequeue).
    #[test]
    fn rfc8289_drops_the_head_on_a_nanosecond_control_law() {
        assert_eq!(
            standing_queue_drops(CodelFlavour::Rfc8289)[..4],
            [(110, 11), (210, 22), (290, 31), (340, 37)]
        );
    }

    // mahimahi codel_packet_queue.cc dequeue(): the inner `dodequeue_result r` shadows the outer one, so
    // the head is returned and the packet behind it is discarded; control_law() truncates to whole ms
    // (110 + 100 = 210, + 70 = 280, + 57 = 337).
    #[test]
    fn the_mahimahi_flavour_sends_the_head_drops_the_packet_behind_it_and_truncates_the_control_law(
    ) {
        assert_eq!(
            standing_queue_drops(CodelFlavour::Mahimahi)[..4],
            [(110, 12), (210, 23), (280, 31), (340, 38)]
        );
    }

    // mahimahi codel_packet_queue.cc dodequeue(): sojourn = now - arrival_time, both whole ms
    // (timestamp()), so 0.5 ms -> 5.4 ms counts as 5 ms, not below a 5 ms target.
    #[test]
    fn the_mahimahi_flavour_measures_the_sojourn_on_a_millisecond_clock() {
        let run = |flavour| {
            let mut c = Codel::new(CodelParams {
                flavour,
                ..CodelParams::default()
            });
            let mut d = Vec::new();
            let t0 = Time(500_000);
            for s in 0..4 {
                c.enqueue(Packet::data(0, s, 1500, t0), &mut d);
            }
            let first = c.dequeue(Time(5_400_000), &mut d).map(|p| p.seq);
            let second = c.dequeue(Time(105_400_000), &mut d).map(|p| p.seq);
            (first, second, d.iter().map(|p| p.seq).collect::<Vec<_>>())
        };
        // Mahimahi: above target at 5 ms, so first_above_time = 105 and the 105 ms dequeue may drop.
        assert_eq!(run(CodelFlavour::Mahimahi), (Some(0), Some(1), vec![2]));
        // RFC 8289 in ns: 4.9 ms is below target; the clock of the interval starts only at 105.4 ms.
        assert_eq!(run(CodelFlavour::Rfc8289), (Some(0), Some(1), vec![]));
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
