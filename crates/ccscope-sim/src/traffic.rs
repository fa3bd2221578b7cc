//! Application traffic: ON/OFF users, and the transfer plan a sender follows (a fixed list of
//! transfers, or ON/OFF periods drawn from the seed).
//!
//! ON: a file whose size is either paper 000's (Verus model, §6.6, Table 3) truncated log-normal
//! (mean 4 MB, variance 3.3 MB², max 10 MB), or paper 003's (Tuan & Park, §2.1 and §4.1) Pareto law
//! p(x) = alpha k^alpha x^(-alpha-1), x >= k, untruncated; OFF: exponential. A new connection is
//! opened for every ON period (paper 000 §6.6; specs/003-mtsc.md §1.2).

use ccscope_cc::{AnyController, Controller as _, DelayWindowSample};
use ccscope_core::rng::{self, RngExt};
use ccscope_core::{Dur, Time};
use rand_distr::{Distribution, Exp, LogNormal};

/// Paper 000 Table 3's truncated log-normal file size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogNormalSize {
    /// Mean of the (untruncated) log-normal file size, bytes (Table 3: 4 Mbyte).
    pub mean_bytes: f64,
    /// Standard deviation of the (untruncated) log-normal, bytes (Table 3: variance 3.3, read as
    /// 3.3 Mbyte², so sqrt(3.3e12) B).
    pub std_bytes: f64,
    /// Truncation point, bytes (Table 3: 10 Mbyte); larger draws are rejected and redrawn.
    pub max_bytes: u64,
}

impl Default for LogNormalSize {
    fn default() -> Self {
        LogNormalSize {
            mean_bytes: 4e6,
            std_bytes: 3.3e12f64.sqrt(),
            max_bytes: 10_000_000,
        }
    }
}

impl LogNormalSize {
    /// (mu, sigma) of ln X from the untruncated mean m and std s, inverting Table 3's
    /// mean = e^(mu + sigma²/2) and var = e^(2mu + sigma²)(e^(sigma²) - 1).
    pub fn mu_sigma(&self) -> (f64, f64) {
        let s2 = (1.0 + (self.std_bytes / self.mean_bytes).powi(2)).ln();
        (self.mean_bytes.ln() - s2 / 2.0, s2.sqrt())
    }
}

/// Paper 003 §2.1's Pareto file size, p(x) = alpha k^alpha x^(-alpha-1) for x >= k, untruncated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParetoSize {
    /// Shape (tail index) alpha; > 1 here, so the mean is finite (§2.1: alpha <= 1 has none).
    pub alpha: f64,
    /// Location k, bytes: the smallest file.
    pub k_bytes: f64,
}

impl ParetoSize {
    /// The k giving mean `mean_bytes`: E[X] = alpha k / (alpha - 1), so k = mean (alpha - 1) / alpha
    /// (specs/003-mtsc.md §1.2: the mean is held at 32 kB across alpha).
    pub fn with_mean(alpha: f64, mean_bytes: f64) -> ParetoSize {
        ParetoSize {
            alpha,
            k_bytes: mean_bytes * (alpha - 1.0) / alpha,
        }
    }

    pub fn mean_bytes(&self) -> f64 {
        self.alpha * self.k_bytes / (self.alpha - 1.0)
    }

    /// Inverse transform of Pr{X <= x} = 1 - (k/x)^alpha (§2.1): x = k u^(-1/alpha), u in (0, 1].
    pub fn quantile_of_survival(&self, u: f64) -> f64 {
        self.k_bytes * u.powf(-1.0 / self.alpha)
    }
}

/// Pareto mean file size when neither `mean_bytes` nor `min_bytes` is given: 32 kB, held fixed
/// across alpha (specs/003-mtsc.md §1.2 [D]; the paper does not state it).
pub const PARETO_MEAN_BYTES: f64 = 32_000.0;

