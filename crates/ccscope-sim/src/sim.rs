//! The simulation: an owned event loop over two links, per-flow delay lines and the endpoints.
//!
//! Path of a data packet: sender -> data link (loss, queue, serializer) -> flow's forward delay ->
//! receiver. Path of its ACK: receiver -> flow's reverse delay -> ACK link -> sender. This is the
//! datagrump setup (`mm-delay 20 mm-link UP DOWN`): the sender sits inside the link shell, so its
//! data meets the link before the delay and its ACKs meet the delay before the link.


use ccscope_cc::{AnyController, ParamError, Transport};
use ccscope_core::rng;
use ccscope_core::rng::RngCore as _;
use ccscope_core::{Bandwidth, Dur, EventQueue, Phase, Time};
use ccscope_net::{AnyQueue, Link, LossModel, Packet, PacketKind, Pipe, Service};

use crate::endpoint::{DatagramSender, Receiver, ReliableSender, Sender};
use crate::metrics::{jain_index, FlowStats, FlowSummary, RunResult};
use crate::pktlog::{LogEvent, PacketLog};
use crate::scenario::{App, FlowSpec, Scenario};
use crate::traffic::TransferPlan;

/// Builds a flow's controller; the default knows the registry, the Python bindings add `python`.
pub type ControllerFactory<'a> = dyn FnMut(usize, &FlowSpec) -> Result<AnyController, ParamError> + 'a;

#[derive(Clone, Copy, Debug)]
enum Ev {
    Start(u32),
    Stop(u32),
    Wake(u32),
    Timeout(u32, u32),
    Timer(u32, u32),
    DataLink,
    AckLink,
    FwdPipe(u32),
    RevPipe(u32),
}

const DATA: usize = 0;
const ACK: usize = 1;

/// Per-flow bookkeeping of the events the simulator has scheduled for a sender.
#[derive(Default)]
struct FlowSched {
    /// A pacing wake-up is scheduled at this time.
    wake_at: Option<Time>,
    /// A timeout check is scheduled at this time, with this generation.
    timeout_at: Option<Time>,
    timeout_gen: u32,
    /// The controller timer currently scheduled, and its generation.
    timer_at: Option<Time>,
    timer_gen: u32,
}

pub struct Simulation {
    events: EventQueue<Ev>,
    links: [Link; 2],
    fwd: Vec<Pipe>,
    rev: Vec<Pipe>,
    senders: Vec<Sender>,
    receivers: Vec<Receiver>,
    sched: Vec<FlowSched>,
    controllers: Vec<String>,
    stats: Vec<FlowStats>,
    total: FlowStats,
    bin_ns: u64,
    end: Time,
    log: Option<PacketLog>,
    /// (time ns, flow, cwnd) at every change, when asked for; last value per flow.
    cwnd_log: Option<Vec<(u64, u32, u32)>>,
    last_cwnd: Vec<u32>,
    // Scratch buffers reused for every event: the hot path allocates nothing.
    out: Vec<Packet>,
    drops: Vec<Packet>,
    sends: Vec<Packet>,
    acks_sent: u64,
    acks_delivered: u64,
    acks_dropped: u64,
    n_events: u64,
}

fn mean_rate(service: &Service) -> Bandwidth {
    match service {
        Service::Constant(r) => *r,
        Service::Trace { trace, .. } => Bandwidth(trace.mean_bps(ccscope_net::MAHIMAHI_MTU) as u64),
    }
}

impl Simulation {
    /// Build a simulation with the built-in controllers only.
    pub fn new(sc: &Scenario) -> Result<Simulation, ParamError> {
        Self::with_factory(sc, &mut |_, f: &FlowSpec| ccscope_cc::build(&f.controller, &f.params))
    }

