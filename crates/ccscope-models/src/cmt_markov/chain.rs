//! The state space, loss probabilities, round durations and per-state transition rules of §4.3.
//!
//! Numbering (shared by both solvers, and the Gauss-Seidel order): CA states level by level,
//! (w, 1..=w) for w = 2..=W; then the backoff entry states (1, 1, tau) for tau in T ascending; then the
//! backoff states k = 2..=M; then slow start (w, w, tau) for tau = 2, 4, .. and w = 2, 4, .., tau.

use super::{LossModel, Params};

/// A state of the chain (paper 002 eqs. 12, 15, 17).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// (w, x, 1): cwnd w, x packets sent this round (x < w: the previous round lost w - x), eq. 12.
    Ca { w: usize, x: usize },
    /// (w, w, tau): slow start below threshold tau, eq. 15.
    Ss { w: usize, tau: usize },
    /// (0, k, tau): the k-th consecutive timeout; tau = 1 for k >= 2 (eq. 17, reading A5).
    Eb { k: usize, tau: usize },
}

/// P(g, x) for both loss models, with the row sums the structured solver needs.
pub(crate) enum Loss {
    /// Eq. 7, closed forms in q^k.
    Correlated {
        p: f64,
        qpow: Vec<f64>,
        omq: Vec<f64>,
        mean: Vec<f64>,
    },
    /// Eq. 6 as Pascal-triangle rows, possibly trimmed where the pmf falls below a threshold.
    Independent {
        p: f64,
        rows: Vec<BinRow>,
        max_missing: f64,
    },
}

/// One binomial row P(g, x) for g in lo..lo + pmf.len(); the rest (`missing`, tracked) was trimmed.
pub(crate) struct BinRow {
    pub lo: usize,
    pub pmf: Vec<f64>,
    cdf: Vec<f64>,
    /// Mass trimmed from this row and the rows it was built from (read by the tests).
    #[cfg_attr(not(test), allow(dead_code))]
    pub missing: f64,
}

/// Trim threshold of the structured solver's binomial rows: each trimmed entry is below it, so a row
/// of W <= 8192 loses at most 2 W 1e-22 < 2e-18 of mass (tracked exactly, added to the residual).
pub(crate) const BINOMIAL_TRIM: f64 = 1e-22;

impl Loss {
    fn new(model: LossModel, p: f64, w_max: usize, exact: bool) -> Loss {
        let ln_q = (-p).ln_1p();
        match model {
            LossModel::Correlated => {
                let qpow: Vec<f64> = (0..=w_max).map(|k| (k as f64 * ln_q).exp()).collect();
                let omq: Vec<f64> = (0..=w_max).map(|k| -(k as f64 * ln_q).exp_m1()).collect();
                // E[g | x] = sum_{g=1}^{x} g p q^{x-g} = sum_{k=1}^{x} (1 - q^k) (eq. 7 summed by parts).
                let mut mean = vec![0.0; w_max + 1];
                for x in 1..=w_max {
                    mean[x] = mean[x - 1] + omq[x];
                }
                Loss::Correlated { p, qpow, omq, mean }
            }
            LossModel::Independent => {
                let trim = if exact { 0.0 } else { BINOMIAL_TRIM };
                let q = 1.0 - p;
                let mut rows = Vec::with_capacity(w_max + 1);
                let mut lo = 0usize;
                let mut cur = vec![1.0];
                let mut missing = 0.0;
                let mut max_missing: f64 = 0.0;
                rows.push(BinRow::new(0, cur.clone(), 0.0));
                for _x in 1..=w_max {
                    // Pascal: P(g, x) = q P(g, x-1) + p P(g-1, x-1) (eq. 6 one packet at a time).
                    let mut next = Vec::with_capacity(cur.len() + 1);
                    for j in 0..=cur.len() {
                        let stay = if j < cur.len() { q * cur[j] } else { 0.0 };
                        let lost = if j > 0 { p * cur[j - 1] } else { 0.0 };
                        next.push(stay + lost);
                    }
                    let mut start = 0;
                    while next.len() - start > 1 && next[start] < trim {
                        missing += next[start];
                        start += 1;
                    }
                    while next.len() - start > 1 && next[next.len() - 1] < trim {
                        missing += next.pop().expect("non-empty");
                    }
                    lo += start;
                    cur = next.split_off(start);
                    max_missing = max_missing.max(missing);
                    rows.push(BinRow::new(lo, cur.clone(), missing));
                }
                Loss::Independent {
                    p,
                    rows,
                    max_missing,
                }
            }
        }
    }

