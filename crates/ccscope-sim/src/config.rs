//! Scenario files: TOML in, a validated `Scenario` out, or one error line naming file, line and field.
//!
//! The file is deserialized into the serde types of `schema` (unknown keys, wrong types and unknown
//! variants are serde's errors), then checked for what types cannot say (ranges, names, routes).
//! Every error names the field by its path (`flows[0].route`) and the line that path is on; a value
//! that came from an override (`--set`, `overrides=`) names the override instead of a line.
//!
//! ```toml
//! seed = 1
//! duration_s = 140            # optional when the data link is a trace played `once`
//! [data_link]                 # sender -> receiver
//! trace = "Verizon-LTE-short.down"   # or: rate_mbps = 12
//! once = true
//! delay_ms = 20
//! queue = { kind = "infinite" }      # droptail/drophead (packets, bytes), red, codel, pie
//! loss = { kind = "none" }           # bernoulli (p), gilbert_elliott (p_gb, p_bg, loss_good, loss_bad),
//!                                    # round_correlated (p), burst_after_loss (p, window_ms)
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

use ccscope_core::text::{below_clock, beyond_bound, num, one_line};
use ccscope_core::{Bandwidth, Dur, Time, MAX_RATE_MBPS, MIN_RATE_MBPS};
use ccscope_net::queue::{CodelFlavour, CodelParams, Limits, PieFlavour, PieParams, RedParams};
use ccscope_net::{LossConfig, QueueConfig, Service, Trace, TraceError, MAHIMAHI_MTU};
use toml_edit::{ImDocument, Item};

use crate::scenario::{
    AckPath, FlowSpec, LinkSpec, PathSpec, Rank, Scenario, TimeSeries, WindowManagement,
};
use crate::schema::{
    FlowFile, LinkFile, LossFile, QueueFile, ScenarioFile, SizeLawFile, TimeSeriesFile,
    TrafficFile, TransportFile, WindowManagementFile,
};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}:{line}: {reason}")]
    Syntax {
        file: String,
        line: usize,
        reason: String,
    },
    // The reason may quote what the user typed: a line break there is shown escaped (one line).
    #[error("{file}:{line}: field `{}`: {}", one_line(.field), one_line(.reason))]
    Field {
        file: String,
        line: usize,
        field: String,
        reason: String,
    },
    /// A value given as an override, not in the file.
    #[error("{file}: override `{}`: field `{}`: {}", one_line(.key), one_line(.field), one_line(.reason))]
    Override {
        file: String,
        key: String,
        field: String,
        reason: String,
    },
    #[error("{0}")]
    Trace(#[from] TraceError),
    #[error("{file}: cannot read scenario: {reason}")]
    Io { file: String, reason: String },
}

impl ConfigError {
    pub fn field(&self) -> Option<&str> {
        match self {
            ConfigError::Field { field, .. } | ConfigError::Override { field, .. } => Some(field),
            _ => None,
        }
    }
}

/// At most this many flows (after `count`): a bigger request is refused before anything is allocated.
pub const MAX_FLOWS: u64 = 1 << 20;
/// At most this much per-flow state (flows, their per-flow link copies and their paths), estimated
/// before the run from the measured sizes below: 4 GiB, about 640,000 single-path flows.
pub const MAX_FLOW_STATE_BYTES: u64 = 4 << 30;
/// A flow's state (endpoints, controller, statistics) with nothing in flight: 6.1 kB measured
/// (peak RSS of 262,144 NewReno flows over 1 s: 1.59 GB; docs/performance.md).
const FLOW_BYTES: u64 = 6_400;
/// A per-flow link copy (queue, delay line, counters): 8.8 kB measured (131,072 flows of
/// examples/access_links.toml, 2 copies each: 3.09 GB).
const LINK_COPY_BYTES: u64 = 9_000;
/// A path's counters and routes.
const PATH_BYTES: u64 = 300;
/// What an SCTP-CMT association keeps beyond a flow and its paths: 2.7 kB, plus 1.5 kB a destination
/// (its window, RTT estimate, T3-rtx timer and scoreboard); measured at rest, peak RSS over 1 s of
/// 65,536 associations with 1, 2 and 4 paths: 10.9, 12.7 and 16.3 kB each (docs/performance.md).
const CMT_ASSOCIATION_BYTES: u64 = 2_700;
const CMT_DESTINATION_BYTES: u64 = 1_500;
/// At most this long a run (115 days of simulated time; integer ns reach 584 years).
pub const MAX_DURATION_S: f64 = ccscope_core::MAX_RUN_S;
/// At most this many rows of packet log (33 B each, about 2.2 GB), as the monitored link would log them
/// at its capacity.
pub const MAX_LOG_ROWS: f64 = (1u64 << 26) as f64;
/// At most this many time-series bins in all the series a run keeps: 2 GiB of them (96 B each), about
/// the packet log's bound (paper 003's receiver-aggregate runs keep 18 series of 10 ms over 10,000 s).
pub const MAX_BINS: f64 =
    ((1u64 << 31) / std::mem::size_of::<crate::metrics::TimeBin>() as u64) as f64;
/// At most this send overhead (ns-2's TCP `overhead_`), ms: a host's processing delay, not a think time.
pub const MAX_SEND_OVERHEAD_MS: f64 = 1000.0;

type R<T> = Result<T, ConfigError>;

/// Where things are: the file's text and document as written (for lines), its folder and the trace search path
/// (for traces), the keys given as overrides, and the traces loaded so far.
struct Ctx<'a> {
    file: String,
    text: &'a str,
    doc: ImDocument<&'a str>,
    dir: Option<PathBuf>,
    search: &'a [PathBuf],
    overrides: &'a [String],
    traces: HashMap<PathBuf, Arc<Trace>>,
}

