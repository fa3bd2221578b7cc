//! The CMT Markov-chain throughput model of Wallace & Shami (paper 002 §4.3): one path's SCTP sender
//! as a chain of rounds, a state (w, x, t) = (cwnd, packets sent, ssthresh), solved for its stationary
//! distribution pi = pi Q (eq. 11) and turned into throughput eta = (E[x] - E[g]) / E[delta] (eq. 19).
//!
//! State sets: congestion avoidance (eq. 12), slow start (eqs. 15-16), exponential backoff (eqs. 17-18);
//! transitions as §4.3.1-§4.3.3 with the readings A1-A6, A8, A11 of specs/002-cmt.md (listed in
//! docs/deviations.md, "Paper 002: Markov chain (§4.3)"). Loss per round from eq. 6 (independent,
//! binomial) or eq. 7 (correlated: the first loss at position x - g + 1 takes the rest of the round).
//!
//! Two solvers share one Gauss-Seidel ordering and one state numbering:
//! - `explicit` builds Q as CSR from the per-state rules ([`chain::Chain::transitions`]) and sweeps its
//!   transpose; it refuses chains above [`EXPLICIT_MAX_NONZEROS`];
//! - `structured` never builds Q: it pulls each cwnd level's inflow with suffix sums over the geometric
//!   rows of eq. 7, or over a truncated binomial table for eq. 6 whose dropped mass is bounded and
//!   folded into the reported residual (see `structured.rs`).

mod chain;
mod explicit;
mod structured;
#[cfg(test)]
mod tests;

use std::fmt;
use std::time::Instant;

pub use chain::Chain;

/// Largest window in packets the chain is built for: W (W + 1) / 2 ~ 3.4e7 states, ~270 MB per vector.
pub const MAX_WINDOW: u64 = 8192;
/// The explicit solver refuses chains with more non-zeros than this (W above 405; CSR and its transpose hold ~24 B per non-zero).
pub const EXPLICIT_MAX_NONZEROS: u64 = 1 << 23;
/// The residual ||pi Q - pi||_1 every answer must reach (issue 10).
pub const REQUIRED_RESIDUAL: f64 = 1e-10;
/// Gauss-Seidel stops once the residual is below this, two decades under the requirement, so that two
/// solvers agree to 1e-9 even where the chain mixes slowly.
pub const TARGET_RESIDUAL: f64 = 1e-12;
/// Sweeps allowed before a solve is declared not converged.
pub const MAX_SWEEPS: u32 = 20_000;

/// How losses fall within a round (paper 002 §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossModel {
    /// Eq. 6: each packet lost independently with probability p (binomial count).
    Independent,
    /// Eq. 7: the first loss has probability p per packet; every later packet of the round is lost.
    Correlated,
}

impl LossModel {
    pub fn name(self) -> &'static str {
        match self {
            LossModel::Independent => "independent",
            LossModel::Correlated => "correlated",
        }
    }

    pub fn parse(s: &str) -> Result<LossModel, CmtMarkovError> {
        match s {
            "independent" => Ok(LossModel::Independent),
            "correlated" => Ok(LossModel::Correlated),
            _ => Err(CmtMarkovError::Loss(s.to_string())),
        }
    }
}

/// Which stationary solver to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Solver {
    /// `structured` (it is exact for eq. 7 and bounded for eq. 6, and never slower).
    Auto,
    /// Build Q as CSR and sweep it.
    Explicit,
    /// Matrix-free level sweeps.
    Structured,
}

impl Solver {
    pub fn name(self) -> &'static str {
        match self {
            Solver::Auto => "auto",
            Solver::Explicit => "explicit",
            Solver::Structured => "structured",
        }
    }

    pub fn parse(s: &str) -> Result<Solver, CmtMarkovError> {
        match s {
            "auto" => Ok(Solver::Auto),
            "explicit" => Ok(Solver::Explicit),
            "structured" => Ok(Solver::Structured),
            _ => Err(CmtMarkovError::Solver(s.to_string())),
        }
    }
}

