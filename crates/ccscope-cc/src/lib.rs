//! ccscope-cc: congestion controllers as sans-IO state machines.
//!
//! A controller never reads a clock or touches a socket: the endpoint passes `now` and an event
//! struct into a handler and reads the decisions (`cwnd`, `pacing_rate`, `next_timer`) back. The
//! same object therefore drives the simulator and, later, real UDP sockets.

// Parameter checks read `!(x >= lo)` on purpose: a NaN fails them, where `x < lo` would let it through.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod common;
pub mod params;
pub mod registry;
pub mod wrap;

// The schemes, grouped by what drives them; registry.rs is the one list of them.
/// Windows or rates driven by measured delay: Vegas, LEDBAT, Verus, TIMELY and paper 001's delay rules.
pub mod delay;
/// Controllers that act on an explicit model of the path: BBR, Sprout, the Markov walk of paper 000.
pub mod model;
/// Rate-based control on a measured throughput signal: paper 003's LIED and SAC.
pub mod rate;
/// Windows driven by loss (and, for paper 001's AIMD, a delay trigger): Reno, Cubic, SCTP.
pub mod window;

#[cfg(test)]
mod properties;
#[cfg(test)]
pub(crate) mod testing;

pub use params::{ParamError, ParamSpec, StackDefault};
pub use registry::{build, describe, AnyController, CONTROLLERS};

/// The most packets a controller's window may hold: every built-in keeps to it (the property harness
/// checks), a window parameter above it is refused, and so is a Python controller asking for more.
pub const MAX_CWND: u32 = 10_000_000;

/// Controller parameters naming an input file (a markov `model`, a SAC `table_file` or `oracle_file`):
/// the loader resolves them next to the scenario and a results folder hashes them.
pub const INPUT_FILE_KEYS: &[&str] = &["model", "table_file", "oracle_file"];

use ccscope_core::{Bandwidth, Dur, Time};

/// One (delay, window) observation for training a model-driven controller (paper 000 §4.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DelayWindowSample {
    pub t: Time,
    /// Delay in whole milliseconds (the paper's 1 ms granularity).
    pub d_ms: u32,
    /// Packets sent (per epoch) or the window the packet carried (per packet).
    pub w: u32,
}

/// How a flow's packets are carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// datagrump-style datagrams: nothing is retransmitted; losses are only reported.
    Datagram,
    /// TCP-like: cumulative ACK + SACK, fast retransmit, NewReno recovery, RFC 6298 RTO.
    Reliable,
    /// SCTP concurrent multipath transfer: one association over all of a flow's paths (paper 002).
    Cmt,
}

/// A packet left the sender.
#[derive(Clone, Copy, Debug)]
pub struct SendEvent {
    pub seq: u64,
    pub bytes: u32,
    /// Packets in flight after this one was sent.
    pub in_flight: u32,
    /// Sent because the flow's timeout fired rather than because the window was open.
    pub after_timeout: bool,
    /// A retransmission (reliable transport).
    pub retransmission: bool,
    /// The transport's app-limited mark was set when this packet left (Linux `tp->app_limited`,
    /// draft-cheng-iccrg-delivery-rate-estimation C.app_limited): the application ran dry before it.
    pub app_limited: bool,
}

/// An acknowledgement reached the sender. The receiver ACKs every packet.
#[derive(Clone, Copy, Debug)]
pub struct AckEvent {
    /// Sequence number of the packet this ACK acknowledges.
    pub seq: u64,
    pub bytes: u32,
    /// When the acknowledged packet was sent (sender clock).
    pub send_time: Time,
    /// When the receiver got it (the simulator shares one clock; real sockets would not).
    pub recv_time: Time,
    /// now - send_time.
    pub rtt: Dur,
    /// The RTT Linux hands its congestion control (`tcp_clean_rtx_queue` `ca_rtt_us`, "RTT of last
    /// (S)ACKed packet"; the BBR drafts' `rs.rtt`): that of the newest packet this ACK newly SACKs, or
    /// else newly ACKs cumulatively, never one sent twice; none from the cumulative part when it covers
    /// a resent packet (`FLAG_RETRANS_DATA_ACKED`). `rtt` when there is none, as Linux falls back to
    /// the timestamp echo. A delayed ACK echoes the oldest packet it covers, so this is a packet gap
    /// shorter than `rtt` there; with one packet per ACK the two are equal.
    pub ca_rtt: Dur,
    /// Packets still in flight after this ACK (and any losses it revealed).
    pub in_flight: u32,
    /// Highest sequence number sent so far.
    pub last_sent_seq: u64,
    /// The value `on_send` returned for this packet: on the reliable transport, for its latest
    /// transmission, also when the ACK echoes an earlier one (Linux keeps one `skb->tx` per packet,
    /// overwritten on retransmission, `tcp_rate_skb_sent`); 0 when an earlier ACK already acknowledged
    /// the echoed packet cumulatively. For per-transmission accounting use `on_packet_acked` and
    /// `on_loss`.
    pub tag: u64,
    /// Packets newly acknowledged by this ACK (cumulatively or selectively); 1 for datagrams.
    pub newly_acked: u32,
    /// This ACK advanced SND.UNA (acknowledged new data cumulatively; Linux `FLAG_DATA_ACKED`); false
    /// for a duplicate ACK that only SACKs. Always true for datagrams.
    pub snd_una_advanced: bool,
    /// The sender is in loss recovery (between a congestion event and its recovery point).
    pub in_recovery: bool,
    /// The delivery-rate sample of this ACK (`common::rate_sample`); `None` when it delivered
    /// nothing new or its interval was too short to be valid.
    pub rate: Option<common::RateSample>,
    /// The receiving host's cumulative data bytes delivered to it (all flows) when this packet
    /// arrived, as the receiver reports it; `None` unless the controller asks (`wants_host_feedback`).
    pub host_bytes: Option<u64>,
}

