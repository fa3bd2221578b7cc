//! The reliable (TCP-like) sender, in packet sequence space (one packet = one MSS).
//!
//! - Cumulative ACK plus SACK (RFC 2018): SACKed packets leave the pipe and are never resent.
//! - Loss detection: the third duplicate ACK (RFC 5681 §3.2), or a packet SACKed at least three
//!   sequence numbers above an outstanding one (RFC 6675 `IsLost` with DupThresh = 3, counted in
//!   sequence space), or a partial ACK during recovery (RFC 6582 §3.2 step 5).
//! - NewReno recovery (RFC 6582): one congestion event per episode; the episode ends when the
//!   recovery point (highest sequence sent at its start) is cumulatively ACKed.
//! - Pipe accounting (RFC 6675 §4): `in_flight` counts packets sent and neither ACKed, SACKed nor
//!   declared lost, so the window needs no inflation during recovery.
//! - Retransmission timer (RFC 6298): srtt/rttvar with gains 1/8 and 1/4, RTO = srtt + max(G, 4
//!   rttvar) clamped to [min, max], doubled on each expiry, restarted when new data is ACKed (with
//!   `sack_restarts`, Linux, also when an ACK newly SACKs a packet sent before the head was last sent).
//!   RTT samples come from the echoed send time of the packet that triggered each ACK (the
//!   timestamp option, RFC 7323 §4), so retransmissions give valid samples; only ACKs that advance
//!   SND.UNA are sampled (RFC 7323's RTTM rule; with the Linux estimator also ACKs that newly SACK).
//! - F-RTO (RFC 5682 §3, the SACK-enhanced algorithm as Linux's `tcp_process_loss` runs it), when
//!   `frto` is on: after a timeout, the first ACK that advances SND.UNA lets new data out instead of
//!   retransmissions; an ACK that then acknowledges or SACKs a packet never retransmitted shows the
//!   timeout was spurious, and the window reduction is undone (Linux `tcp_try_undo_loss`).
//! - Flow control (RFC 9293 §3.8.6): new data only below the right edge of the peer's receive
//!   window (SND.UNA + SND.WND, converted to whole packets) and within the send buffer;
//!   retransmissions are not held back. With the window closed and nothing outstanding, a persist
//!   timer sends zero-window probes (RFC 9293 §3.8.6.1).
//! - Delivery-rate sampling (draft-cheng-iccrg-delivery-rate-estimation, `common::rate_sample`): each
//!   packet's record keeps its send state; every ACK carries the sample of the packets it newly
//!   delivered. The flight is marked app-limited when the application has nothing to send while the
//!   window is open and no loss waits for retransmission (Linux `tcp_rate_check_app_limited`).
//! - Pacing: when the controller gives a `pacing_rate`, each transmission (new or resent) waits until
//!   the previous one's serialization time at that rate has passed (Linux `tcp_wstamp_ns`).
//! - Limited transmit (RFC 3042), when `limited_transmit` is on: on the first two duplicate ACKs
//!   one new packet may go beyond the window while SND.NXT - SND.UNA stays within cwnd + 2.
//! - Proportional rate reduction (RFC 6937 as Linux's `tcp_cwnd_reduction`, `prr.rs`), when `prr`
//!   is on: during fast recovery the send limit is pipe + sndcnt, computed on every ACK from the
//!   packets delivered and sent since recovery began, with the controller's window as ssthresh.
//! - RACK-TLP (RFC 8985 as Linux's tcp_recovery.c, `rack.rs`), when `rack` / `tlp` are on: a packet
//!   is lost when one sent after it was delivered and RACK.rtt + reo_wnd has passed since it was
//!   sent (retransmissions included, so a lost retransmission is resent without a timeout), with a
//!   reordering timer for the ones not yet due; this replaces the duplicate-ACK, IsLost and
//!   partial-ACK rules. The tail loss probe sends new data (or resends the last packet) 2 SRTT after
//!   the last transmission when nothing else would clock out a tail loss. RACK walks the per-packet
//!   records in sequence order (their send times are the rate sampler's); originals are in send
//!   order, so the walk stops at the first original sent after RACK.xmit_ts.
//! - Send overhead (ns-2's TCP `overhead_`, tcp.cc `TcpAgent::send_much` and `delsnd_timer_`, after
//!   Floyd & Jacobson 1992, "On traffic phase effects in packet-switched gateways"), when set: what the
//!   window allows is not sent at once; a delayed-send timer is armed for a uniform random time in
//!   [0, overhead) and, when it fires, everything the window then allows goes. While it is pending no
//!   other call sends. As in ns-2, what ns-2 sends with `output()` outside `send_much` goes at once:
//!   the retransmissions of fast recovery (dupack_action, NewReno's partial ACK) and RFC 3042's packet
//!   (send_one); new data and the retransmissions after a timeout wait for the timer. ns-2's TCP does
//!   not pace; with a controller that does, a packet the pacer held goes when the pacer releases it,
//!   as a timer's send (ns-2's force), so the overhead delays what an ACK lets out at once, not the
//!   pacing rate.
//! - Rounds (specs/002-cmt.md A12, for paper 002's round-correlated loss): a round starts with the
//!   first packet sent after the previous round's first packet is acknowledged (cumulatively or
//!   SACKed); every data packet carries its round, with `Packet::RETX` on retransmissions. Only the
//!   loss model reads the tag.

use std::collections::VecDeque;

use ccscope_cc::common::{PacketSendState, RateSampler};
use ccscope_cc::{
    AckEvent, AnyController, CongestionEvent, Controller as _, LossCause, LossEvent, PacketAcked,
    SendEvent,
};
use ccscope_core::rng::{Rng, RngExt as _};
use ccscope_core::{Dur, Time};
use ccscope_net::{Ack, Packet};

use super::packed::Packed;
use super::prr::{Prr, PrrFlavour};
use super::rack::{probe_timeout, Rack, TIMEOUT_MIN};
use super::rto::{RtoEstimator, RtoEstimatorKind, RtoParams};
use crate::traffic::{OnOffParams, Poll, TransferPlan};

/// What the application gives the transport.
#[derive(Clone, Debug, PartialEq)]
pub enum App {
    /// Always has data.
    Bulk,
    /// A sequence of transfers (sizes in packets); the next starts `think` after the previous one is
    /// fully acknowledged.
    Transfers { packets: Vec<u64>, think: Dur },
    /// Paper 000 §6.6 ON/OFF user: files and OFF periods drawn from (seed, flow), a new connection
    /// per ON period.
    OnOff(OnOffParams),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Sent (or resent) and not yet ACKed, SACKed or declared lost: counted in the pipe.
    Outstanding,
    Sacked,
    /// Declared lost, waiting for retransmission.
    Lost,
}

/// The earlier of two optional times (either one when the other is `None`).
/// What `sack_run` found: F-RTO's evidence (an original (S)ACKed, something newly SACKed), reordering,
/// packets newly delivered, and Linux's `first_sackt` and `last_sackt` (with its seq).
type SackRun = (bool, bool, bool, u32, Option<Time>, Option<(u64, Time)>);

fn earliest(a: Option<Time>, b: Option<Time>) -> Option<Time> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// One outstanding packet's record. The delivery-rate state at its (latest) transmission is kept
/// field by field, so its flag shares a word with `state` and `retransmitted`: 48 bytes a packet
/// instead of 56 with a nested `PacketSendState` (fewer cache lines per ACK with many flows).
#[derive(Clone, Copy, Debug)]
struct Seg {
    sent: Time,
    tag: u64,
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    state: State,
    retransmitted: bool,
    is_app_limited: bool,
}

impl Seg {
    fn new(sent: Time, tag: u64, retransmitted: bool, rate: PacketSendState) -> Seg {
        Seg {
            sent,
            tag,
            delivered: rate.delivered,
            delivered_time: rate.delivered_time,
            first_sent_time: rate.first_sent_time,
            state: State::Outstanding,
            retransmitted,
            is_app_limited: rate.is_app_limited,
        }
    }

    /// Its delivery-rate state (draft-cheng-iccrg-delivery-rate-estimation §3.2, P.*).
    fn rate(&self) -> PacketSendState {
        PacketSendState {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            is_app_limited: self.is_app_limited,
        }
    }
}

/// ns-2's delayed-send timer (tcp.cc `delsnd_timer_`) and the random overhead it waits.
#[derive(Clone, Debug)]
struct SendOverhead {
    /// Each wait is uniform on [0, max) (ns-2 `Random::uniform(overhead_)`); max > 0.
    max: Dur,
    /// When the timer fires, if armed.
    deadline: Option<Time>,
    /// The flow's own stream (same scenario and seed: the same waits).
    rng: Rng,
}

/// Fields in declaration order (`repr(C)`): what every ACK and transmission reads or writes comes
/// first, packed into a few contiguous cache lines; counters read only at the end, the RACK and PRR
/// state of optional mechanisms and the application's plan (boxed) follow. With many flows each ACK
/// finds its flow's state out of cache, so the number of lines it touches sets its cost.
#[repr(C)]
pub struct ReliableSender {
    snd_una: u64,
    snd_nxt: u64,
    ring: VecDeque<Seg>,
    pub cc: AnyController,
    in_flight: u32,
    lost_waiting: u32,
    /// Packets SACKed above SND.UNA (Linux `sacked_out`).
    sacked_out: u32,
    dupacks: u32,
    backoff: u32,
    /// The window on the last ACK, in bytes (RFC 5681 §2: a duplicate ACK leaves it unchanged).
    last_rwnd: u32,
    pub packet_bytes: u32,
    /// The current round (1, 2, ...; 0 before the first packet); its first packet is `round_first`.
    round: u32,
    pub flow: u32,
    persist_backoff: u32,
    pub active: bool,
    /// RFC 6675 §5 step 3: on entering recovery the first lost packet is resent at once, whatever
    /// the pipe says.
    fast_retransmit: bool,
    /// A partial ACK has come in the current recovery episode (ns-3 `!m_isFirstPartialAck`).
    partial_acked: bool,
    /// F-RTO switched on for this flow (RFC 5682).
    frto_enabled: bool,
    /// F-RTO is running for the current timeout (Linux `tp->frto`).
    frto: bool,
    /// F-RTO step 2.b: send new data before retransmissions on this ACK (Linux `REXMIT_NEW`).
    frto_new_data: bool,
    /// RFC 3042 switched on; a duplicate ACK lets one packet beyond the window go (this ACK only).
    lt_enabled: bool,
    lt_credit: bool,
    prr_enabled: bool,
    rack_enabled: bool,
    /// The controller counts acknowledged packets by their tags (`Controller::wants_packet_acks`).
    packet_acks: bool,
    /// ACKs make delivery-rate samples: RACK reads them, or the controller does (`wants_rate_sample`).
    rate_samples: bool,
    /// The last send attempt stopped at the pacing gap: the next one at `next_send_at` is the pacer's.
    pacing_held: bool,
    tlp_enabled: bool,
    /// The outstanding probe resent a packet rather than sending new data (Linux `tlp_retrans`).
    tlp_retrans: bool,
    highest_sacked: Packed<u64>,
    recovery_point: Packed<u64>,
    /// After an RTO, losses of packets sent before it do not start a new episode.
    rto_point: Packed<u64>,
    /// The current round's first packet, until it is acknowledged (`None`: the next packet sent
    /// starts a round).
    round_first: Packed<u64>,
    /// SND.NXT when the outstanding probe was sent (Linux `tlp_high_seq`); one probe at a time.
    tlp_high_seq: Packed<u64>,
    rto_deadline: Packed<Time>,
    /// RFC 8985 §6.2 step 5: the reordering timer (Linux ICSK_TIME_REO_TIMEOUT).
    reo_deadline: Packed<Time>,
    /// RFC 8985 §7.2: the probe timer (Linux ICSK_TIME_LOSS_PROBE).
    tlp_deadline: Packed<Time>,
    /// RFC 9293 §3.8.6.1 persist timer, armed while the window is closed and nothing is outstanding.
    persist_deadline: Packed<Time>,
    /// SND.NXT when F-RTO last let new data out (Linux `tp->high_seq` in CA_Loss).
    high_seq: u64,
    /// Right edge of the peer's receive window in packets (RFC 9293 §3.8.6: SND.UNA + SND.WND);
    /// `u64::MAX` = unlimited.
    snd_wnd_edge: u64,
    /// At most this many packets unacknowledged (snd_nxt - snd_una); `u64::MAX` = unlimited.
    sndbuf_packets: u64,
    /// Lowest sequence that may be in state Lost (retransmission scan start).
    lost_scan: u64,
    /// Sequences below this were already examined by the SACK-based loss rule.
    sack_scan: u64,
    /// Sequences below this are SACKed or waiting for retransmission: RACK's walk starts here.
    rack_lo: u64,
    pub sent: u64,
    pub acked: u64,
    pub lost: u64,
    /// Earliest time pacing allows the next transmission.
    next_send_at: Time,
    /// The SACK blocks the last ACK covered (clipped to what was outstanding): every packet in them
    /// is SACKed, and a SACKed packet stays so until the cumulative ACK passes it.
    sacked_runs: [(u64, u64); 3],
    /// The application's transfers; `None` = bulk.
    pub plan: Option<Box<TransferPlan>>,
    rate: RateSampler,
    rtt: RtoEstimator,
    /// ns-2's send overhead, when the flow sets one (read on every send attempt: a pointer here).
    overhead: Option<Box<SendOverhead>>,
    // Cold: counters read at the end of a run, optional mechanisms' state.
    pub retransmitted: u64,
    pub rtos: u64,
    /// Timeouts F-RTO found spurious and undid.
    pub spurious_rtos: u64,
    /// Loss probes sent (Linux TCPLossProbes) and tail losses they repaired (TCPLossProbeRecovery).
    pub tlp_probes: u64,
    /// The transmission a probe resent over while it was still outstanding (its seq, tag and send time),
    /// for a controller that counts packets by tag: it gets this one back once the probe's outcome is known.
    tlp_superseded: Option<(u64, u64, Time)>,
    pub tlp_recoveries: u64,
    /// RACK reordering-timer expiries that found losses.
    pub rack_reo_timeouts: u64,
    /// Zero-window probes sent.
    pub probes: u64,
    /// Connections opened after the first (a new one per ON period): the receiver starts afresh too.
    pub connections: u64,
    /// The current recovery episode's PRR state (with `prr` on and the controller not setting its
    /// own window in recovery).
    prr: Option<Prr>,
    rack: Rack,
}

impl ReliableSender {
    pub fn new(
        flow: u32,
        cc: AnyController,
        packet_bytes: u32,
        plan: Option<TransferPlan>,
        rto: RtoParams,
    ) -> ReliableSender {
        let packet_acks = cc.wants_packet_acks();
        let rate_samples = rto.rack || cc.wants_rate_sample();
        ReliableSender {
            flow,
            cc,
            packet_bytes,
            active: false,
            plan: plan.map(Box::new),
            snd_una: 0,
            snd_nxt: 0,
            ring: VecDeque::with_capacity(16),
            in_flight: 0,
            lost_scan: 0,
            lost_waiting: 0,
            sack_scan: 0,
            highest_sacked: Packed::NONE,
            sacked_runs: [(0, 0); 3],
            dupacks: 0,
            fast_retransmit: false,
            recovery_point: Packed::NONE,
            rto_point: Packed::NONE,
            partial_acked: false,
            frto_enabled: rto.frto,
            frto: false,
            frto_new_data: false,
            high_seq: 0,
            rtt: RtoEstimator::new(rto),
            rate: RateSampler::default(),
            next_send_at: Time::ZERO,
            backoff: 0,
            rto_deadline: Packed::NONE,
            snd_wnd_edge: u64::MAX,
            last_rwnd: Ack::RWND_UNLIMITED,
            sndbuf_packets: u64::MAX,
            persist_deadline: Packed::NONE,
            persist_backoff: 0,
            round: 0,
            round_first: Packed::NONE,
            probes: 0,
            sent: 0,
            retransmitted: 0,
            lost: 0,
            rtos: 0,
            spurious_rtos: 0,
            lt_enabled: rto.limited_transmit,
            lt_credit: false,
            prr_enabled: rto.prr,
            prr: None,
            sacked_out: 0,
            rack_enabled: rto.rack,
            packet_acks,
            rate_samples,
            pacing_held: false,
            rack: Rack::new(),
            rack_lo: 0,
            reo_deadline: Packed::NONE,
            tlp_enabled: rto.tlp,
            tlp_deadline: Packed::NONE,
            tlp_high_seq: Packed::NONE,
            tlp_retrans: false,
            tlp_probes: 0,
            tlp_recoveries: 0,
            tlp_superseded: None,
            rack_reo_timeouts: 0,
            acked: 0,
            connections: 0,
            overhead: None,
        }
    }

