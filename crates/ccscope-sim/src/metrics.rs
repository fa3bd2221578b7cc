//! Streaming metrics with Mahimahi's and Pantheon's definitions.
//!
//! On the data link, as `mm-throughput-graph` computes them from a link log: throughput = departed
//! bits / (last event - first event); per-packet queueing delay = departure ms - arrival ms; its 95th
//! percentile = sorted[floor(0.95 n)]; signal delay at each millisecond t = the smallest delay of the
//! packets that arrived at t, with milliseconds that saw no arrival backfilled as (value at t+1) + 1.
//! At the receiver, as Pantheon: one-way delay = receive time - send time.
//! All of it is computed as packets pass, in memory bounded by the delay range, not the run length
//! (time-series bins excepted: they are output, and kept only for the flows that ask for them).

use ccscope_core::{Dur, IntHistogram, LogHistogram, Time};

/// Mahimahi's backfilled signal delay, computed on the fly.
///
/// A FIFO link releases packets in arrival order, so arrival milliseconds reach it non-decreasing:
/// a millisecond's value is final once a later one shows up, and the gap below it is filled then.
/// A gap of g milliseconds below a value d is the run d+1..=d+g, recorded as one range in O(1).
#[derive(Clone, Debug, Default)]
pub struct SignalDelay {
    cur: Option<(u64, u64)>,
    /// Milliseconds without arrivals just below `cur`'s (backfilled from it once it is final).
    gap: u64,
    hist: IntHistogram,
}

impl SignalDelay {
    // Always inlined: it runs per departure (or per batched sample), where a call costs as much as its body.
    #[inline(always)]
    pub fn on_departure(&mut self, arrival_ms: u64, delay_ms: u64) {
        match self.cur {
            None => self.cur = Some((arrival_ms, delay_ms)),
            Some((k, d)) if arrival_ms == k => self.cur = Some((k, d.min(delay_ms))),
            Some((k, _)) if arrival_ms > k => {
                Self::finalize(&mut self.hist, self.cur, self.gap);
                self.gap = arrival_ms - k - 1;
                self.cur = Some((arrival_ms, delay_ms));
            }
            // Out of order (not possible on a FIFO link): counted as its own sample.
            Some(_) => self.hist.record(delay_ms),
        }
    }

    // mm-throughput-graph backfills an empty millisecond t as (value at t+1) + 1: the j-th below d is d+j.
    #[inline]
    fn finalize(hist: &mut IntHistogram, cur: Option<(u64, u64)>, gap: u64) {
        if let Some((_, d)) = cur {
            hist.record(d);
            if gap > 0 {
                hist.record_range(d + 1, d + gap);
            }
        }
    }

    /// The histogram of per-millisecond signal delays so far (the open millisecond included).
    pub fn histogram(&self) -> IntHistogram {
        let mut h = self.hist.clone();
        Self::finalize(&mut h, self.cur, self.gap);
        h
    }

    /// The `q` percentile of the per-millisecond signal delays so far (the open millisecond included);
    /// read in place once closed, else from a copy with the open millisecond added.
    pub fn percentile(&self, q: f64) -> Option<u64> {
        match self.cur {
            None => self.hist.percentile(q),
            Some(_) => self.histogram().percentile(q),
        }
    }

    /// Records the open millisecond now, at the end of a run (a departure after it would lose the
    /// backfilled gap below it), so the summary reads the histogram without copying it.
    pub fn close(&mut self) {
        Self::finalize(&mut self.hist, self.cur.take(), self.gap);
        self.gap = 0;
    }

    /// Bytes this statistic holds on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.hist.heap_bytes()
    }
}

/// One time-series bin of one flow (or of the whole link).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimeBin {
    pub ingress_bytes: u64,
    pub departed_bytes: u64,
    pub delivered_bytes: u64,
    pub departures: u64,
    pub queue_delay_sum_ms: u64,
    pub queue_delay_max_ms: u64,
    pub one_way_sum_ns: u64,
    pub one_way_max_ns: u64,
    pub deliveries: u64,
    pub dropped: u64,
    /// Controller window at the end of the bin (packets).
    pub cwnd: u32,
    pub capacity_bytes: u64,
}

/// Time-series bins of `bin_ns` each: bin b covers [b bin_ns, (b+1) bin_ns) and exists once an event
/// fell in it or in a later bin (the vector is as long as the last bin written + 1).
///
/// The current bin's span is kept, so the per-event path compares instead of dividing; time only moves
/// forward within a simulation, a step back is still placed right (by division).
#[derive(Clone, Debug)]
pub struct Bins {
    bin_ns: u64,
    cur: usize,
    /// The span [start_ns, end_ns) of bin `cur`; empty until the first event.
    start_ns: u64,
    end_ns: u64,
    bins: Vec<TimeBin>,
    /// Bins up to the last one a packet event wrote (a window record is not one): the link total's
    /// length when it is derived from one flow's bins ([`FlowStats::link_total`]).
    packet_len: usize,
}

