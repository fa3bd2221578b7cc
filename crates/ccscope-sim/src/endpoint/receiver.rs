//! The receiver: ACKs every data packet, echoing its sequence number, send time and receive time.
//! For the reliable transport the ACK also carries the cumulative ACK, up to three SACK blocks, the
//! block holding the packet just received first (RFC 2018 §4), and the receive window (RFC 9293
//! §3.8.6): the buffer minus what it holds out of order and what the application has not read.
//! With DSACK on (RFC 2883), a duplicate packet is reported in the first block, ahead of the two
//! most recent SACK blocks.
//!
//! Delayed ACKs (`DelayedAck`, reliable transport only): as ns-3.37's `TcpSocketBase::ReceivedData`
//! or Linux's `__tcp_ack_snd_check`, an in-order packet may wait for the next one or a timer. A
//! delayed ACK echoes the earliest packet it acknowledges (RFC 7323 §4.3: TS.Recent is set only by
//! the segment at the last ACK sent), so its RTT sample includes the delay; an ACK sent at once with
//! nothing held echoes the packet that triggered it, as every ACK does without delayed ACKs.

use std::collections::VecDeque;

use ccscope_core::{Bandwidth, Dur, Time};
use ccscope_net::{Ack, Packet};

/// Bits x nanoseconds in one byte read: a rate in bit/s times a time in ns gives bit-ns.
const BYTE_BIT_NS: u128 = 8 * 1_000_000_000;

/// ns-3.37 `TcpSocket::DelAckCount`: in-order segments per ACK.
const NS3_DELACK_COUNT: u32 = 2;
/// ns-3.37 `TcpSocket::DelAckTimeout`.
const NS3_DELACK_TIMEOUT: Dur = Dur::from_ms(200);
/// Linux include/net/tcp.h `TCP_ATO_MIN` (HZ / 25).
const TCP_ATO_MIN: Dur = Dur::from_ms(40);
/// Linux `TCP_DELACK_MAX` (HZ / 5), the default `icsk_delack_max`.
const TCP_DELACK_MAX: Dur = Dur::from_ms(200);
/// Linux `TCP_MAX_QUICKACKS`.
const TCP_MAX_QUICKACKS: u64 = 16;
/// The window a Linux receiver offers in its SYN-ACK: `tcp_select_initial_window` caps it at U16_MAX
/// bytes (no `TCP_DEFAULT_INIT_RCVWND` cap since Linux 5.x; 6.18 was measured offering 65,160 = 45 x 1448).
const LINUX_SYN_RWND_BYTES: u64 = 65_535;
/// The receiver's `icsk_rto`, which caps the ATO: `TCP_RTO_MIN` (docs/deviations.md).
const RECEIVER_RTO: Dur = Dur::from_ms(200);

/// When the reliable receiver sends its ACKs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DelayedAck {
    /// An ACK for every data packet.
    #[default]
    None,
    /// ns-3.37 `TcpSocketBase::ReceivedData`: every second in-order packet, a 200 ms timer for a lone
    /// one, out-of-order and hole-filling packets at once.
    Ns3,
    /// Linux `__tcp_ack_snd_check`: quick ACKs at the start, then one per two full-sized packets, an
    /// ATO timer (`tcp_event_data_recv`, `tcp_send_delayed_ack`) for a lone one.
    Linux,
}

impl DelayedAck {
    pub const NAMES: &'static str = "\"none\", \"ns3\" or \"linux\"";

    pub fn parse(s: &str) -> Option<DelayedAck> {
        match s {
            "none" => Some(DelayedAck::None),
            "ns3" => Some(DelayedAck::Ns3),
            "linux" => Some(DelayedAck::Linux),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DelayedAck::None => "none",
            DelayedAck::Ns3 => "ns3",
            DelayedAck::Linux => "linux",
        }
    }
}

/// How a data packet changed the receiver, for the delayed-ACK decision.
#[derive(Clone, Copy, Debug)]
struct Arrival {
    /// Not taken: a duplicate, or no room in the buffer.
    refused: bool,
    /// A duplicate (below RCV.NXT or already held).
    duplicate: bool,
    /// It was the next packet in order.
    in_order: bool,
    /// Out-of-order data is held after it.
    ooo: bool,
    /// It filled a hole: RCV.NXT moved past more than this packet.
    filled: bool,
}

