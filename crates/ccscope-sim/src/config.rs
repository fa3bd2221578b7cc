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

use crate::scenario::{FlowSpec, LinkSpec, Scenario, TimeSeries};

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
    "route",
    "ack_route",
    "paths",
    "ack_path",
    "monitor",
    "timeseries",
    "rbuf_bytes",
    "read_rate_mbps",
    "sndbuf_bytes",
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

/// At most this many flows (after `count`): a bigger request is refused before anything is allocated.
pub const MAX_FLOWS: u64 = 1 << 20;
/// At most this long a run (115 days of simulated time; integer ns reach 584 years).
pub const MAX_DURATION_S: f64 = 1e7;
/// At most this many time-series bins per series.
pub const MAX_BINS: f64 = (1u64 << 24) as f64;

fn parse_root(ctx: &mut Ctx<'_>, root: &toml_edit::Table, values: &toml::Table) -> R<Scenario> {
    // Links first (they load traces, which needs `ctx` mutably), then the rest.
    let mut raw = Vec::new();
    {
        let c: &Ctx<'_> = ctx;
        let mut top = Tbl { ctx: c, t: root, path: String::new(), line: 1, used: Vec::new() };
        for key in ["data_link", "ack_link"] {
            let t = if key == "data_link" { top.table("data_link")? } else { top.table("ack_link")? };
            if let Some(t) = t {
                raw.push((key.to_string(), parse_link_fields(t, false)?));
            }
        }
        if let Some(links) = top.table("links")? {
            if raw.first().is_some_and(|(n, _)| n == "ack_link") {
                return Err(top.err("ack_link", "an [ack_link] needs a [data_link]"));
            }
            for (name, item) in links.t.iter() {
                let line = links.item_line(name, item);
                let path = links.field_name(name);
                if matches!(name, "data_link" | "ack_link") {
                    return Err(links.err(name, "this name is the dumbbell's: give the link another name"));
                }
                let Some(t) = item.as_table_like() else {
                    return Err(links.err(name, format!("expected a table, got {}", describe(item))));
                };
                raw.push((name.to_string(), parse_link_fields(Tbl { ctx: c, t, path, line, used: Vec::new() }, true)?));
            }
            if links.t.is_empty() {
                return Err(top.err("links", "no links in [links]"));
            }
        } else if raw.first().is_none_or(|(n, _)| n != "data_link") {
            return Err(top.err("data_link", "missing: a scenario needs a [data_link] table (or named [links.NAME] tables)"));
        }
    }
    let mut links = Vec::with_capacity(raw.len() + 1);
    for (name, l) in raw {
        let mut spec = finish_link(ctx, l)?;
        spec.name = name;
        links.push(spec);
    }
    let dumbbell = match links.first() {
        Some(l) if l.name == "data_link" => {
            // Without an [ack_link] the ACK direction is an uncongested 1 Gbit/s link with the same delay.
            if links.get(1).is_none_or(|l| l.name != "ack_link") {
                let ack = LinkSpec {
                    name: "ack_link".into(),
                    service: Service::Constant(Bandwidth::from_mbps(1000.0)),
                    delay: links[0].delay,
                    queue: QueueConfig::Infinite,
                    loss: LossConfig::None,
                    per_flow: false,
                };
                links.insert(1, ack);
            }
            Some((0, 1))
        }
        _ => None,
    };
    let names: Vec<String> = links.iter().map(|l| l.name.clone()).collect();
    let c: &Ctx<'_> = ctx;
    let mut top = Tbl { ctx: c, t: root, path: String::new(), line: 1, used: vec!["data_link", "ack_link", "links"] };
    let name = top.str("name")?.unwrap_or("scenario").to_string();
    let seed = top.uint("seed")?.unwrap_or(1);
    let duration = match top.positive("duration_s")? {
        Some(s) if s > MAX_DURATION_S => return Err(top.err("duration_s", format!("{s} s is more than the {MAX_DURATION_S:e} s a run may simulate"))),
        Some(s) => Dur::from_secs_f64(s),
        None => match dumbbell.map(|d| &links[d.0].service) {
            // mahimahi link_queue.cc use_a_delivery_opportunity(): `once` ends after the last opportunity is used.
            Some(Service::Trace { trace, once: true }) => trace.period() + Dur(1),
            _ => return Err(top.err("duration_s", "missing: required unless the data link is a trace with once = true")),
        },
    };
    let bin_ms = top.positive("bin_ms")?.unwrap_or(500.0);
    let timeseries = match top.str("timeseries")? {
        None => None,
        Some("flows") => Some(TimeSeries::Flows),
        Some("link") => Some(TimeSeries::Link),
        Some("none") => Some(TimeSeries::None),
        Some(other) => return Err(top.err("timeseries", format!("unknown `{other}` (known: flows, link, none)"))),
    };
    if timeseries != Some(TimeSeries::None) && duration.as_secs_f64() * 1000.0 / bin_ms > MAX_BINS {
        return Err(top.err("bin_ms", format!("{bin_ms} ms bins over {} s are more than {MAX_BINS:e} bins: use wider bins", duration.as_secs_f64())));
    }
    let bin = Dur::from_ms_f64(bin_ms);
    let packet_log = top.bool("packet_log")?.unwrap_or(false);
    let cwnd_log = top.bool("cwnd_log")?.unwrap_or(false);
    let monitor = match top.str("monitor")? {
        Some(m) => names.iter().position(|n| n == m).ok_or_else(|| top.err("monitor", format!("unknown link `{m}` (links: {})", names.join(", "))))?,
        None => dumbbell.map(|d| d.0).unwrap_or(usize::MAX),
    };
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
    let mut specs = Vec::new();
    let mut n_flows = 0u64;
    for (i, (ft, span)) in tables.into_iter().enumerate() {
        let line = c.line_of(span);
        let mut t = Tbl { ctx: c, t: ft, path: format!("flows[{i}]"), line, used: Vec::new() };
        let fv = flow_values.and_then(|a| a.get(i)).and_then(|v| v.as_table());
        let (spec, count) = parse_flow(&mut t, fv, &names, dumbbell.is_some())?;
        n_flows = n_flows.saturating_add(count);
        if n_flows > MAX_FLOWS {
            return Err(t.err("count", format!("{n_flows} flows in all: at most {MAX_FLOWS} are allowed")));
        }
        specs.push((spec, count, line, i, ft));
    }
    if n_flows == 0 {
        return Err(top.err("flows", "no flows (count = 0 everywhere)"));
    }
    top.done()?;
    // Totals describe the dumbbell's data link, or the link the most flows' data crosses.
    let monitor = if monitor != usize::MAX {
        monitor
    } else {
        let mut crossing = vec![0u64; links.len()];
        for (f, count, ..) in &specs {
            for &l in f.paths.first().map(|p| p.route.as_slice()).unwrap_or(&[]) {
                crossing[l] += count;
            }
        }
        let shared = (0..links.len()).filter(|&l| !links[l].per_flow);
        match shared.rev().max_by_key(|&l| crossing[l]) {
            Some(l) => l,
            None => return Err(top.err("links", "every link is per-flow: a scenario needs at least one shared link for its totals")),
        }
    };
    if links[monitor].per_flow {
        return Err(top.err("monitor", format!("`{}` is per-flow: the totals describe one shared link", links[monitor].name)));
    }
    // Per-flow series for a few flows; for many, the link's only unless asked (memory grows with
    // flows x run length otherwise).
    let timeseries = timeseries.unwrap_or(if n_flows as usize <= TimeSeries::FLOWS_BY_DEFAULT { TimeSeries::Flows } else { TimeSeries::Link });
    let mut sc = Scenario { name, seed, duration, links, dumbbell, monitor, flows: Vec::with_capacity(n_flows as usize), bin, timeseries, packet_log, cwnd_log };
    for (spec, count, line, i, ft) in specs {
        let t = Tbl { ctx: c, t: ft, path: format!("flows[{i}]"), line, used: Vec::new() };
        check_round_trip(&t, &spec, &sc)?;
        for _ in 0..count {
            sc.flows.push(spec.clone());
        }
    }
    Ok(sc)
}

