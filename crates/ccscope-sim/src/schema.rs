//! The scenario file's schema: serde types that mirror the TOML, field for field (units in the
//! names). `config` deserializes them, checks what the types cannot say, and builds a `Scenario`.
//! Every table refuses unknown keys, but a flow's: its other keys are controller parameters.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;

/// A TOML table read in document order (the order links are declared in is kept).
#[derive(Clone, Debug)]
pub struct Ordered<T>(pub Vec<(String, T)>);

impl<T> Default for Ordered<T> {
    fn default() -> Self {
        Ordered(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Ordered<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table of named links")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut v = Vec::new();
                while let Some((k, x)) = m.next_entry::<String, T>()? {
                    v.push((k, x));
                }
                Ok(Ordered(v))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub name: Option<String>,
    pub seed: Option<u64>,
    pub duration_s: Option<f64>,
    pub bin_ms: Option<f64>,
    pub timeseries: Option<TimeSeriesFile>,
    pub packet_log: Option<bool>,
    pub cwnd_log: Option<bool>,
    pub monitor: Option<String>,
    pub data_link: Option<LinkFile>,
    pub ack_link: Option<LinkFile>,
    #[serde(default)]
    pub links: Ordered<LinkFile>,
    pub flows: Option<Vec<FlowFile>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeSeriesFile {
    Flows,
    Link,
    None,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkFile {
    pub rate_mbps: Option<f64>,
    pub trace: Option<String>,
    pub once: Option<bool>,
    pub delay_ms: Option<f64>,
    pub per_flow: Option<bool>,
    pub queue: Option<QueueFile>,
    pub loss: Option<LossFile>,
}

/// `queue = { kind = "...", ... }`; limits in packets and/or bytes.
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueFile {
    Infinite,
    Droptail {
        packets: Option<u64>,
        bytes: Option<u64>,
    },
    Drophead {
        packets: Option<u64>,
        bytes: Option<u64>,
    },
    Red {
        min_bytes: Option<f64>,
        max_bytes: Option<f64>,
        max_p: Option<f64>,
        weight: Option<f64>,
        gentle: Option<bool>,
        mean_packet_bytes: Option<u64>,
        packets: Option<u64>,
        bytes: Option<u64>,
    },
    Codel {
        target_ms: Option<f64>,
        interval_ms: Option<f64>,
        mtu_bytes: Option<u64>,
        flavour: Option<String>,
        packets: Option<u64>,
        bytes: Option<u64>,
    },
    Pie {
        qdelay_ref_ms: Option<f64>,
        max_burst_ms: Option<f64>,
        t_update_ms: Option<f64>,
        alpha: Option<f64>,
        beta: Option<f64>,
        flavour: Option<String>,
        packets: Option<u64>,
        bytes: Option<u64>,
    },
}

/// `loss = { kind = "...", ... }`.
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossFile {
    None,
    Bernoulli {
        p: Option<f64>,
    },
    GilbertElliott {
        p_gb: Option<f64>,
        p_bg: Option<f64>,
        loss_good: Option<f64>,
        loss_bad: Option<f64>,
    },
    List {
        packets: Vec<u64>,
    },
    /// Paper 002 eq. 7 (specs/002-cmt.md A12): per flow, the rest of a round is lost after its first loss.
    RoundCorrelated {
        p: f64,
    },
    /// A12's robustness check: per flow, every packet within `window_ms` after a loss is lost.
    BurstAfterLoss {
        p: f64,
        window_ms: f64,
    },
}

/// `traffic = { kind = "...", ... }` (paper 000 §6.6 ON/OFF users, defaults = its Table 3; with
/// `size = "pareto"`, paper 003 §4.1's Pareto files: `alpha` and `mean_bytes` or `min_bytes`).
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TrafficFile {
    Bulk,
    Onoff {
        size: Option<SizeLawFile>,
        mean_bytes: Option<f64>,
        std_bytes: Option<f64>,
        max_bytes: Option<f64>,
        alpha: Option<f64>,
        min_bytes: Option<f64>,
        off_mean_s: Option<f64>,
    },
}

/// The ON/OFF file-size law.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeLawFile {
    Lognormal,
    Pareto,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathFile {
    pub route: Option<Vec<String>>,
    pub ack_route: Option<Vec<String>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransportFile {
    Datagram,
    Reliable,
    Cmt,
}

/// CMT window management (paper 002 §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WindowManagementFile {
    None,
    Dynamic,
    Static,
}

/// One `[[flows]]` table. Keys not named here are the controller's parameters.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct FlowFile {
    pub controller: Option<String>,
    pub count: Option<u64>,
    pub start_s: Option<f64>,
    pub start_jitter_s: Option<f64>,
    pub stop_s: Option<f64>,
    pub delay_ms: Option<f64>,
    pub ack_delay_ms: Option<f64>,
    pub packet_bytes: Option<u64>,
    pub ack_bytes: Option<u64>,
    pub transport: Option<TransportFile>,
    pub datagram_mode: Option<String>,
    pub transfers_bytes: Option<Vec<toml::Value>>,
    pub think_s: Option<f64>,
    pub traffic: Option<TrafficFile>,
    pub min_rto_ms: Option<f64>,
    pub max_rto_ms: Option<f64>,
    pub initial_rto_ms: Option<f64>,
    /// "rfc6298" (default) or "linux".
    pub rto_estimator: Option<String>,
    pub frto: Option<bool>,
    /// RFC 3042 limited transmit.
    pub limited_transmit: Option<bool>,
    /// RFC 6937 proportional rate reduction in fast recovery.
    pub prr: Option<bool>,
    /// RFC 8985 RACK loss detection.
    pub rack: Option<bool>,
    /// RFC 8985 tail loss probe.
    pub tlp: Option<bool>,
    /// RFC 2883 DSACK from the receiver.
    pub dsack: Option<bool>,
    /// ns-2's TCP `overhead_`: a uniform random delay in [0, this) before each send (reliable).
    pub send_overhead_ms: Option<f64>,
    /// "none" (an ACK per packet), "ns3" or "linux": the receiver's delayed ACKs.
    pub delayed_ack: Option<String>,
    /// "rfc" (default), "linux" or "ns3": the reliable transport's defaults as the RFCs' baseline, as
    /// Linux 6.x or as ns-3.37 sets them.
    pub stack: Option<String>,
    pub route: Option<Vec<String>>,
    pub ack_route: Option<Vec<String>>,
    pub paths: Option<Vec<PathFile>>,
    /// "same" or a path index.
    pub ack_path: Option<toml::Value>,
    pub monitor: Option<String>,
    pub timeseries: Option<bool>,
    /// Bytes, or "unlimited".
    pub rbuf_bytes: Option<toml::Value>,
    pub sndbuf_bytes: Option<toml::Value>,
    /// Mbit/s, or "unlimited".
    pub read_rate_mbps: Option<toml::Value>,
    /// CMT: "model" or "rfc4960" (the `sctp` controller's `mode`).
    pub cmt_mode: Option<String>,
    /// CMT: "none", "dynamic" or "static".
    pub window_management: Option<WindowManagementFile>,
    /// CMT, dynamic management: rank by "bandwidth" (measured bottleneck rate) or "throughput" (CWND/SRTT).
    pub dynamic_rank: Option<String>,
    /// CMT, static management: one limit per path, packets.
    pub cwnd_limits_packets: Option<Vec<i64>>,
    #[serde(flatten)]
    pub params: toml::Table,
}
