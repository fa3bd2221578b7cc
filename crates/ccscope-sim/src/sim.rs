//! The simulation: an owned event loop over a topology of hops and the endpoints at its edges.
//!
//! A hop is a link (random loss, queue, serializer) followed by its propagation delay, or a delay
//! line alone. A packet carries its route and its position on it; when it leaves a hop's delay line
//! it reaches the next hop of its route, or its endpoint. Each hop keeps at most two pending events
//! (its serializer's next departure and its delay line's head), as htsim does, so the event set
//! stays O(hops + flows) whatever the traffic.
//!
//! The dumbbell (`[data_link]`, `[ack_link]`) is the topology of datagrump (`mm-delay 20 mm-link UP
//! DOWN`): the sender sits inside the link shell, so its data crosses the data link then the flow's
//! own forward delay, and its ACKs the flow's own reverse delay then the ACK link.

use ccscope_cc::{AnyController, ParamError, Transport};
use ccscope_core::rng;
use ccscope_core::rng::RngCore as _;
use ccscope_core::{Bandwidth, Dur, EventQueue, IntHistogram, Phase, Time};
use ccscope_net::{Ack, AckPool, AnyQueue, Link, LossModel, Packet, PacketKind, Pipe, Service};

use crate::endpoint::{
    CmtConfig, CmtSender, DatagramSender, HostArrivals, Receiver, ReliableSender, Sender,
};
use crate::metrics::{
    jain_index, FlowStats, FlowSummary, LinkSummary, PathSummary, RunResult, DEFER_FROM_FLOWS,
};
use crate::pktlog::{LogEvent, PacketLog};
use crate::scenario::{AckPath, App, FlowSpec, Scenario, TimeSeries};
use crate::traffic::TransferPlan;

/// A flow's send-overhead waits come from stream `SEND_OVERHEAD_STREAM + flow` of the seed (apart
/// from the queue, loss, jitter, controller and ON/OFF streams, so setting it moves none of them).
pub const SEND_OVERHEAD_STREAM: u64 = 1 << 41;

/// Builds a flow's controller; the default knows the registry, the Python bindings add `python`.
pub type ControllerFactory<'a> =
    dyn FnMut(usize, &FlowSpec) -> Result<AnyController, ParamError> + 'a;

#[derive(Clone, Copy, Debug)]
enum Ev {
    Start(u32),
    Stop(u32),
    Wake(u32),
    Timeout(u32, u32),
    Timer(u32, u32),
    /// A hop's serializer has a departure due.
    Service(u32),
    /// A hop's delay line has its head due.
    Pipe(u32),
    /// A receiver whose application reads at a set rate may have a window update to send.
    RecvWake(u32),
}

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
    /// The sender's connections the receiver has been told of.
    connections: u64,
}

/// Counters of one hop, kept for every hop whatever the flows (its arrivals and forwards: [`Hop`]).
#[derive(Clone, Debug, Default)]
struct HopStats {
    dropped: u64,
    departures: u64,
    departed_bytes: u64,
    queue_delay_ms: IntHistogram,
    /// Every packet crossing this link is data of a flow measured here: its queue-delay histogram is
    /// the sum of those flows' (merged at the end) instead of recorded a second time per packet.
    delay_from_flows: bool,
}

/// A hop: a link (loss, queue, serializer) or nothing, then a constant delay line.
///
/// Fields in declaration order (`repr(C)`), aligned to a cache line: what a packet crossing a flow's
/// own delay line touches (the link's absence, the line, the two counters) fills the first line.
#[repr(C, align(64))]
struct Hop {
    /// Boxed: delay lines, most hops of a many-flow dumbbell, stay small and dense.
    link: Option<Box<Link>>,
    pipe: Pipe,
    /// Packets that reached this hop.
    arrivals: u64,
    /// Left the delay line for the next hop or the endpoint.
    forwarded: u64,
    /// A link with no propagation delay hands departures straight on (no event in between).
    direct: bool,
    /// Nobody measures this link's departures as they happen (no flow's or the run's monitor, not
    /// direct): a packet finding it idle goes onto its delay line at once, with no serializer event.
    cut_through: bool,
    /// Index of the scenario link it is, or `None` for a dumbbell flow's own delay line.
    spec: Option<usize>,
    /// For a copy of a per-flow link: the flow that owns it.
    owner: Option<u32>,
    stats: HopStats,
}

impl Hop {
    /// A hop for scenario link `k` (`owner`: the flow of a per-flow copy), its queue and loss
    /// drawing from the named random streams.
    fn link(
        sc: &Scenario,
        k: usize,
        owner: Option<u32>,
        streams: (u64, u64),
        bin: Dur,
        log: bool,
    ) -> Hop {
        let spec = &sc.links[k];
        let q = AnyQueue::new(
            &spec.queue,
            rng::stream(sc.seed, streams.0),
            mean_rate(&spec.service),
        );
        // A per-flow copy carries its owner's packets only; a shared link may carry any flow's.
        let flows = owner.map_or(0..sc.flows.len() as u32, |f| f..f + 1);
        let loss =
            LossModel::new(spec.loss.clone(), rng::stream(sc.seed, streams.1)).with_flows(flows);
        Hop {
            spec: Some(k),
            owner,
            link: Some(Box::new(Link::new(&spec.service, q, loss, bin, log))),
            pipe: Pipe::new(spec.delay),
            arrivals: 0,
            forwarded: 0,
            direct: spec.delay == Dur::ZERO,
            cut_through: false,
            stats: HopStats::default(),
        }
    }
}

impl HopStats {
    /// `p` leaves the serializer at `left`.
    #[inline]
    fn on_departure(&mut self, p: &Packet, left: Time) {
        self.departures += 1;
        self.departed_bytes += p.bytes as u64;
        if !self.delay_from_flows {
            self.queue_delay_ms
                .record(left.as_ms_floor() - p.enqueued.as_ms_floor());
        }
    }
}

#[cfg(test)]
mod hop_layout {
    use super::Hop;
    use std::mem::{align_of, offset_of};

    #[test]
    fn what_a_packet_on_a_delay_line_touches_sits_in_one_cache_line() {
        assert_eq!(align_of::<Hop>(), 64);
        for f in [
            offset_of!(Hop, link),
            offset_of!(Hop, pipe),
            offset_of!(Hop, arrivals),
            offset_of!(Hop, forwarded),
        ] {
            assert!(f < 64, "{f}");
        }
        assert_eq!(offset_of!(Hop, direct), 64);
    }
}

