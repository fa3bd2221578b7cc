//! Scenario files: TOML in, a validated `Scenario` out, or one error line naming file, line and field.
//!
//! ```toml
//! seed = 1
//! duration_s = 140            # optional when the data link is a trace played `once`
//! [data_link]                 # sender -> receiver
//! trace = "Verizon-LTE-short.down"   # or: rate_mbps = 12
//! once = true
//! delay_ms = 20
//! queue = { kind = "infinite" }      # droptail/drophead (packets, bytes), red, codel
//! loss = { kind = "none" }           # bernoulli (p), gilbert_elliott (p_gb, p_bg, loss_good, loss_bad)
//! [ack_link]                  # receiver -> sender
//! trace = "Verizon-LTE-short.up"
//! delay_ms = 20
//! [[flows]]
//! controller = "fixed"
//! window = 12                 # any other key is a controller parameter
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ccscope_core::{Bandwidth, Dur, Time};
use ccscope_net::queue::{CodelParams, Limits, RedParams};
use ccscope_net::{LossConfig, QueueConfig, Service, Trace, TraceError};
use toml_edit::{ImDocument, Item, TableLike};

use crate::scenario::{FlowSpec, LinkSpec, Scenario};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}:{line}: {reason}")]
    Syntax { file: String, line: usize, reason: String },
    #[error("{file}:{line}: field `{field}`: {reason}")]
    Field { file: String, line: usize, field: String, reason: String },
    #[error("{0}")]
    Trace(#[from] TraceError),
    #[error("{file}: cannot read scenario: {reason}")]
    Io { file: String, reason: String },
}

impl ConfigError {
    pub fn field(&self) -> Option<&str> {
        match self {
            ConfigError::Field { field, .. } => Some(field),
            _ => None,
        }
    }
}

/// Keys of a flow table that are not controller parameters.
const FLOW_KEYS: &[&str] = &[
    "controller",
    "count",
    "start_s",
    "stop_s",
    "delay_ms",
    "ack_delay_ms",
    "packet_bytes",
    "ack_bytes",
    "transport",
    "datagram_mode",
    "start_jitter_s",
    "transfers_bytes",
    "think_s",
    "traffic",
    "min_rto_ms",
    "max_rto_ms",
    "initial_rto_ms",
];

struct Ctx<'a> {
    file: String,
    text: &'a str,
    dir: Option<PathBuf>,
    search: &'a [PathBuf],
    traces: HashMap<PathBuf, Arc<Trace>>,
}

impl Ctx<'_> {
    fn line_of(&self, span: Option<std::ops::Range<usize>>) -> usize {
        span.map(|s| self.text[..s.start.min(self.text.len())].matches('\n').count() + 1).unwrap_or(1)
    }

    fn resolve(&self, name: &str) -> Option<PathBuf> {
        let p = Path::new(name);
        if p.is_absolute() {
            return p.exists().then(|| p.to_path_buf());
        }
        self.dir.iter().chain(self.search.iter()).map(|d| d.join(p)).find(|c| c.exists())
    }
}

/// A table being read: records which keys were used so leftovers can be reported.
struct Tbl<'c, 'a> {
    ctx: &'c Ctx<'a>,
    t: &'a dyn TableLike,
    path: String,
    line: usize,
    used: Vec<&'static str>,
}

type R<T> = Result<T, ConfigError>;

impl<'c, 'a> Tbl<'c, 'a> {
    fn field_name(&self, key: &str) -> String {
        if self.path.is_empty() { key.to_string() } else { format!("{}.{key}", self.path) }
    }

    fn err(&self, key: &str, reason: impl Into<String>) -> ConfigError {
        let line = match self.t.get(key) {
            Some(item) => self.item_line(key, item),
            None => self.line,
        };
        ConfigError::Field { file: self.ctx.file.clone(), line, field: self.field_name(key), reason: reason.into() }
    }

    fn item_line(&self, key: &str, item: &Item) -> usize {
        let span = self.t.key(key).and_then(|k| k.span()).or_else(|| item.span());
        match span {
            Some(s) => self.ctx.line_of(Some(s)),
            None => self.line,
        }
    }