impl Bins {
    pub fn new(bin: Dur) -> Bins {
        Bins {
            bin_ns: bin.as_ns().max(1),
            cur: 0,
            start_ns: 0,
            end_ns: 0,
            bins: Vec::new(),
            packet_len: 0,
        }
    }

    pub fn bin_ns(&self) -> u64 {
        self.bin_ns
    }

    /// The bin holding time `t`.
    #[inline]
    pub fn at(&mut self, t: Time) -> &mut TimeBin {
        let ns = t.as_ns();
        if ns >= self.end_ns || ns < self.start_ns {
            self.seek(ns);
        }
        &mut self.bins[self.cur]
    }

    /// The bin holding time `t`, written by a packet event (arrival, departure, delivery, drop).
    #[inline]
    pub fn at_packet(&mut self, t: Time) -> &mut TimeBin {
        let ns = t.as_ns();
        if ns >= self.end_ns || ns < self.start_ns {
            self.seek(ns);
        }
        self.packet_len = self.packet_len.max(self.cur + 1);
        &mut self.bins[self.cur]
    }

    /// The bins packet events alone would have made: window records left out.
    fn packets_only(&self) -> Bins {
        let mut bins = self.bins[..self.packet_len].to_vec();
        bins.iter_mut().for_each(|b| b.cwnd = 0);
        Bins {
            bin_ns: self.bin_ns,
            cur: 0,
            start_ns: 0,
            end_ns: 0,
            packet_len: bins.len(),
            bins,
        }
    }

    #[cold]
    fn seek(&mut self, ns: u64) {
        let next = !self.bins.is_empty() && ns >= self.end_ns && ns - self.end_ns < self.bin_ns;
        self.cur = if next {
            self.cur + 1
        } else {
            (ns / self.bin_ns) as usize
        };
        self.start_ns = self.cur as u64 * self.bin_ns;
        self.end_ns = self.start_ns.saturating_add(self.bin_ns);
        if self.cur >= self.bins.len() {
            self.bins.resize(self.cur + 1, TimeBin::default());
        }
    }

    pub fn as_slice(&self) -> &[TimeBin] {
        &self.bins
    }

    pub fn into_vec(self) -> Vec<TimeBin> {
        self.bins
    }

    /// Bytes these bins hold on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.bins.capacity() * std::mem::size_of::<TimeBin>()
    }
}

/// Packet samples a flow's histograms take in one batch when its recording is deferred
/// ([`FlowStats::deferred`]): departures (queue and signal delay) and deliveries (one-way delay) share
/// the buffer in arrival order.
pub const PENDING: usize = 64;
/// From this many flows on, each flow's histograms are recorded in batches of [`PENDING`] samples: a
/// flow's packets are then too far apart for its histogram pages to stay cached between them.
pub const DEFER_FROM_FLOWS: usize = 64;
// A pending sample: a delivery's one-way delay (ns) under this bit, or a departure's arrival ms
// (bits 24..63) and queue delay ms (bits 0..24); a value that does not fit is recorded at once.
const DELIVERY: u64 = 1 << 63;
const DELAY_BITS: u32 = 24;
const DELAY_MASK: u64 = (1 << DELAY_BITS) - 1;

/// Running statistics for one flow or for all flows together.
///
/// Without bins its memory is constant in the run's length: counters, and histograms bounded by the
/// range of delays (`IntHistogram`, `LogHistogram`). Fields in declaration order (`repr(C)`), aligned
/// to a cache line: the first line holds the counters a link departure writes (and the pending-sample
/// buffer's pointer), the second what sending, arriving, delivery and a drop write; the histograms,
/// written in batches when deferred and read at the end, come last.
#[repr(C, align(64))]
#[derive(Clone, Debug)]
pub struct FlowStats {
    pub departed: u64,
    pub departed_bytes: u64,
    pub last_ms: u64,
    pub first_ms: Option<u64>,
    /// Time series, kept only when asked for (they grow with the run).
    pub bins: Option<Box<Bins>>,
    /// Samples in `pending` not yet in the histograms.
    pub(crate) n_pending: u32,
    /// Only the bins are kept here: the histograms are another `FlowStats`'s, taken by [`FlowStats::adopt`]
    /// at the end (the link total of a run with one flow measured where the run measures).
    pub bins_only: bool,
    /// Deferred recording only ([`FlowStats::deferred`]): histogram samples wait here and are recorded
    /// [`PENDING`] at a time; boxed so a flow that records directly does not carry the 512 bytes.
    pub(crate) pending: Option<Box<[u64; PENDING]>>,
    /// Rare (a drop): opens the second line.
    pub dropped: u64,
    pub sent: u64,
    pub arrived_link: u64,
    pub delivered: u64,
    pub delivered_bytes: u64,
    /// Distinct packets' bytes delivered in order to the application.
    pub goodput_bytes: u64,
    /// Bytes of data packets delivered on their first transmission (no `Packet::RETX` bit).
    pub first_tx_bytes: u64,
    pub(crate) queue_delay: IntHistogram,
    pub(crate) signal: SignalDelay,
    pub(crate) one_way: LogHistogram,
}