    /// ns-2's TCP `overhead_`: each send waits for a delayed-send timer of a uniform random time in
    /// [0, `max`) drawn from `rng` (see the module notes); `max` = 0 sends at once, as without it.
    pub fn with_send_overhead(mut self, max: Dur, rng: Rng) -> ReliableSender {
        self.overhead = (max > Dur::ZERO).then(|| {
            Box::new(SendOverhead {
                max,
                deadline: None,
                rng,
            })
        });
        self
    }

    /// ns-2 send_much with force 0 and the timer idle: arm it (`Random::uniform(overhead_)`).
    fn arm_overhead(&mut self, now: Time) {
        if let Some(o) = self.overhead.as_deref_mut() {
            if o.deadline.is_none() {
                o.deadline = Some(now + Dur(o.rng.gen_range(0..o.max.as_ns())));
            }
        }
    }

    /// Flow control: the receiver's buffer (the window it announces at connection setup) and the
    /// send buffer, in bytes; `None` = unlimited. Both count whole packets (floor, at least one).
    pub fn with_buffers(
        mut self,
        rbuf_bytes: Option<u64>,
        sndbuf_bytes: Option<u64>,
    ) -> ReliableSender {
        let packets = |b: u64| (b / self.packet_bytes.max(1) as u64).max(1);
        self.snd_wnd_edge = rbuf_bytes.map_or(u64::MAX, packets);
        self.sndbuf_packets = sndbuf_bytes.map_or(u64::MAX, packets);
        self
    }

    pub fn start(&mut self, now: Time) {
        self.active = true;
        if let Some(p) = &mut self.plan {
            p.start(now, self.snd_nxt);
        }
    }

    /// A new connection for a new ON period: a fresh controller (built-in ones) and fresh
    /// per-connection state (RTT estimate, back-off, dupacks, recovery). Nothing is outstanding
    /// here; sequence numbers continue where the old connection stopped, as a new ISN would.
    fn new_connection(&mut self) {
        if let Some(cc) = self.plan.as_mut().and_then(|p| p.respawn(&mut self.cc)) {
            self.cc = cc;
        }
        debug_assert_eq!(self.snd_una, self.snd_nxt);
        self.connections += 1;
        self.rtt = RtoEstimator::new(*self.rtt.params());
        self.rate = RateSampler::default();
        self.backoff = 0;
        self.rto_deadline = Packed::NONE;
        self.dupacks = 0;
        self.fast_retransmit = false;
        self.recovery_point = Packed::NONE;
        self.rto_point = Packed::NONE;
        self.frto = false;
        self.frto_new_data = false;
        self.highest_sacked = Packed::NONE;
        self.sacked_runs = [(0, 0); 3];
        self.lost_scan = self.snd_una;
        self.sack_scan = self.snd_una;
        self.lt_credit = false;
        self.prr = None;
        self.sacked_out = 0;
        self.rack = Rack::new();
        self.rack_lo = self.snd_una;
        self.reo_deadline = Packed::NONE;
        self.tlp_deadline = Packed::NONE;
        self.tlp_high_seq = Packed::NONE;
        self.tlp_retrans = false;
        // The old connection's controller is gone with its packets.
        self.tlp_superseded = None;
        // ns-2 TcpAgent::reset cancels the timers, the delayed-send one included.
        if let Some(o) = self.overhead.as_deref_mut() {
            o.deadline = None;
        }
    }

    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    pub fn frto_enabled(&self) -> bool {
        self.frto_enabled
    }

    pub fn tlp_enabled(&self) -> bool {
        self.tlp_enabled
    }

    pub fn rack_enabled(&self) -> bool {
        self.rack_enabled
    }

    /// What may be in flight now: PRR's limit during its recovery episode, else the controller's window.
    fn send_window(&self) -> u32 {
        // PRR's state is looked at only in recovery (it sits with the cold fields).
        match self.recovery_point.get().and_then(|_| self.prr.as_ref()) {
            Some(p) => p.window(),
            None => self.cc.cwnd(),
        }
    }

    /// Whether a new packet may go now, as far as the application and both buffers are concerned.
    fn new_data_allowed(&self) -> bool {
        self.has_new_data() && self.window_open() && self.sndbuf_open()
    }

    pub fn in_recovery(&self) -> bool {
        self.recovery_point.is_some()
    }

    /// The current RTO (RFC 6298 §2 or Linux's, `rto.rs`), with back-off.
    pub fn rto(&self) -> Dur {
        self.rtt.rto(self.backoff)
    }

    fn has_new_data(&self) -> bool {
        self.plan.as_ref().is_none_or(|p| p.may_send(self.snd_nxt))
    }

    /// RFC 9293 §3.8.6: new data only inside the usable window (SND.UNA + SND.WND - SND.NXT > 0).
    fn window_open(&self) -> bool {
        self.snd_nxt < self.snd_wnd_edge
    }

    /// Linux tcp_wmem: the send buffer holds data until it is acknowledged.
    fn sndbuf_open(&self) -> bool {
        self.snd_nxt - self.snd_una < self.sndbuf_packets
    }

    fn seg(&mut self, seq: u64) -> &mut Seg {
        let i = (seq - self.snd_una) as usize;
        &mut self.ring[i]
    }