    /// P(g, x), eq. 6 or eq. 7 (0 where trimmed).
    pub fn pmf(&self, g: usize, x: usize) -> f64 {
        match self {
            Loss::Correlated { p, qpow, .. } => {
                if g == 0 {
                    qpow[x]
                } else if g <= x {
                    p * qpow[x - g]
                } else {
                    0.0
                }
            }
            Loss::Independent { rows, .. } => {
                let r = &rows[x];
                if g < r.lo || g - r.lo >= r.pmf.len() {
                    0.0
                } else {
                    r.pmf[g - r.lo]
                }
            }
        }
    }

    /// 1 - sum_{g=0}^{gmax} P(g, x): the probability of more than `gmax` losses (trimmed mass included).
    pub fn tail(&self, gmax: usize, x: usize) -> f64 {
        match self {
            // Eq. 7: at most gmax losses <=> the first x - gmax packets all arrive.
            Loss::Correlated { omq, .. } => omq[x - gmax.min(x)],
            Loss::Independent { rows, .. } => {
                let r = &rows[x];
                if gmax < r.lo {
                    1.0
                } else {
                    1.0 - r.cdf[(gmax - r.lo).min(r.cdf.len() - 1)]
                }
            }
        }
    }

    /// E[g | x packets sent] = sum_j j P(j, x) (eq. 21 with reading A3), exact (never trimmed).
    pub fn mean(&self, x: usize) -> f64 {
        match self {
            Loss::Correlated { mean, .. } => mean[x],
            Loss::Independent { p, .. } => x as f64 * p,
        }
    }

    /// 1 - P(0, x), the chance a round of x packets loses one, without cancellation: 1 - q^x by
    /// expm1 (1 - p rounds to 1 below p = 1.1e-16), or 1 where the binomial row trimmed P(0, x).
    pub fn any_loss(&self, x: usize) -> f64 {
        match self {
            Loss::Correlated { omq, .. } => omq[x],
            Loss::Independent { p, rows, .. } => {
                if rows[x].lo > 0 {
                    1.0
                } else {
                    -(x as f64 * (-p).ln_1p()).exp_m1()
                }
            }
        }
    }

    /// The largest mass any row lost to trimming (0 for eq. 7 and for exact rows).
    pub fn max_missing(&self) -> f64 {
        match self {
            Loss::Correlated { .. } => 0.0,
            Loss::Independent { max_missing, .. } => *max_missing,
        }
    }

    pub fn p(&self) -> f64 {
        match self {
            Loss::Correlated { p, .. } | Loss::Independent { p, .. } => *p,
        }
    }
}

impl BinRow {
    fn new(lo: usize, pmf: Vec<f64>, missing: f64) -> BinRow {
        let mut acc = 0.0;
        let cdf = pmf
            .iter()
            .map(|v| {
                acc += v;
                acc
            })
            .collect();
        BinRow {
            lo,
            pmf,
            cdf,
            missing,
        }
    }
}

/// Per-state contributions to eqs. 20-22.
pub struct Moments {
    pub sent: f64,
    pub lost: f64,
    pub duration_s: f64,
    /// Rounds ending in a fast retransmit and halving (CA (w, x < w) -> (floor(w/2), .), eq. 14), per round.
    pub fast_retransmits: f64,
    /// Rounds ending in a timeout (into backoff, §4.3.1-§4.3.3, a failed backoff round included), per round.
    pub timeouts: f64,
}

/// The chain for one path: sizes, numbering, loss table and durations.
pub struct Chain {
    /// W, the window cap in packets (eq. 12's w_max).
    pub w_max: usize,
    /// M, the largest consecutive-timeout count (eq. 18).
    pub m: usize,
    /// T, the slow-start thresholds 2^0..2^floor(log2(W/2)) (eq. 16).
    pub taus: Vec<usize>,
    pub(crate) loss: Loss,
    b_pps: f64,
    d_s: f64,
    /// The backoff base RTO = 3 (d + 1/b) (eq. 10 with eq. 8 at cwnd 1, reading A8).
    pub rto_base_s: f64,
    pub rto_max_s: f64,
    pub n_ca: usize,
    ss_start: Vec<usize>,
    n_ss: usize,
}