impl Default for FlowStats {
    fn default() -> Self {
        FlowStats {
            departed: 0,
            departed_bytes: 0,
            last_ms: 0,
            first_ms: None,
            bins: None,
            n_pending: 0,
            bins_only: false,
            pending: None,
            sent: 0,
            arrived_link: 0,
            delivered: 0,
            delivered_bytes: 0,
            goodput_bytes: 0,
            first_tx_bytes: 0,
            dropped: 0,
            queue_delay: IntHistogram::default(),
            signal: SignalDelay::default(),
            one_way: LogHistogram::default(),
        }
    }
}

impl FlowStats {
    /// Statistics with time-series bins of width `bin` (`None`: no time series).
    pub fn new(bin: Option<Dur>) -> FlowStats {
        FlowStats {
            bins: bin.map(|b| Box::new(Bins::new(b))),
            ..Default::default()
        }
    }

    /// The same statistics with their histograms recorded in batches (when `defer`): every sample is
    /// kept in order and recorded before any histogram is read ([`FlowStats::flush`]).
    pub fn deferred(mut self, defer: bool) -> FlowStats {
        assert!(self.n_pending == 0, "deferral set before the first sample");
        self.pending = defer.then(|| Box::new([0; PENDING]));
        self
    }

    /// Whether its histogram samples are recorded in batches.
    pub fn is_deferred(&self) -> bool {
        self.pending.is_some()
    }

    /// Records the pending samples, in the order they came.
    #[inline(never)]
    pub fn flush(&mut self) {
        let Some(pending) = self.pending.take() else {
            return;
        };
        for &x in &pending[..self.n_pending as usize] {
            if x & DELIVERY != 0 {
                self.one_way.record(x & !DELIVERY);
            } else {
                self.record_departure(x >> DELAY_BITS, x & DELAY_MASK);
            }
        }
        self.n_pending = 0;
        self.pending = Some(pending);
    }

    #[inline]
    fn record_departure(&mut self, arr_ms: u64, delay: u64) {
        self.queue_delay.record(delay);
        self.signal.on_departure(arr_ms, delay);
    }

    /// Keeps sample `x` for the next batch when recording is deferred (else returns false).
    #[inline]
    fn defer_sample(&mut self, x: u64) -> bool {
        let Some(pending) = &mut self.pending else {
            return false;
        };
        pending[self.n_pending as usize] = x;
        self.n_pending += 1;
        if self.n_pending as usize == PENDING {
            self.flush();
        }
        true
    }

    #[track_caller]
    fn assert_flushed(&self) {
        assert!(
            self.n_pending == 0,
            "flow statistics read before FlowStats::flush"
        );
    }

    /// Queue delays at the link, ms (after [`FlowStats::flush`]).
    pub fn queue_delay(&self) -> &IntHistogram {
        self.assert_flushed();
        &self.queue_delay
    }

    /// Mahimahi's signal delay at the link (after [`FlowStats::flush`]).
    pub fn signal(&self) -> &SignalDelay {
        self.assert_flushed();
        &self.signal
    }

    /// One-way delays to the receiver, ns (after [`FlowStats::flush`]).
    pub fn one_way(&self) -> &LogHistogram {
        self.assert_flushed();
        &self.one_way
    }

    /// The link total of a run whose one flow is measured where the run measures: every statistic is
    /// the flow's, and the bins (when `bins`) are the flow's without its window records.
    pub fn link_total(&mut self, bins: bool) -> FlowStats {
        self.flush();
        let mine = self.bins.take();
        let mut total = self.clone();
        total.bins = if bins {
            mine.as_ref().map(|b| Box::new(b.packets_only()))
        } else {
            None
        };
        total.pending = None;
        self.bins = mine;
        total
    }

    /// Take every statistic but the bins from `other` (see `bins_only`).
    pub fn adopt(&mut self, other: &mut FlowStats) {
        other.flush();
        let theirs = other.bins.take();
        let mine = self.bins.take();
        let pending = self.pending.take();
        *self = other.clone();
        self.pending = pending;
        other.bins = theirs;
        self.bins = mine;
    }

    #[inline]
    fn touch(&mut self, ms: u64) {
        if self.first_ms.is_none() {
            self.first_ms = Some(ms);
        }
        self.last_ms = self.last_ms.max(ms);
    }

