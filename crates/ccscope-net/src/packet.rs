//! The packet: a small `Copy` record; payload bytes are never materialised.

use ccscope_core::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    Data,
    Ack,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    pub flow: u32,
    /// The route it follows (an index into the simulation's route table) and its position on it:
    /// forwarding is "next link of my route, or deliver", with no lookup and no allocation.
    pub route: u32,
    pub hop: u16,
    /// The connection's path it belongs to (data: the path it was sent on; ACK: the path it returns on).
    pub path: u8,
    pub kind: PacketKind,
    /// Size on the wire (IP packet), the unit links and queues account in.
    pub bytes: u32,
    /// Data: its sequence number. Ack: the sequence number acknowledged.
    pub seq: u64,
    /// When the data packet left its sender (echoed in the ACK).
    pub sent: Time,
    /// Ack: when the receiver got the data packet.
    pub recv: Time,
    /// When it entered the queue it is in now (set by the link).
    pub enqueued: Time,
    /// Ack of the reliable transport: the next sequence number expected (cumulative ACK).
    pub ack_cum: u64,
    /// Ack of the reliable transport: up to three SACK blocks [start, end), most recent first
    /// (RFC 2018 §4); empty blocks have start == end.
    pub sack: [(u64, u64); 3],
    /// Ack of the reliable transport: the receive window in bytes from `ack_cum` (RFC 9293 §3.8.6);
    /// `Packet::RWND_UNLIMITED` when the receiver's buffer is unlimited.
    pub rwnd: u32,
    /// Ack of the reliable transport: a pure window update sent when the application read data,
    /// not triggered by an arriving packet (RFC 9293 §3.8.6.2.2).
    pub window_update: bool,
}

impl Packet {
    /// The `rwnd` of a receiver without a buffer limit.
    pub const RWND_UNLIMITED: u32 = u32::MAX;

    pub fn data(flow: u32, seq: u64, bytes: u32, sent: Time) -> Packet {
        Packet { flow, route: 0, hop: 0, path: 0, kind: PacketKind::Data, bytes, seq, sent, recv: Time::ZERO, enqueued: sent, ack_cum: 0, sack: [(0, 0); 3], rwnd: Packet::RWND_UNLIMITED, window_update: false }
    }
}