/// Delayed-ACK state: ns-3's counter and timer, Linux's `icsk_ack` fields.
#[derive(Clone, Copy, Debug)]
struct DelAck {
    policy: DelayedAck,
    /// The ACK held back, of the earliest packet it will acknowledge (its echo, RFC 7323 §4.3).
    held: Option<Ack>,
    /// When the held ACK goes anyway (ns-3 `m_delAckEvent`, Linux `ICSK_TIME_DACK`).
    timer: Option<Time>,
    /// ns-3 `m_delAckCount`.
    count: u32,
    /// RCV.NXT when the last ACK went (Linux `rcv_wup`).
    wup: u64,
    /// Linux `icsk_ack.quick`: ACKs still to send at once.
    quick: u64,
    /// Linux `icsk_ack.ato`; zero before the first data packet.
    ato: Dur,
    /// Linux `icsk_ack.lrcvtime`: the last in-order arrival.
    lrcvtime: Time,
}

impl DelAck {
    fn new(policy: DelayedAck) -> DelAck {
        DelAck {
            policy,
            held: None,
            timer: None,
            // ns-3 ProcessSynRcvd: m_delAckCount = m_delAckMaxCount, so the first data packet is ACKed at once.
            count: NS3_DELACK_COUNT,
            wup: 0,
            quick: 0,
            ato: Dur::ZERO,
            lrcvtime: Time::ZERO,
        }
    }

    /// Linux `tcp_incr_quickack`: up to rcv_wnd / (2 rcv_mss) quick ACKs (at least 2), at most 16.
    fn incr_quickack(&mut self, rcv_wnd_packets: u64) {
        let q = match rcv_wnd_packets / 2 {
            0 => 2,
            q => q,
        };
        self.quick = self.quick.max(q.min(TCP_MAX_QUICKACKS));
    }

    /// Linux `tcp_enter_quickack_mode`.
    fn enter_quickack(&mut self, rcv_wnd_packets: u64) {
        self.incr_quickack(rcv_wnd_packets);
        self.ato = TCP_ATO_MIN;
    }

    /// Linux `tcp_event_data_recv`: the ATO estimate from the in-order inter-arrival time.
    fn event_data_recv(&mut self, now: Time, rcv_wnd_packets: u64, packet_bytes: u64) {
        if self.ato == Dur::ZERO {
            // The first data packet: quick ACKs for the window the SYN-ACK offered, ato = TCP_ATO_MIN.
            let syn_wnd = LINUX_SYN_RWND_BYTES / packet_bytes.max(1);
            self.incr_quickack(rcv_wnd_packets.min(syn_wnd));
            self.ato = TCP_ATO_MIN;
        } else {
            let m = now - self.lrcvtime;
            if m.0 <= TCP_ATO_MIN.0 / 2 {
                self.ato = Dur(self.ato.0 / 2 + TCP_ATO_MIN.0 / 2);
            } else if m < self.ato {
                self.ato = Dur(self.ato.0 / 2 + m.0).min(RECEIVER_RTO);
            } else if m > RECEIVER_RTO {
                // A gap longer than the RTO: the sender restarts, ACK quickly again.
                self.incr_quickack(rcv_wnd_packets);
            }
        }
        self.lrcvtime = now;
    }

