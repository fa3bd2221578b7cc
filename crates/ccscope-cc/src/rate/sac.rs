//! Selective Aggressiveness Control of paper 003 (Tuan and Park, §3.2) on top of the generic LIED
//! control (`lied`), as specs/003-mtsc.md §2.3-2.4 reads it.
//!
//! SAC reuses LIED's state and update unchanged and acts between two epoch measurements: when eq. 3
//! has just raised lambda, it adds a_t packets per tau (§3.2.2 actuation; a_t in delta's unit, spec §2.4
//! [D]); after a decrease it does nothing. a_t = eps(E(L2 | L1 = L1(S_t))) with
//! - S_t: the integral of the flow's own gamma reports over the last T1 before the latest reported
//!   arrival (a sliding window on the receive-time axis, spec §2.4 [D]); a_t = 0 until T1 is covered;
//! - the CondProb table (`common::condprob`), fed with V1, V2 = the integral of gamma over A.2's
//!   alternating T1, T2 windows (spec §2.3 [D]), the clock on the receive-time axis from the first
//!   arrival; a_t = 0 for a row never seen (h_l = 0);
//! - `signal = "receiver_aggregate"` (spec §6 item 1, a secondary variant) replaces the own gamma in S_t and
//!   the table by the receiving host's arrivals over each epoch's span, from the host totals on the ACKs;
//! - eps: `inverse` 1/x (§3.2.2), or `threshold` theta* if x <= theta else 0 (§3.2.2); `shift` s is added
//!   to the non-zero branch (Fig. 11, spec §2.4 [D]: theta* + s; for the inverse schedule 1/x + s).
//!
//! Table modes (spec §2.4): `online` (A.2, the default); `frozen` (on-line until `train_s` after the
//! first packet, then the counts and mu, sigma stop); `random` (each row's Pr{L2 | l} drawn from
//! Dirichlet(1, ..., 1) with `table_seed`; mu, sigma still on-line); `file` (counts and mu, sigma from
//! `table_file`, frozen); `oracle` (perfect prediction, §4.3.2: the schedule reads the true level L2 of the
//! background aggregate over [now, now + T2) from `oracle_file`, written from pass 1 of the same scenario
//! and seed by `ccscope.stats.condprob.oracle_levels_toml`; spec §2.4 [D], two passes). `invert` reads
//! row 9 - l (or level 9 - L2 under the oracle) instead of l (the spec's §5 A3 control). The table is
//! exported through the counters (`sac_table_<l>_<l'>`, column 9 = h_l, and the f64 bits of mu and
//! sigma in 32-bit halves, `sac_mu1_hi`/`_lo`, ...) so that a run can write a file for another (`ccscope.stats.condprob.sac_table_toml`).

use ccscope_core::rng::{self, RngExt};
use ccscope_core::{Bandwidth, Dur, Time};
use serde::{Deserialize, Serialize};

use crate::common::condprob::{CondProbOnline, SlidingIntegral, Window, WindowIntegral, M};
use crate::params::{invalid, ParamError, ParamSpec};
use crate::rate::lied::{self, Lied, Step};
use crate::{AckEvent, Controller, LossEvent, PacketAcked, SendEvent};

/// The aggressiveness schedule eps (paper 003 §3.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Schedule {
    /// eps(x) = 1/x.
    Inverse,
    /// eps(x) = theta* if x <= theta, else 0.
    Threshold,
}

/// The series S_t, V1 and V2 are taken from (spec §6 item 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// The flow's own receiver-reported gamma_k (paper 003 §3.2.1, A.2: per-connection).
    Own,
    /// Every flow's data arriving at the receiving host, per feedback period, from the host totals
    /// the receiver stamps on the ACKs (spec §6 item 1's `receiver_aggregate`).
    ReceiverAggregate,
}

/// Where E(L2 | L1) comes from (spec §2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TableMode {
    Online,
    Frozen,
    Random,
    File,
    Oracle,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    #[serde(flatten)]
    pub lied: lied::Params,
    /// T1, the window of V1 and of S_t (paper 003 §2.3: 2 s).
    pub t1_s: f64,
    /// T2, the window of V2 (paper 003 §2.3: 2 s).
    pub t2_s: f64,
    /// Aggressiveness schedule (paper 003 §4.3.2: the inverse schedule is the practical one).
    pub schedule: Schedule,
    /// Threshold theta of the threshold schedule (paper 003 §3.2.2, theta in [1, 8]; ours: 8, no selectivity).
    pub theta: f64,
    /// Aggressiveness theta* of the threshold schedule, packets per tau (spec §2.4 [D]: 1).
    pub theta_star: f64,
    /// Upward shift s of the schedule, packets per tau (paper 003 Fig. 11; spec §2.4 [D]: 0).
    pub shift: f64,
    /// Table mode: online, frozen, random or file (spec §2.4; default online).
    pub table: TableMode,
    /// Training time before the table freezes in `frozen` mode (paper 003 Fig. 16; ours: 1000 s).
    pub train_s: f64,
    /// Table file (TOML: counts, mu, sigma) for `file` mode.
    pub table_file: String,
    /// Seed of the Dirichlet rows in `random` mode (spec §2.4 [D]: a fixed seed per table).
    pub table_seed: u64,
    /// Read row 9 - l instead of l (spec §5 A3's inverted-table control; default off).
    pub invert: bool,
    /// Level series (TOML: bin_s, levels) for `oracle` mode: the true L2 starting in each bin.
    pub oracle_file: String,
    /// Signal of S_t and of the table: `own` gamma (paper 003 §3.2.1; the registered primary) or
    /// `receiver_aggregate`, all data arriving at the receiving host in bytes/s (spec §6 item 1).
    pub signal: Signal,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            lied: lied::Params::default(),
            t1_s: 2.0,
            t2_s: 2.0,
            schedule: Schedule::Inverse,
            theta: 8.0,
            theta_star: 1.0,
            shift: 0.0,
            table: TableMode::Online,
            train_s: 1000.0,
            table_file: String::new(),
            table_seed: 1,
            invert: false,
            oracle_file: String::new(),
            signal: Signal::Own,
        }
    }
}