/// Per (flow, path) counters: what a multipath transport and its analysis need.
#[derive(Clone, Copy, Debug, Default)]
struct PathCounters {
    sent: u64,
    delivered: u64,
    dropped: u64,
    acks_sent: u64,
    acks_delivered: u64,
    acks_dropped: u64,
}

/// One flow's place in the network.
struct FlowNet {
    /// First index of the flow's paths in `path_stats` and `path_routes`.
    path_base: usize,
    /// How many paths it has (at least one).
    n_paths: usize,
    ack_path: AckPath,
    /// The hop whose departures give the flow's link statistics.
    monitor: u32,
}

impl FlowNet {
    /// The flow's (data route, ACK route) per path, out of the dense table.
    fn paths<'a>(&self, path_routes: &'a [(u32, u32)]) -> &'a [(u32, u32)] {
        &path_routes[self.path_base..self.path_base + self.n_paths]
    }
}

pub struct Simulation {
    events: EventQueue<Ev>,
    hops: Vec<Hop>,
    /// Every route's hops, each route followed by `ROUTE_END` (a packet's `at` indexes this).
    route_hops: Vec<u32>,
    nets: Vec<FlowNet>,
    path_stats: Vec<PathCounters>,
    /// Every flow's (data route, ACK route) per path, as the index of the route's first hop in
    /// `route_hops`, indexed like `path_stats` (a flow's from its `path_base`): the only copy, one
    /// dense table read per packet.
    path_routes: Vec<(u32, u32)>,
    /// The hop the totals, capacity and packet log describe.
    monitor: u32,
    senders: Vec<Sender>,
    receivers: Vec<Receiver>,
    /// The receiving hosts' arrival counters, and the host each route delivers to (by the index of
    /// its `ROUTE_END` in `route_hops`; `u32::MAX` for ACK routes): the far end of the last link a
    /// data route crosses.
    hosts: Vec<HostArrivals>,
    route_host: Vec<u32>,
    /// Some flow's controller reads its receiving host's byte count: only then is it kept.
    host_feedback: bool,
    sched: Vec<FlowSched>,
    controllers: Vec<String>,
    stats: Vec<FlowStats>,
    /// The run's link total, recorded per packet. `None` with one flow measured where the run
    /// measures and keeping every series the total keeps: the total is then that flow's statistics,
    /// taken at the end ([`FlowStats::link_total`]) instead of kept twice.
    total: Option<FlowStats>,
    /// The total keeps time-series bins (a derived one takes them from the flow's).
    total_bins: bool,
    bin_ns: u64,
    end: Time,
    log: Option<PacketLog>,
    /// (time ns, flow, cwnd) at every change, when asked for; last value per flow.
    cwnd_log: Option<Vec<(u64, u32, u32)>>,
    last_cwnd: Vec<u32>,
    link_names: Vec<String>,
    /// Scenario links that are per-flow templates.
    per_flow: Vec<bool>,
    /// ACK-only fields of the ACKs in the network.
    acks: AckPool,
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

/// Ends each route in `route_hops`.
const ROUTE_END: u32 = u32::MAX;

/// Keeps routes as slices of one table, each followed by `ROUTE_END`.
#[derive(Default)]
struct RouteTable {
    /// (first index in `hops`, length), by route id.
    routes: Vec<(u32, u32)>,
    hops: Vec<u32>,
}

impl RouteTable {
    fn add(&mut self, hops: impl IntoIterator<Item = u32>) -> u32 {
        let start = self.hops.len() as u32;
        self.hops.extend(hops);
        self.routes.push((start, self.hops.len() as u32 - start));
        self.hops.push(ROUTE_END);
        self.routes.len() as u32 - 1
    }
}

impl Simulation {
    /// Build a simulation with the built-in controllers only.
    pub fn new(sc: &Scenario) -> Result<Simulation, ParamError> {
        Self::with_factory(sc, &mut |_, f: &FlowSpec| {
            ccscope_cc::build(&f.controller, &f.params)
        })
    }

