//! The SCTP-CMT sender: one association over all of a flow's paths (paper 002 §3.2; Iyengar, Amer
//! and Stewart 2006, "Concurrent multipath transfer using SCTP multihoming over independent
//! end-to-end paths"). Path i is destination address i.
//!
//! - One TSN space; one packet = one DATA chunk of `packet_bytes` (on-wire bytes, as everywhere in
//!   ccscope). Per destination: an SCTP controller (`ccscope_cc::window::sctp`: CWND, SSTHRESH, PBA), OUT,
//!   an RTT estimator (paper eqs. 4-5, alpha 1/8, beta 1/4) and a T3-rtx timer (RFC 4960 §6.3.2 R1-R3).
//! - Send permission per destination (paper eq. 1, RFC 4960 §6.1 A-B): OUT < CWND, and the peer's
//!   window RWND = a_rwnd - bytes outstanding to all destinations (RFC 4960 §6.2.1 D) holds the
//!   packet, except that one packet may always be in flight when nothing is (§6.1 A). Marked chunks
//!   of every destination go before any new data (§6.1 C) and count against the same windows, so the
//!   association never has more than RBUF bytes outstanding.
//! - Scheduler: new data goes to the destinations with room in a fixed round-robin order, one packet
//!   per turn, starting after the destination that sent last (CMT's default, Iyengar et al. §2).
//! - SACK: the receiver SACKs every packet (paper rule 3, A9) with its cumulative TSN and all its gap
//!   blocks. The blocks travel as a reference into the association's arrival log (see
//!   `receiver::ArrivalLog`): SACK k covers every TSN the receiver accepted up to its k-th
//!   acceptance, which is exactly the set its cumulative TSN and gap blocks describe, so the sender
//!   learns from SACK k what SCTP's blocks would tell it and nothing more; a SACK older than one
//!   already processed is dropped (RFC 4960 §6.2.1). No block list is built per packet.
//! - Split fast retransmit (SFR, Iyengar et al. §3.1): a TSN's missing count rises only when a later
//!   TSN sent to the same destination is newly acknowledged; at the threshold (model 4, RFC 3) the
//!   TSN is lost and retransmitted to the same destination (A10). A TSN is fast-retransmitted once
//!   (a lost fast retransmission waits for T3); one resent by T3 starts a new missing count and can
//!   be fast-retransmitted (RFC 4960 §7.2.4 step 5 bars only fast-retransmitted TSNs). Resending a
//!   destination's lowest outstanding TSN restarts its T3 timer (step 4). Reports reach first
//!   transmissions through a per-destination strike frontier (the `thr` largest newly acked highs),
//!   so a SACK's work is proportional to the TSNs it declares lost, not to the window.
//! - Model mode caps each window at W = floor(RBUF/MTU) packets (paper §3.1, the chain's cap); RFC
//!   mode lets §7.2.1 grow a full window of W packets once more.
//! - Cwnd update for CMT (CUC, Iyengar et al. §3.2): a destination's window grows when its
//!   pseudo-cumulative ack (its lowest unacknowledged TSN) advances, by the bytes newly acknowledged
//!   on it, cumulatively or by gap blocks; growth is applied before reductions (RFC 4960 §7.2.4 note).
//! - Fast recovery per destination: one reduction per window; it ends when the destination's
//!   pseudo-cumulative ack passes the highest TSN sent to it at the loss (RFC 4960 §7.2.4).
//! - T3-rtx expiry (RFC 4960 §6.3.3): CWND = 1 MTU, every TSN outstanding to that destination is
//!   marked for retransmission (the earliest goes at once, restarting the timer), RTO doubles up to
//!   RTO_max. The timer runs only while something is outstanding to its destination (R1-R2).
//! - RTO: model mode 3 SRTT with no minimum and no rttvar term (paper eq. 10 reading, A9), RTT
//!   sampled on every SACK from the echoed send time of the TSN that triggered it (Karn: never a
//!   retransmitted TSN); RFC mode RFC 4960 §6.3.1 (SRTT + 4 RTTVAR in [RTO.Min 1 s, RTO.Max]), one
//!   timed TSN per destination per round trip (C4). Both start at RTO.Initial = 3 s; a new sample
//!   clears the back-off.
//! - Rounds (specs/002-cmt.md A12): per destination, a round starts when the first packet of the
//!   previous round is acknowledged (or the T3 timer expires); data packets carry it in
//!   `Packet::round`, with `Packet::RETX` on retransmissions.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use ccscope_cc::common::RttEstimator;
use ccscope_cc::window::sctp::{Mode, Params as SctpParams, SackUpdate, Sctp};
use ccscope_core::{Dur, Time};
use ccscope_net::{Ack, Packet};

use super::receiver::ArrivalLog;
use super::window_mgmt::{Managed, WindowManagement};

/// RFC 4960 §15: RTO.Initial.
const RTO_INITIAL: Dur = Dur::from_ms(3000);
/// RFC 4960 §15: RTO.Min (RFC mode only; model mode has no minimum).
const RTO_MIN: Dur = Dur::from_ms(1000);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Sent and not yet acknowledged nor marked: counted in OUT.
    Outstanding,
    Acked,
    /// Marked for retransmission (lost): not in OUT until resent.
    Marked,
}

#[derive(Clone, Copy, Debug)]
struct Chunk {
    sent: Time,
    dest: u8,
    state: State,
    missing: u8,
    retransmitted: bool,
    /// Fast-retransmitted, so ineligible for another fast retransmit (RFC 4960 §7.2.4 step 5).
    fast_rtx: bool,
    /// TSN distance to the previous TSN sent to the same destination at the same instant (a packet
    /// pair), 0 if none.
    pair_gap: u32,
}