const OWN_SPEC: &[ParamSpec] = &[
    ParamSpec {
        name: "t1_s",
        unit: "s",
        doc: "T1, the window of V1 and S_t (paper 003 §2.3: 2)",
    },
    ParamSpec {
        name: "t2_s",
        unit: "s",
        doc: "T2, the window of V2 (paper 003 §2.3: 2)",
    },
    ParamSpec {
        name: "schedule",
        unit: "inverse|threshold",
        doc: "aggressiveness schedule eps (paper 003 §3.2.2; §4.3.2: inverse)",
    },
    ParamSpec {
        name: "theta",
        unit: "level",
        doc: "threshold theta of the threshold schedule (paper 003 §3.2.2, [1, 8]; ours: 8)",
    },
    ParamSpec {
        name: "theta_star",
        unit: "packets/tau",
        doc: "aggressiveness theta* of the threshold schedule (spec §2.4 [D]: 1)",
    },
    ParamSpec {
        name: "shift",
        unit: "packets/tau",
        doc: "upward shift s of the schedule (paper 003 Fig. 11; spec §2.4 [D]: 0)",
    },
    ParamSpec {
        name: "table",
        unit: "online|frozen|random|file|oracle",
        doc: "source of the expected next level E(L2 given L1) (spec §2.4: online)",
    },
    ParamSpec {
        name: "train_s",
        unit: "s",
        doc:
            "training time before the table freezes in frozen mode (paper 003 Fig. 16; ours: 1000)",
    },
    ParamSpec {
        name: "table_file",
        unit: "path",
        doc: "TOML table (counts, mu, sigma) for file mode (spec §2.4 foreign table)",
    },
    ParamSpec {
        name: "table_seed",
        unit: "integer",
        doc: "seed of the Dirichlet(1..1) rows in random mode (spec §2.4 [D])",
    },
    ParamSpec {
        name: "invert",
        unit: "bool",
        doc: "read row 9 - l, the inverted-table control (spec §5 A3; off)",
    },
    ParamSpec {
        name: "oracle_file",
        unit: "path",
        doc: "TOML level series (bin_s, levels) for oracle mode, from pass 1 (spec §2.4 [D])",
    },
    ParamSpec {
        name: "signal",
        unit: "own|receiver_aggregate",
        doc: "series of S_t and the table: own gamma (paper 003 §3.2.1) or all arrivals at the receiving host (spec §6 item 1); own",
    },
];

const fn concat<const N: usize>(a: &[ParamSpec], b: &[ParamSpec]) -> [ParamSpec; N] {
    let mut out = [a[0]; N];
    let mut i = 0;
    while i < a.len() {
        out[i] = a[i];
        i += 1;
    }
    while i < N {
        out[i] = b[i - a.len()];
        i += 1;
    }
    out
}

const SPEC: [ParamSpec; lied::SPEC.len() + OWN_SPEC.len()] = concat(lied::SPEC, OWN_SPEC);

impl crate::params::Params for Params {
    const SPEC: &'static [ParamSpec] = &SPEC;
    fn validate(&self) -> Result<(), ParamError> {
        self.lied.check()?;
        let positive = |key: &str, v: f64| {
            if v > 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err(invalid(key, "must be > 0 and finite"))
            }
        };
        positive("t1_s", self.t1_s)?;
        positive("t2_s", self.t2_s)?;
        if !(1.0..=M as f64).contains(&self.theta) {
            return Err(invalid("theta", "must be in [1, 8]"));
        }
        if !(self.theta_star >= 0.0 && self.theta_star.is_finite()) {
            return Err(invalid("theta_star", "must be >= 0 and finite"));
        }
        if !(self.shift >= 0.0 && self.shift.is_finite()) {
            return Err(invalid("shift", "must be >= 0 and finite"));
        }
        if !(self.train_s >= 0.0 && self.train_s.is_finite()) {
            return Err(invalid("train_s", "must be >= 0 and finite"));
        }
        if self.table == TableMode::File {
            load_table(&self.table_file).map_err(|e| invalid("table_file", e))?;
        }
        if self.table == TableMode::Oracle {
            Oracle::load(&self.oracle_file).map_err(|e| invalid("oracle_file", e))?;
        }
        Ok(())
    }
    /// In oracle mode each flow holds its own level series, a byte a bin: at most the file's size.
    fn state_bytes(&self) -> u64 {
        if self.table != TableMode::Oracle {
            return 0;
        }
        std::fs::metadata(&self.oracle_file).map_or(0, |m| m.len())
    }
}

/// A CondProb table on disk: `counts` (8 rows of 9, column 9 = h_l), `mu` and `sigma` ([V1, V2]).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TableFile {
    counts: Vec<Vec<u64>>,
    mu: [f64; 2],
    sigma: [f64; 2],
}

/// The text of an input file, read within the input bound (`/dev/zero` was read until memory ran out).
fn read_input(path: &str) -> Result<String, String> {
    let bytes = ccscope_core::file::read_bounded(
        std::path::Path::new(path),
        ccscope_core::file::MAX_INPUT_BYTES,
    )
    .map_err(|e| format!("{path}: {e}"))?;
    String::from_utf8(bytes).map_err(|_| format!("{path}: not UTF-8 text"))
}

/// Load a table written by `ccscope.stats.condprob.sac_table_toml` (or by hand) for `file` mode.
pub fn load_table(path: &str) -> Result<CondProbOnline, String> {
    if path.is_empty() {
        return Err("file mode needs a table_file".into());
    }
    let text = read_input(path)?;
    let t: TableFile = toml::from_str(&text).map_err(|e| format!("{path}: {}", e.message()))?;
    if t.counts.len() != M || t.counts.iter().any(|r| r.len() != M + 1) {
        return Err(format!(
            "{path}: counts must be 8 rows of 9 (column 9 = h_l)"
        ));
    }
    if t.mu.iter().chain(&t.sigma).any(|v| !v.is_finite()) || t.sigma.iter().any(|&s| s < 0.0) {
        return Err(format!("{path}: mu and sigma must be finite, sigma >= 0"));
    }
    let mut counts = [[0u64; M + 1]; M];
    for (row, r) in counts.iter_mut().zip(&t.counts) {
        row.copy_from_slice(r);
    }
    Ok(CondProbOnline::with_frozen(counts, t.mu, t.sigma))
}

