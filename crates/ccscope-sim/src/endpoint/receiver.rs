//! The receiver: ACKs every data packet, echoing its sequence number, send time and receive time.
//! For the reliable transport the ACK also carries the cumulative ACK, up to three SACK blocks, the
//! block holding the packet just received first (RFC 2018 §4), and the receive window (RFC 9293
//! §3.8.6): the buffer minus what it holds out of order and what the application has not read.
//! With DSACK on (RFC 2883), a duplicate packet is reported in the first block, ahead of the two
//! most recent SACK blocks.

use std::collections::VecDeque;

use ccscope_core::{Bandwidth, Dur, Time};
use ccscope_net::{Ack, Packet};

/// Bits x nanoseconds in one byte read: a rate in bit/s times a time in ns gives bit-ns.
const BYTE_BIT_NS: u128 = 8 * 1_000_000_000;

/// A receive buffer accounted in bytes: data held out of order and in-order data the application
/// has not read yet. It knows nothing of sequence numbers, so a receiver fed by several paths can
/// share one (rwnd = buffer - held bytes). Fields in declaration order (`repr(C)`): those every
/// packet reads first.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct RecvBuffer {
    /// Capacity in bytes; `None` = unlimited.
    capacity: Option<u64>,
    /// The application's read rate; `None` = it reads in-order data at once.
    read_rate: Option<Bandwidth>,
    /// Bytes held out of order (waiting for a hole below them to fill).
    out_of_order: u64,
    /// Bytes the application has read.
    pub read_bytes: u64,
    /// In-order bytes the application has not read yet.
    unread: u64,
    /// Reading is accounted up to this time.
    read_at: Time,
    /// Reading progress short of a whole byte, in bit-ns.
    credit: u128,
}

impl RecvBuffer {
    pub fn new(capacity: Option<u64>, read_rate: Option<Bandwidth>) -> RecvBuffer {
        RecvBuffer {
            capacity,
            read_rate,
            out_of_order: 0,
            unread: 0,
            read_at: Time::ZERO,
            credit: 0,
            read_bytes: 0,
        }
    }

    pub fn unlimited() -> RecvBuffer {
        RecvBuffer::new(None, None)
    }

    pub fn capacity(&self) -> Option<u64> {
        self.capacity
    }

    /// Bytes held: out of order plus in order and unread.
    pub fn held(&self) -> u64 {
        self.out_of_order + self.unread
    }

    /// The application reads at its rate up to `now` (continuously, as long as data is unread).
    pub fn advance(&mut self, now: Time) {
        let Some(rate) = self.read_rate else { return };
        if now <= self.read_at {
            return;
        }
        if self.unread > 0 {
            self.credit += rate.bps() as u128 * (now - self.read_at).as_ns() as u128;
            let n = (self.credit / BYTE_BIT_NS).min(self.unread as u128) as u64;
            self.unread -= n;
            self.read_bytes += n;
            self.credit -= n as u128 * BYTE_BIT_NS;
            // An idle reader banks no reading for later.
            if self.unread == 0 {
                self.credit = 0;
            }
        }
        self.read_at = now;
    }

    /// Whether `bytes` more fit.
    pub fn fits(&self, bytes: u64) -> bool {
        self.capacity.is_none_or(|c| self.held() + bytes <= c)
    }

    /// A packet of `bytes` is stored out of order (every packet is, until it is delivered in order).
    pub fn insert(&mut self, bytes: u64) {
        self.out_of_order += bytes;
    }

    /// Stored bytes became in order: the application takes them at once or reads them at its rate.
    pub fn deliver(&mut self, bytes: u64) {
        debug_assert!(self.out_of_order >= bytes);
        self.out_of_order -= bytes;
        if self.read_rate.is_some() {
            self.unread += bytes;
        } else {
            self.read_bytes += bytes;
        }
    }

    /// Free space to advertise, in bytes (RFC 9293 §3.8.6.2.2: the buffer less what it holds);
    /// `None` = unlimited.
    pub fn window(&self) -> Option<u64> {
        self.capacity.map(|c| c.saturating_sub(self.held()))
    }

