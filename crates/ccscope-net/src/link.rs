//! A link: random loss, then a queue, then a serializer that is either a constant rate or a Mahimahi
//! trace of delivery opportunities.
//!
//! Trace semantics follow Mahimahi's `LinkQueue::rationalize`: every opportunity carries
//! `MAHIMAHI_MTU` bytes; a packet larger than what is left of an opportunity keeps its remaining
//! bytes for the next one; bytes an opportunity cannot use are wasted. An opportunity at time t
//! serves only packets that arrived before t: Mahimahi's `read_packet()` calls `rationalize(now)`
//! before it enqueues, and its clock counts whole milliseconds, so a packet that reaches the link
//! during millisecond t finds every opportunity of millisecond t used. Opportunities fall on whole
//! milliseconds, so "before t" in nanoseconds is the same rule.

use std::sync::Arc;

use ccscope_core::{Bandwidth, Dur, Time};

use crate::loss::LossModel;
use crate::queue::AnyQueue;
use crate::trace::{Trace, TraceCursor, MAHIMAHI_MTU};
use crate::Packet;

/// What a link did with an arriving packet.
#[derive(Clone, Copy, Debug)]
pub enum Arrival {
    /// Dropped or queued; a service event to schedule at this time, if any.
    Held(Option<Time>),
    /// Serialized at once: it leaves the serializer at this time.
    Departs(Packet, Time),
}

/// How a link serializes packets.
#[derive(Clone, Debug)]
pub enum Service {
    Constant(Bandwidth),
    Trace { trace: Arc<Trace>, once: bool },
}

#[derive(Debug)]
enum Serializer {
    Constant(ConstantRate),
    Trace(TraceCursor),
}

/// A constant rate, with the last transmission time it computed: a link's packets mostly have one
/// size, so most departures skip the division.
#[derive(Debug)]
struct ConstantRate {
    rate: Bandwidth,
    last_bytes: u64,
    last_tx: Dur,
}

impl ConstantRate {
    fn new(rate: Bandwidth) -> Self {
        ConstantRate {
            rate,
            last_bytes: 0,
            last_tx: rate.tx_time(0),
        }
    }

    /// [`Bandwidth::tx_time`] of `bytes`.
    #[inline]
    fn tx_time(&mut self, bytes: u32) -> Dur {
        let bytes = bytes as u64;
        if bytes != self.last_bytes {
            self.last_bytes = bytes;
            self.last_tx = self.rate.tx_time(bytes);
        }
        debug_assert_eq!(self.last_tx, self.rate.tx_time(bytes));
        self.last_tx
    }
}

/// Delivery capacity offered by the link, binned for time series.
#[derive(Debug, Default)]
pub struct Capacity {
    pub total_bytes: u64,
    pub bin_ns: u64,
    pub bins: Vec<u64>,
    /// First and last opportunity (ms) accounted.
    pub first_ms: Option<u64>,
    pub last_ms: u64,
    /// Opportunity times (ms) not yet written to a packet log; `None` when no log is kept.
    pub pending_log: Option<Vec<u64>>,
    /// Keep `bins` (a time series); without, the capacity costs no memory per bin.
    pub keep_bins: bool,
}

impl Capacity {
    #[inline]
    fn record(&mut self, t: Time, bytes: u64) {
        self.total_bytes += bytes;
        let ms = t.as_ms_floor();
        self.first_ms.get_or_insert(ms);
        self.last_ms = self.last_ms.max(ms);
        if self.keep_bins {
            let b = (t.as_ns() / self.bin_ns) as usize;
            if b >= self.bins.len() {
                self.bins.resize(b + 1, 0);
            }
            self.bins[b] += bytes;
        }
        if let Some(log) = &mut self.pending_log {
            log.push(t.as_ms_floor());
        }
    }
}