/// The perfect predictor's series (spec §2.4 [D]): `levels[i]` is the true L2 of the background aggregate
/// over [i bin_s, i bin_s + T2), quantised by pass 1 with that series' whole-run mu and sigma.
#[derive(Clone, Debug, PartialEq)]
pub struct Oracle {
    bin_ns: u64,
    levels: Vec<u8>,
}

/// An oracle file on disk: `bin_s` and `levels`, one digit 1-8 per bin.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OracleFile {
    bin_s: f64,
    levels: String,
    /// What pass 1 records beside the levels (T2, mu, sigma, source); not read.
    #[serde(default)]
    #[allow(dead_code)]
    meta: Option<toml::Table>,
}

/// Longest oracle series accepted: 10^8 bins (10^6 s at 10 ms), bounded before it is held.
const MAX_ORACLE_BINS: usize = 100_000_000;

impl Oracle {
    /// Load a level series written by `ccscope.stats.condprob.oracle_levels_toml`.
    pub fn load(path: &str) -> Result<Oracle, String> {
        if path.is_empty() {
            return Err("oracle mode needs an oracle_file".into());
        }
        let meta = std::fs::metadata(path).map_err(|e| format!("{path}: {e}"))?;
        if meta.len() > 2 * MAX_ORACLE_BINS as u64 {
            return Err(format!("{path}: larger than {MAX_ORACLE_BINS} levels"));
        }
        let text = read_input(path)?;
        let f: OracleFile =
            toml::from_str(&text).map_err(|e| format!("{path}: {}", e.message()))?;
        if !(f.bin_s > 0.0 && f.bin_s.is_finite()) {
            return Err(format!("{path}: bin_s must be > 0 and finite"));
        }
        let levels: Vec<u8> = f
            .levels
            .bytes()
            .enumerate()
            .map(|(i, b)| match b {
                b'1'..=b'8' => Ok(b - b'0'),
                _ => Err(format!(
                    "{path}: levels[{i}] = {:?}: every level is a digit 1-8",
                    b as char
                )),
            })
            .collect::<Result<_, _>>()?;
        if levels.is_empty() {
            return Err(format!("{path}: levels is empty"));
        }
        Ok(Oracle {
            bin_ns: Dur::from_secs_f64(f.bin_s).as_ns().max(1),
            levels,
        })
    }

    /// The true L2 over [now, now + T2), or `None` past the recorded series.
    pub fn level_at(&self, now: Time) -> Option<usize> {
        let i = now.as_ns() / self.bin_ns;
        self.levels.get(i as usize).map(|&l| l as usize)
    }
}

/// E(L2 | l) of rows drawn from Dirichlet(1, ..., 1): normalised Exp(1) draws (spec §2.4 [D]).
fn random_expectations(seed: u64) -> [f64; M] {
    let mut r = rng::stream(seed, 0);
    let mut out = [0.0; M];
    for e in out.iter_mut() {
        let w: Vec<f64> = (0..M).map(|_| -(1.0 - r.gen::<f64>()).ln()).collect();
        let total: f64 = w.iter().sum();
        *e = w
            .iter()
            .enumerate()
            .map(|(j, x)| (j + 1) as f64 * x)
            .sum::<f64>()
            / total;
    }
    out
}

/// Counter names of the exported table: `sac_table_<l>_<l'>`, l' = 9 for h_l.
const TABLE_NAMES: [&str; M * (M + 1)] = [
    "sac_table_1_1",
    "sac_table_1_2",
    "sac_table_1_3",
    "sac_table_1_4",
    "sac_table_1_5",
    "sac_table_1_6",
    "sac_table_1_7",
    "sac_table_1_8",
    "sac_table_1_9",
    "sac_table_2_1",
    "sac_table_2_2",
    "sac_table_2_3",
    "sac_table_2_4",
    "sac_table_2_5",
    "sac_table_2_6",
    "sac_table_2_7",
    "sac_table_2_8",
    "sac_table_2_9",
    "sac_table_3_1",
    "sac_table_3_2",
    "sac_table_3_3",
    "sac_table_3_4",
    "sac_table_3_5",
    "sac_table_3_6",
    "sac_table_3_7",
    "sac_table_3_8",
    "sac_table_3_9",
    "sac_table_4_1",
    "sac_table_4_2",
    "sac_table_4_3",
    "sac_table_4_4",
    "sac_table_4_5",
    "sac_table_4_6",
    "sac_table_4_7",
    "sac_table_4_8",
    "sac_table_4_9",
    "sac_table_5_1",
    "sac_table_5_2",
    "sac_table_5_3",
    "sac_table_5_4",
    "sac_table_5_5",
    "sac_table_5_6",
    "sac_table_5_7",
    "sac_table_5_8",
    "sac_table_5_9",
    "sac_table_6_1",
    "sac_table_6_2",
    "sac_table_6_3",
    "sac_table_6_4",
    "sac_table_6_5",
    "sac_table_6_6",
    "sac_table_6_7",
    "sac_table_6_8",
    "sac_table_6_9",
    "sac_table_7_1",
    "sac_table_7_2",
    "sac_table_7_3",
    "sac_table_7_4",
    "sac_table_7_5",
    "sac_table_7_6",
    "sac_table_7_7",
    "sac_table_7_8",
    "sac_table_7_9",
    "sac_table_8_1",
    "sac_table_8_2",
    "sac_table_8_3",
    "sac_table_8_4",
    "sac_table_8_5",
    "sac_table_8_6",
    "sac_table_8_7",
    "sac_table_8_8",
    "sac_table_8_9",
];

/// Counter names of mu1, sigma1, mu2, sigma2: high and low 32 bits of each f64.
const STAT_NAMES: [[&str; 2]; 4] = [
    ["sac_mu1_hi", "sac_mu1_lo"],
    ["sac_sigma1_hi", "sac_sigma1_lo"],
    ["sac_mu2_hi", "sac_mu2_lo"],
    ["sac_sigma2_hi", "sac_sigma2_lo"],
];

/// An f64 from its two 32-bit halves as `counters` reports them (`sac_mu1_hi`, `sac_mu1_lo`, ...).
pub fn f64_from_halves(hi: u64, lo: u64) -> f64 {
    f64::from_bits(hi << 32 | (lo & 0xffff_ffff))
}