    pub fn with_factory(sc: &Scenario, factory: &mut ControllerFactory<'_>) -> Result<Simulation, ParamError> {
        let bin = sc.bin.max(Dur(1));
        let mk_link = |spec: &crate::LinkSpec, k: u64, log: bool| {
            let q = AnyQueue::new(&spec.queue, rng::stream(sc.seed, 10 + k), mean_rate(&spec.service));
            let loss = LossModel::new(spec.loss.clone(), rng::stream(sc.seed, 20 + k));
            Link::new(&spec.service, q, loss, bin, log)
        };
        let links = [mk_link(&sc.data_link, 0, sc.packet_log), mk_link(&sc.ack_link, 1, false)];
        let mut senders = Vec::with_capacity(sc.flows.len());
        let mut events = EventQueue::new();
        let mut receivers = Vec::with_capacity(sc.flows.len());
        for (i, f) in sc.flows.iter().enumerate() {
            // Controllers that draw random numbers declare a `seed` parameter; unless the scenario
            // sets it, each flow gets its own stream derived from the scenario seed.
            let mut f_seeded;
            let f = match ccscope_cc::registry::find(&f.controller) {
                Ok(info) if info.params.iter().any(|p| p.name == "seed") && !f.params.contains_key("seed") => {
                    f_seeded = f.clone();
                    let s = rng::stream(sc.seed, 1000 + i as u64).next_u64() >> 1;
                    f_seeded.params.insert("seed".into(), toml::Value::Integer(s as i64));
                    &f_seeded
                }
                _ => f,
            };
            let cc = factory(i, f)?;
            let default = ccscope_cc::registry::find(&f.controller).map(|c| c.transport).unwrap_or(Transport::Datagram);
            let transport = f.transport.unwrap_or(default);
            let plan = match &f.app {
                App::Bulk => None,
                App::Transfers { packets, think } => Some(TransferPlan::fixed(packets.clone(), *think)),
                // A new connection per ON period rebuilds built-in controllers from the same spec
                // (injected seed included); a Python controller object is kept.
                App::OnOff(p) => {
                    let respawn = ccscope_cc::registry::find(&f.controller).is_ok().then(|| (f.controller.clone(), f.params.clone()));
                    Some(TransferPlan::onoff(p, sc.seed, i, f.packet_bytes, respawn))
                }
            };
            senders.push(match transport {
                Transport::Datagram => Sender::Datagram(DatagramSender::new(i as u32, cc, f.packet_bytes, plan).with_mode(f.datagram_mode)),
                Transport::Reliable => Sender::Reliable(ReliableSender::new(i as u32, cc, f.packet_bytes, plan, f.rto)),
            });
            receivers.push(Receiver::new(transport == Transport::Reliable, f.ack_bytes));
            let jitter = if f.start_jitter > Dur::ZERO {
                use ccscope_core::rng::RngExt;
                Dur(rng::stream(sc.seed, 100 + i as u64).gen_range(0..f.start_jitter.as_ns()))
            } else {
                Dur::ZERO
            };
            events.push(f.start + jitter, Phase::Normal, Ev::Start(i as u32));
            if let Some(stop) = f.stop {
                events.push(stop, Phase::Normal, Ev::Stop(i as u32));
            }
        }
        Ok(Simulation {
            events,
            links,
            fwd: sc.flows.iter().map(|f| Pipe::new(f.delay.unwrap_or(sc.data_link.delay))).collect(),
            rev: sc.flows.iter().map(|f| Pipe::new(f.ack_delay.unwrap_or(sc.ack_link.delay))).collect(),
            sched: senders.iter().map(|_| FlowSched::default()).collect(),
            senders,
            receivers,
            controllers: sc.flows.iter().map(|f| f.controller.clone()).collect(),
            stats: sc.flows.iter().map(|_| FlowStats::new()).collect(),
            total: FlowStats::new(),
            bin_ns: bin.as_ns(),
            end: Time(sc.duration.as_ns()),
            log: sc.packet_log.then(PacketLog::default),
            cwnd_log: sc.cwnd_log.then(Vec::new),
            last_cwnd: vec![u32::MAX; sc.flows.len()],
            out: Vec::with_capacity(64),
            drops: Vec::with_capacity(64),
            sends: Vec::with_capacity(64),
            acks_sent: 0,
            acks_delivered: 0,
            acks_dropped: 0,
            n_events: 0,
        })
    }

    /// Run to the end of the scenario and summarise.
    pub fn run(mut self) -> (RunResult, Option<PacketLog>) {
        // The first event at or past the end is dropped with the rest: nothing runs after the end.
        while let Some((now, ev)) = self.events.pop() {
            if now >= self.end {
                break;
            }
            self.n_events += 1;
            self.handle(now, ev);
        }
        self.finish()
    }