#[derive(Debug)]
pub struct Link {
    pub queue: AnyQueue,
    loss: LossModel,
    ser: Serializer,
    /// The packet on the wire and the bytes of it not yet sent.
    in_transit: Option<(Packet, u32)>,
    /// A service event is pending.
    busy: bool,
    /// Packets that reached a trace link at the instant of an opportunity not yet used; they are
    /// enqueued once it is (mahimahi link_queue.cc read_packet(): rationalize(now), then enqueue).
    held: Vec<Packet>,
    /// A constant-rate link that handed a packet on at its arrival (`arrive_cut_through`) is on the
    /// wire with it until this time, with no event of its own.
    free_at: Time,
    pub capacity: Capacity,
}

impl Link {
    pub fn new(
        service: &Service,
        queue: AnyQueue,
        loss: LossModel,
        bin: Dur,
        log_opportunities: bool,
    ) -> Link {
        let ser = match service {
            Service::Constant(r) => Serializer::Constant(ConstantRate::new(*r)),
            Service::Trace { trace, once } => {
                Serializer::Trace(TraceCursor::new(trace.clone(), *once))
            }
        };
        let capacity = Capacity {
            bin_ns: bin.as_ns().max(1),
            pending_log: log_opportunities.then(Vec::new),
            keep_bins: true,
            ..Default::default()
        };
        Link {
            queue,
            loss,
            ser,
            in_transit: None,
            busy: false,
            held: Vec::new(),
            free_at: Time::ZERO,
            capacity,
        }
    }

    /// Packets and bytes held by the link (queued or on the wire).
    pub fn backlog(&self) -> (u64, u64) {
        let (mut p, mut b) = (self.queue.packets(), self.queue.bytes());
        for h in &self.held {
            p += 1;
            b += h.bytes as u64;
        }
        match self.in_transit {
            Some((pkt, _)) => (p + 1, b + pkt.bytes as u64),
            None => (p, b),
        }
    }

    /// Visit every packet held by the link (queued or on the wire).
    pub fn for_each_packet(&self, mut f: impl FnMut(&Packet)) {
        self.queue.for_each(&mut f);
        if let Some((p, _)) = &self.in_transit {
            f(p);
        }
        self.held.iter().for_each(f);
    }

    /// A packet reaches a link whose departures need no event of their own (nobody measures them as
    /// they happen): on a constant-rate link that is idle with an empty queue, the packet goes
    /// through the queue and onto the wire at once and `Departs` says when it leaves. Otherwise as
    /// [`Link::arrive`]. Departure times are those `arrive` + `service` would give.
    #[inline]
    pub fn arrive_cut_through(
        &mut self,
        pkt: Packet,
        now: Time,
        drops: &mut Vec<Packet>,
    ) -> Arrival {
        if !matches!(self.ser, Serializer::Constant(_)) {
            return Arrival::Held(self.arrive(pkt, now, drops));
        }
        if self.busy || !self.queue.is_empty() {
            return Arrival::Held(self.arrive(pkt, now, drops));
        }
        if self.loss.drops(&pkt, now) {
            drops.push(pkt);
            return Arrival::Held(None);
        }
        // The same queue calls as `arrive`, so an AQM sees the same sequence.
        self.queue.enqueue(pkt, now, drops);
        if now < self.free_at {
            // The wire still carries the last packet handed on: this one waits for it.
            if self.queue.is_empty() {
                return Arrival::Held(None);
            }
            self.busy = true;
            return Arrival::Held(Some(self.free_at));
        }
        let Serializer::Constant(rate) = &mut self.ser else {
            unreachable!("checked above")
        };
        match self.queue.dequeue(now, drops) {
            Some(p) => {
                self.free_at = now + rate.tx_time(p.bytes);
                Arrival::Departs(p, self.free_at)
            }
            None => Arrival::Held(None),
        }
    }