/// One destination address: its controller, OUT, timers and counters.
pub struct Dest {
    pub cc: Sctp,
    /// Bytes outstanding to it (OUT).
    pub out: u64,
    /// TSNs first sent to it and not known to be acknowledged, lowest first (front pruned lazily).
    pending: VecDeque<u64>,
    /// TSNs marked for retransmission to it, lowest on top.
    retx: BinaryHeap<Reverse<u64>>,
    /// The newly acknowledged TSN highs of the `thr` SACKs with the largest ones, plus one,
    /// largest first (0: none). A first transmission t has `thr` missing reports once the smallest
    /// of them exceeds t + 1, so TSNs below it are lost.
    top_highs: [u64; 4],
    /// First transmissions below this TSN have been struck out (the frontier only moves up).
    strike_frontier: u64,
    /// Retransmitted TSNs still eligible for fast retransmit (retransmitted by T3), counted
    /// one by one: their missing counts restart with the retransmission.
    rtx_watch: VecDeque<u64>,
    pub rtt: RttEstimator,
    backoff: u32,
    t3: Option<Time>,
    /// Fast recovery: the highest TSN sent to it when it began.
    recovery_exit: Option<u64>,
    /// RFC 4960 §7.2.4 step 3: the first retransmission after a fast retransmit ignores cwnd.
    fast_rtx_now: bool,
    round: u32,
    round_first: Option<u64>,
    /// RFC mode: the TSN whose RTT is being measured (RFC 4960 §6.3.1 C4).
    timed: Option<u64>,
    /// (TSN, time) of the last new TSN sent to it.
    last_send: Option<(u64, Time)>,
    /// (TSN, time) of the last SACK triggered by a TSN sent to it.
    last_sack: Option<(u64, Time)>,
    /// When it last sent a retransmission (Karn for stale SACKs, see `sample_stale`).
    last_retx_at: Option<Time>,
    /// Largest packet-pair bottleneck estimate, bytes per second.
    btl_rate: f64,
    cwnd_area: f64,
    area_since: Time,
    pub sent: u64,
    pub retransmissions: u64,
    /// Fast retransmit events: SACKs that declared at least one of its TSNs lost.
    pub fast_retransmits: u64,
    /// TSNs those events declared lost.
    pub fast_retransmitted_tsns: u64,
    pub timeouts: u64,
}

impl Dest {
    fn new(p: &SctpParams) -> Dest {
        Dest {
            cc: Sctp::new(p.clone()),
            out: 0,
            pending: VecDeque::with_capacity(64),
            retx: BinaryHeap::with_capacity(16),
            top_highs: [0; 4],
            strike_frontier: 0,
            rtx_watch: VecDeque::with_capacity(16),
            rtt: RttEstimator::default(),
            backoff: 0,
            t3: None,
            recovery_exit: None,
            fast_rtx_now: false,
            round: 1,
            round_first: None,
            timed: None,
            last_send: None,
            last_sack: None,
            last_retx_at: None,
            btl_rate: 0.0,
            cwnd_area: 0.0,
            area_since: Time::ZERO,
            sent: 0,
            retransmissions: 0,
            fast_retransmits: 0,
            fast_retransmitted_tsns: 0,
            timeouts: 0,
        }
    }

    /// The current RTO with back-off (paper rule 5-6; RFC 4960 §6.3.1, §6.3.3 E2).
    pub fn rto(&self, mode: Mode, max: Dur) -> Dur {
        let base = match (mode, self.rtt.srtt(), self.rtt.rttvar()) {
            // specs/002-cmt.md A9 (eq. 10 reading): RTO = 3 SRTT, no minimum, no variance term.
            (Mode::Model, Some(s), _) => Dur(3 * s.as_ns()),
            // RFC 4960 §6.3.1 C2-C3 (clock granularity G taken as 0).
            (Mode::Rfc4960, Some(s), Some(v)) => (s + Dur(4 * v.as_ns())).max(RTO_MIN),
            _ => RTO_INITIAL,
        };
        Dur(base.as_ns().saturating_mul(1u64 << self.backoff.min(30))).min(max)
    }

    fn account(&mut self, now: Time) {
        if now > self.area_since {
            self.cwnd_area += self.cc.cwnd_bytes() as f64 * (now - self.area_since).as_ns() as f64;
            self.area_since = now;
        }
    }

    fn sample_rtt(&mut self, rtt: Dur) {
        self.rtt.on_sample(rtt);
        // RFC 4960 §6.3.1 C2/C3: a new measurement recomputes RTO, ending the back-off.
        self.backoff = 0;
    }
}

impl Managed for Dest {
    fn cwnd(&self) -> u64 {
        self.cc.cwnd_bytes()
    }
    fn srtt(&self) -> Option<Dur> {
        self.rtt.srtt()
    }
    /// Packet-pair bottleneck rate (largest seen: paths are constant, paper §4.2) times the minimum RTT.
    fn bdp_bytes(&self) -> Option<u64> {
        let rtt = self.rtt.min()?;
        (self.btl_rate > 0.0).then(|| (self.btl_rate * rtt.as_secs_f64()) as u64)
    }
    fn bandwidth(&self) -> Option<f64> {
        (self.btl_rate > 0.0).then_some(self.btl_rate)
    }
    fn shrink(&mut self, bytes: u64) -> u64 {
        self.cc.shrink(bytes)
    }
}

/// Per-destination results at the end of a run.
#[derive(Clone, Copy, Debug, Default)]
pub struct CmtPathReport {
    pub retransmissions: u64,
    /// Fast retransmit events (SACKs that declared TSNs lost), not TSNs.
    pub fast_retransmits: u64,
    pub timeouts: u64,
    /// Time-averaged congestion window, bytes.
    pub mean_cwnd_bytes: f64,
}

/// How a CMT association is set up.
#[derive(Clone, Debug)]
pub struct CmtConfig {
    pub sctp: SctpParams,
    /// The receiver's shared buffer (RBUF), bytes.
    pub rbuf_bytes: u64,
    pub window_management: WindowManagement,
    /// RTO_max (paper §6.1.1: 60 s).
    pub rto_max: Dur,
}

pub struct CmtSender {
    pub flow: u32,
    pub active: bool,
    /// Always `None`: the association's application is bulk.
    pub plan: Option<crate::traffic::TransferPlan>,
    pub packet_bytes: u32,
    mode: Mode,
    rbuf: u64,
    wm: WindowManagement,
    rto_max: Dur,
    pub dests: Vec<Dest>,
    /// Cumulative TSN ack point + 1: the lowest TSN not acknowledged.
    cum: u64,
    next_tsn: u64,
    /// Chunks from `cum` to `next_tsn`.
    ring: VecDeque<Chunk>,
    /// The peer's last advertised receive window (a_rwnd), bytes.
    a_rwnd: u64,
    /// Bytes outstanding to all destinations.
    out_total: u64,
    /// Round-robin position: the destination considered first.
    rr: usize,
    /// Receiver acceptances covered by the SACKs processed so far.
    arrivals_seen: u64,
    // Per-SACK scratch, one entry per destination (allocated once).
    newly: Vec<u64>,
    highest: Vec<Option<u64>>,
    out_before: Vec<u64>,
    pcum_before: Vec<Option<u64>>,
    lost_now: Vec<bool>,
    start: Time,
    pub sent: u64,
    pub retransmitted: u64,
    /// TSNs marked lost (missing reports or T3 expiry).
    pub lost: u64,
    /// T3-rtx expiries.
    pub rtos: u64,
    /// Fast-recovery entries plus T3 expiries.
    pub loss_events: u64,
    /// Largest bytes outstanding to all destinations after any event (the RBUF invariant).
    pub max_outstanding: u64,
    /// Largest sum of the destinations' windows after any event.
    pub max_cwnd_sum: u64,
    /// Chunks visited by missing-report processing (the per-SACK work, for its test).
    strike_steps: u64,
    /// Window management diagnostics: growth asked for and denied, window taken from others (bytes).
    wm_denied: u64,
    wm_taken: u64,
    /// Time with sum(CWND) + one MTU > RBUF (the buffer full for window management), ns.
    full_ns: u64,
    /// Time with a destination's window open but the peer's window (rwnd) holding it back, ns.
    rwnd_blocked_ns: u64,
    rwnd_blocked: bool,
    accounted_to: Time,
}

