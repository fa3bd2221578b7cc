//! The exact least (or largest) sample over a sliding time window, as Copa's reference keeps its RTT
//! extremes (genericCC rtt-window.cc `ExtremeWindow`): a deque of the samples that can still become
//! the extreme, monotone from the front, so the front is the answer. Unlike `Minmax` (three samples,
//! which can overstate a minimum once its best samples expire) nothing in the window is forgotten.
//!
//! Times are f64 (Copa passes milliseconds, as genericCC keeps them) so that a sample exactly at the
//! window's edge expires exactly when the reference's double arithmetic expires it.
//!
//! The deque keeps its capacity: it allocates only when the window holds more candidates than ever
//! before, not per sample once warmed up.

use std::collections::VecDeque;

/// A windowed minimum or maximum over `(time, value)` samples.
#[derive(Clone, Debug)]
pub struct ExtremeWindow {
    find_min: bool,
    vals: VecDeque<(f64, f64)>,
}

impl ExtremeWindow {
    pub fn min() -> Self {
        ExtremeWindow {
            find_min: true,
            vals: VecDeque::new(),
        }
    }

    pub fn max() -> Self {
        ExtremeWindow {
            find_min: false,
            vals: VecDeque::new(),
        }
    }

    /// Add `v` at time `t` and return the extreme of the samples no older than `win` (the newest
    /// sample always stays, as genericCC keeps its last one; an infinite `win` keeps all).
    pub fn update(&mut self, win: f64, t: f64, v: f64) -> f64 {
        // rtt-window.cc new_sample: drop the samples the new one dominates; an equal older sample is
        // dominated too (same value, expires sooner), so a steady RTT keeps one entry, not one per ACK.
        while let Some(&(_, back)) = self.vals.back() {
            let dominated = if self.find_min { back >= v } else { back <= v };
            if !dominated {
                break;
            }
            self.vals.pop_back();
        }
        self.vals.push_back((t, v));
        // rtt-window.cc clear_old_hist: expire samples older than now - window, never the last one.
        while self.vals.len() > 1 && self.vals.front().is_some_and(|&(ts, _)| ts < t - win) {
            self.vals.pop_front();
        }
        self.get()
    }

    /// The current extreme (NaN before any sample).
    pub fn get(&self) -> f64 {
        self.vals.front().map_or(f64::NAN, |&(_, v)| v)
    }

    pub fn is_empty(&self) -> bool {
        self.vals.is_empty()
    }

    pub fn clear(&mut self) {
        self.vals.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_minimum_is_exact_where_a_three_sample_filter_forgets_a_smaller_sample() {
        let mut w = ExtremeWindow::min();
        let mut nichols = crate::common::Minmax::default();
        nichols.reset(0, 10.0);
        for (t, v) in [(60, 30.0), (70, 40.0), (80, 50.0), (150, 90.0), (165, 95.0)] {
            nichols.running_min(100, t, v);
        }
        // Minmax kept 40, 90 and 95; once 40 expires it answers 90 although 50 (t=80) is in the window.
        assert_eq!(nichols.running_min(100, 180, 99.0), 90.0);
        let win = 100.0;
        // 10 at t=0, then rising samples; at t=150 the window is [50, 150]: its least is 30 (t=60).
        assert_eq!(w.update(win, 0.0, 10.0), 10.0);
        assert_eq!(w.update(win, 60.0, 30.0), 10.0);
        assert_eq!(w.update(win, 70.0, 40.0), 10.0);
        assert_eq!(w.update(win, 80.0, 50.0), 10.0);
        assert_eq!(w.update(win, 150.0, 90.0), 30.0);
        // t=165: 30 (t=60) expired, 40 (t=70) is the least left.
        assert_eq!(w.update(win, 165.0, 95.0), 40.0);
        // A sample at exactly the window's edge (t + win == now) still counts (genericCC's strict <).
        assert_eq!(w.update(win, 180.0, 99.0), 50.0);
    }

    #[test]
    fn the_maximum_keeps_the_largest_in_the_window_and_the_newest_sample_never_expires() {
        let mut w = ExtremeWindow::max();
        assert_eq!(w.update(10.0, 0.0, 5.0), 5.0);
        assert_eq!(w.update(10.0, 5.0, 3.0), 5.0);
        assert_eq!(w.update(10.0, 12.0, 1.0), 3.0);
        assert_eq!(w.update(10.0, 100.0, 0.5), 0.5);
        assert!(ExtremeWindow::min().get().is_nan());
    }

    #[test]
    fn equal_samples_keep_one_entry_and_the_newest_one_expires_last() {
        let mut w = ExtremeWindow::min();
        // A steady RTT (the simulator's common case with an empty queue): 10 000 equal samples.
        for t in 0..10_000 {
            assert_eq!(w.update(1_000_000.0, t as f64, 0.05), 0.05);
        }
        assert_eq!(w.vals.len(), 1);
        // The kept one is the newest: at t = 10 050 the equal sample from t = 9 999 is still inside.
        assert_eq!(w.update(100.0, 10_050.0, 0.07), 0.05);
        let mut m = ExtremeWindow::max();
        for t in 0..100 {
            m.update(1_000.0, t as f64, 2.0);
        }
        assert_eq!(m.vals.len(), 1);
    }
}