/// `flows[0].route` -> ["flows", "0", "route"].
fn segments(path: &str) -> Vec<String> {
    path.replace('[', ".")
        .replace(']', "")
        .split('.')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

impl Ctx<'_> {
    fn line_at(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    /// The line of the deepest item of `path` that the document has (a missing key: its table's).
    fn line_of(&self, path: &str) -> usize {
        let mut line = 1;
        let mut node = Node::of_item(self.doc.as_item());
        for seg in segments(path) {
            let (span, next) = match node {
                Node::Table(t) => {
                    let span = t
                        .key(&seg)
                        .and_then(|k| k.span())
                        .or_else(|| t.get(&seg).and_then(|x| x.span()));
                    (span, t.get(&seg).map(Node::of_item))
                }
                Node::Tables(a) => {
                    let x = seg.parse::<usize>().ok().and_then(|j| a.get(j));
                    (
                        x.and_then(|t| t.span()),
                        x.map(|t| Node::Table(t as &dyn toml_edit::TableLike)),
                    )
                }
                Node::Array(a) => {
                    let x = seg.parse::<usize>().ok().and_then(|j| a.get(j));
                    (x.and_then(|v| v.span()), x.map(Node::of_value))
                }
                Node::Leaf => break,
            };
            if let Some(s) = span {
                line = self.line_at(s.start);
            }
            match next {
                Some(n) => node = n,
                None => break,
            }
        }
        line
    }

    /// The override that set `path` (or a table above it), if any.
    fn override_of(&self, path: &str) -> Option<&String> {
        let want = segments(path);
        self.overrides.iter().find(|k| {
            let k = segments(k);
            !k.is_empty() && want.len() >= k.len() && want[..k.len()] == k[..]
        })
    }

    fn err(&self, path: &str, reason: impl Into<String>) -> ConfigError {
        let reason = reason.into();
        match self.override_of(path) {
            Some(key) => ConfigError::Override {
                file: self.file.clone(),
                key: key.clone(),
                field: path.to_string(),
                reason,
            },
            None => ConfigError::Field {
                file: self.file.clone(),
                line: self.line_of(path),
                field: path.to_string(),
                reason,
            },
        }
    }

    fn resolve(&self, name: &str) -> Option<PathBuf> {
        let p = Path::new(name);
        if p.is_absolute() {
            return p.exists().then(|| p.to_path_buf());
        }
        self.dir
            .iter()
            .chain(self.search.iter())
            .map(|d| d.join(p))
            .find(|c| c.exists())
    }
}

/// A place in the document while walking a path.
enum Node<'a> {
    Table(&'a dyn toml_edit::TableLike),
    Tables(&'a toml_edit::ArrayOfTables),
    Array(&'a toml_edit::Array),
    Leaf,
}

impl<'a> Node<'a> {
    fn of_item(i: &'a Item) -> Node<'a> {
        match (i.as_table_like(), i.as_array_of_tables(), i.as_value()) {
            (Some(t), _, _) => Node::Table(t),
            (_, Some(a), _) => Node::Tables(a),
            (_, _, Some(v)) => Node::of_value(v),
            _ => Node::Leaf,
        }
    }

    fn of_value(v: &'a toml_edit::Value) -> Node<'a> {
        match (v.as_inline_table(), v.as_array()) {
            (Some(t), _) => Node::Table(t as &dyn toml_edit::TableLike),
            (_, Some(a)) => Node::Array(a),
            _ => Node::Leaf,
        }
    }
}

/// Parse and validate scenario text. `file` labels errors; relative trace paths are looked up next
/// to `file`, then in each of `search`.
pub fn load_scenario(
    text: &str,
    file: Option<&Path>,
    search: &[PathBuf],
) -> Result<Scenario, ConfigError> {
    load_scenario_with(text, file, search, &[])
}

/// As [`load_scenario`], where `overrides` lists the dotted keys (`flows.0.window`) whose values were
/// set from outside the file: an error in one names the override, not a line.
pub fn load_scenario_with(
    text: &str,
    file: Option<&Path>,
    search: &[PathBuf],
    overrides: &[String],
) -> Result<Scenario, ConfigError> {
    load_scenario_overridden(text, None, file, search, overrides)
}

/// As [`load_scenario_with`], where `text` is the file with `overrides` applied (rewritten, so its
/// lines are not the file's) and `written` the file as written: an error in a field the file gives
/// names that field's line in `written`.
pub fn load_scenario_overridden(
    text: &str,
    written: Option<&str>,
    file: Option<&Path>,
    search: &[PathBuf],
    overrides: &[String],
) -> Result<Scenario, ConfigError> {
    let label = file
        .map(|f| f.display().to_string())
        .unwrap_or_else(|| "<scenario>".to_string());
    let syntax = |span: Option<std::ops::Range<usize>>, reason: &str| {
        let line = span
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
            .unwrap_or(1);
        let reason = reason.trim().replace('\n', " ");
        match field_on_line(text, line) {
            Some(field) => ConfigError::Field {
                file: label.clone(),
                line,
                field,
                reason,
            },
            None => ConfigError::Syntax {
                file: label.clone(),
                line,
                reason,
            },
        }
    };
    let doc = ImDocument::parse(text).map_err(|e| syntax(e.span(), e.message()))?;
    // Lines are looked up in the file as written when there is one that parses.
    let (text_for_lines, doc) =
        match written.and_then(|w| ImDocument::parse(w).ok().map(|d| (w, d))) {
            Some(w) => w,
            None => (text, doc),
        };
    let mut ctx = Ctx {
        file: label.clone(),
        text: text_for_lines,
        doc,
        dir: file.and_then(|f| f.parent().map(|p| p.to_path_buf())),
        search,
        overrides,
        traces: HashMap::new(),
    };
    overridden_links(&ctx)?;
    let de = toml::Deserializer::new(text);
    let raw: ScenarioFile = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let reason = reword(e.inner().message());
        if path.is_empty() || path == "." {
            syntax(e.inner().span(), &reason)
        } else {
            let path = key_in_tagged_table(text, &path).unwrap_or(path);
            ctx.err(&path, reason)
        }
    })?;
    build(&mut ctx, raw)
}

/// More keys than any kind-tagged table takes (RED and PIE, the most, have 8 and `kind`).
const TAGGED_KEYS_TRIED: usize = 32;

/// serde reads a table tagged by `kind` (`queue`, `loss`, `traffic`) whole, so an error inside it is
/// reported at the table (`data_link.queue`), and one a `--set` of a key in it caused named the file's
/// line: the key is the one whose removal changes the error (with several bad keys, the one reported).
/// `None` when no single key does (a missing key), `path` is not a table or has more than
/// `TAGGED_KEYS_TRIED` keys.
fn key_in_tagged_table(text: &str, path: &str) -> Option<String> {
    use toml_edit::{Item, TableLike, Value};
    // The table at `path` in the document, its keys in the file's order (the loader's order of reading).
    fn table_at<'a>(
        doc: &'a mut toml_edit::DocumentMut,
        path: &str,
    ) -> Option<&'a mut dyn TableLike> {
        let segs = segments(path);
        let mut t: &mut dyn TableLike = doc.as_table_mut();
        let mut i = 0;
        while i < segs.len() {
            let item = { t }.get_mut(&segs[i])?;
            i += 1;
            let mut index = || -> Option<usize> {
                i += 1;
                segs.get(i - 1)?.parse().ok()
            };
            t = match item {
                Item::ArrayOfTables(a) => a.get_mut(index()?)?,
                Item::Value(Value::Array(a)) => a.get_mut(index()?)?.as_inline_table_mut()?,
                other => other.as_table_like_mut()?,
            };
        }
        Some(t)
    }
    // Read as the loader reads the file, so the first error met is the one it reported.
    fn error_of(text: &str) -> Option<(String, String)> {
        serde_path_to_error::deserialize::<_, ScenarioFile>(toml::Deserializer::new(text))
            .err()
            .map(|e| (e.path().to_string(), e.inner().message().to_string()))
    }
    let mut doc = text.parse::<toml_edit::DocumentMut>().ok()?;
    let keys: Vec<String> = table_at(&mut doc, path)?
        .iter()
        .map(|(k, _)| k.to_string())
        .filter(|k| k != "kind")
        .collect();
    // Each key costs a read of the whole file: a table with more keys than any kind takes is named whole.
    if keys.len() > TAGGED_KEYS_TRIED {
        return None;
    }
    let before = error_of(text)?;
    if before.0 != path || before.1.starts_with("missing field") {
        return None;
    }
    let mut blamed = keys.into_iter().filter(|k| {
        let mut d = doc.clone();
        table_at(&mut d, path).map(|t| t.remove(k));
        // A required key's removal brings its own absence up: that changes the error, not its cause.
        let own_absence = format!("missing field `{k}`");
        error_of(&d.to_string()).is_none_or(|e| e != before && e.1 != own_absence)
    });
    match (blamed.next(), blamed.next()) {
        (Some(k), None) => Some(format!("{path}.{k}")),
        _ => None,
    }
}

/// The field a `key = value` line sets (`flows[0].count`), so that an error inside a value the TOML
/// parser itself refuses (an integer beyond 64 bits, a second value) names it; `None` off such lines.
fn field_on_line(text: &str, line: usize) -> Option<String> {
    let mut table = String::new();
    let mut arrays: Vec<(String, usize)> = Vec::new();
    // The delimiter of a multi-line string open across lines (TOML `"""` or `'''`): its lines hold
    // no headers or keys.
    let mut open: Option<&str> = None;
    for (i, l) in text.lines().enumerate() {
        if let Some(d) = open {
            if l.matches(d).count() % 2 == 1 {
                open = None;
            }
            if i + 1 == line {
                return None;
            }
            continue;
        }
        open = ["\"\"\"", "'''"]
            .into_iter()
            .find(|d| l.matches(d).count() % 2 == 1);
        let t = l.trim();
        if i + 1 == line {
            if t.starts_with('[') || t.starts_with('#') {
                return None;
            }
            let key = t.split_once('=')?.0.trim().trim_matches('"');
            if key.is_empty() {
                return None;
            }
            return Some(if table.is_empty() {
                key.to_string()
            } else {
                format!("{table}.{key}")
            });
        }
        if let Some((name, _)) = t.strip_prefix("[[").and_then(|r| r.split_once("]]")) {
            let name = name.trim();
            let n = match arrays.iter_mut().find(|a| a.0 == name) {
                Some(a) => {
                    a.1 += 1;
                    a.1
                }
                None => {
                    arrays.push((name.to_string(), 0));
                    0
                }
            };
            table = format!("{name}[{n}]");
        } else if let Some((name, _)) = t.strip_prefix('[').and_then(|r| r.split_once(']')) {
            let name = name.trim();
            // `[flows.traffic]` after `[[flows]]` is a table of the newest element.
            let parent = arrays
                .iter()
                .filter(|a| {
                    name.strip_prefix(a.0.as_str())
                        .is_some_and(|r| r.starts_with('.'))
                })
                .max_by_key(|a| a.0.len());
            table = match parent {
                Some((a, n)) => format!("{a}[{n}]{}", &name[a.len()..]),
                None => name.to_string(),
            };
        }
    }
    None
}

/// An override of a named link (`links.NAME`) or of a field of one (`links.NAME.rate_mbps`) needs the link
/// in the file as written: it would add a link no flow crosses, so a misspelt name would run unnoticed.
fn overridden_links(ctx: &Ctx<'_>) -> R<()> {
    let links = ctx.doc.as_item().get("links").and_then(Item::as_table_like);
    for key in ctx.overrides {
        let k = segments(key);
        if k.len() < 2 || k[0] != "links" || links.is_some_and(|t| t.contains_key(&k[1])) {
            continue;
        }
        let names: Vec<&str> = links.map_or(Vec::new(), |t| t.iter().map(|(n, _)| n).collect());
        return Err(ConfigError::Override {
            file: ctx.file.clone(),
            key: key.clone(),
            field: format!("links.{}", k[1]),
            reason: format!(
                "unknown link `{}` (links: {})",
                k[1],
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ),
        });
    }
    Ok(())
}

/// serde's wording, in the words the rest of the errors use.
fn reword(msg: &str) -> String {
    let msg = ccscope_core::text::short_floats(&msg.trim().replace('\n', " "));
    match msg.strip_prefix("unknown field `") {
        Some(rest) => {
            let (key, known) = rest.split_once('`').unwrap_or((rest, ""));
            let known = known
                .trim_start_matches(", expected ")
                .trim_start_matches("one of ");
            format!("unknown key `{key}` (known: {})", known.replace('`', ""))
        }
        None => msg.replace("unknown variant", "unknown value"),
    }
}

/// A TOML value as an error quotes it: a float short (TOML writes 1e-300 in 300 digits).
fn shown(v: &toml::Value) -> String {
    match v {
        toml::Value::Float(x) => num(*x),
        other => other.to_string(),
    }
}

/// `v`, a time in `unit` (`unit_s` seconds each), if at most the longest run: beyond it integer
/// nanoseconds would saturate and the value would silently mean another one.
fn within_a_run(
    ctx: &Ctx<'_>,
    path: &str,
    v: Option<f64>,
    unit: &str,
    unit_s: f64,
) -> R<Option<f64>> {
    match v {
        Some(x) if x * unit_s > MAX_DURATION_S => Err(ctx.err(
            path,
            beyond_bound(x, unit, MAX_DURATION_S / unit_s, "the longest run"),
        )),
        _ => Ok(v),
    }
}

/// `v`, a time in `unit` that must be positive: > 0, within the longest run, and at least the clock's
/// 1 ns (below it the time is 0: a 1e-12 ms retransmission timer fired forever at one instant).
fn positive_time(
    ctx: &Ctx<'_>,
    path: &str,
    v: Option<f64>,
    unit: &str,
    unit_s: f64,
) -> R<Option<f64>> {
    match within_a_run(ctx, path, positive(ctx, path, v)?, unit, unit_s)? {
        Some(x) if x * unit_s < 1e-9 => Err(ctx.err(path, below_clock(x, unit))),
        v => Ok(v),
    }
}

/// A number is finite and within `[lo, hi]`.
fn check_range(
    ctx: &Ctx<'_>,
    path: &str,
    v: Option<f64>,
    lo: f64,
    hi: f64,
    what: &str,
) -> R<Option<f64>> {
    match v {
        Some(x) if !x.is_finite() => Err(ctx.err(path, format!("{x} is not a finite number"))),
        Some(x) if !(lo..=hi).contains(&x) => {
            Err(ctx.err(path, format!("{} is out of range: must be {what}", num(x))))
        }
        _ => Ok(v),
    }
}

fn positive(ctx: &Ctx<'_>, path: &str, v: Option<f64>) -> R<Option<f64>> {
    match v {
        Some(x) if !x.is_finite() => Err(ctx.err(path, format!("{x} is not a finite number"))),
        Some(x) if x <= 0.0 => Err(ctx.err(path, format!("{} must be > 0", num(x)))),
        _ => Ok(v),
    }
}

fn non_negative(ctx: &Ctx<'_>, path: &str, v: Option<f64>) -> R<Option<f64>> {
    check_range(ctx, path, v, 0.0, f64::MAX, ">= 0")
}

fn probability(ctx: &Ctx<'_>, path: &str, v: Option<f64>, default: f64) -> R<f64> {
    Ok(check_range(ctx, path, v, 0.0, 1.0, "a probability in [0, 1]")?.unwrap_or(default))
}

fn build(ctx: &mut Ctx<'_>, raw: ScenarioFile) -> R<Scenario> {
    // Links: the dumbbell's first, then [links.NAME] in the order declared.
    if raw.ack_link.is_some() && raw.data_link.is_none() {
        return Err(ctx.err("ack_link", "an [ack_link] needs a [data_link]"));
    }
    let mut files: Vec<(String, String, LinkFile)> = Vec::new();
    if let Some(l) = raw.data_link {
        files.push(("data_link".into(), "data_link".into(), l));
        let ack = raw.ack_link.unwrap_or_else(|| LinkFile {
            // Without an [ack_link] the ACK direction is an uncongested 1 Gbit/s link with the data link's delay.
            rate_mbps: Some(1000.0),
            delay_ms: files[0].2.delay_ms,
            ..Default::default()
        });
        files.push(("ack_link".into(), "ack_link".into(), ack));
    } else if raw.links.0.is_empty() {
        return Err(ctx.err(
            "data_link",
            "missing: a scenario needs a [data_link] table (or named [links.NAME] tables)",
        ));
    }
    for (name, l) in raw.links.0 {
        if matches!(name.as_str(), "data_link" | "ack_link") {
            return Err(ctx.err(
                &format!("links.{name}"),
                "this name is the dumbbell's: give the link another name",
            ));
        }
        files.push((format!("links.{name}"), name, l));
    }
    let dumbbell = files
        .first()
        .is_some_and(|f| f.1 == "data_link")
        .then_some((0, 1));
    let mut links = Vec::with_capacity(files.len());
    for (path, name, l) in files {
        links.push(link(
            ctx,
            &path,
            name,
            l,
            dumbbell.is_some() && links.len() < 2,
        )?);
    }
    let names: Vec<String> = links.iter().map(|l: &LinkSpec| l.name.clone()).collect();

    let name = raw.name.unwrap_or_else(|| "scenario".into());
    let seed = raw.seed.unwrap_or(1);
    // Below 1 ns a duration is 0 ns on the clock: a run of no time.
    let duration = match positive_time(ctx, "duration_s", raw.duration_s, "s", 1.0)? {
        Some(s) => Dur::from_secs_f64(s),
        None => match dumbbell.map(|d| &links[d.0].service) {
            // mahimahi link_queue.cc use_a_delivery_opportunity(): `once` ends after the last opportunity is used.
            Some(Service::Trace { trace, once: true }) => {
                // One period is the run: within the longest run, as a given duration_s is.
                let secs = trace.period().as_secs_f64();
                if secs > MAX_DURATION_S {
                    return Err(ctx.err(
                        "data_link.trace",
                        format!(
                            "played once, the run lasts one period: {}; give duration_s",
                            beyond_bound(secs, "s", MAX_DURATION_S, "the longest run")
                        ),
                    ));
                }
                trace.period() + Dur(1)
            }
            _ => {
                return Err(ctx.err(
                    "duration_s",
                    "missing: required unless the data link is a trace with once = true",
                ))
            }
        },
    };
    let bin_ms = positive_time(ctx, "bin_ms", raw.bin_ms, "ms", 1e-3)?.unwrap_or(500.0);
    let timeseries = raw.timeseries.map(|t| match t {
        TimeSeriesFile::Flows => TimeSeries::Flows,
        TimeSeriesFile::Link => TimeSeries::Link,
        TimeSeriesFile::None => TimeSeries::None,
    });
    if timeseries != Some(TimeSeries::None) && duration.as_secs_f64() * 1000.0 / bin_ms > MAX_BINS {
        return Err(ctx.err(
            "bin_ms",
            format!(
                "{bin_ms} ms bins over {} s are more than {} bins (2 GiB): use wider bins",
                duration.as_secs_f64(),
                num(MAX_BINS)
            ),
        ));
    }
    let bin = Dur::from_ms_f64(bin_ms);
    let monitor = match &raw.monitor {
        Some(m) => Some(names.iter().position(|n| n == m).ok_or_else(|| {
            ctx.err(
                "monitor",
                format!("unknown link `{m}` (links: {})", names.join(", ")),
            )
        })?),
        None => dumbbell.map(|d| d.0),
    };
    let Some(flow_files) = raw.flows else {
        return Err(ctx.err(
            "flows",
            "missing: a scenario needs at least one [[flows]] table",
        ));
    };
    let mut specs = Vec::with_capacity(flow_files.len());
    let mut n_flows = 0u64;
    let mut n_copies = 0u64;
    let mut n_paths = 0u64;
    let mut n_state = 0u64;
    for (i, ff) in flow_files.into_iter().enumerate() {
        let p = format!("flows[{i}]");
        let (spec, count) = flow(ctx, &p, ff, &links, dumbbell.is_some())?;
        n_flows = n_flows.saturating_add(count);
        if n_flows > MAX_FLOWS {
            return Err(ctx.err(
                &format!("{p}.count"),
                format!("{n_flows} flows in all: at most {MAX_FLOWS} are allowed"),
            ));
        }
        // Every flow gets its own copy of each per-flow link it names (about 10 kB each): bounded as flows are.
        let mut own: Vec<usize> = spec
            .paths
            .iter()
            .flat_map(|x| x.route.iter().chain(&x.ack_route).copied())
            .filter(|&l| links[l].per_flow)
            .collect();
        own.sort_unstable();
        own.dedup();
        n_copies = n_copies.saturating_add((own.len() as u64).saturating_mul(count));
        if n_copies > MAX_FLOWS {
            return Err(ctx.err(
                &format!("{p}.count"),
                format!("{n_copies} per-flow link copies in all (one per flow and per-flow link it names): at most {MAX_FLOWS} are allowed"),
            ));
        }
        // Each path keeps its own counters and routes (about 300 B): bounded as flows are.
        n_paths = n_paths.saturating_add((spec.paths.len().max(1) as u64).saturating_mul(count));
        if n_paths > MAX_FLOWS {
            return Err(ctx.err(
                &format!("{p}.count"),
                format!("{n_paths} paths in all (each flow's): at most {MAX_FLOWS} are allowed"),
            ));
        }
        // What a built-in controller keeps beyond the base (Sprout's forecast tables grow with its
        // bins, SAC's oracle series with its file).
        let mut extra = ccscope_cc::registry::find(&spec.controller)
            .and_then(|info| (info.state_bytes)(&spec.params))
            .unwrap_or(0);
        if spec.transport() == ccscope_cc::Transport::Cmt {
            let destinations = spec.paths.len().max(1) as u64;
            extra = extra
                .saturating_add(CMT_ASSOCIATION_BYTES)
                .saturating_add(destinations.saturating_mul(CMT_DESTINATION_BYTES));
        }
        n_state = n_state.saturating_add(count.saturating_mul(FLOW_BYTES.saturating_add(extra)));
        let state = n_state
            .saturating_add(n_copies.saturating_mul(LINK_COPY_BYTES))
            .saturating_add(n_paths.saturating_mul(PATH_BYTES));
        if state > MAX_FLOW_STATE_BYTES {
            return Err(ctx.err(
                &format!("{p}.count"),
                format!(
                    "about {:.1} GiB of per-flow state ({n_flows} flows, {n_copies} per-flow link copies, {n_paths} paths): at most {} GiB",
                    state as f64 / (1u64 << 30) as f64,
                    MAX_FLOW_STATE_BYTES >> 30
                ),
            ));
        }
        specs.push((p, spec, count));
    }
    if n_flows == 0 {
        return Err(ctx.err("flows", "no flows (count = 0 everywhere)"));
    }
    rounds_counted(ctx, &links, &specs, dumbbell)?;
    // Totals describe the dumbbell's data link, or the link the most flows' data crosses.
    let monitor = match monitor {
        Some(m) => m,
        None => {
            let mut crossing = vec![0u64; links.len()];
            for (_, f, count) in &specs {
                for &l in f.paths.first().map(|p| p.route.as_slice()).unwrap_or(&[]) {
                    crossing[l] += count;
                }
            }
            let shared = (0..links.len()).filter(|&l| !links[l].per_flow);
            match shared.rev().max_by_key(|&l| crossing[l]) {
                Some(l) => l,
                None => return Err(ctx.err("links", "every link is per-flow: a scenario needs at least one shared link for its totals")),
            }
        }
    };
    if links[monitor].per_flow {
        return Err(ctx.err(
            "monitor",
            format!(
                "`{}` is per-flow: the totals describe one shared link",
                links[monitor].name
            ),
        ));
    }
    // Per-flow series for a few flows; for many, the link's only unless asked (memory grows with
    // flows x run length otherwise).
    let timeseries = timeseries.unwrap_or(if n_flows as usize <= TimeSeries::FLOWS_BY_DEFAULT {
        TimeSeries::Flows
    } else {
        TimeSeries::Link
    });
    // Every series kept (each flow's that keeps one, and the link's) holds a bin per bin width: the
    // bound is on them all, since a flow may keep its series beside `timeseries = "none"`.
    let series = specs
        .iter()
        .filter(|(_, f, _)| f.timeseries.unwrap_or(timeseries == TimeSeries::Flows))
        .map(|(_, _, count)| count)
        .sum::<u64>()
        + u64::from(timeseries != TimeSeries::None);
    let per_series = duration.as_secs_f64() * 1000.0 / bin_ms;
    if per_series * series as f64 > MAX_BINS {
        return Err(ctx.err(
            "bin_ms",
            format!(
                "{} ms bins over {} s in {series} series are {} bins, more than {} (2 GiB): use wider bins or fewer series",
                num(bin_ms),
                duration.as_secs_f64(),
                num((per_series * series as f64).ceil()),
                num(MAX_BINS)
            ),
        ));
    }
    let packet_log = raw.packet_log.unwrap_or(false);
    if packet_log {
        log_bounded(ctx, &links[monitor], monitor, duration, &specs, dumbbell)?;
    }
    let cwnd_log = raw.cwnd_log.unwrap_or(false);
    if cwnd_log {
        cwnd_log_bounded(ctx, &links, duration, &specs, dumbbell)?;
    }
    let mut sc = Scenario {
        name,
        seed,
        duration,
        links,
        dumbbell,
        monitor,
        flows: Vec::with_capacity(n_flows as usize),
        bin,
        timeseries,
        packet_log,
        cwnd_log,
    };
    for (p, spec, count) in specs {
        check_round_trip(ctx, &p, &spec, &sc)?;
        for _ in 0..count {
            sc.flows.push(spec.clone());
        }
    }
    Ok(sc)
}

/// Packets of `bytes` a link serves per second at most: a constant rate's, or a trace's delivery
/// opportunities (each up to Mahimahi's MTU) per period.
fn packets_per_s(link: &LinkSpec, bytes: f64) -> f64 {
    match &link.service {
        Service::Constant(b) => b.0 as f64 / (8.0 * bytes),
        Service::Trace { trace, .. } => {
            trace.opportunities() as f64 / trace.period().as_secs_f64().max(1e-9)
                * (MAHIMAHI_MTU as f64 / bytes).max(1.0)
        }
    }
}

/// A log growing with the run is refused when it would pass `MAX_LOG_ROWS` at the links' capacity.
fn log_rows(ctx: &Ctx<'_>, key: &str, what: &str, secs: f64, rows: f64) -> R<()> {
    if rows > MAX_LOG_ROWS {
        return Err(ctx.err(
            key,
            format!(
                "{secs} s of {what} at capacity log about {} rows, more than {MAX_LOG_ROWS:e}: run shorter or log slower links",
                num(rows.round())
            ),
        ));
    }
    Ok(())
}

/// The packet log grows with the run: its rows on the monitored link at the link's capacity (an arrival
/// and a departure per packet of the smallest size its flows send, and a trace's every delivery
/// opportunity) must be within `MAX_LOG_ROWS`, checked before anything is allocated. Drops beyond the
/// capacity add rows this does not count.
fn log_bounded(
    ctx: &Ctx<'_>,
    link: &LinkSpec,
    k: usize,
    duration: Dur,
    specs: &[(String, FlowSpec, u64)],
    dumbbell: Option<(usize, usize)>,
) -> R<()> {
    let Some(smallest) = specs
        .iter()
        .filter(|(_, f, count)| *count > 0 && f.crosses(k, dumbbell).0)
        .map(|(_, f, _)| f.packet_bytes as f64)
        .reduce(f64::min)
    else {
        return Ok(());
    };
    let secs = duration.as_secs_f64();
    let opportunities = match &link.service {
        Service::Constant(_) => 0.0,
        Service::Trace { trace, once: true } => trace.opportunities() as f64,
        Service::Trace { trace, .. } => {
            secs / trace.period().as_secs_f64().max(1e-9) * trace.opportunities() as f64
        }
    };
    let rows = opportunities + 2.0 * secs * packets_per_s(link, smallest);
    log_rows(ctx, "packet_log", &format!("`{}`", link.name), secs, rows)
}

/// The window log gains a row per window change, about one per ACK: at most the packets the flows'
/// slowest links deliver, each counted once (a per-flow link once per flow), with the smallest packet
/// crossing it. Changes on losses and timers beyond that are not counted.
fn cwnd_log_bounded(
    ctx: &Ctx<'_>,
    links: &[LinkSpec],
    duration: Dur,
    specs: &[(String, FlowSpec, u64)],
    dumbbell: Option<(usize, usize)>,
) -> R<()> {
    // Per link: the smallest packet whose flow it limits, and how many copies of it there are.
    let mut slowest: Vec<Option<(f64, u64)>> = vec![None; links.len()];
    for (_, f, count) in specs.iter().filter(|s| s.2 > 0) {
        let bytes = f.packet_bytes as f64;
        // A dumbbell flow's data crosses the data link only.
        let dumbbell_route = dumbbell.map(|(d, _)| vec![d]).unwrap_or_default();
        let routes: Vec<&[usize]> = if f.paths.is_empty() {
            vec![&dumbbell_route]
        } else {
            f.paths.iter().map(|p| p.route.as_slice()).collect()
        };
        for r in routes {
            let Some(&l) = r.iter().min_by(|&&x, &&y| {
                packets_per_s(&links[x], bytes).total_cmp(&packets_per_s(&links[y], bytes))
            }) else {
                continue;
            };
            let copies = if links[l].per_flow { *count } else { 1 };
            slowest[l] = Some(match slowest[l] {
                None => (bytes, copies),
                Some((b, c)) => (b.min(bytes), if links[l].per_flow { c + copies } else { 1 }),
            });
        }
    }
    let secs = duration.as_secs_f64();
    let rows: f64 = slowest
        .iter()
        .enumerate()
        .filter_map(|(l, x)| x.map(|(b, c)| secs * packets_per_s(&links[l], b) * c as f64))
        .sum();
    log_rows(ctx, "cwnd_log", "the flows' slowest links", secs, rows)
}

fn link(ctx: &mut Ctx<'_>, path: &str, name: String, l: LinkFile, dumbbell: bool) -> R<LinkSpec> {
    let at = |k: &str| format!("{path}.{k}");
    let delay_ms = non_negative(ctx, &at("delay_ms"), l.delay_ms)?;
    let delay =
        Dur::from_ms_f64(within_a_run(ctx, &at("delay_ms"), delay_ms, "ms", 1e-3)?.unwrap_or(0.0));
    let rate = positive(ctx, &at("rate_mbps"), l.rate_mbps)?;
    if let Some(r) = rate {
        // Rates are integer bits per second: below one, packets would never leave.
        if !(ccscope_core::MIN_RATE_MBPS..=ccscope_core::MAX_RATE_MBPS).contains(&r) {
            return Err(ctx.err(
                &at("rate_mbps"),
                format!(
                    "{} is out of range: a link's rate must be in [{:e}, {:e}] Mbit/s",
                    num(r),
                    ccscope_core::MIN_RATE_MBPS,
                    ccscope_core::MAX_RATE_MBPS
                ),
            ));
        }
    }
    let per_flow = l.per_flow.unwrap_or(false);
    if per_flow && dumbbell {
        return Err(ctx.err(
            &at("per_flow"),
            "the dumbbell's links are shared: a per-flow link is a [links.NAME] table",
        ));
    }
    let service = match (&l.trace, rate) {
        (Some(_), Some(_)) => {
            return Err(ctx.err(
                &at("rate_mbps"),
                "give either `trace` or `rate_mbps`, not both",
            ))
        }
        (None, None) => {
            return Err(ctx.err(
                &at("rate_mbps"),
                "missing: a link needs `trace` or `rate_mbps`",
            ))
        }
        (None, Some(r)) => Service::Constant(Bandwidth::from_mbps(r)),
        (Some(t), None) => {
            // An empty name resolved to the scenario's own folder.
            if t.is_empty() {
                return Err(ctx.err(&at("trace"), "an empty file name"));
            }
            let file = ctx.resolve(t).ok_or_else(|| {
                let places: Vec<String> = ctx
                    .dir
                    .iter()
                    .chain(ctx.search.iter())
                    .map(|d| d.display().to_string())
                    .collect();
                ctx.err(
                    &at("trace"),
                    format!(
                        "trace file `{t}` not found (looked in: {})",
                        places.join(", ")
                    ),
                )
            })?;
            let trace = match ctx.traces.get(&file) {
                Some(t) => t.clone(),
                None => {
                    // A file that cannot be read is the scenario's error; a bad line, the trace's.
                    let tr = Arc::new(Trace::from_file(&file).map_err(|e| match e {
                        TraceError::Io { path, reason } => ctx.err(
                            &at("trace"),
                            format!("cannot read trace file `{}`: {reason}", path.display()),
                        ),
                        other => ConfigError::Trace(other),
                    })?);
                    ctx.traces.insert(file, tr.clone());
                    tr
                }
            };
            Service::Trace {
                trace,
                once: l.once.unwrap_or(false),
            }
        }
    };
    let queue = match l.queue {
        None => QueueConfig::Infinite,
        Some(q) => queue(
            ctx,
            &at("queue"),
            q,
            matches!(service, Service::Trace { .. }),
        )?,
    };
    let loss = match l.loss {
        None => LossConfig::None,
        Some(x) => loss(ctx, &at("loss"), x)?,
    };
    Ok(LinkSpec {
        name,
        service,
        delay,
        queue,
        loss,
        per_flow,
    })
}

fn limits(ctx: &Ctx<'_>, path: &str, packets: Option<u64>, bytes: Option<u64>) -> R<Limits> {
    if packets == Some(0) {
        return Err(ctx.err(&format!("{path}.packets"), "must be >= 1"));
    }
    if bytes == Some(0) {
        return Err(ctx.err(&format!("{path}.bytes"), "must be >= 1"));
    }
    Ok(Limits { packets, bytes })
}

/// A queue's packet size (RED's mean, CoDel's MTU): 1 ..= 65535 bytes, the largest packet a flow
/// sends; it was clamped (0 to 1, beyond 2^32 - 1 to that) without a word.
fn packet_size(ctx: &Ctx<'_>, path: &str, v: Option<u64>) -> R<Option<u32>> {
    match v {
        Some(b) if !(1..=65535).contains(&b) => {
            Err(ctx.err(path, format!("{b} is not in 1..=65535 bytes")))
        }
        _ => Ok(v.map(|b| b as u32)),
    }
}

/// `trace`: the link plays a Mahimahi trace, whose emulator sets CoDel's defaults there.
/// Whether an AQM runs as Mahimahi's code does (true) or as its RFC (`rfc`, e.g. "rfc8289"): the
/// scenario's `flavour`, else Mahimahi's on a trace link and the RFC's on a constant-rate one.
fn aqm_flavour(ctx: &Ctx<'_>, key: &str, given: Option<&str>, trace: bool, rfc: &str) -> R<bool> {
    match given {
        None => Ok(trace),
        Some("mahimahi") => Ok(true),
        Some(g) if g == rfc => Ok(false),
        Some(other) => Err(ctx.err(
            key,
            format!("`{other}` is not one of \"{rfc}\", \"mahimahi\""),
        )),
    }
}

/// An AQM's time in ms (positive, within the longest run); Mahimahi's queues read their times with
/// `get_int_arg`, so its flavour takes whole milliseconds only.
fn aqm_ms(
    ctx: &Ctx<'_>,
    key: &str,
    v: Option<f64>,
    mahimahi: bool,
    aqm: &str,
    rfc: &str,
) -> R<Option<f64>> {
    let v = positive_time(ctx, key, v, "ms", 1e-3)?;
    match v {
        Some(x) if mahimahi && x.fract() != 0.0 => Err(ctx.err(
            key,
            format!(
                "{} is not whole: Mahimahi's {aqm} takes whole milliseconds (flavour = \"{rfc}\" takes any)",
                num(x)
            ),
        )),
        _ => Ok(v),
    }
}

fn queue(ctx: &Ctx<'_>, path: &str, q: QueueFile, trace: bool) -> R<QueueConfig> {
    let at = |k: &str| format!("{path}.{k}");
    Ok(match q {
        QueueFile::Infinite => QueueConfig::Infinite,
        QueueFile::Droptail { packets, bytes } | QueueFile::Drophead { packets, bytes } => {
            let kind = if matches!(q, QueueFile::Droptail { .. }) {
                "droptail"
            } else {
                "drophead"
            };
            if packets.is_none() && bytes.is_none() {
                return Err(ctx.err(
                    &at("kind"),
                    format!("a {kind} queue needs `packets` and/or `bytes`"),
                ));
            }
            let l = limits(ctx, path, packets, bytes)?;
            if kind == "droptail" {
                QueueConfig::DropTail(l)
            } else {
                QueueConfig::DropHead(l)
            }
        }
        QueueFile::Red {
            min_bytes,
            max_bytes,
            max_p,
            weight,
            gentle,
            mean_packet_bytes,
            packets,
            bytes,
        } => {
            let d = RedParams::default();
            let min_bytes = non_negative(ctx, &at("min_bytes"), min_bytes)?.unwrap_or(d.min_bytes);
            let max_bytes = positive(ctx, &at("max_bytes"), max_bytes)?.unwrap_or(d.max_bytes);
            if min_bytes >= max_bytes {
                return Err(ctx.err(
                    &at("max_bytes"),
                    format!("must exceed min_bytes ({min_bytes})"),
                ));
            }
            QueueConfig::Red(RedParams {
                min_bytes,
                max_bytes,
                max_p: check_range(ctx, &at("max_p"), max_p, 0.0, 1.0, "in [0, 1]")?
                    .unwrap_or(d.max_p),
                weight: check_range(ctx, &at("weight"), weight, 0.0, 1.0, "in [0, 1]")?
                    .unwrap_or(d.weight),
                gentle: gentle.unwrap_or(d.gentle),
                mean_packet_bytes: packet_size(ctx, &at("mean_packet_bytes"), mean_packet_bytes)?
                    .unwrap_or(d.mean_packet_bytes),
                limit: limits(ctx, path, packets, bytes)?,
            })
        }
        QueueFile::Codel {
            target_ms,
            interval_ms,
            mtu_bytes,
            flavour,
            packets,
            bytes,
        } => {
            let d = CodelParams::default();
            let mahimahi = aqm_flavour(ctx, &at("flavour"), flavour.as_deref(), trace, "rfc8289")?;
            let flavour = if mahimahi {
                CodelFlavour::Mahimahi
            } else {
                CodelFlavour::Rfc8289
            };
            // RFC 8289 §5: maxpacket should be the interface MTU; a trace link's is its opportunity.
            let mtu = if trace { MAHIMAHI_MTU } else { d.mtu_bytes };
            // mahimahi codel_packet_queue.cc reads both with get_int_arg: whole milliseconds.
            let ms = |key: &str, v: Option<f64>| -> R<Option<Dur>> {
                let v = aqm_ms(ctx, &at(key), v, mahimahi, "CoDel", "rfc8289")?;
                Ok(v.map(Dur::from_ms_f64))
            };
            QueueConfig::Codel(CodelParams {
                target: ms("target_ms", target_ms)?.unwrap_or(d.target),
                interval: ms("interval_ms", interval_ms)?.unwrap_or(d.interval),
                mtu_bytes: packet_size(ctx, &at("mtu_bytes"), mtu_bytes)?.unwrap_or(mtu),
                flavour,
                limit: limits(ctx, path, packets, bytes)?,
            })
        }
        QueueFile::Pie {
            qdelay_ref_ms,
            max_burst_ms,
            t_update_ms,
            alpha,
            beta,
            flavour,
            packets,
            bytes,
        } => {
            let mahimahi = aqm_flavour(ctx, &at("flavour"), flavour.as_deref(), trace, "rfc8033")?;
            let flavour = if mahimahi {
                PieFlavour::Mahimahi
            } else {
                PieFlavour::Rfc8033
            };
            let d = PieParams::of(flavour);
            // mahimahi pie_packet_queue.cc keeps its times in uint32_t milliseconds (get_arg: digits).
            let ms = |key: &str, v: Option<f64>| -> R<Option<Dur>> {
                let v = aqm_ms(ctx, &at(key), v, mahimahi, "PIE", "rfc8033")?;
                match v {
                    Some(x) if mahimahi && x > u32::MAX as f64 => {
                        Err(ctx.err(&at(key), format!("{} ms is beyond {} ms", num(x), u32::MAX)))
                    }
                    _ => Ok(v.map(Dur::from_ms_f64)),
                }
            };
            // Bounded so that alpha x delay stays finite and the update never makes a NaN.
            let weight =
                |key: &str, v: Option<f64>| check_range(ctx, &at(key), v, 0.0, 1e6, "in [0, 1e6]");
            let t_update = ms("t_update_ms", t_update_ms)?.unwrap_or(d.t_update);
            // Linux runs the RFC's timer in jiffies; below 1 ms a long run would tick billions of times.
            if t_update < Dur::from_ms(1) {
                return Err(ctx.err(&at("t_update_ms"), "must be >= 1 ms"));
            }
            QueueConfig::Pie(PieParams {
                target: ms("qdelay_ref_ms", qdelay_ref_ms)?.unwrap_or(d.target),
                max_burst: ms("max_burst_ms", max_burst_ms)?.unwrap_or(d.max_burst),
                t_update,
                alpha: weight("alpha", alpha)?.unwrap_or(d.alpha),
                beta: weight("beta", beta)?.unwrap_or(d.beta),
                limit: limits(ctx, path, packets, bytes)?,
                flavour,
            })
        }
    })
}

fn loss(ctx: &Ctx<'_>, path: &str, l: LossFile) -> R<LossConfig> {
    let at = |k: &str| format!("{path}.{k}");
    Ok(match l {
        LossFile::None => LossConfig::None,
        LossFile::Bernoulli { p } => LossConfig::Bernoulli {
            p: probability(ctx, &at("p"), p, 0.0)?,
        },
        LossFile::GilbertElliott {
            p_gb,
            p_bg,
            loss_good,
            loss_bad,
        } => LossConfig::GilbertElliott {
            p_gb: probability(ctx, &at("p_gb"), p_gb, 0.01)?,
            p_bg: probability(ctx, &at("p_bg"), p_bg, 0.3)?,
            loss_good: probability(ctx, &at("loss_good"), loss_good, 0.0)?,
            loss_bad: probability(ctx, &at("loss_bad"), loss_bad, 1.0)?,
        },
        LossFile::RoundCorrelated { p } => LossConfig::RoundCorrelated {
            p: probability(ctx, &at("p"), Some(p), 0.0)?,
        },
        LossFile::BurstAfterLoss { p, window_ms } => {
            positive_time(ctx, &at("window_ms"), Some(window_ms), "ms", 1e-3)?;
            LossConfig::BurstAfterLoss {
                p: probability(ctx, &at("p"), Some(p), 0.0)?,
                window: Dur::from_ms_f64(window_ms),
            }
        }
        LossFile::List { mut packets } => {
            packets.sort_unstable();
            packets.dedup();
            LossConfig::List(packets)
        }
    })
}

/// Paper 002's round-correlated loss (specs/002-cmt.md A12) reads the sender's round from each
/// packet: every packet crossing such a link must be the data of a transport that counts rounds.
fn rounds_counted(
    ctx: &Ctx<'_>,
    links: &[LinkSpec],
    specs: &[(String, FlowSpec, u64)],
    dumbbell: Option<(usize, usize)>,
) -> R<()> {
    for (k, l) in links.iter().enumerate() {
        if !matches!(l.loss, LossConfig::RoundCorrelated { .. }) {
            continue;
        }
        for (p, f, _) in specs.iter().filter(|s| s.2 > 0) {
            let (data, acks) = f.crosses(k, dumbbell);
            // Exhaustive: a new transport must say whether it counts rounds.
            let counts_rounds = match f.transport() {
                ccscope_cc::Transport::Datagram => false,
                ccscope_cc::Transport::Reliable | ccscope_cc::Transport::Cmt => true,
            };
            let why = if acks {
                format!("{p}'s ACKs cross this link, and ACKs carry no round")
            } else if data && !counts_rounds {
                format!("{p} uses the datagram transport, which counts none")
            } else {
                continue;
            };
            let at = if dumbbell.is_some() && k < 2 {
                format!("{}.loss", l.name)
            } else {
                format!("links.{}.loss", l.name)
            };
            return Err(ctx.err(&at, format!("round_correlated needs a transport that counts rounds (reliable or cmt): {why}")));
        }
    }
    Ok(())
}

/// `traffic = { kind = "onoff", ... }`: paper 000 §6.6 ON/OFF users (defaults = Table 3).
/// Paper 000 Table 3's truncated log-normal, each value defaulting to the table's.
fn lognormal_size(
    ctx: &Ctx<'_>,
    path: &str,
    mean_bytes: Option<f64>,
    std_bytes: Option<f64>,
    max_bytes: Option<f64>,
) -> R<crate::traffic::LogNormalSize> {
    let at = |k: &str| format!("{path}.{k}");
    let d = crate::traffic::LogNormalSize::default();
    // A file is at most MAX_FILE_BYTES, as a Pareto one: beyond it `max_bytes` was cast to 2^64 - 1.
    let most = crate::traffic::MAX_FILE_BYTES as f64;
    let bytes = |k: &str, v: Option<f64>| -> R<Option<f64>> {
        match v {
            Some(x) if x > most => {
                Err(ctx.err(&at(k), beyond_bound(x, "B", most, "the largest file")))
            }
            _ => Ok(v),
        }
    };
    let l = crate::traffic::LogNormalSize {
        mean_bytes: bytes("mean_bytes", positive(ctx, &at("mean_bytes"), mean_bytes)?)?
            .unwrap_or(d.mean_bytes),
        std_bytes: bytes("std_bytes", non_negative(ctx, &at("std_bytes"), std_bytes)?)?
            .unwrap_or(d.std_bytes),
        max_bytes: bytes("max_bytes", positive(ctx, &at("max_bytes"), max_bytes)?)?
            .map(|v| v as u64)
            .unwrap_or(d.max_bytes),
    };
    let (mu, sigma) = l.mu_sigma();
    // sigma^2 = ln(1 + std^2/mean^2) overflows for a spread far beyond the mean: no law to draw from.
    if !(mu.is_finite() && sigma.is_finite()) {
        return Err(ctx.err(
            &at("std_bytes"),
            format!(
                "{} B is too wide a spread for a mean of {} B: sigma^2 = ln(1 + std^2/mean^2) is not finite",
                num(l.std_bytes),
                num(l.mean_bytes)
            ),
        ));
    }
    // Rejection sampling needs a reasonable chance of a draw at or below the maximum.
    if (l.max_bytes as f64).ln() < mu - 3.0 * sigma {
        return Err(ctx.err(
            &at("max_bytes"),
            format!(
                "{} is far below the size distribution (median {} B)",
                l.max_bytes,
                num(mu.exp().round())
            ),
        ));
    }
    Ok(l)
}

fn traffic(ctx: &Ctx<'_>, path: &str, t: TrafficFile) -> R<crate::endpoint::App> {
    let at = |k: &str| format!("{path}.{k}");
    Ok(match t {
        TrafficFile::Bulk => crate::endpoint::App::Bulk,
        TrafficFile::Onoff {
            size,
            mean_bytes,
            std_bytes,
            max_bytes,
            alpha,
            min_bytes,
            off_mean_s,
        } => {
            let d = crate::traffic::OnOffParams::default();
            let off_mean = positive_time(ctx, &at("off_mean_s"), off_mean_s, "s", 1.0)?
                .map(Dur::from_secs_f64)
                .unwrap_or(d.off_mean);
            let size = match size.unwrap_or(SizeLawFile::Lognormal) {
                SizeLawFile::Lognormal => {
                    for (k, v) in [("alpha", alpha), ("min_bytes", min_bytes)] {
                        if v.is_some() {
                            return Err(ctx.err(&at(k), "only for size = \"pareto\""));
                        }
                    }
                    crate::traffic::FileSize::LogNormal(lognormal_size(
                        ctx, path, mean_bytes, std_bytes, max_bytes,
                    )?)
                }
                SizeLawFile::Pareto => crate::traffic::FileSize::Pareto(
                    crate::traffic::pareto_size(alpha, mean_bytes, min_bytes, std_bytes, max_bytes)
                        .map_err(|(k, why)| ctx.err(&at(k), why))?,
                ),
            };
            let p = crate::traffic::OnOffParams { size, off_mean };
            crate::endpoint::App::OnOff(p)
        }
    })
}

/// The flow's controller parameters must suit its path's propagation round trip (a trained model's
/// delay range, say); the controller decides (`Params::check_round_trip`).
fn check_round_trip(ctx: &Ctx<'_>, path: &str, f: &FlowSpec, sc: &Scenario) -> R<()> {
    let Ok(info) = ccscope_cc::registry::find(&f.controller) else {
        return Ok(());
    }; // python: checked by the bindings
    let rtt_ms = sc.round_trip(f).as_ms_f64();
    (info.check_round_trip)(&f.params, rtt_ms).map_err(|e| match e {
        ccscope_cc::ParamError::Invalid { key, reason } => {
            ctx.err(&format!("{path}.{key}"), reason)
        }
        other => ctx.err(&format!("{path}.controller"), other.to_string()),
    })
}

/// A route: link names, each known and none repeated.
fn route(
    ctx: &Ctx<'_>,
    path: &str,
    names: &[String],
    links: &[LinkSpec],
    dumbbell: bool,
) -> R<Vec<usize>> {
    let mut out = Vec::with_capacity(names.len());
    for n in names {
        let l = links.iter().position(|x| &x.name == n).ok_or_else(|| {
            let all: Vec<&str> = links.iter().map(|x| x.name.as_str()).collect();
            ctx.err(
                path,
                format!("unknown link `{n}` (links: {})", all.join(", ")),
            )
        })?;
        if dumbbell && l < 2 {
            return Err(ctx.err(
                path,
                format!("`{n}` is the dumbbell's: a route names [links.NAME] links"),
            ));
        }
        if out.contains(&l) {
            return Err(ctx.err(path, format!("link `{n}` appears twice")));
        }
        out.push(l);
    }
    if out.is_empty() {
        return Err(ctx.err(path, "an empty route"));
    }
    if out.len() > u16::MAX as usize {
        return Err(ctx.err(path, "more than 65535 links"));
    }
    Ok(out)
}

/// `route` + `ack_route`, or `paths = [{ route, ack_route }, ...]`.
fn paths(
    ctx: &Ctx<'_>,
    p: &str,
    f: &FlowFile,
    links: &[LinkSpec],
    dumbbell: bool,
) -> R<Vec<PathSpec>> {
    let at = |k: &str| format!("{p}.{k}");
    let one = |r: &Vec<String>, a: &Vec<String>, rp: &str, ap: &str| -> R<PathSpec> {
        Ok(PathSpec {
            route: route(ctx, rp, r, links, dumbbell)?,
            ack_route: route(ctx, ap, a, links, dumbbell)?,
        })
    };
    match (&f.route, &f.ack_route, &f.paths) {
        (None, None, None) => Ok(Vec::new()),
        (Some(r), Some(a), None) => Ok(vec![one(r, a, &at("route"), &at("ack_route"))?]),
        (Some(_), None, None) => Err(ctx.err(
            &at("route"),
            "a flow with a `route` needs an `ack_route` (the links its ACKs take)",
        )),
        (None, Some(_), None) => Err(ctx.err(&at("ack_route"), "an `ack_route` needs a `route`")),
        (_, _, Some(ps)) => {
            if f.route.is_some() || f.ack_route.is_some() {
                return Err(ctx.err(
                    &at("paths"),
                    "give either `paths` or `route` and `ack_route`, not both",
                ));
            }
            if ps.is_empty() || ps.len() > u8::MAX as usize {
                return Err(ctx.err(
                    &at("paths"),
                    "expected 1 to 255 { route = [...], ack_route = [...] } tables",
                ));
            }
            let mut out = Vec::with_capacity(ps.len());
            for (j, x) in ps.iter().enumerate() {
                let pj = format!("{p}.paths[{j}]");
                let r = x.route.as_ref().ok_or_else(|| {
                    ctx.err(
                        &pj,
                        "missing `route`: a path needs the links its data takes",
                    )
                })?;
                let a = x.ack_route.as_ref().ok_or_else(|| {
                    ctx.err(
                        &pj,
                        "missing `ack_route`: a path needs the links its ACKs take",
                    )
                })?;
                out.push(one(
                    r,
                    a,
                    &format!("{pj}.route"),
                    &format!("{pj}.ack_route"),
                )?);
            }
            Ok(out)
        }
    }
}

fn flow(
    ctx: &Ctx<'_>,
    p: &str,
    ff: FlowFile,
    links: &[LinkSpec],
    dumbbell: bool,
) -> R<(FlowSpec, u64)> {
    let at = |k: &str| format!("{p}.{k}");
    let controller = ff
        .controller
        .clone()
        .ok_or_else(|| ctx.err(&at("controller"), "missing: every flow needs a controller"))?;
    let mut f = FlowSpec::new(&controller);
    let count = ff.count.unwrap_or(1);
    // Every time a flow gives is a non-negative value within the longest run (a stop: positive).
    let secs = |k: &str, v: Option<f64>| {
        within_a_run(ctx, &at(k), non_negative(ctx, &at(k), v)?, "s", 1.0)
    };
    f.start = Time::from_secs_f64(secs("start_s", ff.start_s)?.unwrap_or(0.0));
    f.start_jitter = Dur::from_secs_f64(secs("start_jitter_s", ff.start_jitter_s)?.unwrap_or(0.0));
    let stop_s = positive(ctx, &at("stop_s"), ff.stop_s)?;
    f.stop = within_a_run(ctx, &at("stop_s"), stop_s, "s", 1.0)?.map(Time::from_secs_f64);
    if f.stop.is_some_and(|s| s <= f.start) {
        return Err(ctx.err(&at("stop_s"), "must be later than start_s"));
    }
    let ms = |k: &str, v: Option<f64>| {
        within_a_run(ctx, &at(k), non_negative(ctx, &at(k), v)?, "ms", 1e-3)
    };
    f.delay = ms("delay_ms", ff.delay_ms)?.map(Dur::from_ms_f64);
    f.ack_delay = ms("ack_delay_ms", ff.ack_delay_ms)?.map(Dur::from_ms_f64);
    f.paths = paths(ctx, p, &ff, links, dumbbell)?;
    if f.paths.is_empty() && !dumbbell {
        return Err(ctx.err(&at("route"), "missing: without a [data_link] every flow needs a `route` and an `ack_route` (or `paths`)"));
    }
    if !f.paths.is_empty() {
        for (k, v) in [("delay_ms", ff.delay_ms), ("ack_delay_ms", ff.ack_delay_ms)] {
            if v.is_some() {
                return Err(ctx.err(
                    &at(k),
                    "a flow with a route takes its delays from its links",
                ));
            }
        }
    }
    f.ack_path = match &ff.ack_path {
        None => AckPath::Same,
        Some(toml::Value::String(s)) if s == "same" => AckPath::Same,
        Some(toml::Value::Integer(j)) if *j >= 0 && (*j as usize) < f.paths.len().max(1) => {
            AckPath::Fixed(*j as u8)
        }
        Some(_) => {
            return Err(ctx.err(
                &at("ack_path"),
                format!(
                    "expected \"same\" or a path index below {}",
                    f.paths.len().max(1)
                ),
            ))
        }
    };
    f.timeseries = ff.timeseries;
    if let Some(m) = &ff.monitor {
        let l = links
            .iter()
            .position(|x| &x.name == m)
            .ok_or_else(|| ctx.err(&at("monitor"), format!("unknown link `{m}`")))?;
        if !f.paths.iter().any(|p| p.route.contains(&l)) && !(f.paths.is_empty() && l == 0) {
            return Err(ctx.err(
                &at("monitor"),
                format!("the flow's data does not cross `{m}`"),
            ));
        }
        f.monitor = Some(l);
    }
    for (k, v, slot) in [
        ("packet_bytes", ff.packet_bytes, &mut f.packet_bytes),
        ("ack_bytes", ff.ack_bytes, &mut f.ack_bytes),
    ] {
        if let Some(b) = v {
            if !(28..=65535).contains(&b) {
                return Err(ctx.err(&at(k), "must be in 28..=65535"));
            }
            *slot = b as u32;
        }
    }
    f.transport = ff.transport.map(|t| match t {
        TransportFile::Datagram => ccscope_cc::Transport::Datagram,
        TransportFile::Reliable => ccscope_cc::Transport::Reliable,
        TransportFile::Cmt => ccscope_cc::Transport::Cmt,
    });
    if let Some(m) = &ff.datagram_mode {
        f.datagram_mode = Some(
            crate::endpoint::datagram::DatagramMode::parse(m).ok_or_else(|| {
                ctx.err(
                    &at("datagram_mode"),
                    format!("unknown mode `{m}` (known: standard, datagrump, ctcp)"),
                )
            })?,
        );
    }
    let think = Dur::from_secs_f64(secs("think_s", ff.think_s)?.unwrap_or(0.0));
    if let Some(sizes) = &ff.transfers_bytes {
        let mut packets = Vec::with_capacity(sizes.len());
        for v in sizes {
            match v.as_integer() {
                Some(b) if b > 0 => packets.push((b as u64).div_ceil(f.packet_bytes as u64)),
                _ => {
                    return Err(ctx.err(
                        &at("transfers_bytes"),
                        format!("`{}` is not a positive integer", shown(v)),
                    ))
                }
            }
        }
        f.app = crate::endpoint::App::Transfers { packets, think };
    }
    if let Some(t) = ff.traffic.clone() {
        if f.app != crate::endpoint::App::Bulk {
            return Err(ctx.err(
                &at("traffic"),
                "give either `traffic` or `transfers_bytes`, not both",
            ));
        }
        f.app = traffic(ctx, &at("traffic"), t)?;
    }
    // `stack` picks the defaults (the RFCs' baseline, Linux's, or ns-3.37's); `rto_estimator`,
    // `frto`, `limited_transmit`, `prr`, `rack`, `tlp`, `dsack` and `delayed_ack` override them.
    let mut d = match ff.stack.as_deref() {
        None | Some("rfc") => crate::endpoint::RtoParams::default(),
        Some("linux") => crate::endpoint::RtoParams::linux(),
        Some("ns3") => crate::endpoint::RtoParams::ns3(),
        Some(o) => {
            return Err(ctx.err(
                &at("stack"),
                format!("expected \"rfc\", \"linux\" or \"ns3\", got \"{o}\""),
            ))
        }
    };
    match ff.rto_estimator.as_deref() {
        None => {}
        Some("rfc6298") => d.estimator = crate::endpoint::RtoEstimatorKind::Rfc6298,
        Some("linux") => {
            // Linux's estimator with Linux's bounds; F-RTO stays as `stack` (or `frto`) says.
            let l = crate::endpoint::RtoParams::linux();
            (d.estimator, d.min, d.max) = (l.estimator, l.min, l.max);
        }
        Some(o) => {
            return Err(ctx.err(
                &at("rto_estimator"),
                format!("expected \"rfc6298\" or \"linux\", got \"{o}\""),
            ))
        }
    }
    d.frto = ff.frto.unwrap_or(d.frto);
    d.limited_transmit = ff.limited_transmit.unwrap_or(d.limited_transmit);
    d.prr = ff.prr.unwrap_or(d.prr);
    d.rack = ff.rack.unwrap_or(d.rack);
    d.tlp = ff.tlp.unwrap_or(d.tlp);
    d.dsack = ff.dsack.unwrap_or(d.dsack);
    if let Some(v) = ff.delayed_ack.as_deref() {
        d.delayed_ack = crate::endpoint::DelayedAck::parse(v).ok_or_else(|| {
            ctx.err(
                &at("delayed_ack"),
                format!(
                    "expected {}, got \"{v}\"",
                    crate::endpoint::DelayedAck::NAMES
                ),
            )
        })?;
    }
    f.rto.estimator = d.estimator;
    f.rto.frto = d.frto;
    f.rto.limited_transmit = d.limited_transmit;
    f.rto.prr = d.prr;
    f.rto.prr_flavour = d.prr_flavour;
    f.rto.impatient = d.impatient;
    f.rto.head_retransmit_restarts = d.head_retransmit_restarts;
    f.rto.sack_restarts = d.sack_restarts;
    f.rto.one_timer = d.one_timer;
    f.rto.rack = d.rack;
    f.rto.tlp = d.tlp;
    f.rto.dsack = d.dsack;
    f.rto.delayed_ack = d.delayed_ack;
    let rto_ms = |k: &str, v: Option<f64>| positive_time(ctx, &at(k), v, "ms", 1e-3);
    f.rto.min = rto_ms("min_rto_ms", ff.min_rto_ms)?
        .map(Dur::from_ms_f64)
        .unwrap_or(d.min);
    f.rto.max = rto_ms("max_rto_ms", ff.max_rto_ms)?
        .map(Dur::from_ms_f64)
        .unwrap_or(d.max);
    f.rto.initial = rto_ms("initial_rto_ms", ff.initial_rto_ms)?
        .map(Dur::from_ms_f64)
        .unwrap_or(d.initial);
    if f.rto.min > f.rto.max {
        return Err(ctx.err(&at("min_rto_ms"), "must not exceed max_rto_ms"));
    }
    // ns-2's TCP `overhead_`: a host's processing delay, so at most a second (0 = none).
    let overhead = check_range(
        ctx,
        &at("send_overhead_ms"),
        ff.send_overhead_ms,
        0.0,
        MAX_SEND_OVERHEAD_MS,
        &format!("in [0, {MAX_SEND_OVERHEAD_MS}] ms"),
    )?;
    if let Some(x) = overhead.filter(|&x| x > 0.0 && x * 1e-3 < 1e-9) {
        return Err(ctx.err(&at("send_overhead_ms"), below_clock(x, "ms")));
    }
    f.send_overhead = overhead.map_or(Dur::ZERO, Dur::from_ms_f64);
    if overhead.is_some() && f.transport() != ccscope_cc::Transport::Reliable {
        return Err(ctx.err(
            &at("send_overhead_ms"),
            "only a `transport = \"reliable\"` flow takes this key (ns-2's TCP overhead_)",
        ));
    }
    // The loss-recovery switches, the receiver's delayed ACKs and the socket buffers are the reliable
    // transport's: on a datagram flow they would be read by nothing, so a key given there is refused,
    // not ignored.
    if f.transport() == ccscope_cc::Transport::Datagram {
        let others = [
            ("max_rto_ms", ff.max_rto_ms.is_some()),
            ("rbuf_bytes", ff.rbuf_bytes.is_some()),
            ("sndbuf_bytes", ff.sndbuf_bytes.is_some()),
            ("read_rate_mbps", ff.read_rate_mbps.is_some()),
        ];
        if let Some((k, _)) = others.into_iter().chain(tcp_switches(&ff)).find(|k| k.1) {
            return Err(ctx.err(
                &at(k),
                format!(
                    "a reliable-transport key, and `{}` runs on datagrams (set `transport = \"reliable\"`)",
                    f.controller
                ),
            ));
        }
    }
    // Socket buffers: a number, or "unlimited" (the default). RFC 7323 §2.3: a window is at most 2^30 B.
    for (key, item) in [
        ("rbuf_bytes", &ff.rbuf_bytes),
        ("sndbuf_bytes", &ff.sndbuf_bytes),
        ("read_rate_mbps", &ff.read_rate_mbps),
    ] {
        let v = match item {
            None => None,
            Some(toml::Value::String(s)) if s == "unlimited" => None,
            Some(i) => match i.as_float().or_else(|| i.as_integer().map(|x| x as f64)) {
                // A rate as a link's: integer bits per second, below one it would read nothing.
                Some(x) if key == "read_rate_mbps" && (MIN_RATE_MBPS..=MAX_RATE_MBPS).contains(&x) => {
                    Some(x)
                }
                Some(x)
                    if key != "read_rate_mbps"
                        && x.fract() == 0.0
                        && x >= f.packet_bytes as f64
                        && x <= (1u64 << 30) as f64 =>
                {
                    Some(x)
                }
                _ if key == "read_rate_mbps" => {
                    return Err(ctx.err(
                        &at(key),
                        format!(
                            "expected a rate in [{MIN_RATE_MBPS:e}, {MAX_RATE_MBPS:e}] Mbit/s or \"unlimited\", got {}",
                            shown(i)
                        ),
                    ))
                }
                _ => {
                    return Err(ctx.err(
                        &at(key),
                        format!(
                            "expected bytes in packet_bytes..=2^30 or \"unlimited\", got {}",
                            shown(i)
                        ),
                    ))
                }
            },
        };
        match key {
            "rbuf_bytes" => f.buffers.rbuf_bytes = v.map(|x| x as u64),
            "sndbuf_bytes" => f.buffers.sndbuf_bytes = v.map(|x| x as u64),
            _ => f.buffers.read_rate = v.map(Bandwidth::from_mbps),
        }
    }
    if f.buffers.read_rate.is_some() && f.buffers.rbuf_bytes.is_none() {
        return Err(ctx.err(
            &at("read_rate_mbps"),
            "needs a limited rbuf_bytes (an unlimited buffer never closes the window)",
        ));
    }
    f.params = ff.params.clone();
    // `stack` also picks a built-in controller's own Linux or ns-3 behaviour (the registry's
    // `stack_defaults`, e.g. Cubic's HyStart); a key the flow gives wins.
    if let (Some(stack), Ok(info)) = (
        ff.stack.as_deref(),
        ccscope_cc::registry::find(&f.controller),
    ) {
        for d in info.stack_defaults.iter().filter(|d| d.stack == stack) {
            f.params
                .entry(d.param)
                .or_insert_with(|| toml::Value::String(d.value.into()));
        }
    }
    // A controller's input file (a markov model, a SAC table) named relative to the scenario is
    // resolved next to it.
    for &key in ccscope_cc::INPUT_FILE_KEYS {
        if let Some(toml::Value::String(m)) = f.params.get(key) {
            let mp = Path::new(m);
            if mp.is_relative() {
                if let Some(full) = ctx.dir.as_ref().map(|d| d.join(mp)).filter(|c| c.exists()) {
                    f.params
                        .insert(key.into(), toml::Value::String(full.display().to_string()));
                }
            }
        }
    }
    // Only the datagram transport sends over several paths (round-robin, loss detected per path);
    // the reliable transport's cumulative ACK and duplicate-ACK rules are single-path.
    if f.paths.len() > 1 && f.transport() == ccscope_cc::Transport::Reliable {
        return Err(ctx.err(&at("paths"), "the reliable transport is single-path: several paths need `transport = \"cmt\"` (SCTP-CMT) or the datagram transport"));
    }
    if f.transport() == ccscope_cc::Transport::Cmt {
        cmt(ctx, p, &ff, &mut f)?;
    } else {
        for (k, given) in [
            ("cmt_mode", ff.cmt_mode.is_some()),
            ("window_management", ff.window_management.is_some()),
            ("cwnd_limits_packets", ff.cwnd_limits_packets.is_some()),
            ("dynamic_rank", ff.dynamic_rank.is_some()),
        ] {
            if given {
                return Err(ctx.err(&at(k), "only a `transport = \"cmt\"` flow takes this key"));
            }
        }
    }
    // Built-in controllers are checked here so the error points into the file; Python ones are
    // checked by the bindings when the class is instantiated.
    if f.controller != "python" {
        if let Err(e) = ccscope_cc::registry::find(&f.controller)
            .and_then(|info| (info.build)(&f.params).map(|_| ()))
        {
            let key = e
                .key()
                .filter(|k| f.params.contains_key(*k))
                .unwrap_or("controller")
                .to_string();
            return Err(ctx.err(&at(&key), e.to_string()));
        }
    }
    fixed_by_sender(ctx, p, &f)?;
    Ok((f, count))
}

/// A built-in controller's parameters that its datagram sender fixes (the registry's `fixed_by_mode`,
/// e.g. Copa's restart silence on genericCC's ctcp sender) must have the sender's value there.
fn fixed_by_sender(ctx: &Ctx<'_>, p: &str, f: &FlowSpec) -> R<()> {
    let Ok(info) = ccscope_cc::registry::find(&f.controller) else {
        return Ok(());
    };
    let Some(mode) = info.datagram_mode else {
        return Ok(());
    };
    if f.transport() != ccscope_cc::Transport::Datagram
        || Some(f.datagram_mode()) != crate::endpoint::datagram::DatagramMode::parse(mode)
    {
        return Ok(());
    }
    for fixed in info.fixed_by_mode {
        if let Some(v) = f.params.get(fixed.param) {
            fixed
                .check(mode, v)
                .map_err(|why| ctx.err(&format!("{p}.{}", fixed.param), why))?;
        }
    }
    Ok(())
}
/// The SCTP-CMT keys of a `transport = "cmt"` flow (paper 002): paths, RBUF, mode, window management.
/// The reliable TCP transport's own keys (loss recovery, its timer, the receiver's delayed ACKs), each
/// with whether the flow gives it: a datagram flow and an SCTP-CMT association refuse them.
fn tcp_switches(ff: &FlowFile) -> [(&'static str, bool); 11] {
    [
        ("stack", ff.stack.is_some()),
        ("rto_estimator", ff.rto_estimator.is_some()),
        ("min_rto_ms", ff.min_rto_ms.is_some()),
        ("initial_rto_ms", ff.initial_rto_ms.is_some()),
        ("frto", ff.frto.is_some()),
        ("limited_transmit", ff.limited_transmit.is_some()),
        ("prr", ff.prr.is_some()),
        ("rack", ff.rack.is_some()),
        ("tlp", ff.tlp.is_some()),
        ("dsack", ff.dsack.is_some()),
        ("delayed_ack", ff.delayed_ack.is_some()),
    ]
}

fn cmt(ctx: &Ctx<'_>, p: &str, ff: &FlowFile, f: &mut FlowSpec) -> R<()> {
    let at = |k: &str| format!("{p}.{k}");
    if f.controller != "sctp" {
        return Err(ctx.err(
            &at("controller"),
            format!(
                "a cmt association runs the `sctp` controller per destination, not `{}`",
                f.controller
            ),
        ));
    }
    // One path is allowed: a single-homed association (paper 002 §6.1, Figs. 5-8).
    if f.paths.is_empty() {
        return Err(ctx.err(&at("paths"), "missing: a cmt flow needs `paths = [{ route, ack_route }, ...]` (one path is single-homed)"));
    }
    if f.buffers.rbuf_bytes.is_none() {
        return Err(ctx.err(
            &at("rbuf_bytes"),
            "missing: a cmt association needs its shared receive buffer RBUF in bytes",
        ));
    }
    let buffers = [
        ("sndbuf_bytes", ff.sndbuf_bytes.is_some()),
        ("read_rate_mbps", ff.read_rate_mbps.is_some()),
    ];
    if let Some((k, _)) = buffers.into_iter().chain(tcp_switches(ff)).find(|k| k.1) {
        return Err(ctx.err(&at(k), "not a cmt key: the send buffer is infinite, the application reads at once (paper 002 A18) and the RTO follows cmt_mode"));
    }
    if f.app != crate::endpoint::App::Bulk {
        return Err(ctx.err(
            &at(if ff.traffic.is_some() {
                "traffic"
            } else {
                "transfers_bytes"
            }),
            "a cmt association sends bulk data only",
        ));
    }
    if let Some(m) = &ff.cmt_mode {
        if !matches!(m.as_str(), "model" | "rfc4960") {
            return Err(ctx.err(
                &at("cmt_mode"),
                format!("unknown mode `{m}` (known: model, rfc4960)"),
            ));
        }
        if f.params.get("mode").is_some_and(|v| v.as_str() != Some(m)) {
            return Err(ctx.err(
                &at("cmt_mode"),
                "contradicts the flow's `mode`: give one of them",
            ));
        }
        f.params
            .insert("mode".into(), toml::Value::String(m.clone()));
    }
    // A packet is one chunk of one MTU: the windows count the flow's packets.
    match f.params.get("mtu_bytes").map(|v| v.as_integer()) {
        None => {
            f.params.insert(
                "mtu_bytes".into(),
                toml::Value::Integer(f.packet_bytes as i64),
            );
        }
        Some(Some(m)) if m == f.packet_bytes as i64 => {}
        Some(_) => {
            return Err(ctx.err(
                &at("mtu_bytes"),
                format!(
                    "a cmt association's MTU is its packet size, packet_bytes = {}",
                    f.packet_bytes
                ),
            ))
        }
    }
    let n = f.paths.len();
    f.window_management = match (ff.window_management, &ff.cwnd_limits_packets) {
        (None | Some(WindowManagementFile::None), None) => WindowManagement::None,
        (Some(WindowManagementFile::Dynamic), None) => {
            WindowManagement::Dynamic(match ff.dynamic_rank.as_deref() {
                None | Some("bandwidth") => Rank::Bandwidth,
                Some("throughput") => Rank::Throughput,
                Some(r) => {
                    return Err(ctx.err(
                        &at("dynamic_rank"),
                        format!("unknown rank `{r}` (known: bandwidth, throughput)"),
                    ))
                }
            })
        }
        (Some(WindowManagementFile::Static), None) => {
            return Err(ctx.err(
                &at("window_management"),
                "static window management needs `cwnd_limits_packets`, one limit per path",
            ));
        }
        (Some(WindowManagementFile::Static), Some(limits)) => {
            if limits.len() != n {
                return Err(ctx.err(
                    &at("cwnd_limits_packets"),
                    format!("{} limits for {n} paths: give one per path", limits.len()),
                ));
            }
            let mut v = Vec::with_capacity(n);
            for (j, &c) in limits.iter().enumerate() {
                if !(1..=u32::MAX as i64).contains(&c) {
                    return Err(ctx.err(
                        &format!("{p}.cwnd_limits_packets[{j}]"),
                        format!("{c}: a limit is at least 1 packet (paper 002 eq. 58)"),
                    ));
                }
                v.push(c as u32);
            }
            WindowManagement::Static(v)
        }
        (_, Some(_)) => {
            return Err(ctx.err(
                &at("cwnd_limits_packets"),
                "limits are for `window_management = \"static\"`",
            ))
        }
    };
    if ff.dynamic_rank.is_some() && !matches!(f.window_management, WindowManagement::Dynamic(_)) {
        return Err(ctx.err(
            &at("dynamic_rank"),
            "a rank is for `window_management = \"dynamic\"`",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Scenario, ConfigError> {
        load_scenario(text, Some(Path::new("s.toml")), &[])
    }

    const OK: &str = "duration_s = 10\n[data_link]\nrate_mbps = 12\ndelay_ms = 20\n[[flows]]\ncontroller = \"aimd\"\nadditive_increase = 1\ncount = 2\n";

    #[test]
    fn a_duration_below_a_nanosecond_is_refused_not_run_for_no_time() {
        let e = load(&OK.replace("duration_s = 10", "duration_s = 1e-12"))
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "s.toml:1: field `duration_s`: 1e-12 s is below 1 ns, the clock's resolution"
        );
        assert!(load(&OK.replace("duration_s = 10", "duration_s = 1e-9")).is_ok());
    }

    #[test]
    fn a_time_beyond_the_longest_run_is_refused_not_saturated() {
        for (text, want) in [
            (
                OK.replace("delay_ms = 20", "delay_ms = 1e300"),
                "s.toml:4: field `data_link.delay_ms`: 1e300 ms is beyond 1e10 ms (the longest run)",
            ),
            (
                format!("{OK}start_s = 2e7\n"),
                "s.toml:9: field `flows[0].start_s`: 20000000 s is beyond 1e7 s (the longest run)",
            ),
            (
                format!("{OK}stop_s = 1e300\n"),
                "s.toml:9: field `flows[0].stop_s`: 1e300 s is beyond 1e7 s (the longest run)",
            ),
            (
                format!("{OK}delay_ms = 1e13\n"),
                "s.toml:9: field `flows[0].delay_ms`: 10000000000000 ms is beyond 1e10 ms (the longest run)",
            ),
            (
                format!("bin_ms = 1e300\n{OK}"),
                "s.toml:1: field `bin_ms`: 1e300 ms is beyond 1e10 ms (the longest run)",
            ),
            (
                OK.replace("duration_s = 10", "duration_s = 1e300"),
                "s.toml:1: field `duration_s`: 1e300 s is beyond 1e7 s (the longest run)",
            ),
        ] {
            let e = load(&text).map(|_| ()).unwrap_err().to_string();
            assert_eq!(e, want);
        }
        // The longest run itself is still a valid start.
        assert!(load(&format!("{OK}start_s = 1e7\n")).is_ok());
    }

    #[test]
    fn the_stack_presets_set_the_loss_recovery_switches_and_explicit_keys_override_them() {
        use crate::endpoint::{DelayedAck, RtoEstimatorKind, RtoParams};
        let flow = |keys: &str| -> RtoParams {
            let text = format!("duration_s = 1\n[data_link]\nrate_mbps = 12\n[[flows]]\ncontroller = \"cubic\"\n{keys}\n");
            load(&text).expect("loads").flows[0].rto
        };
        let rfc = flow("");
        assert_eq!(rfc, RtoParams::default());
        assert!(!(rfc.frto || rfc.limited_transmit || rfc.prr || rfc.rack || rfc.tlp || rfc.dsack));
        let linux = flow("stack = \"linux\"");
        assert_eq!(
            (linux.estimator, linux.min, linux.max),
            (
                RtoEstimatorKind::Linux,
                Dur::from_ms(200),
                Dur::from_ms(120_000)
            )
        );
        assert_eq!(
            (
                linux.frto,
                linux.prr,
                linux.rack,
                linux.tlp,
                linux.dsack,
                linux.limited_transmit
            ),
            (true, true, true, true, true, false)
        );
        assert_eq!(linux.delayed_ack, DelayedAck::Linux);
        // Every field of the preset reaches the flow, the ones without a TOML key too.
        assert_eq!(linux, RtoParams::linux());
        let ns3 = flow("stack = \"ns3\"");
        assert_eq!(
            ns3,
            RtoParams {
                prr: true,
                prr_flavour: crate::endpoint::prr::PrrFlavour::Ns3,
                impatient: true,
                delayed_ack: DelayedAck::Ns3,
                ..RtoParams::default()
            }
        );
        assert_eq!(rfc.delayed_ack, DelayedAck::None);
        assert_eq!(
            flow("stack = \"ns3\"\ndelayed_ack = \"none\"").delayed_ack,
            DelayedAck::None
        );
        assert_eq!(
            flow("delayed_ack = \"linux\"").delayed_ack,
            DelayedAck::Linux
        );
        let mixed = flow("stack = \"linux\"\nrack = false\nlimited_transmit = true");
        assert_eq!(
            (mixed.rack, mixed.tlp, mixed.limited_transmit),
            (false, true, true)
        );
        let e = load(&OK.replace("count = 2", "count = 2\nstack = \"bsd\""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("stack") && e.contains("ns3"), "{e}");
    }

    #[test]
    fn the_stack_picks_cubics_hystart_and_an_explicit_hystart_wins() {
        let hystart = |keys: &str| {
            let text = format!("duration_s = 1\n[data_link]\nrate_mbps = 12\n[[flows]]\ncontroller = \"cubic\"\n{keys}\n");
            load(&text).expect("loads").flows[0]
                .params
                .get("hystart")
                .cloned()
        };
        let s = |v: &str| Some(toml::Value::String(v.into()));
        assert_eq!(hystart(""), None);
        assert_eq!(hystart("stack = \"rfc\""), None);
        assert_eq!(hystart("stack = \"linux\""), s("linux"));
        assert_eq!(hystart("stack = \"ns3\""), s("ns3"));
        assert_eq!(
            hystart("stack = \"linux\"\nhystart = true"),
            Some(toml::Value::Boolean(true))
        );
        assert_eq!(
            hystart("stack = \"ns3\"\nhystart = \"rfc9406\""),
            s("rfc9406")
        );
        // A controller without stack defaults gets nothing.
        let text = "duration_s = 1\n[data_link]\nrate_mbps = 12\n[[flows]]\ncontroller = \"newreno\"\nstack = \"linux\"\n";
        assert!(load(text).expect("loads").flows[0].params.is_empty());
        let e = load("duration_s = 1\n[data_link]\nrate_mbps = 12\n[[flows]]\ncontroller = \"cubic\"\nhystart = \"bsd\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("hystart") && e.contains("\"linux\""), "{e}");
    }

    #[test]
    fn a_reliable_transport_key_on_a_datagram_flow_is_refused_not_ignored() {
        // OK's flow runs aimd, a datagram controller: nothing would read these keys.
        for key in [
            "frto = true",
            "delayed_ack = \"linux\"",
            "stack = \"linux\"",
            "min_rto_ms = 200",
        ] {
            let e = load(&format!("{OK}{key}\n")).unwrap_err().to_string();
            let name = key.split(' ').next().expect("a key");
            assert!(
                e.starts_with(&format!("s.toml:9: field `flows[0].{name}`:")),
                "{e}"
            );
            assert!(e.contains("`aimd` runs on datagrams"), "{e}");
            assert!(
                load(&format!("{OK}transport = \"reliable\"\n{key}\n")).is_ok(),
                "{key}"
            );
        }
    }

    #[test]
    fn an_unknown_delayed_ack_policy_names_the_field_its_line_and_the_choices() {
        let text = OK.replace("count = 2", "count = 2\ndelayed_ack = \"bsd\"");
        let line = text
            .lines()
            .position(|l| l.starts_with("delayed_ack"))
            .expect("added")
            + 1;
        let e = load(&text).unwrap_err().to_string();
        assert!(e.contains(&format!(":{line}:")), "{e}");
        assert!(e.contains("flows[0].delayed_ack"), "{e}");
        assert!(
            e.contains("\"none\", \"ns3\" or \"linux\", got \"bsd\""),
            "{e}"
        );
        let e = load(&OK.replace("count = 2", "count = 2\ndelayed_ack = 2"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("delayed_ack"), "{e}");
    }

    #[test]
    fn serde_errors_name_the_field_path_and_its_line() {
        let e = load(&OK.replace("delay_ms = 20", "delay_ms = \"x\""))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("s.toml:4: field `data_link.delay_ms`: invalid type: string"),
            "{e}"
        );
        let e = load(&OK.replace("delay_ms = 20", "delay_ms = 20\nbogus = 1"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "s.toml:5: field `data_link.bogus`: unknown key `bogus` (known: rate_mbps,"
            ) || e.starts_with("s.toml:5: field `data_link`"),
            "{e}"
        );
        let e = load(&OK.replace(
            "delay_ms = 20",
            "delay_ms = 20\nqueue = { kind = \"fifo\" }",
        ))
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("s.toml:5: field `data_link.queue") && e.contains("unknown value `fifo`"),
            "{e}"
        );
        let e = load(&OK.replace(
            "delay_ms = 20",
            "delay_ms = 20\nqueue = { kind = \"droptail\", packet = 5 }",
        ))
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("s.toml:5: field `data_link.queue") && e.contains("packet"),
            "{e}"
        );
        let e = load(&OK.replace("count = 2", "count = -2"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("s.toml:8: field `flows[0].count`:"), "{e}");
        let e = load(&OK.replace("duration_s = 10", "duration_s = nan"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("s.toml:1: field `duration_s`: NaN is not a finite number"),
            "{e}"
        );
    }

    /// The error loading `text` (from s.toml) gives when `overrides` were set from outside the file;
    /// `written`: the file as written, when `text` is it rewritten with them.
    fn override_err(text: &str, written: Option<&str>, overrides: &[&str]) -> String {
        let overrides: Vec<String> = overrides.iter().map(|k| k.to_string()).collect();
        load_scenario_overridden(text, written, Some(Path::new("s.toml")), &[], &overrides)
            .map(|_| ())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn an_error_in_an_overridden_value_names_the_override_not_a_line() {
        let text = OK.replace("additive_increase = 1", "additive_increase = -7");
        let e = override_err(&text, None, &["flows.0.additive_increase"]);
        assert!(
            e.starts_with(
                "s.toml: override `flows.0.additive_increase`: field `flows[0].additive_increase`:"
            ),
            "{e}"
        );
        // A value from the file still names its line.
        let e = override_err(&text, None, &["flows.0.count"]);
        assert!(
            e.starts_with("s.toml:7: field `flows[0].additive_increase`:"),
            "{e}"
        );
    }

    #[test]
    fn an_error_inside_a_kind_table_names_its_key_and_the_override_that_set_it() {
        let written =
            format!("{OK}").replace("delay_ms = 20", "delay_ms = 20\nqueue = { kind = \"pie\" }");
        let rewritten = written.replace("kind = \"pie\"", "kind = \"pie\", beta = \"x\"");
        assert_eq!(
            override_err(&rewritten, Some(&written), &["data_link.queue.beta"]),
            "s.toml: override `data_link.queue.beta`: field `data_link.queue.beta`: invalid type: string \"x\", expected f64"
        );
        // In the file: its line and the key.
        let e = load(&rewritten).map(|_| ()).unwrap_err().to_string();
        assert_eq!(
            e,
            "s.toml:5: field `data_link.queue.beta`: invalid type: string \"x\", expected f64"
        );
        // A key the kind lacks, beside an override of another key: the file's line, not the override.
        let bad = written.replace("kind = \"pie\"", "kind = \"pie\", bogus = 1, alpha = 0.5");
        let e = override_err(&bad, Some(&written), &["data_link.queue.alpha"]);
        assert!(
            e.starts_with("s.toml:5: field `data_link.queue.bogus`: unknown key `bogus`"),
            "{e}"
        );
        // A missing key is no single key's fault: the table is named.
        let e = load(&OK.replace(
            "delay_ms = 20",
            "delay_ms = 20\nloss = { kind = \"round_correlated\" }",
        ))
        .map(|_| ())
        .unwrap_err()
        .to_string();
        assert_eq!(e, "s.toml:5: field `data_link.loss`: missing field `p`");
    }

    #[test]
    fn a_missing_key_of_a_kind_table_is_blamed_on_the_table_not_on_a_key_it_has() {
        // Removing `p` makes serde miss `p` instead of `window_ms`: a changed error, but not p's fault.
        let written = OK.replace(
            "delay_ms = 20",
            "delay_ms = 20\nloss = { kind = \"burst_after_loss\", p = 0.1 }",
        );
        let e = load(&written).map(|_| ()).unwrap_err().to_string();
        assert_eq!(
            e,
            "s.toml:5: field `data_link.loss`: missing field `window_ms`"
        );
        // Beside an override of `p`, the file's table is named, not the override.
        let e = override_err(
            &written.replace("p = 0.1", "p = 0.2"),
            Some(&written),
            &["data_link.loss.p"],
        );
        assert_eq!(
            e,
            "s.toml:5: field `data_link.loss`: missing field `window_ms`"
        );
    }

    #[test]
    fn the_bad_key_of_a_kind_table_is_found_in_the_order_the_file_gives_its_keys() {
        // The search read the file into sorted tables: `bogus` came first there and was blamed for the error
        // the loader, reading in the file's order, had met at `mean_bytes`.
        let text = format!("{OK}traffic = {{ kind = \"onoff\", mean_bytes = \"x\", bogus = 1 }}\n");
        let e = load(&text).map(|_| ()).unwrap_err().to_string();
        assert_eq!(
            e,
            "s.toml:9: field `flows[0].traffic.mean_bytes`: invalid type: string \"x\", expected f64"
        );
        let text = format!("{OK}traffic = {{ kind = \"onoff\", bogus = 1, mean_bytes = \"x\" }}\n");
        let e = load(&text).map(|_| ()).unwrap_err().to_string();
        assert!(
            e.starts_with("s.toml:9: field `flows[0].traffic.bogus`: unknown key `bogus`"),
            "{e}"
        );
    }

    #[test]
    fn a_kind_table_of_thousands_of_keys_is_refused_without_a_parse_per_key() {
        // Each key's removal re-read the whole file: 4,000 keys took 1.6 s (release), growing as the square.
        let keys: String = (0..4_000).map(|i| format!(", k{i} = 1")).collect();
        let text = OK.replace(
            "delay_ms = 20",
            &format!("delay_ms = 20\nqueue = {{ kind = \"pie\", beta = \"x\"{keys} }}"),
        );
        let t0 = std::time::Instant::now();
        let e = load(&text).map(|_| ()).unwrap_err().to_string();
        assert!(t0.elapsed().as_secs_f64() < 1.0, "{:?}", t0.elapsed());
        assert!(e.starts_with("s.toml:5: field `data_link.queue"), "{e}");
    }

    #[test]
    fn beside_an_override_a_field_of_the_file_names_its_line_as_written() {
        // The loader is given the file rewritten with the override (its lines moved) and the file as written.
        let written = OK.replace("additive_increase = 1", "additive_increase = -7");
        let rewritten = format!("# rewritten\n\n\n{written}");
        let e = override_err(&rewritten, Some(&written), &["flows.0.count"]);
        assert!(
            e.starts_with("s.toml:7: field `flows[0].additive_increase`:"),
            "{e}"
        );
    }

    #[test]
    fn an_override_of_a_link_the_file_lacks_is_refused_naming_the_override_and_the_links() {
        // `--set links.bottelneck.rate_mbps=5` would add a link no flow crosses: a misspelt name ran unnoticed.
        let written = "duration_s = 2\n[links.bottleneck]\nrate_mbps = 10\ndelay_ms = 5\n\
                       [links.back]\nrate_mbps = 100\ndelay_ms = 5\n[[flows]]\ncontroller = \"newreno\"\n\
                       route = [\"bottleneck\"]\nack_route = [\"back\"]\n";
        let rewritten = format!("{written}[links.bottelneck]\nrate_mbps = 5\n");
        assert_eq!(
            override_err(&rewritten, Some(written), &["links.bottelneck.rate_mbps"]),
            "s.toml: override `links.bottelneck.rate_mbps`: field `links.bottelneck`: \
             unknown link `bottelneck` (links: bottleneck, back)"
        );
        // A whole table under that name adds the same link.
        assert_eq!(
            override_err(&rewritten, Some(written), &["links.bottelneck"]),
            "s.toml: override `links.bottelneck`: field `links.bottelneck`: \
             unknown link `bottelneck` (links: bottleneck, back)"
        );
        // A dumbbell names no links.
        let rewritten = format!("{OK}[links.x]\nqueue = {{ kind = \"droptail\", packets = 5 }}\n");
        assert_eq!(
            override_err(&rewritten, Some(OK), &["links.x.queue.packets"]),
            "s.toml: override `links.x.queue.packets`: field `links.x`: unknown link `x` (links: none)"
        );
        // A field of a link the file has is set as any other override.
        let rewritten = written.replace("rate_mbps = 10", "rate_mbps = 5");
        let sc = load_scenario_overridden(
            &rewritten,
            Some(written),
            Some(Path::new("s.toml")),
            &[],
            &["links.bottleneck.rate_mbps".into()],
        )
        .unwrap();
        assert_eq!(sc.links[0].name, "bottleneck");
    }

    #[test]
    fn a_minimal_scenario_loads_with_defaults() {
        let s = load(OK).unwrap();
        assert_eq!(s.flows.len(), 2);
        assert_eq!(
            s.flows[0]
                .params
                .get("additive_increase")
                .and_then(|v| v.as_integer()),
            Some(1)
        );
        assert_eq!(s.links[1].delay, Dur::from_ms(20));
        assert_eq!(s.duration, Dur::from_ms(10_000));
    }

    #[test]
    fn a_markov_model_must_cover_the_flows_propagation_round_trip() {
        use ccscope_cc::common::ccm::{Meta, Model};
        // Delay bins of 2 ms from 40 ms: [40, 60) ms.
        let meta = Meta {
            quantize_ms: 2.0,
            d_min_ms: 40.0,
            d_max_ms: 59.0,
            w_min: 0,
            w_max: 1,
            n_d: 10,
            n_w: 2,
        };
        let rows: Vec<_> = (0..20u32).map(|s| vec![((s + 1) % 20, 1.0)]).collect();
        let path = std::env::temp_dir().join(format!("ccscope-config-{}.ccm", std::process::id()));
        Model::from_rows(meta, &rows)
            .expect("valid")
            .write(&path)
            .expect("write");
        let text = |delay: u32| {
            format!("duration_s = 1\n[data_link]\nrate_mbps = 12\ndelay_ms = {delay}\n[[flows]]\ncontroller = \"markov\"\nmodel = \"{}\"\n", path.display())
        };
        assert!(load(&text(20)).is_ok(), "40 ms round trip: inside");
        let e = load(&text(5)).unwrap_err().to_string();
        assert!(
            e.starts_with("s.toml:7: field `flows[0].model`:") && e.contains("round trip is 10 ms"),
            "{e}"
        );
        let e = load(&text(40)).unwrap_err().to_string();
        assert!(
            e.contains("covers delays 40..59 ms") && e.contains("round trip is 80 ms"),
            "{e}"
        );
        std::fs::remove_file(&path).ok();
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let e = load(&OK.replace("rate_mbps = 12", "rate_mbps = -3")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "s.toml:3: field `data_link.rate_mbps`: -3 must be > 0"
        );
        let e = load(&OK.replace("controller = \"aimd\"", "controller = \"nope\"")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("s.toml:6: field `flows[0].controller`: unknown controller `nope`"),
            "{e}"
        );
        let e = load(&OK.replace("additive_increase = 1", "additive_incr = 1")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("s.toml:7: field `flows[0].additive_incr`: unknown parameter"),
            "{e}"
        );
        let e = load(&OK.replace("additive_increase = 1", "decrease_factor = 7")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("s.toml:7: field `flows[0].decrease_factor`:"),
            "{e}"
        );
        let e = load(&format!("bogus = 1\n{OK}")).unwrap_err();
        assert!(e.to_string().contains("unknown key"), "{e}");
        let e = load("[data_link\n").unwrap_err();
        assert!(matches!(e, ConfigError::Syntax { line: 1, .. }), "{e}");
        // A value the TOML parser itself refuses still names its field.
        let e = load(&OK.replace("count = 2", "count = 99999999999999999999")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("s.toml:8: field `flows[0].count`:"),
            "{e}"
        );
        let e = load(&OK.replace("delay_ms = 20", "delay_ms = 20 20")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("s.toml:4: field `data_link.delay_ms`:"),
            "{e}"
        );
        let e = load(&format!(
            "{OK}[flows.traffic]\nkind = \"onoff\"\non_s = 1 2\n"
        ))
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("s.toml:11: field `flows[0].traffic.on_s`:"),
            "{e}"
        );
        let e = load(&OK.replace(
            "[data_link]\n",
            "[data_link]\nqueue = { kind = \"droptail\" }\n",
        ))
        .unwrap_err();
        assert_eq!(e.field(), Some("data_link.queue.kind"));
    }

    #[test]
    fn a_name_with_a_line_break_or_a_tab_is_escaped_and_a_quote_shown_as_typed() {
        for (from, to, want) in [
            (
                "controller = \"aimd\"",
                "controller = \"fi\\txed\"",
                "unknown controller `fi\\txed`",
            ),
            (
                "controller = \"aimd\"",
                "controller = 'it\"s'",
                "unknown controller `it\"s`",
            ),
            (
                "additive_increase = 1",
                "\"addi\\ntive\" = 1",
                "field `flows[0].addi\\ntive`",
            ),
        ] {
            let e = load(&OK.replace(from, to)).unwrap_err().to_string();
            assert_eq!(e.lines().count(), 1, "{e}");
            assert!(e.contains(want), "{e}");
        }
    }

    /// The first link's queue of `OK` with its rate line replaced by `link` and a `kind` queue.
    fn queue_on(link: &str, kind: &str, keys: &str) -> Result<QueueConfig, ConfigError> {
        let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/ccscope/data/traces");
        let text = OK.replace(
            "rate_mbps = 12",
            &format!("{link}\nqueue = {{ kind = \"{kind}\"{keys} }}"),
        );
        let s = load_scenario(&text, Some(Path::new("s.toml")), &[traces])?;
        Ok(s.links[0].queue.clone())
    }

    fn codel_on(link: &str, keys: &str) -> Result<CodelParams, ConfigError> {
        match queue_on(link, "codel", keys)? {
            QueueConfig::Codel(p) => Ok(p),
            q => panic!("{q:?}"),
        }
    }

    // mahimahi codel_packet_queue.hh: PACKET_SIZE 1504 is the backlog below which it never drops.
    #[test]
    fn codel_runs_as_mahimahi_on_a_trace_link_and_as_rfc_8289_on_a_rate_link() {
        use ccscope_net::queue::CodelFlavour;
        let trace = "trace = \"Verizon-LTE-short.down\"";
        let p = codel_on(trace, "").unwrap();
        assert_eq!((p.flavour, p.mtu_bytes), (CodelFlavour::Mahimahi, 1504));
        let p = codel_on("rate_mbps = 12", "").unwrap();
        assert_eq!((p.flavour, p.mtu_bytes), (CodelFlavour::Rfc8289, 1500));
        let p = codel_on(trace, ", flavour = \"rfc8289\", mtu_bytes = 1500").unwrap();
        assert_eq!((p.flavour, p.mtu_bytes), (CodelFlavour::Rfc8289, 1500));
        let p = codel_on("rate_mbps = 12", ", flavour = \"mahimahi\"").unwrap();
        assert_eq!(p.flavour, CodelFlavour::Mahimahi);
        let e = codel_on(trace, ", flavour = \"linux\"")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("s.toml:4: field `data_link.queue.flavour`:") && e.contains("mahimahi"),
            "{e}"
        );
    }

    // mahimahi codel_packet_queue.cc reads target and interval with get_int_arg: whole milliseconds.
    #[test]
    fn the_mahimahi_codel_takes_whole_milliseconds_only() {
        let trace = "trace = \"Verizon-LTE-short.down\"";
        for key in ["target_ms", "interval_ms"] {
            let e = codel_on(trace, &format!(", {key} = 100.5"))
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with(&format!("s.toml:4: field `data_link.queue.{key}`:"))
                    && e.contains("whole milliseconds"),
                "{e}"
            );
        }
        let p = codel_on(trace, ", target_ms = 4, interval_ms = 80").unwrap();
        assert_eq!((p.target, p.interval), (Dur::from_ms(4), Dur::from_ms(80)));
        // RFC 8289's CoDel runs on nanoseconds: a fraction is kept.
        let p = codel_on("rate_mbps = 12", ", target_ms = 2.5").unwrap();
        assert_eq!(p.target, Dur::from_ms_f64(2.5));
    }

    fn pie_on(link: &str, keys: &str) -> Result<PieParams, ConfigError> {
        match queue_on(link, "pie", keys)? {
            QueueConfig::Pie(p) => Ok(p),
            q => panic!("{q:?}"),
        }
    }

    fn pie_with(keys: &str) -> Result<PieParams, ConfigError> {
        pie_on("rate_mbps = 12", keys)
    }

    // Mahimahi's PIE requires qdelay_ref and max_burst; ccscope defaults them to RFC 8033's 15 and
    // 150 ms, t_update to pie_packet_queue.cc's 30 ms (RFC 8033: 15), alpha and beta to 0.125 and 1.25.
    #[test]
    fn pie_runs_as_mahimahi_on_a_trace_link_and_as_rfc_8033_on_a_rate_link() {
        let trace = "trace = \"Verizon-LTE-short.down\"";
        assert_eq!(
            pie_on(trace, "").unwrap(),
            PieParams::of(PieFlavour::Mahimahi)
        );
        assert_eq!(pie_with("").unwrap(), PieParams::of(PieFlavour::Rfc8033));
        assert_eq!(
            PieParams::of(PieFlavour::Mahimahi).t_update,
            Dur::from_ms(30)
        );
        assert_eq!(
            PieParams::of(PieFlavour::Rfc8033).t_update,
            Dur::from_ms(15)
        );
        let p = pie_with(", flavour = \"mahimahi\", qdelay_ref_ms = 20, max_burst_ms = 100, t_update_ms = 15, alpha = 0.25, beta = 2.5, packets = 100").unwrap();
        assert_eq!(
            (
                p.flavour,
                p.target,
                p.max_burst,
                p.t_update,
                p.alpha,
                p.beta,
                p.limit.packets
            ),
            (
                PieFlavour::Mahimahi,
                Dur::from_ms(20),
                Dur::from_ms(100),
                Dur::from_ms(15),
                0.25,
                2.5,
                Some(100)
            )
        );
        // RFC 8033's PIE runs on nanoseconds: a fraction is kept.
        assert_eq!(
            pie_with(", qdelay_ref_ms = 2.5").unwrap().target,
            Dur::from_ms_f64(2.5)
        );
        assert_eq!(
            pie_on(trace, ", flavour = \"rfc8033\"").unwrap().flavour,
            PieFlavour::Rfc8033
        );
    }

    // mahimahi pie_packet_queue.cc: qdelay_ref_, max_burst_ and t_update_ are uint32_t milliseconds.
    #[test]
    fn pie_takes_whole_milliseconds_and_bounded_weights_naming_the_key() {
        for (keys, field, want) in [
            (
                ", flavour = \"mahimahi\", qdelay_ref_ms = 15.5",
                "qdelay_ref_ms",
                "whole milliseconds",
            ),
            (", max_burst_ms = 0", "max_burst_ms", "must be > 0"),
            (", t_update_ms = 1e300", "t_update_ms", "1e300 ms"),
            (", t_update_ms = 0.5", "t_update_ms", "must be >= 1 ms"),
            (
                ", flavour = \"mahimahi\", qdelay_ref_ms = 5e9",
                "qdelay_ref_ms",
                "beyond 4294967295 ms",
            ),
            (", alpha = -1", "alpha", "[0, 1e6]"),
            (", beta = 1e300", "beta", "[0, 1e6]"),
            (", flavour = \"linux\"", "flavour", "mahimahi"),
        ] {
            let e = pie_with(keys).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("s.toml:4: field `data_link.queue.{field}`:"))
                    && e.contains(want)
                    && e.lines().count() == 1,
                "{keys}: {e}"
            );
        }
    }

    // Mahimahi reads `bytes=0` as no limit (dropping_packet_queue.cc get_arg(): 0 is the default);
    // ccscope refuses it, as it does `packets = 0`, rather than drop every packet.
    #[test]
    fn a_byte_limit_of_zero_is_refused() {
        for kind in ["droptail", "drophead", "codel", "red", "pie"] {
            let text = OK.replace(
                "rate_mbps = 12",
                &format!("rate_mbps = 12\nqueue = {{ kind = \"{kind}\", bytes = 0 }}"),
            );
            let e = load(&text).unwrap_err().to_string();
            assert!(
                e.starts_with("s.toml:4: field `data_link.queue.bytes`: must be >= 1"),
                "{kind}: {e}"
            );
        }
    }

    #[test]
    fn a_missing_trace_is_reported_with_where_it_was_looked_for() {
        let e = load(&OK.replace("rate_mbps = 12", "trace = \"nope.down\"")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("s.toml:3: field `data_link.trace`: trace file `nope.down` not found"),
            "{e}"
        );
    }

    /// The error loading `text`, which must be one line naming s.toml's `line` and `field`.
    fn refused(text: &str, line: usize, field: &str) -> String {
        let e = load(text).map(|_| ()).unwrap_err().to_string();
        let head = format!("s.toml:{line}: field `{field}`: ");
        assert!(e.starts_with(&head), "want {head}..., got {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        e
    }

    #[test]
    fn a_retransmission_queue_loss_or_idle_time_beyond_the_longest_run_is_refused_not_saturated() {
        let codel = |k: &str| {
            OK.replace(
                "rate_mbps = 12",
                &format!("rate_mbps = 12\nqueue = {{ kind = \"codel\", flavour = \"rfc8289\", {k} = 1e300 }}"),
            )
        };
        let burst = OK.replace(
            "rate_mbps = 12",
            "rate_mbps = 12\nloss = { kind = \"burst_after_loss\", p = 0.1, window_ms = 1e300 }",
        );
        for (text, line, field, value) in [
            (
                format!("{OK}max_rto_ms = 1e300\n"),
                9,
                "flows[0].max_rto_ms",
                "1e300 ms",
            ),
            (
                format!("{OK}initial_rto_ms = 1e300\n"),
                9,
                "flows[0].initial_rto_ms",
                "1e300 ms",
            ),
            (
                format!("{OK}min_rto_ms = 1e300\nmax_rto_ms = 1e301\n"),
                9,
                "flows[0].min_rto_ms",
                "1e300 ms",
            ),
            (
                codel("target_ms"),
                4,
                "data_link.queue.target_ms",
                "1e300 ms",
            ),
            (
                codel("interval_ms"),
                4,
                "data_link.queue.interval_ms",
                "1e300 ms",
            ),
            (burst, 4, "data_link.loss.window_ms", "1e300 ms"),
            (
                format!("{OK}traffic = {{ kind = \"onoff\", off_mean_s = 1e300 }}\n"),
                9,
                "flows[0].traffic.off_mean_s",
                "1e300 s",
            ),
        ] {
            let e = refused(&text, line, field);
            assert!(
                e.ends_with(&format!("{value} is beyond 1e10 ms (the longest run)"))
                    || e.ends_with(&format!("{value} is beyond 1e7 s (the longest run)")),
                "{e}"
            );
        }
        // The longest run itself is still a valid retransmission bound.
        assert!(load(&format!(
            "{OK}transport = \"reliable\"\nmax_rto_ms = 1e10\n"
        ))
        .is_ok());
    }

    #[test]
    fn a_read_rate_is_refused_outside_the_link_rates_not_rounded_to_zero_or_saturated() {
        let tcp = format!("{OK}transport = \"reliable\"\n");
        for rate in ["1e-300", "1e300"] {
            let text = format!("{tcp}rbuf_bytes = 100000\nread_rate_mbps = {rate}\n");
            let e = refused(&text, 11, "flows[0].read_rate_mbps");
            assert!(e.contains(rate) && e.contains("Mbit/s"), "{e}");
        }
        assert!(load(&format!(
            "{tcp}rbuf_bytes = 100000\nread_rate_mbps = 1e-6\n"
        ))
        .is_ok());
        // The value refused is quoted short (TOML writes 1e-300 in 300 digits).
        let e = refused(
            &format!("{tcp}rbuf_bytes = 1e-300\n"),
            10,
            "flows[0].rbuf_bytes",
        );
        assert!(e.ends_with("got 1e-300"), "{e}");
    }

    #[test]
    fn a_table_header_inside_a_multi_line_string_does_not_count_as_a_flow() {
        let text = "name = \"\"\"\n[[flows]]\n\"\"\"\nnote = '''x'''\n[[flows]]\ncount = 99999999999999999999\n";
        assert_eq!(field_on_line(text, 6).as_deref(), Some("flows[0].count"));
        // Inside the string there is no field; a string opened and closed on one line opens nothing.
        assert_eq!(field_on_line(text, 2), None);
        assert_eq!(field_on_line(text, 4).as_deref(), Some("note"));
    }

    #[test]
    fn socket_buffers_on_a_datagram_flow_are_refused_not_ignored() {
        for key in [
            "rbuf_bytes = 100000",
            "sndbuf_bytes = 100000",
            "read_rate_mbps = 1",
        ] {
            let name = key.split(' ').next().unwrap();
            let e = refused(&format!("{OK}{key}\n"), 9, &format!("flows[0].{name}"));
            assert!(e.contains("runs on datagrams"), "{e}");
        }
    }

    #[test]
    fn a_log_normal_file_size_beyond_the_largest_file_or_too_spread_to_draw_is_refused() {
        let onoff = |keys: &str| format!("{OK}traffic = {{ kind = \"onoff\", {keys} }}\n");
        // std_bytes = 1e200 squared is infinite: sigma was infinite and building the run panicked.
        let e = refused(&onoff("std_bytes = 1e200"), 9, "flows[0].traffic.std_bytes");
        assert!(e.contains("1e200"), "{e}");
        let e = refused(
            &onoff("mean_bytes = 1e-300, std_bytes = 1e6"),
            9,
            "flows[0].traffic.std_bytes",
        );
        assert!(e.contains("1e6") || e.contains("1000000"), "{e}");
        // max_bytes = 1e300 was cast to 2^64 - 1 bytes.
        for k in ["mean_bytes", "std_bytes", "max_bytes"] {
            let e = refused(
                &onoff(&format!("{k} = 1e300")),
                9,
                &format!("flows[0].traffic.{k}"),
            );
            assert!(
                e.contains("1e300") && e.contains("4.611686018427388e18"),
                "{e}"
            );
        }
    }

    #[test]
    fn a_red_or_codel_packet_size_out_of_range_is_refused_not_clamped() {
        for (q, field) in [
            ("kind = \"red\", mean_packet_bytes = 0", "mean_packet_bytes"),
            (
                "kind = \"red\", mean_packet_bytes = 99999999999",
                "mean_packet_bytes",
            ),
            ("kind = \"codel\", mtu_bytes = 99999999999", "mtu_bytes"),
        ] {
            let text = OK.replace(
                "rate_mbps = 12",
                &format!("rate_mbps = 12\nqueue = {{ {q} }}"),
            );
            let e = refused(&text, 4, &format!("data_link.queue.{field}"));
            assert!(e.contains("65535"), "{e}");
        }
    }

    #[test]
    fn time_series_bins_are_bounded_over_every_series_kept_not_per_series() {
        // A flow asking for its own series beside `timeseries = "none"` kept 1e11 bins unchecked.
        let text = format!("bin_ms = 1e-6\ntimeseries = \"none\"\n{OK}timeseries = true\n");
        let e = refused(&text, 1, "bin_ms");
        assert!(e.contains("bins"), "{e}");
        // 64 flows' series and the link's, of 2^19 bins each, are 65 x 2^19 > 2^24 bins in all.
        let text = format!("timeseries = \"flows\"\n{OK}")
            .replace("count = 2", "count = 64")
            .replace("duration_s = 10", "duration_s = 524.288")
            .replace("timeseries", "bin_ms = 1\ntimeseries");
        let e = refused(&text, 1, "bin_ms");
        assert!(e.contains("65 series"), "{e}");
        // A flow's series and the link's, of 2^22 bins each, are still allowed.
        let one = format!("bin_ms = 1\n{OK}")
            .replace("count = 2", "count = 1")
            .replace("duration_s = 10", "duration_s = 4194.304");
        assert!(load(&one).is_ok());
    }

    #[test]
    fn a_float_given_for_an_integer_field_is_quoted_short_not_in_301_digits() {
        let e = refused(
            &format!("{OK}packet_bytes = 1e300\n"),
            9,
            "flows[0].packet_bytes",
        );
        assert!(e.contains("floating point `1e300`, expected u64"), "{e}");
        let e = refused(
            &OK.replace("count = 2", "count = 1e300"),
            8,
            "flows[0].count",
        );
        assert!(e.contains("floating point `1e300`"), "{e}");
    }

    #[test]
    fn per_flow_link_copies_are_bounded_in_all_before_anything_is_allocated() {
        // Each flow gets its own copy of every per-flow link it names: 2^19 + 1 flows over two of them
        // asked for 2^20 + 2 links (about 10 kB each) and ran out of memory.
        let topo = |count: u64| {
            format!(
                "duration_s = 1\n[links.a]\nper_flow = true\nrate_mbps = 10\n[links.b]\nper_flow = true\n\
                 rate_mbps = 10\n[links.c]\nrate_mbps = 10\n[[flows]]\ncontroller = \"fixed\"\n\
                 route = [\"a\", \"c\"]\nack_route = [\"b\"]\ncount = {count}\n"
            )
        };
        let e = refused(&topo((1 << 19) + 1), 14, "flows[0].count");
        assert!(e.contains("1048578 per-flow link copies"), "{e}");
        assert_eq!(load(&topo(4)).unwrap().flows.len(), 4);
    }

    #[test]
    fn per_flow_state_is_bounded_in_all_before_anything_is_allocated() {
        // 2^20 flows passed every count bound and asked for about 6.6 GB (6.1 kB a flow, measured).
        let text = |count: u64| OK.replace("count = 2", &format!("count = {count}"));
        // 641,040 single-path flows x (6,400 + 300) B is just over 4 GiB.
        let e = refused(&text(641_040), 8, "flows[0].count");
        assert!(
            e.ends_with("about 4.0 GiB of per-flow state (641040 flows, 0 per-flow link copies, 641040 paths): at most 4 GiB"),
            "{e}"
        );
        assert_eq!(load(&text(641_039)).unwrap().flows.len(), 641_039);
        // Sprout's forecast tables grow with its bins and ticks: about 6.9 MB a flow at their bounds.
        let sprout = |count: u64| {
            OK.replace(
                "\"aimd\"\nadditive_increase = 1",
                "\"sprout\"\nbins = 4096\nforecast_ticks = 64\ntick_ms = 5",
            )
            .replace("count = 2", &format!("count = {count}"))
        };
        let e = refused(&sprout(700), 10, "flows[0].count");
        assert!(e.ends_with("about 4.5 GiB of per-flow state (700 flows, 0 per-flow link copies, 700 paths): at most 4 GiB"), "{e}");
        assert!(load(&sprout(600)).is_ok());
    }

    #[test]
    fn each_cmt_association_counts_its_measured_size_in_the_state_bound() {
        // At rest an association measured 10.9 kB with one path, 12.7 kB with two and 16.3 kB with four
        // (65,536 of them over 1 s, peak RSS); the bound counted 6.7, 7.0 and 7.6 kB.
        let cmt = |count: u64| {
            format!(
                "duration_s = 1\n[links.p0]\nrate_mbps = 21\n[links.p1]\nrate_mbps = 20\n[links.b]\n\
                 rate_mbps = 1000\n[[flows]]\ncontroller = \"sctp\"\nrbuf_bytes = 128000\n\
                 paths = [{{ route = [\"p0\"], ack_route = [\"b\"] }}, {{ route = [\"p1\"], ack_route = [\"b\"] }}]\n\
                 count = {count}\n"
            )
        };
        // Two paths: 6,400 + 2 x 300 + 2,700 + 2 x 1,500 = 12,700 B; 338,187 of them pass 4 GiB.
        let e = refused(&cmt(338_187), 12, "flows[0].count");
        assert!(
            e.ends_with("about 4.0 GiB of per-flow state (338187 flows, 0 per-flow link copies, 676374 paths): at most 4 GiB"),
            "{e}"
        );
        assert_eq!(load(&cmt(338_186)).unwrap().flows.len(), 338_186);
    }

    #[test]
    fn each_sac_flow_in_oracle_mode_counts_its_own_copy_of_the_oracle_series_in_the_state_bound() {
        // Every SAC flow loads the oracle file into its own level series (1 B a bin, up to 10^8 bins):
        // 2200 flows of a 2 MB series hold 4.4 GB, which the bound counted as 2200 x 6.4 kB (14 MB).
        let path = std::env::temp_dir().join(format!("ccscope-oracle-{}.toml", std::process::id()));
        let series = "1".repeat(2_000_000);
        std::fs::write(&path, format!("bin_s = 0.01\nlevels = \"{series}\"\n")).unwrap();
        let sac = |count: u64| {
            OK.replace(
                "\"aimd\"\nadditive_increase = 1",
                &format!(
                    "\"sac\"\ntable = \"oracle\"\noracle_file = \"{}\"",
                    path.display()
                ),
            )
            .replace("count = 2", &format!("count = {count}"))
        };
        let e = refused(&sac(2200), 9, "flows[0].count");
        assert!(e.contains("GiB of per-flow state (2200 flows"), "{e}");
        assert!(load(&sac(1000)).is_ok());
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_packet_log_beyond_its_row_bound_at_the_links_capacity_is_refused_before_the_run() {
        // 2000 s at 2 Gbit/s logs about 6.7e8 rows (22 GB): it ran out of memory.
        let fast =
            "duration_s = 2000\npacket_log = true\n[data_link]\nrate_mbps = 2000\ndelay_ms = 1\n\
                    [[flows]]\ncontroller = \"fixed\"\n";
        let e = refused(fast, 2, "packet_log");
        assert!(e.contains("rows") && e.contains("6.7108864e7"), "{e}");
        // Without the log, or over a shorter run, the same link is fine.
        assert!(load(&fast.replace("packet_log = true", "packet_log = false")).is_ok());
        assert!(load(&fast.replace("duration_s = 2000", "duration_s = 100")).is_ok());
        // A trace logs its delivery opportunities too: a million seconds of an LTE trace is too many.
        let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/ccscope/data/traces");
        let lte = "duration_s = 1000000\npacket_log = true\n[data_link]\ntrace = \"Verizon-LTE-short.down\"\n\
                   [[flows]]\ncontroller = \"fixed\"\n";
        let e = load_scenario(lte, Some(Path::new("s.toml")), &[traces.clone()]).unwrap_err();
        assert_eq!(e.field(), Some("packet_log"), "{e}");
        let short = lte.replace("duration_s = 1000000", "duration_s = 100");
        assert!(load_scenario(&short, Some(Path::new("s.toml")), &[traces]).is_ok());
    }

    #[test]
    fn a_window_log_beyond_its_row_bound_at_the_flows_bottlenecks_is_refused_before_the_run() {
        // 3000 s of NewReno at 2 Gbit/s changed its window about 5e8 times: it ran out of memory.
        let fast =
            "duration_s = 3000\ncwnd_log = true\n[data_link]\nrate_mbps = 2000\ndelay_ms = 1\n\
                    [[flows]]\ncontroller = \"newreno\"\n";
        let e = refused(fast, 2, "cwnd_log");
        assert!(e.contains("rows") && e.contains("6.7108864e7"), "{e}");
        assert!(load(&fast.replace("cwnd_log = true", "cwnd_log = false")).is_ok());
        assert!(load(&fast.replace("duration_s = 3000", "duration_s = 100")).is_ok());
        // Each flow's slowest link counts once however many flows share it; a per-flow one once per flow.
        let topo = |per_flow: bool, count: u64| {
            format!(
                "duration_s = 1000\ncwnd_log = true\n[links.a]\nper_flow = {per_flow}\nrate_mbps = 100\n\
                 [links.c]\nrate_mbps = 100000\n[[flows]]\ncontroller = \"newreno\"\nroute = [\"a\", \"c\"]\n\
                 ack_route = [\"c\"]\ncount = {count}\n"
            )
        };
        assert!(load(&topo(false, 64)).is_ok());
        refused(&topo(true, 64), 2, "cwnd_log");
    }

    #[test]
    fn a_trace_played_once_without_a_duration_is_refused_when_it_outlasts_the_longest_run() {
        // A trace whose period is 1e10 s ran for that long (and ran out of memory) without duration_s.
        let dir = std::env::temp_dir().join(format!("ccscope-once-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("long.trace"), "0\n10000000000000\n").unwrap();
        let text =
            "[data_link]\ntrace = \"long.trace\"\nonce = true\n[[flows]]\ncontroller = \"fixed\"\n";
        let e = load_scenario(text, Some(&dir.join("s.toml")), &[])
            .map(|_| ())
            .unwrap_err();
        let e = e.to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(e.contains(":2: field `data_link.trace`: "), "{e}");
        assert!(
            e.ends_with("10000000000 s is beyond 1e7 s (the longest run); give duration_s"),
            "{e}"
        );
    }

    #[test]
    fn an_endless_trace_is_refused_after_the_input_bound_not_read_until_memory_runs_out() {
        if !Path::new("/dev/zero").exists() {
            return;
        }
        let e = load(&OK.replace("rate_mbps = 12", "trace = \"/dev/zero\""))
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("s.toml:3: field `data_link.trace`: cannot read trace file `/dev/zero`: more than 268435456 bytes"),
            "{e}"
        );
    }

    #[test]
    fn a_trace_that_cannot_be_read_names_the_scenarios_line_and_field() {
        let dir = std::env::temp_dir();
        let traced = |name: &str| OK.replace("rate_mbps = 12", &format!("trace = \"{name}\""));
        // A folder (`trace = ""` named the folder the scenario is in) named only the trace.
        let e = load_scenario(
            &traced(&dir.display().to_string()),
            Some(Path::new("s.toml")),
            &[],
        )
        .map(|_| ())
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("s.toml:3: field `data_link.trace`: cannot read trace file `"),
            "{e}"
        );
        let e = load_scenario(&traced(""), Some(&dir.join("s.toml")), &[])
            .map(|_| ())
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "s.toml:3: field `data_link.trace`: an empty file name"
                .replace("s.toml", &dir.join("s.toml").display().to_string())
        );
    }

    #[test]
    fn paths_are_bounded_in_all_over_every_flow_before_anything_is_allocated() {
        // 2^20 flows of 255 paths each asked for 2.7e8 paths (about 300 B each) and ran out of memory.
        let paths = vec!["{ route = [\"a\"], ack_route = [\"b\"] }"; 255].join(", ");
        let text = |count: u64| {
            format!(
                "duration_s = 1\n[links.a]\nrate_mbps = 10\n[links.b]\nrate_mbps = 10\n[[flows]]\n\
                 controller = \"fixed\"\npaths = [{paths}]\ncount = {count}\n"
            )
        };
        let e = refused(&text(4113), 9, "flows[0].count");
        assert!(e.contains("1048815 paths in all"), "{e}");
        assert!(load(&text(4112)).is_ok());
    }

    #[test]
    fn a_positive_time_below_the_clocks_nanosecond_is_refused_not_rounded_to_zero() {
        // min, initial and max RTO of 1e-12 ms were 0 ns: the timer fired forever at one instant and the
        // retransmissions ran out of memory.
        let codel = |k: &str| {
            OK.replace(
                "rate_mbps = 12",
                &format!("rate_mbps = 12\nqueue = {{ kind = \"codel\", flavour = \"rfc8289\", {k} = 1e-12 }}"),
            )
        };
        for (text, line, field) in [
            (
                format!("{OK}max_rto_ms = 1e-12\n"),
                9,
                "flows[0].max_rto_ms",
            ),
            (
                format!("{OK}min_rto_ms = 1e-12\n"),
                9,
                "flows[0].min_rto_ms",
            ),
            (
                format!("{OK}initial_rto_ms = 1e-12\n"),
                9,
                "flows[0].initial_rto_ms",
            ),
            (codel("target_ms"), 4, "data_link.queue.target_ms"),
            (codel("interval_ms"), 4, "data_link.queue.interval_ms"),
            (
                format!("bin_ms = 1e-9\ntimeseries = \"none\"\n{OK}"),
                1,
                "bin_ms",
            ),
            (
                format!("{OK}traffic = {{ kind = \"onoff\", off_mean_s = 1e-12 }}\n"),
                9,
                "flows[0].traffic.off_mean_s",
            ),
        ] {
            let e = refused(&text, line, field);
            assert!(e.contains("below 1 ns, the clock's resolution"), "{e}");
        }
        assert!(load(&format!(
            "{OK}transport = \"reliable\"\nmax_rto_ms = 1e-6\nmin_rto_ms = 1e-6\n"
        ))
        .is_ok());
    }

    #[test]
    fn a_send_overhead_is_a_reliable_flows_bounded_delay_in_ms_and_zero_by_default() {
        let reliable = format!("{OK}transport = \"reliable\"\n");
        assert_eq!(load(&reliable).unwrap().flows[0].send_overhead, Dur::ZERO);
        let sc = load(&format!("{reliable}send_overhead_ms = 1.2\n")).unwrap();
        assert_eq!(sc.flows[0].send_overhead, Dur(1_200_000));
        assert_eq!(
            load(&format!("{reliable}send_overhead_ms = 0\n"))
                .unwrap()
                .flows[0]
                .send_overhead,
            Dur::ZERO
        );
        for (value, says) in [
            ("-1", "-1 is out of range: must be in [0, 1000] ms"),
            ("nan", "NaN is not a finite number"),
            ("inf", "inf is not a finite number"),
            ("1e300", "1e300 is out of range: must be in [0, 1000] ms"),
            ("1e-12", "1e-12 ms is below 1 ns, the clock's resolution"),
        ] {
            let e = refused(
                &format!("{reliable}send_overhead_ms = {value}\n"),
                10,
                "flows[0].send_overhead_ms",
            );
            assert!(e.ends_with(says), "{e}");
        }
        let e = refused(
            &format!("{OK}transport = \"datagram\"\nsend_overhead_ms = 1\n"),
            10,
            "flows[0].send_overhead_ms",
        );
        assert!(e.contains("only a `transport = \"reliable\"` flow"), "{e}");
    }
}