impl fmt::Display for Solver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Bad input or a solve that could not meet its bound; each message names the field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CmtMarkovError {
    #[error("field `p`: {0} is not a loss probability in the open interval (0, 1) (and at least 2.2e-308)")]
    LossRate(f64),
    #[error("field `b_mbps`: {0} Mbit/s is not a positive, finite bandwidth")]
    Bandwidth(f64),
    #[error("field `d_ms`: {0} ms is not a non-negative, finite round-trip delay")]
    Delay(f64),
    #[error("field `packet_bytes`: a packet must hold at least one byte (got 0)")]
    PacketBytes,
    #[error("field `rbuf_bytes`: {rbuf} B is below one packet of {packet} B")]
    RbufBelowPacket { rbuf: u64, packet: u32 },
    #[error("field `rto_max_s`: {0} s is not a positive, finite maximum RTO")]
    RtoMax(f64),
    #[error("field `window_packets`: W = {0} packets, but the chain needs W >= 2 (eq. 12 starts CA at w = 2; footnote 3 assumes W > 1)")]
    WindowTooSmall(u64),
    #[error("field `window_packets`: W = {window} packets is above the bound {max} ({states} states would be allocated)")]
    WindowTooLarge { window: u64, max: u64, states: u64 },
    #[error("field `loss`: `{0}` is not a loss model (expected `independent` or `correlated`)")]
    Loss(String),
    #[error("field `solver`: `{0}` is not a solver (expected `auto`, `explicit` or `structured`)")]
    Solver(String),
    #[error("field `solver`: the explicit matrix would hold {nonzeros} non-zeros, above its bound {max} (use `structured`)")]
    ExplicitTooLarge { nonzeros: u64, max: u64 },
    #[error("solver `{solver}` did not reach residual {target:e} in {sweeps} sweeps (last {residual:e})")]
    NotConverged {
        solver: Solver,
        sweeps: u32,
        residual: f64,
        target: f64,
    },
}

/// One path's parameters (paper 002 §6.1.1 names the focus point p = 1e-3, b = 21, d = 40, r = 128 KB).
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// p, the per-packet loss probability of eqs. 6-7, in (0, 1).
    pub p: f64,
    /// b, the bottleneck bandwidth in Mbit/s (eq. 8 uses it in packets/s).
    pub b_mbps: f64,
    /// d, the round-trip propagation delay in ms (eq. 8).
    pub d_ms: f64,
    /// r, the shared receive buffer in bytes; W = floor(r / packet_bytes) (footnote 8, A11: KB = 1000 B).
    pub rbuf_bytes: u64,
    pub loss: LossModel,
    /// RTO_max in seconds (eq. 18; SCTP's 60 s).
    pub rto_max_s: f64,
    /// Packet size in bytes (the paper's 1500).
    pub packet_bytes: u32,
    /// W given directly (then `rbuf_bytes` is not used).
    pub window_packets: Option<u64>,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            p: 1e-3,
            b_mbps: 21.0,
            d_ms: 40.0,
            rbuf_bytes: 128_000,
            loss: LossModel::Correlated,
            rto_max_s: 60.0,
            packet_bytes: 1500,
            window_packets: None,
        }
    }
}

impl Params {
    /// Check every field, then return W. Nothing is allocated before this passes.
    pub fn window(&self) -> Result<u64, CmtMarkovError> {
        // Below the smallest normal float 1/p overflows and p q^k loses its bits (subnormal).
        if !(self.p >= f64::MIN_POSITIVE && self.p < 1.0) {
            return Err(CmtMarkovError::LossRate(self.p));
        }
        if !(self.b_mbps > 0.0 && self.b_mbps.is_finite()) {
            return Err(CmtMarkovError::Bandwidth(self.b_mbps));
        }
        if !(self.d_ms >= 0.0 && self.d_ms.is_finite()) {
            return Err(CmtMarkovError::Delay(self.d_ms));
        }
        if !(self.rto_max_s > 0.0 && self.rto_max_s.is_finite()) {
            return Err(CmtMarkovError::RtoMax(self.rto_max_s));
        }
        if self.packet_bytes == 0 {
            return Err(CmtMarkovError::PacketBytes);
        }
        let w = match self.window_packets {
            Some(w) => w,
            None => {
                if self.rbuf_bytes < u64::from(self.packet_bytes) {
                    return Err(CmtMarkovError::RbufBelowPacket {
                        rbuf: self.rbuf_bytes,
                        packet: self.packet_bytes,
                    });
                }
                // Footnote 8: the window in packets is the buffer over the packet size, rounded down.
                self.rbuf_bytes / u64::from(self.packet_bytes)
            }
        };
        if w < 2 {
            return Err(CmtMarkovError::WindowTooSmall(w));
        }
        if w > MAX_WINDOW {
            let states = w.saturating_mul(w.saturating_add(1)) / 2;
            return Err(CmtMarkovError::WindowTooLarge {
                window: w,
                max: MAX_WINDOW,
                states,
            });
        }
        Ok(w)
    }