    /// How long until the application's reading frees `bytes` of window, given what is held now;
    /// `None` if reading alone never gets there (no read rate, or out-of-order data in the way).
    pub fn time_until_window(&self, bytes: u64) -> Option<Dur> {
        let (cap, rate) = (self.capacity?, self.read_rate?);
        let unread_target = cap.checked_sub(self.out_of_order)?.checked_sub(bytes)?;
        let to_read = self.unread.saturating_sub(unread_target) as u128;
        if to_read == 0 {
            return Some(Dur::ZERO);
        }
        if rate.bps() == 0 {
            return None;
        }
        let need = (to_read * BYTE_BIT_NS).saturating_sub(self.credit);
        Some(Dur(
            need.div_ceil(rate.bps() as u128).min(u64::MAX as u128) as u64
        ))
    }
}

/// The TSNs an SCTP-CMT receiver accepted, in the order it accepted them: the gap blocks of SACK k
/// are the TSNs of entries 0..k above its cumulative TSN. The sender reads the entries its newest
/// SACK covers and releases them; what is held is what SACKs in flight still cover.
#[derive(Clone, Debug, Default)]
pub struct ArrivalLog {
    /// Index of the first entry held.
    base: u64,
    tsns: VecDeque<u64>,
}

impl ArrivalLog {
    /// Acceptances so far.
    pub fn total(&self) -> u64 {
        self.base + self.tsns.len() as u64
    }

    fn push(&mut self, tsn: u64) {
        self.tsns.push_back(tsn);
    }

    /// The TSN of acceptance `i` (not yet released).
    pub fn get(&self, i: u64) -> u64 {
        self.tsns[(i - self.base) as usize]
    }

    /// Entries below `upto` are no longer needed.
    pub fn release(&mut self, upto: u64) {
        while self.base < upto && !self.tsns.is_empty() {
            self.tsns.pop_front();
            self.base += 1;
        }
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.tsns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tsns.is_empty()
    }
}

/// A receiving host's count of the data delivered to it, every flow's packets together (what its
/// interface counter reads). A receiver that reports it stamps the running total on each ACK, so a
/// sender learns the host's arrivals per feedback period from two ACKs (paper 003 SAC's
/// `receiver_aggregate` signal, specs/003-mtsc.md §6 item 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostArrivals {
    pub bytes: u64,
    pub packets: u64,
}

impl HostArrivals {
    /// A data packet of `bytes` was delivered to the host: the running byte total after it.
    pub fn on_data(&mut self, bytes: u32) -> u64 {
        self.bytes = self.bytes.saturating_add(bytes as u64);
        self.packets += 1;
        self.bytes
    }
}

/// Fields in declaration order (`repr(C)`): what every data packet reads or writes first, in a few
/// contiguous cache lines (with many flows each packet finds its flow's receiver out of cache);
/// the window-update, SCTP-CMT and counter fields after.
#[repr(C)]
pub struct Receiver {
    /// Next in-order sequence number expected.
    rcv_nxt: u64,
    /// got[i]: packet rcv_nxt + i arrived (out of order); got[0] is always false.
    got: VecDeque<bool>,
    /// SACK blocks last reported, most recent first.
    recent: [(u64, u64); 3],
    /// Distinct packets delivered to the application in order.
    pub delivered_in_order: u64,
    /// Size of the flow's data packets, learned from the first one (buffer accounting unit).
    packet_bytes: u64,
    /// The host's running total when the packet being ACKed arrived, if reported.
    host_total: Option<u64>,
    /// When the application's reading will have reopened the window enough for an update.
    update_at: Option<Time>,
    ack_bytes: u32,
    reliable: bool,
    /// Stamp the host's arrivals on ACKs (the flow's controller asked, `wants_host_feedback`).
    report_host: bool,
    /// Report duplicates with DSACK (RFC 2883; Linux `tcp_dsack`).
    dsack: bool,
    buf: RecvBuffer,
    /// SCTP-CMT: the arrival log SACKs refer to (`None` for the other transports).
    log: Option<ArrivalLog>,
    /// SCTP-CMT: gap blocks the receiver holds now, and the most it held (paper 002: up to ~W/2).
    gap_blocks: u64,
    pub max_gap_blocks: u64,
    /// Right edge of the window last advertised, in packets: rcv_nxt + floor(rwnd / packet).
    adv_edge: u64,
    /// The earliest wake-up handed out by `take_wake` that has not fired yet.
    wake_pending: Option<Time>,
    pub duplicates: u64,
    /// New packets dropped because the buffer had no room for them.
    pub discarded: u64,
    /// Window updates sent (ACKs not triggered by a data packet).
    pub window_updates: u64,
    /// The last ACK sent, template of a window update.
    last_ack: Option<Ack>,
}