#[derive(Debug)]
pub struct Sac {
    p: Params,
    lied: Lied,
    table: CondProbOnline,
    /// The table still learns (counts and, unless frozen, mu and sigma).
    learning: bool,
    /// E(L2 | l) of the random table, replacing the counts' rows.
    random: Option<[f64; M]>,
    /// The true future level, replacing the prediction (`oracle` mode).
    oracle: Option<Oracle>,
    /// Time of the event being handled (the oracle's clock).
    now: Time,
    windows: WindowIntegral,
    recent: SlidingIntegral,
    /// First packet sent: the training clock of `frozen` mode starts here.
    start: Option<Time>,
    closed: Vec<crate::common::condprob::Closed>,
    /// The a_t of the latest increase step, packets per tau.
    last_a: f64,
    increases: u64,
    boosted: u64,
    a_sum_micro: u64,
    no_row: u64,
    /// Measured epochs whose ACKs carried no host totals under `receiver_aggregate` (nothing observed).
    no_host_feedback: u64,
    /// Every observed (span, value) when asked (`record_signal`): per epoch, never per packet.
    signal_log: Option<Vec<SignalSample>>,
}

/// One observation of the level series: the value (bytes/s) over a receive-time span, and for
/// `receiver_aggregate` the host bytes behind it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SignalSample {
    pub epoch: u64,
    pub start: Time,
    pub end: Time,
    pub value: f64,
    pub host_bytes: Option<u64>,
}

impl Sac {
    pub fn new(p: Params) -> Self {
        let table = match p.table {
            // validate loaded it already; a file gone since starts an empty frozen table.
            TableMode::File => load_table(&p.table_file).unwrap_or_else(|_| {
                CondProbOnline::with_frozen([[0; M + 1]; M], [0.0; 2], [0.0; 2])
            }),
            _ => CondProbOnline::default(),
        };
        let random = (p.table == TableMode::Random).then(|| random_expectations(p.table_seed));
        // validate loaded it already; a file gone since gives no aggressiveness (counted in sac_no_row).
        let oracle = (p.table == TableMode::Oracle).then(|| {
            Oracle::load(&p.oracle_file).unwrap_or(Oracle {
                bin_ns: 1,
                levels: Vec::new(),
            })
        });
        let ns = |s: f64| Dur::from_secs_f64(s).as_ns();
        Sac {
            lied: Lied::new(p.lied.clone()),
            learning: p.table != TableMode::File,
            random,
            oracle,
            now: Time::ZERO,
            windows: WindowIntegral::new(ns(p.t1_s), ns(p.t2_s)),
            recent: SlidingIntegral::new(ns(p.t1_s)),
            table,
            start: None,
            closed: Vec::new(),
            last_a: 0.0,
            increases: 0,
            boosted: 0,
            a_sum_micro: 0,
            no_row: 0,
            no_host_feedback: 0,
            signal_log: None,
            p,
        }
    }

    /// Keep every observation of the level series (tests and diagnosis; one entry per epoch).
    pub fn record_signal(mut self) -> Self {
        self.signal_log = Some(Vec::new());
        self
    }