    fn handle(&mut self, now: Time, ev: Ev) {
        match ev {
            Ev::Start(f) => {
                self.senders[f as usize].start(now);
                self.after_sender(now, f, true);
            }
            Ev::Stop(f) => self.senders[f as usize].stop(),
            Ev::Wake(f) => {
                if self.sched[f as usize].wake_at == Some(now) {
                    self.sched[f as usize].wake_at = None;
                    self.after_sender(now, f, true);
                }
            }
            Ev::Timeout(f, gen) => {
                let sc = &mut self.sched[f as usize];
                if sc.timeout_gen != gen {
                    return;
                }
                sc.timeout_at = None;
                let s = &mut self.senders[f as usize];
                if !s.active() {
                    return;
                }
                if s.timeout_deadline().is_some_and(|d| d <= now) {
                    let wake = s.on_timeout(now, &mut self.sends);
                    self.set_wake(now, f, wake);
                }
                self.after_sender(now, f, false);
            }
            Ev::Timer(f, gen) => {
                if self.sched[f as usize].timer_gen == gen {
                    self.sched[f as usize].timer_at = None;
                    self.senders[f as usize].cc().on_timer(now);
                    self.after_sender(now, f, true);
                }
            }
            Ev::DataLink => self.service_link(now, DATA),
            Ev::AckLink => self.service_link(now, ACK),
            Ev::FwdPipe(f) => {
                while let Some(p) = self.fwd[f as usize].pop_due(now) {
                    self.receive_data(now, p);
                }
                if let Some(t) = self.fwd[f as usize].head_time() {
                    self.events.push(t, Phase::Normal, Ev::FwdPipe(f));
                }
            }
            Ev::RevPipe(f) => {
                while let Some(p) = self.rev[f as usize].pop_due(now) {
                    self.link_arrive(now, ACK, p);
                }
                if let Some(t) = self.rev[f as usize].head_time() {
                    self.events.push(t, Phase::Normal, Ev::RevPipe(f));
                }
            }
        }
    }

    fn set_wake(&mut self, _now: Time, f: u32, wake: Option<Time>) {
        if let Some(t) = wake {
            let sc = &mut self.sched[f as usize];
            if sc.wake_at.is_none_or(|w| w > t) {
                sc.wake_at = Some(t);
                self.events.push(t, Phase::Normal, Ev::Wake(f));
            }
        }
    }

    /// After a sender event: let it send, then (re)arm its pacing wake-up, timeout and timer.
    fn after_sender(&mut self, now: Time, f: u32, send: bool) {
        if send {
            let wake = self.senders[f as usize].try_send(now, &mut self.sends);
            self.set_wake(now, f, wake);
        }
        self.flush_sends(now);
        let s = &mut self.senders[f as usize];
        let sc = &mut self.sched[f as usize];
        // The timeout check is lazy: a later deadline is found when the pending check fires; only
        // an earlier one needs a new event (older events are recognised by their generation).
        if s.active() {
            if let Some(d) = s.timeout_deadline() {
                if sc.timeout_at.is_none_or(|t| d < t) {
                    let d = d.max(now);
                    sc.timeout_gen = sc.timeout_gen.wrapping_add(1);
                    sc.timeout_at = Some(d);
                    self.events.push(d, Phase::Normal, Ev::Timeout(f, sc.timeout_gen));
                }
            }
        }
        // An OFF period with nothing outstanding stops the controller's clock; the next ON period's
        // connection (or the same Python controller) asks again after the wake-up.
        let want = if s.between_transfers() { None } else { s.cc().next_timer() };
        if want != sc.timer_at {
            sc.timer_gen = sc.timer_gen.wrapping_add(1);
            sc.timer_at = want;
            if let Some(t) = want {
                self.events.push(t.max(now), Phase::Normal, Ev::Timer(f, sc.timer_gen));
            }
        }
        let cwnd = s.cwnd();
        self.stats[f as usize].bin(now, self.bin_ns).cwnd = cwnd;
        if let Some(log) = &mut self.cwnd_log {
            if self.last_cwnd[f as usize] != cwnd {
                self.last_cwnd[f as usize] = cwnd;
                log.push((now.as_ns(), f, cwnd));
            }
        }
    }