    /// The bins so far (empty without bins).
    pub fn bins(&self) -> &[TimeBin] {
        self.bins.as_ref().map_or(&[], |b| b.as_slice())
    }

    /// Records the controller's window (packets) in the bin of `now`, if there are bins.
    #[inline]
    pub fn on_cwnd(&mut self, now: Time, cwnd: u32) {
        if let Some(b) = &mut self.bins {
            b.at(now).cwnd = cwnd;
        }
    }

    #[inline]
    pub fn on_link_arrival(&mut self, now: Time, bytes: u32) {
        self.arrived_link += 1;
        self.touch(now.as_ms_floor());
        if let Some(b) = &mut self.bins {
            b.at_packet(now).ingress_bytes += bytes as u64;
        }
    }

    #[inline]
    pub fn on_drop(&mut self, now: Time) {
        self.dropped += 1;
        if let Some(b) = &mut self.bins {
            b.at_packet(now).dropped += 1;
        }
    }

    #[inline]
    pub fn on_link_departure(&mut self, now: Time, enqueued: Time, bytes: u32) {
        let dep_ms = now.as_ms_floor();
        let arr_ms = enqueued.as_ms_floor();
        let delay = dep_ms - arr_ms;
        self.departed += 1;
        self.departed_bytes += bytes as u64;
        self.touch(dep_ms);
        if !self.bins_only {
            let fits = arr_ms < 1 << (63 - DELAY_BITS) && delay <= DELAY_MASK;
            if !(fits && self.defer_sample(arr_ms << DELAY_BITS | delay)) {
                if self.n_pending != 0 {
                    self.flush();
                }
                self.record_departure(arr_ms, delay);
            }
        }
        if let Some(b) = &mut self.bins {
            let b = b.at_packet(now);
            b.departed_bytes += bytes as u64;
            b.departures += 1;
            b.queue_delay_sum_ms += delay;
            b.queue_delay_max_ms = b.queue_delay_max_ms.max(delay);
        }
    }

    #[inline]
    pub fn on_delivery(&mut self, now: Time, sent: Time, bytes: u32) {
        let owd = now.since(sent).as_ns();
        self.delivered += 1;
        self.delivered_bytes += bytes as u64;
        if !self.bins_only {
            if !(owd < DELIVERY && self.defer_sample(owd | DELIVERY)) {
                if self.n_pending != 0 {
                    self.flush();
                }
                self.one_way.record(owd);
            }
        }
        if let Some(b) = &mut self.bins {
            let b = b.at_packet(now);
            b.delivered_bytes += bytes as u64;
            b.deliveries += 1;
            b.one_way_sum_ns += owd;
            b.one_way_max_ns = b.one_way_max_ns.max(owd);
        }
    }

    /// Bytes these statistics hold on the heap (histograms and bins).
    pub fn heap_bytes(&self) -> usize {
        let bins = self
            .bins
            .as_ref()
            .map_or(0, |b| std::mem::size_of::<Bins>() + b.heap_bytes());
        self.queue_delay.heap_bytes() + self.signal.heap_bytes() + self.one_way.heap_bytes() + bins
    }
}