    /// Whether to hold this packet's ACK back; arms or keeps the timer if so.
    fn hold(&mut self, now: Time, a: Arrival, rcv_nxt: u64, wnd: u64, packet_bytes: u64) -> bool {
        match self.policy {
            DelayedAck::None => false,
            DelayedAck::Ns3 => {
                // ReceivedData: a packet the buffer does not take (m_rxBuffer->Add fails) is ACKed at once,
                // so is one after which a gap exists or that filled a gap.
                if a.refused || a.ooo || a.filled {
                    return false;
                }
                // In-sequence: ACK when ++m_delAckCount reaches m_delAckMaxCount, else arm the timer once.
                self.count += 1;
                if self.count >= NS3_DELACK_COUNT {
                    return false;
                }
                if self.timer.is_none() {
                    self.timer = Some(now + NS3_DELACK_TIMEOUT);
                }
                true
            }
            DelayedAck::Linux => {
                if a.duplicate || a.refused {
                    // tcp_data_queue: old or out-of-window data -> tcp_enter_quickack_mode, ACK at once.
                    self.enter_quickack(wnd);
                    return false;
                }
                if a.in_order {
                    self.event_data_recv(now, wnd, packet_bytes);
                }
                // __tcp_ack_snd_check: more than one full segment unacknowledged (its right-edge test
                // left out: tcp_cleanup_rbuf sends that ACK when the application reads), quick-ACK mode,
                // out-of-order data; tcp_data_queue: ICSK_ACK_NOW when the out-of-order queue empties.
                if rcv_nxt - self.wup >= 2 || self.quick > 0 || a.ooo || a.filled {
                    return false;
                }
                // tcp_send_delayed_ack: the timer at ato (at most icsk_delack_max); a pending earlier one
                // stays, and one about to expire (within ato / 4) sends the ACK now.
                let ato = self.ato.min(TCP_DELACK_MAX);
                let mut timeout = now + ato;
                if let Some(t) = self.timer {
                    if t <= now + Dur(ato.0 / 4) {
                        return false;
                    }
                    timeout = timeout.min(t);
                }
                self.timer = Some(timeout);
                true
            }
        }
    }