impl CmtSender {
    pub fn new(flow: u32, packet_bytes: u32, n_paths: usize, cfg: CmtConfig) -> CmtSender {
        let n = n_paths.max(1);
        let mut dests: Vec<Dest> = (0..n).map(|_| Dest::new(&cfg.sctp)).collect();
        if cfg.sctp.mode == Mode::Model {
            // Paper §3.1 and the chain's cap (§4.3, footnote 8): a window never passes W = floor(r/MTU)
            // packets. RFC 4960 alone lets it reach that plus one MTU (§7.2.1 growth on a full window).
            let mtu = cfg.sctp.mtu_bytes as u64;
            for d in &mut dests {
                d.cc.set_max_cwnd(cfg.rbuf_bytes / mtu * mtu);
            }
        }
        if cfg.window_management.is_on() {
            // Window management keeps sum(CWND) <= RBUF from the start.
            for d in &mut dests {
                d.cc.cap_initial(cfg.rbuf_bytes / n as u64);
            }
        }
        CmtSender {
            flow,
            active: false,
            plan: None,
            packet_bytes,
            mode: cfg.sctp.mode,
            rbuf: cfg.rbuf_bytes,
            wm: cfg.window_management,
            rto_max: cfg.rto_max,
            dests,
            cum: 0,
            next_tsn: 0,
            ring: VecDeque::with_capacity(256),
            // The buffer announced at association setup (RFC 4960 §5.1 a_rwnd in INIT).
            a_rwnd: cfg.rbuf_bytes,
            out_total: 0,
            rr: 0,
            arrivals_seen: 0,
            newly: vec![0; n],
            highest: vec![None; n],
            out_before: vec![0; n],
            pcum_before: vec![None; n],
            lost_now: vec![false; n],
            start: Time::ZERO,
            sent: 0,
            retransmitted: 0,
            lost: 0,
            rtos: 0,
            loss_events: 0,
            max_outstanding: 0,
            max_cwnd_sum: 0,
            strike_steps: 0,
            wm_denied: 0,
            wm_taken: 0,
            full_ns: 0,
            rwnd_blocked_ns: 0,
            rwnd_blocked: false,
            accounted_to: Time::ZERO,
        }
    }

    pub fn start(&mut self, now: Time) {
        self.active = true;
        self.start = now;
        self.accounted_to = now;
        for d in &mut self.dests {
            d.area_since = now;
        }
        self.note_windows();
    }

    pub fn in_flight(&self) -> u32 {
        (self.out_total / self.packet_bytes.max(1) as u64) as u32
    }

    pub fn outstanding_bytes(&self) -> u64 {
        self.out_total
    }

    /// The destinations' windows together, in packets.
    pub fn cwnd_packets(&self) -> u32 {
        (self.cwnd_sum() / self.packet_bytes.max(1) as u64) as u32
    }

    fn cwnd_sum(&self) -> u64 {
        self.dests.iter().map(|d| d.cc.cwnd_bytes()).sum()
    }

    fn note_windows(&mut self) {
        self.max_cwnd_sum = self.max_cwnd_sum.max(self.cwnd_sum());
        self.max_outstanding = self.max_outstanding.max(self.out_total);
    }

    fn account(&mut self, now: Time) {
        for d in &mut self.dests {
            d.account(now);
        }
        // Windows and the rwnd state change only at SACKs and timeouts, which all call this first.
        if now > self.accounted_to {
            let dt = (now - self.accounted_to).as_ns();
            if self.cwnd_sum() + self.packet_bytes as u64 > self.rbuf {
                self.full_ns += dt;
            }
            if self.rwnd_blocked {
                self.rwnd_blocked_ns += dt;
            }
            self.accounted_to = now;
        }
    }

    pub fn timeout_deadline(&self) -> Option<Time> {
        self.dests.iter().filter_map(|d| d.t3).min()
    }

    fn chunk(&mut self, tsn: u64) -> &mut Chunk {
        &mut self.ring[(tsn - self.cum) as usize]
    }