/// One packet an ACK newly acknowledges (cumulatively or selectively), handed to a controller that
/// asks (`Controller::wants_packet_acks`) before that ACK's `on_ack`: a delayed or cumulative ACK
/// covers several packets but echoes one, and each comes back here with the tag `on_send` gave it.
#[derive(Clone, Copy, Debug)]
pub struct PacketAcked {
    pub seq: u64,
    pub bytes: u32,
    /// When this transmission of the packet was sent.
    pub send_time: Time,
    /// The value `on_send` returned for this transmission.
    pub tag: u64,
    /// When the receiver got it: known only for the packet the ACK echoes (`AckEvent::recv_time`).
    pub recv_time: Option<Time>,
    /// The receiving host's total when it arrived, for the echoed packet (`AckEvent::host_bytes`).
    pub host_bytes: Option<u64>,
}

/// Loss was detected outside recovery: a new congestion episode begins (at most one per round trip).
#[derive(Clone, Copy, Debug)]
pub struct CongestionEvent {
    /// Packets in flight when the loss was detected (before any reduction).
    pub in_flight: u32,
    /// Send time of the lost packet that started the episode.
    pub send_time: Time,
    pub cause: LossCause,
}

/// Why a packet was declared lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossCause {
    /// Three later packets were acknowledged first (RFC 9002 §6.1.1 packet threshold).
    Reordering,
    /// The flow's timeout expired with the packet unacknowledged.
    Timeout,
}

/// A packet was declared lost.
#[derive(Clone, Copy, Debug)]
pub struct LossEvent {
    pub seq: u64,
    pub bytes: u32,
    pub send_time: Time,
    pub in_flight: u32,
    pub cause: LossCause,
    pub tag: u64,
}

