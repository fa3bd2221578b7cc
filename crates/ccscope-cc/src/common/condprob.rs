//! The on-line conditional-probability table of paper 003 (§3.2.1, Appendix A.2) and the window
//! integral that feeds it (specs/003-mtsc.md §2.3 [D]).
//!
//! `CondProbOnline` is the Rust twin of `ccscope.stats.CondProbOnline`: the same Welford running
//! statistics, the same level boundaries and the same counts, so a table computed here equals the
//! Python one on the same V1, V2 series. Only the mean +- k sigma partition exists on-line: the uniform
//! quantile alternative (A.1) needs the whole series, so it stays off-line (Python) only.
//!
//! `WindowIntegral` turns per-epoch reports (gamma over a receive-time span) into A.2's V1, V2: the
//! integral of gamma over each window, with the window clock running on the receive-time axis.

use std::collections::VecDeque;

use ccscope_core::Time;

/// Number of levels (paper 003 §2.3: m = 8).
pub const M: usize = 8;

/// Running mean and population standard deviation, O(1) per value (Welford 1962): A.2's E(X^2) - E(X)^2
/// without its cancellation; the same operations as the Python `_Running`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Running {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Running {
    pub fn push(&mut self, v: f64) {
        self.n += 1;
        let d = v - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (v - self.mean);
    }
    pub fn count(&self) -> u64 {
        self.n
    }
    pub fn mean(&self) -> f64 {
        self.mean
    }
    pub fn sd(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            (self.m2 / self.n as f64).sqrt()
        }
    }
}

/// L(v) for mean `mu` and deviation `sd`: 1 plus the number of the boundaries mu + j sd (j = -3..3) at or
/// below v (Appendix A.1, intervals closed below). With sd = 0 every boundary is mu: 8 at or above it, 1 below.
pub fn sigma_level(v: f64, mu: f64, sd: f64) -> usize {
    let mut l = 1;
    for j in -3..=3 {
        if mu + sd * j as f64 <= v {
            l += 1;
        }
    }
    l
}

/// CondProb[8][9] maintained block by block (paper 003 Appendix A.2): counts[l-1][l'-1] blocks with
/// L1 = l and L2 = l', counts[l-1][8] = h_l.
#[derive(Clone, Debug, PartialEq)]
pub struct CondProbOnline {
    pub counts: [[u64; M + 1]; M],
    s1: Running,
    s2: Running,
    /// (mu1, sigma1, mu2, sigma2) held fixed instead of the running statistics (training-time mode).
    frozen: Option<[f64; 4]>,
    /// L1 of the current block, between its T1 and T2 alarms.
    l1: Option<usize>,
    pub blocks: u64,
}

impl Default for CondProbOnline {
    fn default() -> Self {
        CondProbOnline {
            counts: [[0; M + 1]; M],
            s1: Running::default(),
            s2: Running::default(),
            frozen: None,
            l1: None,
            blocks: 0,
        }
    }
}

impl CondProbOnline {
    /// A table whose statistics stay at (mu1, sigma1, mu2, sigma2), starting from `counts` (a table
    /// loaded from another run, or trained and then frozen).
    pub fn with_frozen(counts: [[u64; M + 1]; M], mu: [f64; 2], sigma: [f64; 2]) -> Self {
        CondProbOnline {
            counts,
            frozen: Some([mu[0], sigma[0], mu[1], sigma[1]]),
            ..Default::default()
        }
    }

    /// (mu_k, sigma_k) in force: the frozen values or the running ones.
    pub fn stats(&self, k: usize) -> (f64, f64) {
        debug_assert!(k == 1 || k == 2);
        if let Some(f) = self.frozen {
            return (f[2 * k - 2], f[2 * k - 1]);
        }
        let s = if k == 1 { &self.s1 } else { &self.s2 };
        (s.mean(), s.sd())
    }