    /// Send what the windows allow, round-robin over the destinations.
    pub fn try_send(&mut self, now: Time, out: &mut Vec<Packet>) -> Option<Time> {
        if !self.active {
            return None;
        }
        let n = self.dests.len();
        // RFC 4960 §6.1 C: marked chunks of every destination go before anyone's new data.
        for new_data in [false, true] {
            'turns: loop {
                for k in 0..n {
                    let d = (self.rr + k) % n;
                    if let Some(p) = self.send_one(now, d, new_data) {
                        out.push(p);
                        self.rr = (d + 1) % n;
                        continue 'turns;
                    }
                }
                break;
            }
        }
        // Blocked by the peer's window: some destination has window room the rwnd does not allow.
        let pkt = self.packet_bytes as u64;
        self.rwnd_blocked = self.out_total > 0
            && self.out_total + pkt > self.a_rwnd
            && self.dests.iter().any(|d| d.out < d.cc.cwnd_bytes());
        self.note_windows();
        None
    }

    /// One packet to destination `d` (a retransmission, or new data if `new_data`), if its window
    /// and the peer's allow.
    fn send_one(&mut self, now: Time, d: usize, new_data: bool) -> Option<Packet> {
        let pkt = self.packet_bytes as u64;
        // RFC 4960 §6.1 A and §6.2.1 D: the peer's window, less what is outstanding, must hold it.
        if self.out_total > 0 && self.out_total + pkt > self.a_rwnd {
            return None;
        }
        let cum = self.cum;
        let dest = &mut self.dests[d];
        while let Some(&Reverse(t)) = dest.retx.peek() {
            if t < cum || self.ring[(t - cum) as usize].state != State::Marked {
                dest.retx.pop();
            } else {
                break;
            }
        }
        // Paper eq. 1, RFC 4960 §6.1 B: OUT < CWND.
        let cwnd_ok = dest.out < dest.cc.cwnd_bytes();
        if let Some(&Reverse(t)) = dest.retx.peek() {
            // RFC 4960 §6.1 C: marked chunks go before new data.
            if !(cwnd_ok || dest.fast_rtx_now) {
                return None;
            }
            dest.retx.pop();
            dest.fast_rtx_now = false;
            return Some(self.transmit(now, d, t, true));
        }
        if !cwnd_ok || !new_data {
            return None;
        }
        let t = self.next_tsn;
        Some(self.transmit(now, d, t, false))
    }

    fn transmit(&mut self, now: Time, d: usize, tsn: u64, retx: bool) -> Packet {
        let pkt = self.packet_bytes as u64;
        let rto = self.dests[d].rto(self.mode, self.rto_max);
        if retx {
            let c = self.chunk(tsn);
            c.state = State::Outstanding;
            c.sent = now;
            c.retransmitted = true;
            // Reports against the earlier transmission do not count for this one.
            c.missing = 0;
            let watch = !c.fast_rtx;
            self.retransmitted += 1;
            self.prune(d);
            let dest = &mut self.dests[d];
            dest.last_retx_at = Some(now);
            if watch {
                dest.rtx_watch.push_back(tsn);
            }
            // RFC 4960 §7.2.4 step 4: retransmitting the first outstanding chunk restarts T3-rtx.
            if dest.pending.front() == Some(&tsn) {
                dest.t3 = Some(now + rto);
            }
        } else {
            let dest = &mut self.dests[d];
            let pair_gap = match dest.last_send {
                Some((prev, at)) if at == now => (tsn - prev).min(u32::MAX as u64) as u32,
                _ => 0,
            };
            dest.last_send = Some((tsn, now));
            dest.pending.push_back(tsn);
            if dest.round_first.is_none() {
                dest.round_first = Some(tsn);
            }
            if self.mode == Mode::Rfc4960 && dest.timed.is_none() {
                dest.timed = Some(tsn);
            }
            self.ring.push_back(Chunk {
                sent: now,
                dest: d as u8,
                state: State::Outstanding,
                missing: 0,
                retransmitted: false,
                fast_rtx: false,
                pair_gap,
            });
            self.next_tsn += 1;
        }
        self.sent += 1;
        self.out_total += pkt;
        let dest = &mut self.dests[d];
        dest.out += pkt;
        dest.sent += 1;
        if retx {
            dest.retransmissions += 1;
        }
        // RFC 4960 §6.3.2 R1: start the destination's timer if it is not running.
        if dest.t3.is_none() {
            dest.t3 = Some(now + rto);
        }
        let mut p = Packet::data(self.flow, tsn, self.packet_bytes, now);
        p.path = d as u8;
        p.round = dest.round | if retx { Packet::RETX } else { 0 };
        p
    }

    /// A SACK arrived. `log` is the association's arrival log, which this SACK references.
    pub fn on_sack(
        &mut self,
        now: Time,
        ack: &Ack,
        log: &mut ArrivalLog,
        out: &mut Vec<Packet>,
    ) -> Option<Time> {
        let k = ack.arrivals;
        if k <= self.arrivals_seen {
            // RFC 4960 §6.2.1: a SACK older than one already processed is dropped. Model mode still
            // times its trigger (A9: a sample per SACK): when a faster path's SACKs overtake a slower
            // one's, that destination would otherwise never be timed, nor its T3 back-off cleared.
            if self.mode == Mode::Model {
                self.sample_stale(now, ack);
            }
            return self.try_send(now, out);
        }
        self.account(now);
        let pkt = self.packet_bytes as u64;
        self.a_rwnd = if ack.rwnd == Ack::RWND_UNLIMITED {
            u64::MAX
        } else {
            ack.rwnd as u64
        };
        for (d, dest) in self.dests.iter().enumerate() {
            self.newly[d] = 0;
            self.highest[d] = None;
            self.out_before[d] = dest.out;
            self.pcum_before[d] = dest.pending.front().copied();
            self.lost_now[d] = false;
        }
        // The TSN that triggered this SACK: (destination, retransmitted, pair gap).
        let mut trigger = None;
        for i in self.arrivals_seen..k {
            let t = log.get(i);
            if t < self.cum {
                continue;
            }
            let idx = (t - self.cum) as usize;
            let c = self.ring[idx];
            if c.state == State::Acked {
                continue;
            }
            let d = c.dest as usize;
            let dest = &mut self.dests[d];
            if c.state == State::Outstanding {
                dest.out -= pkt;
                self.out_total -= pkt;
            }
            self.ring[idx].state = State::Acked;
            self.newly[d] += pkt;
            self.highest[d] = Some(self.highest[d].map_or(t, |h| h.max(t)));
            // A12: the first packet of the round is acknowledged: the next round begins.
            if dest.round_first == Some(t) {
                dest.round = (dest.round + 1) & !Packet::RETX;
                dest.round_first = None;
            }
            if dest.timed == Some(t) {
                dest.timed = None;
                if !c.retransmitted {
                    dest.sample_rtt(now - c.sent);
                }
            }
            if t == ack.seq {
                trigger = Some((d, c));
            }
        }
        log.release(k);
        self.arrivals_seen = k;
        while self.ring.front().is_some_and(|c| c.state == State::Acked) {
            self.ring.pop_front();
            self.cum += 1;
        }
        debug_assert_eq!(
            self.cum,
            ack.ack_cum.min(self.next_tsn),
            "the log and the cumulative TSN agree"
        );
        if let Some((d, c)) = trigger {
            self.on_trigger(now, ack, d, c);
        }
        let thr = self.mode.missing_threshold();
        for d in 0..self.dests.len() {
            if self.newly[d] == 0 {
                continue;
            }
            self.prune(d);
            let dest = &mut self.dests[d];
            let pcum = dest.pending.front().copied();
            let advanced = self.pcum_before[d].is_some() && pcum != self.pcum_before[d];
            // RFC 4960 §7.2.4: fast recovery ends once the exit point is acknowledged (per destination).
            if dest
                .recovery_exit
                .is_some_and(|rp| pcum.is_none_or(|p| p > rp))
            {
                dest.recovery_exit = None;
                dest.cc.on_recovery_exit();
            }
            // Growth first (RFC 4960 §7.2.4 note), through window management.
            let u = SackUpdate {
                newly_acked: self.newly[d],
                cumack_advanced: advanced,
                flight_before: self.out_before[d],
                flight_after: dest.out,
            };
            let want = dest.cc.on_sack(&u);
            let mtu = dest.cc.mtu();
            let others: u64 = self.cwnd_sum() - self.dests[d].cc.cwnd_bytes();
            let granted = self.wm.grant(d, want, self.rbuf, mtu, &mut self.dests);
            self.wm_denied += want - granted;
            self.wm_taken += others - (self.cwnd_sum() - self.dests[d].cc.cwnd_bytes());
            let dest = &mut self.dests[d];
            dest.cc.grow(granted);
            // RFC 4960 §6.3.2 R2-R3: stop the timer when nothing is outstanding, else restart it
            // when the earliest outstanding TSN was acknowledged.
            if dest.out == 0 {
                dest.t3 = None;
            } else if advanced {
                dest.t3 = Some(now + dest.rto(self.mode, self.rto_max));
            }
            self.missing_reports(d, thr);
        }
        for d in 0..self.dests.len() {
            let dest = &mut self.dests[d];
            if self.lost_now[d] {
                // One fast retransmit event per SACK and destination (Linux net/sctp/outqueue.c
                // sctp_mark_missing: one sctp_retransmit(FAST_RTX) per transport per SACK).
                dest.fast_retransmits += 1;
            }
            if self.lost_now[d] && dest.recovery_exit.is_none() {
                // Paper rule 4, one halving per window per destination (RFC 4960 §7.2.3-7.2.4).
                dest.cc.on_fast_retransmit();
                dest.recovery_exit = dest.pending.back().copied();
                dest.fast_rtx_now = true;
                self.loss_events += 1;
            }
            if dest.out == 0 && dest.retx.is_empty() {
                dest.t3 = None;
            }
        }
        self.note_windows();
        self.try_send(now, out)
    }

    /// Model mode: the RTT sample of a stale SACK, whose trigger is already acknowledged. Karn as in
    /// `on_trigger`: a TSN still held must be a first transmission; one gone from the ring counts
    /// as one if it was sent after the destination's last retransmission.
    fn sample_stale(&mut self, now: Time, ack: &Ack) {
        let d = ack.path as usize;
        let held = ack
            .seq
            .checked_sub(self.cum)
            .and_then(|i| self.ring.get(i as usize));
        let Some(dest) = self.dests.get_mut(d) else {
            return;
        };
        let first = match held {
            Some(c) => c.dest as usize == d && !c.retransmitted,
            None => dest.last_retx_at.is_none_or(|t| ack.sent > t),
        };
        if first && now > ack.sent {
            dest.sample_rtt(now - ack.sent);
        }
    }

    /// RTT (model mode) and packet-pair samples from the TSN that triggered a SACK.
    fn on_trigger(&mut self, now: Time, ack: &Ack, d: usize, c: Chunk) {
        let dest = &mut self.dests[d];
        // Karn: a retransmitted TSN's echo is ambiguous.
        if self.mode == Mode::Model && !c.retransmitted {
            dest.sample_rtt(now - ack.sent);
        }
        if c.pair_gap > 0 && !c.retransmitted {
            if let Some((prev, at)) = dest.last_sack {
                if prev + c.pair_gap as u64 == ack.seq && now > at {
                    let rate = self.packet_bytes as f64 / (now - at).as_secs_f64();
                    dest.btl_rate = dest.btl_rate.max(rate);
                }
            }
        }
        dest.last_sack = Some((ack.seq, now));
    }

    /// Drop acknowledged TSNs from the front of destination `d`'s pending list.
    fn prune(&mut self, d: usize) {
        let cum = self.cum;
        let dest = &mut self.dests[d];
        while let Some(&t) = dest.pending.front() {
            if t < cum || self.ring[(t - cum) as usize].state == State::Acked {
                dest.pending.pop_front();
            } else {
                break;
            }
        }
    }

    /// SFR: every outstanding TSN sent to `d` below the highest TSN of `d` this SACK newly
    /// acknowledged gets a missing report; at `thr` reports it is marked for retransmission.
    /// First transmissions are counted through the strike frontier (work proportional to the TSNs
    /// it passes); T3-retransmitted ones one by one.
    fn missing_reports(&mut self, d: usize, thr: u8) {
        let Some(h) = self.highest[d] else { return };
        let cum = self.cum;
        let k = thr.clamp(1, 4) as usize;
        let dest = &mut self.dests[d];
        // Insert h + 1 into the k largest highs (sorted, largest first).
        let mut v = h + 1;
        for slot in dest.top_highs[..k].iter_mut() {
            if v > *slot {
                std::mem::swap(slot, &mut v);
            }
        }
        let frontier = dest.top_highs[k - 1].saturating_sub(1);
        if frontier > dest.strike_frontier {
            let from = dest.strike_frontier.max(cum);
            // In order (the usual case) nothing pending lies below `from`: skip the search.
            let start = match dest.pending.front() {
                Some(&f) if f < from => dest.pending.partition_point(|&t| t < from),
                _ => 0,
            };
            for i in start..dest.pending.len() {
                let t = dest.pending[i];
                if t >= frontier {
                    break;
                }
                self.strike_steps += 1;
                let c = &mut self.ring[(t - cum) as usize];
                if c.state == State::Outstanding && !c.retransmitted {
                    c.missing = thr;
                    Self::mark_fast(c, t, dest, &mut self.out_total, self.packet_bytes as u64);
                    self.lost += 1;
                    self.lost_now[d] = true;
                }
            }
            dest.strike_frontier = frontier;
        }
        // RFC 4960 §7.2.4 step 5 bars only fast-retransmitted TSNs: a T3 retransmission can be struck.
        let mut i = 0;
        while i < dest.rtx_watch.len() {
            let t = dest.rtx_watch[i];
            self.strike_steps += 1;
            let keep = t >= cum && {
                let c = &mut self.ring[(t - cum) as usize];
                if c.state != State::Outstanding || c.fast_rtx {
                    false
                } else if t < h {
                    c.missing = c.missing.saturating_add(1);
                    if c.missing >= thr {
                        Self::mark_fast(c, t, dest, &mut self.out_total, self.packet_bytes as u64);
                        self.lost += 1;
                        self.lost_now[d] = true;
                        false
                    } else {
                        true
                    }
                } else {
                    true
                }
            };
            if keep {
                i += 1;
            } else {
                dest.rtx_watch.swap_remove_back(i);
            }
        }
    }

    /// Mark chunk `t` (outstanding to `dest`) lost by missing reports: out of OUT, queued for
    /// retransmission, and ineligible for another fast retransmit (RFC 4960 §7.2.4 steps 1, 5).
    fn mark_fast(c: &mut Chunk, t: u64, dest: &mut Dest, out_total: &mut u64, pkt: u64) {
        c.state = State::Marked;
        c.fast_rtx = true;
        dest.out -= pkt;
        *out_total -= pkt;
        dest.retx.push(Reverse(t));
        dest.fast_retransmitted_tsns += 1;
    }

    /// The transport's timer: every destination whose T3-rtx expired.
    pub fn on_timeout(&mut self, now: Time, out: &mut Vec<Packet>) -> Option<Time> {
        self.account(now);
        for d in 0..self.dests.len() {
            if self.dests[d].t3.is_some_and(|t| t <= now) {
                if self.dests[d].out > 0 {
                    self.expire(d);
                } else {
                    // RFC 4960 §6.3.2 R2: nothing outstanding to it (what is marked waits for the
                    // peer's window), so no timer: R1 starts it with the next transmission.
                    self.dests[d].t3 = None;
                }
            }
        }
        self.note_windows();
        self.try_send(now, out)
    }

    /// RFC 4960 §6.3.3 E1-E3 and §7.2.3 for destination `d`.
    fn expire(&mut self, d: usize) {
        let pkt = self.packet_bytes as u64;
        self.prune(d);
        let cum = self.cum;
        let dest = &mut self.dests[d];
        dest.cc.on_t3_expiry();
        dest.timeouts += 1;
        self.rtos += 1;
        self.loss_events += 1;
        for &t in dest.pending.iter() {
            let c = &mut self.ring[(t - cum) as usize];
            if c.state == State::Outstanding {
                c.state = State::Marked;
                dest.out -= pkt;
                self.out_total -= pkt;
                dest.retx.push(Reverse(t));
                self.lost += 1;
            }
        }
        debug_assert_eq!(dest.out, 0);
        dest.recovery_exit = None;
        dest.fast_rtx_now = false;
        dest.timed = None;
        // A12: a timeout ends the round.
        dest.round = (dest.round + 1) & !Packet::RETX;
        dest.round_first = None;
        // E2: the RTO doubles (up to RTO_max); E3: the timer restarts with the retransmission
        // that follows (R1), so it never runs while nothing is outstanding to this destination.
        dest.backoff = dest.backoff.saturating_add(1);
        dest.t3 = None;
    }

    /// Per-destination results over [start, end].
    pub fn path_reports(&self, end: Time) -> Vec<CmtPathReport> {
        let span = end.since(self.start).as_ns() as f64;
        self.dests
            .iter()
            .map(|d| {
                let area =
                    d.cwnd_area + d.cc.cwnd_bytes() as f64 * end.since(d.area_since).as_ns() as f64;
                CmtPathReport {
                    retransmissions: d.retransmissions,
                    fast_retransmits: d.fast_retransmits,
                    timeouts: d.timeouts,
                    mean_cwnd_bytes: if span > 0.0 && self.active {
                        area / span
                    } else {
                        d.cc.cwnd_bytes() as f64
                    },
                }
            })
            .collect()
    }

    /// Association counters for the flow's results.
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        let fast: u64 = self.dests.iter().map(|d| d.fast_retransmits).sum();
        let tsns: u64 = self.dests.iter().map(|d| d.fast_retransmitted_tsns).sum();
        vec![
            ("fast_retransmits", fast),
            ("fast_retransmitted_tsns", tsns),
            ("timeouts", self.rtos),
            ("loss_events", self.loss_events),
            ("max_outstanding_bytes", self.max_outstanding),
            ("max_cwnd_sum_bytes", self.max_cwnd_sum),
            ("wm_denied_bytes", self.wm_denied),
            ("wm_taken_bytes", self.wm_taken),
            ("cwnd_sum_full_ms", self.full_ns / 1_000_000),
            ("rwnd_blocked_ms", self.rwnd_blocked_ns / 1_000_000),
        ]
    }

    pub fn window_management(&self) -> &WindowManagement {
        &self.wm
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::{Receiver, RecvBuffer};

    const PKT: u32 = 1500;

    /// A `mode` association over `n` destinations and its receiver, RBUF `rbuf` bytes.
    fn assoc_in(mode: Mode, n: usize, rbuf: u64) -> (CmtSender, Receiver) {
        let cfg = CmtConfig {
            sctp: SctpParams {
                mode,
                ..SctpParams::default()
            },
            rbuf_bytes: rbuf,
            window_management: WindowManagement::None,
            rto_max: Dur::from_ms(60_000),
        };
        let s = CmtSender::new(0, PKT, n, cfg);
        let r = Receiver::new(true, 76)
            .with_buffer(RecvBuffer::new(Some(rbuf), None))
            .with_arrival_log();
        (s, r)
    }

    fn ms(n: u64) -> Time {
        Time(n * 1_000_000)
    }

    /// `assoc(n, rbuf)` started at time 0, with what it sent first.
    fn started(n: usize, rbuf: u64) -> (CmtSender, Receiver, Vec<Packet>) {
        started_in(Mode::Model, n, rbuf)
    }

    fn started_in(mode: Mode, n: usize, rbuf: u64) -> (CmtSender, Receiver, Vec<Packet>) {
        let (mut s, r) = assoc_in(mode, n, rbuf);
        let mut out = Vec::new();
        s.start(Time::ZERO);
        s.try_send(Time::ZERO, &mut out);
        (s, r, out)
    }

    /// The receiver gets `p` at `now` and its SACK reaches the sender at once; returns what the
    /// sender sent in reply.
    fn deliver(s: &mut CmtSender, r: &mut Receiver, p: &Packet, now: Time) -> Vec<Packet> {
        let ack = r
            .on_data(p, now)
            .0
            .expect("a cmt receiver ACKs every packet");
        let mut out = Vec::new();
        s.on_sack(now, &ack, r.arrival_log().expect("cmt receiver"), &mut out);
        out
    }

    fn tsns(ps: &[Packet]) -> Vec<(u64, u8)> {
        ps.iter().map(|p| (p.seq, p.path)).collect()
    }

    #[test]
    fn model_mode_times_a_destination_from_its_sack_even_when_a_faster_paths_sack_came_first() {
        // Destination 0 has the longer path: its TSN 0 arrives after destination 1's TSN 1, and
        // destination 1's later SACK (TSN 3) reaches the sender before TSN 0's own SACK, which is
        // then stale. Its echo still times TSN 0's round trip exactly: 40 ms (A9: a sample per SACK).
        let (mut s, mut r, out) = started(2, 1_000_000);
        assert_eq!(tsns(&out), [(0, 0), (1, 1), (2, 0), (3, 1)]);
        let a1 = r.on_data(&out[1], ms(5)).0.expect("ACK");
        let a0 = r.on_data(&out[0], ms(20)).0.expect("ACK");
        let a3 = r.on_data(&out[3], ms(21)).0.expect("ACK");
        let mut sent = Vec::new();
        for (at, a) in [(10, &a1), (26, &a3), (40, &a0)] {
            s.on_sack(ms(at), a, r.arrival_log().expect("cmt receiver"), &mut sent);
        }
        assert_eq!(s.dests[0].rtt.srtt(), Some(Dur::from_ms(40)));
        assert_eq!(
            s.dests[1].rtt.srtt(),
            Some(Dur::from_ms(12)),
            "7/8 of 10 ms + 1/8 of 26 ms"
        );
    }

    #[test]
    fn new_data_goes_round_robin_to_destinations_with_room() {
        let (s, _, out) = started(2, 1_000_000);
        // Two MTUs of window per destination (model mode), alternating.
        assert_eq!(tsns(&out), [(0, 0), (1, 1), (2, 0), (3, 1)]);
        assert_eq!(s.outstanding_bytes(), 4 * PKT as u64);
    }

    #[test]
    fn rounds_advance_when_the_rounds_first_packet_is_acked_and_retransmissions_carry_the_retx_bit()
    {
        let (mut s, mut r, out) = started(1, 1_000_000);
        assert_eq!(out.iter().map(|p| p.round).collect::<Vec<_>>(), [1, 1]);
        // TSN 0, the round's first, is acknowledged: what follows belongs to round 2.
        let next = deliver(&mut s, &mut r, &out[0], ms(40));
        assert_eq!(
            next.iter().map(|p| (p.seq, p.round)).collect::<Vec<_>>(),
            [(2, 2), (3, 2)]
        );
        let more = deliver(&mut s, &mut r, &out[1], ms(40));
        assert!(more.iter().all(|p| p.round == 2), "{more:?}");
        // Nothing more arrives: the T3 timer fires and retransmits TSN 2 marked as such, in round 3.
        let t3 = s.timeout_deadline().expect("timer armed");
        let mut rtx = Vec::new();
        s.on_timeout(t3, &mut rtx);
        assert_eq!(rtx.len(), 1);
        assert_eq!((rtx[0].seq, rtx[0].round), (2, 3 | Packet::RETX));
    }

    #[test]
    fn a_hole_needs_four_reports_from_later_tsns_of_its_own_destination() {
        let (mut s, mut r, out) = started(2, 1_000_000);
        // TSN 0 (destination 0) is lost.
        let (mut d0, mut d1): (Vec<Packet>, Vec<Packet>) =
            out[1..].iter().partition(|p| p.path == 0);
        let mut t = 40;
        let mut step = |s: &mut CmtSender,
                        r: &mut Receiver,
                        p: Packet,
                        d0: &mut Vec<Packet>,
                        d1: &mut Vec<Packet>| {
            t += 1;
            let reply = deliver(s, r, &p, ms(t));
            for x in &reply {
                if x.path == 0 {
                    d0.push(*x)
                } else {
                    d1.push(*x)
                }
            }
            reply
        };
        // Forty TSNs of destination 1 arrive above the hole: no missing report for TSN 0.
        for _ in 0..40 {
            let p = d1.remove(0);
            step(&mut s, &mut r, p, &mut d0, &mut d1);
        }
        assert_eq!(s.lost, 0);
        // Later TSNs of destination 0: the fourth declares TSN 0 lost, resent to destination 0.
        let mut resent = None;
        for k in 1..=4 {
            let p = d0.remove(0);
            let reply = step(&mut s, &mut r, p, &mut d0, &mut d1);
            if let Some(x) = reply.iter().find(|x| x.seq == 0) {
                resent = Some((k, x.path, x.round & Packet::RETX != 0));
            }
        }
        assert_eq!(resent, Some((4, 0, true)));
        assert_eq!(
            (s.dests[0].fast_retransmits, s.dests[1].fast_retransmits),
            (1, 0)
        );
        assert!(s.dests[0].cc.in_fast_recovery() && !s.dests[1].cc.in_fast_recovery());
    }

    #[test]
    fn t3_expiry_resends_the_earliest_tsn_and_doubles_the_rto_up_to_the_maximum() {
        let (mut s, _, _) = started(1, 1_000_000);
        // No RTT sample yet: RTO.Initial 3 s, then 6, 12, 24, 48, 60, 60 s.
        let mut now = Time::ZERO;
        for want in [3, 6, 12, 24, 48, 60, 60] {
            let t3 = s.timeout_deadline().expect("armed");
            assert_eq!(t3 - now, Dur::from_ms(want * 1000));
            now = t3;
            let mut rtx = Vec::new();
            s.on_timeout(now, &mut rtx);
            assert_eq!(
                tsns(&rtx),
                [(0, 0)],
                "one MTU of window: the earliest TSN only"
            );
            assert_eq!(s.dests[0].cc.cwnd_bytes(), PKT as u64);
        }
        assert_eq!(s.rtos, 7);
    }

    /// One destination grown by in-order delivery until `n` packets are outstanding; returns them.
    fn grown(n: usize, rbuf: u64) -> (CmtSender, Receiver, Vec<Packet>) {
        let (mut s, mut r, mut flight) = started(1, rbuf);
        let mut t = 0;
        while flight.len() < n {
            t += 1;
            let p = flight.remove(0);
            flight.extend(deliver(&mut s, &mut r, &p, ms(t)));
        }
        (s, r, flight)
    }

    #[test]
    fn model_mode_window_never_passes_w_whole_packets_of_rbuf() {
        // RBUF 7,500 B: W = 5. In-order delivery forever: the window stops at 5 packets, not 6.
        let top = |mode: Mode| {
            let (mut s, mut r, mut flight) = started_in(mode, 1, 7500);
            let mut top = 0;
            for t in 1..200 {
                let p = flight.remove(0);
                flight.extend(deliver(&mut s, &mut r, &p, ms(t)));
                top = top.max(s.dests[0].cc.cwnd_bytes());
                assert!(s.outstanding_bytes() <= 7500);
            }
            top
        };
        assert_eq!(top(Mode::Model), 5 * PKT as u64);
        // RFC 4960 §7.2.1 alone grows a full window once more: past RBUF, below W + 1 MTU.
        let rfc = top(Mode::Rfc4960);
        assert!(rfc > 7500 && rfc <= 6 * PKT as u64, "{rfc}");
    }

    #[test]
    fn fast_retransmit_of_the_first_outstanding_tsn_restarts_t3() {
        let (mut s, mut r, flight) = grown(8, 1_000_000);
        let before = s.timeout_deadline().expect("armed");
        // The lowest outstanding TSN is lost; four later ones arrive at 1 s.
        let lost = flight[0].seq;
        let mut resent = false;
        for p in &flight[1..5] {
            resent |= deliver(&mut s, &mut r, p, ms(1000))
                .iter()
                .any(|x| x.seq == lost);
        }
        assert!(resent && s.dests[0].fast_retransmits == 1);
        // RFC 4960 §7.2.4 step 4: the timer restarts with the retransmission, at 1 s.
        let rto = s.dests[0].rto(Mode::Model, Dur::from_ms(60_000));
        assert_eq!(s.timeout_deadline(), Some(ms(1000) + rto));
        assert!(s.timeout_deadline() > Some(before));
    }

    #[test]
    fn a_tsn_retransmitted_by_t3_can_be_fast_retransmitted() {
        // Four packets outstanding, all lost: T3 marks them and resends the first.
        let (mut s, mut r, flight) = grown(4, 1_000_000);
        let first = flight[0].seq;
        let t3 = s.timeout_deadline().expect("armed");
        let mut out = Vec::new();
        s.on_timeout(t3, &mut out);
        assert_eq!(tsns(&out), [(first, 0)]);
        let mut now = t3;
        let mut next = |s: &mut CmtSender, r: &mut Receiver, p: &Packet| {
            now += Dur::from_ms(40);
            deliver(s, r, p, now)
        };
        // The first arrives; the second retransmission (TSN first + 1) is lost again.
        let mut q: Vec<Packet> = next(&mut s, &mut r, &out[0]);
        let victim = q.remove(0);
        assert_eq!(victim.seq, first + 1);
        assert!(victim.round & Packet::RETX != 0);
        // Later TSNs of the same destination arrive: the fourth report fast-retransmits it.
        let mut resent = None;
        for k in 1..=4 {
            let p = q.remove(0);
            let reply = next(&mut s, &mut r, &p);
            if reply.iter().any(|x| x.seq == victim.seq) {
                resent = Some(k);
            }
            q.extend(reply.into_iter().filter(|x| x.seq != victim.seq));
        }
        assert_eq!(resent, Some(4));
        assert_eq!(s.dests[0].fast_retransmits, 1);
        assert_eq!(s.rtos, 1, "no second timeout was needed");
    }

    #[test]
    fn a_fast_retransmitted_tsn_is_not_fast_retransmitted_again() {
        let (mut s, mut r, flight) = grown(8, 1_000_000);
        let lost = flight[0].seq;
        let mut q: Vec<Packet> = Vec::new();
        let mut rtx = None;
        for p in &flight[1..] {
            for x in deliver(&mut s, &mut r, p, ms(1000)) {
                if x.seq == lost {
                    rtx = Some(x);
                } else {
                    q.push(x);
                }
            }
        }
        assert!(rtx.is_some(), "fast-retransmitted once");
        // The retransmission is lost too; however many later TSNs arrive, only T3 resends it.
        for p in q {
            let reply = deliver(&mut s, &mut r, &p, ms(1100));
            assert!(reply.iter().all(|x| x.seq != lost));
        }
        assert_eq!(s.dests[0].fast_retransmitted_tsns, 1);
    }

    #[test]
    fn fast_retransmits_count_events_not_tsns() {
        // Three consecutive TSNs lost (a correlated loss event) are declared lost by one SACK.
        let (mut s, mut r, flight) = grown(8, 1_000_000);
        for p in &flight[3..] {
            deliver(&mut s, &mut r, p, ms(1000));
        }
        let d = &s.dests[0];
        assert_eq!((d.fast_retransmits, d.fast_retransmitted_tsns), (1, 3));
        assert!(s.counters().contains(&("fast_retransmits", 1)));
        assert!(s.counters().contains(&("fast_retransmitted_tsns", 3)));
    }

    #[test]
    fn missing_report_work_per_sack_does_not_grow_with_the_window() {
        // A hole at the front of a 2,000-packet flight, then every later packet arrives: each
        // SACK must cost O(1) amortised, not a scan of the TSNs below its highest.
        let (mut s, mut r, flight) = grown(2000, 10_000_000);
        let n = flight.len() as u64 - 1;
        for p in &flight[1..] {
            deliver(&mut s, &mut r, p, ms(100_000));
        }
        assert_eq!(s.dests[0].fast_retransmitted_tsns, 1);
        assert!(
            s.strike_steps <= 2 * n,
            "{} steps for {n} SACKs",
            s.strike_steps
        );
    }

    #[test]
    fn rto_is_three_srtt_including_the_queueing_delay_of_the_samples() {
        // Paper eqs. 8 and 10: past the BDP the RTT is CWND/b (queueing included) and RTO = 3 RTT.
        let (mut s, mut r, out) = started(1, 1_000_000);
        deliver(&mut s, &mut r, &out[0], ms(100)); // 100 ms sample: 40 ms path + 60 ms queue
        assert_eq!(
            s.dests[0].rto(Mode::Model, Dur::from_ms(60_000)),
            Dur::from_ms(300)
        );
    }

    #[test]
    fn the_peer_window_caps_what_is_outstanding_in_all() {
        let (mut s, mut r, out) = started(2, 6000);
        assert_eq!(out.len(), 4, "RBUF = 4 packets");
        // TSN 0 lost: the others sit out of order and the window closes to 1500 B, all outstanding.
        for p in &out[1..] {
            assert!(deliver(&mut s, &mut r, p, ms(40)).is_empty());
        }
        assert!(s.outstanding_bytes() <= 6000);
        assert_eq!(s.a_rwnd, 1500);
    }
}