    /// The observations kept since the last call.
    pub fn take_signal_log(&mut self) -> Vec<SignalSample> {
        self.signal_log
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// The table in use.
    pub fn table(&self) -> &CondProbOnline {
        &self.table
    }

    /// a_t (paper 003 §3.2.2 aggressiveness determination), packets per tau.
    pub fn aggressiveness(&mut self) -> f64 {
        if let Some(o) = &self.oracle {
            // §4.3.2 perfect prediction: the true next level replaces steps 1-2.
            let Some(l2) = o.level_at(self.now) else {
                self.no_row += 1;
                return 0.0;
            };
            let x = if self.p.invert { M + 1 - l2 } else { l2 };
            return self.eps(x as f64);
        }
        // Step 1: l = L1(S_t) with the current mu_1, sigma_1; nothing before S_t covers T1.
        let Some(s_t) = self.recent.value() else {
            return 0.0;
        };
        let l = self.table.level(s_t, 1);
        let row = if self.p.invert { M + 1 - l } else { l };
        // Step 2: E(L2 | L1 = l); an unseen row gives no aggressiveness (spec §2.4 [D]).
        let expected = match &self.random {
            Some(e) => Some(e[row - 1]),
            None => self.table.expected_next(row),
        };
        let Some(x) = expected else {
            self.no_row += 1;
            return 0.0;
        };
        // Step 3: a_t = eps(x).
        self.eps(x)
    }

    /// The schedule eps(x) with the shift (§3.2.2; Fig. 11).
    fn eps(&self, x: f64) -> f64 {
        match self.p.schedule {
            Schedule::Inverse => 1.0 / x + self.p.shift,
            Schedule::Threshold if x <= self.p.theta => self.p.theta_star + self.p.shift,
            Schedule::Threshold => 0.0,
        }
    }

    // Feed one report into A.2's windows (and the table) and into S_t's window.
    fn observe(&mut self, gamma: f64, span: (Time, Time)) {
        self.recent.add(gamma, span.0, span.1);
        self.closed.clear();
        self.windows.add(gamma, span.0, span.1, &mut self.closed);
        if !self.learning {
            return;
        }
        for c in &self.closed {
            match c.window {
                Window::T1 => {
                    self.table.end_t1(c.v);
                }
                Window::T2 => {
                    self.table.end_t2(c.v);
                }
            }
        }
    }

    /// The level series' value over an epoch's receive span, bytes/s (spec §6 item 1).
    fn signal_value(&mut self, r: &lied::Report, span: (Time, Time)) -> Option<f64> {
        match self.p.signal {
            // §3.2.1: the flow's own receiver-reported gamma_k.
            Signal::Own => Some(r.gamma),
            // The host's arrivals between the span's two bounding ACKs, spread over the span.
            Signal::ReceiverAggregate => match r.host_bytes {
                Some(bytes) => Some(bytes as f64 / span.1.since(span.0).as_secs_f64().max(1e-9)),
                None => {
                    self.no_host_feedback += 1;
                    None
                }
            },
        }
    }

    /// Measure what LIED can measure, adding a_t after each increase it makes (§3.2.2 actuation).
    fn after(&mut self, now: Time) {
        self.now = now;
        if self.p.table == TableMode::Frozen
            && self.learning
            && self
                .start
                .is_some_and(|s| now.since(s).as_secs_f64() >= self.p.train_s)
        {
            // Spec §2.4 [D] training-time mode: counts and mu, sigma stop here.
            self.learning = false;
            self.table.freeze_stats();
        }
        while let Some(r) = self.lied.next_report() {
            if let Some(span) = r.span {
                if let Some(value) = self.signal_value(&r, span) {
                    self.observe(value, span);
                    if let Some(log) = &mut self.signal_log {
                        log.push(SignalSample {
                            epoch: r.epoch,
                            start: span.0,
                            end: span.1,
                            value,
                            host_bytes: r.host_bytes,
                        });
                    }
                }
            }
            match r.step {
                Step::Increase => {
                    self.increases += 1;
                    let a = self.aggressiveness();
                    self.last_a = a;
                    if a > 0.0 {
                        self.lied.add_rate(a);
                        self.boosted += 1;
                        self.a_sum_micro =
                            self.a_sum_micro.saturating_add((a * 1e6).round() as u64);
                    }
                }
                // Never against LIED's direction: nothing after a decrease.
                Step::Decrease => {}
            }
        }
    }
}

impl Controller for Sac {
    fn on_send(&mut self, now: Time, ev: &SendEvent) -> u64 {
        self.start.get_or_insert(now);
        self.lied.send(now, ev)
    }
    fn on_packet_acked(&mut self, _now: Time, ev: &PacketAcked) {
        self.lied.record_packet(ev);
    }
    fn on_ack(&mut self, now: Time, ev: &AckEvent) {
        self.lied.record_ack(ev);
        self.after(now);
    }
    fn on_loss(&mut self, now: Time, ev: &LossEvent) {
        self.lied.record_loss(ev);
        self.after(now);
    }
    fn on_timer(&mut self, now: Time) {
        self.lied.tick(now);
        self.after(now);
    }
    fn next_timer(&self) -> Option<Time> {
        self.lied.next_timer()
    }
    fn wants_packet_acks(&self) -> bool {
        true
    }
    fn wants_host_feedback(&self) -> bool {
        self.p.signal == Signal::ReceiverAggregate
    }
    fn cwnd(&self) -> u32 {
        self.lied.cwnd()
    }
    fn pacing_rate(&self) -> Option<Bandwidth> {
        self.lied.pacing_rate()
    }
    fn timeout(&self) -> Dur {
        self.lied.timeout()
    }
    fn state_name(&self) -> &'static str {
        if self.last_a > 0.0 {
            "aggressive"
        } else {
            self.lied.state_name()
        }
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut v = Vec::with_capacity(13 + TABLE_NAMES.len());
        self.lied.counters_into(&mut v);
        v.push(("sac_increases", self.increases));
        v.push(("sac_boosted_increases", self.boosted));
        v.push(("sac_a_sum_micro", self.a_sum_micro));
        v.push(("sac_no_row", self.no_row));
        v.push(("sac_no_host_feedback", self.no_host_feedback));
        v.push(("sac_blocks", self.table.blocks));
        let counts = self.table.complete_counts();
        for (i, name) in TABLE_NAMES.iter().enumerate() {
            v.push((name, counts[i / (M + 1)][i % (M + 1)]));
        }
        let (m1, s1) = self.table.stats(1);
        let (m2, s2) = self.table.stats(2);
        // The f64 bits in two 32-bit halves: exact even where counters travel as doubles (Python frames).
        for (names, x) in STAT_NAMES.iter().zip([m1, s1, m2, s2]) {
            v.push((names[0], x.to_bits() >> 32));
            v.push((names[1], x.to_bits() & 0xffff_ffff));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params as _;
    use crate::testing::{assert_close, PacedPath, Script};

    fn counter(c: &[(&'static str, u64)], name: &str) -> u64 {
        c.iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, v)| v)
            .unwrap_or_else(|| panic!("no counter {name}"))
    }

    /// A table whose every row predicts level `to` (mu = 0, sigma = 1 for both windows).
    fn table_predicting(to: usize) -> CondProbOnline {
        let mut counts = [[0; M + 1]; M];
        for row in counts.iter_mut() {
            row[to - 1] = 4;
            row[M] = 4;
        }
        CondProbOnline::with_frozen(counts, [0.0, 0.0], [1.0, 1.0])
    }

    fn sac_with(p: Params, table: CondProbOnline) -> Sac {
        let mut s = Sac::new(p);
        s.table = table;
        s.learning = false;
        s
    }

    #[test]
    fn a_t_is_added_after_an_increase_and_nothing_after_a_decrease() {
        // Every row predicts level 1, so the inverse schedule gives a_t = 1 packet per tau.
        let p = Params {
            t1_s: 0.001,
            ..Default::default()
        };
        let mut s = Script::new(sac_with(p, table_predicting(1)));
        s.bytes = 1000;
        // Epoch 0 at 0 (50 packets/s), epoch 1 at 20 ms.
        s.send(1);
        s.advance(Dur::from_ms(20));
        s.send(1);
        s.ack_oldest(Dur::from_ms(20));
        // Packet 1 arrives at 30 ms: epoch 0 is measured (no earlier epoch: increase).
        s.ack_oldest(Dur::from_ms(20));
        // 50 + delta/tau (50) + a_t/tau (50), tau = 20 ms.
        assert_close(s.cc.lied.lambda(), 150.0);
        s.advance(Dur::ZERO);
        s.send(1);
        // Epoch 1 (lambda 50, as epoch 0) arrives over [30, 45) ms: equal rates, increase, boosted.
        s.ack_oldest(Dur::from_ms(10));
        assert_close(s.cc.lied.lambda(), 250.0);
        s.advance(Dur::from_ms(10));
        s.send(1);
        // Epoch 2 (lambda 150 > 50) has gamma 1000 B / 55 ms, below epoch 1's: s = -1, a cut and no a_t.
        s.ack_oldest(Dur::from_ms(80));
        assert_close(s.cc.lied.lambda(), 218.75);
        let c = s.cc.counters();
        assert_eq!(
            (counter(&c, "lied_increases"), counter(&c, "lied_decreases")),
            (2, 1)
        );
        assert_eq!(
            (
                counter(&c, "sac_increases"),
                counter(&c, "sac_boosted_increases")
            ),
            (2, 2)
        );
        assert_eq!(counter(&c, "sac_a_sum_micro"), 2_000_000);
    }

    /// Row l predicts level l; mu = 1000, sigma = 1000 for both windows.
    fn diagonal_table() -> CondProbOnline {
        let mut counts = [[0; M + 1]; M];
        for (l, row) in counts.iter_mut().enumerate() {
            row[l] = 1;
            row[M] = 1;
        }
        CondProbOnline::with_frozen(counts, [1000.0, 1000.0], [1000.0, 1000.0])
    }

    /// Epoch 0 (one 1000 B packet at 0) is measured when epoch 1's packet (sent at 20 ms) arrives:
    /// arrivals at 10 and 30 ms, whose ACKs report the host totals `h0` and `h1`.
    fn first_epoch_with_host_totals(
        signal: Signal,
        h0: Option<u64>,
        h1: Option<u64>,
    ) -> Script<Sac> {
        let p = Params {
            t1_s: 0.02,
            signal,
            ..Default::default()
        };
        let mut s = Script::new(sac_with(p, diagonal_table()).record_signal());
        s.bytes = 1000;
        s.send(1);
        s.advance(Dur::from_ms(20));
        s.send(1);
        s.host_bytes = h0;
        s.ack_oldest(Dur::from_ms(20));
        s.host_bytes = h1;
        s.ack_oldest(Dur::from_ms(20));
        s
    }

    #[test]
    fn receiver_aggregate_levels_the_host_arrivals_between_two_acks_not_the_own_gamma() {
        // The host got 4000 B over [10, 30) ms (its totals 5000 -> 9000): 200,000 B/s, S_t = 4000 B over
        // T1 = 20 ms = mu + 3 sigma, level 8; a_t = 1/E(L2 | 8) = 1/8 packet per tau.
        let mut s = first_epoch_with_host_totals(Signal::ReceiverAggregate, Some(5000), Some(9000));
        let log = s.cc.take_signal_log();
        assert_eq!(log.len(), 1);
        assert_eq!(
            (log[0].epoch, log[0].start, log[0].end, log[0].host_bytes),
            (0, Time::from_ms(10), Time::from_ms(30), Some(4000))
        );
        assert_close(log[0].value, 200_000.0);
        assert_close(s.cc.recent.value().unwrap(), 4000.0);
        assert_eq!(s.cc.table.level(4000.0, 1), 8);
        assert_close(s.cc.aggressiveness(), 0.125);
        // lambda = 50 + delta / tau + a_t / tau, tau = 20 ms.
        assert_close(s.cc.lied.lambda(), 50.0 + 50.0 + 6.25);
        // The own signal: gamma = 1000 B / 20 ms, S_t = 1000 B = mu, level 5, a_t = 1/5.
        let mut own = first_epoch_with_host_totals(Signal::Own, Some(5000), Some(9000));
        assert_close(own.cc.take_signal_log()[0].value, 50_000.0);
        assert_close(own.cc.aggressiveness(), 0.2);
        assert_close(own.cc.lied.lambda(), 50.0 + 50.0 + 10.0);
        assert!(!own.cc.wants_host_feedback() && s.cc.wants_host_feedback());
    }

    #[test]
    fn receiver_aggregate_without_host_totals_observes_nothing_and_counts_it() {
        let mut s = first_epoch_with_host_totals(Signal::ReceiverAggregate, None, Some(9000));
        assert!(s.cc.take_signal_log().is_empty());
        assert_eq!(s.cc.recent.value(), None);
        assert_eq!(s.cc.aggressiveness(), 0.0);
        assert_eq!(counter(&s.cc.counters(), "sac_no_host_feedback"), 1);
        // lambda = 50 + delta / tau only: no S_t, no a_t.
        assert_close(s.cc.lied.lambda(), 100.0);
    }

    #[test]
    fn the_signal_parameter_reads_from_toml() {
        let t: toml::Table = toml::from_str("signal = \"receiver_aggregate\"").unwrap();
        let p: Params = t.try_into().unwrap();
        assert_eq!(p.signal, Signal::ReceiverAggregate);
        assert_eq!(Params::default().signal, Signal::Own);
        assert!(toml::from_str::<Params>("signal = \"aggregate\"").is_err());
    }

    fn a_t(p: Params, table: CondProbOnline, s_t: f64) -> f64 {
        let mut s = sac_with(p, table);
        // One report of s_t per second over [0, 10] s: S_t over the last T1 = 2 s is 2 s_t.
        s.recent
            .add(s_t / 2.0, Time::ZERO, Time::from_secs_f64(10.0));
        s.aggressiveness()
    }

    #[test]
    fn inverse_schedule_gives_one_over_the_expected_level_plus_the_shift() {
        assert_close(a_t(Params::default(), table_predicting(4), 0.0), 0.25);
        assert_close(
            a_t(
                Params {
                    shift: 0.5,
                    ..Default::default()
                },
                table_predicting(4),
                0.0,
            ),
            0.75,
        );
    }

    #[test]
    fn threshold_schedule_is_theta_star_at_or_below_theta_and_zero_above() {
        let p = |theta: f64| Params {
            schedule: Schedule::Threshold,
            theta,
            theta_star: 2.0,
            ..Default::default()
        };
        assert_eq!(a_t(p(3.0), table_predicting(3), 0.0), 2.0);
        assert_eq!(a_t(p(2.0), table_predicting(3), 0.0), 0.0);
        assert_eq!(
            a_t(
                Params {
                    shift: 4.0,
                    ..p(3.0)
                },
                table_predicting(3),
                0.0
            ),
            6.0,
            "the shift moves theta* up"
        );
        assert_eq!(
            a_t(
                Params {
                    shift: 4.0,
                    ..p(2.0)
                },
                table_predicting(3),
                0.0
            ),
            0.0,
            "and keeps 0 above theta"
        );
    }

    #[test]
    fn the_row_is_the_level_of_s_t_and_invert_reads_row_nine_minus_l() {
        // Row l predicts level l: S_t at level 2 (below mu - 2 sigma) gives 1/2, inverted 1/7.
        let mut counts = [[0; M + 1]; M];
        for (l, row) in counts.iter_mut().enumerate() {
            row[l] = 1;
            row[M] = 1;
        }
        let t = || CondProbOnline::with_frozen(counts, [10.0, 10.0], [1.0, 1.0]);
        assert_close(a_t(Params::default(), t(), 7.5), 0.5);
        assert_close(
            a_t(
                Params {
                    invert: true,
                    ..Default::default()
                },
                t(),
                7.5,
            ),
            1.0 / 7.0,
        );
        // An unseen row gives no aggressiveness and is counted.
        let mut empty = sac_with(
            Params::default(),
            CondProbOnline::with_frozen([[0; M + 1]; M], [0.0; 2], [1.0; 2]),
        );
        empty.recent.add(1.0, Time::ZERO, Time::from_secs_f64(10.0));
        assert_eq!(empty.aggressiveness(), 0.0);
        assert_eq!(empty.no_row, 1);
    }

    #[test]
    fn no_aggressiveness_before_reports_cover_t1() {
        let mut s = sac_with(Params::default(), table_predicting(1));
        s.recent.add(1.0, Time::ZERO, Time::from_secs_f64(1.5));
        assert_eq!(s.aggressiveness(), 0.0);
    }

    #[test]
    fn random_rows_are_seeded_dirichlet_expectations() {
        let a = random_expectations(1);
        assert_eq!(a, random_expectations(1));
        assert_ne!(a, random_expectations(2));
        assert!(a.iter().all(|&e| (1.0..=8.0).contains(&e)));
        // Dirichlet(1..1) rows average 4.5 in expectation; 200 rows land near it.
        let mean: f64 = (0..25).flat_map(random_expectations).sum::<f64>() / 200.0;
        assert!((mean - 4.5).abs() < 0.15, "{mean}");
    }

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("ccscope-sac-{}-{name}.toml", std::process::id()))
    }

