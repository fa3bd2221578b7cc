//! Application traffic: paper 000 (Verus model, §6.6, Table 3) ON/OFF users, and the transfer plan
//! a sender follows (a fixed list of transfers, or ON/OFF periods drawn from the seed).
//!
//! ON: a file whose size is truncated log-normal (mean 4 MB, variance 3.3 MB², max 10 MB); OFF:
//! exponential (mean 60 s). A new connection is opened for every ON period (§6.6).

use ccscope_cc::{AnyController, DelayWindowSample};
use ccscope_core::rng;
use ccscope_core::{Dur, Time};
use rand_distr::{Distribution, Exp, LogNormal};

/// ON/OFF traffic parameters; `Default` = paper 000 Table 3.
#[derive(Clone, Debug, PartialEq)]
pub struct OnOffParams {
    /// Mean of the (untruncated) log-normal file size, bytes (Table 3: 4 Mbyte).
    pub mean_bytes: f64,
    /// Standard deviation of the (untruncated) log-normal, bytes (Table 3: variance 3.3, read as
    /// 3.3 Mbyte², so sqrt(3.3e12) B).
    pub std_bytes: f64,
    /// Truncation point, bytes (Table 3: 10 Mbyte); larger draws are rejected and redrawn.
    pub max_bytes: u64,
    /// Mean of the exponential OFF duration (Table 3: 60 s).
    pub off_mean: Dur,
}

impl Default for OnOffParams {
    fn default() -> Self {
        OnOffParams { mean_bytes: 4e6, std_bytes: 3.3e12f64.sqrt(), max_bytes: 10_000_000, off_mean: Dur::from_ms(60_000) }
    }
}

impl OnOffParams {
    /// (mu, sigma) of ln X from the untruncated mean m and std s, inverting Table 3's
    /// mean = e^(mu + sigma²/2) and var = e^(2mu + sigma²)(e^(sigma²) - 1).
    pub fn mu_sigma(&self) -> (f64, f64) {
        let s2 = (1.0 + (self.std_bytes / self.mean_bytes).powi(2)).ln();
        (self.mean_bytes.ln() - s2 / 2.0, s2.sqrt())
    }
}

/// One ON period (a file of `bytes`) and the OFF period that follows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Period {
    pub bytes: u64,
    pub off: Dur,
}

/// Random stream of flow `flow`'s ON/OFF periods: keyed only by (seed, flow), so every controller
/// sees the same sequence under the same seed.
pub const ONOFF_STREAM: u64 = 3000;

/// Draws ON/OFF periods lazily, forever.
pub struct OnOffGen {
    rng: rng::Rng,
    size: LogNormal<f64>,
    off: Exp<f64>,
    max_bytes: u64,
}

impl OnOffGen {
    pub fn new(p: &OnOffParams, seed: u64, flow: usize) -> OnOffGen {
        let (mu, sigma) = p.mu_sigma();
        OnOffGen {
            rng: rng::stream(seed, ONOFF_STREAM + flow as u64),
            size: LogNormal::new(mu, sigma).expect("sigma >= 0 and finite (validated by the config)"),
            off: Exp::new(1.0 / p.off_mean.as_secs_f64().max(1e-9)).expect("rate > 0"),
            max_bytes: p.max_bytes,
        }
    }
}

impl Iterator for OnOffGen {
    type Item = Period;
    fn next(&mut self) -> Option<Period> {
        // Truncation by rejection: a draw above max_bytes is redrawn (P ~ 1% with Table 3's values).
        let bytes = loop {
            let x = self.size.sample(&mut self.rng);
            if x <= self.max_bytes as f64 {
                break (x.round() as u64).max(1);
            }
        };
        let off = Dur::from_secs_f64(self.off.sample(&mut self.rng));
        Some(Period { bytes, off })
    }
}

/// The first `n` ON/OFF periods of flow `flow` under `seed` (what the simulator will use).
pub fn onoff_sequence(p: &OnOffParams, seed: u64, flow: usize, n: usize) -> Vec<Period> {
    OnOffGen::new(p, seed, flow).take(n).collect()
}

enum Source {
    Fixed { packets: Vec<u64>, think: Dur, next: usize },
    OnOff { gen: OnOffGen, packet_bytes: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    NotStarted,
    /// Sending sequence numbers below `end`; the transfer began at `began`.
    On { end: u64, began: Time, off_after: Dur },
    /// Idle until `until`.
    Off { until: Time },
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
        Self::with(Source::Fixed { packets, think, next: 0 }, None)
    }

    /// ON/OFF periods drawn from (seed, flow); each ON period after the first opens a new
    /// connection, with a controller rebuilt from `respawn` when given.
    pub fn onoff(p: &OnOffParams, seed: u64, flow: usize, packet_bytes: u32, respawn: Option<(String, toml::Table)>) -> TransferPlan {
        Self::with(Source::OnOff { gen: OnOffGen::new(p, seed, flow), packet_bytes }, respawn)
    }

    fn with(source: Source, respawn: Option<(String, toml::Table)>) -> TransferPlan {
        TransferPlan { source, phase: Phase::NotStarted, periods: Vec::new(), off_periods: Vec::new(), transfers_done: 0, fct_sum: Dur::ZERO, respawn, retired_samples: Vec::new(), retired_counters: Vec::new() }
    }

    fn draw(&mut self) -> Option<(u64, Dur)> {
        match &mut self.source {
            Source::Fixed { packets, think, next } => {
                let n = *packets.get(*next)?;
                *next += 1;
                Some((n, *think))
            }
            Source::OnOff { gen, packet_bytes } => {
                let p = gen.next()?;
                self.periods.push(p);
                Some((p.bytes.div_ceil(*packet_bytes as u64), p.off))
            }
        }
    }

    fn begin(&mut self, now: Time, seq: u64) {
        self.phase = match self.draw() {
            Some((n, off_after)) => Phase::On { end: seq + n, began: now, off_after },
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
                let new_conn = matches!(self.source, Source::OnOff { .. }) && matches!(self.phase, Phase::On { .. });
                if new_conn { Poll::NewConnection } else { Poll::Nothing }
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
        if let Phase::On { end, began, off_after } = self.phase {
            if upto >= end {
                self.transfers_done += 1;
                self.fct_sum = self.fct_sum + (now - began);
                self.phase = Phase::Off { until: now + off_after };
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
        self.retired_counters = add_counters(std::mem::take(&mut self.retired_counters), &old.counters());
        Some(cc)
    }

    pub fn fct_mean_s(&self) -> Option<f64> {
        (self.transfers_done > 0).then(|| self.fct_sum.as_secs_f64() / self.transfers_done as f64)
    }
}

/// `a` plus `b`, by counter name (names keep their first order).
pub fn add_counters(mut a: Vec<(&'static str, u64)>, b: &[(&'static str, u64)]) -> Vec<(&'static str, u64)> {
    for &(k, v) in b {
        match a.iter_mut().find(|(n, _)| *n == k) {
            Some((_, x)) => *x = x.saturating_add(v),
            None => a.push((k, v)),
        }
    }
    a
}