    fn get(&mut self, key: &'static str) -> Option<&'a Item> {
        self.used.push(key);
        self.t.get(key)
    }

    fn f64(&mut self, key: &'static str) -> R<Option<f64>> {
        match self.get(key) {
            None => Ok(None),
            Some(i) => match i.as_float().or_else(|| i.as_integer().map(|x| x as f64)) {
                Some(v) if v.is_finite() => Ok(Some(v)),
                _ => Err(self.err(key, format!("expected a number, got {}", describe(i)))),
            },
        }
    }

    fn f64_in(&mut self, key: &'static str, lo: f64, hi: f64, what: &str) -> R<Option<f64>> {
        let v = self.f64(key)?;
        if let Some(x) = v {
            if !(x >= lo && x <= hi) {
                return Err(self.err(key, format!("{x} is out of range: must be {what}")));
            }
        }
        Ok(v)
    }

    fn positive(&mut self, key: &'static str) -> R<Option<f64>> {
        let v = self.f64(key)?;
        if let Some(x) = v {
            if x <= 0.0 {
                return Err(self.err(key, format!("{x} must be > 0")));
            }
        }
        Ok(v)
    }

    fn non_negative(&mut self, key: &'static str) -> R<Option<f64>> {
        self.f64_in(key, 0.0, f64::MAX, ">= 0")
    }

    fn uint(&mut self, key: &'static str) -> R<Option<u64>> {
        match self.get(key) {
            None => Ok(None),
            Some(i) => match i.as_integer() {
                Some(v) if v >= 0 => Ok(Some(v as u64)),
                Some(v) => Err(self.err(key, format!("{v} must be a non-negative integer"))),
                None => Err(self.err(key, format!("expected an integer, got {}", describe(i)))),
            },
        }
    }

    fn bool(&mut self, key: &'static str) -> R<Option<bool>> {
        match self.get(key) {
            None => Ok(None),
            Some(i) => i.as_bool().map(Some).ok_or_else(|| self.err(key, format!("expected true or false, got {}", describe(i)))),
        }
    }

    fn str(&mut self, key: &'static str) -> R<Option<&'a str>> {
        match self.get(key) {
            None => Ok(None),
            Some(i) => i.as_str().map(Some).ok_or_else(|| self.err(key, format!("expected a string, got {}", describe(i)))),
        }
    }

    fn table(&mut self, key: &'static str) -> R<Option<Tbl<'c, 'a>>> {
        match self.get(key) {
            None => Ok(None),
            Some(i) => match i.as_table_like() {
                Some(t) => {
                    let line = self.item_line(key, i);
                    Ok(Some(Tbl { ctx: self.ctx, t, path: self.field_name(key), line, used: Vec::new() }))
                }
                None => Err(self.err(key, format!("expected a table, got {}", describe(i)))),
            },
        }
    }

    /// Every key must have been read.
    fn done(&self) -> R<()> {
        for (k, _) in self.t.iter() {
            if !self.used.contains(&k) {
                return Err(self.err(k, "unknown key"));
            }
        }
        Ok(())
    }
}

fn describe(i: &Item) -> String {
    let s = i.to_string();
    let s = s.trim();
    if s.len() > 40 { format!("{}...", &s[..40]) } else { s.to_string() }
}

/// Parse and validate scenario text. `file` labels errors; relative trace paths are looked up next
/// to `file`, then in each of `search`.
pub fn load_scenario(text: &str, file: Option<&Path>, search: &[PathBuf]) -> Result<Scenario, ConfigError> {
    let label = file.map(|f| f.display().to_string()).unwrap_or_else(|| "<scenario>".to_string());
    let doc = ImDocument::parse(text).map_err(|e| ConfigError::Syntax {
        file: label.clone(),
        line: e.span().map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1).unwrap_or(1),
        reason: e.message().trim().replace('\n', " "),
    })?;
    let values: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Syntax {
        file: label.clone(),
        line: 1,
        reason: e.message().to_string(),
    })?;
    let mut ctx = Ctx {
        file: label,
        text,
        dir: file.and_then(|f| f.parent().map(|p| p.to_path_buf())),
        search,
        traces: HashMap::new(),
    };
    parse_root(&mut ctx, doc.as_table(), &values)
}