    fn flush_sends(&mut self, now: Time) {
        let mut sends = std::mem::take(&mut self.sends);
        for p in sends.drain(..) {
            self.stats[p.flow as usize].sent += 1;
            self.total.sent += 1;
            self.link_arrive(now, DATA, p);
        }
        self.sends = sends;
    }

    fn link_arrive(&mut self, now: Time, dir: usize, p: Packet) {
        if dir == DATA {
            self.stats[p.flow as usize].on_link_arrival(now, p.bytes, self.bin_ns);
            self.total.on_link_arrival(now, p.bytes, self.bin_ns);
        }
        if let Some(t) = self.links[dir].arrive(p, now, &mut self.drops) {
            self.events.push(t, Phase::Late, if dir == DATA { Ev::DataLink } else { Ev::AckLink });
        }
        if dir == DATA && self.log.is_some() {
            // Opportunities the idle link skipped came before this arrival: log them first.
            self.log_opportunities();
            if let Some(log) = &mut self.log {
                log.push(now.as_ns(), LogEvent::Arrival, p.flow as i32, p.seq, p.bytes, 0);
            }
        }
        self.account_drops(now, dir);
    }

    fn log_opportunities(&mut self) {
        if let (Some(log), Some(opps)) = (&mut self.log, &mut self.links[DATA].capacity.pending_log) {
            for ms in opps.drain(..) {
                log.push(ms * 1_000_000, LogEvent::Opportunity, -1, 0, ccscope_net::MAHIMAHI_MTU, 0);
            }
        }
    }

    fn account_drops(&mut self, now: Time, dir: usize) {
        for i in 0..self.drops.len() {
            let p = self.drops[i];
            if dir == DATA {
                self.stats[p.flow as usize].on_drop(now, self.bin_ns);
                self.total.on_drop(now, self.bin_ns);
                if let Some(log) = &mut self.log {
                    log.push(now.as_ns(), LogEvent::Drop, p.flow as i32, p.seq, p.bytes, 0);
                }
            } else {
                self.acks_dropped += 1;
            }
        }
        self.drops.clear();
    }

    fn service_link(&mut self, now: Time, dir: usize) {
        let next = self.links[dir].service(now, &mut self.out, &mut self.drops);
        if let Some(t) = next {
            self.events.push(t, Phase::Late, if dir == DATA { Ev::DataLink } else { Ev::AckLink });
        }
        self.account_drops(now, dir);
        if dir == DATA {
            self.log_opportunities();
        }
        let mut out = std::mem::take(&mut self.out);
        for p in out.drain(..) {
            let f = p.flow as usize;
            match p.kind {
                PacketKind::Data => {
                    self.stats[f].on_link_departure(now, p.enqueued, p.bytes, self.bin_ns);
                    self.total.on_link_departure(now, p.enqueued, p.bytes, self.bin_ns);
                    if let Some(log) = &mut self.log {
                        let d = now.as_ms_floor() - p.enqueued.as_ms_floor();
                        log.push(now.as_ns(), LogEvent::Departure, p.flow as i32, p.seq, p.bytes, d);
                    }
                    if let Some(t) = self.fwd[f].push(now, p) {
                        self.events.push(t, Phase::Normal, Ev::FwdPipe(p.flow));
                    }
                }
                PacketKind::Ack => {
                    self.acks_delivered += 1;
                    let wake = self.senders[f].on_ack(now, &p, &mut self.sends);
                    self.set_wake(now, p.flow, wake);
                    self.after_sender(now, p.flow, false);
                }
            }
        }
        self.out = out;
    }

    fn receive_data(&mut self, now: Time, p: Packet) {
        let f = p.flow as usize;
        self.stats[f].on_delivery(now, p.sent, p.bytes, self.bin_ns);
        self.total.on_delivery(now, p.sent, p.bytes, self.bin_ns);
        let (ack, in_order) = self.receivers[f].on_data(&p, now);
        let good = in_order * p.bytes as u64;
        self.stats[f].goodput_bytes += good;
        self.total.goodput_bytes += good;
        self.acks_sent += 1;
        if let Some(t) = self.rev[f].push(now, ack) {
            self.events.push(t, Phase::Normal, Ev::RevPipe(p.flow));
        }
    }

