//! The matrix-free solver: Gauss-Seidel over cwnd levels with each level's inflow pulled in O(w).
//!
//! Why Gauss-Seidel in ascending w: every CA transition either climbs the ladder (w, w) -> (w+1, w+1),
//! stays in its level ((w, w) -> (w, x < w)) or halves (level w -> floor(w/2)); backoff and slow start
//! re-enter at low levels. Sweeping levels upward with the newest values carries a whole growth phase
//! (up to W rounds, where power iteration would need W sweeps) in one sweep; only the halving inflow
//! from levels 2w and 2w + 1 lags a sweep, and a sawtooth halves once per cycle, so the error contracts
//! like the embedded cycle-to-cycle chain instead of like the round chain (measured: 12-25 sweeps to a
//! residual of 1e-12 from W = 85 to W = 2666, docs/performance.md).
//! The (W, W) self-loop and the backoff self-loop are solved exactly (divide by 1 - Q(j, j), taken as
//! the row's leaving mass, not by subtraction, so a vanishing p does not give 0/0).
//!
//! The halving inflow into (w', w' - g) from level w in {2w', 2w' + 1} is sum_x pi(w, x) P(g, x) over
//! g + 4 <= x <= w - 1 (eq. 14's fast-retransmit condition with A3, A6):
//! - eq. 7 (correlated): P(g, x) = p q^(x-g) (q^x at g = 0), so the sums are the suffix recursion
//!   T(g) = pi(w, g + 4) q^4 + q T(g + 1), exact in O(w) per level;
//! - eq. 6 (binomial): rows P(., x) are built by Pascal's rule and trimmed where an entry falls below
//!   1e-22; the trimmed mass of each row is tracked, and a trimmed row sends it to the timeout instead
//!   of a fast retransmit, so the solved matrix Q~ is stochastic with ||Q(i, .) - Q~(i, .)||_1 <= 2 m,
//!   m the largest trimmed mass; ||pi Q - pi||_1 <= ||pi Q~ - pi||_1 + 2 m is what is reported.
//!
//! Levels that hold exactly 0.0 and receive exactly 0.0 are skipped (at p = 1e-2 the ladder mass
//! underflows near w = 380, so a 4 MB chain sweeps a few hundred levels); skipping changes no value.

use super::chain::{Chain, Loss, State};
use super::{CmtMarkovError, Solver, Stationary};

struct Kernel<'a> {
    ch: &'a Chain,
    /// Inflows into CA states from backoff and slow start: (CA index, source index, probability), by level.
    side: Vec<(usize, usize, f64)>,
    side_ptr: Vec<usize>,
    /// For each backoff/slow-start state (offset from n_ca): inflows from other such states.
    small_in: Vec<Vec<(usize, f64)>>,
    small_self: Vec<f64>,
    /// The threshold index of a backoff entry state (1, 1, tau), which collects CA timeouts.
    small_entry: Vec<Option<usize>>,
    /// Whether a level may hold non-zero mass.
    nz: Vec<bool>,
}

