//! A scenario: named links joined into a topology, the flows whose paths cross them, and run settings.
//!
//! Today's dumbbell (`[data_link]` + `[ack_link]`) is one topology among others: its flows take the
//! data link then their own forward delay, and their ACKs their own reverse delay then the ACK link
//! (see `Simulation` for the expansion).

use ccscope_cc::Transport;
use ccscope_core::{Dur, Time};

pub use crate::endpoint::datagram::DatagramMode;
pub use crate::endpoint::{App, BufferParams, Rank, RtoParams, WindowManagement};
use ccscope_net::{LossConfig, QueueConfig, Service};

/// Index of a link in `Scenario::links`.
pub type LinkIdx = usize;

/// One link: random loss, a queue, a serializer, then propagation delay.
#[derive(Clone, Debug)]
pub struct LinkSpec {
    /// The scenario's name for it (`data_link`, `ack_link` or the key under `[links]`).
    pub name: String,
    pub service: Service,
    /// One-way propagation delay after the serializer (in the dumbbell, a flow may override it).
    pub delay: Dur,
    pub queue: QueueConfig,
    pub loss: LossConfig,
    /// A template: every flow whose routes name it gets its own copy (an access link per client).
    pub per_flow: bool,
}

/// One path of a connection: the links its data crosses, in order, and the links its ACKs cross.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathSpec {
    pub route: Vec<LinkIdx>,
    pub ack_route: Vec<LinkIdx>,
}

/// Which path carries the ACK of a data packet that arrived on path i.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AckPath {
    /// The ACK route of path i itself.
    #[default]
    Same,
    /// The ACK route of this path, whatever path the data took.
    Fixed(u8),
}

/// One flow: a sender with its controller and a receiver that ACKs every packet.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    /// Registered controller name, or `python` for a controller class written in Python.
    pub controller: String,
    /// Controller parameters, validated against the controller's `Params` schema.
    pub params: toml::Table,
    pub start: Time,
    /// The flow starts at `start` plus a uniform random delay in [0, start_jitter), drawn from the seed.
    pub start_jitter: Dur,
    pub stop: Option<Time>,
    /// Dumbbell only: overrides the data link's propagation delay for this flow.
    pub delay: Option<Dur>,
    /// Dumbbell only: overrides the ACK link's propagation delay for this flow.
    pub ack_delay: Option<Dur>,
    /// The flow's paths through a topology; empty = the dumbbell's data and ACK links.
    pub paths: Vec<PathSpec>,
    pub ack_path: AckPath,
    /// The link whose departures give the flow's throughput and queueing delays; `None` = the
    /// scenario's monitored link if the flow crosses it, else the last link of its first route.
    pub monitor: Option<LinkIdx>,
    /// Data packet size on the wire (datagrump: 1424 B payload + 48 B header + 28 B UDP/IP = 1500).
    pub packet_bytes: u32,
    /// ACK size on the wire (datagrump: 48 B header + 28 B UDP/IP = 76).
    pub ack_bytes: u32,
    /// Transport; `None` takes the controller's default (datagram for paper 001's, reliable for TCPs).
    pub transport: Option<Transport>,
    /// How the datagram sender counts its window (`datagrump`: as datagrump's sender.cc; `ctcp`:
    /// genericCC's sender loop); `None` takes the controller's registry default, else `standard`.
    pub datagram_mode: Option<DatagramMode>,
    /// What the application sends (reliable transport).
    pub app: App,
    /// Retransmission timer settings (reliable transport).
    pub rto: RtoParams,
    /// ns-2's TCP `overhead_` (reliable transport): each send waits a uniform random time in
    /// [0, send_overhead) on a delayed-send timer; zero sends at once.
    pub send_overhead: Dur,
    /// Keep this flow's time series; `None` = the scenario's choice.
    pub timeseries: Option<bool>,
    /// Receive and send buffers (reliable transport; CMT: `rbuf_bytes` is the shared RBUF);
    /// unlimited by default.
    pub buffers: BufferParams,
    /// CMT: how destinations share the receive buffer (paper 002 §5).
    pub window_management: WindowManagement,
}

impl FlowSpec {
    pub fn new(controller: &str) -> FlowSpec {
        FlowSpec {
            controller: controller.to_string(),
            params: toml::Table::new(),
            start: Time::ZERO,
            start_jitter: Dur::ZERO,
            stop: None,
            delay: None,
            ack_delay: None,
            paths: Vec::new(),
            ack_path: AckPath::Same,
            monitor: None,
            packet_bytes: 1500,
            ack_bytes: 76,
            transport: None,
            datagram_mode: None,
            app: App::Bulk,
            rto: RtoParams::default(),
            send_overhead: Dur::ZERO,
            timeseries: None,
            buffers: BufferParams::default(),
            window_management: WindowManagement::None,
        }
    }