fn parse_root(ctx: &mut Ctx<'_>, root: &toml_edit::Table, values: &toml::Table) -> R<Scenario> {
    // Links first (they load traces, which needs `ctx` mutably), then the rest.
    let (data_link, ack_link) = {
        let mut links = Vec::new();
        for key in ["data_link", "ack_link"] {
            let spec = {
                let c: &Ctx<'_> = ctx;
                let mut top = Tbl { ctx: c, t: root, path: String::new(), line: 1, used: Vec::new() };
                let t = match key {
                    "data_link" => top.table("data_link")?,
                    _ => top.table("ack_link")?,
                };
                match t {
                    Some(t) => Some(parse_link_fields(t)?),
                    None if key == "data_link" => return Err(top.err("data_link", "missing: a scenario needs a [data_link] table")),
                    None => None,
                }
            };
            links.push(spec);
        }
        let mut out = Vec::new();
        for l in links {
            out.push(match l {
                Some(raw) => Some(finish_link(ctx, raw)?),
                None => None,
            });
        }
        let data = out[0].clone().expect("required above");
        // Without an [ack_link] the ACK direction is an uncongested 1 Gbit/s link with the same delay.
        let ack = out[1].clone().unwrap_or_else(|| LinkSpec {
            service: Service::Constant(Bandwidth::from_mbps(1000.0)),
            delay: data.delay,
            queue: QueueConfig::Infinite,
            loss: LossConfig::None,
        });
        (data, ack)
    };
    let c: &Ctx<'_> = ctx;
    let mut top = Tbl { ctx: c, t: root, path: String::new(), line: 1, used: vec!["data_link", "ack_link"] };
    let name = top.str("name")?.unwrap_or("scenario").to_string();
    let seed = top.uint("seed")?.unwrap_or(1);
    let duration = match top.positive("duration_s")? {
        Some(s) => Dur::from_secs_f64(s),
        None => match &data_link.service {
            // mahimahi link_queue.cc use_a_delivery_opportunity(): `once` ends after the last opportunity is used.
            Service::Trace { trace, once: true } => trace.period() + Dur(1),
            _ => return Err(top.err("duration_s", "missing: required unless the data link is a trace with once = true")),
        },
    };
    let bin = Dur::from_ms_f64(top.positive("bin_ms")?.unwrap_or(500.0));
    let packet_log = top.bool("packet_log")?.unwrap_or(false);
    let cwnd_log = top.bool("cwnd_log")?.unwrap_or(false);
    let flows_item = top.get("flows");
    let Some(flows_item) = flows_item else {
        return Err(top.err("flows", "missing: a scenario needs at least one [[flows]] table"));
    };
    // `[[flows]]` tables, or an inline array of tables (what TOML writers often emit).
    let tables: Vec<(&dyn TableLike, Option<std::ops::Range<usize>>)> = if let Some(a) = flows_item.as_array_of_tables() {
        a.iter().map(|t| (t as &dyn TableLike, t.span())).collect()
    } else if let Some(a) = flows_item.as_array() {
        let mut v = Vec::new();
        for x in a.iter() {
            match x.as_inline_table() {
                Some(t) => v.push((t as &dyn TableLike, x.span())),
                None => return Err(top.err("flows", "expected [[flows]] tables")),
            }
        }
        v
    } else {
        return Err(top.err("flows", "expected [[flows]] tables"));
    };
    let flow_values = values.get("flows").and_then(|v| v.as_array());
    let mut flows = Vec::new();
    for (i, (ft, span)) in tables.into_iter().enumerate() {
        let line = c.line_of(span);
        let mut t = Tbl { ctx: c, t: ft, path: format!("flows[{i}]"), line, used: Vec::new() };
        let fv = flow_values.and_then(|a| a.get(i)).and_then(|v| v.as_table());
        let (spec, count) = parse_flow(&mut t, fv)?;
        check_round_trip(&t, &spec, &data_link, &ack_link)?;
        for _ in 0..count {
            flows.push(spec.clone());
        }
    }
    if flows.is_empty() {
        return Err(top.err("flows", "no flows (count = 0 everywhere)"));
    }
    top.done()?;
    Ok(Scenario { name, seed, duration, data_link, ack_link, flows, bin, packet_log, cwnd_log })
}

struct RawLink {
    trace: Option<(String, usize, String)>,
    once: bool,
    rate: Option<f64>,
    spec: LinkSpec,
}

