//! A constant propagation delay: a FIFO delay line (constant delay keeps order, so no heap is needed).

use std::collections::VecDeque;

use ccscope_core::{Dur, Time};

use crate::Packet;

#[derive(Debug)]
pub struct Pipe {
    delay: Dur,
    line: VecDeque<(Time, Packet)>,
}

impl Pipe {
    pub fn new(delay: Dur) -> Self {
        Self::with_capacity(delay, 64)
    }

    /// A line that starts with room for `cap` packets (it grows to the most ever on it at once).
    pub fn with_capacity(delay: Dur, cap: usize) -> Self {
        Pipe {
            delay,
            line: VecDeque::with_capacity(cap),
        }
    }

    pub fn delay(&self) -> Dur {
        self.delay
    }

    /// Put `pkt` on the line when it enters it at `now` (for a packet cut through its link, the time
    /// it leaves the serializer); returns its exit time if it is the new head (schedule it).
    pub fn push(&mut self, now: Time, pkt: Packet) -> Option<Time> {
        let exit = now + self.delay;
        debug_assert!(self.line.back().is_none_or(|b| b.0 <= exit));
        self.line.push_back((exit, pkt));
        (self.line.len() == 1).then_some(exit)
    }

    /// Take the head if it has arrived by `now`.
    pub fn pop_due(&mut self, now: Time) -> Option<Packet> {
        match self.line.front() {
            Some(&(t, _)) if t <= now => self.line.pop_front().map(|x| x.1),
            _ => None,
        }
    }

    /// Exit time of the head, if any.
    pub fn head_time(&self) -> Option<Time> {
        self.line.front().map(|x| x.0)
    }

    /// Visit every packet on the line.
    pub fn for_each_packet(&self, mut f: impl FnMut(&Packet)) {
        self.line.iter().for_each(|(_, p)| f(p));
    }

    pub fn len(&self) -> usize {
        self.line.len()
    }

    pub fn is_empty(&self) -> bool {
        self.line.is_empty()
    }
}