    pub fn with_factory(
        sc: &Scenario,
        factory: &mut ControllerFactory<'_>,
    ) -> Result<Simulation, ParamError> {
        let bin = sc.bin.max(Dur(1));
        // One hop per scenario link; the queue and loss streams of the dumbbell's two links keep the
        // stream numbers they always had (10 + k, 20 + k), so existing runs replay bit for bit.
        let mut hops: Vec<Hop> = (0..sc.links.len())
            .map(|k| {
                Hop::link(
                    sc,
                    k,
                    None,
                    (10 + k as u64, 20 + k as u64),
                    bin,
                    sc.packet_log && k == sc.monitor,
                )
            })
            .collect();
        let mut rt = RouteTable::default();
        let mut nets: Vec<FlowNet> = Vec::with_capacity(sc.flows.len());
        let mut path_routes: Vec<(u32, u32)> = Vec::new();
        for f in &sc.flows {
            let path_base = path_routes.len();
            if f.paths.is_empty() {
                // The dumbbell: the flow's own delay lines carry the propagation delay, after the data
                // link and before the ACK link; the two links themselves hand packets straight on.
                let (d, a) = sc
                    .dumbbell
                    .expect("a flow without paths needs the dumbbell (checked by the loader)");
                // A flow's own delay line starts small: its ring is cycled through, so a big one
                // would keep cold cache lines per flow (it grows to the flow's most in flight).
                let mut delay_hop = |delay: Dur| {
                    hops.push(Hop {
                        spec: None,
                        owner: None,
                        link: None,
                        pipe: Pipe::with_capacity(delay, 4),
                        arrivals: 0,
                        forwarded: 0,
                        direct: false,
                        cut_through: false,
                        stats: HopStats::default(),
                    });
                    hops.len() as u32 - 1
                };
                let fwd = delay_hop(f.delay.unwrap_or(sc.links[d].delay));
                let rev = delay_hop(f.ack_delay.unwrap_or(sc.links[a].delay));
                path_routes.push((rt.add([d as u32, fwd]), rt.add([rev, a as u32])));
            } else {
                // A per-flow link is copied for this flow the first time one of its routes names it.
                let mut own: Vec<(usize, u32)> = Vec::new();
                let fi = nets.len();
                let mut hop_of = |l: usize| -> u32 {
                    let spec = &sc.links[l];
                    if !spec.per_flow {
                        return l as u32;
                    }
                    if let Some(&(_, h)) = own.iter().find(|(k, _)| *k == l) {
                        return h;
                    }
                    let stream = (1u64 << 40) | ((fi as u64) << 16) | l as u64;
                    hops.push(Hop::link(
                        sc,
                        l,
                        Some(fi as u32),
                        (stream, stream | (1 << 39)),
                        bin,
                        false,
                    ));
                    own.push((l, hops.len() as u32 - 1));
                    hops.len() as u32 - 1
                };
                for p in &f.paths {
                    let data: Vec<u32> = p.route.iter().map(|&l| hop_of(l)).collect();
                    let ack: Vec<u32> = p.ack_route.iter().map(|&l| hop_of(l)).collect();
                    path_routes.push((rt.add(data), rt.add(ack)));
                }
            }
            let first = rt.routes[path_routes[path_base].0 as usize];
            let route0 = &rt.hops[first.0 as usize..(first.0 + first.1) as usize];
            let monitor = match f.monitor {
                Some(m) if sc.links[m].per_flow => *route0
                    .iter()
                    .find(|&&h| hops[h as usize].spec == Some(m))
                    .unwrap_or(&route0[0]),
                Some(m) => m as u32,
                None if route0.contains(&(sc.monitor as u32)) => sc.monitor as u32,
                // The last link of the route (not a dumbbell delay line).
                None => *route0
                    .iter()
                    .rev()
                    .find(|&&h| hops[h as usize].link.is_some())
                    .unwrap_or(&route0[0]),
            };
            nets.push(FlowNet {
                path_base,
                n_paths: path_routes.len() - path_base,
                ack_path: f.ack_path,
                monitor,
            });
        }
        // A host is the far end of a data route's last link (a dumbbell's delay line is not one): flows
        // whose data leaves the network through the same link arrive at the same host.
        let mut route_host = vec![u32::MAX; rt.hops.len()];
        let mut host_of_hop = vec![u32::MAX; hops.len()];
        let mut n_hosts = 0u32;
        for n in &nets {
            for &(data, _) in n.paths(&path_routes) {
                let (start, len) = rt.routes[data as usize];
                let route = &rt.hops[start as usize..(start + len) as usize];
                let last = *route
                    .iter()
                    .rev()
                    .find(|&&h| hops[h as usize].link.is_some())
                    .unwrap_or(&route[route.len() - 1]);
                if host_of_hop[last as usize] == u32::MAX {
                    host_of_hop[last as usize] = n_hosts;
                    n_hosts += 1;
                }
                route_host[(start + len) as usize] = host_of_hop[last as usize];
            }
        }
        for (k, hop) in hops.iter_mut().enumerate() {
            // Only the monitored link's capacity is a time series.
            if let Some(l) = &mut hop.link {
                l.capacity.keep_bins = k == sc.monitor && sc.timeseries != TimeSeries::None;
            }
        }
        // A link that only data of flows measured there crosses (once per route): see `delay_from_flows`.
        let mut own_data_only = vec![true; hops.len()];
        for n in &nets {
            for &(data, ack) in n.paths(&path_routes) {
                for (route, is_data) in [(data, true), (ack, false)] {
                    let (start, len) = rt.routes[route as usize];
                    let route = &rt.hops[start as usize..(start + len) as usize];
                    for (i, &h) in route.iter().enumerate() {
                        if !is_data || n.monitor != h || route[..i].contains(&h) {
                            own_data_only[h as usize] = false;
                        }
                    }
                }
            }
        }
        for (h, hop) in hops.iter_mut().enumerate() {
            hop.stats.delay_from_flows = hop.link.is_some() && own_data_only[h];
        }
        let mut monitored = vec![false; hops.len()];
        monitored[sc.monitor] = true;
        for n in &nets {
            monitored[n.monitor as usize] = true;
        }
        // `arrive` measures arrivals only at links: a monitor that were a delay line would miss them.
        assert!(
            (0..hops.len()).all(|h| !monitored[h] || hops[h].link.is_some()),
            "every monitor is a link"
        );
        for (h, hop) in hops.iter_mut().enumerate() {
            hop.cut_through =
                hop.link.is_some() && !monitored[h] && !(sc.packet_log && h == sc.monitor);
        }
        if let Some((d, a)) = sc.dumbbell {
            // The dumbbell's links hand packets straight to the flows' own delay lines.
            hops[d].direct = true;
            hops[a].direct = true;
            hops[d].cut_through = false;
            hops[a].cut_through = false;
        }
        let mut senders = Vec::with_capacity(sc.flows.len());
        let mut events = EventQueue::new();
        let mut receivers = Vec::with_capacity(sc.flows.len());
        let mut host_feedback = false;
        for (i, f) in sc.flows.iter().enumerate() {
            // Controllers that draw random numbers declare a `seed` parameter; unless the scenario
            // sets it, each flow gets its own stream derived from the scenario seed.
            let mut f_seeded;
            let f = match ccscope_cc::registry::find(&f.controller) {
                Ok(info)
                    if info.params.iter().any(|p| p.name == "seed")
                        && !f.params.contains_key("seed") =>
                {
                    f_seeded = f.clone();
                    let s = rng::stream(sc.seed, 1000 + i as u64).next_u64() >> 1;
                    f_seeded
                        .params
                        .insert("seed".into(), toml::Value::Integer(s as i64));
                    &f_seeded
                }
                _ => f,
            };
            let cc = factory(i, f)?;
            let transport = f.transport();
            let plan = match &f.app {
                App::Bulk => None,
                App::Transfers { packets, think } => {
                    Some(TransferPlan::fixed(packets.clone(), *think))
                }
                // A new connection per ON period rebuilds built-in controllers from the same spec
                // (injected seed included); a Python controller object is kept.
                App::OnOff(p) => {
                    let respawn = ccscope_cc::registry::find(&f.controller)
                        .is_ok()
                        .then(|| (f.controller.clone(), f.params.clone()));
                    Some(TransferPlan::onoff(p, sc.seed, i, f.packet_bytes, respawn))
                }
            };
            senders.push(match transport {
                Transport::Datagram => Sender::Datagram(
                    DatagramSender::new(i as u32, cc, f.packet_bytes, plan)
                        .with_mode(f.datagram_mode())
                        .with_paths(f.paths.len().max(1) as u8),
                ),
                Transport::Reliable => Sender::Reliable(
                    ReliableSender::new(i as u32, cc, f.packet_bytes, plan, f.rto)
                        .with_buffers(f.buffers.rbuf_bytes, f.buffers.sndbuf_bytes)
                        .with_send_overhead(
                            f.send_overhead,
                            rng::stream(sc.seed, SEND_OVERHEAD_STREAM + i as u64),
                        ),
                ),
                Transport::Cmt => {
                    // One SCTP controller per destination, from the flow's `sctp` parameters.
                    let sctp = ccscope_cc::registry::parse_params::<
                        ccscope_cc::window::sctp::Params,
                    >("sctp", &f.params)?;
                    // The loader requires a finite buffer for CMT; a hand-built spec without one gets 2^30 B.
                    let rbuf_bytes = f.buffers.rbuf_bytes.unwrap_or(1 << 30);
                    let cfg = CmtConfig {
                        sctp,
                        rbuf_bytes,
                        window_management: f.window_management.clone(),
                        rto_max: f.rto.max,
                    };
                    Sender::Cmt(CmtSender::new(i as u32, f.packet_bytes, f.paths.len(), cfg))
                }
            });
            host_feedback |= senders[i].wants_host_feedback();
            let receiver = Receiver::new(transport != Transport::Datagram, f.ack_bytes)
                .with_buffer(f.buffers.recv_buffer())
                .with_host_report(senders[i].wants_host_feedback());
            receivers.push(match transport {
                Transport::Cmt => receiver.with_arrival_log(),
                Transport::Reliable => receiver
                    .with_dsack(f.rto.dsack)
                    .with_delayed_ack(f.rto.delayed_ack),
                Transport::Datagram => receiver,
            });
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
        // One flow measured where the run measures: its histograms are the total's (taken at the end).
        let mirror = nets.len() == 1 && nets[0].monitor == sc.monitor as u32;
        let flow_bins = sc
            .flows
            .first()
            .is_some_and(|f| f.timeseries.unwrap_or(sc.timeseries == TimeSeries::Flows));
        let total_derived = mirror && (sc.timeseries == TimeSeries::None || flow_bins);
        let total_bins = sc.timeseries != TimeSeries::None;
        Ok(Simulation {
            events,
            hops,
            path_stats: vec![PathCounters::default(); path_routes.len()],
            path_routes: path_routes
                .iter()
                .map(|&(d, a)| (rt.routes[d as usize].0, rt.routes[a as usize].0))
                .collect(),
            route_hops: rt.hops,
            nets,
            monitor: sc.monitor as u32,
            sched: senders.iter().map(|_| FlowSched::default()).collect(),
            senders,
            receivers,
            hosts: vec![HostArrivals::default(); n_hosts as usize],
            route_host,
            host_feedback,
            controllers: sc.flows.iter().map(|f| f.controller.clone()).collect(),
            stats: sc
                .flows
                .iter()
                .map(|f| {
                    FlowStats::new(
                        f.timeseries
                            .unwrap_or(sc.timeseries == TimeSeries::Flows)
                            .then_some(bin),
                    )
                    .deferred(sc.flows.len() >= DEFER_FROM_FLOWS)
                })
                .collect(),
            total: (!total_derived).then(|| FlowStats {
                bins_only: mirror,
                ..FlowStats::new(total_bins.then_some(bin))
            }),
            total_bins,
            bin_ns: bin.as_ns(),
            end: Time(sc.duration.as_ns()),
            log: sc.packet_log.then(PacketLog::default),
            cwnd_log: sc.cwnd_log.then(Vec::new),
            last_cwnd: vec![u32::MAX; sc.flows.len()],
            link_names: sc.links.iter().map(|l| l.name.clone()).collect(),
            per_flow: sc.links.iter().map(|l| l.per_flow).collect(),
            acks: AckPool::default(),
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
        let (r, log) = self.finish();
        // Every run in a debug build (every test) checks the conservation laws per flow, link and path.
        debug_assert!(
            r.conservation_violations().is_empty(),
            "{:?}",
            r.conservation_violations()
        );
        (r, log)
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
                    self.senders[f as usize].on_timer(now);
                    self.after_sender(now, f, true);
                }
            }
            Ev::Service(h) => self.service(now, h),
            Ev::Pipe(h) => {
                while let Some(p) = self.hops[h as usize].pipe.pop_due(now) {
                    self.forward(now, h, p);
                }
                if let Some(t) = self.hops[h as usize].pipe.head_time() {
                    self.events.push(t, Phase::Normal, Ev::Pipe(h));
                }
            }
            Ev::RecvWake(f) => {
                if let Some(ack) = self.receivers[f as usize].on_wake(now) {
                    self.send_ack(now, &ack);
                }
                self.arm_receiver(f);
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
        let connections = self.senders[f as usize].connections();
        if connections != self.sched[f as usize].connections {
            // A new ON period's connection: its first packet finds a receiver as new as it is.
            self.sched[f as usize].connections = connections;
            self.receivers[f as usize].on_new_connection();
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
                    self.events
                        .push(d, Phase::Normal, Ev::Timeout(f, sc.timeout_gen));
                }
            }
        }
        // An OFF period with nothing outstanding stops the controller's clock; the next ON period's
        // connection (or the same Python controller) asks again after the wake-up.
        let want = if s.between_transfers() {
            None
        } else {
            s.next_timer()
        };
        if want != sc.timer_at {
            sc.timer_gen = sc.timer_gen.wrapping_add(1);
            sc.timer_at = want;
            if let Some(t) = want {
                self.events
                    .push(t.max(now), Phase::Normal, Ev::Timer(f, sc.timer_gen));
            }
        }
        let cwnd = s.cwnd();
        self.stats[f as usize].on_cwnd(now, cwnd);
        if let Some(log) = &mut self.cwnd_log {
            if self.last_cwnd[f as usize] != cwnd {
                self.last_cwnd[f as usize] = cwnd;
                log.push((now.as_ns(), f, cwnd));
            }
        }
    }