impl Chain {
    /// `exact`: binomial rows are never trimmed (the explicit solver's chain).
    pub fn new(params: &Params, w_max: usize, exact: bool) -> Chain {
        let b_pps = params.b_pps();
        let d_s = params.d_ms / 1000.0;
        let rto_base_s = 3.0 * (d_s + 1.0 / b_pps);
        let m = eq18_m(params.rto_max_s, rto_base_s);
        let top = (w_max / 2).ilog2() as usize;
        let taus: Vec<usize> = (0..=top).map(|i| 1usize << i).collect();
        let mut ss_start = vec![0; taus.len()];
        let mut n_ss = 0;
        for (ti, start) in ss_start.iter_mut().enumerate() {
            *start = n_ss;
            n_ss += ti; // w = 2^1..=2^ti below tau = 2^ti (eq. 15)
        }
        Chain {
            w_max,
            m,
            taus,
            loss: Loss::new(params.loss, params.p, w_max, exact),
            b_pps,
            d_s,
            rto_base_s,
            rto_max_s: params.rto_max_s,
            n_ca: w_max * (w_max + 1) / 2 - 1,
            ss_start,
            n_ss,
        }
    }

    pub fn n_eb(&self) -> usize {
        self.taus.len() + self.m - 1
    }

    pub fn n_states(&self) -> usize {
        self.n_ca + self.n_eb() + self.n_ss
    }

    /// First index of CA level w (its state (w, 1)).
    #[inline]
    pub fn level_start(w: usize) -> usize {
        (w - 1) * w / 2 - 1
    }

    pub fn index(&self, s: State) -> usize {
        match s {
            State::Ca { w, x } => Chain::level_start(w) + x - 1,
            State::Eb { k: 1, tau } => self.n_ca + tau.ilog2() as usize,
            State::Eb { k, .. } => self.n_ca + self.taus.len() + k - 2,
            State::Ss { w, tau } => {
                self.n_ca + self.n_eb() + self.ss_start[tau.ilog2() as usize] + w.ilog2() as usize
                    - 1
            }
        }
    }

    pub fn state(&self, i: usize) -> State {
        if i < self.n_ca {
            // Level w holds indices (w-1)w/2 - 1 .. w(w+1)/2 - 1.
            let mut w = (((8 * (i + 1) + 1) as f64).sqrt() as usize)
                .div_ceil(2)
                .max(2);
            while Chain::level_start(w) > i {
                w -= 1;
            }
            while Chain::level_start(w + 1) <= i {
                w += 1;
            }
            return State::Ca {
                w,
                x: i - Chain::level_start(w) + 1,
            };
        }
        let j = i - self.n_ca;
        if j < self.taus.len() {
            return State::Eb {
                k: 1,
                tau: self.taus[j],
            };
        }
        if j < self.n_eb() {
            return State::Eb {
                k: j - self.taus.len() + 2,
                tau: 1,
            };
        }
        let s = j - self.n_eb();
        let ti = (1..self.taus.len())
            .find(|&t| s < self.ss_start[t] + t)
            .expect("index in range");
        State::Ss {
            w: 1 << (s - self.ss_start[ti] + 1),
            tau: self.taus[ti],
        }
    }

    /// Eq. 8: RTT = d + 1/b while the window fits the bandwidth-delay product, else w / b.
    #[inline]
    pub fn rtt(&self, w: usize) -> f64 {
        let w = w as f64;
        if self.b_pps * self.d_s >= w {
            self.d_s + 1.0 / self.b_pps
        } else {
            w / self.b_pps
        }
    }

    /// The threshold index floor(log2(w/2)) of the backoff entry (1, 1, 2^floor(log2(w/2))) (A2).
    #[inline]
    pub fn entry_tau_index(w: usize) -> usize {
        (w / 2).ilog2() as usize
    }

    /// The last loss count g after which CA state (w, x < w), x >= 4, fast-retransmits:
    /// x - g > 3 and floor(w/2) - g > 0 (eq. 14 and §4.3.1; A6 halving floor(w/2)).
    #[inline]
    pub fn fr_gmax(w: usize, x: usize) -> usize {
        (x - 4).min(w / 2 - 1)
    }

