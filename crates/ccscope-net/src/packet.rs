//! The packet: a small `Copy` record; payload bytes are never materialised.

use ccscope_core::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    Data,
    Ack,
}

/// A packet on the wire: what links, queues and routes need, 48 bytes (a test holds it there). The fields only ACKs carry
/// live apart (an [`Ack`] at the endpoints; in the simulation, the whole ACK waits in a pool entry
/// named by `ack`), so data packets do not haul them through every queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    pub flow: u32,
    /// Where it is on the route it follows: an index into the simulation's table of routes, each
    /// a run of hops ended by a mark. Forwarding is "the next entry: a hop, or deliver", with one
    /// lookup and no allocation.
    pub at: u32,
    /// The connection's path it belongs to (data: the path it was sent on; ACK: the path it returns on).
    pub path: u8,
    pub kind: PacketKind,
    /// Size on the wire (IP packet), the unit links and queues account in.
    pub bytes: u32,
    /// ACK: the index of its ACK-only fields in the simulation's pool.
    pub ack: u32,
    /// Data: the sender's round number, for round-correlated loss (paper 002 eq. 7, specs/002-cmt.md
    /// A12: a round starts when the first packet of the previous round is acknowledged), with
    /// [`Packet::RETX`] set on retransmissions, which that loss model spares; 0 when the transport
    /// counts no rounds. ACK: 0.
    pub round: u32,
    /// Data: its sequence number. Ack: the sequence number acknowledged.
    pub seq: u64,
    /// When the data packet left its sender (echoed in the ACK).
    pub sent: Time,
    /// When it entered the queue it is in now (set by the link).
    pub enqueued: Time,
}

impl Packet {
    /// The bit of `round` that marks a retransmission.
    pub const RETX: u32 = 1 << 31;

    pub fn data(flow: u32, seq: u64, bytes: u32, sent: Time) -> Packet {
        Packet {
            flow,
            at: 0,
            path: 0,
            kind: PacketKind::Data,
            bytes,
            ack: 0,
            round: 0,
            seq,
            sent,
            enqueued: sent,
        }
    }
}

/// An ACK as the endpoints see it: the echo of a data packet plus what only ACKs carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ack {
    pub flow: u32,
    /// The path the acknowledged data packet took (the simulation routes the ACK back by it).
    pub path: u8,
    /// Size on the wire.
    pub bytes: u32,
    /// The sequence number acknowledged.
    pub seq: u64,
    /// When the acknowledged data packet left its sender.
    pub sent: Time,
    pub info: AckInfo,
}

/// The fields only an ACK carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckInfo {
    /// When the receiver got the data packet.
    pub recv: Time,
    /// Reliable transport: the next sequence number expected (cumulative ACK).
    pub ack_cum: u64,
    /// Reliable transport: up to three SACK blocks [start, end), most recent first (RFC 2018 §4);
    /// empty blocks have start == end.
    pub sack: [(u64, u64); 3],
    /// Reliable transport: the receive window in bytes from `ack_cum` (RFC 9293 §3.8.6);
    /// `Ack::RWND_UNLIMITED` when the receiver's buffer is unlimited.
    pub rwnd: u32,
    /// Reliable transport: a pure window update sent when the application read data, not
    /// triggered by an arriving packet (RFC 9293 §3.8.6.2.2).
    pub window_update: bool,
    /// SCTP-CMT: how many TSNs the receiver had accepted when it sent this SACK. Its gap blocks
    /// are the association's arrival log up to there (see ccscope-sim `ArrivalLog`), so a SACK
    /// carries all of them, however many, without a block list per packet.
    pub arrivals: u64,
    /// The receiving host's cumulative count of data bytes delivered to it, every flow's together,
    /// when the flow's controller asks for it (paper 003 SAC's `receiver_aggregate` signal,
    /// specs/003-mtsc.md §6 item 1); `None` otherwise.
    pub host_bytes: Option<u64>,
}

impl Default for AckInfo {
    fn default() -> Self {
        AckInfo {
            recv: Time::ZERO,
            ack_cum: 0,
            sack: [(0, 0); 3],
            rwnd: Ack::RWND_UNLIMITED,
            window_update: false,
            arrivals: 0,
            host_bytes: None,
        }
    }
}

impl Ack {
    /// The `rwnd` of a receiver without a buffer limit.
    pub const RWND_UNLIMITED: u32 = u32::MAX;

    /// The ACK of data packet `p`, received at `recv`, `bytes` on the wire.
    pub fn of(p: &Packet, bytes: u32, recv: Time) -> Ack {
        Ack {
            flow: p.flow,
            path: p.path,
            bytes,
            seq: p.seq,
            sent: p.sent,
            info: AckInfo {
                recv,
                ..AckInfo::default()
            },
        }
    }

    /// The wire packet that carries it, the ACK itself being in the pool entry `slot`.
    pub fn packet(&self, slot: u32, now: Time) -> Packet {
        Packet {
            flow: self.flow,
            at: 0,
            path: self.path,
            kind: PacketKind::Ack,
            bytes: self.bytes,
            ack: slot,
            round: 0,
            seq: self.seq,
            sent: self.sent,
            enqueued: now,
        }
    }

    /// This ACK is what wire packet `p` carries (the fields both have agree).
    pub fn is_carried_by(&self, p: &Packet) -> bool {
        (self.flow, self.path, self.bytes, self.seq, self.sent)
            == (p.flow, p.path, p.bytes, p.seq, p.sent)
    }
}

impl std::ops::Deref for Ack {
    type Target = AckInfo;
    fn deref(&self) -> &AckInfo {
        &self.info
    }
}

impl std::ops::DerefMut for Ack {
    fn deref_mut(&mut self) -> &mut AckInfo {
        &mut self.info
    }
}

/// The ACKs in the network, by slot; freed slots are reused, so after warm-up nothing is allocated
/// per ACK. The sender reads a delivered ACK in its slot (no copy out).
#[derive(Debug, Default)]
pub struct AckPool {
    slots: Vec<Ack>,
    free: Vec<u32>,
}

impl AckPool {
    pub fn put(&mut self, ack: Ack) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = ack;
                i
            }
            None => {
                self.slots.push(ack);
                self.slots.len() as u32 - 1
            }
        }
    }

    /// The ACK in slot `i` (free it with `release` once read).
    pub fn get(&self, i: u32) -> &Ack {
        &self.slots[i as usize]
    }

    /// Slot `i` is free (its ACK was delivered or dropped).
    pub fn release(&mut self, i: u32) {
        self.free.push(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wire_packet_stays_48_bytes() {
        assert_eq!(std::mem::size_of::<Packet>(), 48);
    }
}