    fn flush_sends(&mut self, now: Time) {
        // By index: `arrive` never sends, so the buffer stays as it is until the loop ends (taking and
        // restoring it cost more than the loop's work on the per-packet path).
        for i in 0..self.sends.len() {
            let mut p = self.sends[i];
            // The transport chose the path ("send on path i").
            let net = &self.nets[p.flow as usize];
            let path = (p.path as usize).min(net.n_paths - 1);
            p.path = path as u8;
            p.at = self.path_routes[net.path_base + path].0;
            self.path_stats[net.path_base + path].sent += 1;
            self.stats[p.flow as usize].sent += 1;
            if let Some(total) = &mut self.total {
                total.sent += 1;
            }
            let first = self.route_hops[p.at as usize];
            self.arrive(now, first, p);
        }
        self.sends.clear();
    }

    /// `p` reaches hop `h` at `now`. Always inlined: for a delay line it is a few instructions, fewer
    /// than the call (the compiler, left to itself, kept it out of line).
    #[inline(always)]
    fn arrive(&mut self, now: Time, h: u32, p: Packet) {
        let hop = &mut self.hops[h as usize];
        if hop.link.is_some() {
            return self.arrive_at_link(now, h, p);
        }
        // A delay line alone: never a monitor (those are links, checked in `with_factory`), so
        // nothing measures the arrival.
        hop.arrivals += 1;
        if let Some(t) = hop.pipe.push(now, p) {
            self.events.push(t, Phase::Normal, Ev::Pipe(h));
        }
    }

