//! The simulator's pending-event set: a monotone radix heap keyed by (time, phase, insertion order).
//!
//! A discrete-event simulator never schedules into the past, so the minimum key only grows. A radix
//! heap exploits that: each event is moved between buckets at most ~log2(key range) times and the
//! buckets are plain vectors, so a million pending events cost no more per operation than a thousand
//! (a binary heap's cache misses grow with its depth). Ties at equal time and phase pop in insertion
//! order, which makes every run replayable bit for bit.

use crate::time::Time;

/// Order among events at the same instant: all `Normal` events run before any `Late` one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    Normal = 0,
    /// For work that must see everything else that happens at the same instant (a link's delivery
    /// opportunity serves packets that arrive in the same nanosecond).
    Late = 1,
}

const SEQ_BITS: u32 = 63;
const BUCKETS: usize = 129;
const SEQ_MASK: u128 = (1 << SEQ_BITS) - 1;

/// Pending events of type `E`, popped in (time, phase, insertion) order.
pub struct EventQueue<E> {
    buckets: Vec<Vec<(u128, E)>>,
    /// Bit i set when bucket i is non-empty (buckets 0..128 in two words), so finding the first
    /// non-empty bucket is a trailing-zeros count, not a scan.
    occupied: [u128; 2],
    last: u128,
    len: usize,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { buckets: (0..BUCKETS).map(|_| Vec::new()).collect(), occupied: [0; 2], last: 0, len: 0, seq: 0 }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Time of the last popped event (the simulator's clock).
    pub fn now(&self) -> Time {
        Time((self.last >> 64) as u64)
    }

    fn bucket_of(&self, key: u128) -> usize {
        (128 - (key ^ self.last).leading_zeros()) as usize
    }

    #[inline]
    fn put(&mut self, b: usize, item: (u128, E)) {
        self.buckets[b].push(item);
        self.occupied[b >> 7] |= 1 << (b & 127);
    }

    #[inline]
    fn first_occupied(&self) -> Option<usize> {
        if self.occupied[0] != 0 {
            Some(self.occupied[0].trailing_zeros() as usize)
        } else if self.occupied[1] != 0 {
            Some(128 + self.occupied[1].trailing_zeros() as usize)
        } else {
            None
        }
    }

    /// Schedule `ev` at `at`; `at` earlier than the last popped time is clamped to it.
    pub fn push(&mut self, at: Time, phase: Phase, ev: E) {
        let seq = self.seq;
        self.seq += 1;
        debug_assert!(seq < 1 << SEQ_BITS);
        let mut key = ((at.0 as u128) << 64) | ((phase as u128) << SEQ_BITS) | seq as u128;
        if key < self.last {
            // A normal event at the instant of a running late one runs right after it.
            debug_assert!(at >= self.now(), "event scheduled in the past: {at:?} < {:?}", self.now());
            key = (self.last & !SEQ_MASK) | seq as u128;
        }
        let b = self.bucket_of(key);
        self.put(b, (key, ev));
        self.len += 1;
    }

    /// Remove and return the earliest event.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        if self.len == 0 {
            return None;
        }
        if self.buckets[0].is_empty() {
            let i = self.first_occupied()?;
            // The new minimum is the smallest key in the first non-empty bucket; re-spread the
            // bucket relative to it. Every key lands in a strictly lower bucket.
            let min = self.buckets[i].iter().map(|e| e.0).min().expect("non-empty");
            self.last = min;
            let mut moving = std::mem::take(&mut self.buckets[i]);
            self.occupied[i >> 7] &= !(1 << (i & 127));
            for (k, e) in moving.drain(..) {
                let b = self.bucket_of(k);
                debug_assert!(b < i);
                self.put(b, (k, e));
            }
            // Give the (now empty) vector back so its capacity is reused.
            self.buckets[i] = moving;
        }
        let (k, e) = self.buckets[0].pop().expect("bucket 0 holds the minimum");
        debug_assert!(self.buckets[0].is_empty(), "keys are unique");
        self.occupied[0] &= !1;
        self.len -= 1;
        Some((Time((k >> 64) as u64), e))
    }

    /// Time of the earliest pending event, without removing it.
    pub fn peek_time(&self) -> Option<Time> {
        if let Some(&(k, _)) = self.buckets[0].last() {
            return Some(Time((k >> 64) as u64));
        }
        self.first_occupied().map(|i| {
            let k = self.buckets[i].iter().map(|e| e.0).min().expect("non-empty");
            Time((k >> 64) as u64)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BinaryHeap;
    use std::cmp::Reverse;

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

    proptest! {
        #[test]
        fn pops_in_the_same_order_as_a_sorted_reference(ops in prop::collection::vec((0u64..1000, any::<bool>(), any::<bool>()), 1..400)) {
            let mut q = EventQueue::new();
            let mut reference = BinaryHeap::new();
            let mut seq = 0u64;
            let mut now = 0u64;
            let mut now_late = false;
            for (dt, late, pop) in ops {
                if pop {
                    let got = q.pop();
                    let want = reference.pop().map(|Reverse((t, p, s))| { now_late = p == 1; (Time(t), s) });
                    prop_assert_eq!(got, want);
                    if let Some((t, _)) = got { now = t.0; }
                } else {
                    let phase = if late { Phase::Late } else { Phase::Normal };
                    q.push(Time(now + dt), phase, seq);
                    let p = if dt == 0 && now_late { 1 } else { late as u8 };
                    reference.push(Reverse((now + dt, p, seq)));
                    seq += 1;
                }
                prop_assert_eq!(q.len(), reference.len());
            }
        }
    }
}
