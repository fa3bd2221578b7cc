//! The receiver: ACKs every data packet, echoing its sequence number, send time and receive time.
//! For the reliable transport the ACK also carries the cumulative ACK and up to three SACK blocks,
//! the block holding the packet just received first (RFC 2018 §4).

use std::collections::VecDeque;

use ccscope_core::Time;
use ccscope_net::{Packet, PacketKind};

pub struct Receiver {
    reliable: bool,
    ack_bytes: u32,
    /// Next in-order sequence number expected.
    rcv_nxt: u64,
    /// got[i]: packet rcv_nxt + i arrived (out of order); got[0] is always false.
    got: VecDeque<bool>,
    /// SACK blocks last reported, most recent first.
    recent: [(u64, u64); 3],
    /// Distinct packets delivered to the application in order.
    pub delivered_in_order: u64,
    pub duplicates: u64,
}

impl Receiver {
    pub fn new(reliable: bool, ack_bytes: u32) -> Receiver {
        Receiver {
            reliable,
            ack_bytes,
            rcv_nxt: 0,
            got: VecDeque::with_capacity(64),
            recent: [(0, 0); 3],
            delivered_in_order: 0,
            duplicates: 0,
        }
    }

    /// A data packet arrived at `now`: returns the ACK and how many packets became deliverable in order.
    pub fn on_data(&mut self, p: &Packet, now: Time) -> (Packet, u64) {
        let mut ack = Packet { kind: PacketKind::Ack, bytes: self.ack_bytes, recv: now, enqueued: now, ..*p };
        if !self.reliable {
            // Datagrams: every packet is delivered as it comes.
            self.delivered_in_order += 1;
            return (ack, 1);
        }
        let before = self.delivered_in_order;
        if p.seq < self.rcv_nxt {
            self.duplicates += 1;
        } else {
            let i = (p.seq - self.rcv_nxt) as usize;
            if i >= self.got.len() {
                self.got.resize(i + 1, false);
            }
            if self.got[i] {
                self.duplicates += 1;
            }
            self.got[i] = true;
            while self.got.front() == Some(&true) {
                self.got.pop_front();
                self.rcv_nxt += 1;
                self.delivered_in_order += 1;
            }
            if p.seq >= self.rcv_nxt {
                self.update_sack(p.seq);
            }
        }
        // Blocks now at or below the cumulative ACK are no longer reported.
        for b in &mut self.recent {
            if b.1 <= self.rcv_nxt {
                *b = (0, 0);
            } else if b.0 < self.rcv_nxt {
                b.0 = self.rcv_nxt;
            }
        }
        ack.ack_cum = self.rcv_nxt;
        ack.sack = self.recent;
        (ack, self.delivered_in_order - before)
    }

    fn update_sack(&mut self, seq: u64) {
        let i = (seq - self.rcv_nxt) as usize;
        let mut lo = i;
        while lo > 0 && self.got[lo - 1] {
            lo -= 1;
        }
        let mut hi = i + 1;
        while hi < self.got.len() && self.got[hi] {
            hi += 1;
        }
        let block = (self.rcv_nxt + lo as u64, self.rcv_nxt + hi as u64);
        let mut next = [block, (0, 0), (0, 0)];
        let mut n = 1;
        for b in self.recent {
            let overlaps = b.0 < block.1 && block.0 < b.1;
            if n < 3 && b.0 < b.1 && !overlaps {
                next[n] = b;
                n += 1;
            }
        }
        self.recent = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(seq: u64) -> Packet {
        Packet::data(0, seq, 1500, Time::ZERO)
    }

    #[test]
    fn in_order_packets_advance_the_cumulative_ack_without_sack() {
        let mut r = Receiver::new(true, 40);
        for s in 0..3 {
            let (a, n) = r.on_data(&data(s), Time::ZERO);
            assert_eq!((a.ack_cum, n), (s + 1, 1));
            assert_eq!(a.sack, [(0, 0); 3]);
        }
    }

    #[test]
    fn a_hole_produces_sack_blocks_most_recent_first_and_filling_it_delivers_all() {
        let mut r = Receiver::new(true, 40);
        r.on_data(&data(0), Time::ZERO);
        // 1 lost; 2, 3 arrive; then 5.
        r.on_data(&data(2), Time::ZERO);
        let (a, _) = r.on_data(&data(3), Time::ZERO);
        assert_eq!((a.ack_cum, a.sack[0]), (1, (2, 4)));
        let (a, n) = r.on_data(&data(5), Time::ZERO);
        assert_eq!(n, 0);
        assert_eq!(&a.sack[..2], &[(5, 6), (2, 4)]);
        let (a, n) = r.on_data(&data(1), Time::ZERO);
        assert_eq!((a.ack_cum, n), (4, 3));
        assert_eq!(a.sack[0], (5, 6));
        assert_eq!(r.on_data(&data(2), Time::ZERO).0.ack_cum, 4);
        assert_eq!(r.duplicates, 1);
    }
}