    /// `p` reaches hop `h`, a link, at `now`.
    fn arrive_at_link(&mut self, now: Time, h: u32, p: Packet) {
        let data = p.kind == PacketKind::Data;
        let at_monitor = h == self.monitor;
        if data && h == self.nets[p.flow as usize].monitor {
            self.stats[p.flow as usize].on_link_arrival(now, p.bytes);
        }
        if data && at_monitor {
            if let Some(total) = &mut self.total {
                total.on_link_arrival(now, p.bytes);
            }
        }
        let hop = &mut self.hops[h as usize];
        hop.arrivals += 1;
        let link = hop.link.as_mut().expect("`arrive` sends only links here");
        if hop.cut_through {
            match link.arrive_cut_through(p, now, &mut self.drops) {
                ccscope_net::Arrival::Held(Some(t)) => {
                    self.events.push(t, Phase::Late, Ev::Service(h))
                }
                ccscope_net::Arrival::Held(None) => {}
                ccscope_net::Arrival::Departs(p, left) => {
                    hop.stats.on_departure(&p, left);
                    if let Some(t) = hop.pipe.push(left, p) {
                        self.events.push(t, Phase::Normal, Ev::Pipe(h));
                    }
                }
            }
            return self.account_drops(now, h);
        }
        if let Some(t) = link.arrive(p, now, &mut self.drops) {
            self.events.push(t, Phase::Late, Ev::Service(h));
        }
        if data && at_monitor && self.log.is_some() {
            // Opportunities the idle link skipped came before this arrival: log them first.
            self.log_opportunities();
            if let Some(log) = &mut self.log {
                log.push(
                    now.as_ns(),
                    LogEvent::Arrival,
                    p.flow as i32,
                    p.seq,
                    p.bytes,
                    0,
                );
            }
        }
        self.account_drops(now, h);
    }

    #[inline]
    fn log_opportunities(&mut self) {
        if self.log.is_some() {
            self.log_opportunities_slow();
        }
    }

    #[cold]
    #[inline(never)]
    fn log_opportunities_slow(&mut self) {
        let link = self.hops[self.monitor as usize].link.as_mut();
        if let (Some(log), Some(opps)) = (
            &mut self.log,
            link.and_then(|l| l.capacity.pending_log.as_mut()),
        ) {
            for ms in opps.drain(..) {
                log.push(
                    ms * 1_000_000,
                    LogEvent::Opportunity,
                    -1,
                    0,
                    ccscope_net::MAHIMAHI_MTU,
                    0,
                );
            }
        }
    }

    /// Counts the packets hop `h` just dropped (most calls find none: checked before any call).
    #[inline]
    fn account_drops(&mut self, now: Time, h: u32) {
        if !self.drops.is_empty() {
            self.account_drops_slow(now, h);
        }
    }

    #[cold]
    #[inline(never)]
    fn account_drops_slow(&mut self, now: Time, h: u32) {
        for i in 0..self.drops.len() {
            let p = self.drops[i];
            self.hops[h as usize].stats.dropped += 1;
            let net = &self.nets[p.flow as usize];
            let ps = &mut self.path_stats[net.path_base + p.path as usize];
            if p.kind == PacketKind::Data {
                ps.dropped += 1;
                self.stats[p.flow as usize].on_drop(now);
                if let Some(total) = &mut self.total {
                    total.on_drop(now);
                }
                if h == self.monitor {
                    if let Some(log) = &mut self.log {
                        log.push(
                            now.as_ns(),
                            LogEvent::Drop,
                            p.flow as i32,
                            p.seq,
                            p.bytes,
                            0,
                        );
                    }
                }
            } else {
                ps.acks_dropped += 1;
                self.acks_dropped += 1;
                self.acks.release(p.ack);
            }
        }
        self.drops.clear();
    }

    /// Hop `h`'s serializer has departures due at `now`.
    fn service(&mut self, now: Time, h: u32) {
        let link = self.hops[h as usize]
            .link
            .as_mut()
            .expect("only links are serviced");
        if !link.is_trace() {
            // At most one departure: handed over directly, not through `out`.
            let (left, next) = link.service_constant(now, &mut self.drops);
            if let Some(t) = next {
                self.events.push(t, Phase::Late, Ev::Service(h));
            }
            self.account_drops(now, h);
            if h == self.monitor {
                self.log_opportunities();
            }
            if let Some(p) = left {
                self.depart(now, h, p);
            }
            return;
        }
        if let Some(t) = link.service(now, &mut self.out, &mut self.drops) {
            self.events.push(t, Phase::Late, Ev::Service(h));
        }
        self.account_drops(now, h);
        if h == self.monitor {
            self.log_opportunities();
        }
        // By index: nothing `forward` leads to services a link, so `out` keeps its packets meanwhile.
        for i in 0..self.out.len() {
            let p = self.out[i];
            self.depart(now, h, p);
        }
        self.out.clear();
    }