fn parse_link_fields(mut t: Tbl<'_, '_>) -> R<RawLink> {
    let delay = Dur::from_ms_f64(t.non_negative("delay_ms")?.unwrap_or(0.0));
    let rate = t.positive("rate_mbps")?;
    let once = t.bool("once")?.unwrap_or(false);
    let trace = t.str("trace")?.map(|s| (s.to_string(), 0usize, t.field_name("trace")));
    let trace = match trace {
        Some((s, _, f)) => Some((s, t.item_line("trace", t.t.get("trace").expect("read above")), f)),
        None => None,
    };
    match (&trace, rate) {
        (Some(_), Some(_)) => return Err(t.err("rate_mbps", "give either `trace` or `rate_mbps`, not both")),
        (None, None) => return Err(t.err("rate_mbps", "missing: a link needs `trace` or `rate_mbps`")),
        _ => {}
    }
    let queue = match t.table("queue")? {
        Some(q) => parse_queue(q)?,
        None => QueueConfig::Infinite,
    };
    let loss = match t.table("loss")? {
        Some(l) => parse_loss(l)?,
        None => LossConfig::None,
    };
    t.done()?;
    let service = Service::Constant(Bandwidth::from_mbps(rate.unwrap_or(0.0)));
    Ok(RawLink { trace, once, rate, spec: LinkSpec { service, delay, queue, loss } })
}

fn finish_link(ctx: &mut Ctx<'_>, raw: RawLink) -> R<LinkSpec> {
    let mut spec = raw.spec;
    if let Some((name, line, field)) = raw.trace {
        let path = ctx.resolve(&name).ok_or_else(|| {
            let places: Vec<String> = ctx.dir.iter().chain(ctx.search.iter()).map(|d| d.display().to_string()).collect();
            ConfigError::Field {
                file: ctx.file.clone(),
                line,
                field: field.clone(),
                reason: format!("trace file `{name}` not found (looked in: {})", places.join(", ")),
            }
        })?;
        let trace = match ctx.traces.get(&path) {
            Some(t) => t.clone(),
            None => {
                let t = Arc::new(Trace::from_file(&path)?);
                ctx.traces.insert(path, t.clone());
                t
            }
        };
        spec.service = Service::Trace { trace, once: raw.once };
    } else {
        debug_assert!(raw.rate.is_some());
    }
    Ok(spec)
}

fn limits(t: &mut Tbl<'_, '_>) -> R<Limits> {
    let packets = t.uint("packets")?;
    let bytes = t.uint("bytes")?;
    if packets == Some(0) {
        return Err(t.err("packets", "must be >= 1"));
    }
    Ok(Limits { packets, bytes })
}

fn parse_queue(mut t: Tbl<'_, '_>) -> R<QueueConfig> {
    let kind = t.str("kind")?.unwrap_or("infinite");
    let q = match kind {
        "infinite" => QueueConfig::Infinite,
        "droptail" | "drophead" => {
            let l = limits(&mut t)?;
            if l.packets.is_none() && l.bytes.is_none() {
                return Err(t.err("kind", format!("a {kind} queue needs `packets` and/or `bytes`")));
            }
            if kind == "droptail" { QueueConfig::DropTail(l) } else { QueueConfig::DropHead(l) }
        }
        "red" => {
            let d = RedParams::default();
            let min_bytes = t.non_negative("min_bytes")?.unwrap_or(d.min_bytes);
            let max_bytes = t.positive("max_bytes")?.unwrap_or(d.max_bytes);
            if min_bytes >= max_bytes {
                return Err(t.err("max_bytes", format!("must exceed min_bytes ({min_bytes})")));
            }
            QueueConfig::Red(RedParams {
                min_bytes,
                max_bytes,
                max_p: t.f64_in("max_p", 0.0, 1.0, "in [0, 1]")?.unwrap_or(d.max_p),
                weight: t.f64_in("weight", 0.0, 1.0, "in [0, 1]")?.unwrap_or(d.weight),
                gentle: t.bool("gentle")?.unwrap_or(d.gentle),
                mean_packet_bytes: t.uint("mean_packet_bytes")?.map(|v| v.max(1) as u32).unwrap_or(d.mean_packet_bytes),
                limit: limits(&mut t)?,
            })
        }
        "codel" => {
            let d = CodelParams::default();
            QueueConfig::Codel(CodelParams {
                target: t.positive("target_ms")?.map(Dur::from_ms_f64).unwrap_or(d.target),
                interval: t.positive("interval_ms")?.map(Dur::from_ms_f64).unwrap_or(d.interval),
                mtu_bytes: t.uint("mtu_bytes")?.map(|v| v as u32).unwrap_or(d.mtu_bytes),
                limit: limits(&mut t)?,
            })
        }
        other => return Err(t.err("kind", format!("unknown queue `{other}` (known: infinite, droptail, drophead, red, codel)"))),
    };
    t.done()?;
    Ok(q)
}