    fn transmit(&mut self, now: Time, seq: u64, retransmission: bool, out: &mut Vec<Packet>) {
        self.in_flight += 1;
        self.sent += 1;
        if self.recovery_point.is_some() {
            if let Some(p) = &mut self.prr {
                p.on_sent();
            }
        }
        if retransmission {
            // Resent with a new send time: RACK must look at it again.
            self.rack_lo = self.rack_lo.min(seq);
        }
        let ev = SendEvent {
            seq,
            bytes: self.packet_bytes,
            in_flight: self.in_flight,
            after_timeout: false,
            retransmission,
            app_limited: self.rate.is_app_limited(),
        };
        let tag = self.cc.on_send(now, &ev);
        // Draft §3.2: with nothing unacknowledged before this packet, the rate clocks restart.
        let rate = self.rate.on_send(now, self.ring.is_empty());
        if let Some(r) = self.cc.pacing_rate() {
            self.next_send_at = now + r.tx_time(self.packet_bytes as u64);
        }
        if retransmission {
            self.retransmitted += 1;
            let s = self.seg(seq);
            *s = Seg::new(now, tag, true, rate);
        } else {
            self.ring.push_back(Seg::new(now, tag, false, rate));
        }
        // RFC 6298 §5.1: start the timer when sending with none running.
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto()).into();
        }
        if self.round_first.is_none() {
            // Rounds count in 31 bits (the top one is `Packet::RETX`) and skip 0, "no rounds".
            self.round = if self.round + 1 == Packet::RETX {
                1
            } else {
                self.round + 1
            };
            self.round_first = Some(seq).into();
        }
        out.push(self.data_packet(seq, retransmission, now));
    }

    /// A data packet tagged with the current round.
    fn data_packet(&self, seq: u64, retransmission: bool, now: Time) -> Packet {
        let mut p = Packet::data(self.flow, seq, self.packet_bytes, now);
        p.round = if retransmission {
            self.round | Packet::RETX
        } else {
            self.round
        };
        p
    }

    /// The current round (0 before the first packet).
    pub fn round(&self) -> u32 {
        self.round
    }

    pub fn try_send(&mut self, now: Time, out: &mut Vec<Packet>) -> Option<Time> {
        if self.active
            && self
                .plan
                .as_mut()
                .is_some_and(|p| p.poll(now, self.snd_nxt) == Poll::NewConnection)
        {
            self.new_connection();
        }
        // ns-2 DelSndTimer::expire -> send_much(force 1): everything the window allows goes now. The
        // pacer's release is a timer's send too (ns-2 has no pacing): it does not wait the overhead.
        let expired = match self.overhead.as_deref_mut() {
            Some(o) if o.deadline.is_some_and(|t| t <= now) => {
                o.deadline = None;
                true
            }
            _ => false,
        } || (self.pacing_held && now >= self.next_send_at);
        self.pacing_held = false;
        let mut paced = None;
        let mut deferred = false;
        let nxt_before = self.snd_nxt;
        while self.active {
            let window = self.send_window();
            let open = self.in_flight < window || (self.fast_retransmit && self.lost_waiting > 0);
            // RFC 3042 §2: on an early duplicate ACK one new packet, while FlightSize <= cwnd + 2.
            let limited = !open
                && self.lt_credit
                && self.lost_waiting == 0
                && self.new_data_allowed()
                && self.snd_nxt - self.snd_una < window as u64 + 2;
            if !open && !limited {
                break;
            }
            if self.cc.pacing_rate().is_some() && now < self.next_send_at {
                paced = Some(self.next_send_at);
                self.pacing_held = true;
                break;
            }
            if self.overhead.is_some() && !expired && !limited {
                // ns-2 send_much (force 0): with something to send, only the timer sends it; what
                // ns-2 sends with output() (fast recovery's retransmissions) goes at once.
                let resend =
                    self.lost_waiting > 0 && !(self.frto_new_data && self.new_data_allowed());
                if !(resend && self.recovery_point.is_some()) && (resend || self.new_data_allowed())
                {
                    self.arm_overhead(now);
                    deferred = true;
                    break;
                }
            }
            self.fast_retransmit = false;
            if limited {
                self.lt_credit = false;
            }
            let new_first = self.frto_new_data
                && self.has_new_data()
                && self.window_open()
                && self.sndbuf_open();
            if self.frto_new_data && !new_first {
                // Linux tcp_xmit_recovery (REXMIT_NEW): once new data went out, nothing is resent on
                // this ACK; if none could go, F-RTO gives up and recovery goes on as usual.
                if self.snd_nxt > self.high_seq {
                    break;
                }
                self.frto = false;
                self.frto_new_data = false;
            }
            if self.lost_waiting > 0 && !new_first {
                // Retransmit the lowest packet declared lost.
                let mut seq = self.lost_scan.max(self.snd_una);
                while self.seg(seq).state != State::Lost {
                    seq += 1;
                }
                self.lost_scan = seq + 1;
                self.lost_waiting -= 1;
                self.transmit(now, seq, true, out);
                // Linux tcp_xmit_retransmit_queue: resending the head restarts the RTO, unless RACK's
                // reordering timer holds the one timer.
                if seq == self.snd_una
                    && self.rtt.params().head_retransmit_restarts
                    && self.reo_deadline.is_none()
                {
                    self.rto_deadline = Some(now + self.rto()).into();
                }
            } else if self.has_new_data() && self.window_open() && self.sndbuf_open() {
                let seq = self.snd_nxt;
                self.snd_nxt += 1;
                self.transmit(now, seq, false, out);
            } else {
                if !self.has_new_data() && self.in_flight < window {
                    // Nothing to send with the window open and no loss waiting: app-limited.
                    self.rate.on_app_limited(self.in_flight);
                }
                break;
            }
        }
        // F-RTO's choice of new data (RFC 5682 step 2.b) waits with the send for the delayed-send timer.
        if !deferred {
            self.frto_new_data = false;
        }
        self.lt_credit = false;
        if self.snd_nxt > nxt_before {
            // Linux tcp_write_xmit: new data went out, so a tail loss probe is (re)scheduled.
            self.schedule_tlp(now, false);
        }
        self.arm_persist(now);
        // A transfer waiting for its think (OFF) time wants a wake-up.
        let think = self
            .plan
            .as_ref()
            .and_then(|p| p.wake())
            .filter(|&t| t > now && self.active);
        let delayed = self.overhead.as_ref().and_then(|o| o.deadline);
        earliest(earliest(paced, think), delayed)
    }

    /// RFC 9293 §3.8.6.1: with data to send, the window closed and nothing outstanding, no ACK will
    /// come to reopen it: probe after an RTO, backing off like it (RFC 1122 §4.2.2.17).
    fn arm_persist(&mut self, now: Time) {
        let blocked = self.active
            && self.snd_una == self.snd_nxt
            && !self.window_open()
            && self.has_new_data();
        if !blocked {
            self.persist_deadline = Packed::NONE;
            self.persist_backoff = 0;
        } else if self.persist_deadline.is_none() {
            let base = self.rto();
            let d = Dur(base
                .as_ns()
                .saturating_mul(1u64 << self.persist_backoff.min(30)));
            self.persist_deadline = Some(now + d.min(self.rtt.params().max)).into();
        }
    }

    /// A zero-window probe: the last acknowledged packet again (as Linux's tcp_xmit_probe_skb sends
    /// SND.UNA - 1), so the receiver drops it as a duplicate and answers with its window.
    fn send_probe(&mut self, now: Time, out: &mut Vec<Packet>) {
        debug_assert!(self.snd_una > 0);
        self.probes += 1;
        // It repeats acknowledged data: a retransmission for a loss model.
        out.push(self.data_packet(self.snd_una.saturating_sub(1), true, now));
    }

    fn mark_lost(&mut self, now: Time, seq: u64, cause: LossCause) {
        let in_flight_before = self.in_flight;
        let s = *self.seg(seq);
        debug_assert_eq!(s.state, State::Outstanding);
        let new_episode = self.recovery_point.is_none() && self.rto_point.is_none_or(|p| seq > p);
        if new_episode {
            // RFC 6582 §3.2 step 2: record the recovery point; RFC 5681 §3.2 step 2: one reduction.
            self.recovery_point = Some(self.snd_nxt.saturating_sub(1)).into();
            self.partial_acked = false;
            let ev = CongestionEvent {
                in_flight: in_flight_before,
                send_time: s.sent,
                cause,
            };
            let prior_cwnd = self.cc.cwnd();
            self.cc.on_congestion_event(now, &ev);
            self.fast_retransmit = true;
            // Linux tcp_init_cwnd_reduction, unless the controller runs its own window (cong_control).
            if self.prr_enabled && !self.cc.sets_window_in_recovery() {
                // RecoverFS: Linux's prior_cwnd, or RFC 6937 §3's FlightSize as ns-3.37 takes it.
                let flavour = self.rtt.params().prr_flavour;
                let recover_fs = match flavour {
                    PrrFlavour::Linux => prior_cwnd,
                    PrrFlavour::Ns3 => (self.snd_nxt - self.snd_una).min(u32::MAX as u64) as u32,
                };
                self.prr = Some(Prr::with_recover_fs(flavour, recover_fs));
            }
            // Linux tcp_schedule_loss_probe: probes only in the Open and CWR states;
            // tcp_init_cwnd_reduction ends the probe episode.
            self.tlp_deadline = Packed::NONE;
            self.tlp_high_seq = Packed::NONE;
            self.resolve_superseded(now, false);
        }
        self.seg(seq).state = State::Lost;
        self.in_flight -= 1;
        self.lost += 1;
        self.lost_waiting += 1;
        self.lost_scan = self.lost_scan.min(seq);
        let ev = LossEvent {
            seq,
            bytes: self.packet_bytes,
            send_time: s.sent,
            in_flight: self.in_flight,
            cause,
            tag: s.tag,
        };
        self.cc.on_loss(now, &ev);
    }

    pub fn on_ack(&mut self, now: Time, ack: &Ack, out: &mut Vec<Packet>) -> Option<Time> {
        // ACKs arrive in the order they were sent (one FIFO path), so the latest window is the
        // newest one (RFC 9293 §3.10.7.4's SND.WL1/WL2 check has nothing to reject).
        let rwnd_changed = ack.rwnd != self.last_rwnd;
        self.last_rwnd = ack.rwnd;
        if ack.rwnd != Ack::RWND_UNLIMITED {
            self.snd_wnd_edge = ack.ack_cum + ack.rwnd as u64 / self.packet_bytes.max(1) as u64;
        }
        if ack.window_update {
            // A pure window update acknowledges nothing new and carries no RTT sample.
            return self.try_send(now, out);
        }
        let rtt = now - ack.sent;
        let echoed_tag = if ack.seq >= self.snd_una && ack.seq < self.snd_nxt {
            self.seg(ack.seq).tag
        } else {
            0
        };
        let lost_before = self.lost;
        let prior_highest_sacked = self.highest_sacked;
        let mut newly = 0u32;
        let cum = ack.ack_cum.min(self.snd_nxt);
        let advanced = cum > self.snd_una;
        let in_loss = self.rto_point.is_some();
        // F-RTO's evidence (Linux FLAG_ORIG_SACK_ACKED, FLAG_DATA_SACKED, a duplicate ACK).
        let mut orig_acked = false;
        // ns-3's m_isRetransDataAcked: this cumulative ACK covers a retransmitted packet.
        let mut retx_acked = false;
        let mut sacked = false;
        // Linux tcp_check_sack_reordering: a never-resent packet delivered below the highest SACKed.
        let mut reordered = false;
        // Linux `first_sackt`: the send time of the first never-resent packet this ACK newly SACKs.
        let mut first_sackt: Option<Time> = None;
        // Linux `last_ackt` and `last_sackt`: the send time of the newest packet never resent that this
        // ACK newly acknowledges cumulatively, and (highest seq, send time) of the one it newly SACKs.
        let mut last_ackt: Option<Time> = None;
        let mut last_sackt: Option<(u64, Time)> = None;
        let dup = !advanced && self.snd_una < self.snd_nxt;
        let dupacks_before = self.dupacks;
        let dsack = self.dsack_block(ack);
        // Linux's icsk_pending before this ACK: REO_TIMEOUT or LOSS_PROBE rather than RETRANS.
        let reo_or_probe_pending = self.reo_deadline.is_some() || self.tlp_deadline.is_some();
        if advanced {
            while self.snd_una < cum {
                let s = self.ring.pop_front().expect("outstanding");
                retx_acked |= s.retransmitted;
                // Linux counts only packets up to high_seq (not the new data F-RTO let out).
                orig_acked |=
                    s.state != State::Sacked && !s.retransmitted && self.snd_una < self.high_seq;
                match s.state {
                    State::Outstanding => {
                        self.in_flight -= 1;
                        newly += 1;
                    }
                    State::Lost => {
                        // Arrived after all (or its retransmission did): no longer waiting.
                        self.lost_waiting -= 1;
                        newly += 1;
                    }
                    State::Sacked => self.sacked_out -= 1,
                }
                if s.state != State::Sacked {
                    if !s.retransmitted {
                        last_ackt = Some(s.sent);
                    }
                    if self.packet_acks {
                        self.packet_acked(now, self.snd_una, &s, ack);
                    }
                    self.rate.on_delivered(now, &s.rate(), s.sent, self.snd_una);
                    if self.rack_enabled {
                        self.rack
                            .advance(now, self.snd_una, s.sent, s.retransmitted);
                        reordered |= !s.retransmitted
                            && prior_highest_sacked.is_some_and(|h| self.snd_una < h);
                    }
                }
                self.snd_una += 1;
            }
            self.dupacks = 0;
            self.backoff = 0;
            if self.rto_point.is_some_and(|p| self.snd_una > p) {
                self.rto_point = Packed::NONE;
            }
        } else if cum == self.snd_una
            && self.snd_una < self.snd_nxt
            && ack.sack.iter().all(|b| b.0 >= b.1 || b.1 <= self.snd_una)
        {
            // RFC 5681 §2 (e): an ACK that changes the window is not a duplicate.
            if !rwnd_changed {
                self.dupacks += 1;
            }
        } else if cum == self.snd_una && self.snd_una < self.snd_nxt {
            // A duplicate ACK carrying SACK information (RFC 6675 §2: counts as a dupack).
            self.dupacks += 1;
        }
        // Without SACK blocks (every ACK of an in-order flow) there is nothing to walk: only the
        // runs the last ACK covered are forgotten.
        let any_sack = ack.sack.iter().any(|b| b.0 < b.1);
        let mut covered = [(0u64, 0u64); 3];
        for (i, &(lo, hi)) in ack.sack.iter().enumerate().filter(|_| any_sack) {
            if i == 0 && dsack {
                // RFC 2883: the first block reports a duplicate, not new data.
                continue;
            }
            let (lo, hi) = (lo.max(self.snd_una), hi.min(self.snd_nxt));
            let mut run = lo;
            while run < hi {
                // A run the last ACK already SACKed holds nothing new: skip it instead of walking it.
                if let Some(&(_, b)) = self.sacked_runs.iter().find(|r| r.0 <= run && run < r.1) {
                    run = b;
                    continue;
                }
                let end = self
                    .sacked_runs
                    .iter()
                    .filter(|r| r.0 > run)
                    .fold(hi, |e, r| e.min(r.0));
                let (o, f, r, n, t, l) = self.sack_run(now, run, end, ack);
                first_sackt = earliest(first_sackt, t);
                if l.is_some_and(|(seq, _)| last_sackt.is_none_or(|(h, _)| seq > h)) {
                    last_sackt = l;
                }
                orig_acked |= o;
                sacked |= f;
                reordered |= r;
                newly += n;
                run = end;
            }
            if hi > lo {
                covered[i] = (lo, hi);
                self.highest_sacked =
                    Some(self.highest_sacked.map_or(hi - 1, |h| h.max(hi - 1))).into();
            }
        }
        self.sacked_runs = covered;
        // RFC 7323 §4 RTTM rule: a TSecr updates the RTT estimate only when SND.UNA advances; Linux
        // (tcp_ack_update_rtt) also samples an ACK that newly SACKs, never one that delivers nothing.
        let sample = match self.rtt.params().estimator {
            RtoEstimatorKind::Rfc6298 => advanced,
            RtoEstimatorKind::Linux => newly > 0,
        };
        if sample {
            // Linux ends its RTTVAR round on the SND.UNA this ACK leaves.
            self.rtt.on_sample(rtt, self.snd_una, self.snd_nxt);
        }
        // tcp_ack_update_rtt -> tcp_update_rtt_min: only an ACK that delivers something is a sample, and
        // it comes after tcp_rack_advance has judged this ACK's packets against the previous minimum.
        if self.rack_enabled && (advanced || newly > 0) {
            self.rack.on_rtt_sample(now, rtt);
        }
        // RFC 6582 §3.2 step 5 (Impatient, as ns-3.37): in recovery only the first partial ACK restarts.
        let partial = self.recovery_point.is_some_and(|rp| self.snd_una <= rp);
        let held = self.rtt.params().impatient && partial && self.partial_acked;
        // tcp_clean_rtx_queue: with nothing cumulatively ACKed, a SACK RTT above the head's age (an
        // original sent before the head's latest transmission newly SACKed) sets the timer as an ACK
        // of new data does, so a resent head queued behind those originals is not timed out.
        let sack_restart = !advanced
            && self.rtt.params().sack_restarts
            && first_sackt.is_some_and(|t| self.ring.front().is_some_and(|h| t < h.sent));
        if (advanced && !held) || sack_restart {
            // RFC 6298 §5.2-5.3: stop the timer when all is ACKed, else restart it (with this ACK's sample).
            self.rto_deadline = (self.snd_una < self.snd_nxt)
                .then(|| now + self.rto())
                .into();
        }
        if advanced && partial {
            self.partial_acked = true;
        }
        if reordered {
            self.rack.reord_seen += 1;
        }
        // Linux tcp_dsack_seen: a DSACK widens the reordering window only once reordering was seen,
        // and not when it reports the tail loss probe's own duplicate (FLAG_DSACK_TLP).
        let tlp_dsack = self
            .tlp_high_seq
            .is_some_and(|h| ack.sack[0].0 < h && ack.sack[0].1 >= h);
        if dsack && self.rack_enabled && self.rack.reord_seen > 0 && !tlp_dsack {
            self.rack.on_dsack();
        }
        self.acked += newly as u64;
        // RFC 3042: the first and second duplicate ACKs outside recovery may each release a packet;
        // with SACK a duplicate ACK is one that SACKs new data (RFC 6675 §2, §5), not the ACK of a
        // duplicate segment (those would feed false fast retransmits after a go-back-N).
        self.lt_credit = self.lt_enabled
            && sacked
            && self.dupacks > dupacks_before
            && self.dupacks <= 2
            && self.recovery_point.is_none()
            && self.rto_point.is_none();
        // A12: the round's first packet is acknowledged, so the next packet sent starts a round (a
        // packet above SND.UNA is SACKed only if some are: its slot is read only then).
        if self.round_first.is_some_and(|f| {
            f < self.snd_una || (self.sacked_out > 0 && self.seg(f).state == State::Sacked)
        }) {
            self.round_first = Packed::NONE;
        }
        if in_loss && self.frto {
            self.frto_step(now, advanced, orig_acked, sacked || dup);
        }
        if self.tlp_high_seq.is_some() {
            self.process_tlp_ack(now, ack, advanced, sacked, dsack);
        }
        let reo_armed = self.detect_losses(now, advanced);
        // RFC 6582 §3.2 step 6: a full ACK ends recovery.
        if self.recovery_point.is_some_and(|rp| self.snd_una > rp) {
            self.recovery_point = Packed::NONE;
            self.prr = None;
            if self.rack_enabled {
                self.rack.on_recovery_exit();
            }
            self.cc.on_recovery_exit(now);
        }
        self.finish_transfer(now);
        // RACK's reordering window reads the sample too (RFC 8985 §6.2 step 4).
        let rate = if self.rate_samples {
            self.rate.generate(now, rtt)
        } else {
            self.rate.skip();
            None
        };
        if self.rack_enabled {
            if let Some(r) = &rate {
                self.rack
                    .update_reo_wnd(r.prior_delivered, r.delivered_total);
            }
        }
        let ev = AckEvent {
            seq: ack.seq,
            bytes: self.packet_bytes,
            send_time: ack.sent,
            recv_time: ack.recv,
            rtt,
            // tcp_clean_rtx_queue: ca_rtt_us from last_sackt if this ACK SACKed anything never resent,
            // else from last_ackt unless a resent packet was cumulatively ACKed (FLAG_RETRANS_DATA_ACKED);
            // tcp_ack_update_rtt falls back to the timestamp echo.
            ca_rtt: last_sackt
                .map(|(_, t)| t)
                .or(last_ackt.filter(|_| !retx_acked))
                .map_or(rtt, |t| now.since(t)),
            in_flight: self.in_flight,
            last_sent_seq: self.snd_nxt.saturating_sub(1),
            tag: echoed_tag,
            newly_acked: newly,
            snd_una_advanced: advanced,
            in_recovery: self.recovery_point.is_some(),
            rate,
            host_bytes: ack.host_bytes,
        };
        self.cc.on_ack(now, &ev);
        if self.recovery_point.is_some() {
            let (ssthresh, pipe, lost) = (self.cc.cwnd(), self.in_flight, self.lost - lost_before);
            if let Some(p) = &mut self.prr {
                // Linux tcp_cong_control -> tcp_cwnd_reduction, after the controller's ACK handler.
                p.on_ack(ssthresh, pipe, newly, advanced, lost as u32, retx_acked);
            }
        }
        // Linux has one timer: RACK's reordering timer, or leaving the Open state, replaces the probe.
        if self.reo_deadline.is_some() || self.sacked_out > 0 || self.lost_waiting > 0 {
            self.tlp_deadline = Packed::NONE;
        }
        // Linux tcp_set_xmit_timer on an ACK of new data (or of a SACK older than the head): the probe
        // timer unless RACK armed its own.
        if self.rtt.params().one_timer {
            // tcp_input.c tcp_ack: FLAG_SET_XMIT_TIMER stays unless RACK armed its timer.
            if (advanced || sack_restart) && !reo_armed {
                self.reo_deadline = Packed::NONE;
                self.schedule_tlp(now, true);
                // tcp_rearm_rto, REO_TIMEOUT or LOSS_PROBE pending: RTO after the head was sent.
                if self.tlp_deadline.is_none() && reo_or_probe_pending {
                    self.rto_deadline = self.rto_from_head(now);
                }
            }
        } else if advanced && self.tlp_enabled && self.reo_deadline.is_none() {
            // Without TLP the probe timer is never armed: no call to disarm it.
            self.schedule_tlp(now, true);
        }
        self.try_send(now, out)
    }

    /// Packets `lo..hi` are SACKed by this ACK: the newly SACKed ones leave the pipe and feed the rate
    /// sample and RACK. Returns F-RTO's evidence (an original (S)ACKed, something newly SACKed), the
    /// reordering seen, how many packets were newly delivered, the earliest send time of a newly
    /// SACKed packet never resent, and (seq, send time) of the highest one.
    fn sack_run(&mut self, now: Time, lo: u64, hi: u64, ack: &Ack) -> SackRun {
        let (mut orig_acked, mut sacked, mut reordered, mut newly) = (false, false, false, 0u32);
        let (mut first_sackt, mut last_sackt) = (None, None);
        for seq in lo..hi {
            let s = self.seg(seq);
            let before = *s;
            let fresh = before.state != State::Sacked;
            orig_acked |= fresh && !before.retransmitted && seq < self.high_seq;
            sacked |= fresh;
            let s = self.seg(seq);
            match s.state {
                State::Outstanding => {
                    s.state = State::Sacked;
                    self.in_flight -= 1;
                    newly += 1;
                }
                State::Lost => {
                    s.state = State::Sacked;
                    self.lost_waiting -= 1;
                    newly += 1;
                }
                State::Sacked => {}
            }
            if fresh {
                self.sacked_out += 1;
                if !before.retransmitted {
                    first_sackt = earliest(first_sackt, Some(before.sent));
                    last_sackt = Some((seq, before.sent));
                }
                if self.packet_acks {
                    self.packet_acked(now, seq, &before, ack);
                }
                self.rate
                    .on_delivered(now, &before.rate(), before.sent, seq);
                if self.rack_enabled {
                    self.rack
                        .advance(now, seq, before.sent, before.retransmitted);
                    reordered |=
                        !before.retransmitted && self.highest_sacked.is_some_and(|h| seq < h);
                }
            }
        }
        (
            orig_acked,
            sacked,
            reordered,
            newly,
            first_sackt,
            last_sackt,
        )
    }

    /// Hand the controller packet `seq`, newly delivered by `ack` (by one of its SACK blocks if `sacked`),
    /// with its own tag; its arrival time is known only if `ack` echoes this transmission of it.
    fn packet_acked(&mut self, now: Time, seq: u64, s: &Seg, ack: &Ack) {
        // RFC 7323 §4.3: the echoed send time names the transmission; an earlier one's arrival (the
        // original of a packet resent since) says nothing of when the retransmission came.
        let echoed = seq == ack.seq && ack.sent == s.sent;
        let ev = PacketAcked {
            seq,
            bytes: self.packet_bytes,
            send_time: s.sent,
            tag: s.tag,
            recv_time: echoed.then_some(ack.recv),
            host_bytes: ack.host_bytes.filter(|_| echoed),
        };
        self.cc.on_packet_acked(now, &ev);
    }

    /// RFC 2883 §4: the first SACK block reports a duplicate when it lies below the cumulative ACK or
    /// inside the second block.
    fn dsack_block(&self, ack: &Ack) -> bool {
        let (lo, hi) = ack.sack[0];
        if lo >= hi {
            return false;
        }
        let (lo2, hi2) = ack.sack[1];
        hi <= ack.ack_cum || (lo2 < hi2 && lo >= lo2 && hi <= hi2)
    }

    /// Linux `tcp_schedule_loss_probe` (RFC 8985 §7.2): arm the probe timer in the Open state with
    /// packets outstanding; `advancing`: called on an ACK of new data (the RTO restarts from now).
    fn schedule_tlp(&mut self, now: Time, advancing: bool) {
        debug_assert!(self.tlp_enabled || self.tlp_deadline.is_none());
        self.tlp_deadline = Packed::NONE;
        // Only in the Open state: nothing SACKed or waiting to be resent (Linux TCP_CA_Open/CWR).
        if !self.tlp_enabled
            || self.snd_una >= self.snd_nxt
            || self.recovery_point.is_some()
            || self.rto_point.is_some()
            || self.sacked_out > 0
            || self.lost_waiting > 0
        {
            return;
        }
        let rto_left = if advancing {
            self.rto()
        } else {
            self.rto_deadline.map_or(Dur::ZERO, |d| d - now.min(d))
        };
        let pto = probe_timeout(
            self.rtt.srtt(),
            self.snd_nxt - self.snd_una,
            self.rtt.params().initial,
            rto_left,
        );
        self.tlp_deadline = Some(now + pto).into();
    }

    /// Linux `tcp_send_loss_probe` (RFC 8985 §7.3): new data if the peer's window allows it
    /// (whatever cwnd says), else the highest packet sent again; then the RTO restarts from now.
    fn send_loss_probe(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.tlp_deadline = Packed::NONE;
        // At most one probe outstanding.
        if self.tlp_high_seq.is_some() || self.snd_una >= self.snd_nxt {
            return self.probe_not_sent(now);
        }
        if self.has_new_data() && self.window_open() && self.sndbuf_open() {
            let seq = self.snd_nxt;
            self.snd_nxt += 1;
            self.transmit(now, seq, false, out);
            self.tlp_retrans = false;
        } else {
            let seq = self.snd_nxt - 1;
            if self.seg(seq).state != State::Outstanding {
                return self.probe_not_sent(now);
            }
            // The packet stays counted once in the pipe; it is resent with a new send time.
            let old = *self.seg(seq);
            if self.packet_acks {
                self.tlp_superseded = Some((seq, old.tag, old.sent));
            }
            self.transmit(now, seq, true, out);
            self.in_flight -= 1;
            self.tlp_retrans = true;
        }
        self.tlp_high_seq = Some(self.snd_nxt).into();
        self.tlp_probes += 1;
        self.rto_deadline = Some(now + self.rto()).into();
    }

    /// Linux net/ipv4/tcp_output.c `tcp_send_loss_probe`, `rearm_timer`: with one timer, the
    /// probe's gives way to the RTO after the head was sent (`tcp_rearm_rto`, LOSS_PROBE pending).
    fn probe_not_sent(&mut self, now: Time) {
        if self.rtt.params().one_timer {
            self.rto_deadline = self.rto_from_head(now);
        }
    }

    /// Linux `tcp_process_tlp_ack` (RFC 8985 §7.4): an ACK past the probe shows whether it repaired
    /// a loss; if it did, the window is reduced once (the CWR state: at once, no recovery episode).
    fn process_tlp_ack(&mut self, now: Time, ack: &Ack, advanced: bool, sacked: bool, dsack: bool) {
        let Some(high) = self.tlp_high_seq.get() else {
            return;
        };
        let cum = ack.ack_cum;
        if cum < high {
            return;
        }
        let probe_dsacked = dsack && ack.sack[0].0 < high && ack.sack[0].1 >= high;
        if !self.tlp_retrans || probe_dsacked {
            // New data was the probe, or the DSACK shows both original and probe arrived.
            self.tlp_high_seq = Packed::NONE;
            self.resolve_superseded(now, true);
        } else if cum > high {
            self.tlp_high_seq = Packed::NONE;
            self.resolve_superseded(now, false);
            self.tlp_recoveries += 1;
            if self.recovery_point.is_none() {
                let ev = CongestionEvent {
                    in_flight: self.in_flight,
                    send_time: ack.sent,
                    cause: LossCause::Reordering,
                };
                self.cc.on_congestion_event(now, &ev);
                self.cc.on_recovery_exit(now);
            }
        } else if !advanced && !sacked {
            // A pure duplicate ACK: the original and the probe both arrived.
            self.tlp_high_seq = Packed::NONE;
            self.resolve_superseded(now, true);
        }
    }

    /// The transmission a probe resent over arrived (`delivered`) or was lost (the probe repaired it, or
    /// the probe episode ended in recovery or a timeout first): its tag goes back to the controller as a
    /// packet acked or lost, so each transmission's tag comes back once.
    fn resolve_superseded(&mut self, now: Time, delivered: bool) {
        let Some((seq, tag, sent)) = self.tlp_superseded.take() else {
            return;
        };
        if delivered {
            let ev = PacketAcked {
                seq,
                bytes: self.packet_bytes,
                send_time: sent,
                tag,
                recv_time: None,
                host_bytes: None,
            };
            self.cc.on_packet_acked(now, &ev);
        } else {
            let ev = LossEvent {
                seq,
                bytes: self.packet_bytes,
                send_time: sent,
                in_flight: self.in_flight,
                cause: LossCause::Reordering,
                tag,
            };
            self.cc.on_loss(now, &ev);
        }
    }

    /// RFC 5682 §3.1 (SACK-enhanced F-RTO) on an ACK after a timeout, as Linux's `tcp_process_loss`.
    fn frto_step(&mut self, now: Time, advanced: bool, orig_acked: bool, dup_or_sacked: bool) {
        if orig_acked {
            // Step 3.b: a packet never retransmitted was (S)ACKed, so not everything was lost.
            return self.undo_rto(now);
        }
        if self.snd_nxt > self.high_seq {
            // Step 3.a: after new data went out, a duplicate ACK or a SACK means the loss was real.
            if dup_or_sacked {
                self.frto = false;
            }
        } else if advanced && self.snd_una < self.high_seq {
            // Step 2.b: send new data instead of retransmissions, if there is any.
            self.high_seq = self.snd_nxt;
            if self.has_new_data() && self.window_open() && self.sndbuf_open() {
                self.frto_new_data = true;
            } else {
                self.frto = false;
            }
        }
    }

    /// Linux `tcp_try_undo_loss` + `tcp_undo_cwnd_reduction(sk, true)`: the timeout was spurious, so
    /// the packets it declared lost count in flight again and the controller restores its window.
    fn undo_rto(&mut self, now: Time) {
        for s in self.ring.iter_mut().filter(|s| s.state == State::Lost) {
            s.state = State::Outstanding;
            self.in_flight += 1;
        }
        self.lost_waiting = 0;
        // Packets really lost before the timeout are found again by the SACK rule (RFC 6675 IsLost),
        // as Linux re-marks them from its scoreboard after the undo.
        self.sack_scan = self.snd_una;
        self.rack_lo = self.snd_una;
        self.rto_point = Packed::NONE;
        self.frto = false;
        self.frto_new_data = false;
        self.backoff = 0;
        self.spurious_rtos += 1;
        self.cc.on_undo(now);
    }

    /// Marks what the ACK shows lost; true if RACK armed its reordering timer.
    fn detect_losses(&mut self, now: Time, advanced: bool) -> bool {
        if self.snd_una >= self.snd_nxt {
            self.reo_deadline = Packed::NONE;
            return false;
        }
        if self.rack_enabled {
            // Linux tcp_identify_packet_loss with RACK: only RACK marks packets lost on an ACK.
            return self.rack.take_advanced() && self.rack_detect_loss(now);
        }
        // RFC 5681 §3.2: the third duplicate ACK; RFC 6582 §3.2 step 5: a partial ACK in recovery.
        let partial = advanced && self.recovery_point.is_some_and(|rp| self.snd_una <= rp);
        if self.dupacks >= 3 || partial {
            let una = self.snd_una;
            let s = *self.seg(una);
            if s.state == State::Outstanding && !s.retransmitted {
                self.mark_lost(now, una, LossCause::Reordering);
            }
        }
        // RFC 6675 IsLost: three packets SACKed above an outstanding one.
        // Once SND.UNA has passed the highest SACKed packet (the rest of a run after recovery) there is
        // nothing to scan, and a scan start below SND.UNA is read as SND.UNA anyway.
        if let Some(h) = self.highest_sacked.get().filter(|&h| h > self.snd_una + 2) {
            let limit = h.saturating_sub(2).min(self.snd_nxt);
            let mut seq = self.sack_scan.max(self.snd_una);
            while seq < limit {
                let s = *self.seg(seq);
                if s.state == State::Outstanding && !s.retransmitted {
                    self.mark_lost(now, seq, LossCause::Reordering);
                }
                seq += 1;
            }
            self.sack_scan = self.sack_scan.max(limit);
        }
        false
    }

    /// RFC 8985 §6.2 step 5, Linux `tcp_rack_detect_loss`: every packet sent before RACK.xmit_ts and
    /// not delivered within RACK.rtt + reo_wnd of its sending is lost; the reordering timer is armed
    /// for the latest of the rest (Linux `tcp_rack_mark_lost`: + TCP_TIMEOUT_MIN, at most one RTO);
    /// returns whether it armed the timer.
    fn rack_detect_loss(&mut self, now: Time) -> bool {
        let srtt = self.rtt.srtt().unwrap_or(Dur::ZERO);
        let in_recovery = self.recovery_point.is_some() || self.rto_point.is_some();
        let reo_wnd = self.rack.reo_wnd(in_recovery, self.sacked_out, srtt);
        let mut wait: i64 = 0;
        let mut seq = self.rack_lo.max(self.snd_una);
        let mut settled = true;
        while seq < self.snd_nxt {
            let s = *self.seg(seq);
            if s.state != State::Outstanding {
                // SACKed, or lost and not yet resent (Linux skips those): nothing to decide.
                if settled {
                    self.rack_lo = seq + 1;
                }
                seq += 1;
                continue;
            }
            settled = false;
            if !self.rack.is_before_newest(s.sent, seq) {
                if !s.retransmitted {
                    // Originals go in sequence order, so every later packet was sent later too.
                    break;
                }
                seq += 1;
                continue;
            }
            let remaining = self.rack.remaining(now, s.sent, reo_wnd);
            if remaining <= 0 {
                self.mark_lost(now, seq, LossCause::Reordering);
            } else {
                wait = wait.max(remaining);
            }
            seq += 1;
        }
        if wait > 0 {
            self.reo_deadline = Some(now + (Dur(wait as u64) + TIMEOUT_MIN).min(self.rto())).into();
        } else if !self.rtt.params().one_timer {
            self.reo_deadline = Packed::NONE;
        }
        // tcp_recovery.c tcp_rack_mark_lost arms only when something waits: a pending timer stays.
        wait > 0
    }

    /// Linux net/ipv4/tcp_input.c `tcp_rearm_rto` with REO_TIMEOUT or LOSS_PROBE pending
    /// (include/net/tcp.h `tcp_rto_delta_us`): the RTO after the head's latest transmission, at
    /// least 1 us away; none with nothing outstanding.
    fn rto_from_head(&self, now: Time) -> Packed<Time> {
        let head = self.ring.front().filter(|_| self.snd_una < self.snd_nxt);
        head.map(|h| (h.sent + self.rto()).max(now + Dur::from_us(1)))
            .into()
    }

    /// Linux `tcp_rack_reo_timeout`: the reordering window has passed; mark what is due and resend.
    fn on_reo_timeout(&mut self, now: Time) {
        self.reo_deadline = Packed::NONE;
        if self.snd_una >= self.snd_nxt {
            return;
        }
        let (lost_before, was_recovering) = (self.lost, self.recovery_point.is_some());
        self.rack_detect_loss(now);
        let lost = self.lost - lost_before;
        if lost > 0 {
            self.rack_reo_timeouts += 1;
            if !was_recovering && self.recovery_point.is_some() {
                // tcp_rack_reo_timeout: entering recovery runs tcp_cwnd_reduction(sk, 1, lost, 0).
                let (ssthresh, pipe) = (self.cc.cwnd(), self.in_flight);
                if let Some(p) = &mut self.prr {
                    p.on_ack(ssthresh, pipe, 1, false, lost as u32, false);
                }
            }
        }
    }

    fn finish_transfer(&mut self, now: Time) {
        if let Some(p) = &mut self.plan {
            p.on_resolved(now, self.snd_una);
        }
    }

    /// RFC 6298 §5.4-5.7 and RFC 5681 §3.1: the retransmission timer expired.
    pub fn on_timeout(&mut self, now: Time, out: &mut Vec<Packet>) -> Option<Time> {
        if self.persist_deadline.is_some_and(|t| t <= now) {
            self.persist_deadline = Packed::NONE;
            if self.snd_una == self.snd_nxt && !self.window_open() {
                self.send_probe(now, out);
                self.persist_backoff += 1;
            }
            return self.try_send(now, out);
        }
        if self.reo_deadline.is_some_and(|t| t <= now) {
            self.on_reo_timeout(now);
            let wake = self.try_send(now, out);
            if self.rtt.params().one_timer {
                // tcp_recovery.c tcp_rack_reo_timeout: REO_TIMEOUT held it, tcp_rearm_rto follows.
                self.reo_deadline = Packed::NONE;
                self.rto_deadline = self.rto_from_head(now);
            }
            return wake;
        }
        // Linux arms the probe instead of the RTO (one timer), so a probe due with the RTO goes first.
        if self
            .tlp_deadline
            .is_some_and(|t| t <= now && self.rto_deadline.is_none_or(|r| t <= r))
        {
            self.send_loss_probe(now, out);
            return self.try_send(now, out);
        }
        // With one timer a pending reordering timer holds it: no RTO runs (Linux icsk_pending).
        let rto_held = self.rtt.params().one_timer && self.reo_deadline.is_some();
        if rto_held || self.rto_deadline.is_none_or(|t| t > now) {
            return self.try_send(now, out);
        }
        self.rtos += 1;
        self.tlp_deadline = Packed::NONE;
        self.tlp_high_seq = Packed::NONE;
        self.resolve_superseded(now, false);
        self.reo_deadline = Packed::NONE;
        self.prr = None;
        let reo_zero = Dur::ZERO;
        // Every outstanding packet is presumed lost (RFC 6675 §5.1); they leave the pipe.
        for i in 0..self.ring.len() {
            if self.ring[i].state == State::Outstanding {
                let seq = self.snd_una + i as u64;
                let s = self.ring[i];
                // Linux tcp_timeout_mark_lost with RACK: after the head, recently sent packets
                // (RACK timeout not yet passed) are not marked lost yet.
                if self.rack_enabled && i > 0 && self.rack.remaining(now, s.sent, reo_zero) > 0 {
                    continue;
                }
                self.ring[i].state = State::Lost;
                self.in_flight -= 1;
                self.lost += 1;
                self.lost_waiting += 1;
                let ev = LossEvent {
                    seq,
                    bytes: self.packet_bytes,
                    send_time: s.sent,
                    in_flight: self.in_flight,
                    cause: LossCause::Timeout,
                    tag: s.tag,
                };
                self.cc.on_loss(now, &ev);
            }
        }
        self.lost_scan = self.snd_una;
        self.rack_lo = self.snd_una;
        // Linux tcp_enter_loss: F-RTO unless this first timeout came during fast recovery.
        self.frto = self.frto_enabled && (self.recovery_point.is_none() || self.backoff > 0);
        self.frto_new_data = false;
        self.high_seq = self.snd_nxt;
        self.recovery_point = Packed::NONE;
        self.rto_point = Some(self.snd_nxt.saturating_sub(1)).into();
        self.dupacks = 0;
        if self.backoff > 0 {
            self.cc.on_rto_repeated(now);
        } else {
            self.cc.on_rto(now);
        }
        self.backoff += 1;
        // Linux tcp_enter_loss sets cwnd = in flight + 1: with RACK's recent packets left in flight,
        // the first lost packet still goes out at once.
        self.fast_retransmit = self.lost_waiting > 0 && self.in_flight > 0;
        self.rto_deadline = (self.snd_una < self.snd_nxt)
            .then(|| now + self.rto())
            .into();
        self.try_send(now, out)
    }

    pub fn timeout_deadline(&self) -> Option<Time> {
        // One timer (`one_timer`): while the reordering timer runs, the RTO does not.
        let rto = if self.reo_deadline.is_some() && self.rtt.params().one_timer {
            Packed::NONE
        } else {
            self.rto_deadline
        };
        rto.earliest(self.reo_deadline)
            .earliest(self.tlp_deadline)
            .get()
            .or(self.persist_deadline.get())
            .or_else(|| self.plan.as_ref().and_then(|p| p.wake()))
    }

    pub fn goodput_packets(&self) -> u64 {
        self.snd_una
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PKT: u32 = 1500;
    /// Cache lines of per-flow sender state an ACK may touch (the ring and controller apart).
    const HOT_LINES: usize = 10;

    /// A bulk sender with a 100-packet fixed window, so only flow control holds it back.
    fn sender(rbuf_packets: Option<u64>, sndbuf_packets: Option<u64>) -> ReliableSender {
        let mut params = toml::Table::new();
        params.insert("window".into(), toml::Value::Integer(100));
        let cc = ccscope_cc::build("fixed", &params).expect("fixed");
        let s = ReliableSender::new(0, cc, PKT, None, RtoParams::default());
        s.with_buffers(
            rbuf_packets.map(|p| p * PKT as u64),
            sndbuf_packets.map(|p| p * PKT as u64),
        )
    }

    /// A bulk sender with a fixed window of `w` packets and unlimited buffers.
    fn windowed(w: i64) -> ReliableSender {
        let mut params = toml::Table::new();
        params.insert("window".into(), toml::Value::Integer(w));
        ReliableSender::new(
            0,
            ccscope_cc::build("fixed", &params).expect("fixed"),
            PKT,
            None,
            RtoParams::default(),
        )
    }

    #[test]
    fn what_every_ack_touches_sits_in_the_first_cache_lines_before_the_cold_fields() {
        use std::mem::{offset_of, size_of};
        // The first cold field ends the hot prefix; counters, PRR and RACK come after it.
        let hot = offset_of!(ReliableSender, retransmitted);
        eprintln!(
            "ReliableSender {} bytes, hot prefix {hot}, Seg {}",
            size_of::<ReliableSender>(),
            size_of::<Seg>()
        );
        assert!(hot <= HOT_LINES * 64, "hot prefix {hot} bytes");
        for cold in [
            offset_of!(ReliableSender, probes),
            offset_of!(ReliableSender, prr),
            offset_of!(ReliableSender, rack),
        ] {
            assert!(cold >= hot);
        }
        // The optional sequence numbers and deadlines take 8 bytes each, not an Option's 16.
        assert_eq!(size_of::<Packed<Time>>(), 8);
        assert_eq!(size_of::<Packed<u64>>(), 8);
    }

    /// (seq, round) of each packet, with `Packet::RETX` kept in the round.
    fn rounds(out: &[Packet]) -> Vec<(u64, u32)> {
        out.iter().map(|p| (p.seq, p.round)).collect()
    }

    fn ack(cum: u64, rwnd_packets: u64, sack: &[(u64, u64)]) -> Ack {
        let mut a = Ack::of(
            &Packet::data(0, cum.saturating_sub(1), 1500, Time::ZERO),
            76,
            Time::ZERO,
        );
        a.ack_cum = cum;
        a.rwnd = (rwnd_packets * PKT as u64) as u32;
        for (i, b) in sack.iter().enumerate() {
            a.sack[i] = *b;
        }
        a
    }

    fn seqs(out: &[Packet]) -> Vec<u64> {
        out.iter().map(|p| p.seq).collect()
    }

    fn ms(n: u64) -> Time {
        Time(n * 1_000_000)
    }

    /// A NewReno sender in slow start with RTO 1 s (no RTT sample yet); F-RTO on or off.
    fn newreno(frto: bool) -> ReliableSender {
        let cc = ccscope_cc::build("newreno", &toml::Table::new()).expect("newreno");
        let rto = RtoParams {
            frto,
            ..RtoParams::default()
        };
        ReliableSender::new(0, cc, PKT, None, rto)
    }

    /// An ACK for `cum` (cumulative), unlimited window.
    fn cum_ack(cum: u64) -> Ack {
        let mut a = ack(cum, 0, &[]);
        a.rwnd = Ack::RWND_UNLIMITED;
        a
    }

    /// Ten packets out, then a timeout with none ACKed (a delay spike, not a loss).
    fn timed_out(frto: bool) -> (ReliableSender, Vec<Packet>) {
        let mut s = newreno(frto);
        let mut out = Vec::new();
        s.start(Time::ZERO);
        s.try_send(Time::ZERO, &mut out);
        assert_eq!(seqs(&out), (0..10).collect::<Vec<_>>());
        out.clear();
        s.on_timeout(ms(1000), &mut out);
        assert_eq!(
            seqs(&out),
            [0],
            "RFC 6298 §5.4: the earliest outstanding packet again"
        );
        assert_eq!(s.rtos, 1);
        out.clear();
        (s, out)
    }

    #[test]
    fn frto_sends_new_data_after_the_first_ack_and_undoes_a_spurious_timeout() {
        let (mut s, mut out) = timed_out(true);
        // The original of 0 arrives late: SND.UNA advances over a retransmitted packet (RFC 5682 step 2.b).
        s.on_ack(ms(1100), &cum_ack(1), &mut out);
        assert_eq!(
            seqs(&out),
            [10, 11],
            "new data, not retransmissions of 1 and 2"
        );
        assert_eq!(s.spurious_rtos, 0);
        out.clear();
        // Packet 1, never retransmitted, is acknowledged: the timeout was spurious (step 3.b).
        s.on_ack(ms(1101), &cum_ack(2), &mut out);
        assert_eq!(s.spurious_rtos, 1);
        // Linux tcp_undo_cwnd_reduction: 2..=9 count in flight again and the window is restored.
        assert!(s.cc.cwnd() >= 10, "cwnd {}", s.cc.cwnd());
        assert_eq!(
            s.in_flight(),
            s.cc.cwnd(),
            "8 + 2 in flight again, the rest new data"
        );
        assert!(
            out.iter().all(|p| p.seq >= 12),
            "nothing resent: {:?}",
            seqs(&out)
        );
        assert_eq!(s.retransmitted, 1);
    }

    #[test]
    fn without_frto_a_spurious_timeout_resends_the_window_in_slow_start() {
        let (mut s, mut out) = timed_out(false);
        s.on_ack(ms(1100), &cum_ack(1), &mut out);
        assert_eq!(
            seqs(&out),
            [1, 2],
            "go-back-N: the packets declared lost, again"
        );
        out.clear();
        s.on_ack(ms(1101), &cum_ack(2), &mut out);
        assert_eq!(seqs(&out), [3, 4]);
        assert_eq!(s.retransmitted, 5);
        assert_eq!(s.cc.cwnd(), 3);
    }

    #[test]
    fn frto_keeps_the_reduction_when_a_duplicate_ack_follows_the_new_data() {
        let (mut s, mut out) = timed_out(true);
        s.on_ack(ms(1100), &cum_ack(1), &mut out);
        assert_eq!(seqs(&out), [10, 11]);
        out.clear();
        // 1 really was lost: the new packet 10 arrives and is SACKed (step 3.a: loss was real).
        let mut a = ack(1, 0, &[(10, 11)]);
        a.rwnd = Ack::RWND_UNLIMITED;
        s.on_ack(ms(1101), &a, &mut out);
        assert_eq!(s.spurious_rtos, 0);
        assert!(!s.frto);
        assert!(
            out.iter().any(|p| p.seq == 1),
            "conventional recovery resends 1: {:?}",
            seqs(&out)
        );
    }

    #[test]
    fn new_data_stops_at_the_right_edge_of_the_receive_window() {
        let mut s = sender(Some(5), None);
        let mut out = Vec::new();
        s.start(Time::ZERO);
        s.try_send(Time::ZERO, &mut out);
        assert_eq!(seqs(&out), [0, 1, 2, 3, 4], "the buffer announced at setup");
        out.clear();
        s.on_ack(ms(40), &ack(1, 5, &[]), &mut out);
        assert_eq!(seqs(&out), [5], "edge = 1 + 5");
        out.clear();
        // The receiver holds two packets unread: edge 2 + 3 = 5, below snd_nxt = 6.
        s.on_ack(ms(41), &ack(2, 3, &[]), &mut out);
        assert!(out.is_empty());
        // A window of 1400 B is less than a packet: floor to zero packets.
        let mut a = ack(3, 0, &[]);
        a.rwnd = 1400;
        s.on_ack(ms(42), &a, &mut out);
        assert!(out.is_empty());
        assert_eq!(s.in_flight(), 3);
    }

    #[test]
    fn retransmissions_are_sent_whatever_the_receive_window() {
        let mut s = sender(Some(5), None);
        let mut out = Vec::new();
        s.start(Time::ZERO);
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        // 0 lost; 1..=3 arrive out of order and fill three packets of the buffer.
        for (i, hi) in [2u64, 3, 4].into_iter().enumerate() {
            s.on_ack(
                ms(40 + i as u64),
                &ack(0, 4 - i as u64, &[(1, hi)]),
                &mut out,
            );
        }
        assert_eq!(
            seqs(&out),
            [0],
            "RFC 6675 IsLost: resent though the window is closed"
        );
        assert_eq!(s.retransmitted, 1);
    }

    #[test]
    fn the_send_buffer_caps_unacknowledged_packets() {
        let mut s = sender(None, Some(3));
        let mut out = Vec::new();
        s.start(Time::ZERO);
        s.try_send(Time::ZERO, &mut out);
        assert_eq!(seqs(&out), [0, 1, 2]);
        out.clear();
        // SACKed data still occupies the send buffer until cumulatively acknowledged.
        let mut a = ack(0, 0, &[(1, 3)]);
        a.rwnd = Ack::RWND_UNLIMITED;
        s.on_ack(ms(40), &a, &mut out);
        assert!(out.is_empty());
        a.ack_cum = 1;
        s.on_ack(ms(41), &a, &mut out);
        assert_eq!(seqs(&out), [3]);
    }

    #[test]
    fn window_updates_and_changed_windows_are_not_duplicate_acks() {
        let mut s = sender(Some(10), None);
        let mut out = Vec::new();
        s.start(Time::ZERO);
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(ms(40), &ack(1, 1, &[]), &mut out);
        out.clear();
        // RFC 5681 §2 (e): the same cumulative ACK with a different window each time.
        for (i, w) in [2u64, 3, 4].into_iter().enumerate() {
            s.on_ack(ms(41 + i as u64), &ack(1, w, &[]), &mut out);
        }
        // Pure window updates with the same window.
        for i in 0..3 {
            let mut u = ack(1, 4, &[]);
            u.window_update = true;
            s.on_ack(ms(45 + i), &u, &mut out);
        }
        assert_eq!((s.lost, s.retransmitted), (0, 0));
        assert_eq!(seqs(&out), Vec::<u64>::new(), "edge 1 + 4 = 5 < snd_nxt 10");
    }

    #[test]
    fn a_closed_window_with_nothing_outstanding_is_probed_with_backoff_until_it_opens() {
        let mut s = sender(Some(2), None);
        let mut out = Vec::new();
        s.start(Time::ZERO);
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        s.on_ack(ms(40), &ack(2, 0, &[]), &mut out);
        assert!(out.is_empty());
        // RFC 1122 §4.2.2.17: the first probe after one RTO (srtt 40 ms: the 1 s minimum).
        let first = s.timeout_deadline().expect("persist timer armed");
        assert_eq!(first, ms(1040));
        s.on_timeout(first, &mut out);
        assert_eq!(
            seqs(&out),
            [1],
            "the probe repeats the last acknowledged packet"
        );
        assert_eq!((s.probes, s.in_flight(), s.rtos), (1, 0, 0));
        out.clear();
        // Still closed: the next probe waits twice as long from the first.
        s.on_ack(first + Dur::from_ms(40), &ack(2, 0, &[]), &mut out);
        assert_eq!(s.timeout_deadline(), Some(first + Dur::from_ms(2000)));
        // The window opens: new data goes and the persist timer stops (the RTO runs instead).
        s.on_ack(first + Dur::from_ms(50), &ack(2, 2, &[]), &mut out);
        assert_eq!(seqs(&out), [2, 3]);
        assert_eq!(
            s.timeout_deadline(),
            Some(first + Dur::from_ms(50) + s.rto())
        );
    }

    #[test]
    fn a_round_starts_when_the_first_packet_of_the_previous_one_is_acknowledged() {
        let mut s = windowed(4);
        let mut out = Vec::new();
        let unlimited = |mut a: Ack| {
            a.rwnd = Ack::RWND_UNLIMITED;
            a
        };
        s.start(Time::ZERO);
        s.try_send(Time::ZERO, &mut out);
        assert_eq!(
            rounds(&out),
            [(0, 1), (1, 1), (2, 1), (3, 1)],
            "rounds are numbered from 1"
        );
        out.clear();
        // Packet 0, round 1's first, is acknowledged: packet 4 opens round 2, packet 5 stays in it.
        s.on_ack(ms(40), &unlimited(ack(1, 0, &[])), &mut out);
        s.on_ack(ms(41), &unlimited(ack(2, 0, &[])), &mut out);
        assert_eq!(rounds(&out), [(4, 2), (5, 2)]);
        out.clear();
        // Packet 2 is lost. Packet 3's SACK acknowledges nothing of round 2; packet 4's SACK
        // acknowledges round 2's first packet, so the next packet sent opens round 3.
        s.on_ack(ms(42), &unlimited(ack(2, 0, &[(3, 4)])), &mut out);
        assert_eq!(rounds(&out), [(6, 2)]);
        out.clear();
        s.on_ack(ms(80), &unlimited(ack(2, 0, &[(3, 5)])), &mut out);
        assert_eq!(rounds(&out), [(7, 3)]);
        out.clear();
        // The third duplicate ACK: packet 2 is resent, tagged as a retransmission of the current
        // round; packet 5 left the pipe, so new packet 8 goes too.
        s.on_ack(ms(81), &unlimited(ack(2, 0, &[(3, 6)])), &mut out);
        assert_eq!(rounds(&out), [(2, 3 | Packet::RETX), (8, 3)]);
        assert_eq!(s.round(), 3);
    }

    /// A sender of controller `cc` (fixed: window `w`) with the loss-recovery switches `opts` sets.
    fn switched(cc: &str, w: i64, opts: impl FnOnce(&mut RtoParams)) -> ReliableSender {
        let mut params = toml::Table::new();
        params.insert(
            if cc == "fixed" {
                "window"
            } else {
                "initial_window"
            }
            .into(),
            toml::Value::Integer(w),
        );
        let mut rto = RtoParams::default();
        opts(&mut rto);
        let mut s =
            ReliableSender::new(0, ccscope_cc::build(cc, &params).expect(cc), PKT, None, rto);
        s.start(Time::ZERO);
        s
    }

    #[test]
    fn limited_transmit_counts_only_duplicate_acks_that_sack_new_data() {
        // Duplicate ACKs without new SACK information (a duplicate segment's, RFC 6675 §2): nothing
        // goes with or without RFC 3042, and the third is still fast retransmit's (RFC 5681 §3.2).
        for lt in [false, true] {
            let mut s = switched("fixed", 4, |r| r.limited_transmit = lt);
            let mut out = Vec::new();
            s.try_send(Time::ZERO, &mut out);
            assert_eq!(seqs(&out), [0, 1, 2, 3]);
            let mut got = Vec::new();
            for i in 0..3 {
                out.clear();
                s.on_ack(ms(40 + i), &unlimited(ack(0, 0, &[])), &mut out);
                got.push(seqs(&out));
            }
            assert_eq!(got, [vec![], vec![], vec![0]], "limited transmit {lt}");
        }
    }

    #[test]
    fn limited_transmit_sends_one_packet_past_the_pipe_while_flight_stays_within_cwnd_plus_two() {
        // Without RFC 3042 each SACKed duplicate ACK frees one slot of the pipe: 4, then 5.
        let mut s = switched("fixed", 4, |_| ());
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        s.on_ack(ms(40), &unlimited(ack(0, 0, &[(1, 2)])), &mut out);
        s.on_ack(ms(41), &unlimited(ack(0, 0, &[(1, 3)])), &mut out);
        assert_eq!(seqs(&out), [4, 5]);
        let mut s = switched("fixed", 4, |r| r.limited_transmit = true);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        // SACK of 1 frees a slot (4 goes, as without RFC 3042), and limited transmit adds 5: 6 = 4 + 2.
        s.on_ack(ms(40), &unlimited(ack(0, 0, &[(1, 2)])), &mut out);
        assert_eq!(seqs(&out), [4, 5]);
        out.clear();
        // SND.NXT - SND.UNA is 6 = cwnd + 2 already: nothing more on the second duplicate ACK.
        s.on_ack(ms(41), &unlimited(ack(0, 0, &[(1, 3)])), &mut out);
        assert_eq!(seqs(&out), Vec::<u64>::new());
    }

    /// NewReno in congestion avoidance with a 20-packet window loses packet 0 of 0..=19; ACKs SACK
    /// 1, 2, ... one at a time. Returns the packets sent on each ACK from the third duplicate ACK on.
    fn recovery_sends(prr: bool) -> (ReliableSender, Vec<Vec<u64>>) {
        let mut params = toml::Table::new();
        params.insert("initial_window".into(), toml::Value::Integer(20));
        params.insert("initial_ssthresh".into(), toml::Value::Integer(20));
        let rto = RtoParams {
            prr,
            ..RtoParams::default()
        };
        let cc = ccscope_cc::build("newreno", &params).expect("newreno");
        let mut s = ReliableSender::new(0, cc, PKT, None, rto);
        s.start(Time::ZERO);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        assert_eq!(out.len(), 20);
        let mut per_ack = Vec::new();
        for hi in 2..=20u64 {
            out.clear();
            s.on_ack(ms(38 + hi), &unlimited(ack(0, 0, &[(1, hi)])), &mut out);
            if hi >= 4 {
                per_ack.push(seqs(&out));
            }
        }
        (s, per_ack)
    }

    #[test]
    fn prr_spreads_the_reduction_over_the_round_where_rfc6675_pipe_waits_then_bursts() {
        // The first two duplicate ACKs each release one new packet (20, 21: the pipe fell by one).
        // The third marks 0 lost with 19 in flight: NewReno's ssthresh is 19 / 2 = 9 and RecoverFS
        // (Linux prior_cwnd) 20, so after d deliveries PRR has sent CEIL(9 d / 20) in all.
        let (s, prr) = recovery_sends(true);
        assert_eq!(s.cc.cwnd(), 9);
        assert_eq!(prr[0], [0], "the fast retransmit first");
        let mut total = 0u64;
        for (i, sent) in prr.iter().enumerate() {
            total += sent.len() as u64;
            let d = i as u64 + 1;
            assert_eq!(total, (9 * d).div_ceil(20), "after {d} deliveries: {prr:?}");
        }
        assert_eq!(prr[2], [22]);
        // RFC 6675's pipe alone: the retransmission, then silence until the pipe falls below
        // ssthresh (19 - 11 = 8), then one packet per ACK.
        let (_, plain) = recovery_sends(false);
        let counts: Vec<usize> = plain.iter().map(Vec::len).collect();
        assert_eq!(counts, [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]);
    }

    #[test]
    fn prr_brings_the_pipe_down_to_ssthresh_and_then_sends_what_is_delivered() {
        let (mut s, _) = recovery_sends(true);
        // In flight: the retransmission of 0, 20 and 21, and PRR's 7 new packets (22..=28).
        assert_eq!(s.in_flight(), 10);
        let mut out = Vec::new();
        // 20 and 21 are SACKed: the pipe (8) is below ssthresh (9), so the slow-start bound allows
        // MAX(prr_delivered - prr_out, 2) = 11 but at most ssthresh - pipe = 1.
        s.on_ack(
            ms(60),
            &unlimited(ack(0, 0, &[(20, 22), (1, 20)])),
            &mut out,
        );
        assert_eq!(seqs(&out), [29]);
        assert_eq!((s.in_flight(), s.cc.cwnd()), (9, 9));
        out.clear();
        // The retransmission is ACKed, passing the recovery point (21): NewReno's window rules again.
        s.on_ack(ms(80), &unlimited(ack(22, 0, &[])), &mut out);
        assert!(!s.in_recovery());
        assert_eq!(seqs(&out), [30]);
        assert_eq!(s.in_flight(), 9);
    }

    /// NewReno in congestion avoidance with a 20-packet window loses 0..=14 of 0..=19; 15..=19 are
    /// SACKed one ACK at a time. Returns the packets sent on each of those ACKs.
    fn burst_recovery(prr: bool) -> Vec<Vec<u64>> {
        let mut params = toml::Table::new();
        params.insert("initial_window".into(), toml::Value::Integer(20));
        params.insert("initial_ssthresh".into(), toml::Value::Integer(20));
        let rto = RtoParams {
            prr,
            ..RtoParams::default()
        };
        let cc = ccscope_cc::build("newreno", &params).expect("newreno");
        let mut s = ReliableSender::new(0, cc, PKT, None, rto);
        s.start(Time::ZERO);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        let mut per_ack = Vec::new();
        for hi in 16..=20u64 {
            out.clear();
            s.on_ack(ms(24 + hi), &unlimited(ack(0, 0, &[(15, hi)])), &mut out);
            per_ack.push(seqs(&out));
        }
        per_ack
    }

    #[test]
    fn prr_avoids_the_burst_rfc6675_sends_when_a_loss_burst_empties_the_pipe() {
        // The first SACK (15) marks 0..=12 lost (IsLost counts sequence space: 15 is three above
        // 12), each later one a packet more. ssthresh = 19 / 2 = 9 with 6 in flight: RFC 6675's
        // pipe fills the gap at once, then refills what each SACK and new loss frees.
        let plain = burst_recovery(false);
        assert_eq!(
            plain,
            [vec![0, 1, 2], vec![3, 4], vec![5, 6], vec![7], vec![8]]
        );
        // PRR's slow-start bound below ssthresh: MAX(prr_delivered - prr_out, DeliveredData), plus
        // one only on an ACK that advances SND.UNA: one retransmission per packet delivered.
        let prr = burst_recovery(true);
        assert_eq!(prr, [vec![0], vec![1], vec![2], vec![3], vec![4]]);
    }

    /// A fixed window of 10 with RACK (and TLP) on or off: packets 0..=9 leave at 0; at 40 ms 1..=9
    /// are SACKed (0 was lost).
    fn rack_lost_head(rack: bool) -> (ReliableSender, Vec<Packet>) {
        let mut s = switched("fixed", 10, |r| r.rack = rack);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        s.on_ack(ms(40), &unlimited(ack(0, 0, &[(1, 10)])), &mut out);
        (s, out)
    }

    #[test]
    fn rack_resends_a_lost_retransmission_when_a_later_packet_is_delivered_instead_of_waiting_for_the_rto(
    ) {
        let (mut s, mut out) = rack_lost_head(true);
        // Nine SACKed (>= DupThresh): reo_wnd = 0, and 0 has waited RACK.rtt (40 ms): lost.
        assert_eq!(seqs(&out), [0, 10, 11, 12, 13, 14, 15, 16, 17, 18]);
        out.clear();
        // The retransmission of 0 is lost too; 10, sent with it at 40 ms, is SACKed at 80 ms.
        s.on_ack(
            ms(80),
            &unlimited(ack(0, 0, &[(10, 11), (1, 10)])),
            &mut out,
        );
        assert_eq!(seqs(&out)[0], 0, "resent again at once: {:?}", seqs(&out));
        assert_eq!((s.retransmitted, s.rtos), (2, 0));
        // Without RACK the SACK rules never mark a retransmission lost: 0 waits for the RTO.
        let (mut s, mut out) = rack_lost_head(false);
        assert_eq!(seqs(&out)[0], 0);
        out.clear();
        s.on_ack(
            ms(80),
            &unlimited(ack(0, 0, &[(10, 11), (1, 10)])),
            &mut out,
        );
        assert!(!seqs(&out).contains(&0));
        assert_eq!(s.retransmitted, 1);
    }

    #[test]
    fn rack_waits_a_quarter_min_rtt_for_reordering_before_one_sack_declares_a_loss() {
        // Linux's estimator, as Linux runs RACK: the SACK gives the SRTT that bounds reo_wnd (an RFC 6298
        // estimator takes its first sample only when SND.UNA advances).
        let mut s = switched("fixed", 10, |r| {
            r.rack = true;
            r.estimator = RtoEstimatorKind::Linux;
        });
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        // One SACK (below DupThresh): reo_wnd = min_RTT / 4 = 10 ms, so 0 is due at 50 ms; the timer
        // adds Linux's TCP_TIMEOUT_MIN (2 ms).
        s.on_ack(ms(40), &unlimited(ack(0, 0, &[(1, 2)])), &mut out);
        assert_eq!(
            seqs(&out),
            [10],
            "the SACKed packet left the pipe, nothing declared lost"
        );
        assert_eq!(s.timeout_deadline(), Some(ms(52)));
        out.clear();
        s.on_timeout(ms(52), &mut out);
        assert_eq!(seqs(&out), [0]);
        assert_eq!((s.rack_reo_timeouts, s.lost, s.rtos), (1, 1, 0));
        assert!(s.in_recovery());
    }

    #[test]
    fn a_tail_loss_probe_resends_the_last_packet_two_srtt_after_the_last_ack_and_rack_repairs_the_tail(
    ) {
        let plan = crate::traffic::TransferPlan::fixed(vec![10], Dur::ZERO);
        let cc = {
            let mut p = toml::Table::new();
            p.insert("window".into(), toml::Value::Integer(10));
            ccscope_cc::build("fixed", &p).expect("fixed")
        };
        let rto = RtoParams {
            rack: true,
            tlp: true,
            ..RtoParams::default()
        };
        let mut s = ReliableSender::new(0, cc, PKT, Some(plan), rto);
        s.start(Time::ZERO);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        assert_eq!(out.len(), 10);
        out.clear();
        // 0..=7 arrive; 8 and 9 (the tail) are lost. SRTT 40 ms: PTO = 2 SRTT + 2 ms after the ACK.
        for cum in 1..=8 {
            s.on_ack(ms(40), &unlimited(ack(cum, 0, &[])), &mut out);
        }
        assert!(out.is_empty());
        assert_eq!(s.timeout_deadline(), Some(ms(122)));
        s.on_timeout(ms(122), &mut out);
        assert_eq!(seqs(&out), [9], "no new data: the highest packet again");
        assert_eq!((s.tlp_probes, s.rtos), (1, 0));
        out.clear();
        // The probe's SACK makes RACK declare 8 lost (sent before 9's probe, RACK.rtt long passed).
        s.on_ack(ms(162), &unlimited(ack(8, 0, &[(9, 10)])), &mut out);
        assert_eq!(seqs(&out), [8]);
        assert_eq!(s.rtos, 0);
        // Without TLP the tail waits for the RTO (1 s after the last ACK).
        let plan = crate::traffic::TransferPlan::fixed(vec![10], Dur::ZERO);
        let mut p = toml::Table::new();
        p.insert("window".into(), toml::Value::Integer(10));
        let rto = RtoParams {
            rack: true,
            ..RtoParams::default()
        };
        let mut s = ReliableSender::new(
            0,
            ccscope_cc::build("fixed", &p).expect("fixed"),
            PKT,
            Some(plan),
            rto,
        );
        s.start(Time::ZERO);
        s.try_send(Time::ZERO, &mut out);
        for cum in 1..=8 {
            s.on_ack(ms(40), &unlimited(ack(cum, 0, &[])), &mut out);
        }
        assert_eq!(s.timeout_deadline(), Some(ms(1040)));
    }

    /// A fixed window of 4 that keeps every ACK's rate sample, and paces at `rate` if given.
    struct Recorder {
        rate: Option<ccscope_core::Bandwidth>,
        samples: std::sync::Arc<std::sync::Mutex<Vec<Option<ccscope_cc::common::RateSample>>>>,
    }

    impl ccscope_cc::Controller for Recorder {
        fn on_ack(&mut self, _now: Time, ev: &AckEvent) {
            self.samples.lock().expect("not poisoned").push(ev.rate);
        }
        fn cwnd(&self) -> u32 {
            4
        }
        fn pacing_rate(&self) -> Option<ccscope_core::Bandwidth> {
            self.rate
        }
        fn wants_rate_sample(&self) -> bool {
            true
        }
    }

    type Samples = std::sync::Arc<std::sync::Mutex<Vec<Option<ccscope_cc::common::RateSample>>>>;

    fn recorder(rate: Option<ccscope_core::Bandwidth>) -> (ReliableSender, Samples) {
        let samples = Samples::default();
        let cc = AnyController::boxed(Recorder {
            rate,
            samples: samples.clone(),
        });
        let mut s = ReliableSender::new(0, cc, PKT, None, RtoParams::default());
        s.start(Time::ZERO);
        (s, samples)
    }

    fn unlimited(mut a: Ack) -> Ack {
        a.rwnd = Ack::RWND_UNLIMITED;
        a
    }

    /// A window of 4 that keeps the packets each ACK hands it (`on_packet_acked`).
    struct PacketSpy(Spied);

    type Spied = std::sync::Arc<std::sync::Mutex<Vec<PacketAcked>>>;

    /// A sender driven by `cc` (a window of 4), its first four packets sent at time zero (in `out`).
    fn started(cc: AnyController) -> (ReliableSender, Vec<Packet>) {
        let mut s = ReliableSender::new(0, cc, PKT, None, RtoParams::default());
        s.start(Time::ZERO);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        (s, out)
    }

    /// A sender driven by a `PacketSpy`.
    fn spied_sender() -> (Spied, ReliableSender, Vec<Packet>) {
        let packets: Spied = std::sync::Arc::default();
        let (s, out) = started(AnyController::boxed(PacketSpy(std::sync::Arc::clone(
            &packets,
        ))));
        (packets, s, out)
    }

    impl ccscope_cc::Controller for PacketSpy {
        fn on_ack(&mut self, _now: Time, _ev: &AckEvent) {}
        fn on_packet_acked(&mut self, _now: Time, ev: &PacketAcked) {
            self.0.lock().expect("not poisoned").push(*ev);
        }
        fn cwnd(&self) -> u32 {
            4
        }
        fn wants_packet_acks(&self) -> bool {
            true
        }
    }

    #[test]
    fn an_ack_echoing_the_original_of_a_retransmitted_packet_reports_no_arrival_for_the_retransmission(
    ) {
        let (packets, mut s, mut out) = spied_sender();
        assert_eq!(seqs(&out), [0, 1, 2, 3]);
        out.clear();
        // The RTO (1 s, no sample yet) resends 0..=3; then the original 0's ACK comes, delayed: it echoes
        // the first transmission (sent at 0, arrived at 500 ms), not the retransmission sent at 1 s.
        s.on_timeout(ms(1000), &mut out);
        assert_eq!(seqs(&out), [0, 1, 2, 3]);
        let mut a = unlimited(ack(1, 0, &[]));
        a.info.recv = ms(500);
        s.on_ack(ms(1010), &a, &mut out);
        let packets = packets.lock().expect("not poisoned");
        assert_eq!(packets.len(), 1);
        let p = packets[0];
        assert_eq!((p.seq, p.send_time), (0, ms(1000)));
        // RFC 7323 §4.3 / Eifel (RFC 3522): the echo belongs to the transmission it names, so the
        // retransmission's arrival is unknown (500 ms would be before it was sent).
        assert_eq!(p.recv_time, None);
    }

    /// A window of 4 that keeps each ACK's (rtt, ca_rtt).
    struct RttSpy(std::sync::Arc<std::sync::Mutex<Vec<(Dur, Dur)>>>);

    impl ccscope_cc::Controller for RttSpy {
        fn on_ack(&mut self, _now: Time, ev: &AckEvent) {
            self.0
                .lock()
                .expect("not poisoned")
                .push((ev.rtt, ev.ca_rtt));
        }
        fn cwnd(&self) -> u32 {
            4
        }
    }

    /// A sender driven by an `RttSpy`.
    fn rtt_spy() -> (
        std::sync::Arc<std::sync::Mutex<Vec<(Dur, Dur)>>>,
        ReliableSender,
        Vec<Packet>,
    ) {
        let rtts = std::sync::Arc::default();
        let (s, out) = started(AnyController::boxed(RttSpy(std::sync::Arc::clone(&rtts))));
        (rtts, s, out)
    }

    #[test]
    fn ca_rtt_is_the_rtt_of_the_newest_packet_an_ack_covers() {
        let (rtts, mut s, mut out) = rtt_spy();
        // 0-3 at 0 ms; the ACKs at 40 and 41 ms let out 4 and 5. One ACK at 90 ms covers 2-5: its echo
        // (this helper's, sent at 0) gives rtt 90 ms; Linux's ca_rtt_us is packet 5's, sent at 41 ms.
        s.on_ack(ms(40), &unlimited(ack(1, 0, &[])), &mut out);
        s.on_ack(ms(41), &unlimited(ack(2, 0, &[])), &mut out);
        s.on_ack(ms(90), &unlimited(ack(6, 0, &[])), &mut out);
        let last = *rtts.lock().expect("not poisoned").last().expect("an ACK");
        assert_eq!(last, (Dur::from_ms(90), Dur::from_ms(49)));
    }

    #[test]
    fn a_resent_packet_cumulatively_acked_voids_the_cumulative_sample_but_a_sack_sample_stands() {
        let (rtts, mut s, mut out) = rtt_spy();
        // The RTO at 1 s resends 0-3. The ACK of 0 (resent) at 1010 ms: tcp_clean_rtx_queue sets
        // FLAG_RETRANS_DATA_ACKED and takes no time from it, so ca_rtt falls back to the echo.
        s.on_timeout(ms(1000), &mut out);
        out.clear();
        s.on_ack(ms(1010), &unlimited(ack(1, 0, &[])), &mut out);
        assert_eq!(seqs(&out), [4]);
        let got = *rtts.lock().expect("not poisoned").last().expect("an ACK");
        assert_eq!(got, (Dur::from_ms(1010), Dur::from_ms(1010)));
        // Then 1 (resent) cumulatively and 4 (sent once, at 1010 ms) by SACK: last_sackt gives 40 ms.
        s.on_ack(ms(1050), &unlimited(ack(2, 0, &[(4, 5)])), &mut out);
        let got = *rtts.lock().expect("not poisoned").last().expect("an ACK");
        assert_eq!(got, (Dur::from_ms(1050), Dur::from_ms(40)));
    }

    #[test]
    fn sack_blocks_count_each_packet_once_however_often_they_repeat_or_grow() {
        let mut s = windowed(10);
        s.start(Time::ZERO);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        assert_eq!(seqs(&out), (0..10).collect::<Vec<_>>());
        // Packets 2-4 SACKed, then the block grows to 2-6 and 8 joins: 3 + 3 newly SACKed.
        s.on_ack(ms(40), &ack(0, 100, &[(2, 5)]), &mut out);
        assert_eq!((s.acked, s.sacked_out), (3, 3));
        s.on_ack(ms(41), &ack(0, 100, &[(8, 9), (2, 7)]), &mut out);
        assert_eq!((s.acked, s.sacked_out), (6, 6));
        // The same blocks again, then one that grows below a known run (1) and above another (9).
        s.on_ack(ms(42), &ack(0, 100, &[(8, 9), (2, 7)]), &mut out);
        assert_eq!((s.acked, s.sacked_out), (6, 6));
        s.on_ack(ms(43), &ack(0, 100, &[(8, 10), (1, 7)]), &mut out);
        assert_eq!((s.acked, s.sacked_out), (8, 8));
        // The cumulative ACK passes the SACKed runs: only 0 and 7 are newly delivered.
        s.on_ack(ms(44), &ack(10, 100, &[]), &mut out);
        assert_eq!((s.acked, s.sacked_out), (10, 0));
    }

    #[test]
    fn rack_min_rtt_takes_no_sample_from_a_duplicate_ack_that_delivers_nothing() {
        let mut s = switched("fixed", 10, |r| r.rack = true);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(ms(100), &cum_ack(1), &mut out);
        assert_eq!(s.rack.min_rtt(), Some(Dur::from_ms(100)));
        // A pure duplicate (no new data, no SACK) echoing a send time 5 ms ago: Linux has no RTT sample
        // for it (tcp_ack_update_rtt returns before tcp_update_rtt_min), so RACK's min RTT stands.
        let mut dup = cum_ack(1);
        dup.sent = ms(95);
        s.on_ack(ms(100), &dup, &mut out);
        assert_eq!(s.rack.min_rtt(), Some(Dur::from_ms(100)));
    }

    #[test]
    fn sack_run_skipping_counts_what_a_full_walk_counts_as_blocks_shrink_shift_and_carry_dsack() {
        // A real receiver (DSACK on) gets the 64 packets in a scrambled order with duplicates, so its
        // blocks grow, shift, merge, drop out of the three reported and carry DSACK blocks; every ACK
        // goes to the sender, whose counts must equal a walk of every block the ACKs ever carried.
        for seed in 1..=20u64 {
            let mut s = windowed(64);
            s.start(Time::ZERO);
            let mut out = Vec::new();
            s.try_send(Time::ZERO, &mut out);
            let pkts: Vec<Packet> = out.drain(..).collect();
            assert_eq!(pkts.len(), 64);
            let mut r = super::super::receiver::Receiver::new(true, 40).with_dsack(true);
            let mut x = seed;
            let mut next = |n: u64| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 33) % n
            };
            let mut order: Vec<usize> = (0..64).collect();
            for i in (1..64).rev() {
                order.swap(i, next(i as u64 + 1) as usize);
            }
            let mut arrivals = Vec::new();
            for (k, &i) in order.iter().enumerate() {
                arrivals.push(i);
                if k > 0 && next(3) == 0 {
                    arrivals.push(order[next(k as u64) as usize]);
                }
            }
            let mut known = vec![false; 64];
            for (k, &i) in arrivals.iter().enumerate() {
                let now = ms(100 + k as u64);
                let a = r.on_data(&pkts[i], now).0.expect("an ACK per packet");
                let dsack = a.sack[0].0 < a.sack[0].1
                    && (a.sack[0].1 <= a.ack_cum
                        || (a.sack[1].0 < a.sack[1].1
                            && a.sack[0].0 >= a.sack[1].0
                            && a.sack[0].1 <= a.sack[1].1));
                for seq in 0..a.ack_cum.min(64) {
                    known[seq as usize] = true;
                }
                for (b, &(lo, hi)) in a.sack.iter().enumerate() {
                    if !(b == 0 && dsack) {
                        for seq in lo..hi.min(64) {
                            known[seq as usize] = true;
                        }
                    }
                }
                s.on_ack(now, &a, &mut out);
                let total = known.iter().filter(|&&k| k).count() as u64;
                let above = known[a.ack_cum.min(64) as usize..]
                    .iter()
                    .filter(|&&k| k)
                    .count();
                assert_eq!(
                    (s.acked, s.sacked_out),
                    (total, above as u32),
                    "seed {seed} arrival {k}"
                );
            }
            assert_eq!((s.acked, s.sacked_out), (64, 0), "seed {seed}");
        }
    }

    #[test]
    fn pacing_spaces_every_transmission_by_one_packet_time_at_the_rate() {
        // 12 Mbit/s: one 1500-byte packet per ms.
        let (mut s, _) = recorder(Some(ccscope_core::Bandwidth::from_mbps(12.0)));
        let mut out = Vec::new();
        assert_eq!(s.try_send(Time::ZERO, &mut out), Some(ms(1)));
        assert_eq!(seqs(&out), [0]);
        // Too early: nothing goes, the same wake-up is asked for.
        assert_eq!(s.try_send(Time(500_000), &mut out), Some(ms(1)));
        assert_eq!(s.try_send(ms(1), &mut out), Some(ms(2)));
        assert_eq!(s.try_send(ms(2), &mut out), Some(ms(3)));
        // The fourth packet fills the window (4): no pacing wake-up until an ACK opens it.
        assert_eq!(s.try_send(ms(3), &mut out), None);
        assert_eq!(seqs(&out), [0, 1, 2, 3]);
        // An ACK at 40 ms frees one slot; pacing allowed a packet since 4 ms, so it goes at once.
        s.on_ack(ms(40), &unlimited(ack(1, 0, &[])), &mut out);
        assert_eq!(seqs(&out), [0, 1, 2, 3, 4]);
        // Without a rate the window goes at once.
        let (mut s, _) = recorder(None);
        out.clear();
        assert_eq!(s.try_send(Time::ZERO, &mut out), None);
        assert_eq!(seqs(&out), [0, 1, 2, 3]);
    }

    #[test]
    fn every_ack_carries_the_rate_sample_of_the_packets_it_newly_delivered() {
        let (mut s, samples) = recorder(Some(ccscope_core::Bandwidth::from_mbps(12.0)));
        let mut out = Vec::new();
        // Packets 0-3 leave at 0, 1, 2, 3 ms (paced).
        for t in 0..4 {
            s.try_send(ms(t), &mut out);
        }
        // Packet 1 is SACKed at 41 ms (packet 0 is late): one packet over 41 ms since the flight began.
        s.on_ack(ms(41), &unlimited(ack(0, 0, &[(1, 2)])), &mut out);
        // The cumulative ACK for 0-2 at 42 ms delivers 0 and 2 (1 was counted already); the newest
        // is 2, sent at 2 ms with P.delivered 0: 3 packets, send 2 ms, ACK 42 ms.
        s.on_ack(ms(42), &unlimited(ack(3, 0, &[])), &mut out);
        let got = samples.lock().expect("not poisoned").clone();
        let first = got[0].expect("valid");
        assert_eq!((first.delivered, first.prior_delivered), (1, 0));
        assert_eq!(
            (first.send_elapsed, first.ack_elapsed),
            (Dur::from_ms(1), Dur::from_ms(41))
        );
        let second = got[1].expect("valid");
        assert_eq!((second.delivered, second.delivered_total), (3, 3));
        assert_eq!(
            (second.send_elapsed, second.interval),
            (Dur::from_ms(2), Dur::from_ms(42))
        );
        assert!(!second.is_app_limited);
    }

    #[test]
    fn a_transfer_with_nothing_left_to_send_marks_its_packets_app_limited() {
        let plan = crate::traffic::TransferPlan::fixed(vec![2, 2], Dur::ZERO);
        let samples = Samples::default();
        let cc = AnyController::boxed(Recorder {
            rate: None,
            samples: samples.clone(),
        });
        let mut s = ReliableSender::new(0, cc, PKT, Some(plan), RtoParams::default());
        s.start(Time::ZERO);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        assert_eq!(
            seqs(&out),
            [0, 1],
            "two packets, then the application has nothing"
        );
        s.on_ack(ms(40), &unlimited(ack(1, 0, &[])), &mut out);
        s.on_ack(ms(41), &unlimited(ack(2, 0, &[])), &mut out);
        // The second transfer's packets leave before the marked flight (2 packets) is passed.
        assert_eq!(seqs(&out), [0, 1, 2, 3]);
        s.on_ack(ms(81), &unlimited(ack(3, 0, &[])), &mut out);
        s.on_ack(ms(82), &unlimited(ack(4, 0, &[])), &mut out);
        let got: Vec<bool> = samples
            .lock()
            .expect("not poisoned")
            .iter()
            .map(|r| r.expect("valid").is_app_limited)
            .collect();
        // Packets 0 and 1 left before the application ran dry; 2 and 3 after it had.
        assert_eq!(got, [false, false, true, true]);
    }

    #[test]
    fn no_tail_loss_probe_while_a_sacked_hole_waits_for_racks_reordering_timer() {
        let plan = crate::traffic::TransferPlan::fixed(vec![20], Dur::ZERO);
        let mut p = toml::Table::new();
        p.insert("window".into(), toml::Value::Integer(10));
        let rto = RtoParams {
            rack: true,
            tlp: true,
            ..RtoParams::default()
        };
        let mut s = ReliableSender::new(
            0,
            ccscope_cc::build("fixed", &p).expect("fixed"),
            PKT,
            Some(plan),
            rto,
        );
        s.start(Time::ZERO);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        for cum in 1..=10 {
            s.on_ack(ms(40), &unlimited(ack(cum, 0, &[])), &mut out);
        }
        assert_eq!(seqs(&out), (10..20).collect::<Vec<_>>());
        out.clear();
        // 10 lost; 11 SACKed at 115 ms: RACK arms its reordering timer, which replaces the probe.
        s.on_ack(ms(115), &unlimited(ack(10, 0, &[(11, 12)])), &mut out);
        assert_eq!(s.tlp_deadline.get(), None);
        let d = s.timeout_deadline().expect("the reordering timer");
        assert_eq!(Some(d), s.reo_deadline.get());
        s.on_timeout(d, &mut out);
        assert_eq!(s.tlp_probes, 0);
        assert_eq!(seqs(&out), [10], "RACK resends the hole, not the tail");
    }

    #[test]
    fn the_probe_timer_is_disarmed_once_everything_is_acknowledged() {
        let plan = crate::traffic::TransferPlan::fixed(vec![10], Dur::ZERO);
        let mut p = toml::Table::new();
        p.insert("window".into(), toml::Value::Integer(10));
        let rto = RtoParams {
            rack: true,
            tlp: true,
            ..RtoParams::default()
        };
        let mut s = ReliableSender::new(
            0,
            ccscope_cc::build("fixed", &p).expect("fixed"),
            PKT,
            Some(plan),
            rto,
        );
        s.start(Time::ZERO);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        assert!(s.tlp_deadline.is_some());
        for cum in 1..=10 {
            s.on_ack(ms(40), &unlimited(ack(cum, 0, &[])), &mut out);
        }
        assert_eq!(s.tlp_deadline.get(), None);
    }

    #[test]
    fn a_timeout_with_rack_resends_the_head_although_recent_packets_stay_in_flight() {
        let mut params = toml::Table::new();
        params.insert("initial_window".into(), toml::Value::Integer(10));
        let rto = RtoParams {
            rack: true,
            ..RtoParams::default()
        };
        let cc = ccscope_cc::build("newreno", &params).expect("newreno");
        let mut s = ReliableSender::new(0, cc, PKT, None, rto);
        s.start(Time::ZERO);
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        out.clear();
        for cum in 1..=10 {
            s.on_ack(ms(300), &unlimited(ack(cum, 0, &[])), &mut out);
        }
        out.clear();
        let rto_at = s.timeout_deadline().expect("the RTO");
        // 10 lost; a SACK of 11 arrives 50 ms before the RTO and clocks out new packets.
        s.on_ack(
            Time(rto_at.as_ns() - 50_000_000),
            &unlimited(ack(10, 0, &[(11, 12)])),
            &mut out,
        );
        out.clear();
        assert_eq!(s.timeout_deadline(), Some(rto_at));
        s.on_timeout(rto_at, &mut out);
        assert!(
            s.in_flight() > 0,
            "the recently sent packets are not marked lost (tcp_timeout_mark_lost)"
        );
        assert_eq!(
            seqs(&out),
            [10],
            "Linux tcp_enter_loss: cwnd = in flight + 1, the head goes at once"
        );
    }

    /// A fixed 10-packet window with the given RTO settings, all sent at 0 and the first ACKed at 100 ms.
    fn sampled_once(rto: RtoParams) -> (ReliableSender, Vec<Packet>) {
        let mut params = toml::Table::new();
        params.insert("window".into(), toml::Value::Integer(10));
        let cc = ccscope_cc::build("fixed", &params).expect("fixed");
        let mut s = ReliableSender::new(0, cc, PKT, None, rto);
        let mut out = Vec::new();
        s.start(Time::ZERO);
        s.try_send(Time::ZERO, &mut out);
        s.on_ack(ms(100), &cum_ack(1), &mut out);
        (s, out)
    }

    #[test]
    fn rfc6298_rto_takes_no_sample_from_acks_that_do_not_advance_snd_una() {
        let (mut s, mut out) = sampled_once(RtoParams {
            min: Dur::from_ms(1),
            ..RtoParams::default()
        });
        // RFC 6298 §2.2: SRTT 100, RTTVAR 50 -> RTO 300 ms.
        assert_eq!(s.rto(), Dur::from_ms(300));
        // Packets 2 and 3 arrive 900 ms after they left, above the hole at 1: duplicate ACKs with SACK.
        for hi in [3, 4] {
            let mut a = cum_ack(1);
            a.sack[0] = (2, hi);
            s.on_ack(ms(900), &a, &mut out);
        }
        // RFC 7323 §4 RTTM rule: a TSecr updates the RTT only when SND.UNA advances.
        assert_eq!(s.rto(), Dur::from_ms(300));
        // The ACK that advances SND.UNA is sampled: 900 ms moves SRTT and RTTVAR.
        let mut a = cum_ack(4);
        a.sent = ms(0);
        s.on_ack(ms(900), &a, &mut out);
        // RTTVAR = 3/4 50 + 1/4 800 = 237.5, SRTT = 7/8 100 + 1/8 900 = 200: RTO 200 + 950 ms.
        assert_eq!(s.rto(), Dur::from_ms(1150));
    }

    #[test]
    fn linux_rto_takes_no_sample_from_a_duplicate_ack_that_delivers_nothing_new() {
        let (mut s, mut out) = sampled_once(RtoParams::linux());
        // tcp_rtt_estimator first sample: SRTT 100, mdev 200 -> RTO 300 ms.
        assert_eq!(s.rto(), Dur::from_ms(300));
        let mut a = cum_ack(1);
        a.sack[0] = (2, 3);
        s.on_ack(ms(900), &a, &mut out);
        let after_sack = s.rto();
        // A newly SACKed packet is a sample (Linux sack_rtt_us): the RTO moved.
        assert!(after_sack > Dur::from_ms(300), "{after_sack:?}");
        // The same SACK again delivers nothing: tcp_ack_update_rtt has no RTT to use.
        s.on_ack(ms(1500), &a, &mut out);
        assert_eq!(s.rto(), after_sack);
    }

    /// A fixed 20-packet window, RTO clamped at 1 ms: 20 packets out at 0 with holes at 0, 5 and 10;
    /// the SACKs of the rest at 100 ms start recovery, and at 200 ms the first partial ACK (to 5) comes.
    fn recovering(impatient: bool) -> (ReliableSender, Vec<Packet>) {
        let mut params = toml::Table::new();
        params.insert("window".into(), toml::Value::Integer(20));
        let cc = ccscope_cc::build("fixed", &params).expect("fixed");
        let rto = RtoParams {
            min: Dur::from_ms(1),
            impatient,
            ..RtoParams::default()
        };
        let mut s = ReliableSender::new(0, cc, PKT, None, rto);
        let mut out = Vec::new();
        s.start(Time::ZERO);
        s.try_send(Time::ZERO, &mut out);
        let mut a = cum_ack(0);
        (a.sack[0], a.sack[1], a.sack[2]) = ((11, 20), (6, 10), (1, 5));
        s.on_ack(ms(100), &a, &mut out);
        assert!(s.in_recovery());
        let mut a = cum_ack(5);
        (a.sack[0], a.sack[1]) = ((11, 20), (6, 10));
        a.sent = ms(100);
        s.on_ack(ms(200), &a, &mut out);
        assert!(s.in_recovery());
        (s, out)
    }

    #[test]
    fn the_impatient_variant_restarts_the_timer_only_on_the_first_partial_ack() {
        for impatient in [false, true] {
            let (mut s, mut out) = recovering(impatient);
            // The first partial ACK restarts the timer in both variants.
            let first = s.timeout_deadline().expect("timer running");
            assert_eq!(first, ms(200) + s.rto());
            // The second partial ACK (to 10; 10 is still missing, so below the recovery point 19).
            let mut a = cum_ack(10);
            a.sack[0] = (11, 20);
            a.sent = ms(100);
            s.on_ack(ms(300), &a, &mut out);
            assert!(s.in_recovery());
            let second = s.timeout_deadline().expect("timer running");
            if impatient {
                // RFC 6582 §3.2 step 5 (Impatient, ns-3.37): the first partial ACK's deadline stands.
                assert_eq!(second, first);
            } else {
                // RFC 6298 §5.3: every ACK of new data restarts the timer.
                assert_eq!(second, ms(300) + s.rto());
            }
        }
    }

    #[test]
    fn resending_the_head_restarts_the_linux_timer_so_the_resend_has_a_whole_rto_to_be_acked() {
        for rearm in [true, false] {
            let mut s = switched("fixed", 10, |r| {
                // No tail loss probe, whose earlier timer would hide the RTO's.
                *r = RtoParams {
                    head_retransmit_restarts: rearm,
                    tlp: false,
                    ..RtoParams::linux()
                }
            });
            let mut out = Vec::new();
            s.try_send(Time::ZERO, &mut out);
            // 0 is ACKed at 100 ms: RTO 300 ms (SRTT 100 + rto_min), the timer restarts to 400 ms.
            let mut a = cum_ack(1);
            a.sent = ms(0);
            s.on_ack(ms(100), &a, &mut out);
            assert_eq!(s.timeout_deadline(), Some(ms(400)));
            // 1 was lost; the SACK of 2..5 comes only at 350 ms (the queue grew): RACK resends 1 then.
            out.clear();
            a.sack[0] = (2, 6);
            s.on_ack(ms(350), &a, &mut out);
            assert_eq!(seqs(&out)[0], 1, "{:?}", seqs(&out));
            if rearm {
                // Linux tcp_xmit_retransmit_queue: the head resent, the timer restarts at icsk_rto.
                assert_eq!(s.timeout_deadline(), Some(ms(350) + s.rto()));
            } else {
                // RFC 6298 §5.3 alone: only an ACK of new data restarts it, 50 ms after the resend.
                assert_eq!(s.timeout_deadline(), Some(ms(400)));
            }
            s.on_timeout(ms(400), &mut out);
            assert_eq!(s.rtos, u64::from(!rearm));
        }
    }

    /// The Linux preset without the probe, `sack_restarts` and RACK on or off, a fixed window of 10:
    /// 0..=9 leave at 0; 0's ACK at 100 ms sends 10; 1 was lost, and the SACK of 2..=5 comes at
    /// 350 ms (the queue grew): RACK (or RFC 6675 IsLost) resends 1 then, which restarts the timer
    /// at 350 ms + RTO.
    fn head_resent(sack_restarts: bool, rack: bool) -> (ReliableSender, Vec<Packet>) {
        let mut s = switched("fixed", 10, |r| {
            *r = RtoParams {
                sack_restarts,
                rack,
                tlp: false,
                ..RtoParams::linux()
            }
        });
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        let mut a = cum_ack(1);
        a.sent = ms(0);
        s.on_ack(ms(100), &a, &mut out);
        out.clear();
        a.sack[0] = (2, 6);
        s.on_ack(ms(350), &a, &mut out);
        assert_eq!(seqs(&out)[0], 1, "{:?}", seqs(&out));
        assert_eq!(s.timeout_deadline(), Some(ms(350) + s.rto()));
        out.clear();
        (s, out)
    }

    #[test]
    fn a_sack_of_packets_sent_before_the_heads_resend_restarts_the_linux_rto_so_the_queued_resend_is_not_timed_out(
    ) {
        for rearm in [true, false] {
            let (mut s, mut out) = head_resent(rearm, true);
            let resend_deadline = s.timeout_deadline().expect("timer running");
            // 6..=9, sent at 0 ms, before 1 was resent, are SACKed 10 ms before that deadline: the
            // queue that delays them delays the resend of 1 behind them.
            let t = Time(resend_deadline.as_ns() - Dur::from_ms(10).as_ns());
            let mut a = ack(1, 0, &[(2, 10)]);
            a.sent = ms(0);
            s.on_ack(t, &unlimited(a), &mut out);
            if rearm {
                // tcp_clean_rtx_queue: the SACK RTT (from 0 ms) exceeds the head's age (from 350 ms):
                // FLAG_SET_XMIT_TIMER -> tcp_set_xmit_timer -> tcp_rearm_rto, from now.
                assert_eq!(s.timeout_deadline(), Some(t + s.rto()));
            } else {
                assert_eq!(s.timeout_deadline(), Some(resend_deadline));
            }
            s.on_timeout(resend_deadline, &mut out);
            assert_eq!(s.rtos, u64::from(!rearm));
        }
    }

    #[test]
    fn a_sack_of_only_packets_sent_after_the_heads_resend_leaves_the_linux_rto_alone() {
        // Without RACK, which would find the resend of 1 lost once a packet sent after it is
        // delivered, and resend it again (another restart).
        let (mut s, mut out) = head_resent(true, false);
        let resend_deadline = s.timeout_deadline().expect("timer running");
        let after = s.snd_nxt;
        assert!(
            after > 11,
            "something left with the resend at 350 ms: {after}"
        );
        // 10 left at 100 ms, before the resend of 1: its SACK at 499 ms restarts the timer.
        let mut a = ack(1, 0, &[(2, 11)]);
        a.sent = ms(0);
        s.on_ack(ms(499), &unlimited(a), &mut out);
        let restarted = s.timeout_deadline().expect("timer running");
        assert_eq!(restarted, ms(499) + s.rto());
        assert!(restarted > resend_deadline);
        // 11.. left with the resend of 1, at 350 ms: SACKed at 500 ms.
        let mut a = ack(1, 0, &[(2, after)]);
        a.sent = ms(350);
        s.on_ack(ms(500), &unlimited(a), &mut out);
        // Their SACK RTT (150 ms) is not above the head's age (150 ms): the timer stands.
        assert_eq!(s.timeout_deadline(), Some(restarted));
    }

    /// The Linux preset with one timer or three (`one_timer`), a fixed window of 3: 0..=2 leave at
    /// 0; ACKs of 0, 1, 2 (echoing 0) at 40, 48 and 56 ms send 3, 4 and 5 then; 3 and 4 are lost,
    /// and the SACK of 5 comes at 96 ms (RACK.rtt 40 ms, reo_wnd = min_RTT / 4 = 10 ms): 3, 6 ms
    /// past its RACK time, is resent at once and 4, due in 2 ms, arms the reordering timer for 100
    /// ms.
    fn reo_pending(one_timer: bool) -> (ReliableSender, Vec<Packet>) {
        let mut s = switched("fixed", 3, |r| {
            *r = RtoParams {
                one_timer,
                ..RtoParams::linux()
            }
        });
        let mut out = Vec::new();
        s.try_send(Time::ZERO, &mut out);
        for (t, cum) in [(40, 1), (48, 2), (56, 3)] {
            let mut a = cum_ack(cum);
            a.sent = ms(0);
            s.on_ack(ms(t), &a, &mut out);
        }
        out.clear();
        let mut a = ack(3, 0, &[(5, 6)]);
        a.sent = ms(56);
        s.on_ack(ms(96), &unlimited(a), &mut out);
        assert_eq!(seqs(&out), [3]);
        assert_eq!(s.reo_deadline.get(), Some(ms(100)));
        (s, out)
    }

    #[test]
    fn after_a_reordering_timeout_linux_arms_the_rto_at_the_heads_send_time_and_no_reordering_timer_is_left(
    ) {
        for one_timer in [true, false] {
            let (mut s, mut out) = reo_pending(one_timer);
            let before = s.rto_deadline.get();
            s.on_timeout(ms(100), &mut out);
            assert_eq!((s.rack_reo_timeouts, s.lost), (1, 2));
            if one_timer {
                // tcp_rack_reo_timeout -> tcp_rearm_rto: the head (3, resent at 96 ms) + icsk_rto.
                assert_eq!(s.rto_deadline.get(), Some(ms(96) + s.rto()));
                assert_eq!(s.reo_deadline.get(), None);
            } else {
                // Separate deadlines: the RTO keeps the one the ACK at 56 ms gave it.
                assert_eq!(s.rto_deadline.get(), before);
                assert!(before < Some(ms(96) + s.rto()));
            }
        }
    }

    #[test]
    fn an_ack_of_new_data_that_arms_no_reordering_timer_replaces_the_pending_one_with_the_rto_from_the_head(
    ) {
        for one_timer in [true, false] {
            let (mut s, mut out) = reo_pending(one_timer);
            // At 98 ms the original 3 arrives after all: SND.UNA advances to 4, RACK learns nothing
            // new (3's latest send, 96 ms, is younger than min_RTT): it arms no timer on this ACK.
            let mut a = ack(4, 0, &[(5, 6)]);
            a.sent = ms(40);
            s.on_ack(ms(98), &unlimited(a), &mut out);
            if one_timer {
                // tcp_set_xmit_timer -> tcp_rearm_rto, REO_TIMEOUT pending: head 4, sent at 48 ms.
                assert_eq!(s.reo_deadline.get(), None);
                assert_eq!(s.timeout_deadline(), Some(ms(48) + s.rto()));
            } else {
                assert_eq!(s.reo_deadline.get(), Some(ms(100)));
                assert_eq!(s.rto_deadline.get(), Some(ms(98) + s.rto()));
            }
        }
    }

    #[test]
    fn the_linux_rto_does_not_fire_while_racks_reordering_timer_holds_the_one_timer() {
        for one_timer in [true, false] {
            let (mut s, mut out) = reo_pending(one_timer);
            // An RTO deadline from before the reordering timer was armed, due first.
            s.rto_deadline = Some(ms(98)).into();
            let expected = if one_timer { ms(100) } else { ms(98) };
            assert_eq!(s.timeout_deadline(), Some(expected));
            s.on_timeout(ms(98), &mut out);
            assert_eq!(s.rtos, u64::from(!one_timer));
        }
    }

    #[test]
    fn only_the_linux_preset_runs_one_timer() {
        assert!(RtoParams::linux().one_timer);
        assert!(!RtoParams::default().one_timer);
        assert!(!RtoParams::ns3().one_timer);
    }

    /// A started sender of controller `cc` with window `w` and ns-2's send overhead of `overhead`,
    /// drawing from stream `seed`.
    fn overheaded(cc: &str, w: i64, overhead: Dur, seed: u64) -> ReliableSender {
        switched(cc, w, |_| {}).with_send_overhead(overhead, ccscope_core::rng::stream(seed, 0))
    }

    #[test]
    fn without_send_overhead_the_window_goes_at_once() {
        let mut s = overheaded("fixed", 4, Dur::ZERO, 1);
        let mut out = Vec::new();
        assert_eq!(s.try_send(Time::ZERO, &mut out), None);
        assert_eq!(seqs(&out), [0, 1, 2, 3]);
        assert!(out.iter().all(|p| p.sent == Time::ZERO));
    }

    #[test]
    fn a_send_overhead_holds_what_the_window_allows_until_one_timer_fires_then_sends_it_all() {
        let mut s = overheaded("fixed", 4, Dur::from_ms(1), 1);
        let mut out = Vec::new();
        // ns-2 TcpAgent::send_much (force 0): nothing goes, the delayed-send timer is armed.
        let t = s
            .try_send(Time::ZERO, &mut out)
            .expect("a delayed-send timer");
        assert!(out.is_empty());
        assert!(t > Time::ZERO && t < ms(1), "{t:?}");
        // A call before it fires (an ACK) sends nothing and keeps the one timer.
        assert_eq!(s.try_send(Time(t.as_ns() / 2), &mut out), Some(t));
        assert!(out.is_empty());
        // The expiry (send_much with force 1) sends all the window allows, at once, in order.
        assert_eq!(s.try_send(t, &mut out), None);
        assert_eq!(seqs(&out), [0, 1, 2, 3]);
        assert!(out.iter().all(|p| p.sent == t));
    }

    /// The delays (timer expiry minus the time the window allowed the packet) of `n` packets of a
    /// one-packet window, ACKed 10 ms after each is sent.
    fn overhead_delays(overhead: Dur, seed: u64, n: u64) -> Vec<Dur> {
        let mut s = overheaded("fixed", 1, overhead, seed);
        let mut out = Vec::new();
        let mut now = Time::ZERO;
        let mut wake = s.try_send(now, &mut out).expect("timer");
        let mut delays = Vec::with_capacity(n as usize);
        for k in 0..n {
            delays.push(wake - now);
            assert!(out.is_empty());
            assert_eq!(s.try_send(wake, &mut out), None);
            assert_eq!((seqs(&out), out[0].sent), (vec![k], wake));
            out.clear();
            now = wake + Dur::from_ms(10);
            wake = s.on_ack(now, &cum_ack(k + 1), &mut out).expect("timer");
        }
        delays
    }

    #[test]
    fn each_send_waits_a_uniform_delay_below_the_overhead_with_mean_half_of_it() {
        let overhead = Dur::from_ms(1);
        let d = overhead_delays(overhead, 3, 20_000);
        assert!(d.iter().all(|&x| x < overhead));
        let mean = d.iter().map(|x| x.as_ns()).sum::<u64>() as f64 / d.len() as f64;
        // Uniform on [0, 1 ms): mean 500 us, standard error 289 us / sqrt(20,000) = 2 us.
        assert!((mean - 500_000.0).abs() < 10_000.0, "mean {mean} ns");
        let quarter = d.iter().filter(|x| x.as_ns() < 250_000).count();
        assert!(
            (4_500..5_500).contains(&quarter),
            "{quarter} of 20,000 below 250 us"
        );
    }

    #[test]
    fn send_overhead_delays_are_the_same_for_the_same_stream_and_differ_for_another() {
        let a = overhead_delays(Dur::from_ms(1), 7, 200);
        assert_eq!(a, overhead_delays(Dur::from_ms(1), 7, 200));
        assert_ne!(a, overhead_delays(Dur::from_ms(1), 8, 200));
    }

    #[test]
    fn a_fast_retransmission_goes_at_once_while_new_data_waits_for_the_send_overhead() {
        let mut s = overheaded("fixed", 10, Dur::from_ms(1), 2);
        let mut out = Vec::new();
        let t = s.try_send(Time::ZERO, &mut out).expect("timer");
        s.try_send(t, &mut out);
        assert_eq!(seqs(&out), (0..10).collect::<Vec<_>>());
        out.clear();
        // 1..=9 SACKed: 0 is lost (RFC 6675 IsLost). ns-2 sends the fast retransmission with
        // output(), outside send_much: at once. The new data the pipe allows waits.
        let w = s
            .on_ack(ms(40), &unlimited(ack(0, 0, &[(1, 10)])), &mut out)
            .expect("timer");
        assert_eq!(seqs(&out), [0]);
        assert!(w > ms(40) && w < ms(41), "{w:?}");
        s.try_send(w, &mut out);
        assert_eq!(seqs(&out), [0, 10, 11, 12, 13, 14, 15, 16, 17, 18]);
        assert!(out[1..].iter().all(|p| p.sent == w));
    }

    #[test]
    fn frto_new_data_waits_for_the_send_overhead_and_then_goes_instead_of_retransmissions() {
        let mut s =
            newreno(true).with_send_overhead(Dur::from_ms(1), ccscope_core::rng::stream(5, 0));
        let mut out = Vec::new();
        s.start(Time::ZERO);
        let t = s.try_send(Time::ZERO, &mut out).expect("timer");
        s.try_send(t, &mut out);
        assert_eq!(seqs(&out), (0..10).collect::<Vec<_>>());
        out.clear();
        let rto = s.timeout_deadline().expect("RTO armed");
        let w = s.on_timeout(rto, &mut out).expect("timer");
        s.try_send(w, &mut out);
        assert_eq!(seqs(&out), [0]);
        out.clear();
        // The original of 0 arrives late: RFC 5682 step 2.b sends new data, after the overhead.
        let w = s
            .on_ack(rto + Dur::from_ms(100), &cum_ack(1), &mut out)
            .expect("timer");
        assert!(out.is_empty());
        s.try_send(w, &mut out);
        assert_eq!(
            seqs(&out),
            [10, 11],
            "new data, not retransmissions of 1 and 2"
        );
        // Packet 1, never retransmitted, is acknowledged: the timeout was spurious (step 3.b).
        s.on_ack(w + Dur::from_ms(1), &cum_ack(2), &mut out);
        assert_eq!((s.spurious_rtos, s.retransmitted), (1, 1));
    }

    #[test]
    fn a_retransmission_after_a_timeout_waits_for_the_send_overhead() {
        let mut s = overheaded("newreno", 4, Dur::from_ms(1), 4);
        let mut out = Vec::new();
        let t = s.try_send(Time::ZERO, &mut out).expect("timer");
        s.try_send(t, &mut out);
        assert_eq!(seqs(&out), [0, 1, 2, 3]);
        out.clear();
        // ns-2 TcpAgent::timeout(TCP_TIMER_RTX) resends through send_much (force 0).
        let rto = s.timeout_deadline().expect("RTO armed");
        let w = s.on_timeout(rto, &mut out).expect("timer");
        assert_eq!(s.rtos, 1);
        assert!(out.is_empty());
        assert!(w > rto && w < rto + Dur::from_ms(1), "{w:?}");
        s.try_send(w, &mut out);
        assert_eq!(seqs(&out), [0]);
    }
}