    #[test]
    fn a_table_file_is_loaded_frozen_and_a_bad_one_is_rejected() {
        let path = temp("good");
        let rows: Vec<String> = (0..M)
            .map(|l| {
                format!(
                    "[{}]",
                    (0..=M)
                        .map(|j| if j == l || j == M { "2" } else { "0" })
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
            .collect();
        std::fs::write(
            &path,
            format!(
                "counts = [{}]\nmu = [10.0, 11.0]\nsigma = [2.0, 3.0]\n",
                rows.join(", ")
            ),
        )
        .unwrap();
        let p = Params {
            table: TableMode::File,
            table_file: path.to_string_lossy().into_owned(),
            ..Default::default()
        };
        assert!(p.validate().is_ok());
        let s = Sac::new(p);
        assert!(!s.learning && s.table.is_frozen());
        assert_eq!(s.table.stats(2), (11.0, 3.0));
        assert_eq!(s.table.expected_next(3), Some(3.0));
        std::fs::write(
            &path,
            "counts = [[1, 2]]\nmu = [0.0, 0.0]\nsigma = [1.0, 1.0]\n",
        )
        .unwrap();
        let p = Params {
            table: TableMode::File,
            table_file: path.to_string_lossy().into_owned(),
            ..Default::default()
        };
        let e = p.validate().unwrap_err();
        assert_eq!(e.key(), Some("table_file"));
        assert!(e.to_string().contains("8 rows of 9"), "{e}");
        std::fs::remove_file(&path).ok();
        assert_eq!(
            Params {
                table: TableMode::File,
                ..Default::default()
            }
            .validate()
            .unwrap_err()
            .key(),
            Some("table_file")
        );
    }

    fn oracle_file(name: &str, text: &str) -> String {
        let path = temp(name);
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    }

    fn oracle_params(path: String) -> Params {
        Params {
            table: TableMode::Oracle,
            oracle_file: path,
            ..Default::default()
        }
    }

    #[test]
    fn the_oracle_reads_the_level_of_the_bin_holding_now() {
        let path = oracle_file("levels", "bin_s = 0.5\nlevels = \"1284\"\n");
        let o = Oracle::load(&path).unwrap();
        let at = |s: f64| o.level_at(Time::from_secs_f64(s));
        assert_eq!(
            [at(0.0), at(0.49), at(0.5), at(1.2), at(1.99), at(2.0)],
            [Some(1), Some(1), Some(2), Some(8), Some(4), None]
        );
        std::fs::remove_file(&path).ok();
    }

    #[test]
    fn oracle_a_t_is_eps_of_the_true_next_level_whatever_the_table_says() {
        let path = oracle_file("eps", "bin_s = 1.0\nlevels = \"2514\"\n");
        let mut s = sac_with(oracle_params(path.clone()), table_predicting(8));
        let at = |s: &mut Sac, t: f64| {
            s.now = Time::from_secs_f64(t);
            s.aggressiveness()
        };
        // Inverse schedule: 1/2, 1/5, 1/1, 1/4; past the series nothing, and counted.
        assert_eq!(
            [
                at(&mut s, 0.5),
                at(&mut s, 1.5),
                at(&mut s, 2.5),
                at(&mut s, 3.5)
            ],
            [0.5, 0.2, 1.0, 0.25]
        );
        assert_eq!((at(&mut s, 4.0), s.no_row), (0.0, 1));
        // Threshold theta = 3: theta* at levels 2 and 1, nothing at 5 and 4; invert reads 9 - L2.
        let mut t = sac_with(
            Params {
                schedule: Schedule::Threshold,
                theta: 3.0,
                theta_star: 2.0,
                ..oracle_params(path.clone())
            },
            table_predicting(8),
        );
        assert_eq!(
            [
                at(&mut t, 0.0),
                at(&mut t, 1.0),
                at(&mut t, 2.0),
                at(&mut t, 3.0)
            ],
            [2.0, 0.0, 2.0, 0.0]
        );
        let mut inv = sac_with(
            Params {
                invert: true,
                ..oracle_params(path.clone())
            },
            table_predicting(8),
        );
        assert_close(at(&mut inv, 1.0), 0.25);
        std::fs::remove_file(&path).ok();
    }

    #[test]
    fn a_bad_or_missing_oracle_file_is_rejected_naming_the_key() {
        let missing = temp("missing").to_string_lossy().into_owned();
        let bad = oracle_file("bad", "bin_s = 0.01\nlevels = \"1290\"\n");
        let empty = oracle_file("empty", "bin_s = 0.01\nlevels = \"\"\n");
        let zero_bin = oracle_file("zero", "bin_s = 0\nlevels = \"1\"\n");
        for (path, says) in [
            (String::new(), "needs an oracle_file"),
            (missing, "No such file"),
            (bad.clone(), "levels[2] = '9'"),
            (empty.clone(), "levels is empty"),
            (zero_bin.clone(), "bin_s must be > 0"),
        ] {
            let e = oracle_params(path).validate().unwrap_err();
            assert_eq!(e.key(), Some("oracle_file"));
            assert!(e.to_string().contains(says), "{e}");
        }
        for p in [bad, empty, zero_bin] {
            std::fs::remove_file(p).ok();
        }
    }

    #[test]
    fn an_oracle_run_boosts_by_eps_of_each_recorded_level_and_is_deterministic() {
        // Level 1 for the first 10 s, level 4 after: a_t is 1 then 1/4 packet per tau.
        let levels = "1".repeat(1000) + &"4".repeat(2000);
        let path = oracle_file("run", &format!("bin_s = 0.01\nlevels = \"{levels}\"\n"));
        let run = |end: f64| {
            let mut cc = Sac::new(oracle_params(path.clone()));
            path_run(&mut cc, end);
            cc.counters()
        };
        let early = run(10.0);
        let boosted = counter(&early, "sac_boosted_increases");
        assert_eq!(boosted, counter(&early, "sac_increases"));
        assert_eq!(counter(&early, "sac_a_sum_micro"), boosted * 1_000_000);
        let whole = run(30.0);
        let later = counter(&whole, "sac_boosted_increases") - boosted;
        assert!(later > 0);
        assert_eq!(
            counter(&whole, "sac_a_sum_micro"),
            boosted * 1_000_000 + later * 250_000
        );
        assert_eq!(whole, run(30.0), "same inputs, same counters");
        // Past the series (30 s): no aggressiveness, every increase counted as having no level.
        let past = run(40.0);
        assert!(counter(&past, "sac_no_row") > 0);
        assert_eq!(
            counter(&past, "sac_a_sum_micro"),
            counter(&whole, "sac_a_sum_micro")
        );
        std::fs::remove_file(&path).ok();
    }

    fn path_run(cc: &mut Sac, end_s: f64) {
        path().run(cc, Time::from_secs_f64(end_s));
    }

    /// 1000 packets/s behind a 20-packet buffer, 10 ms each way.
    fn path() -> PacedPath {
        PacedPath {
            rate_pps: 1000.0,
            buffer: 20,
            delay: Dur::from_ms(10),
            bytes: 1000,
        }
    }

    #[test]
    fn lied_fills_a_bottleneck_and_backs_off_on_loss() {
        let mut cc = Lied::new(lied::Params::default());
        let t = path().run(&mut cc, Time::from_secs_f64(60.0));
        let c = cc.counters();
        assert!(t.delivered as f64 > 0.8 * 60.0 * 1000.0, "{t:?}");
        assert!(
            t.lost > 0 && counter(&c, "lied_decreases") > 0,
            "{t:?} {c:?}"
        );
        assert!(counter(&c, "lied_increases") > counter(&c, "lied_decreases"));
    }

    #[test]
    fn online_sac_learns_a_table_and_boosts_only_increases() {
        let p = Params {
            t1_s: 0.5,
            t2_s: 0.5,
            ..Default::default()
        };
        let mut cc = Sac::new(p);
        path().run(&mut cc, Time::from_secs_f64(60.0));
        let c = cc.counters();
        // About 60 blocks of 1 s (the clock starts at the first arrival).
        assert!((55..=60).contains(&cc.table.blocks), "{}", cc.table.blocks);
        let h: u64 = (1..=M)
            .map(|l| counter(&c, TABLE_NAMES[(l - 1) * (M + 1) + M]))
            .sum();
        assert_eq!(h, cc.table.blocks);
        assert_eq!(counter(&c, "sac_increases"), counter(&c, "lied_increases"));
        let boosted = counter(&c, "sac_boosted_increases");
        assert!(
            boosted > 0 && boosted <= counter(&c, "sac_increases"),
            "{c:?}"
        );
        // The inverse schedule never exceeds eps(1) = 1 packet per tau.
        assert!(counter(&c, "sac_a_sum_micro") <= boosted * 1_000_000);
        assert_eq!(
            f64_from_halves(counter(&c, "sac_mu1_hi"), counter(&c, "sac_mu1_lo")),
            cc.table.stats(1).0
        );
    }

    #[test]
    fn frozen_mode_stops_learning_after_the_training_time() {
        let p = Params {
            t1_s: 0.5,
            t2_s: 0.5,
            table: TableMode::Frozen,
            train_s: 20.0,
            ..Default::default()
        };
        let mut cc = Sac::new(p);
        path().run(&mut cc, Time::from_secs_f64(60.0));
        assert!((15..=20).contains(&cc.table.blocks), "{}", cc.table.blocks);
        assert!(cc.table.is_frozen());
        let mut online = Sac::new(Params {
            t1_s: 0.5,
            t2_s: 0.5,
            ..Default::default()
        });
        path().run(&mut online, Time::from_secs_f64(20.0));
        assert_eq!(online.table.blocks, cc.table.blocks, "the same first 20 s");
    }

    #[test]
    fn random_mode_uses_the_seeded_rows() {
        let p = Params {
            t1_s: 0.5,
            t2_s: 0.5,
            table: TableMode::Random,
            table_seed: 7,
            ..Default::default()
        };
        let mut cc = Sac::new(p);
        path().run(&mut cc, Time::from_secs_f64(30.0));
        let c = cc.counters();
        let boosted = counter(&c, "sac_boosted_increases");
        assert!(boosted > 0);
        // Every a_t is 1 / E of a random row, between 1/8 and 1.
        let mean_a = counter(&c, "sac_a_sum_micro") as f64 / 1e6 / boosted as f64;
        let e = random_expectations(7);
        let (lo, hi) = e.iter().fold((f64::MAX, 0.0f64), |(lo, hi), &x| {
            (lo.min(1.0 / x), hi.max(1.0 / x))
        });
        assert!(
            mean_a >= lo - 1e-9 && mean_a <= hi + 1e-9,
            "{mean_a} not in [{lo}, {hi}]"
        );
    }
}