/// The Pareto law of a scenario's `traffic` table, or the offending key and why. alpha must exceed 1
/// (§2.1: for alpha <= 1 the mean is infinite, so no mean can be set or calibrated against); the
/// size is given by its mean (k = mean (alpha - 1) / alpha) or by k itself, not both.
pub fn pareto_size(
    alpha: Option<f64>,
    mean_bytes: Option<f64>,
    min_bytes: Option<f64>,
    std_bytes: Option<f64>,
    max_bytes: Option<f64>,
) -> Result<ParetoSize, (&'static str, String)> {
    if std_bytes.is_some() {
        return Err((
            "std_bytes",
            "only for size = \"lognormal\" (a Pareto size has no finite variance for alpha <= 2)"
                .into(),
        ));
    }
    if max_bytes.is_some() {
        return Err((
            "max_bytes",
            "only for size = \"lognormal\": Pareto sizes are untruncated (specs/003-mtsc.md §1.2)"
                .into(),
        ));
    }
    let alpha = alpha.ok_or((
        "alpha",
        "missing: a Pareto size needs its shape alpha (> 1)".to_string(),
    ))?;
    if !alpha.is_finite() || alpha <= 1.0 {
        return Err(("alpha", format!("{alpha}: must be a finite number > 1 (paper 003 §2.1: for alpha <= 1 the Pareto mean is infinite)")));
    }
    let bytes = |k: &'static str, v: f64| -> Result<f64, (&'static str, String)> {
        if !v.is_finite() || v <= 0.0 {
            Err((k, format!("{v} must be a finite number > 0")))
        } else if v > MAX_FILE_BYTES as f64 {
            Err((k, format!("{v} is more than {MAX_FILE_BYTES} bytes")))
        } else {
            Ok(v)
        }
    };
    match (mean_bytes, min_bytes) {
        (Some(_), Some(_)) => Err((
            "min_bytes",
            "give either mean_bytes or min_bytes (the Pareto k), not both".into(),
        )),
        (None, Some(k)) => Ok(ParetoSize {
            alpha,
            k_bytes: bytes("min_bytes", k)?,
        }),
        (m, None) => Ok(ParetoSize::with_mean(
            alpha,
            bytes("mean_bytes", m.unwrap_or(PARETO_MEAN_BYTES))?,
        )),
    }
}

/// The file-size law of an ON/OFF source.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FileSize {
    LogNormal(LogNormalSize),
    Pareto(ParetoSize),
}

/// A file is at most this many bytes (2^62): larger Pareto draws are kept at this size and counted
/// (`Period::capped`). Sending 2^62 B takes 1.2e8 s even at 3 Tbit/s, beyond `MAX_DURATION_S`, so
/// the source stays ON to the end of any run exactly as with the uncapped draw; the bound only
/// keeps sequence numbers (packets, u64) from overflowing.
pub const MAX_FILE_BYTES: u64 = 1 << 62;

/// ON/OFF traffic parameters; `Default` = paper 000 Table 3.
#[derive(Clone, Debug, PartialEq)]
pub struct OnOffParams {
    pub size: FileSize,
    /// Mean of the exponential OFF duration (Table 3: 60 s; paper 003: calibrated to a load).
    pub off_mean: Dur,
}

impl Default for OnOffParams {
    fn default() -> Self {
        OnOffParams {
            size: FileSize::LogNormal(LogNormalSize::default()),
            off_mean: Dur::from_ms(60_000),
        }
    }
}

/// One ON period (a file of `bytes`) and the OFF period that follows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Period {
    pub bytes: u64,
    pub off: Dur,
    /// The size as drawn, bytes (before rounding up to whole bytes and the `MAX_FILE_BYTES` bound).
    pub drawn_bytes: f64,
}

impl Period {
    /// The draw exceeded `MAX_FILE_BYTES` and was kept at that bound.
    pub fn capped(&self) -> bool {
        self.drawn_bytes > MAX_FILE_BYTES as f64
    }
}

/// Random stream of flow `flow`'s ON/OFF periods: keyed only by (seed, flow), so every controller
/// sees the same sequence under the same seed.
pub const ONOFF_STREAM: u64 = 3000;

enum SizeGen {
    LogNormal { law: LogNormal<f64>, max_bytes: u64 },
    Pareto(ParetoSize),
}

/// Draws ON/OFF periods lazily, forever: the size, then the OFF time, from one stream.
pub struct OnOffGen {
    rng: rng::Rng,
    size: SizeGen,
    off: Exp<f64>,
}

impl OnOffGen {
    pub fn new(p: &OnOffParams, seed: u64, flow: usize) -> OnOffGen {
        let size = match p.size {
            FileSize::LogNormal(l) => {
                let (mu, sigma) = l.mu_sigma();
                SizeGen::LogNormal {
                    law: LogNormal::new(mu, sigma)
                        .expect("sigma >= 0 and finite (validated by the config)"),
                    max_bytes: l.max_bytes,
                }
            }
            FileSize::Pareto(x) => SizeGen::Pareto(x),
        };
        OnOffGen {
            rng: rng::stream(seed, ONOFF_STREAM + flow as u64),
            size,
            off: Exp::new(1.0 / p.off_mean.as_secs_f64().max(1e-9)).expect("rate > 0"),
        }
    }
}

