//! The simulator's pending-event set: a monotone radix heap on u64 times, popped in (time, phase,
//! insertion) order.
//!
//! A discrete-event simulator never schedules into the past, so the minimum time only grows. A radix
//! heap exploits that (Ahuja, Mehlhorn, Orlin & Tarjan 1990): bucket b holds the events whose time
//! first differs from the last popped time in bit b, so an event moves to a lower bucket at most 64
//! times and the buckets are plain vectors; a million pending events cost little more per operation
//! than a thousand (a binary heap's cache misses grow with its depth). The events at the last popped
//! time wait in two FIFOs, one per phase, so ties pop in insertion order and every run replays bit
//! for bit without an insertion counter in the key.

use crate::time::Time;

/// Order among events at the same instant: all `Normal` events run before any `Late` one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    Normal = 0,
    /// For work that must see everything else that happens at the same instant (a link's delivery
    /// opportunity serves packets that arrive in the same nanosecond).
    Late = 1,
}

const BUCKETS: usize = 64;

/// Events at one instant in insertion order: a vector read from `head` on, emptied only when every
/// event in it has been read (cheaper than a ring: no wrap-around on either end).
struct Fifo<E> {
    items: Vec<E>,
    head: usize,
}

impl<E: Copy> Fifo<E> {
    #[inline]
    fn is_empty(&self) -> bool {
        self.head == self.items.len()
    }

    #[inline]
    fn pop_front(&mut self) -> Option<E> {
        let ev = *self.items.get(self.head)?;
        self.head += 1;
        Some(ev)
    }

    /// Forget the events read (call when empty): the capacity stays.
    #[inline]
    fn reset(&mut self) {
        debug_assert!(self.is_empty());
        self.items.clear();
        self.head = 0;
    }
}

