//! Endpoints: senders driven by a controller over a datagram or a reliable transport, and the
//! receivers that ACK every packet.

pub mod cmt;
pub mod datagram;
pub mod packed;
pub mod prr;
pub mod rack;
pub mod receiver;
pub mod reliable;
pub mod rto;
pub mod window_mgmt;

use ccscope_cc::{AnyController, Controller as _, Transport};
use ccscope_core::{Bandwidth, Time};
use ccscope_net::{Ack, Packet};

use crate::traffic::TransferPlan;

pub use cmt::{CmtConfig, CmtPathReport, CmtSender};
pub use datagram::DatagramSender;
pub use receiver::{ArrivalLog, DelayedAck, HostArrivals, Receiver, RecvBuffer};
pub use reliable::{App, ReliableSender};
pub use rto::{RtoEstimatorKind, RtoParams};
pub use window_mgmt::{Rank, WindowManagement};

/// Socket buffers of the reliable transport; `None` = unlimited, the default (docs/scenarios.md
/// gives Linux-like values). Bytes count `packet_bytes` per packet, headers included.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferParams {
    /// Receive buffer: the receiver advertises it less what it holds (RFC 9293 §3.8.6.2.2).
    pub rbuf_bytes: Option<u64>,
    /// The receiving application's read rate; `None` = it reads in-order data at once.
    pub read_rate: Option<Bandwidth>,
    /// Send buffer: at most this much data sent and not yet acknowledged (Linux tcp_wmem).
    pub sndbuf_bytes: Option<u64>,
}

impl BufferParams {
    /// The flow's receive buffer.
    pub fn recv_buffer(&self) -> RecvBuffer {
        RecvBuffer::new(self.rbuf_bytes, self.read_rate)
    }
}

/// A flow's sender, of any transport (enum dispatch: no virtual call per packet).
#[allow(clippy::large_enum_variant)]
pub enum Sender {
    Datagram(DatagramSender),
    Reliable(ReliableSender),
    /// An SCTP-CMT association: its controllers are per destination, not one `AnyController`.
    Cmt(CmtSender),
}

macro_rules! each {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            Sender::Datagram($s) => $e,
            Sender::Reliable($s) => $e,
            Sender::Cmt($s) => $e,
        }
    };
}

/// The two transports driven by one `AnyController`.
macro_rules! single {
    ($self:ident, $s:ident => $e:expr, cmt $c:ident => $f:expr) => {
        match $self {
            Sender::Datagram($s) => $e,
            Sender::Reliable($s) => $e,
            Sender::Cmt($c) => $f,
        }
    };
}