    /// A packet reaches the link at `now`. Returns the time of a service event to schedule (phase
    /// `Late`) if the link was idle. Lost or dropped packets are pushed onto `drops`. Always inlined
    /// (the compiler kept it out of line, a call per packet and hop).
    #[inline(always)]
    pub fn arrive(&mut self, pkt: Packet, now: Time, drops: &mut Vec<Packet>) -> Option<Time> {
        if self.loss.drops(&pkt, now) {
            drops.push(pkt);
            return None;
        }
        if let Serializer::Trace(cur) = &self.ser {
            // mahimahi link_queue.cc read_packet(): rationalize(now) uses the opportunities <= now first.
            if self.busy && cur.peek().is_some_and(|t| t <= now) {
                self.held.push(pkt);
                return None;
            }
        }
        let mut pkt = pkt;
        if let Serializer::Constant(rate) = &mut self.ser {
            if !self.busy && self.queue.is_empty() {
                // An idle link with an empty FIFO puts the packet on the wire with no stop in the queue.
                match self.queue.through_empty(pkt, now, drops) {
                    Ok(Some(p)) => {
                        let done = now + rate.tx_time(p.bytes);
                        self.in_transit = Some((p, 0));
                        self.busy = true;
                        return Some(done);
                    }
                    Ok(None) => return None,
                    Err(p) => pkt = p,
                }
            }
        }
        self.queue.enqueue(pkt, now, drops);
        if self.busy || self.queue.is_empty() {
            return None;
        }
        match &mut self.ser {
            Serializer::Constant(rate) => {
                let p = self.queue.dequeue(now, drops)?;
                let done = now + rate.tx_time(p.bytes);
                self.in_transit = Some((p, 0));
                self.busy = true;
                Some(done)
            }
            Serializer::Trace(cur) => {
                // Opportunities up to now passed with the queue empty (read_packet() rationalizes first): wasted.
                while let Some(t) = cur.peek() {
                    if t > now {
                        break;
                    }
                    self.capacity.record(t, MAHIMAHI_MTU as u64);
                    cur.advance();
                }
                let next = cur.peek()?;
                self.busy = true;
                Some(next)
            }
        }
    }

    /// The scheduled service event fires at `now`: departures are pushed onto `out` in order.
    /// Returns the time of the next service event, if the link still has work.
    #[inline]
    pub fn service(
        &mut self,
        now: Time,
        out: &mut Vec<Packet>,
        drops: &mut Vec<Packet>,
    ) -> Option<Time> {
        debug_assert!(self.busy);
        match &mut self.ser {
            Serializer::Constant(_) => {
                let (left, next) = self.service_constant(now, drops);
                out.extend(left);
                next
            }
            Serializer::Trace(cur) => {
                // Mahimahi rationalize(): use every opportunity due by now.
                while let Some(t) = cur.peek() {
                    if t > now {
                        break;
                    }
                    self.capacity.record(t, MAHIMAHI_MTU as u64);
                    cur.advance();
                    let mut left = MAHIMAHI_MTU;
                    while left > 0 {
                        if self.in_transit.is_none() {
                            match self.queue.dequeue(now, drops) {
                                Some(p) => self.in_transit = Some((p, p.bytes)),
                                None => break,
                            }
                        }
                        let (p, rem) = self.in_transit.as_mut().expect("set above");
                        let used = left.min(*rem);
                        *rem -= used;
                        left -= used;
                        if *rem == 0 {
                            out.push(*p);
                            self.in_transit = None;
                        }
                    }
                }
                // Arrivals of this instant come after its opportunities (read_packet(): rationalize, enqueue).
                for p in self.held.drain(..) {
                    self.queue.enqueue(p, now, drops);
                }
                if self.in_transit.is_some() || !self.queue.is_empty() {
                    if let Some(next) = cur.peek() {
                        return Some(next);
                    }
                }
                self.busy = false;
                None
            }
        }
    }

    /// [`Link::service`] of a constant-rate link (not a trace: [`Link::is_trace`]), which has at most one
    /// departure: it is returned, with the time of the next service event, instead of pushed.
    #[inline]
    pub fn service_constant(
        &mut self,
        now: Time,
        drops: &mut Vec<Packet>,
    ) -> (Option<Packet>, Option<Time>) {
        debug_assert!(self.busy);
        let Serializer::Constant(rate) = &mut self.ser else {
            unreachable!("a trace link is serviced by `service`")
        };
        let left = self.in_transit.take().map(|(p, _)| p);
        match self.queue.dequeue(now, drops) {
            Some(p) => {
                let done = now + rate.tx_time(p.bytes);
                self.in_transit = Some((p, 0));
                (left, Some(done))
            }
            None => {
                self.busy = false;
                (left, None)
            }
        }
    }