impl Receiver {
    pub fn new(reliable: bool, ack_bytes: u32) -> Receiver {
        Receiver {
            reliable,
            report_host: false,
            host_total: None,
            dsack: false,
            log: None,
            gap_blocks: 0,
            max_gap_blocks: 0,
            ack_bytes,
            rcv_nxt: 0,
            got: VecDeque::with_capacity(64),
            recent: [(0, 0); 3],
            buf: RecvBuffer::unlimited(),
            packet_bytes: 0,
            adv_edge: 0,
            last_ack: None,
            update_at: None,
            wake_pending: None,
            delivered_in_order: 0,
            duplicates: 0,
            discarded: 0,
            window_updates: 0,
        }
    }

    /// A receive buffer (reliable transport); the default is unlimited.
    pub fn with_buffer(mut self, buf: RecvBuffer) -> Receiver {
        self.buf = buf;
        self
    }

    /// Report duplicate packets with DSACK blocks (RFC 2883) or not (the default).
    pub fn with_dsack(mut self, on: bool) -> Receiver {
        self.dsack = on;
        self
    }

    /// Report the host's arrivals on every ACK (`Ack::host_bytes`) or not (the default).
    pub fn with_host_report(mut self, on: bool) -> Receiver {
        self.report_host = on;
        self
    }

    /// A data packet was delivered to `host` at `now`: the host counts it (whichever flow it
    /// belongs to) and, if this receiver reports, the ACK carries the host's total including it.
    pub fn on_data_at_host(
        &mut self,
        p: &Packet,
        now: Time,
        host: &mut HostArrivals,
    ) -> (Ack, u64) {
        let total = host.on_data(p.bytes);
        self.host_total = self.report_host.then_some(total);
        self.on_data(p, now)
    }

    /// An SCTP-CMT receiver: SACKs refer to an arrival log instead of carrying three blocks.
    pub fn with_arrival_log(mut self) -> Receiver {
        self.log = Some(ArrivalLog::default());
        self
    }

    pub fn arrival_log(&mut self) -> Option<&mut ArrivalLog> {
        self.log.as_mut()
    }

    pub fn buffer(&self) -> &RecvBuffer {
        &self.buf
    }