    /// L_k(v) under the current mu_k, sigma_k (what SAC uses for S_t, §3.2.2).
    pub fn level(&self, v: f64, k: usize) -> usize {
        let (mu, sd) = self.stats(k);
        sigma_level(v, mu, sd)
    }

    /// Freeze mu and sigma at their current values (the spec's training-time mode).
    pub fn freeze_stats(&mut self) {
        if self.frozen.is_none() {
            let (m1, s1) = self.stats(1);
            let (m2, s2) = self.stats(2);
            self.frozen = Some([m1, s1, m2, s2]);
        }
    }

    pub fn is_frozen(&self) -> bool {
        self.frozen.is_some()
    }

    // Appendix A.2 at an alarm: update mu_k, sigma_k with V_k first (unless frozen), then classify V_k.
    fn observe(&mut self, v: f64, k: usize) -> usize {
        if self.frozen.is_none() {
            if k == 1 { &mut self.s1 } else { &mut self.s2 }.push(v);
        }
        self.level(v, k)
    }

    /// The T1 alarm: update mu_1, sigma_1 with V1, classify it, add 1 to h_l (A.2); returns l. A second
    /// T1 alarm without a T2 one replaces the pending block (the clock alternates, so it cannot happen).
    pub fn end_t1(&mut self, v1: f64) -> usize {
        debug_assert!(self.l1.is_none(), "T1 alarm twice without a T2 alarm");
        let l = self.observe(v1, 1);
        self.counts[l - 1][M] += 1;
        self.l1 = Some(l);
        l
    }

    /// The T2 alarm: update mu_2, sigma_2 with V2, classify it, add 1 to CondProb[l][l'] (A.2); returns
    /// l', or `None` (nothing counted) without a pending T1.
    pub fn end_t2(&mut self, v2: f64) -> Option<usize> {
        let l1 = self.l1.take()?;
        let l2 = self.observe(v2, 2);
        self.counts[l1 - 1][l2 - 1] += 1;
        self.blocks += 1;
        Some(l2)
    }

    /// One whole block: `end_t1` then `end_t2`.
    pub fn update(&mut self, v1: f64, v2: f64) -> (usize, usize) {
        let l1 = self.end_t1(v1);
        (l1, self.end_t2(v2).unwrap_or(0))
    }

    /// E(L2 | L1 = l) = sum_l' l' CondProb[l][l'] / h_l (§3.2.2 step 2); `None` when h_l = 0.
    pub fn expected_next(&self, l: usize) -> Option<f64> {
        let row = &self.counts[l - 1];
        // h_l counts a pending T1 too; the expectation is over complete blocks only.
        let complete: u64 = row[..M].iter().sum();
        if complete == 0 {
            return None;
        }
        let weighted: u64 = row[..M]
            .iter()
            .enumerate()
            .map(|(j, &c)| (j as u64 + 1) * c)
            .sum();
        Some(weighted as f64 / complete as f64)
    }

    /// The counts of complete blocks (a pending T1 without its T2 is left out of h_l).
    pub fn complete_counts(&self) -> [[u64; M + 1]; M] {
        let mut c = self.counts;
        if let Some(l) = self.l1 {
            c[l - 1][M] -= 1;
        }
        c
    }
}

/// Which window of A.2's alternating clock is open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    T1,
    T2,
}

/// A closed window: which one and its V (the integral of the reports over it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Closed {
    pub window: Window,
    pub v: f64,
}

/// A.2's V1, V2 as the integral of the reported gamma over each window (spec §2.3 [D]): a report is
/// gamma over a receive-time span [a, b); spans arrive in order and each window collects
/// sum gamma x |span inside the window| (in gamma's unit x seconds). The clock starts at the first span's
/// start and alternates T1, T2 on the receive-time axis; a window closes once a span reaches its end.
#[derive(Clone, Debug)]
pub struct WindowIntegral {
    t1_ns: u64,
    t2_ns: u64,
    /// Start of the open window; `None` before the first report.
    start: Option<Time>,
    window: Window,
    v: f64,
}