    /// Account the capacity offered up to (not including) `end`, for a run that stops there.
    pub fn finish(&mut self, end: Time) {
        match &mut self.ser {
            Serializer::Constant(rate) => {
                let bin = self.capacity.bin_ns;
                let nbins = end.as_ns().div_ceil(bin) as usize;
                let keep = self.capacity.keep_bins;
                if keep {
                    self.capacity
                        .bins
                        .resize(nbins.max(self.capacity.bins.len()), 0);
                }
                let bytes =
                    |ns: u64| (rate.rate.bps() as u128 * ns as u128 / 8 / 1_000_000_000) as u64;
                // Every bin but the last is `bin` long: one division for them all (was one per bin,
                // a 128-bit one, 10^6 per link in a 10,000-s run of 10-ms bins).
                let (full, last) = match nbins {
                    0 => (0, 0),
                    n => (bytes(bin), bytes(end.as_ns() - (n as u64 - 1) * bin)),
                };
                if keep && nbins > 0 {
                    self.capacity.bins[..nbins - 1].fill(full);
                    self.capacity.bins[nbins - 1] = last;
                }
                self.capacity.total_bytes = full * nbins.saturating_sub(1) as u64 + last;
            }
            Serializer::Trace(cur) => {
                if !self.busy {
                    while let Some(t) = cur.peek() {
                        if t >= end {
                            break;
                        }
                        self.capacity.record(t, MAHIMAHI_MTU as u64);
                        cur.advance();
                    }
                }
            }
        }
    }