impl Sender {
    pub fn transport(&self) -> Transport {
        match self {
            Sender::Datagram(_) => Transport::Datagram,
            Sender::Reliable(_) => Transport::Reliable,
            Sender::Cmt(_) => Transport::Cmt,
        }
    }
    /// The flow's one controller (`None` for a CMT association, which has one per destination).
    pub fn cc(&mut self) -> Option<&mut AnyController> {
        single!(self, s => Some(&mut s.cc), cmt _c => None)
    }
    /// The controller reads the receiving host's arrivals on its ACKs (`Controller::wants_host_feedback`).
    pub fn wants_host_feedback(&self) -> bool {
        single!(self, s => s.cc.wants_host_feedback(), cmt _c => false)
    }
    /// When the controller wants `on_timer`.
    #[inline]
    pub fn next_timer(&self) -> Option<Time> {
        single!(self, s => s.cc.next_timer(), cmt _c => None)
    }
    pub fn on_timer(&mut self, now: Time) {
        if let Some(cc) = self.cc() {
            cc.on_timer(now);
        }
    }
    /// Between transfers (an OFF period) with nothing outstanding: the controller has nothing to clock.
    pub fn between_transfers(&self) -> bool {
        each!(self, s => s.in_flight() == 0 && s.plan.as_ref().is_some_and(|p| p.idle()))
    }
    /// The window in packets (a CMT association: its destinations' windows together).
    #[inline]
    pub fn cwnd(&self) -> u32 {
        single!(self, s => s.cc.cwnd(), cmt c => c.cwnd_packets())
    }
    pub fn active(&self) -> bool {
        each!(self, s => s.active)
    }
    pub fn start(&mut self, now: Time) {
        each!(self, s => s.start(now))
    }
    pub fn stop(&mut self) {
        each!(self, s => s.active = false)
    }
    /// Send what the window, pacing and application allow; returns a wake-up time if held back.
    pub fn try_send(&mut self, now: Time, out: &mut Vec<Packet>) -> Option<Time> {
        each!(self, s => s.try_send(now, out))
    }
    /// An ACK reached the sender; `peer` is the flow's receiver, whose arrival log a CMT SACK
    /// refers to (see `cmt`).
    pub fn on_ack(
        &mut self,
        now: Time,
        ack: &Ack,
        peer: &mut Receiver,
        out: &mut Vec<Packet>,
    ) -> Option<Time> {
        match self {
            Sender::Datagram(s) => s.on_ack(now, ack, out),
            Sender::Reliable(s) => s.on_ack(now, ack, out),
            Sender::Cmt(s) => match peer.arrival_log() {
                Some(log) => s.on_sack(now, ack, log, out),
                None => None,
            },
        }
    }
    /// The transport's timer fired (datagrump's no-ACK timeout, the RFC 6298 RTO, a T3-rtx).
    pub fn on_timeout(&mut self, now: Time, out: &mut Vec<Packet>) -> Option<Time> {
        each!(self, s => s.on_timeout(now, out))
    }
    /// When the transport's timer would fire, if it is armed.
    pub fn timeout_deadline(&self) -> Option<Time> {
        each!(self, s => s.timeout_deadline())
    }
    pub fn declared_lost(&self) -> u64 {
        each!(self, s => s.lost)
    }
    /// Connections the reliable transport opened after its first (0 for the other transports).
    pub fn connections(&self) -> u64 {
        match self {
            Sender::Reliable(s) => s.connections,
            Sender::Datagram(_) | Sender::Cmt(_) => 0,
        }
    }
    pub fn rtos(&self) -> u64 {
        match self {
            Sender::Datagram(_) => 0,
            Sender::Reliable(s) => s.rtos,
            Sender::Cmt(s) => s.rtos,
        }
    }
    /// The application's transfer plan, if it is not bulk.
    pub fn plan(&self) -> Option<&TransferPlan> {
        match self {
            Sender::Datagram(s) => s.plan.as_ref(),
            Sender::Reliable(s) => s.plan.as_deref(),
            Sender::Cmt(s) => s.plan.as_ref(),
        }
    }
    /// Delay/window samples of every controller this flow used (retired ones first).
    pub fn take_samples(&mut self) -> Vec<ccscope_cc::DelayWindowSample> {
        let mut v = each!(self, s => s.plan.as_mut().map(|p| std::mem::take(&mut p.retired_samples)).unwrap_or_default());
        if let Some(cc) = self.cc() {
            v.extend(cc.take_samples());
        }
        v
    }
    /// The controller's counters, those of earlier connections' controllers included (a CMT
    /// association: its own counters), and the reliable transport's F-RTO undos, loss probes and
    /// RACK timer expiries when those are on.
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        let retired = each!(self, s => s.plan.as_ref().map(|p| p.retired_counters.clone()).unwrap_or_default());
        let own = single!(self, s => s.cc.counters(), cmt c => c.counters());
        let mut all = crate::traffic::add_counters(retired, &own);
        if let Sender::Reliable(r) = self {
            if r.frto_enabled() {
                all.push(("spurious_rtos", r.spurious_rtos));
            }
            if r.tlp_enabled() {
                all.push(("tlp_probes", r.tlp_probes));
                all.push(("tlp_recoveries", r.tlp_recoveries));
            }
            if r.rack_enabled() {
                all.push(("rack_reo_timeouts", r.rack_reo_timeouts));
            }
        }
        all
    }
    pub fn retransmissions(&self) -> u64 {
        match self {
            Sender::Datagram(_) => 0,
            Sender::Reliable(s) => s.retransmitted,
            Sender::Cmt(s) => s.retransmitted,
        }
    }
    /// Per-path results of a CMT association at `end` (empty for the other transports).
    pub fn path_reports(&self, end: Time) -> Vec<CmtPathReport> {
        match self {
            Sender::Cmt(s) => s.path_reports(end),
            _ => Vec::new(),
        }
    }
}
