//! A scenario: two links (data and ACK direction), the flows that share them, and run settings.

use ccscope_cc::Transport;
use ccscope_core::{Dur, Time};

pub use crate::endpoint::datagram::DatagramMode;
pub use crate::endpoint::{App, RtoParams};
use ccscope_net::{LossConfig, QueueConfig, Service};

/// One direction of the path: random loss, a queue, a serializer, then propagation delay.
#[derive(Clone, Debug)]
pub struct LinkSpec {
    pub service: Service,
    /// One-way propagation delay of this direction (a flow may override it).
    pub delay: Dur,
    pub queue: QueueConfig,
    pub loss: LossConfig,
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
    /// Overrides the data link's propagation delay for this flow.
    pub delay: Option<Dur>,
    /// Overrides the ACK link's propagation delay for this flow.
    pub ack_delay: Option<Dur>,
    /// Data packet size on the wire (datagrump: 1424 B payload + 48 B header + 28 B UDP/IP = 1500).
    pub packet_bytes: u32,
    /// ACK size on the wire (datagrump: 48 B header + 28 B UDP/IP = 76).
    pub ack_bytes: u32,
    /// Transport; `None` takes the controller's default (datagram for paper 001's, reliable for TCPs).
    pub transport: Option<Transport>,
    /// How the datagram sender counts its window (`datagrump`: as datagrump's sender.cc).
    pub datagram_mode: DatagramMode,
    /// What the application sends (reliable transport).
    pub app: App,
    /// Retransmission timer settings (reliable transport).
    pub rto: RtoParams,
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
            packet_bytes: 1500,
            ack_bytes: 76,
            transport: None,
            datagram_mode: DatagramMode::Standard,
            app: App::Bulk,
            rto: RtoParams::default(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    pub duration: Dur,
    /// Sender -> receiver.
    pub data_link: LinkSpec,
    /// Receiver -> sender.
    pub ack_link: LinkSpec,
    pub flows: Vec<FlowSpec>,
    /// Width of time-series bins.
    pub bin: Dur,
    /// Keep a per-packet log of the data link (memory grows with the run).
    pub packet_log: bool,
    /// Record every change of every flow's congestion window (memory grows with the run).
    pub cwnd_log: bool,
}

impl LinkSpec {
    pub fn constant(mbps: f64, delay_ms: u64) -> LinkSpec {
        LinkSpec {
            service: Service::Constant(ccscope_core::Bandwidth::from_mbps(mbps)),
            delay: Dur::from_ms(delay_ms),
            queue: QueueConfig::Infinite,
            loss: LossConfig::None,
        }
    }
}