/// Pending events of type `E`, popped in (time, phase, insertion) order.
pub struct EventQueue<E> {
    /// Events at time `last` not yet popped, in insertion order: `Normal` ones, then `Late` ones.
    at_last: [Fifo<E>; 2],
    /// Bucket b: events whose time's highest bit differing from `last` is bit b. Within a bucket,
    /// events with equal times keep their insertion order (pushes append, re-spreading is stable).
    buckets: [Vec<(u64, Phase, E)>; BUCKETS],
    /// Smallest time in each bucket (u64::MAX when empty), so a pop never scans for it.
    mins: [u64; BUCKETS],
    /// Bit b set when bucket b is non-empty: the first one is a trailing-zeros count.
    occupied: u64,
    last: u64,
    /// Phase of the last popped event: a push at `last` in an earlier phase joins this one.
    last_phase: Phase,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            at_last: std::array::from_fn(|_| Fifo {
                items: Vec::new(),
                head: 0,
            }),
            buckets: std::array::from_fn(|_| Vec::new()),
            mins: [u64::MAX; BUCKETS],
            occupied: 0,
            last: 0,
            last_phase: Phase::Normal,
        }
    }

    /// Pending events (counted, not kept: the loop never asks).
    pub fn len(&self) -> usize {
        let waiting: usize = self.at_last.iter().map(|f| f.items.len() - f.head).sum();
        waiting + self.buckets.iter().map(Vec::len).sum::<usize>()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Time of the last popped event (the simulator's clock).
    pub fn now(&self) -> Time {
        Time(self.last)
    }

    /// Bucket of a time other than `last`.
    #[inline]
    fn bucket_of(&self, t: u64) -> usize {
        debug_assert!(t > self.last);
        63 - (t ^ self.last).leading_zeros() as usize
    }

    #[inline]
    fn put(&mut self, t: u64, phase: Phase, ev: E) {
        if t == self.last {
            self.at_last[phase as usize].items.push(ev);
        } else {
            let b = self.bucket_of(t);
            self.buckets[b].push((t, phase, ev));
            self.mins[b] = self.mins[b].min(t);
            self.occupied |= 1 << b;
        }
    }

    /// Schedule `ev` at `at`; `at` earlier than the last popped time is clamped to it.
    #[inline]
    pub fn push(&mut self, at: Time, phase: Phase, ev: E) {
        let (mut t, mut phase) = (at.0, phase);
        if t <= self.last {
            debug_assert!(
                t == self.last,
                "event scheduled in the past: {at:?} < {:?}",
                self.now()
            );
            // A normal event at the instant of a running late one runs after the pending late ones.
            t = self.last;
            phase = phase.max(self.last_phase);
        }
        self.put(t, phase, ev);
    }

    /// Remove and return the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        if self.at_last[0].is_empty() && self.at_last[1].is_empty() {
            if self.occupied == 0 {
                return None;
            }
            self.at_last[0].reset();
            self.at_last[1].reset();
            // The new minimum is the first non-empty bucket's smallest time; re-spread that bucket
            // relative to it. Every event lands at `last` or in a strictly lower bucket.
            let i = self.occupied.trailing_zeros() as usize;
            self.last = self.mins[i];
            self.mins[i] = u64::MAX;
            self.occupied &= !(1 << i);
            if self.buckets[i].len() == 1 {
                // A lone event is the minimum: hand it out without queueing it at `last`.
                let (t, phase, ev) = self.buckets[i].pop().expect("one event");
                self.last_phase = phase;
                return Some((Time(t), ev));
            }
            // As `put`, in place: the lower buckets and the FIFOs are apart from bucket i.
            let (lower, rest) = self.buckets.split_at_mut(i);
            for &(t, phase, ev) in rest[0].iter() {
                if t == self.last {
                    self.at_last[phase as usize].items.push(ev);
                } else {
                    let b = 63 - (t ^ self.last).leading_zeros() as usize;
                    lower[b].push((t, phase, ev));
                    self.mins[b] = self.mins[b].min(t);
                    self.occupied |= 1 << b;
                }
            }
            rest[0].clear();
        }
        if let Some(ev) = self.at_last[0].pop_front() {
            self.last_phase = Phase::Normal;
            return Some((Time(self.last), ev));
        }
        self.last_phase = Phase::Late;
        let ev = self.at_last[1]
            .pop_front()
            .expect("a re-spread leaves an event at `last`");
        Some((Time(self.last), ev))
    }

    /// Time of the earliest pending event, without removing it.
    pub fn peek_time(&self) -> Option<Time> {
        if !self.at_last[0].is_empty() || !self.at_last[1].is_empty() {
            return Some(Time(self.last));
        }
        (self.occupied != 0).then(|| Time(self.mins[self.occupied.trailing_zeros() as usize]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    #[test]
    fn ties_pop_in_insertion_order_and_late_after_normal() {
        let mut q = EventQueue::new();
        q.push(Time(5), Phase::Late, "late");
        q.push(Time(5), Phase::Normal, "a");
        q.push(Time(5), Phase::Normal, "b");
        q.push(Time(1), Phase::Normal, "first");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|x| x.1)).collect();
        assert_eq!(order, ["first", "a", "b", "late"]);
    }

    #[test]
    fn a_normal_push_during_late_work_runs_after_the_pending_late_events() {
        let mut q = EventQueue::new();
        q.push(Time(7), Phase::Late, "late1");
        q.push(Time(7), Phase::Late, "late2");
        assert_eq!(q.pop(), Some((Time(7), "late1")));
        q.push(Time(7), Phase::Normal, "normal-now");
        q.push(Time(8), Phase::Normal, "next");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|x| x.1)).collect();
        assert_eq!(order, ["late2", "normal-now", "next"]);
    }

    #[test]
    fn times_up_to_time_max_pop_in_order() {
        let mut q = EventQueue::new();
        q.push(Time::MAX, Phase::Late, 3);
        q.push(Time::MAX, Phase::Normal, 2);
        q.push(Time(1 << 63), Phase::Normal, 1);
        q.push(Time(0), Phase::Normal, 0);
        assert_eq!(q.peek_time(), Some(Time(0)));
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            got,
            [
                (Time(0), 0),
                (Time(1 << 63), 1),
                (Time::MAX, 2),
                (Time::MAX, 3)
            ]
        );
        assert_eq!((q.len(), q.peek_time(), q.now()), (0, None, Time::MAX));
    }

    /// Increments: ties (0), near events, and far-future timers up to the end of time.
    fn increment() -> impl Strategy<Value = u64> {
        prop_oneof![4 => Just(0u64), 4 => 0u64..2_000, 2 => 0u64..5_000_000_000, 1 => any::<u64>()]
    }

    proptest! {
        #[test]
        fn pops_in_the_same_order_as_a_sorted_reference(ops in prop::collection::vec((increment(), any::<bool>(), 0u8..3), 1..600)) {
            let mut q = EventQueue::new();
            let mut reference = BinaryHeap::new();
            let mut seq = 0u64;
            let mut now = 0u64;
            let mut now_late = false;
            for (dt, late, op) in ops {
                if op == 0 {
                    let got = q.pop();
                    let want = reference.pop().map(|Reverse((t, p, s))| { now_late = p == 1; (Time(t), s) });
                    prop_assert_eq!(got, want);
                    if let Some((t, _)) = got { now = t.0; }
                    prop_assert_eq!(q.now(), Time(now));
                } else {
                    let phase = if late { Phase::Late } else { Phase::Normal };
                    let at = now.saturating_add(dt);
                    q.push(Time(at), phase, seq);
                    // The reference clamps as documented: a normal push at a late instant joins the late phase.
                    let p = if at == now && now_late { 1 } else { late as u8 };
                    reference.push(Reverse((at, p, seq)));
                    seq += 1;
                }
                prop_assert_eq!(q.len(), reference.len());
                prop_assert_eq!(q.peek_time(), reference.peek().map(|Reverse((t, _, _))| Time(*t)));
            }
        }
    }
}