impl<'a> Kernel<'a> {
    fn new(ch: &'a Chain, pi: &[f64]) -> Kernel<'a> {
        let n = ch.n_states();
        let n_small = n - ch.n_ca;
        let mut side = Vec::new();
        let mut small_in = vec![Vec::new(); n_small];
        let mut small_self = vec![0.0; n_small];
        let mut small_entry = vec![None; n_small];
        for i in ch.n_ca..n {
            for (t, prob, _) in ch.transitions(ch.state(i)) {
                let j = ch.index(t);
                if j < ch.n_ca {
                    side.push((j, i, prob));
                } else if j == i {
                    small_self[j - ch.n_ca] = prob;
                } else {
                    small_in[j - ch.n_ca].push((i, prob));
                }
            }
            if let State::Eb { k: 1, tau } = ch.state(i) {
                small_entry[i - ch.n_ca] = Some(tau.ilog2() as usize);
            }
        }
        side.sort_by_key(|e| e.0);
        let mut side_ptr = vec![0; ch.w_max + 2];
        for (w, ptr) in side_ptr.iter_mut().enumerate().skip(2) {
            let end = if w <= ch.w_max {
                Chain::level_start(w)
            } else {
                ch.n_ca
            };
            *ptr = side.partition_point(|e| e.0 < end);
        }
        let mut k = Kernel {
            ch,
            side,
            side_ptr,
            small_in,
            small_self,
            small_entry,
            nz: vec![false; ch.w_max + 2],
        };
        for w in 2..=ch.w_max {
            k.nz[w] = level(pi, w).iter().any(|&v| v != 0.0);
        }
        k
    }

    /// Whether level `w` is all zero and receives nothing (then its update is exactly zero).
    fn dead(&self, w: usize, pi: &[f64]) -> bool {
        let w_cap = self.ch.w_max;
        if self.nz[w] || (w > 2 && pi[Chain::level_start(w) - 1] != 0.0) {
            return false;
        }
        if (2 * w..=(2 * w + 1).min(w_cap)).any(|s| self.nz[s]) {
            return false;
        }
        self.side[self.side_ptr[w]..self.side_ptr[w + 1]]
            .iter()
            .all(|&(_, i, _)| pi[i] == 0.0)
    }

    /// Inflow into level `w2` (x' = 1..=w2, into `out`) from the current `pi`. With `gs`, the in-level
    /// pull from (w2, w2) uses the value just computed and the self-loop is divided out (Gauss-Seidel);
    /// without it, `out` is (pi Q) restricted to the level.
    fn level(&self, w2: usize, pi: &[f64], gs: bool, h: &mut Vec<f64>, out: &mut [f64]) {
        let ch = self.ch;
        let l = &ch.loss;
        let w_cap = ch.w_max;
        h.clear();
        h.resize(w2, 0.0);
        for w in 2 * w2..=(2 * w2 + 1).min(w_cap) {
            if !self.nz[w] || w < 5 {
                continue;
            }
            let src = level(pi, w);
            match l {
                Loss::Correlated { p, qpow, .. } => {
                    // T(g) = sum_{x=g+4}^{w-1} pi(w, x) q^(x-g), from g = w - 5 down (eq. 7).
                    let (q, q4) = (qpow[1], qpow[4]);
                    let mut t = 0.0;
                    for g in (0..=w - 5).rev() {
                        t = src[g + 4 - 1] * q4 + q * t;
                        if g < w2 {
                            h[g] += if g == 0 { t } else { p * t };
                        }
                    }
                }
                Loss::Independent { rows, .. } => {
                    for x in 4..w {
                        let v = src[x - 1];
                        if v == 0.0 {
                            continue;
                        }
                        let r = &rows[x];
                        let gmax = Chain::fr_gmax(w, x);
                        if gmax < r.lo {
                            continue;
                        }
                        let n = (gmax - r.lo + 1).min(r.pmf.len());
                        for (hg, pg) in h[r.lo..r.lo + n].iter_mut().zip(&r.pmf[..n]) {
                            *hg += v * pg;
                        }
                    }
                }
            }
        }
        out.iter_mut().for_each(|v| *v = 0.0);
        let base = Chain::level_start(w2);
        for &(j, i, prob) in &self.side[self.side_ptr[w2]..self.side_ptr[w2 + 1]] {
            out[j - base] += pi[i] * prob;
        }
        // (w2, w2): the ladder from (w2 - 1, w2 - 1) with no loss (eq. 13, A1), halving with g = 0.
        let mut top = out[w2 - 1] + h[0];
        if w2 > 2 {
            top += pi[base - 1] * l.pmf(0, w2 - 1);
        }
        let own = pi[base + w2 - 1];
        if w2 == w_cap {
            let selfp = l.pmf(0, w_cap); // (W, W) stays at the cap
            top = if gs {
                // 1 - Q((W, W), (W, W)) without cancellation (it is 0 in floating point once 1 - p is 1).
                top / l.any_loss(w_cap)
            } else {
                top + selfp * own
            };
        }
        out[w2 - 1] = top;
        let pww = if gs { top } else { own };
        // (w2, w2 - g): g losses in a full round (eq. 13) plus the halving inflow.
        for g in 1..w2 {
            out[w2 - g - 1] += pww * l.pmf(g, w2) + h[g];
        }
    }

    /// Timeout mass leaving level w (into the backoff entry state of its threshold, A2).
    fn level_timeouts(&self, w: usize, vals: &[f64]) -> f64 {
        vals.iter()
            .enumerate()
            .filter(|(_, &v)| v != 0.0)
            .map(|(i, &v)| v * self.ch.ca_timeout(w, i + 1))
            .sum()
    }

    /// The inflow into backoff/slow-start state `j` (offset from n_ca), self-loop excluded.
    fn small_inflow(&self, j: usize, pi: &[f64], acc: &[f64]) -> f64 {
        let mut v = self.small_entry[j].map_or(0.0, |ti| acc[ti]);
        for &(i, prob) in &self.small_in[j] {
            v += pi[i] * prob;
        }
        v
    }

    /// One pass over the levels, then backoff and slow start. With `gs` it is a Gauss-Seidel sweep in
    /// place, normalised, returning the L1 change; without, `pi` is left as it is and the pass returns
    /// ||pi Q~ - pi||_1 (Q~ = Q for eq. 7 and for untrimmed rows).
    fn pass(&mut self, pi: &mut [f64], gs: bool, h: &mut Vec<f64>, buf: &mut Vec<f64>) -> f64 {
        let ch = self.ch;
        let mut acc = vec![0.0; ch.taus.len()];
        let mut dist = 0.0;
        for w in 2..=ch.w_max {
            if self.dead(w, pi) {
                continue;
            }
            buf.resize(w, 0.0);
            self.level(w, pi, gs, h, buf);
            let base = Chain::level_start(w);
            let cur = &mut pi[base..base + w];
            dist += cur
                .iter()
                .zip(buf.iter())
                .map(|(a, b)| (a - b).abs())
                .sum::<f64>();
            if gs {
                cur.copy_from_slice(buf);
                self.nz[w] = buf.iter().any(|&v| v != 0.0);
            }
            // Timeouts leave a level with the values this pass gives it (the new ones in a sweep).
            acc[Chain::entry_tau_index(w)] += self.level_timeouts(w, cur);
        }
        for j in 0..ch.n_states() - ch.n_ca {
            let own = pi[ch.n_ca + j];
            let inflow = self.small_inflow(j, pi, &acc);
            let v = if gs {
                inflow / (1.0 - self.small_self[j])
            } else {
                inflow + self.small_self[j] * own
            };
            dist += (v - own).abs();
            if gs {
                pi[ch.n_ca + j] = v;
            }
        }
        if gs {
            let total: f64 = pi.iter().sum();
            pi.iter_mut().for_each(|v| *v /= total);
        }
        dist
    }
}

fn level(pi: &[f64], w: usize) -> &[f64] {
    let b = Chain::level_start(w);
    &pi[b..b + w]
}

/// Solve pi = pi Q without building Q; the residual reported bounds ||pi Q - pi||_1.
pub fn solve(ch: &Chain, tol: f64, max_sweeps: u32) -> Result<Stationary, CmtMarkovError> {
    let mut pi = ch.initial();
    let mut k = Kernel::new(ch, &pi);
    let (mut h, mut buf) = (Vec::new(), Vec::new());
    let bound = 2.0 * ch.loss.max_missing();
    let mut last = f64::INFINITY;
    for sweep in 1..=max_sweeps {
        let change = k.pass(&mut pi, true, &mut h, &mut buf);
        // The residual costs a sweep: check it once the iterates have nearly stopped moving.
        if change <= tol || sweep == max_sweeps {
            last = k.pass(&mut pi, false, &mut h, &mut buf) + bound;
            if last <= tol {
                return Ok(Stationary {
                    pi,
                    iterations: sweep,
                    residual: last,
                });
            }
        }
    }
    Err(CmtMarkovError::NotConverged {
        solver: Solver::Structured,
        sweeps: max_sweeps,
        residual: last,
        target: tol,
    })
}