impl Iterator for OnOffGen {
    type Item = Period;
    fn next(&mut self) -> Option<Period> {
        let (bytes, drawn_bytes) = match &self.size {
            SizeGen::LogNormal { law, max_bytes } => {
                // Truncation by rejection: a draw above max_bytes is redrawn (P ~ 1% with Table 3's values).
                let x = loop {
                    let x = law.sample(&mut self.rng);
                    if x <= *max_bytes as f64 {
                        break x;
                    }
                };
                ((x.round() as u64).max(1), x)
            }
            SizeGen::Pareto(law) => {
                // u in (0, 1]: 1 - [0, 1); u = 1 gives k, and the largest draw is k 2^(53/alpha).
                let u = 1.0 - self.rng.gen::<f64>();
                let x = law.quantile_of_survival(u);
                (
                    if x >= MAX_FILE_BYTES as f64 {
                        MAX_FILE_BYTES
                    } else {
                        (x.ceil() as u64).max(1)
                    },
                    x,
                )
            }
        };
        let off = Dur::from_secs_f64(self.off.sample(&mut self.rng));
        Some(Period {
            bytes,
            off,
            drawn_bytes,
        })
    }
}

/// The first `n` ON/OFF periods of flow `flow` under `seed` (what the simulator will use).
pub fn onoff_sequence(p: &OnOffParams, seed: u64, flow: usize, n: usize) -> Vec<Period> {
    OnOffGen::new(p, seed, flow).take(n).collect()
}

enum Source {
    Fixed {
        packets: Vec<u64>,
        think: Dur,
        next: usize,
    },
    OnOff {
        gen: OnOffGen,
        packet_bytes: u32,
    },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    NotStarted,
    /// Sending sequence numbers below `end`; the transfer (of `bytes`, 0 for fixed transfers,
    /// which are counted in packets) began at `began`.
    On {
        end: u64,
        began: Time,
        off_after: Dur,
        bytes: u64,
    },
    /// Idle until `until`.
    Off {
        until: Time,
    },
    Exhausted,
}

/// What a sender's application offers: a sequence of transfers separated by OFF (think) periods.
pub struct TransferPlan {
    source: Source,
    phase: Phase,
    /// Every period drawn so far (ON/OFF sources), in order.
    pub periods: Vec<Period>,
    pub transfers_done: u64,
    pub fct_sum: Dur,
    /// Transfers begun (completed ones and the one in progress, if any).
    pub transfers_started: u64,
    /// Bytes of the completed ON/OFF files.
    pub file_bytes_done: u64,
    /// The largest file size drawn, as drawn (bytes), and how many draws exceeded `MAX_FILE_BYTES`.
    pub largest_drawn_bytes: Option<f64>,
    pub files_capped: u64,
    /// (start, end) of every OFF period begun so far; the end may lie past the run.
    pub off_periods: Vec<(Time, Time)>,
    /// Rebuilds the controller for a new connection (built-in controllers); `None` keeps it.
    respawn: Option<(String, toml::Table)>,
    /// Samples taken from controllers retired at a new connection.
    pub retired_samples: Vec<DelayWindowSample>,
    /// Counters of the controllers of earlier connections, summed by name.
    pub retired_counters: Vec<(&'static str, u64)>,
}

/// What `poll` found.
#[derive(Debug, PartialEq, Eq)]
pub enum Poll {
    Nothing,
    /// A new ON period began now and it opens a new connection: reset the transport state.
    NewConnection,
}

impl TransferPlan {
    /// A fixed list of transfers on one connection, `think` apart.
    pub fn fixed(packets: Vec<u64>, think: Dur) -> TransferPlan {
        Self::with(
            Source::Fixed {
                packets,
                think,
                next: 0,
            },
            None,
        )
    }

    /// ON/OFF periods drawn from (seed, flow); each ON period after the first opens a new
    /// connection, with a controller rebuilt from `respawn` when given.
    pub fn onoff(
        p: &OnOffParams,
        seed: u64,
        flow: usize,
        packet_bytes: u32,
        respawn: Option<(String, toml::Table)>,
    ) -> TransferPlan {
        Self::with(
            Source::OnOff {
                gen: OnOffGen::new(p, seed, flow),
                packet_bytes,
            },
            respawn,
        )
    }

    fn with(source: Source, respawn: Option<(String, toml::Table)>) -> TransferPlan {
        TransferPlan {
            source,
            phase: Phase::NotStarted,
            periods: Vec::new(),
            off_periods: Vec::new(),
            transfers_done: 0,
            fct_sum: Dur::ZERO,
            transfers_started: 0,
            file_bytes_done: 0,
            largest_drawn_bytes: None,
            files_capped: 0,
            respawn,
            retired_samples: Vec::new(),
            retired_counters: Vec::new(),
        }
    }