    /// The probability that a CA state's round ends in a timeout.
    #[inline]
    pub fn ca_timeout(&self, w: usize, x: usize) -> f64 {
        if x == w {
            self.loss.tail(w - 1, w) // g = w: nothing acknowledged (§4.3.1)
        } else if x < 4 {
            1.0 // fewer than four packets cannot raise four missing reports (§4.3.1)
        } else {
            self.loss.tail(Chain::fr_gmax(w, x), x)
        }
    }

    /// How long a failed backoff round k lasts: 2^k RTO, at most RTO_max (§4.3.3).
    #[inline]
    pub fn backoff_duration(&self, k: usize) -> f64 {
        (self.rto_base_s * 2f64.powi(k as i32)).min(self.rto_max_s)
    }

    /// Every transition out of `s` as (target, probability, duration in s), written straight from
    /// §4.3.1-§4.3.3: the reference the explicit solver builds from and the tests check.
    pub fn transitions(&self, s: State) -> Vec<(State, f64, f64)> {
        let l = &self.loss;
        let w_cap = self.w_max;
        let mut out = Vec::new();
        match s {
            State::Ca { w, x } if x == w => {
                let rtt = self.rtt(w);
                // Eq. 13 with A1: no loss grows the window by one, capped at W.
                let up = (w + 1).min(w_cap);
                out.push((State::Ca { w: up, x: up }, l.pmf(0, w), rtt));
                for g in 1..w {
                    out.push((State::Ca { w, x: w - g }, l.pmf(g, w), rtt)); // eq. 13, g >= 1
                }
                let tau = 1 << Chain::entry_tau_index(w);
                out.push((State::Eb { k: 1, tau }, l.pmf(w, w), 3.0 * rtt)); // g = w: timeout after one RTO (eq. 10)
            }
            State::Ca { w, x } => {
                let rtt = self.rtt(w);
                let tau = 1 << Chain::entry_tau_index(w);
                if x < 4 {
                    out.push((State::Eb { k: 1, tau }, 1.0, 3.0 * rtt));
                    return out;
                }
                let h = w / 2; // A6: floor(w/2), no 4-MTU floor
                let mut timeout = 0.0;
                for g in 0..=x {
                    if x - g > 3 && h > g {
                        out.push((State::Ca { w: h, x: h - g }, l.pmf(g, x), rtt));
                    // fast retransmit (A3: P(g, x))
                    } else {
                        timeout += l.pmf(g, x); // eq. 14
                    }
                }
                out.push((State::Eb { k: 1, tau }, timeout, 3.0 * rtt));
            }
            State::Ss { w, tau } => {
                let rtt = self.rtt(w);
                // §4.3.2: no loss doubles the window, leaving slow start once 2w reaches tau.
                let next = if tau > 2 * w {
                    State::Ss { w: 2 * w, tau }
                } else {
                    State::Ca { w: 2 * w, x: 2 * w }
                };
                out.push((next, l.pmf(0, w), rtt));
                for g in 1..w {
                    out.push((
                        State::Ca {
                            w: 2 * w - g,
                            x: 2 * (w - g),
                        },
                        l.pmf(g, w),
                        rtt,
                    ));
                }
                let t = 1 << Chain::entry_tau_index(w);
                out.push((State::Eb { k: 1, tau: t }, l.pmf(w, w), 3.0 * rtt));
            }
            State::Eb { k, tau } => {
                let p = l.p();
                // §4.3.3: one packet; success restarts at (2, 2, tau), slow start when tau >= 2 (A5).
                let ok = if k == 1 && tau >= 2 {
                    State::Ss { w: 2, tau }
                } else {
                    State::Ca { w: 2, x: 2 }
                };
                out.push((ok, 1.0 - p, self.rtt(1)));
                let k2 = (k + 1).min(self.m);
                let fail = State::Eb { k: k2, tau: 1 };
                out.push((fail, p, self.backoff_duration(k)));
            }
        }
        out
    }