    fn finish(mut self) -> (RunResult, Option<PacketLog>) {
        let end = self.end;
        self.links[DATA].finish(end);
        self.log_opportunities();
        // Data packets still inside the network, counted where they physically are.
        let mut in_net = vec![0u64; self.senders.len()];
        self.links[DATA].for_each_packet(|p| in_net[p.flow as usize] += 1);
        for (f, pipe) in self.fwd.iter().enumerate() {
            in_net[f] += pipe.len() as u64;
        }
        let mut acks_in_net = 0u64;
        self.links[ACK].for_each_packet(|_| acks_in_net += 1);
        acks_in_net += self.rev.iter().map(|p| p.len() as u64).sum::<u64>();

        let cap = &self.links[DATA].capacity;
        let cap_first = cap.first_ms;
        let cap_last = cap.last_ms;
        let (first, last) = match (self.total.first_ms, cap_first) {
            (Some(a), Some(b)) => (a.min(b), self.total.last_ms.max(cap_last)),
            (Some(a), None) => (a, self.total.last_ms),
            (None, Some(b)) => (b, cap_last),
            (None, None) => (0, 0),
        };
        let is_trace = self.links[DATA].is_trace();
        // Mahimahi: duration spans the first to the last logged event, opportunities included.
        let dur_ms = if is_trace { last - first } else { end.as_ms_floor() };
        let cap_mbps = if dur_ms > 0 { cap.total_bytes as f64 * 8.0 / (dur_ms as f64 / 1000.0) / 1e6 } else { 0.0 };

        let mut flows = Vec::with_capacity(self.senders.len());
        for (i, st) in self.stats.iter().enumerate() {
            let fd = match st.first_ms {
                Some(a) => st.last_ms - a,
                None => 0,
            };
            let mut s = FlowSummary::from_stats(st, fd, cap_mbps);
            s.flow = Some(i as u32);
            s.controller = self.controllers[i].clone();
            s.in_flight = in_net[i];
            s.declared_lost = self.senders[i].declared_lost();
            s.retransmissions = self.senders[i].retransmissions();
            s.rtos = self.senders[i].rtos();
            s.counters = self.senders[i].counters();
            if let Some(p) = self.senders[i].plan() {
                s.transfers_done = p.transfers_done;
                s.fct_mean_s = p.fct_mean_s();
            }
            flows.push(s);
        }
        let mut total = FlowSummary::from_stats(&self.total, dur_ms, cap_mbps);
        total.in_flight = in_net.iter().sum();
        total.declared_lost = flows.iter().map(|f| f.declared_lost).sum();
        total.retransmissions = flows.iter().map(|f| f.retransmissions).sum();
        total.rtos = flows.iter().map(|f| f.rtos).sum();
        total.controller = "all".into();
        total.transfers_done = flows.iter().map(|f| f.transfers_done).sum();
        let off_periods = self
            .senders
            .iter()
            .map(|s| s.plan().map(|p| p.off_periods.iter().map(|&(a, b)| (a.as_secs_f64(), b.as_secs_f64())).collect()).unwrap_or_default())
            .collect();
        let transfers = self.senders.iter().map(|s| s.plan().map(|p| p.periods.clone()).unwrap_or_default()).collect();
        let tputs: Vec<f64> = flows.iter().map(|f| f.throughput_mbps).collect();

        let mut samples = Vec::new();
        for (i, snd) in self.senders.iter_mut().enumerate() {
            for x in snd.take_samples() {
                samples.push((i as u32, x.t.as_ns(), x.d_ms, x.w));
            }
        }
        let mut bins: Vec<Vec<_>> = self.stats.iter().map(|s| s.bins.clone()).collect();
        let mut tb = self.total.bins.clone();
        let nb = cap.bins.len().max(tb.len());
        tb.resize(nb, Default::default());
        for (i, c) in cap.bins.iter().enumerate() {
            tb[i].capacity_bytes = *c;
        }
        bins.push(tb);
        let result = RunResult {
            total,
            flows,
            jain_index: jain_index(&tputs),
            bin_s: self.bin_ns as f64 / 1e9,
            bins,
            events: self.n_events,
            sim_end_s: end.as_secs_f64(),
            acks: (self.acks_sent, self.acks_delivered, self.acks_dropped, acks_in_net),
            cwnd: self.cwnd_log.take().unwrap_or_default(),
            samples,
            transfers,
            off_periods,
        };
        (result, self.log)
    }
}