fn parse_loss(mut t: Tbl<'_, '_>) -> R<LossConfig> {
    let kind = t.str("kind")?.unwrap_or("none");
    let prob = |t: &mut Tbl<'_, '_>, k: &'static str, d: f64| -> R<f64> { Ok(t.f64_in(k, 0.0, 1.0, "a probability in [0, 1]")?.unwrap_or(d)) };
    let l = match kind {
        "none" => LossConfig::None,
        "bernoulli" => LossConfig::Bernoulli { p: prob(&mut t, "p", 0.0)? },
        "gilbert_elliott" => LossConfig::GilbertElliott {
            p_gb: prob(&mut t, "p_gb", 0.01)?,
            p_bg: prob(&mut t, "p_bg", 0.3)?,
            loss_good: prob(&mut t, "loss_good", 0.0)?,
            loss_bad: prob(&mut t, "loss_bad", 1.0)?,
        },
        "list" => {
            let item = t.get("packets").ok_or_else(|| t.err("kind", "a list loss model needs `packets = [indices]`"))?;
            let arr = item.as_array().ok_or_else(|| t.err("packets", "expected an array of packet indices"))?;
            let mut v = Vec::new();
            for x in arr.iter() {
                match x.as_integer() {
                    Some(i) if i >= 0 => v.push(i as u64),
                    _ => return Err(t.err("packets", format!("`{}` is not a non-negative index", x.to_string().trim()))),
                }
            }
            v.sort_unstable();
            v.dedup();
            LossConfig::List(v)
        }
        other => return Err(t.err("kind", format!("unknown loss model `{other}` (known: none, bernoulli, gilbert_elliott, list)"))),
    };
    t.done()?;
    Ok(l)
}

/// `traffic = { kind = "onoff", ... }`: paper 000 §6.6 ON/OFF users (defaults = Table 3).
fn parse_traffic(mut t: Tbl<'_, '_>) -> R<crate::endpoint::App> {
    let app = match t.str("kind")?.unwrap_or("onoff") {
        "bulk" => crate::endpoint::App::Bulk,
        "onoff" => {
            let d = crate::traffic::OnOffParams::default();
            let p = crate::traffic::OnOffParams {
                mean_bytes: t.positive("mean_bytes")?.unwrap_or(d.mean_bytes),
                std_bytes: t.non_negative("std_bytes")?.unwrap_or(d.std_bytes),
                max_bytes: t.positive("max_bytes")?.map(|v| v as u64).unwrap_or(d.max_bytes),
                off_mean: t.positive("off_mean_s")?.map(Dur::from_secs_f64).unwrap_or(d.off_mean),
            };
            // Rejection sampling needs a reasonable chance of a draw at or below the maximum.
            let (mu, sigma) = p.mu_sigma();
            if (p.max_bytes as f64).ln() < mu - 3.0 * sigma {
                return Err(t.err("max_bytes", format!("{} is far below the size distribution (median {:.0} B)", p.max_bytes, mu.exp())));
            }
            crate::endpoint::App::OnOff(p)
        }
        other => return Err(t.err("kind", format!("unknown traffic `{other}` (known: bulk, onoff)"))),
    };
    t.done()?;
    Ok(app)
}

/// The flow's controller parameters must suit its path's propagation round trip (a trained model's
/// delay range, say); the controller decides (`Params::check_round_trip`).
fn check_round_trip(t: &Tbl<'_, '_>, f: &FlowSpec, data: &LinkSpec, ack: &LinkSpec) -> R<()> {
    let Ok(info) = ccscope_cc::registry::find(&f.controller) else { return Ok(()) }; // python: checked by the bindings
    let rtt_ms = (f.delay.unwrap_or(data.delay) + f.ack_delay.unwrap_or(ack.delay)).as_ms_f64();
    (info.check_round_trip)(&f.params, rtt_ms).map_err(|e| match e {
        ccscope_cc::ParamError::Invalid { key, reason } => t.err(&key, reason),
        other => t.err("controller", other.to_string()),
    })
}