    pub fn is_trace(&self) -> bool {
        matches!(self.ser, Serializer::Trace(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::LossConfig;
    use crate::queue::QueueConfig;
    use ccscope_core::rng::stream;

    fn trace_link(ms: Vec<u64>, once: bool) -> Link {
        let svc = Service::Trace {
            trace: Arc::new(Trace::from_ms(ms).unwrap()),
            once,
        };
        let q = AnyQueue::new(&QueueConfig::Infinite, stream(0, 0), Bandwidth(0));
        Link::new(
            &svc,
            q,
            LossModel::new(LossConfig::None, stream(0, 1)),
            Dur::from_ms(1),
            false,
        )
    }

    /// Drive a link by hand: arrivals at given times, returns (departure ms, seq).
    fn run(link: &mut Link, arrivals: &[(u64, u32)], until_ms: u64) -> Vec<(u64, u64)> {
        let mut next: Option<Time> = None;
        let mut out = Vec::new();
        let mut drops = Vec::new();
        let mut deps = Vec::new();
        let mut ai = 0;
        loop {
            let na = arrivals.get(ai).map(|a| Time::from_ms(a.0));
            // Arrivals at the same instant come before the link's (late-phase) service.
            match (na, next) {
                (Some(a), s) if s.is_none_or(|s| a <= s) => {
                    if a > Time::from_ms(until_ms) {
                        break;
                    }
                    let p = Packet::data(0, ai as u64, arrivals[ai].1, a);
                    ai += 1;
                    if let Some(t) = link.arrive(p, a, &mut drops) {
                        next = Some(t);
                    }
                }
                (_, Some(s)) => {
                    if s > Time::from_ms(until_ms) {
                        break;
                    }
                    next = link.service(s, &mut out, &mut drops);
                    deps.extend(out.drain(..).map(|p| (s.as_ms_floor(), p.seq)));
                }
                _ => break,
            }
        }
        deps
    }

    #[test]
    fn a_full_size_packet_uses_one_opportunity() {
        let mut l = trace_link(vec![5, 10], false);
        assert_eq!(
            run(&mut l, &[(0, 1504), (0, 1504), (0, 1504)], 100),
            [(5, 0), (10, 1), (15, 2)]
        );
    }

    // mahimahi link_queue.cc read_packet(): rationalize(now) before enqueue, with now in whole ms.
    #[test]
    fn a_packet_reaching_an_idle_link_in_the_millisecond_of_an_opportunity_waits_for_the_next() {
        let mut l = trace_link(vec![5, 10], false);
        assert_eq!(run(&mut l, &[(5, 100)], 100), [(10, 0)]);
        assert_eq!(l.capacity.total_bytes, 2 * 1504);
    }

    #[test]
    fn a_packet_reaching_the_link_just_before_an_opportunity_uses_it() {
        // 4.999 ms is millisecond 4: rationalize(4) leaves the opportunity of millisecond 5.
        let mut l = trace_link(vec![5, 10], false);
        let mut drops = Vec::new();
        let t = Time(4_999_999);
        assert_eq!(
            l.arrive(Packet::data(0, 0, 100, t), t, &mut drops),
            Some(Time::from_ms(5))
        );
    }

    #[test]
    fn a_packet_reaching_a_busy_link_at_an_opportunity_instant_does_not_share_it() {
        // The 1004 B left of opportunity 1 are wasted: the second packet was not queued when it was used.
        let mut l = trace_link(vec![1, 2, 3], false);
        assert_eq!(run(&mut l, &[(0, 500), (1, 500)], 100), [(1, 0), (2, 1)]);
        assert_eq!(l.backlog(), (0, 0));
    }

    #[test]
    fn a_packet_held_at_an_opportunity_instant_is_counted_in_the_backlog() {
        let mut l = trace_link(vec![1, 2], false);
        let mut drops = Vec::new();
        assert_eq!(
            l.arrive(Packet::data(0, 0, 1504, Time::ZERO), Time::ZERO, &mut drops),
            Some(Time::from_ms(1))
        );
        let t = Time::from_ms(1);
        assert_eq!(l.arrive(Packet::data(0, 1, 700, t), t, &mut drops), None);
        assert_eq!(l.backlog(), (2, 1504 + 700));
        let mut out = Vec::new();
        assert_eq!(l.service(t, &mut out, &mut drops), Some(Time::from_ms(2)));
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), [0]);
        assert_eq!(l.backlog(), (1, 700));
    }

    #[test]
    fn a_full_drop_tail_queue_frees_a_slot_at_an_opportunity_before_that_instant_s_arrival_is_admitted(
    ) {
        // read_packet(): rationalize(now) dequeues first, so the queue has room when the packet is offered.
        let svc = Service::Trace {
            trace: Arc::new(Trace::from_ms(vec![1, 2]).unwrap()),
            once: false,
        };
        let lim = crate::queue::Limits {
            packets: Some(1),
            bytes: None,
        };
        let q = AnyQueue::new(&QueueConfig::DropTail(lim), stream(0, 0), Bandwidth(0));
        let mut l = Link::new(
            &svc,
            q,
            LossModel::new(LossConfig::None, stream(0, 1)),
            Dur::from_ms(1),
            false,
        );
        assert_eq!(run(&mut l, &[(0, 1504), (1, 1504)], 100), [(1, 0), (2, 1)]);
    }

    #[test]
    fn small_packets_share_an_opportunity_and_leftover_bytes_are_wasted() {
        // 1504 B = 3 x 500 B + 4 B wasted; the fourth waits for the next opportunity.
        let mut l = trace_link(vec![10, 20], false);
        assert_eq!(
            run(&mut l, &[(0, 500), (0, 500), (0, 500), (0, 500)], 100),
            [(10, 0), (10, 1), (10, 2), (20, 3)]
        );
    }

    #[test]
    fn bytes_that_do_not_fit_carry_over_to_the_next_opportunity() {
        // The second packet sends 504 B at t=1 and its last 496 B at t=2, leaving room for the third.
        let mut l = trace_link(vec![1, 2, 3], false);
        assert_eq!(
            run(&mut l, &[(0, 1000), (0, 1000), (0, 1000)], 100),
            [(1, 0), (2, 1), (2, 2)]
        );
        let mut l = trace_link(vec![1, 2, 3], false);
        // 2000 B needs two opportunities (1504 + 496); the next packet fits in the 1008 B left.
        assert_eq!(run(&mut l, &[(0, 2000), (0, 1000)], 100), [(2, 0), (2, 1)]);
    }

    #[test]
    fn repeated_timestamps_are_several_opportunities_in_one_millisecond() {
        let mut l = trace_link(vec![4, 4, 4, 8], false);
        assert_eq!(
            run(&mut l, &[(0, 1504), (0, 1504), (0, 1504), (0, 1504)], 100),
            [(4, 0), (4, 1), (4, 2), (8, 3)]
        );
    }

    #[test]
    fn the_trace_loops_and_once_stops_it() {
        let mut l = trace_link(vec![3, 6], false);
        let arr: Vec<_> = (0..5).map(|_| (0, 1504)).collect();
        assert_eq!(
            run(&mut l, &arr, 100),
            [(3, 0), (6, 1), (9, 2), (12, 3), (15, 4)]
        );
        let mut l = trace_link(vec![3, 6], true);
        assert_eq!(run(&mut l, &arr, 100), [(3, 0), (6, 1)]);
        assert_eq!(l.backlog().0, 3);
    }

    // mahimahi link_queue.cc use_a_delivery_opportunity(): `finished_` is set only after the last one is used.
    #[test]
    fn the_last_opportunity_of_a_once_trace_carries_a_packet_and_counts_as_capacity() {
        let mut l = trace_link(vec![3, 6], true);
        assert_eq!(run(&mut l, &[(4, 1504)], 100), [(6, 0)]);
        l.finish(Time::from_ms(100));
        assert_eq!(l.capacity.total_bytes, 2 * 1504);
        let mut l = trace_link(vec![3, 6], true);
        l.finish(Time(6_000_001));
        assert_eq!((l.capacity.total_bytes, l.capacity.last_ms), (2 * 1504, 6));
    }

    #[test]
    fn idle_opportunities_are_counted_as_capacity_but_not_used() {
        let mut l = trace_link(vec![1, 2, 3, 4], false);
        // Arrives at 2.5 ms: opportunities 1 and 2 are gone; it leaves at 3.
        let svc = run(&mut l, &[], 0);
        assert!(svc.is_empty());
        let mut drops = Vec::new();
        let t = l.arrive(
            Packet::data(0, 0, 1504, Time(2_500_000)),
            Time(2_500_000),
            &mut drops,
        );
        assert_eq!(t, Some(Time::from_ms(3)));
        assert_eq!(l.capacity.total_bytes, 2 * 1504);
        l.finish(Time::from_ms(3));
        assert_eq!(l.capacity.total_bytes, 2 * 1504);
    }

    // mahimahi link_queue.cc rationalize(): a packet CoDel drops in dequeue() takes no bytes of the
    // opportunity, which goes to the packet dequeue() returns.
    #[test]
    fn a_mahimahi_codel_on_a_trace_link_drops_behind_the_head_and_spends_no_opportunity_on_it() {
        use crate::queue::{CodelFlavour, CodelParams};
        let svc = Service::Trace {
            trace: Arc::new(Trace::from_ms(vec![10]).unwrap()),
            once: false,
        };
        let cfg = QueueConfig::Codel(CodelParams {
            mtu_bytes: MAHIMAHI_MTU,
            flavour: CodelFlavour::Mahimahi,
            ..CodelParams::default()
        });
        let q = AnyQueue::new(&cfg, stream(0, 0), Bandwidth(0));
        let mut l = Link::new(
            &svc,
            q,
            LossModel::new(LossConfig::None, stream(0, 1)),
            Dur::from_ms(1),
            false,
        );
        let (mut out, mut drops, mut deps) = (Vec::new(), Vec::new(), Vec::new());
        let mut next = None;
        for s in 0..100 {
            let p = Packet::data(0, s, MAHIMAHI_MTU, Time::ZERO);
            next = next.or(l.arrive(p, Time::ZERO, &mut drops));
        }
        while let Some(t) = next.filter(|&t| t <= Time::from_ms(210)) {
            next = l.service(t, &mut out, &mut drops);
            deps.extend(out.drain(..).map(|p| (t.as_ms_floor(), p.seq)));
        }
        // Above target from the 10 ms dequeue on: first_above_time = 110, then drop_next = 210.
        assert_eq!(deps[9..12], [(100, 9), (110, 10), (120, 12)]);
        assert_eq!(deps.last(), Some(&(210, 21)));
        assert_eq!(drops.iter().map(|p| p.seq).collect::<Vec<_>>(), [11, 22]);
    }

    #[test]
    fn a_constant_rate_links_capacity_is_its_rate_times_each_bin_the_last_bin_cut_at_the_end() {
        // 12,345,679 bit/s: a bin's bytes have a fraction; 3 ms bins and an end 7.0005 ms in.
        let link = |keep: bool| {
            let q = AnyQueue::new(&QueueConfig::Infinite, stream(0, 0), Bandwidth(0));
            let mut l = Link::new(
                &Service::Constant(Bandwidth(12_345_679)),
                q,
                LossModel::new(LossConfig::None, stream(0, 1)),
                Dur::from_ms(3),
                false,
            );
            l.capacity.keep_bins = keep;
            l.finish(Time(7_000_500));
            l.capacity
        };
        // Each bin floor(rate x width / 8 s): 3 ms -> 4629.63, the last 1.0005 ms -> 1543.98.
        let c = link(true);
        assert_eq!(c.bins, [4629, 4629, 1543]);
        assert_eq!(c.total_bytes, 4629 + 4629 + 1543);
        assert_eq!(link(false).total_bytes, 4629 + 4629 + 1543);
        assert!(link(false).bins.is_empty());
    }

    #[test]
    fn constant_rate_serializes_back_to_back() {
        let q = AnyQueue::new(&QueueConfig::Infinite, stream(0, 0), Bandwidth(0));
        let mut l = Link::new(
            &Service::Constant(Bandwidth::from_mbps(12.0)),
            q,
            LossModel::new(LossConfig::None, stream(0, 1)),
            Dur::from_ms(1),
            false,
        );
        let arr: Vec<_> = (0..3).map(|_| (0, 1500)).collect();
        assert_eq!(run(&mut l, &arr, 100), [(1, 0), (2, 1), (3, 2)]);
    }

    /// Drive a link through `arrive_cut_through` (or `arrive` alone) and `service`: (departure ns, seq).
    fn drive(link: &mut Link, arrivals: &[(u64, u32)], cut_through: bool) -> Vec<(u64, u64)> {
        let mut next: Option<Time> = None;
        let (mut out, mut drops, mut deps) = (Vec::new(), Vec::new(), Vec::new());
        let mut ai = 0;
        loop {
            let na = arrivals.get(ai).map(|a| Time(a.0));
            match (na, next) {
                (Some(a), s) if s.is_none_or(|s| a <= s) => {
                    let p = Packet::data(0, ai as u64, arrivals[ai].1, a);
                    ai += 1;
                    let arrival = if cut_through {
                        link.arrive_cut_through(p, a, &mut drops)
                    } else {
                        Arrival::Held(link.arrive(p, a, &mut drops))
                    };
                    match arrival {
                        Arrival::Held(Some(t)) => next = Some(t),
                        Arrival::Held(None) => {}
                        Arrival::Departs(p, t) => deps.push((t.as_ns(), p.seq)),
                    }
                }
                (_, Some(s)) => {
                    next = link.service(s, &mut out, &mut drops);
                    deps.extend(out.drain(..).map(|p| (s.as_ns(), p.seq)));
                }
                _ => break,
            }
        }
        deps.sort();
        deps
    }

    proptest::proptest! {
        #[test]
        fn cut_through_departs_exactly_when_arrive_and_service_would(
            steps in proptest::collection::vec((0u64..3_000_000, 40u32..1500), 1..200)
        ) {
            let mk = || {
                let q = AnyQueue::new(&QueueConfig::DropTail(crate::queue::Limits { packets: Some(8), bytes: None }), stream(0, 0), Bandwidth(0));
                Link::new(&Service::Constant(Bandwidth::from_mbps(10.0)), q, LossModel::new(LossConfig::None, stream(0, 1)), Dur::from_ms(1), false)
            };
            let mut t = 0;
            let arrivals: Vec<(u64, u32)> = steps.iter().map(|&(dt, b)| { t += dt; (t, b) }).collect();
            let (mut a, mut b) = (mk(), mk());
            proptest::prop_assert_eq!(drive(&mut a, &arrivals, true), drive(&mut b, &arrivals, false));
        }
    }
}