    /// The next transfer: (packets, OFF time after it, bytes).
    fn draw(&mut self) -> Option<(u64, Dur, u64)> {
        match &mut self.source {
            Source::Fixed {
                packets,
                think,
                next,
            } => {
                let n = *packets.get(*next)?;
                *next += 1;
                Some((n, *think, 0))
            }
            Source::OnOff { gen, packet_bytes } => {
                let p = gen.next()?;
                self.periods.push(p);
                self.largest_drawn_bytes = Some(
                    self.largest_drawn_bytes
                        .map_or(p.drawn_bytes, |m| m.max(p.drawn_bytes)),
                );
                self.files_capped += p.capped() as u64;
                Some((p.bytes.div_ceil(*packet_bytes as u64), p.off, p.bytes))
            }
        }
    }

    fn begin(&mut self, now: Time, seq: u64) {
        self.phase = match self.draw() {
            Some((n, off_after, bytes)) => {
                self.transfers_started += 1;
                Phase::On {
                    end: seq.saturating_add(n),
                    began: now,
                    off_after,
                    bytes,
                }
            }
            None => Phase::Exhausted,
        };
    }

    /// The flow starts: the first transfer begins now at sequence `seq` (on the first connection).
    pub fn start(&mut self, now: Time, seq: u64) {
        if self.phase == Phase::NotStarted {
            self.begin(now, seq);
        }
    }

    /// Begin the next transfer if its OFF period is over.
    pub fn poll(&mut self, now: Time, seq: u64) -> Poll {
        match self.phase {
            Phase::Off { until } if now >= until => {
                self.begin(now, seq);
                let new_conn = matches!(self.source, Source::OnOff { .. })
                    && matches!(self.phase, Phase::On { .. });
                if new_conn {
                    Poll::NewConnection
                } else {
                    Poll::Nothing
                }
            }
            _ => Poll::Nothing,
        }
    }

    /// May the packet with sequence `seq` be sent for the first time?
    pub fn may_send(&self, seq: u64) -> bool {
        matches!(self.phase, Phase::On { end, .. } if seq < end)
    }

    /// Every packet below `upto` is resolved (ACKed, or for datagrams, declared lost).
    pub fn on_resolved(&mut self, now: Time, upto: u64) {
        if let Phase::On {
            end,
            began,
            off_after,
            bytes,
        } = self.phase
        {
            if upto >= end {
                self.transfers_done += 1;
                self.file_bytes_done += bytes;
                self.fct_sum = self.fct_sum + (now - began);
                self.phase = Phase::Off {
                    until: now + off_after,
                };
                self.off_periods.push((now, now + off_after));
            }
        }
    }

    /// When the current OFF period ends, if the plan is in one.
    pub fn wake(&self) -> Option<Time> {
        match self.phase {
            Phase::Off { until } => Some(until),
            _ => None,
        }
    }

    /// Idle: between transfers or done with all of them.
    pub fn idle(&self) -> bool {
        matches!(self.phase, Phase::Off { .. } | Phase::Exhausted)
    }

    /// A fresh controller for a new connection, keeping the old one's samples.
    pub fn respawn(&mut self, old: &mut AnyController) -> Option<AnyController> {
        let (name, params) = self.respawn.as_ref()?;
        let cc = ccscope_cc::build(name, params).ok()?;
        self.retired_samples.extend(old.take_samples());
        self.retired_counters =
            add_counters(std::mem::take(&mut self.retired_counters), &old.counters());
        Some(cc)
    }

    pub fn fct_mean_s(&self) -> Option<f64> {
        (self.transfers_done > 0).then(|| self.fct_sum.as_secs_f64() / self.transfers_done as f64)
    }

    /// Mean ON rate of the completed files, Mbit/s: their bytes over their summed completion times
    /// (a ratio of sums, so long files weigh by their length).
    pub fn on_rate_mbps(&self) -> Option<f64> {
        let t = self.fct_sum.as_secs_f64();
        (self.file_bytes_done > 0 && t > 0.0).then(|| self.file_bytes_done as f64 * 8.0 / t / 1e6)
    }
}

/// `a` plus `b`, by counter name (names keep their first order).
pub fn add_counters(
    mut a: Vec<(&'static str, u64)>,
    b: &[(&'static str, u64)],
) -> Vec<(&'static str, u64)> {
    for &(k, v) in b {
        match a.iter_mut().find(|(n, _)| *n == k) {
            Some((_, x)) => *x = x.saturating_add(v),
            None => a.push((k, v)),
        }
    }
    a
}
