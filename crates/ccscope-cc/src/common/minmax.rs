//! Windowed running maximum or minimum in O(1) time and space: Kathleen Nichols' algorithm as Linux's
//! `lib/minmax.c` keeps it, the best, second-best and third-best samples of the window, each from a
//! later sub-window than the one before, so the estimate ages out gracefully when the best expires.
//!
//! Time is any monotone `u64` count (nanoseconds, or BBR's round-trip count); values are `f64`.

/// One (time, value) sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Sample {
    t: u64,
    v: f64,
}

/// A windowed max or min filter (which one depends on the `running_*` method called).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Minmax {
    s: [Sample; 3],
}

impl Minmax {
    /// The current best estimate (0 before any sample, as Linux's zeroed filter).
    pub fn get(&self) -> f64 {
        self.s[0].v
    }

    /// Forget everything and start over from one sample (minmax.c `minmax_reset`).
    pub fn reset(&mut self, t: u64, v: f64) -> f64 {
        self.s = [Sample { t, v }; 3];
        v
    }

    /// Add a sample to a running maximum over the last `win` time units (minmax.c `minmax_running_max`).
    pub fn running_max(&mut self, win: u64, t: u64, v: f64) -> f64 {
        self.running(win, Sample { t, v }, |a, b| a >= b)
    }

    /// Add a sample to a running minimum over the last `win` time units (minmax.c `minmax_running_min`).
    pub fn running_min(&mut self, win: u64, t: u64, v: f64) -> f64 {
        self.running(win, Sample { t, v }, |a, b| a <= b)
    }

    fn running(&mut self, win: u64, val: Sample, at_least_as_good: fn(f64, f64) -> bool) -> f64 {
        // A new best, or nothing left in the window: start over.
        if at_least_as_good(val.v, self.s[0].v) || val.t.saturating_sub(self.s[2].t) > win {
            return self.reset(val.t, val.v);
        }
        if at_least_as_good(val.v, self.s[1].v) {
            self.s[2] = val;
            self.s[1] = val;
        } else if at_least_as_good(val.v, self.s[2].v) {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// minmax.c `minmax_subwin_update`: age the three samples through quarter and half sub-windows.
    fn subwin_update(&mut self, win: u64, val: Sample) -> f64 {
        let dt = val.t.saturating_sub(self.s[0].t);
        if dt > win {
            // The best expired: promote the second and third, and again if the second is old too.
            self.s = [self.s[1], self.s[2], val];
            if val.t.saturating_sub(self.s[0].t) > win {
                self.s = [self.s[1], self.s[2], val];
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window passed without a second choice: take this one as second and third.
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window passed without a third choice.
            self.s[2] = val;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_max_keeps_the_best_until_it_leaves_the_window() {
        let mut m = Minmax::default();
        assert_eq!(m.running_max(10, 0, 5.0), 5.0);
        assert_eq!(m.running_max(10, 1, 3.0), 5.0);
        assert_eq!(
            m.running_max(10, 2, 8.0),
            8.0,
            "a new best resets the filter"
        );
        assert_eq!(m.running_max(10, 5, 4.0), 8.0);
        assert_eq!(m.running_max(10, 12, 2.0), 8.0, "dt = 10 is still inside");
        // t = 13: the max of t = 2 expired; the best sample seen after it (4 at t = 5) takes over.
        assert_eq!(m.running_max(10, 13, 1.0), 4.0);
        // t = 16: the sample of t = 5 expired too; what is left is 2 (t = 12) then 1 (t = 13).
        assert_eq!(m.running_max(10, 16, 0.5), 2.0);
    }

    #[test]
    fn running_min_mirrors_running_max() {
        let mut m = Minmax::default();
        m.reset(0, 40.0);
        assert_eq!(m.running_min(100, 10, 45.0), 40.0);
        assert_eq!(m.running_min(100, 20, 38.0), 38.0);
        assert_eq!(m.running_min(100, 90, 50.0), 38.0);
        // Nothing newer than the window's start remains but t = 90's sample: it becomes the minimum.
        assert_eq!(m.running_min(100, 121, 60.0), 50.0);
    }

    #[test]
    fn a_sample_after_a_whole_window_of_silence_resets() {
        let mut m = Minmax::default();
        m.running_max(10, 0, 9.0);
        assert_eq!(m.running_max(10, 11, 1.0), 1.0);
        assert_eq!(m.s, [Sample { t: 11, v: 1.0 }; 3]);
    }
}