impl WindowIntegral {
    pub fn new(t1_ns: u64, t2_ns: u64) -> Self {
        WindowIntegral {
            t1_ns: t1_ns.max(1),
            t2_ns: t2_ns.max(1),
            start: None,
            window: Window::T1,
            v: 0.0,
        }
    }

    fn len(&self) -> u64 {
        match self.window {
            Window::T1 => self.t1_ns,
            Window::T2 => self.t2_ns,
        }
    }

    /// Add gamma over [a, b); `closed` gets every window that the span completes, in order.
    pub fn add(&mut self, gamma: f64, a: Time, b: Time, closed: &mut Vec<Closed>) {
        if b <= a {
            return;
        }
        let mut start = *self.start.get_or_insert(a);
        let mut from = a.max(start);
        loop {
            let end = Time(start.0.saturating_add(self.len()));
            if b < end {
                break;
            }
            if end > from {
                self.v += gamma * (end.0 - from.0) as f64 * 1e-9;
            }
            closed.push(Closed {
                window: self.window,
                v: self.v,
            });
            self.v = 0.0;
            self.window = if self.window == Window::T1 {
                Window::T2
            } else {
                Window::T1
            };
            start = end;
            from = from.max(end);
        }
        self.start = Some(start);
        if b > from {
            self.v += gamma * (b.0 - from.0) as f64 * 1e-9;
        }
    }
}

/// S_t of §3.2.2: the integral of the reports over the last T1 before the latest reported time (spec §2.3,
/// §2.4 [D]: a sliding window over the feedback integral). O(1) amortised per report.
#[derive(Clone, Debug)]
pub struct SlidingIntegral {
    span_ns: u64,
    /// (gamma, a, b) of the reports that reach into the window.
    reports: VecDeque<(f64, Time, Time)>,
    /// Sum of gamma x |span| over `reports`, in full.
    total: f64,
    horizon: Time,
}

impl SlidingIntegral {
    pub fn new(span_ns: u64) -> Self {
        SlidingIntegral {
            span_ns: span_ns.max(1),
            reports: VecDeque::new(),
            total: 0.0,
            horizon: Time::ZERO,
        }
    }

    pub fn add(&mut self, gamma: f64, a: Time, b: Time) {
        if b <= a {
            return;
        }
        self.total += gamma * (b.0 - a.0) as f64 * 1e-9;
        self.reports.push_back((gamma, a, b));
        self.horizon = self.horizon.max(b);
        let from = Time(self.horizon.0.saturating_sub(self.span_ns));
        while let Some(&(g, a0, b0)) = self.reports.front() {
            if b0 > from {
                break;
            }
            self.total -= g * (b0.0 - a0.0) as f64 * 1e-9;
            self.reports.pop_front();
        }
        if self.reports.is_empty() {
            self.total = 0.0;
        }
    }