struct RawLink {
    trace: Option<(String, usize, String)>,
    once: bool,
    rate: Option<f64>,
    spec: LinkSpec,
}

fn parse_link_fields(mut t: Tbl<'_, '_>, may_be_per_flow: bool) -> R<RawLink> {
    let delay = Dur::from_ms_f64(t.non_negative("delay_ms")?.unwrap_or(0.0));
    let rate = t.positive("rate_mbps")?;
    if let Some(r) = rate {
        // Rates are integer bits per second: below one, packets would never leave.
        if !(1e-6..=1e9).contains(&r) {
            return Err(t.err("rate_mbps", format!("{r} is out of range: a link's rate must be in [1e-6, 1e9] Mbit/s")));
        }
    }
    let per_flow = t.bool("per_flow")?.unwrap_or(false);
    if per_flow && !may_be_per_flow {
        return Err(t.err("per_flow", "the dumbbell's links are shared: a per-flow link is a [links.NAME] table"));
    }
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
    Ok(RawLink { trace, once, rate, spec: LinkSpec { name: String::new(), service, delay, queue, loss, per_flow } })
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
fn check_round_trip(t: &Tbl<'_, '_>, f: &FlowSpec, sc: &Scenario) -> R<()> {
    let Ok(info) = ccscope_cc::registry::find(&f.controller) else { return Ok(()) }; // python: checked by the bindings
    let rtt_ms = sc.round_trip(f).as_ms_f64();
    (info.check_round_trip)(&f.params, rtt_ms).map_err(|e| match e {
        ccscope_cc::ParamError::Invalid { key, reason } => t.err(&key, reason),
        other => t.err("controller", other.to_string()),
    })
}

/// A route: link names, each known and none repeated.
fn parse_route(t: &mut Tbl<'_, '_>, key: &'static str, item: &toml_edit::Item, names: &[String]) -> R<Vec<usize>> {
    let arr = item.as_array().ok_or_else(|| t.err(key, "expected an array of link names"))?;
    let mut route = Vec::with_capacity(arr.len());
    for x in arr.iter() {
        let name = x.as_str().ok_or_else(|| t.err(key, format!("`{}` is not a link name", x.to_string().trim())))?;
        let l = names.iter().position(|n| n == name).ok_or_else(|| t.err(key, format!("unknown link `{name}` (links: {})", names.join(", "))))?;
        if l < 2 && matches!(name, "data_link" | "ack_link") {
            return Err(t.err(key, format!("`{name}` is the dumbbell's: a route names [links.NAME] links")));
        }
        if route.contains(&l) {
            return Err(t.err(key, format!("link `{name}` appears twice")));
        }
        route.push(l);
    }
    if route.is_empty() {
        return Err(t.err(key, "an empty route"));
    }
    if route.len() > u16::MAX as usize {
        return Err(t.err(key, "more than 65535 links"));
    }
    Ok(route)
}

/// `route` + `ack_route`, or `paths = [{ route, ack_route }, ...]`.
fn parse_paths(t: &mut Tbl<'_, '_>, names: &[String]) -> R<Vec<crate::scenario::PathSpec>> {
    let route = t.get("route");
    let ack = t.get("ack_route");
    let paths = t.get("paths");
    let mut out = Vec::new();
    match (route, ack, paths) {
        (None, None, None) => {}
        (Some(r), Some(a), None) => out.push(crate::scenario::PathSpec { route: parse_route(t, "route", r, names)?, ack_route: parse_route(t, "ack_route", a, names)? }),
        (Some(_), None, None) => return Err(t.err("route", "a flow with a `route` needs an `ack_route` (the links its ACKs take)")),
        (None, Some(_), None) => return Err(t.err("ack_route", "an `ack_route` needs a `route`")),
        (_, _, Some(p)) => {
            if route.is_some() || ack.is_some() {
                return Err(t.err("paths", "give either `paths` or `route` and `ack_route`, not both"));
            }
            let arr: Vec<&dyn TableLike> = if let Some(a) = p.as_array() {
                a.iter().filter_map(|x| x.as_inline_table().map(|t| t as &dyn TableLike)).collect()
            } else if let Some(a) = p.as_array_of_tables() {
                a.iter().map(|t| t as &dyn TableLike).collect()
            } else {
                return Err(t.err("paths", "expected an array of { route = [...], ack_route = [...] } tables"));
            };
            if arr.is_empty() || p.as_array().is_some_and(|a| a.len() != arr.len()) {
                return Err(t.err("paths", "expected an array of { route = [...], ack_route = [...] } tables"));
            }
            if arr.len() > u8::MAX as usize {
                return Err(t.err("paths", "at most 255 paths"));
            }
            for (j, pt) in arr.into_iter().enumerate() {
                let line = t.item_line("paths", p);
                let mut sub = Tbl { ctx: t.ctx, t: pt, path: format!("{}[{j}]", t.field_name("paths")), line, used: Vec::new() };
                let r = sub.get("route").ok_or_else(|| sub.err("route", "missing: a path needs a `route`"))?;
                let a = sub.get("ack_route").ok_or_else(|| sub.err("ack_route", "missing: a path needs an `ack_route` (the links its ACKs take)"))?;
                let ps = crate::scenario::PathSpec { route: parse_route(&mut sub, "route", r, names)?, ack_route: parse_route(&mut sub, "ack_route", a, names)? };
                sub.done()?;
                out.push(ps);
            }
        }
    }
    Ok(out)
}

fn parse_flow(t: &mut Tbl<'_, '_>, values: Option<&toml::Table>, names: &[String], dumbbell: bool) -> R<(FlowSpec, u64)> {
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
    f.paths = parse_paths(t, names)?;
    if f.paths.is_empty() && !dumbbell {
        return Err(t.err("route", "missing: without a [data_link] every flow needs a `route` and an `ack_route` (or `paths`)"));
    }
    if !f.paths.is_empty() {
        for k in ["delay_ms", "ack_delay_ms"] {
            if t.t.contains_key(k) {
                return Err(t.err(k, "a flow with a route takes its delays from its links"));
            }
        }
    }
    f.ack_path = match t.get("ack_path") {
        None => crate::scenario::AckPath::Same,
        Some(i) => match (i.as_str(), i.as_integer()) {
            (Some("same"), _) => crate::scenario::AckPath::Same,
            (_, Some(j)) if j >= 0 && (j as usize) < f.paths.len().max(1) => crate::scenario::AckPath::Fixed(j as u8),
            _ => return Err(t.err("ack_path", format!("expected \"same\" or a path index below {}", f.paths.len().max(1)))),
        },
    };
    f.timeseries = t.bool("timeseries")?;
    if let Some(m) = t.str("monitor")? {
        let l = names.iter().position(|n| n == m).ok_or_else(|| t.err("monitor", format!("unknown link `{m}`")))?;
        if !f.paths.iter().any(|p| p.route.contains(&l)) && !(f.paths.is_empty() && l == 0) {
            return Err(t.err("monitor", format!("the flow's data does not cross `{m}`")));
        }
        f.monitor = Some(l);
    }
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
    // Socket buffers: a number, or "unlimited" (the default). RFC 7323 §2.3: a window is at most 2^30 B.
    for key in ["rbuf_bytes", "sndbuf_bytes", "read_rate_mbps"] {
        let v = match t.get(key) {
            None => None,
            Some(i) if i.as_str() == Some("unlimited") => None,
            Some(i) => match i.as_float().or_else(|| i.as_integer().map(|x| x as f64)) {
                Some(x) if key == "read_rate_mbps" && x > 0.0 && x.is_finite() => Some(x),
                Some(x) if key != "read_rate_mbps" && x.fract() == 0.0 && x >= f.packet_bytes as f64 && x <= (1u64 << 30) as f64 => Some(x),
                _ if key == "read_rate_mbps" => return Err(t.err(key, format!("expected a rate > 0 or \"unlimited\", got {}", describe(i)))),
                _ => return Err(t.err(key, format!("expected bytes in packet_bytes..=2^30 or \"unlimited\", got {}", describe(i)))),
            },
        };
        match key {
            "rbuf_bytes" => f.buffers.rbuf_bytes = v.map(|x| x as u64),
            "sndbuf_bytes" => f.buffers.sndbuf_bytes = v.map(|x| x as u64),
            _ => f.buffers.read_rate = v.map(Bandwidth::from_mbps),
        }
    }
    if f.buffers.read_rate.is_some() && f.buffers.rbuf_bytes.is_none() {
        return Err(t.err("read_rate_mbps", "needs a limited rbuf_bytes (an unlimited buffer never closes the window)"));
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
    // Only the datagram transport sends over several paths (round-robin, loss detected per path);
    // the reliable transport's cumulative ACK and duplicate-ACK rules are single-path.
    if f.paths.len() > 1 {
        let default = ccscope_cc::registry::find(&f.controller).map(|c| c.transport).unwrap_or(ccscope_cc::Transport::Datagram);
        if f.transport.unwrap_or(default) == ccscope_cc::Transport::Reliable {
            return Err(t.err("paths", "the reliable transport is single-path: several paths need the datagram transport (SCTP-CMT comes with paper 002)"));
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
        assert_eq!(s.links[1].delay, Dur::from_ms(20));
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