    /// E[x], E[g] and E[delta] of eqs. 20-22 (A3, A4) under `pi`.
    pub fn moments(&self, pi: &[f64]) -> Moments {
        let l = &self.loss;
        let (mut sent, mut lost, mut dur) = (0.0, 0.0, 0.0);
        let (mut fast, mut timeouts) = (0.0, 0.0);
        for w in 2..=self.w_max {
            let base = Chain::level_start(w);
            let rtt = self.rtt(w);
            let (mut s, mut g, mut to, mut mass) = (0.0, 0.0, 0.0, 0.0);
            for x in 1..=w {
                let v = pi[base + x - 1];
                if v == 0.0 {
                    continue;
                }
                s += v * x as f64;
                g += v * l.mean(x);
                let t = self.ca_timeout(w, x);
                to += v * t;
                mass += v;
                if x < w {
                    fast += v * (1.0 - t); // eq. 14: every round of (w, x < w) not timing out halves
                }
            }
            sent += s;
            lost += g;
            timeouts += to;
            // A round lasts one RTT, or one RTO = 3 RTT when it ends in a timeout (eqs. 8, 10).
            dur += rtt * (mass + 2.0 * to);
        }
        for (i, &v) in pi.iter().enumerate().skip(self.n_ca) {
            match self.state(i) {
                State::Eb { k, .. } => {
                    let p = l.p();
                    sent += v;
                    lost += v * p;
                    timeouts += v * p;
                    dur += v * ((1.0 - p) * self.rtt(1) + p * self.backoff_duration(k));
                }
                State::Ss { w, .. } => {
                    sent += v * w as f64;
                    lost += v * l.mean(w);
                    timeouts += v * l.tail(w - 1, w);
                    dur += v * self.rtt(w) * (1.0 + 2.0 * l.tail(w - 1, w));
                }
                State::Ca { .. } => unreachable!("CA states come first"),
            }
        }
        Moments {
            sent,
            lost,
            duration_s: dur,
            fast_retransmits: fast,
            timeouts,
        }
    }
}

/// Eq. 18: M = max(1, floor(log2(RTO_max / RTO))).
pub fn eq18_m(rto_max_s: f64, rto_s: f64) -> usize {
    let l = (rto_max_s / rto_s).log2().floor();
    if l >= 1.0 {
        l as usize
    } else {
        1
    }
}

/// Non-zeros of Q counted from the rules, without building anything (every P(g, x) > 0 for p in (0, 1)).
pub fn count_nonzeros(w_max: usize, params: &Params) -> u64 {
    let mut nnz: u64 = 0;
    for w in 2..=w_max {
        nnz += w as u64 + 1; // (w, w): g = 0..w
        for x in 1..w {
            nnz += if x < 4 {
                1
            } else {
                Chain::fr_gmax(w, x) as u64 + 2
            };
        }
    }
    let b_pps = params.b_pps();
    let rto = 3.0 * (params.d_ms / 1000.0 + 1.0 / b_pps);
    let m = eq18_m(params.rto_max_s, rto) as u64;
    let top = (w_max / 2).ilog2() as u64;
    let n_taus = top + 1;
    nnz += 2 * (n_taus + m - 1); // backoff: success and failure
    for ti in 1..=top {
        for i in 1..=ti {
            nnz += (1u64 << i) + 1; // slow start (w, w, tau): g = 0..w
        }
    }
    nnz
}

impl Chain {
    /// The Gauss-Seidel order of both solvers: levels w = 2..=W, in each (w, w) first and then
    /// (w, 1..w), then backoff and slow start in index order. Updating (w, w) before the states it
    /// feeds leaves the main cycle (w, w) -> (w, x) -> timeout -> (2, 2) -> .. -> (w, w) a single edge
    /// against the order; sweeping x = 1..=w instead left two, and Gauss-Seidel then oscillated
    /// (W = 3, eq. 6, p = 1e-4: residual 0.79 after 20,000 sweeps).
    pub fn sweep_order(&self) -> Vec<usize> {
        let mut order = Vec::with_capacity(self.n_states());
        for w in 2..=self.w_max {
            let b = Chain::level_start(w);
            order.push(b + w - 1);
            order.extend(b..b + w - 1);
        }
        order.extend(self.n_ca..self.n_states());
        order
    }

    /// The Gauss-Seidel start: equal mass on every backoff and slow-start state and on (2, 2, 1), where
    /// every recovery re-enters congestion avoidance (a point mass would be wiped by the first sweep).
    pub fn initial(&self) -> Vec<f64> {
        let n = self.n_states();
        let mut pi = vec![0.0; n];
        let small = n - self.n_ca + 1;
        let v = 1.0 / small as f64;
        pi[self.index(State::Ca { w: 2, x: 2 })] = v;
        pi[self.n_ca..].iter_mut().for_each(|x| *x = v);
        pi
    }
}