/// A congestion controller. Handlers get `now`; decisions are read back after every event.
/// A method added here is forwarded by `Box<C>` below and by `wrap::Wrapped`.
pub trait Controller: Send {
    /// A packet was sent; the returned tag is handed back with its ACK or loss.
    fn on_send(&mut self, _now: Time, _ev: &SendEvent) -> u64 {
        0
    }
    fn on_ack(&mut self, now: Time, ev: &AckEvent);
    /// A packet the coming ACK newly acknowledges (called only if `wants_packet_acks`).
    fn on_packet_acked(&mut self, _now: Time, _ev: &PacketAcked) {}
    fn on_loss(&mut self, _now: Time, _ev: &LossEvent) {}
    /// Once per loss episode, before the `on_loss` calls of that detection (RFC 5681 §3.2, RFC 6582).
    fn on_congestion_event(&mut self, _now: Time, _ev: &CongestionEvent) {}
    /// The reliable transport's recovery ended (the recovery point was cumulatively ACKed).
    fn on_recovery_exit(&mut self, _now: Time) {}
    /// The reliable transport's retransmission timer expired (RFC 6298 §5.5, RFC 5681 §3.1).
    fn on_rto(&mut self, _now: Time) {}
    /// The timer expired again with nothing acknowledged since the last expiry: RFC 5681 §3.1 holds
    /// ssthresh constant (Linux `tcp_enter_loss` neither lowers it nor saves the undo state again).
    /// By default the same as `on_rto`.
    fn on_rto_repeated(&mut self, now: Time) {
        self.on_rto(now)
    }
    /// The transport found its last timeout spurious (F-RTO, RFC 5682; Linux `tcp_undo_cwnd_reduction`):
    /// restore the window and ssthresh from before `on_rto`.
    fn on_undo(&mut self, _now: Time) {}
    /// The controller sets its window during loss recovery itself (Linux `ca_ops->cong_control`, as
    /// BBR does), so the transport's proportional rate reduction (RFC 6937) leaves it alone.
    fn sets_window_in_recovery(&self) -> bool {
        false
    }
    /// No ACK arrived for `timeout()`; the sender will send one packet regardless of the window.
    fn on_timeout(&mut self, _now: Time) {}
    /// The time asked for by `next_timer` has come.
    fn on_timer(&mut self, _now: Time) {}
    /// When the controller wants `on_timer`; `None` for never.
    fn next_timer(&self) -> Option<Time> {
        None
    }
    /// Congestion window in packets: the sender keeps at most this many in flight.
    fn cwnd(&self) -> u32;
    /// Optional pacing rate; `None` sends as fast as the window allows.
    fn pacing_rate(&self) -> Option<Bandwidth> {
        None
    }
    /// How long without an ACK before `on_timeout` (datagrump's `timeout_ms`).
    fn timeout(&self) -> Dur {
        Dur::from_ms(1000)
    }
    /// Training samples recorded so far (controllers that record them); taken once, at the end.
    fn take_samples(&mut self) -> Vec<DelayWindowSample> {
        Vec::new()
    }
    /// A short name of the controller's current state, for logs and plots.
    fn state_name(&self) -> &'static str {
        "run"
    }
    /// The controller reads the receiving host's arrivals (`AckEvent::host_bytes`): the receiver then
    /// reports them on every ACK of this flow (paper 003 SAC `receiver_aggregate`, spec §6 item 1).
    fn wants_host_feedback(&self) -> bool {
        false
    }
    /// The controller counts acknowledged packets by their own tags (`on_packet_acked`); read once,
    /// when the flow is built.
    fn wants_packet_acks(&self) -> bool {
        false
    }
    /// The controller reads delivery-rate samples (`AckEvent::rate`); for one that does not, the
    /// transports compute none and its ACKs carry `None`. A property test checks every registered
    /// controller that says no decides the same with samples and without.
    fn wants_rate_sample(&self) -> bool {
        false
    }
    /// Named event counts the controller keeps for diagnosis (read once, at the end of a run).
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}

/// A boxed controller is a controller (`AnyController::Boxed` holds one; generic drivers take either).
impl<C: Controller + ?Sized> Controller for Box<C> {
    fn on_send(&mut self, now: Time, ev: &SendEvent) -> u64 {
        (**self).on_send(now, ev)
    }
    fn on_ack(&mut self, now: Time, ev: &AckEvent) {
        (**self).on_ack(now, ev)
    }
    fn on_packet_acked(&mut self, now: Time, ev: &PacketAcked) {
        (**self).on_packet_acked(now, ev)
    }
    fn on_loss(&mut self, now: Time, ev: &LossEvent) {
        (**self).on_loss(now, ev)
    }
    fn on_timeout(&mut self, now: Time) {
        (**self).on_timeout(now)
    }
    fn on_congestion_event(&mut self, now: Time, ev: &CongestionEvent) {
        (**self).on_congestion_event(now, ev)
    }
    fn on_recovery_exit(&mut self, now: Time) {
        (**self).on_recovery_exit(now)
    }
    fn on_rto(&mut self, now: Time) {
        (**self).on_rto(now)
    }
    fn on_rto_repeated(&mut self, now: Time) {
        (**self).on_rto_repeated(now)
    }
    fn on_undo(&mut self, now: Time) {
        (**self).on_undo(now)
    }
    fn on_timer(&mut self, now: Time) {
        (**self).on_timer(now)
    }
    fn sets_window_in_recovery(&self) -> bool {
        (**self).sets_window_in_recovery()
    }
    fn next_timer(&self) -> Option<Time> {
        (**self).next_timer()
    }
    fn cwnd(&self) -> u32 {
        (**self).cwnd()
    }
    fn pacing_rate(&self) -> Option<Bandwidth> {
        (**self).pacing_rate()
    }
    fn timeout(&self) -> Dur {
        (**self).timeout()
    }
    fn state_name(&self) -> &'static str {
        (**self).state_name()
    }
    fn take_samples(&mut self) -> Vec<DelayWindowSample> {
        (**self).take_samples()
    }
    fn wants_host_feedback(&self) -> bool {
        (**self).wants_host_feedback()
    }
    fn wants_packet_acks(&self) -> bool {
        (**self).wants_packet_acks()
    }
    fn wants_rate_sample(&self) -> bool {
        (**self).wants_rate_sample()
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        (**self).counters()
    }
}