    /// A data packet arrived at `now`: returns the ACK and how many packets became deliverable in order.
    pub fn on_data(&mut self, p: &Packet, now: Time) -> (Ack, u64) {
        let mut ack = Ack::of(p, self.ack_bytes, now);
        // The host total belongs to this packet only (set by `on_data_at_host` just before).
        ack.info.host_bytes = self.host_total.take();
        if !self.reliable {
            // Datagrams: every packet is delivered as it comes.
            self.delivered_in_order += 1;
            return (ack, 1);
        }
        let before = self.delivered_in_order;
        self.buf.advance(now);
        self.packet_bytes = p.bytes as u64;
        let mut duplicate = false;
        if p.seq < self.rcv_nxt {
            self.duplicates += 1;
            duplicate = true;
        } else {
            let i = (p.seq - self.rcv_nxt) as usize;
            let dup = self.got.get(i) == Some(&true);
            // The next packet in order needs no room when the application takes it at once.
            let taken_at_once = i == 0 && self.reads_at_once();
            if !dup && !taken_at_once && !self.buf.fits(p.bytes as u64) {
                // RFC 9293 §3.10.7.4: data the buffer cannot hold is dropped (and ACKed); a sender
                // keeping to the advertised window never gets here.
                self.discarded += 1;
            } else if i == 0 && self.got.is_empty() && self.log.is_none() {
                // The next packet in order with nothing held above it: delivered as it comes, the
                // same steps as below without growing and shrinking the out-of-order map.
                self.buf.insert(p.bytes as u64);
                self.rcv_nxt += 1;
                self.delivered_in_order += 1;
                self.buf.deliver(p.bytes as u64);
            } else {
                if let Some(log) = self.log.as_mut().filter(|_| !dup) {
                    // Gap blocks: a TSN next to none adds one, between two joins them, next to the
                    // cumulative TSN absorbs the first.
                    let left = i > 0 && self.got.get(i - 1) == Some(&true);
                    let right = self.got.get(i + 1) == Some(&true);
                    self.gap_blocks = (self.gap_blocks + (i > 0) as u64)
                        .saturating_sub(left as u64 + right as u64);
                    self.max_gap_blocks = self.max_gap_blocks.max(self.gap_blocks);
                    log.push(p.seq);
                }
                if i >= self.got.len() {
                    self.got.resize(i + 1, false);
                }
                if dup {
                    self.duplicates += 1;
                    duplicate = true;
                } else {
                    self.buf.insert(p.bytes as u64);
                }
                self.got[i] = true;
                while self.got.front() == Some(&true) {
                    self.got.pop_front();
                    self.rcv_nxt += 1;
                    self.delivered_in_order += 1;
                    self.buf.deliver(p.bytes as u64);
                }
                if p.seq >= self.rcv_nxt && self.log.is_none() {
                    self.update_sack(p.seq);
                }
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
        if duplicate && self.dsack {
            // RFC 2883 §4: the duplicate first, then the most recent blocks that still fit.
            ack.sack = [(p.seq, p.seq + 1), self.recent[0], self.recent[1]];
        }
        if let Some(log) = &self.log {
            ack.arrivals = log.total();
        }
        self.advertise(now, &mut ack);
        (ack, self.delivered_in_order - before)
    }

    fn reads_at_once(&self) -> bool {
        self.buf.read_rate.is_none()
    }

    /// Put the window on an ACK and plan the next window update.
    fn advertise(&mut self, now: Time, ack: &mut Ack) {
        let Some(w) = self.buf.window() else { return };
        ack.rwnd = w.min(Ack::RWND_UNLIMITED as u64 - 1) as u32;
        let pkt = self.packet_bytes.max(1);
        self.adv_edge = self.rcv_nxt + w / pkt;
        self.update_at = None;
        if self.reads_at_once() {
            // An application that takes data at once never reopens the window later: no window
            // update will need this ACK as its template (and copying 136 bytes per ACK is not free).
            return;
        }
        self.last_ack = Some(*ack);
        let cap_packets = self.buf.capacity().unwrap_or(0) / pkt;
        let remaining = self.adv_edge - self.rcv_nxt;
        // Linux tcp_cleanup_rbuf: after a read, update once the advertised window has fallen to half
        // the buffer and the free window is at least twice it (and one packet, RFC 9293 §3.8.6.2.2).
        if 2 * remaining <= cap_packets {
            let target = (2 * remaining).max(1) * pkt;
            self.update_at = self.buf.time_until_window(target).map(|d| now + d);
        }
    }

    /// When the simulator should call `on_wake`, if that is new (earlier than any wake-up pending).
    pub fn take_wake(&mut self) -> Option<Time> {
        let t = self.update_at?;
        if self.wake_pending.is_some_and(|p| p <= t) {
            return None;
        }
        self.wake_pending = Some(t);
        Some(t)
    }

    /// A wake-up fired: the window update, if the application's reading has made one due.
    pub fn on_wake(&mut self, now: Time) -> Option<Ack> {
        if self.wake_pending == Some(now) {
            self.wake_pending = None;
        }
        if self.update_at.is_none_or(|t| t > now) {
            return None;
        }
        self.buf.advance(now);
        let mut ack = self.last_ack?;
        ack.recv = now;
        ack.window_update = true;
        ack.ack_cum = self.rcv_nxt;
        ack.sack = self.recent;
        self.advertise(now, &mut ack);
        self.window_updates += 1;
        Some(ack)
    }

    fn update_sack(&mut self, seq: u64) {
        let i = (seq - self.rcv_nxt) as usize;
        // A packet at the right end of the last block reported extends it: that block already is the
        // whole run to its left (every packet held above rcv_nxt updated the blocks when it came).
        let (a, b) = self.recent[0];
        let mut lo = if a < b && seq == b && a > self.rcv_nxt {
            (a - self.rcv_nxt) as usize
        } else {
            i
        };
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
    fn a_reporting_receiver_stamps_the_hosts_total_of_every_flow_and_a_silent_one_does_not() {
        let mut host = HostArrivals::default();
        let mut asks = Receiver::new(false, 40).with_host_report(true);
        let mut silent = Receiver::new(false, 40);
        let mut other = data(7);
        other.flow = 9;
        other.bytes = 400;
        let (a, _) = asks.on_data_at_host(&data(0), Time::ZERO, &mut host);
        assert_eq!(a.host_bytes, Some(1500));
        // Another flow's packet reaches the same host: counted, but its receiver stamps nothing.
        let (b, _) = silent.on_data_at_host(&other, Time::ZERO, &mut host);
        assert_eq!(b.host_bytes, None);
        let (c, _) = asks.on_data_at_host(&data(1), Time::ZERO, &mut host);
        assert_eq!(c.host_bytes, Some(1500 + 400 + 1500));
        assert_eq!(
            host,
            HostArrivals {
                bytes: 3400,
                packets: 3
            }
        );
    }

    #[test]
    fn a_packet_delivered_without_the_host_counter_carries_no_stale_host_total() {
        let mut host = HostArrivals::default();
        let mut r = Receiver::new(true, 40).with_host_report(true);
        let (a, _) = r.on_data_at_host(&data(0), Time::ZERO, &mut host);
        assert_eq!(a.host_bytes, Some(1500));
        // Delivered through `on_data` (no host seen): the ACK must not repeat the previous packet's total.
        let (b, _) = r.on_data(&data(1), Time::ZERO);
        assert_eq!(b.host_bytes, None);
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

    const MS: u64 = 1_000_000;

    fn at(ms_: u64) -> Time {
        Time(ms_ * MS)
    }

    /// 12 Mbit/s: the application reads one 1500-byte packet per millisecond.
    fn reader(packets: u64) -> RecvBuffer {
        RecvBuffer::new(Some(packets * 1500), Some(Bandwidth::from_mbps(12.0)))
    }

    #[test]
    fn with_dsack_a_duplicate_is_reported_first_below_or_above_the_cumulative_ack() {
        let mut r = Receiver::new(true, 40).with_dsack(true);
        r.on_data(&data(0), Time::ZERO);
        r.on_data(&data(2), Time::ZERO);
        // 0 again, below the cumulative ACK 1: [0, 1) first, then the SACK block of 2.
        let (a, _) = r.on_data(&data(0), Time::ZERO);
        assert_eq!((a.ack_cum, a.sack), (1, [(0, 1), (2, 3), (0, 0)]));
        // 2 again, inside its own SACK block.
        let (a, _) = r.on_data(&data(2), Time::ZERO);
        assert_eq!(a.sack, [(2, 3), (2, 3), (0, 0)]);
        // A new packet: plain SACK again.
        let (a, _) = r.on_data(&data(4), Time::ZERO);
        assert_eq!(a.sack, [(4, 5), (2, 3), (0, 0)]);
        // Without DSACK a duplicate changes nothing.
        let mut r = Receiver::new(true, 40);
        r.on_data(&data(0), Time::ZERO);
        assert_eq!(r.on_data(&data(0), Time::ZERO).0.sack, [(0, 0); 3]);
    }

    #[test]
    fn an_unlimited_buffer_advertises_no_window_limit() {
        let mut r = Receiver::new(true, 40);
        r.on_data(&data(0), Time::ZERO);
        let (a, _) = r.on_data(&data(2), Time::ZERO);
        assert_eq!(a.rwnd, Ack::RWND_UNLIMITED);
        assert_eq!(r.take_wake(), None);
    }

    #[test]
    fn rwnd_is_the_buffer_less_the_bytes_held_out_of_order() {
        let mut r = Receiver::new(true, 40).with_buffer(RecvBuffer::new(Some(10 * 1500), None));
        assert_eq!(r.on_data(&data(0), Time::ZERO).0.rwnd, 15_000);
        // 1 missing: 2 and 3 wait out of order.
        r.on_data(&data(2), Time::ZERO);
        assert_eq!(r.on_data(&data(3), Time::ZERO).0.rwnd, 12_000);
        // Filling the hole hands all three to the application, which reads them at once.
        let (a, n) = r.on_data(&data(1), Time::ZERO);
        assert_eq!((a.ack_cum, n, a.rwnd), (4, 3, 15_000));
        assert_eq!(r.buffer().read_bytes, 4 * 1500);
        assert_eq!(
            r.take_wake(),
            None,
            "a reader without a rate never needs a window update"
        );
    }

    #[test]
    fn a_rate_limited_reader_drains_in_order_data_at_its_rate_and_banks_no_idle_time() {
        let mut b = reader(10);
        b.insert(3000);
        b.deliver(3000);
        assert_eq!(b.window(), Some(12_000));
        b.advance(at(1));
        assert_eq!((b.held(), b.read_bytes), (1500, 1500));
        // Idle from 2 ms to 5 ms: nothing to read, so nothing is saved up.
        b.advance(at(5));
        assert_eq!(b.held(), 0);
        b.insert(1500);
        b.deliver(1500);
        b.advance(Time(5 * MS + MS / 2));
        assert_eq!(b.held(), 750);
    }

    #[test]
    fn the_time_until_a_window_counts_the_reading_it_needs() {
        let mut b = reader(3);
        b.insert(4500);
        b.deliver(3000);
        // 1500 B out of order and 3000 B unread: 1500 B of window needs 1500 B read, 1 ms.
        assert_eq!(b.time_until_window(1500), Some(Dur(MS)));
        assert_eq!(b.time_until_window(3000), Some(Dur(2 * MS)));
        assert_eq!(
            b.time_until_window(4500),
            None,
            "out-of-order data is never read"
        );
        assert_eq!(
            RecvBuffer::new(Some(3000), None).time_until_window(1500),
            None
        );
    }

    #[test]
    fn data_the_full_buffer_cannot_hold_is_discarded_and_acked() {
        let mut r = Receiver::new(true, 40).with_buffer(reader(1));
        assert_eq!(r.on_data(&data(0), Time::ZERO).0.rwnd, 0);
        let (a, n) = r.on_data(&data(1), Time::ZERO);
        assert_eq!((a.ack_cum, n, a.rwnd, r.discarded), (1, 0, 0, 1));
    }

    #[test]
    fn reading_reopens_a_closed_window_with_window_updates_at_twice_the_last_one() {
        let mut r = Receiver::new(true, 40).with_buffer(reader(4));
        for s in 0..4 {
            r.on_data(&data(s), Time::ZERO);
        }
        // Closed; reading 1500 B (1 ms) reopens one packet (RFC 9293 §3.8.6.2.2: at least one MSS).
        assert_eq!(r.take_wake(), Some(at(1)));
        assert_eq!(r.take_wake(), None, "already handed out");
        assert_eq!(r.on_wake(Time(MS / 2)), None);
        let u = r.on_wake(at(1)).expect("window update");
        assert!(u.window_update);
        assert_eq!((u.ack_cum, u.rwnd, u.recv), (4, 1500, at(1)));
        // Linux tcp_cleanup_rbuf: the next update waits for twice the window advertised.
        assert_eq!(r.take_wake(), Some(at(2)));
        assert_eq!(r.on_wake(at(2)).map(|u| u.rwnd), Some(3000));
        assert_eq!(r.take_wake(), Some(at(4)));
        assert_eq!(r.on_wake(at(4)).map(|u| u.rwnd), Some(6000));
        // The whole buffer is open: over half of it, so no more updates are needed.
        assert_eq!(r.take_wake(), None);
        assert_eq!(r.window_updates, 3);
    }
}