    /// The integral over [horizon - T1, horizon]; `None` until reports cover a whole T1.
    pub fn value(&self) -> Option<f64> {
        let &(g, a0, _) = self.reports.front()?;
        let from = Time(self.horizon.0.checked_sub(self.span_ns)?);
        if a0 > from {
            return None;
        }
        Some((self.total - g * (from.0 - a0.0) as f64 * 1e-9).max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::assert_close;

    const V1: [f64; 20] = [
        10.0, 12.0, 9.0, 11.0, 30.0, 10.5, 8.0, 2.0, 11.5, 10.0, 13.0, 9.5, 40.0, 10.0, 7.5, 10.25,
        12.5, 0.0, 11.0, 9.0,
    ];
    const V2: [f64; 20] = [
        11.0, 12.5, 8.0, 10.0, 25.0, 11.0, 7.0, 3.0, 12.0, 9.5, 14.0, 9.0, 35.0, 10.5, 6.0, 10.0,
        13.0, 1.0, 10.5, 9.5,
    ];

    #[test]
    fn online_table_equals_the_python_reference_on_a_hand_made_series() {
        // Expected values from python: c = ccscope.stats.condprob.CondProbOnline();
        // [c.update(a, b) for a, b in zip(V1, V2)]; c.counts.tolist(); c.table().mu, .sigma;
        // [c.expected_next(l) for l in 1..8]; c.level(10.0), c.level(15.0), c.level(-5.0).
        let mut c = CondProbOnline::default();
        let levels: Vec<(usize, usize)> = V1.iter().zip(V2).map(|(&a, b)| c.update(a, b)).collect();
        let python_levels = [
            (8, 8),
            (6, 6),
            (3, 3),
            (5, 4),
            (6, 6),
            (4, 4),
            (4, 4),
            (3, 3),
            (4, 5),
            (4, 4),
            (5, 5),
            (4, 4),
            (7, 7),
            (4, 4),
            (4, 4),
            (4, 4),
            (4, 5),
            (3, 3),
            (4, 4),
            (4, 4),
        ];
        assert_eq!(levels, python_levels);
        let python_counts = [
            [0, 0, 0, 0, 0, 0, 0, 0, 0],
            [0, 0, 0, 0, 0, 0, 0, 0, 0],
            [0, 0, 3, 0, 0, 0, 0, 0, 3],
            [0, 0, 0, 9, 2, 0, 0, 0, 11],
            [0, 0, 0, 1, 1, 0, 0, 0, 2],
            [0, 0, 0, 0, 0, 2, 0, 0, 2],
            [0, 0, 0, 0, 0, 0, 1, 0, 1],
            [0, 0, 0, 0, 0, 0, 0, 1, 1],
        ];
        assert_eq!(c.counts, python_counts);
        assert_eq!(c.stats(1), (11.8375, 8.463995436553589));
        assert_eq!(c.stats(2), (11.375000000000002, 7.10787415476667));
        let python_expected = [
            None,
            None,
            Some(3.0),
            Some(4.181818181818182),
            Some(4.5),
            Some(6.0),
            Some(7.0),
            Some(8.0),
        ];
        assert_eq!(
            (1..=M).map(|l| c.expected_next(l)).collect::<Vec<_>>(),
            python_expected
        );
        assert_eq!(
            (c.level(10.0, 1), c.level(15.0, 1), c.level(-5.0, 1)),
            (4, 5, 3)
        );
        assert_eq!(c.blocks, 20);
    }

    #[test]
    fn levels_are_closed_below_and_a_zero_sigma_splits_at_the_mean() {
        // Appendix A.1: [mu + j sigma, mu + (j+1) sigma) is level j + 5.
        assert_eq!(sigma_level(10.0, 10.0, 1.0), 5);
        assert_eq!(sigma_level(9.999, 10.0, 1.0), 4);
        assert_eq!(sigma_level(13.0, 10.0, 1.0), 8);
        assert_eq!(sigma_level(6.999, 10.0, 1.0), 1);
        assert_eq!(sigma_level(7.0, 10.0, 1.0), 2);
        assert_eq!(
            (sigma_level(5.0, 5.0, 0.0), sigma_level(4.0, 5.0, 0.0)),
            (8, 1)
        );
    }

    #[test]
    fn frozen_statistics_never_move_and_earlier_blocks_are_not_reclassified() {
        let mut c = CondProbOnline::with_frozen([[0; M + 1]; M], [10.0, 10.0], [1.0, 2.0]);
        assert_eq!(c.update(10.5, 6.0), (5, 3));
        assert_eq!(c.update(100.0, 100.0), (8, 8));
        assert_eq!(c.stats(1), (10.0, 1.0));
        assert_eq!(c.counts[4][2], 1);
        assert_eq!(c.counts[7][7], 1);
        assert_eq!(c.expected_next(5), Some(3.0));
        // Freezing a running table keeps its statistics from then on.
        let mut r = CondProbOnline::default();
        r.update(1.0, 1.0);
        r.update(3.0, 5.0);
        r.freeze_stats();
        r.update(1000.0, 1000.0);
        assert_eq!(r.stats(1), (2.0, 1.0));
        assert_eq!(r.stats(2), (3.0, 2.0));
    }

    #[test]
    fn a_pending_t1_counts_in_h_but_not_in_the_expectation() {
        let mut c = CondProbOnline::with_frozen([[0; M + 1]; M], [0.0, 0.0], [1.0, 1.0]);
        c.update(0.5, 2.5);
        assert_eq!(c.end_t1(0.5), 5);
        assert_eq!(c.counts[4][M], 2);
        assert_eq!(c.complete_counts()[4][M], 1);
        assert_eq!(c.expected_next(5), Some(7.0));
        assert_eq!(c.end_t2(-0.5), Some(4));
        assert_eq!(c.expected_next(5), Some(5.5));
        assert_eq!(
            c.end_t2(1.0),
            None,
            "a T2 alarm without a T1 counts nothing"
        );
    }

    #[test]
    fn window_integral_splits_a_span_across_the_t1_t2_boundaries() {
        // T1 = T2 = 1 s from t = 0.5 s: windows [0.5, 1.5), [1.5, 2.5), [2.5, 3.5).
        let mut w = WindowIntegral::new(1_000_000_000, 1_000_000_000);
        let mut closed = Vec::new();
        let s = |x: f64| Time::from_secs_f64(x);
        w.add(10.0, s(0.5), s(1.0), &mut closed);
        assert!(closed.is_empty());
        // 2 per s over [1.0, 3.0): 0.5 s in the first window, 1 s in the second, 0.5 s in the third.
        w.add(2.0, s(1.0), s(3.0), &mut closed);
        assert_eq!(closed.len(), 2);
        assert_eq!(closed[0].window, Window::T1);
        assert_close(closed[0].v, 10.0 * 0.5 + 2.0 * 0.5);
        assert_eq!(closed[1].window, Window::T2);
        assert_close(closed[1].v, 2.0);
        closed.clear();
        w.add(4.0, s(3.0), s(3.5), &mut closed);
        assert_eq!(closed.len(), 1);
        assert_eq!(closed[0].window, Window::T1);
        assert_close(closed[0].v, 2.0 * 0.5 + 4.0 * 0.5);
    }

    #[test]
    fn window_integral_is_independent_of_how_the_reports_are_cut() {
        // The same constant gamma in 1 span or in 7 gives the same V (spec §2.3 [D]).
        let s = |x: f64| Time::from_secs_f64(x);
        let mut one = WindowIntegral::new(2_000_000_000, 2_000_000_000);
        let mut many = WindowIntegral::new(2_000_000_000, 2_000_000_000);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        one.add(3.0, s(0.0), s(4.0), &mut a);
        let cuts = [0.0, 0.3, 0.9, 1.7, 2.0, 2.2, 3.1, 4.0];
        for w in cuts.windows(2) {
            many.add(3.0, s(w[0]), s(w[1]), &mut b);
        }
        assert_eq!(a.len(), 2);
        assert_eq!(b.len(), 2);
        for (x, y) in a.iter().zip(&b) {
            assert_close(x.v, 6.0);
            assert_close(y.v, 6.0);
        }
    }

    #[test]
    fn sliding_integral_covers_exactly_the_last_t1() {
        let s = |x: f64| Time::from_secs_f64(x);
        let mut w = SlidingIntegral::new(2_000_000_000);
        w.add(1.0, s(0.0), s(1.0));
        assert_eq!(w.value(), None, "less than T1 reported");
        w.add(5.0, s(1.0), s(2.5));
        // [0.5, 2.5]: 1 x 0.5 + 5 x 1.5
        assert_close(w.value().unwrap(), 8.0);
        w.add(2.0, s(2.5), s(4.0));
        // [2.0, 4.0]: 5 x 0.5 + 2 x 1.5; the first report has left the window.
        assert_close(w.value().unwrap(), 5.5);
        assert_eq!(w.reports.len(), 2);
    }
}