    /// b in packets per second (eq. 8's unit).
    pub fn b_pps(&self) -> f64 {
        self.b_mbps * 1e6 / (8.0 * f64::from(self.packet_bytes))
    }
}

/// A solved chain: throughput and the diagnostics every answer reports.
#[derive(Clone, Debug, PartialEq)]
pub struct Solution {
    /// eta of eq. 19 in packets per second.
    pub throughput_pps: f64,
    /// eta in Mbit/s (packets of `packet_bytes`).
    pub throughput_mbps: f64,
    pub window_packets: u64,
    pub loss: LossModel,
    pub states: u64,
    /// Non-zeros of Q: stored (explicit) or counted from the rules (structured).
    pub nonzeros: u64,
    /// Gauss-Seidel sweeps.
    pub iterations: u32,
    /// An upper bound on ||pi Q - pi||_1 (the structured eq. 6 path adds its truncation bound).
    pub residual: f64,
    pub solve_time_s: f64,
    /// The solver that ran (never `Auto`).
    pub solver: Solver,
    /// E[x], packets sent per round (eq. 20).
    pub mean_sent: f64,
    /// E[g], packets lost per round (eq. 21).
    pub mean_lost: f64,
    /// E[delta], seconds per round (eq. 22 read as A4).
    pub mean_duration_s: f64,
    /// Fast-retransmit halvings per round: the chain's side of the simulation's loss-event counters.
    pub fast_retransmits_per_round: f64,
    /// Timeouts per round, repeated backoff timeouts included (the simulation counts each T3 expiry).
    pub timeouts_per_round: f64,
}

/// The stationary vector with the chain it belongs to (tests and tools look inside).
pub struct Stationary {
    pub pi: Vec<f64>,
    pub iterations: u32,
    pub residual: f64,
}

/// Solve one path's chain.
pub fn solve(params: &Params, solver: Solver) -> Result<Solution, CmtMarkovError> {
    solve_full(params, solver).map(|(s, _)| s)
}

/// Solve and also return pi (indexed as [`Chain::index`]).
pub fn solve_full(
    params: &Params,
    solver: Solver,
) -> Result<(Solution, Stationary), CmtMarkovError> {
    let w = params.window()?;
    let solver = match solver {
        Solver::Auto => Solver::Structured,
        s => s,
    };
    if solver == Solver::Explicit {
        let nnz = chain::count_nonzeros(w as usize, params);
        if nnz > EXPLICIT_MAX_NONZEROS {
            return Err(CmtMarkovError::ExplicitTooLarge {
                nonzeros: nnz,
                max: EXPLICIT_MAX_NONZEROS,
            });
        }
    }
    let start = Instant::now();
    let exact = solver == Solver::Explicit;
    let ch = Chain::new(params, w as usize, exact);
    let st = match solver {
        Solver::Explicit => explicit::solve(&ch, TARGET_RESIDUAL, MAX_SWEEPS)?,
        _ => structured::solve(&ch, TARGET_RESIDUAL, MAX_SWEEPS)?,
    };
    let m = ch.moments(&st.pi);
    let solve_time_s = start.elapsed().as_secs_f64();
    let eta = (m.sent - m.lost) / m.duration_s; // eq. 19
    let sol = Solution {
        throughput_pps: eta,
        throughput_mbps: eta * 8.0 * f64::from(params.packet_bytes) / 1e6,
        window_packets: w,
        loss: params.loss,
        states: ch.n_states() as u64,
        nonzeros: chain::count_nonzeros(w as usize, params),
        iterations: st.iterations,
        residual: st.residual,
        solve_time_s,
        solver,
        mean_sent: m.sent,
        mean_lost: m.lost,
        mean_duration_s: m.duration_s,
        fast_retransmits_per_round: m.fast_retransmits,
        timeouts_per_round: m.timeouts,
    };
    Ok((sol, st))
}

/// eta for each window in `windows` (packets), everything else from `params` (its `rbuf_bytes` and
/// `window_packets` are ignored): what the static allocator of §5.2 evaluates for W = 2..a_i.
pub fn throughput_curve(params: &Params, windows: &[u64]) -> Result<Vec<Solution>, CmtMarkovError> {
    let mut checked = Vec::with_capacity(windows.len());
    for &w in windows {
        let p = Params {
            window_packets: Some(w),
            ..params.clone()
        };
        p.window()?;
        checked.push(p);
    }
    checked
        .iter()
        .map(|p| solve(p, Solver::Structured))
        .collect()
}