/// The headline numbers of one flow (or of the link, `flow = None`).
#[derive(Clone, Debug, Default)]
pub struct FlowSummary {
    pub flow: Option<u32>,
    pub controller: String,
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
    /// Packets the sender declared lost (by reordering threshold or timeout).
    pub declared_lost: u64,
    pub duration_s: f64,
    pub throughput_mbps: f64,
    /// Distinct data delivered in order to the application, per second of the flow's duration.
    pub goodput_mbps: f64,
    /// Data packets delivered on their first transmission (retransmissions left out), per second: the
    /// "packets received" of paper 002 eq. 19, whose rounds count no retransmission (§4.3.1).
    pub first_tx_mbps: f64,
    pub retransmissions: u64,
    /// Retransmission-timer expiries (reliable transport).
    pub rtos: u64,
    pub capacity_mbps: f64,
    pub utilization: f64,
    pub queue_delay_p95_ms: Option<f64>,
    pub queue_delay_mean_ms: Option<f64>,
    pub signal_delay_p95_ms: Option<f64>,
    pub one_way_delay_p95_ms: Option<f64>,
    pub one_way_delay_mean_ms: Option<f64>,
    pub loss_rate: f64,
    /// Contest score: throughput (Mbit/s) / 95th-percentile signal delay (s).
    pub score: Option<f64>,
    pub log2_score: Option<f64>,
    /// Transfers (ON periods) completed: every packet ACKed (datagram: ACKed or declared lost).
    pub transfers_done: u64,
    /// Mean flow completion time of the completed transfers, from ON start to the last resolution.
    pub fct_mean_s: Option<f64>,
    /// Transfers begun: the completed ones plus the one in progress at the end, if any.
    pub transfers_started: u64,
    /// Bytes of the completed ON/OFF files (as drawn, before packetisation).
    pub file_bytes_done: u64,
    /// Distinct data delivered in order to the application, bytes.
    pub goodput_bytes: u64,
    /// Mean ON rate of the completed files: their bytes over their summed completion times, Mbit/s.
    pub on_rate_mbps: Option<f64>,
    /// The largest ON/OFF file size drawn, bytes, as drawn (untruncated Pareto: specs/003 §1.2).
    pub largest_file_bytes: Option<f64>,
    /// Draws above `traffic::MAX_FILE_BYTES`, kept at that bound.
    pub files_capped: u64,
    /// The controller's own counters (`Controller::counters`), e.g. the markov walk's out-of-range delays.
    pub counters: Vec<(&'static str, u64)>,
}

impl FlowSummary {
    pub fn from_stats(s: &FlowStats, duration_ms: u64, capacity_mbps: f64) -> FlowSummary {
        let dur_s = duration_ms as f64 / 1000.0;
        let tput = if dur_s > 0.0 {
            s.departed_bytes as f64 * 8.0 / dur_s / 1e6
        } else {
            0.0
        };
        let sig = s.signal().percentile(0.95).map(|v| v as f64);
        let score = sig.filter(|&d| d > 0.0).map(|d| tput / (d / 1000.0));
        FlowSummary {
            sent: s.sent,
            delivered: s.delivered,
            dropped: s.dropped,
            duration_s: dur_s,
            throughput_mbps: tput,
            goodput_mbps: if dur_s > 0.0 {
                s.goodput_bytes as f64 * 8.0 / dur_s / 1e6
            } else {
                0.0
            },
            first_tx_mbps: if dur_s > 0.0 {
                s.first_tx_bytes as f64 * 8.0 / dur_s / 1e6
            } else {
                0.0
            },
            goodput_bytes: s.goodput_bytes,
            capacity_mbps,
            utilization: if capacity_mbps > 0.0 {
                tput / capacity_mbps
            } else {
                0.0
            },
            queue_delay_p95_ms: s.queue_delay().percentile(0.95).map(|v| v as f64),
            queue_delay_mean_ms: s.queue_delay().mean(),
            signal_delay_p95_ms: sig,
            one_way_delay_p95_ms: s.one_way().percentile(0.95).map(|v| v as f64 / 1e6),
            one_way_delay_mean_ms: s.one_way().mean().map(|v| v / 1e6),
            loss_rate: if s.sent > 0 {
                s.dropped as f64 / s.sent as f64
            } else {
                0.0
            },
            score,
            log2_score: score.filter(|&x| x > 0.0).map(f64::log2),
            ..Default::default()
        }
    }
}

/// Jain's fairness index of `xs`: (sum x)^2 / (n sum x^2).
pub fn jain_index(xs: &[f64]) -> Option<f64> {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    (n > 0.0 && s2 > 0.0).then(|| s * s / (n * s2))
}

/// The counters of one link over the run. Conservation: arrivals = departures + dropped + queued
/// (queued counts the packet on the wire), and departures = forwarded + in_pipe.
#[derive(Clone, Debug, Default)]
pub struct LinkSummary {
    pub name: String,
    pub arrivals: u64,
    pub dropped: u64,
    pub departures: u64,
    /// Left the propagation delay for the next link or the endpoint.
    pub forwarded: u64,
    pub queued: u64,
    pub in_pipe: u64,
    pub throughput_mbps: f64,
    pub capacity_mbps: f64,
    pub utilization: f64,
    pub queue_delay_p95_ms: Option<f64>,
    pub queue_delay_mean_ms: Option<f64>,
}

/// The counters of one path of one flow (data sent on it, ACKs returned on it).
#[derive(Clone, Debug, Default)]
pub struct PathSummary {
    pub flow: u32,
    pub path: u8,
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub acks_sent: u64,
    pub acks_delivered: u64,
    pub acks_dropped: u64,
    /// SCTP-CMT: retransmissions sent on it (to that destination).
    pub retransmissions: u64,
    /// SCTP-CMT: TSNs sent on it declared lost by missing reports (split fast retransmit).
    pub fast_retransmits: u64,
    /// SCTP-CMT: expiries of its T3-rtx timer.
    pub timeouts: u64,
    /// SCTP-CMT: time-averaged congestion window, bytes (`None` for other transports).
    pub mean_cwnd_bytes: Option<f64>,
}

/// Everything a run produces.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub total: FlowSummary,
    pub flows: Vec<FlowSummary>,
    /// Every scenario link, in declaration order.
    pub links: Vec<LinkSummary>,
    /// Every (flow, path).
    pub paths: Vec<PathSummary>,
    pub jain_index: Option<f64>,
    pub bin_s: f64,
    /// Per flow, then the whole link last.
    pub bins: Vec<Vec<TimeBin>>,
    pub events: u64,
    pub sim_end_s: f64,
    /// ACK-direction accounting: sent, delivered, dropped, in flight.
    pub acks: (u64, u64, u64, u64),
    /// (time ns, flow, cwnd packets) at every window change, if `cwnd_log` was set.
    pub cwnd: Vec<(u64, u32, u32)>,
    /// (flow, time ns, delay ms, window) training samples recorded by controllers (paper 000 §4.1).
    pub samples: Vec<(u32, u64, u32, u32)>,
    /// Per flow, the ON/OFF periods its application drew (empty unless `traffic = onoff`).
    pub transfers: Vec<Vec<crate::traffic::Period>>,
    /// Per flow, (start s, end s) of each OFF period its application began.
    pub off_periods: Vec<Vec<(f64, f64)>>,
}