fn parse_flow(t: &mut Tbl<'_, '_>, values: Option<&toml::Table>) -> R<(FlowSpec, u64)> {
    let controller = t.str("controller")?.ok_or_else(|| t.err("controller", "missing: every flow needs a controller"))?;
    let mut f = FlowSpec::new(controller);
    let count = t.uint("count")?.unwrap_or(1);
    f.start = Time::from_secs_f64(t.non_negative("start_s")?.unwrap_or(0.0));
    f.start_jitter = Dur::from_secs_f64(t.non_negative("start_jitter_s")?.unwrap_or(0.0));
    f.stop = t.positive("stop_s")?.map(Time::from_secs_f64);
    if f.stop.is_some_and(|s| s <= f.start) {
        return Err(t.err("stop_s", "must be later than start_s"));
    }
    f.delay = t.non_negative("delay_ms")?.map(Dur::from_ms_f64);
    f.ack_delay = t.non_negative("ack_delay_ms")?.map(Dur::from_ms_f64);
    if let Some(b) = t.uint("packet_bytes")? {
        if !(28..=65535).contains(&b) {
            return Err(t.err("packet_bytes", "must be in 28..=65535"));
        }
        f.packet_bytes = b as u32;
    }
    if let Some(b) = t.uint("ack_bytes")? {
        if !(28..=65535).contains(&b) {
            return Err(t.err("ack_bytes", "must be in 28..=65535"));
        }
        f.ack_bytes = b as u32;
    }
    f.transport = match t.str("transport")? {
        None => None,
        Some("datagram") => Some(ccscope_cc::Transport::Datagram),
        Some("reliable") => Some(ccscope_cc::Transport::Reliable),
        Some(other) => return Err(t.err("transport", format!("unknown transport `{other}` (known: datagram, reliable)"))),
    };
    if let Some(m) = t.str("datagram_mode")? {
        f.datagram_mode = crate::endpoint::datagram::DatagramMode::parse(m).ok_or_else(|| t.err("datagram_mode", format!("unknown mode `{m}` (known: standard, datagrump)")))?;
    }
    let think = Dur::from_secs_f64(t.non_negative("think_s")?.unwrap_or(0.0));
    if let Some(item) = t.get("transfers_bytes") {
        let arr = item.as_array().ok_or_else(|| t.err("transfers_bytes", "expected an array of sizes in bytes"))?;
        let mut packets = Vec::new();
        for v in arr.iter() {
            match v.as_integer() {
                Some(b) if b > 0 => packets.push((b as u64).div_ceil(f.packet_bytes as u64)),
                _ => return Err(t.err("transfers_bytes", format!("`{}` is not a positive integer", v.to_string().trim()))),
            }
        }
        f.app = crate::endpoint::App::Transfers { packets, think };
    }
    if let Some(tr) = t.table("traffic")? {
        if f.app != crate::endpoint::App::Bulk {
            return Err(t.err("traffic", "give either `traffic` or `transfers_bytes`, not both"));
        }
        f.app = parse_traffic(tr)?;
    }
    let d = crate::endpoint::RtoParams::default();
    f.rto.min = t.positive("min_rto_ms")?.map(Dur::from_ms_f64).unwrap_or(d.min);
    f.rto.max = t.positive("max_rto_ms")?.map(Dur::from_ms_f64).unwrap_or(d.max);
    f.rto.initial = t.positive("initial_rto_ms")?.map(Dur::from_ms_f64).unwrap_or(d.initial);
    if f.rto.min > f.rto.max {
        return Err(t.err("min_rto_ms", "must not exceed max_rto_ms"));
    }
    if let Some(v) = values {
        for (k, val) in v {
            if !FLOW_KEYS.contains(&k.as_str()) {
                f.params.insert(k.clone(), val.clone());
            }
        }
    }
    // A model file named relative to the scenario is resolved next to it.
    if let Some(toml::Value::String(m)) = f.params.get("model") {
        let p = Path::new(m);
        if p.is_relative() {
            if let Some(full) = t.ctx.dir.as_ref().map(|d| d.join(p)).filter(|c| c.exists()) {
                f.params.insert("model".into(), toml::Value::String(full.display().to_string()));
            }
        }
    }
    // Built-in controllers are checked here so the error points into the file; Python ones are
    // checked by the bindings when the class is instantiated.
    if f.controller != "python" {
        if let Err(e) = ccscope_cc::registry::find(&f.controller).and_then(|info| (info.build)(&f.params).map(|_| ())) {
            let key = e.key().filter(|k| f.params.contains_key(*k)).unwrap_or("controller").to_string();
            return Err(t.err(&key, e.to_string()));
        }
    }
    Ok((f, count))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Scenario, ConfigError> {
        load_scenario(text, Some(Path::new("s.toml")), &[])
    }

    const OK: &str = "duration_s = 10\n[data_link]\nrate_mbps = 12\ndelay_ms = 20\n[[flows]]\ncontroller = \"aimd\"\nadditive_increase = 1\ncount = 2\n";

    #[test]
    fn a_minimal_scenario_loads_with_defaults() {
        let s = load(OK).unwrap();
        assert_eq!(s.flows.len(), 2);
        assert_eq!(s.flows[0].params.get("additive_increase").and_then(|v| v.as_integer()), Some(1));
        assert_eq!(s.ack_link.delay, Dur::from_ms(20));
        assert_eq!(s.duration, Dur::from_ms(10_000));
    }

    #[test]
    fn a_markov_model_must_cover_the_flows_propagation_round_trip() {
        use ccscope_cc::common::ccm::{Meta, Model};
        // Delay bins of 2 ms from 40 ms: [40, 60) ms.
        let meta = Meta { quantize_ms: 2.0, d_min_ms: 40.0, d_max_ms: 59.0, w_min: 0, w_max: 1, n_d: 10, n_w: 2 };
        let rows: Vec<_> = (0..20u32).map(|s| vec![((s + 1) % 20, 1.0)]).collect();
        let path = std::env::temp_dir().join(format!("ccscope-config-{}.ccm", std::process::id()));
        Model::from_rows(meta, &rows).expect("valid").write(&path).expect("write");
        let text = |delay: u32| {
            format!("duration_s = 1\n[data_link]\nrate_mbps = 12\ndelay_ms = {delay}\n[[flows]]\ncontroller = \"markov\"\nmodel = \"{}\"\n", path.display())
        };
        assert!(load(&text(20)).is_ok(), "40 ms round trip: inside");
        let e = load(&text(5)).unwrap_err().to_string();
        assert!(e.starts_with("s.toml:7: field `flows[0].model`:") && e.contains("round trip is 10 ms"), "{e}");
        let e = load(&text(40)).unwrap_err().to_string();
        assert!(e.contains("covers delays 40..59 ms") && e.contains("round trip is 80 ms"), "{e}");
        std::fs::remove_file(&path).ok();
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let e = load(&OK.replace("rate_mbps = 12", "rate_mbps = -3")).unwrap_err();
        assert_eq!(e.to_string(), "s.toml:3: field `data_link.rate_mbps`: -3 must be > 0");
        let e = load(&OK.replace("controller = \"aimd\"", "controller = \"nope\"")).unwrap_err();
        assert!(e.to_string().starts_with("s.toml:6: field `flows[0].controller`: unknown controller `nope`"), "{e}");
        let e = load(&OK.replace("additive_increase = 1", "additive_incr = 1")).unwrap_err();
        assert!(e.to_string().starts_with("s.toml:7: field `flows[0].additive_incr`: unknown parameter"), "{e}");
        let e = load(&OK.replace("additive_increase = 1", "decrease_factor = 7")).unwrap_err();
        assert!(e.to_string().starts_with("s.toml:7: field `flows[0].decrease_factor`:"), "{e}");
        let e = load(&format!("bogus = 1\n{OK}")).unwrap_err();
        assert!(e.to_string().contains("unknown key"), "{e}");
        let e = load("[data_link\n").unwrap_err();
        assert!(matches!(e, ConfigError::Syntax { line: 1, .. }), "{e}");
        let e = load(&OK.replace("[data_link]\n", "[data_link]\nqueue = { kind = \"droptail\" }\n")).unwrap_err();
        assert_eq!(e.field(), Some("data_link.queue.kind"));
    }

    #[test]
    fn a_missing_trace_is_reported_with_where_it_was_looked_for() {
        let e = load(&OK.replace("rate_mbps = 12", "trace = \"nope.down\"")).unwrap_err();
        assert!(e.to_string().starts_with("s.toml:3: field `data_link.trace`: trace file `nope.down` not found"), "{e}");
    }
}