    /// An ACK goes at RCV.NXT `rcv_nxt`: the count and the timer restart (ns-3 `SendEmptyPacket`, Linux
    /// `tcp_event_ack_sent` with `tcp_dec_quickack_mode`).
    fn on_ack_sent(&mut self, rcv_nxt: u64) {
        self.held = None;
        self.timer = None;
        self.count = 0;
        self.wup = rcv_nxt;
        if self.quick > 0 {
            if self.quick <= 1 {
                // Leaving quick-ACK mode deflates the ATO.
                self.quick = 0;
                self.ato = TCP_ATO_MIN;
            } else {
                self.quick -= 1;
            }
        }
    }
}

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
    /// Delayed ACKs (reliable transport).
    delack: DelAck,
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
            delack: DelAck::new(DelayedAck::None),
        }
    }

    /// Delay ACKs as ns-3.37 or Linux do, or ACK every packet (the default).
    pub fn with_delayed_ack(mut self, policy: DelayedAck) -> Receiver {
        self.delack = DelAck::new(policy);
        self
    }

    /// The sender opened a new connection (a new ON period; everything before it is acknowledged):
    /// the delayed-ACK state starts as a new connection's does (ns-3 `ProcessSynRcvd` primes the
    /// count, Linux starts with `icsk_ack.ato` = 0 and quick ACKs).
    pub fn on_new_connection(&mut self) {
        debug_assert!(self.delack.held.is_none());
        let (held, timer) = (self.delack.held, self.delack.timer);
        self.delack = DelAck {
            held,
            timer,
            wup: self.rcv_nxt,
            ..DelAck::new(self.delack.policy)
        };
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
    ) -> (Option<Ack>, u64) {
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

    /// A data packet arrived at `now`: returns its ACK (`None` while a delayed ACK is held back) and
    /// how many packets became deliverable in order.
    pub fn on_data(&mut self, p: &Packet, now: Time) -> (Option<Ack>, u64) {
        let mut ack = Ack::of(p, self.ack_bytes, now);
        // The host total belongs to this packet only (set by `on_data_at_host` just before).
        ack.info.host_bytes = self.host_total.take();
        if !self.reliable {
            // Datagrams: every packet is delivered as it comes.
            self.delivered_in_order += 1;
            return (Some(ack), 1);
        }
        let before = self.delivered_in_order;
        let (rcv_nxt_before, discarded_before) = (self.rcv_nxt, self.discarded);
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
        let n = self.delivered_in_order - before;
        if self.delack.policy == DelayedAck::None {
            self.advertise(now, &mut ack);
            return (Some(ack), n);
        }
        let refused = duplicate || self.discarded > discarded_before;
        let a = Arrival {
            refused,
            duplicate,
            in_order: !refused && p.seq == rcv_nxt_before,
            ooo: !self.got.is_empty(),
            filled: self.rcv_nxt > rcv_nxt_before + 1,
        };
        let wnd = self
            .buf
            .window()
            .map_or(u64::MAX, |w| w / self.packet_bytes.max(1));
        if self
            .delack
            .hold(now, a, self.rcv_nxt, wnd, self.packet_bytes)
        {
            match &mut self.delack.held {
                // Later packets leave the echo alone (RFC 7323 §4.3); the host total is the newest.
                Some(h) => h.info.host_bytes = ack.info.host_bytes.or(h.info.host_bytes),
                None => self.delack.held = Some(ack),
            }
            if self.buf.capacity().is_some() {
                // The packet took some of the window last advertised: its reading may reopen it
                // before the delayed-ACK timer (tcp_cleanup_rbuf sends the held ACK then).
                self.plan_update(now);
                if self.reads_at_once() && self.update_at.is_some() {
                    // An application that reads at once has read it already: that ACK goes now.
                    return (Some(self.release(now, ack)), n);
                }
            }
            return (None, n);
        }
        (Some(self.release(now, ack)), n)
    }

    /// Send `ack` (the ACK of the packet just received, with this moment's cumulative ACK and SACK
    /// blocks): it echoes the held packet if one waits, and carries the window.
    fn release(&mut self, now: Time, mut ack: Ack) -> Ack {
        if let Some(h) = self.delack.held {
            (ack.seq, ack.sent, ack.path, ack.info.recv) = (h.seq, h.sent, h.path, h.info.recv);
            ack.info.host_bytes = ack.info.host_bytes.or(h.info.host_bytes);
        }
        self.delack.on_ack_sent(self.rcv_nxt);
        self.advertise(now, &mut ack);
        ack
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
        self.plan_update(now);
    }

    /// When the application's reading makes a window update due, from the edge last advertised.
    fn plan_update(&mut self, now: Time) {
        let pkt = self.packet_bytes.max(1);
        let cap_packets = self.buf.capacity().unwrap_or(0) / pkt;
        // Linux tcp_receive_window: what is left of the window advertised, less what arrived since.
        let remaining = self.adv_edge.saturating_sub(self.rcv_nxt);
        self.update_at = None;
        // Linux tcp_cleanup_rbuf: after a read, update once the advertised window has fallen to half
        // the buffer and the free window is at least twice it (and one packet, RFC 9293 §3.8.6.2.2).
        if 2 * remaining <= cap_packets {
            let target = (2 * remaining).max(1) * pkt;
            self.update_at = if self.reads_at_once() {
                // Read already: the free window is the buffer less what waits out of order.
                self.buf.window().filter(|&w| w >= target).map(|_| now)
            } else {
                self.buf.time_until_window(target).map(|d| now + d)
            };
        }
    }

    /// When the simulator should call `on_wake`, if that is new (earlier than any wake-up pending).
    pub fn take_wake(&mut self) -> Option<Time> {
        let t = match (self.update_at, self.delack.timer) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        if self.wake_pending.is_some_and(|p| p <= t) {
            return None;
        }
        self.wake_pending = Some(t);
        Some(t)
    }

    /// A wake-up fired: the delayed ACK if its timer is due, else the window update, if the
    /// application's reading has made one due.
    pub fn on_wake(&mut self, now: Time) -> Option<Ack> {
        if self.wake_pending == Some(now) {
            self.wake_pending = None;
        }
        let delack_due = self.delack.timer.is_some_and(|t| t <= now);
        if !delack_due && self.update_at.is_none_or(|t| t > now) {
            return None;
        }
        self.buf.advance(now);
        if let Some(mut ack) = self.delack.held {
            if delack_due && self.delack.policy == DelayedAck::Linux {
                // tcp_delack_timer_handler: a missed delayed ACK inflates the ATO (at most the RTO).
                self.delack.ato = Dur(self.delack.ato.0 * 2).min(RECEIVER_RTO);
            }
            // ns-3 DelAckTimeout, Linux tcp_send_ack; a window update due with an ACK held sends that ACK.
            ack.info.ack_cum = self.rcv_nxt;
            ack.info.sack = self.recent;
            return Some(self.release(now, ack));
        }
        if self.update_at.is_none_or(|t| t > now) {
            return None;
        }
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

    /// A receiver that ACKs every packet: the ACK of `p`.
    fn on(r: &mut Receiver, p: &Packet, now: Time) -> (Ack, u64) {
        let (a, n) = r.on_data(p, now);
        (a.expect("an ACK per packet"), n)
    }

    fn on_host(r: &mut Receiver, p: &Packet, now: Time, host: &mut HostArrivals) -> (Ack, u64) {
        let (a, n) = r.on_data_at_host(p, now, host);
        (a.expect("an ACK per packet"), n)
    }

    #[test]
    fn in_order_packets_advance_the_cumulative_ack_without_sack() {
        let mut r = Receiver::new(true, 40);
        for s in 0..3 {
            let (a, n) = on(&mut r, &data(s), Time::ZERO);
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
        let (a, _) = on_host(&mut asks, &data(0), Time::ZERO, &mut host);
        assert_eq!(a.host_bytes, Some(1500));
        // Another flow's packet reaches the same host: counted, but its receiver stamps nothing.
        let (b, _) = on_host(&mut silent, &other, Time::ZERO, &mut host);
        assert_eq!(b.host_bytes, None);
        let (c, _) = on_host(&mut asks, &data(1), Time::ZERO, &mut host);
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
        let (a, _) = on_host(&mut r, &data(0), Time::ZERO, &mut host);
        assert_eq!(a.host_bytes, Some(1500));
        // Delivered through `on_data` (no host seen): the ACK must not repeat the previous packet's total.
        let (b, _) = on(&mut r, &data(1), Time::ZERO);
        assert_eq!(b.host_bytes, None);
    }

    #[test]
    fn a_hole_produces_sack_blocks_most_recent_first_and_filling_it_delivers_all() {
        let mut r = Receiver::new(true, 40);
        on(&mut r, &data(0), Time::ZERO);
        // 1 lost; 2, 3 arrive; then 5.
        on(&mut r, &data(2), Time::ZERO);
        let (a, _) = on(&mut r, &data(3), Time::ZERO);
        assert_eq!((a.ack_cum, a.sack[0]), (1, (2, 4)));
        let (a, n) = on(&mut r, &data(5), Time::ZERO);
        assert_eq!(n, 0);
        assert_eq!(&a.sack[..2], &[(5, 6), (2, 4)]);
        let (a, n) = on(&mut r, &data(1), Time::ZERO);
        assert_eq!((a.ack_cum, n), (4, 3));
        assert_eq!(a.sack[0], (5, 6));
        assert_eq!(on(&mut r, &data(2), Time::ZERO).0.ack_cum, 4);
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
        on(&mut r, &data(0), Time::ZERO);
        on(&mut r, &data(2), Time::ZERO);
        // 0 again, below the cumulative ACK 1: [0, 1) first, then the SACK block of 2.
        let (a, _) = on(&mut r, &data(0), Time::ZERO);
        assert_eq!((a.ack_cum, a.sack), (1, [(0, 1), (2, 3), (0, 0)]));
        // 2 again, inside its own SACK block.
        let (a, _) = on(&mut r, &data(2), Time::ZERO);
        assert_eq!(a.sack, [(2, 3), (2, 3), (0, 0)]);
        // A new packet: plain SACK again.
        let (a, _) = on(&mut r, &data(4), Time::ZERO);
        assert_eq!(a.sack, [(4, 5), (2, 3), (0, 0)]);
        // Without DSACK a duplicate changes nothing.
        let mut r = Receiver::new(true, 40);
        on(&mut r, &data(0), Time::ZERO);
        assert_eq!(on(&mut r, &data(0), Time::ZERO).0.sack, [(0, 0); 3]);
    }

    #[test]
    fn an_unlimited_buffer_advertises_no_window_limit() {
        let mut r = Receiver::new(true, 40);
        on(&mut r, &data(0), Time::ZERO);
        let (a, _) = on(&mut r, &data(2), Time::ZERO);
        assert_eq!(a.rwnd, Ack::RWND_UNLIMITED);
        assert_eq!(r.take_wake(), None);
    }

    #[test]
    fn rwnd_is_the_buffer_less_the_bytes_held_out_of_order() {
        let mut r = Receiver::new(true, 40).with_buffer(RecvBuffer::new(Some(10 * 1500), None));
        assert_eq!(on(&mut r, &data(0), Time::ZERO).0.rwnd, 15_000);
        // 1 missing: 2 and 3 wait out of order.
        on(&mut r, &data(2), Time::ZERO);
        assert_eq!(on(&mut r, &data(3), Time::ZERO).0.rwnd, 12_000);
        // Filling the hole hands all three to the application, which reads them at once.
        let (a, n) = on(&mut r, &data(1), Time::ZERO);
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
        assert_eq!(on(&mut r, &data(0), Time::ZERO).0.rwnd, 0);
        let (a, n) = on(&mut r, &data(1), Time::ZERO);
        assert_eq!((a.ack_cum, n, a.rwnd, r.discarded), (1, 0, 0, 1));
    }

    #[test]
    fn reading_reopens_a_closed_window_with_window_updates_at_twice_the_last_one() {
        let mut r = Receiver::new(true, 40).with_buffer(reader(4));
        for s in 0..4 {
            on(&mut r, &data(s), Time::ZERO);
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

    /// Feed `seqs` at 1 ms spacing from `t0_ms` (each sent 20 ms before it arrives); the cumulative ACK
    /// each one triggered, 0 for none.
    fn acks(r: &mut Receiver, t0_ms: u64, seqs: &[u64]) -> Vec<u64> {
        seqs.iter()
            .enumerate()
            .map(|(k, &s)| {
                let t = t0_ms + k as u64;
                let p = Packet::data(0, s, 1500, at(t.saturating_sub(20)));
                r.on_data(&p, at(t)).0.map_or(0, |a| a.ack_cum)
            })
            .collect()
    }

    #[test]
    fn ns3_delayed_acks_ack_the_first_packet_then_every_second_in_order_one() {
        let mut r = Receiver::new(true, 40).with_delayed_ack(DelayedAck::Ns3);
        // ProcessSynRcvd primes m_delAckCount: packet 0 is ACKed at once, then every second one.
        assert_eq!(
            acks(&mut r, 100, &[0, 1, 2, 3, 4, 5, 6]),
            [1, 0, 3, 0, 5, 0, 7]
        );
        assert_eq!(r.take_wake(), None, "nothing held, no timer");
    }

    #[test]
    fn a_delayed_ack_echoes_the_earliest_packet_it_acknowledges() {
        let mut r = Receiver::new(true, 40).with_delayed_ack(DelayedAck::Ns3);
        r.on_data(&Packet::data(0, 0, 1500, at(0)), at(20));
        assert!(r
            .on_data(&Packet::data(0, 1, 1500, at(1)), at(21))
            .0
            .is_none());
        let a = r
            .on_data(&Packet::data(0, 2, 1500, at(2)), at(22))
            .0
            .expect("second packet");
        // RFC 7323 §4.3: TS.Recent is packet 1's, so the RTT sample includes the 1 ms delay.
        assert_eq!((a.ack_cum, a.seq, a.sent, a.recv), (3, 1, at(1), at(21)));
    }

    #[test]
    fn ns3_a_lone_in_order_packet_is_acked_by_the_200_ms_timer() {
        let mut r = Receiver::new(true, 40).with_delayed_ack(DelayedAck::Ns3);
        assert_eq!(acks(&mut r, 100, &[0, 1]), [1, 0]);
        assert_eq!(r.take_wake(), Some(at(301)));
        assert_eq!(r.on_wake(at(300)), None);
        let a = r.on_wake(at(301)).expect("DelAckTimeout");
        assert_eq!(
            (a.ack_cum, a.seq, a.recv, a.window_update),
            (2, 1, at(101), false)
        );
        assert_eq!(r.take_wake(), None);
        // The count restarted: the next packet waits again, its timer 200 ms from it.
        assert_eq!(acks(&mut r, 400, &[2]), [0]);
        assert_eq!(r.take_wake(), Some(at(600)));
        // An ACK sent in between cancels the timer: its wake-up finds nothing to send.
        assert_eq!(acks(&mut r, 450, &[3]), [4]);
        assert_eq!(r.on_wake(at(600)), None);
    }

    #[test]
    fn ns3_out_of_order_hole_filling_and_duplicate_packets_are_acked_at_once() {
        let mut r = Receiver::new(true, 40).with_delayed_ack(DelayedAck::Ns3);
        // 0 at once, 1 held; 3 leaves a gap (ACK at once, echoing 1), 2 fills it; 4 waits again.
        assert_eq!(acks(&mut r, 100, &[0, 1, 3, 2, 4, 5]), [1, 0, 2, 4, 0, 6]);
        // With data held out of order every packet is ACKed, in order or not.
        assert_eq!(acks(&mut r, 200, &[8, 6, 7]), [6, 7, 9]);
        // A duplicate: at once.
        assert_eq!(acks(&mut r, 300, &[9, 4]), [0, 10]);
    }

    /// A Linux receiver's 16 quick ACKs used up by packets 0-15 arriving 1 ms apart, the last at 104 ms;
    /// returns the next packet.
    fn past_quick_acks(r: &mut Receiver) -> u64 {
        let seqs: Vec<u64> = (0..16).collect();
        assert_eq!(acks(r, 89, &seqs), (1..=16).collect::<Vec<_>>());
        16
    }

    #[test]
    fn linux_quick_acks_the_first_sixteen_packets_then_acks_every_second_full_sized_one() {
        let mut r = Receiver::new(true, 40).with_delayed_ack(DelayedAck::Linux);
        // tcp_incr_quickack at the first data packet: rcv_wnd / (2 rcv_mss) with the SYN's window of
        // 65,535 bytes (43 packets of 1500) = 21, at most TCP_MAX_QUICKACKS = 16 quick ACKs.
        let seqs: Vec<u64> = (0..20).collect();
        let mut want: Vec<u64> = (1..=16).collect();
        want.extend([0, 18, 0, 20]);
        assert_eq!(acks(&mut r, 100, &seqs), want);
        // The odd one waits for the ATO: TCP_ATO_MIN, which fast arrivals keep at 40 ms.
        assert_eq!(acks(&mut r, 120, &[20]), [0]);
        assert_eq!(r.take_wake(), Some(at(160)));
        let a = r.on_wake(at(160)).expect("delayed ACK timer");
        assert_eq!((a.ack_cum, a.seq), (21, 20));
    }

    #[test]
    fn linux_a_missed_delayed_ack_doubles_the_ato_and_fast_arrivals_shrink_it() {
        let mut r = Receiver::new(true, 40).with_delayed_ack(DelayedAck::Linux);
        let q = past_quick_acks(&mut r);
        // A lone packet 46 ms later: the timer at ato = 40 ms; it fires, ato becomes 80 ms.
        assert_eq!(acks(&mut r, 150, &[q]), [0]);
        assert_eq!(r.take_wake(), Some(at(190)));
        assert!(r.on_wake(at(190)).is_some());
        // 100 ms later (m >= ato, below the RTO: ato unchanged): the timer is 80 ms out.
        assert_eq!(acks(&mut r, 250, &[q + 1]), [0]);
        assert_eq!(r.take_wake(), Some(at(330)));
        // 10 ms later (m <= TCP_ATO_MIN / 2): ato = 80 / 2 + 20 = 60 ms, but two packets go at once.
        assert_eq!(acks(&mut r, 260, &[q + 2]), [q + 3]);
        // 30 ms later (20 < m < ato): ato = 60 / 2 + 30 = 60 ms.
        assert_eq!(acks(&mut r, 290, &[q + 3]), [0]);
        // The wake-up handed out for 330 ms comes first, finds nothing due, and hands out the new one.
        assert_eq!(r.take_wake(), None);
        assert_eq!(r.on_wake(at(330)), None);
        assert_eq!(r.take_wake(), Some(at(350)));
    }

    #[test]
    fn linux_a_gap_longer_than_the_rto_or_a_duplicate_brings_quick_acks_back() {
        let mut r = Receiver::new(true, 40).with_delayed_ack(DelayedAck::Linux);
        acks(&mut r, 100, &[0, 1, 2, 3, 4, 5, 6]);
        // 1 s of silence: tcp_incr_quickack with the whole (unlimited) window, 16 quick ACKs.
        let seqs: Vec<u64> = (7..25).collect();
        let got = acks(&mut r, 1_100, &seqs);
        assert_eq!(&got[..16], &(8..24).collect::<Vec<_>>()[..]);
        assert_eq!(&got[16..], &[0, 25]);
        // A duplicate: tcp_enter_quickack_mode, ACKed at once, and quick ACKs after it.
        assert_eq!(acks(&mut r, 1_200, &[3, 25, 26]), [25, 26, 27]);
    }

    #[test]
    fn a_held_ack_goes_when_the_reader_reopens_the_window_its_packet_closed() {
        for policy in [DelayedAck::Ns3, DelayedAck::Linux] {
            let mut r = Receiver::new(true, 40)
                .with_buffer(reader(1))
                .with_delayed_ack(policy);
            // Linux: the first packets are quick-ACKed (an empty window gives 2); ns-3: the first one.
            let mut seq = 0;
            let mut now = at(0);
            loop {
                let (a, _) = r.on_data(&data(seq), now);
                seq += 1;
                let Some(a) = a else { break };
                assert_eq!(a.rwnd, 0, "{policy:?}");
                // Reading the packet (1 ms) reopens the window: an update, then the next packet.
                let t = r.take_wake().expect("window update");
                assert!(r.on_wake(t).expect("window update").rwnd > 0);
                now = t + Dur::from_ms(1);
            }
            // This packet's ACK is held and closes the window again. Linux tcp_cleanup_rbuf counts it
            // (rcv_window_now is the advertised window less what arrived since): reading it frees
            // twice that, so the ACK goes 1 ms later with the window, not at the delayed-ACK timer.
            assert_eq!(r.take_wake(), Some(now + Dur::from_ms(1)), "{policy:?}");
            let a = r.on_wake(now + Dur::from_ms(1)).expect("the held ACK");
            assert_eq!(
                (a.ack_cum, a.seq, a.rwnd, a.window_update),
                (seq, seq - 1, 1500, false),
                "{policy:?}"
            );
        }
    }

    #[test]
    fn with_an_application_reading_at_once_an_ack_is_not_held_over_half_the_buffer_used() {
        for policy in [DelayedAck::Ns3, DelayedAck::Linux] {
            let two = RecvBuffer::new(Some(2 * 1500), None);
            let mut r = Receiver::new(true, 40)
                .with_buffer(two)
                .with_delayed_ack(policy);
            // Linux tcp_cleanup_rbuf after the read: one packet left of the two advertised is at most
            // half the buffer, and the read freed twice it, so the ACK goes (the sender can send no more).
            assert_eq!(acks(&mut r, 100, &[0, 1, 2, 3]), [1, 2, 3, 4], "{policy:?}");
            assert_eq!(r.take_wake(), None);
        }
        // Four packets of buffer: the second packet's ACK goes by the usual rules, the odd one waits.
        let mut r = Receiver::new(true, 40)
            .with_buffer(RecvBuffer::new(Some(4 * 1500), None))
            .with_delayed_ack(DelayedAck::Ns3);
        assert_eq!(acks(&mut r, 100, &[0, 1, 2, 3]), [1, 0, 3, 0]);
    }

    #[test]
    fn linux_out_of_order_and_hole_filling_packets_are_acked_at_once() {
        let mut r = Receiver::new(true, 40).with_delayed_ack(DelayedAck::Linux);
        let q = past_quick_acks(&mut r);
        assert_eq!(
            acks(&mut r, 110, &[q, q + 2, q + 3, q + 1, q + 4, q + 5]),
            [0, q + 1, q + 1, q + 4, 0, q + 6]
        );
    }
}