impl RunResult {
    /// Every conservation law the counters break, one line each (none in a sound run): per flow and
    /// in total sent = delivered + dropped + in flight; per link arrivals = departures + dropped +
    /// queued and departures = forwarded + in its delay line; ACKs likewise; per path no more
    /// delivered and dropped than sent, both ways.
    pub fn conservation_violations(&self) -> Vec<String> {
        let mut v = Vec::new();
        for f in self.flows.iter().chain(std::iter::once(&self.total)) {
            if f.sent != f.delivered + f.dropped + f.in_flight {
                v.push(format!(
                    "flow {:?}: sent {} != delivered {} + dropped {} + in flight {}",
                    f.flow, f.sent, f.delivered, f.dropped, f.in_flight
                ));
            }
        }
        for l in &self.links {
            if l.arrivals != l.departures + l.dropped + l.queued {
                v.push(format!(
                    "link {}: arrivals {} != departures {} + dropped {} + queued {}",
                    l.name, l.arrivals, l.departures, l.dropped, l.queued
                ));
            }
            if l.departures != l.forwarded + l.in_pipe {
                v.push(format!(
                    "link {}: departures {} != forwarded {} + in its delay line {}",
                    l.name, l.departures, l.forwarded, l.in_pipe
                ));
            }
        }
        let (sent, delivered, dropped, in_net) = self.acks;
        if sent != delivered + dropped + in_net {
            v.push(format!(
                "ACKs: sent {sent} != delivered {delivered} + dropped {dropped} + in flight {in_net}"
            ));
        }
        for p in &self.paths {
            if p.delivered + p.dropped > p.sent || p.acks_delivered + p.acks_dropped > p.acks_sent {
                v.push(format!(
                    "path {}/{}: more delivered and dropped than sent",
                    p.flow, p.path
                ));
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: mm-throughput-graph's per-ms map with backfill, computed the slow way.
    fn reference(deps: &[(u64, u64)]) -> IntHistogram {
        let mut map = std::collections::BTreeMap::new();
        for &(arr, d) in deps {
            let e = map.entry(arr).or_insert(u64::MAX);
            *e = (*e).min(d);
        }
        let (&lo, &hi) = (map.keys().next().unwrap(), map.keys().last().unwrap());
        let mut t = hi;
        while t > lo {
            t -= 1;
            if !map.contains_key(&t) {
                let v = map[&(t + 1)] + 1;
                map.insert(t, v);
            }
        }
        let mut h = IntHistogram::new();
        for v in map.values() {
            h.record(*v);
        }
        h
    }

    #[test]
    fn signal_delay_matches_mahimahi_backfill_on_a_hand_worked_log() {
        // Arrivals at 0, 0, 3, 10 ms with delays 50, 40, 30, 5: ms 0 -> 40; 1,2 -> 32, 31; 3 -> 30;
        // 4..9 -> 11..6; 10 -> 5.
        let deps = [(0, 50), (0, 40), (3, 30), (10, 5)];
        let mut s = SignalDelay::default();
        for &(a, d) in &deps {
            s.on_departure(a, d);
        }
        let h = s.histogram();
        assert_eq!(h.count(), 11);
        assert_eq!(h.max(), Some(40));
        assert_eq!(h.percentile(0.5), Some(10));
        let r = reference(&deps);
        for q in [0.0, 0.1, 0.5, 0.9, 0.95, 1.0] {
            assert_eq!(h.percentile(q), r.percentile(q));
        }
    }

    /// Departures at arrival gaps and delays `steps`: the streaming statistic equals the batch one
    /// (count, percentiles, and the mean when asked).
    fn streaming_matches_batch(
        steps: &[(u64, u64)],
        with_mean: bool,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut arr = 0;
        let deps: Vec<(u64, u64)> = steps
            .iter()
            .map(|&(da, d)| {
                arr += da;
                (arr, d)
            })
            .collect();
        let mut s = SignalDelay::default();
        for &(a, d) in &deps {
            s.on_departure(a, d);
        }
        let (h, r) = (s.histogram(), reference(&deps));
        proptest::prop_assert_eq!(h.count(), r.count());
        if with_mean {
            proptest::prop_assert_eq!(h.mean(), r.mean());
        }
        for q in [0.0, 0.25, 0.5, 0.95, 0.99] {
            proptest::prop_assert_eq!(h.percentile(q), r.percentile(q));
            proptest::prop_assert_eq!(s.percentile(q), r.percentile(q));
        }
        // Closed at the end of a run: the open millisecond is recorded and read without a copy.
        s.close();
        proptest::prop_assert!(s.cur.is_none());
        proptest::prop_assert_eq!(s.histogram().count(), r.count());
        for q in [0.0, 0.25, 0.5, 0.95, 0.99] {
            proptest::prop_assert_eq!(s.percentile(q), r.percentile(q));
        }
        Ok(())
    }

    proptest::proptest! {
        #[test]
        fn streaming_signal_delay_equals_the_batch_definition(steps in proptest::collection::vec((0u64..30, 0u64..500), 1..300)) {
            streaming_matches_batch(&steps, false)?;
        }
    }

    #[test]
    fn a_billion_idle_milliseconds_are_backfilled_as_one_run() {
        // ms 0 -> 7; ms 1..=10^9 backfilled from ms 10^9 + 1 (value 3) as 10^9 + 3 down to 4.
        let mut s = SignalDelay::default();
        s.on_departure(0, 7);
        s.on_departure(1_000_000_001, 3);
        let h = s.histogram();
        assert_eq!(h.count(), 1_000_000_002);
        assert_eq!((h.min(), h.max()), (Some(3), Some(1_000_000_003)));
        let sum: u128 = 7 + 3 + (4 + 1_000_000_003) * 1_000_000_000 / 2;
        assert_eq!(h.mean(), Some(sum as f64 / 1_000_000_002.0));
        // Sorted: 3, 4, 5, 6, 7, 7, 8, ...: exact below 2^20.
        assert_eq!(
            [1e-9, 4e-9, 5e-9, 6e-9].map(|q| h.percentile(q).unwrap()),
            [4, 7, 7, 8]
        );
        assert!(s.heap_bytes() < 16 * 1024, "{}", s.heap_bytes());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(16))]
        #[test]
        fn streaming_signal_delay_equals_the_batch_definition_across_long_gaps(steps in proptest::collection::vec((0u64..70_000, 0u64..500), 1..5)) {
            streaming_matches_batch(&steps, true)?;
        }

        #[test]
        fn bins_are_those_of_dividing_time_by_the_width(steps in proptest::collection::vec((0u64..3_000, 0u8..10, 1u64..100), 1..200), bin in 1u64..1_000) {
            let mut bins = Bins::new(Dur(bin));
            let mut want: Vec<TimeBin> = Vec::new();
            let mut t = 0u64;
            for &(dt, kind, x) in &steps {
                // Mostly forward, sometimes a jump over idle bins, rarely a step back.
                t = match kind { 0 => t.saturating_sub(dt), 1 => t + 50 * dt, _ => t + dt };
                let b = (t / bin) as usize;
                if b >= want.len() { want.resize(b + 1, TimeBin::default()); }
                want[b].departed_bytes += x;
                bins.at(Time(t)).departed_bytes += x;
            }
            proptest::prop_assert_eq!(bins.as_slice(), &want[..]);
        }
    }

    #[test]
    fn flow_stats_fill_bins_only_when_asked() {
        let (mut with, mut without) = (FlowStats::new(Some(Dur(1_000_000))), FlowStats::new(None));
        for s in [&mut with, &mut without] {
            s.on_link_arrival(Time(500_000), 1500);
            s.on_link_departure(Time(2_500_000), Time(500_000), 1500);
            s.on_delivery(Time(22_500_000), Time(500_000), 1500);
            s.on_cwnd(Time(22_500_000), 10);
        }
        assert_eq!(without.bins(), &[]);
        let b = with.bins();
        assert_eq!(b.len(), 23);
        assert_eq!(
            (
                b[0].ingress_bytes,
                b[2].departed_bytes,
                b[2].queue_delay_max_ms
            ),
            (1500, 1500, 2)
        );
        assert_eq!(
            (b[22].delivered_bytes, b[22].one_way_max_ns, b[22].cwnd),
            (1500, 22_000_000, 10)
        );
        assert_eq!(
            with.queue_delay().percentile(0.5),
            without.queue_delay().percentile(0.5)
        );
    }

    #[test]
    fn link_total_equals_the_total_kept_apart_without_the_window_records() {
        let bin = Some(Dur(1_000_000));
        let (mut flow, mut total) = (FlowStats::new(bin), FlowStats::new(bin));
        for s in [&mut flow, &mut total] {
            s.on_link_arrival(Time(500_000), 1500);
            s.on_drop(Time(700_000));
            s.on_link_departure(Time(2_500_000), Time(500_000), 1500);
            s.on_delivery(Time(22_500_000), Time(500_000), 1500);
        }
        // Window records: one inside a packet bin, two past the last packet event.
        flow.on_cwnd(Time(22_600_000), 10);
        flow.on_cwnd(Time(30_000_000), 12);
        let derived = flow.link_total(true);
        assert_eq!(derived.bins(), total.bins());
        assert_eq!(flow.bins().len(), 31);
        assert_eq!(flow.bins()[30].cwnd, 12);
        assert_eq!(
            (
                derived.delivered,
                derived.dropped,
                derived.first_ms,
                derived.last_ms
            ),
            (
                total.delivered,
                total.dropped,
                total.first_ms,
                total.last_ms
            )
        );
        assert_eq!(derived.queue_delay().percentile(0.95), Some(2));
        assert_eq!(flow.link_total(false).bins(), &[]);
    }

    /// Everything a flow's statistics hold but the deferral itself.
    fn recorded(s: &mut FlowStats) -> String {
        s.flush();
        let mut c = s.clone();
        c.pending = None;
        format!("{c:?}")
    }

    proptest::proptest! {
        #[test]
        fn deferred_histograms_equal_those_recorded_per_packet(
            steps in proptest::collection::vec((0u64..5_000_000, 0u64..400, 0u64..100_000_000, 0u8..20), 1..400),
            bins in proptest::bool::ANY,
        ) {
            let bin = bins.then_some(Dur(50_000_000));
            let (mut direct, mut deferred) = (FlowStats::new(bin), FlowStats::new(bin).deferred(true));
            let mut t = 0u64;
            for (i, &(dt, q_ms, owd, kind)) in steps.iter().enumerate() {
                t += dt;
                for s in [&mut direct, &mut deferred] {
                    s.on_link_arrival(Time(t), 1500);
                    match kind {
                        0 => s.on_drop(Time(t)),
                        // A queue delay beyond the 24 bits a pending sample holds is recorded at once.
                        1 if !bins => s.on_link_departure(Time(t + (1 << 25) * 1_000_000), Time(t), 1500),
                        _ => s.on_link_departure(Time(t + q_ms * 1_000_000), Time(t), 1500),
                    }
                    s.on_delivery(Time(t + q_ms * 1_000_000 + owd), Time(t), 1000 + i as u32);
                    s.on_cwnd(Time(t), kind as u32);
                }
            }
            proptest::prop_assert_eq!(recorded(&mut direct), recorded(&mut deferred));
        }
    }

    #[test]
    fn what_every_packet_writes_sits_in_two_cache_lines_before_the_histograms() {
        use std::mem::{align_of, offset_of};
        assert_eq!(align_of::<FlowStats>(), 64);
        // The sample buffer is allocated only for deferred recording (a flow recording directly has none).
        assert!(FlowStats::new(None).pending.is_none());
        assert!(FlowStats::new(None).deferred(true).pending.is_some());
        assert!(FlowStats::new(None)
            .deferred(true)
            .deferred(false)
            .pending
            .is_none());
        // A departure writes the first line only; sending, arrival and delivery the second.
        for f in [
            offset_of!(FlowStats, departed),
            offset_of!(FlowStats, departed_bytes),
            offset_of!(FlowStats, last_ms),
            offset_of!(FlowStats, first_ms),
            offset_of!(FlowStats, bins),
            offset_of!(FlowStats, n_pending),
            offset_of!(FlowStats, bins_only),
            offset_of!(FlowStats, pending),
        ] {
            assert!(f < 64, "{f}");
        }
        for f in [
            offset_of!(FlowStats, dropped),
            offset_of!(FlowStats, sent),
            offset_of!(FlowStats, arrived_link),
            offset_of!(FlowStats, delivered),
            offset_of!(FlowStats, delivered_bytes),
            offset_of!(FlowStats, goodput_bytes),
            offset_of!(FlowStats, first_tx_bytes),
        ] {
            assert!((64..128).contains(&f), "{f}");
        }
        // The histograms, written once per batch when deferred, come after the two lines.
        for cold in [
            offset_of!(FlowStats, queue_delay),
            offset_of!(FlowStats, signal),
            offset_of!(FlowStats, one_way),
        ] {
            assert!(cold >= 128, "{cold}");
        }
    }

    #[test]
    fn jain_index_is_one_for_equal_shares_and_one_over_n_for_one_hog() {
        assert_eq!(jain_index(&[2.0, 2.0, 2.0]), Some(1.0));
        assert_eq!(jain_index(&[3.0, 0.0, 0.0]), Some(1.0 / 3.0));
    }
}