    /// `p` leaves hop `h`'s serializer at `now`: measured, then onto the delay line (or on). Always
    /// inlined (the compiler kept it out of line).
    #[inline(always)]
    fn depart(&mut self, now: Time, h: u32, p: Packet) {
        let f = p.flow as usize;
        self.hops[h as usize].stats.on_departure(&p, now);
        if p.kind == PacketKind::Data {
            if h == self.nets[f].monitor {
                self.stats[f].on_link_departure(now, p.enqueued, p.bytes);
            }
            if h == self.monitor {
                if let Some(total) = &mut self.total {
                    total.on_link_departure(now, p.enqueued, p.bytes);
                }
                if let Some(log) = &mut self.log {
                    let delay = now.as_ms_floor() - p.enqueued.as_ms_floor();
                    log.push(
                        now.as_ns(),
                        LogEvent::Departure,
                        p.flow as i32,
                        p.seq,
                        p.bytes,
                        delay,
                    );
                }
            }
        }
        let hop = &mut self.hops[h as usize];
        if hop.direct {
            self.forward(now, h, p);
        } else if let Some(t) = hop.pipe.push(now, p) {
            self.events.push(t, Phase::Normal, Ev::Pipe(h));
        }
    }

    /// `p` leaves hop `h` (its delay line, or its serializer when it has no delay) at `now`: on to
    /// the next hop of its route, or to its endpoint. Always inlined (in the delay line's event and
    /// a direct link's departure), with the endpoint's side out of line: a call less per hop.
    #[inline(always)]
    fn forward(&mut self, now: Time, h: u32, mut p: Packet) {
        self.hops[h as usize].forwarded += 1;
        p.at += 1;
        let next = self.route_hops[p.at as usize];
        if next != ROUTE_END {
            return self.arrive(now, next, p);
        }
        self.deliver(now, p);
    }

    /// `p` reached the end of its route at `now`: its endpoint gets it.
    #[inline(never)]
    fn deliver(&mut self, now: Time, p: Packet) {
        match p.kind {
            PacketKind::Data => self.receive_data(now, p),
            PacketKind::Ack => {
                let net = &self.nets[p.flow as usize];
                self.path_stats[net.path_base + p.path as usize].acks_delivered += 1;
                self.acks_delivered += 1;
                let ack = self.acks.get(p.ack);
                debug_assert!(ack.is_carried_by(&p));
                let f = p.flow as usize;
                let wake =
                    self.senders[f].on_ack(now, ack, &mut self.receivers[f], &mut self.sends);
                self.acks.release(p.ack);
                self.set_wake(now, p.flow, wake);
                self.after_sender(now, p.flow, false);
            }
        }
    }

    fn receive_data(&mut self, now: Time, p: Packet) {
        let f = p.flow as usize;
        self.stats[f].on_delivery(now, p.sent, p.bytes);
        let (ack, in_order) = if self.host_feedback {
            let host = &mut self.hosts[self.route_host[p.at as usize] as usize];
            self.receivers[f].on_data_at_host(&p, now, host)
        } else {
            self.receivers[f].on_data(&p, now)
        };
        let good = in_order * p.bytes as u64;
        self.stats[f].goodput_bytes += good;
        let first_tx = if p.round & Packet::RETX == 0 {
            p.bytes as u64
        } else {
            0
        };
        self.stats[f].first_tx_bytes += first_tx;
        if let Some(total) = &mut self.total {
            total.on_delivery(now, p.sent, p.bytes);
            total.goodput_bytes += good;
            total.first_tx_bytes += first_tx;
        }
        self.path_stats[self.nets[f].path_base + p.path as usize].delivered += 1;
        // A delayed ACK waits for the next packet or the receiver's timer (`arm_receiver`).
        if let Some(ack) = &ack {
            self.send_ack(now, ack);
        }
        self.arm_receiver(p.flow);
    }

    fn send_ack(&mut self, now: Time, ack: &Ack) {
        self.acks_sent += 1;
        let net = &self.nets[ack.flow as usize];
        // The ACK's `path` arrives as the path its data took (a window update: path 0).
        let back = match net.ack_path {
            AckPath::Same => (ack.path as usize).min(net.n_paths - 1),
            AckPath::Fixed(j) => (j as usize).min(net.n_paths - 1),
        };
        self.path_stats[net.path_base + back].acks_sent += 1;
        // The sender gets it with the path it returned on.
        let ack = Ack {
            path: back as u8,
            ..*ack
        };
        let mut p = ack.packet(self.acks.put(ack), now);
        p.at = self.path_routes[net.path_base + back].1;
        let first = self.route_hops[p.at as usize];
        self.arrive(now, first, p);
    }

    /// A receiver wakes up to send a delayed ACK, or window updates when its application reads at a set rate.
    fn arm_receiver(&mut self, f: u32) {
        if let Some(t) = self.receivers[f as usize].take_wake() {
            self.events.push(t, Phase::Normal, Ev::RecvWake(f));
        }
    }