    /// Its transport: the one set, else its controller's default (datagram for a Python controller).
    pub fn transport(&self) -> Transport {
        self.transport.unwrap_or_else(|| {
            ccscope_cc::registry::find(&self.controller)
                .map_or(Transport::Datagram, |c| c.transport)
        })
    }

    /// Its datagram sender mode: the one set, else its controller's registry default, else standard.
    pub fn datagram_mode(&self) -> DatagramMode {
        self.datagram_mode.unwrap_or_else(|| {
            ccscope_cc::registry::find(&self.controller)
                .ok()
                .and_then(|c| c.datagram_mode)
                .and_then(DatagramMode::parse)
                .unwrap_or_default()
        })
    }

    /// Whether its data and its ACKs cross link `l` (`dumbbell`: the scenario's, for a flow without paths).
    pub fn crosses(&self, l: LinkIdx, dumbbell: Option<(LinkIdx, LinkIdx)>) -> (bool, bool) {
        if self.paths.is_empty() {
            return dumbbell.map_or((false, false), |(d, a)| (d == l, a == l));
        }
        let data = self.paths.iter().any(|p| p.route.contains(&l));
        let acks = match self.ack_path {
            AckPath::Same => self.paths.iter().any(|p| p.ack_route.contains(&l)),
            AckPath::Fixed(j) => self
                .paths
                .get(j as usize)
                .is_some_and(|p| p.ack_route.contains(&l)),
        };
        (data, acks)
    }
}

#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    pub duration: Dur,
    /// Every link, in the order declared (the dumbbell's `data_link` and `ack_link` first).
    pub links: Vec<LinkSpec>,
    /// The dumbbell's (data link, ACK link), when the scenario has them.
    pub dumbbell: Option<(LinkIdx, LinkIdx)>,
    /// The link the run's totals, capacity and packet log describe.
    pub monitor: LinkIdx,
    pub flows: Vec<FlowSpec>,
    /// Width of time-series bins.
    pub bin: Dur,
    /// Which time series to keep.
    pub timeseries: TimeSeries,
    /// Keep a per-packet log of the monitored link (memory grows with the run).
    pub packet_log: bool,
    /// Record every change of every flow's congestion window (memory grows with the run).
    pub cwnd_log: bool,
}

/// Which time series a run keeps: bins cost memory in proportion to the run's length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeSeries {
    /// Every flow's and the monitored link's.
    Flows,
    /// The monitored link's only (flows may ask for theirs).
    Link,
    /// None (flows may still ask for theirs).
    None,
}

impl TimeSeries {
    /// Up to this many flows, per-flow series are kept unless the scenario says otherwise.
    pub const FLOWS_BY_DEFAULT: usize = 64;
}

impl Scenario {
    /// The index of the link called `name`.
    pub fn link(&self, name: &str) -> Option<LinkIdx> {
        self.links.iter().position(|l| l.name == name)
    }

    /// The data link of the dumbbell, or the monitored link.
    pub fn data_link(&self) -> &LinkSpec {
        &self.links[self.dumbbell.map_or(self.monitor, |d| d.0)]
    }

    /// Propagation round trip of a flow's first path (dumbbell overrides included).
    pub fn round_trip(&self, f: &FlowSpec) -> Dur {
        match (f.paths.first(), self.dumbbell) {
            (Some(p), _) => p
                .route
                .iter()
                .chain(&p.ack_route)
                .map(|&l| self.links[l].delay)
                .fold(Dur::ZERO, |a, b| a + b),
            (None, Some((d, a))) => {
                f.delay.unwrap_or(self.links[d].delay) + f.ack_delay.unwrap_or(self.links[a].delay)
            }
            (None, None) => Dur::ZERO,
        }
    }
}

impl LinkSpec {
    pub fn constant(name: &str, mbps: f64, delay_ms: u64) -> LinkSpec {
        LinkSpec {
            name: name.to_string(),
            service: Service::Constant(ccscope_core::Bandwidth::from_mbps(mbps)),
            delay: Dur::from_ms(delay_ms),
            queue: QueueConfig::Infinite,
            loss: LossConfig::None,
            per_flow: false,
        }
    }
}