    fn finish(mut self) -> (RunResult, Option<PacketLog>) {
        let end = self.end;
        self.stats.iter_mut().for_each(FlowStats::flush);
        let mut total_stats = match self.total.take() {
            None => self.stats[0].link_total(self.total_bins),
            Some(mut t) => {
                if t.bins_only {
                    t.adopt(&mut self.stats[0]);
                }
                t
            }
        };
        // No departure follows: each signal delay's open millisecond is recorded in place.
        total_stats.flush();
        for st in self.stats.iter_mut().chain([&mut total_stats]) {
            st.signal.close();
        }
        for (h, hop) in self.hops.iter_mut().enumerate() {
            if let Some(l) = &mut hop.link {
                l.finish(end);
            }
            if hop.stats.delay_from_flows {
                for (net, st) in self.nets.iter().zip(&self.stats) {
                    if net.monitor as usize == h {
                        hop.stats.queue_delay_ms.merge(st.queue_delay());
                    }
                }
            }
        }
        self.log_opportunities();
        // Packets still inside the network, counted where they physically are.
        let n = self.senders.len();
        let mut in_net = vec![0u64; n];
        let mut acks_in_net = 0u64;
        let mut held = vec![(0u64, 0u64); self.hops.len()];
        for (i, hop) in self.hops.iter().enumerate() {
            let mut count = |p: &Packet| match p.kind {
                PacketKind::Data => in_net[p.flow as usize] += 1,
                PacketKind::Ack => acks_in_net += 1,
            };
            if let Some(l) = &hop.link {
                l.for_each_packet(&mut count);
                held[i].0 = l.backlog().0;
            }
            hop.pipe.for_each_packet(&mut count);
            held[i].1 = hop.pipe.len() as u64;
        }

        let mon = self.hops[self.monitor as usize]
            .link
            .as_ref()
            .expect("the monitor is a link");
        let cap = &mon.capacity;
        let (first, last) = match (total_stats.first_ms, cap.first_ms) {
            (Some(a), Some(b)) => (a.min(b), total_stats.last_ms.max(cap.last_ms)),
            (Some(a), None) => (a, total_stats.last_ms),
            (None, Some(b)) => (b, cap.last_ms),
            (None, None) => (0, 0),
        };
        // Mahimahi: duration spans the first to the last logged event, opportunities included.
        let dur_ms = if mon.is_trace() {
            last - first
        } else {
            end.as_ms_floor()
        };
        let mbps = |bytes: u64, ms: u64| {
            if ms > 0 {
                bytes as f64 * 8.0 / (ms as f64 / 1000.0) / 1e6
            } else {
                0.0
            }
        };
        let cap_mbps = mbps(cap.total_bytes, dur_ms);
        // Other links' capacity is averaged over the whole run.
        let hop_cap = |h: u32| -> f64 {
            if h == self.monitor {
                return cap_mbps;
            }
            self.hops[h as usize]
                .link
                .as_ref()
                .map_or(0.0, |l| mbps(l.capacity.total_bytes, end.as_ms_floor()))
        };

        let mut flows = Vec::with_capacity(n);
        for (i, st) in self.stats.iter().enumerate() {
            let fd = match st.first_ms {
                Some(a) => st.last_ms - a,
                None => 0,
            };
            let mut s = FlowSummary::from_stats(st, fd, hop_cap(self.nets[i].monitor));
            s.flow = Some(i as u32);
            s.controller = self.controllers[i].clone();
            s.in_flight = in_net[i];
            s.declared_lost = self.senders[i].declared_lost();
            s.retransmissions = self.senders[i].retransmissions();
            s.rtos = self.senders[i].rtos();
            s.counters = self.senders[i].counters();
            if self.senders[i].transport() == Transport::Cmt {
                // Gap blocks the receiver held at most (paper 002: up to ~W/2 with unequal delays).
                s.counters
                    .push(("max_gap_blocks", self.receivers[i].max_gap_blocks));
            }
            if let Some(p) = self.senders[i].plan() {
                s.transfers_done = p.transfers_done;
                s.fct_mean_s = p.fct_mean_s();
                s.transfers_started = p.transfers_started;
                s.file_bytes_done = p.file_bytes_done;
                s.on_rate_mbps = p.on_rate_mbps();
                s.largest_file_bytes = p.largest_drawn_bytes;
                s.files_capped = p.files_capped;
            }
            flows.push(s);
        }
        let mut total = FlowSummary::from_stats(&total_stats, dur_ms, cap_mbps);
        total.in_flight = in_net.iter().sum();
        total.declared_lost = flows.iter().map(|f| f.declared_lost).sum();
        total.retransmissions = flows.iter().map(|f| f.retransmissions).sum();
        total.rtos = flows.iter().map(|f| f.rtos).sum();
        total.controller = "all".into();
        total.transfers_done = flows.iter().map(|f| f.transfers_done).sum();
        total.transfers_started = flows.iter().map(|f| f.transfers_started).sum();
        total.file_bytes_done = flows.iter().map(|f| f.file_bytes_done).sum();
        total.files_capped = flows.iter().map(|f| f.files_capped).sum();
        total.largest_file_bytes = flows
            .iter()
            .filter_map(|f| f.largest_file_bytes)
            .reduce(f64::max);
        let off_periods = self
            .senders
            .iter()
            .map(|s| {
                s.plan()
                    .map(|p| {
                        p.off_periods
                            .iter()
                            .map(|&(a, b)| (a.as_secs_f64(), b.as_secs_f64()))
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .collect();
        let transfers = self
            .senders
            .iter()
            .map(|s| s.plan().map(|p| p.periods.clone()).unwrap_or_default())
            .collect();
        let tputs: Vec<f64> = flows.iter().map(|f| f.throughput_mbps).collect();

        let sc_per_flow = &self.per_flow;
        let links = self
            .hops
            .iter()
            .enumerate()
            .filter_map(|(i, hop)| {
                let k = hop.spec?;
                if sc_per_flow[k] && hop.owner.is_none() {
                    return None; // a template: its copies are reported
                }
                let st = &hop.stats;
                let c = hop_cap(i as u32);
                let secs = if i as u32 == self.monitor {
                    dur_ms as f64 / 1000.0
                } else {
                    end.as_secs_f64()
                };
                let tput = if secs > 0.0 {
                    st.departed_bytes as f64 * 8.0 / secs / 1e6
                } else {
                    0.0
                };
                Some(LinkSummary {
                    name: match hop.owner {
                        Some(f) => format!("{}#{f}", self.link_names[k]),
                        None => self.link_names[k].clone(),
                    },
                    arrivals: hop.arrivals,
                    dropped: st.dropped,
                    departures: st.departures,
                    forwarded: hop.forwarded,
                    queued: held[i].0,
                    in_pipe: held[i].1,
                    throughput_mbps: tput,
                    capacity_mbps: c,
                    utilization: if c > 0.0 { tput / c } else { 0.0 },
                    queue_delay_p95_ms: st.queue_delay_ms.percentile(0.95).map(|v| v as f64),
                    queue_delay_mean_ms: st.queue_delay_ms.mean(),
                })
            })
            .collect();
        let mut paths = Vec::with_capacity(self.path_stats.len());
        for (f, net) in self.nets.iter().enumerate() {
            let cmt = self.senders[f].path_reports(end);
            for j in 0..net.n_paths {
                let c = self.path_stats[net.path_base + j];
                let r = cmt.get(j);
                paths.push(PathSummary {
                    retransmissions: r.map_or(0, |r| r.retransmissions),
                    fast_retransmits: r.map_or(0, |r| r.fast_retransmits),
                    timeouts: r.map_or(0, |r| r.timeouts),
                    mean_cwnd_bytes: r.map(|r| r.mean_cwnd_bytes),
                    flow: f as u32,
                    path: j as u8,
                    sent: c.sent,
                    delivered: c.delivered,
                    dropped: c.dropped,
                    acks_sent: c.acks_sent,
                    acks_delivered: c.acks_delivered,
                    acks_dropped: c.acks_dropped,
                });
            }
        }

        let mut samples = Vec::new();
        for (i, snd) in self.senders.iter_mut().enumerate() {
            for x in snd.take_samples() {
                samples.push((i as u32, x.t.as_ns(), x.d_ms, x.w));
            }
        }
        let cap = &self.hops[self.monitor as usize]
            .link
            .as_ref()
            .expect("the monitor is a link")
            .capacity;
        let mut bins: Vec<Vec<_>> = self.stats.iter().map(|s| s.bins().to_vec()).collect();
        let mut tb = total_stats.bins().to_vec();
        let nb = cap.bins.len().max(tb.len());
        tb.resize(nb, Default::default());
        for (i, c) in cap.bins.iter().enumerate() {
            tb[i].capacity_bytes = *c;
        }
        bins.push(tb);
        let result = RunResult {
            total,
            flows,
            links,
            paths,
            jain_index: jain_index(&tputs),
            bin_s: self.bin_ns as f64 / 1e9,
            bins,
            events: self.n_events,
            sim_end_s: end.as_secs_f64(),
            acks: (
                self.acks_sent,
                self.acks_delivered,
                self.acks_dropped,
                acks_in_net,
            ),
            cwnd: self.cwnd_log.take().unwrap_or_default(),
            samples,
            transfers,
            off_periods,
        };
        (result, self.log)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load_scenario;

    /// The run as it was before the derived statistics: the link total and every link's queue-delay
    /// histogram recorded per packet.
    fn run_both(toml: &str) -> (String, String) {
        run_both_sc(&load_scenario(toml, None, &[]).unwrap())
    }

    fn run_both_sc(sc: &Scenario) -> (String, String) {
        let derived = Simulation::new(sc).unwrap();
        let mut recorded = Simulation::new(sc).unwrap();
        if recorded.total.is_none() {
            let bin = recorded.total_bins.then_some(Dur(recorded.bin_ns));
            recorded.total = Some(FlowStats {
                bins_only: true,
                ..FlowStats::new(bin)
            });
        }
        for hop in &mut recorded.hops {
            hop.stats.delay_from_flows = false;
        }
        let show =
            |r: RunResult| format!("{:?}\n{:?}\n{:?}\n{}", r.total, r.links, r.bins, r.events);
        (show(derived.run().0), show(recorded.run().0))
    }

    #[test]
    fn deferred_flow_histograms_give_the_same_run_as_recording_each_packet() {
        // From DEFER_FROM_FLOWS flows on, samples wait in per-flow batches; the whole run must equal the
        // same run recorded per packet: 64 lossy Cubic flows with staggered starts and stops and per-flow
        // bins (a batch may be half full when a flow stops, when a bin closes and at the end).
        let mut toml = String::from(
            "seed = 5\nduration_s = 12\nbin_ms = 250\ntimeseries = \"flows\"\n[data_link]\nrate_mbps = 24\n\
             delay_ms = 10\nqueue = { kind = \"droptail\", packets = 200 }\n\
             loss = { kind = \"bernoulli\", p = 0.002 }\n[ack_link]\nrate_mbps = 24\ndelay_ms = 10\n",
        );
        for i in 0..DEFER_FROM_FLOWS {
            toml += &format!(
                "[[flows]]\ncontroller = \"cubic\"\nstart_s = {}\nstop_s = {}\n",
                (i % 7) as f64 * 0.3,
                8.0 + (i % 5) as f64
            );
        }
        let sc = load_scenario(&toml, None, &[]).unwrap();
        let deferred = Simulation::new(&sc).unwrap();
        assert!(deferred.stats.iter().all(|s| s.is_deferred()));
        let mut direct = Simulation::new(&sc).unwrap();
        direct.stats = std::mem::take(&mut direct.stats)
            .into_iter()
            .map(|s| s.deferred(false))
            .collect();
        let show = |r: RunResult| format!("{r:?}");
        assert_eq!(show(deferred.run().0), show(direct.run().0));
    }

    #[test]
    fn derived_link_total_and_link_delays_equal_per_packet_recording() {
        // One lossy flow starting and stopping mid-run (window records after its last packet), a
        // datagram flow, and a two-path CMT flow whose second link carries only its data.
        let link = "rate_mbps = 8\ndelay_ms = 10\nqueue = { kind = \"droptail\", packets = 20 }\n\
                    loss = { kind = \"bernoulli\", p = 0.01 }\n[ack_link]\nrate_mbps = 8\ndelay_ms = 10\n";
        for ts in ["flows", "link", "none"] {
            for flow in [
                "controller = \"cubic\"\nstart_s = 1\nstop_s = 6\n",
                "controller = \"cubic\"\ntimeseries = true\n",
                "controller = \"lied\"\ntransport = \"datagram\"\nstop_s = 5\n",
            ] {
                let toml = format!(
                    "seed = 3\nduration_s = 8\nbin_ms = 100\ntimeseries = \"{ts}\"\n[data_link]\n{link}[[flows]]\n{flow}"
                );
                let (d, r) = run_both(&toml);
                assert!(d == r, "{ts} / {flow}:\n{d}\n---\n{r}");
            }
        }
    }

    #[test]
    fn every_example_gives_the_same_link_statistics_derived_or_recorded() {
        // The examples cover parking lots, cross traffic, ACK-only links and CMT over two links.
        for (p, sc) in
            crate::bench::example_scenarios(&crate::package_dir!(), Dur::from_ms(3_000)).unwrap()
        {
            let (d, r) = run_both_sc(&sc);
            assert!(d == r, "{}:\n{d}\n---\n{r}", p.display());
        }
    }
}
