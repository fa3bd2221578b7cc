//! Streaming histograms: memory grows with the range of values, never with the number of samples.

/// Exact counts of small non-negative integers (delays in whole milliseconds, as Mahimahi logs them).
#[derive(Clone, Debug, Default)]
pub struct IntHistogram {
    counts: Vec<u64>,
    n: u64,
    sum: u128,
}

impl IntHistogram {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        self.record_n(v, 1);
    }

    #[inline]
    pub fn record_n(&mut self, v: u64, n: u64) {
        let i = v as usize;
        if i >= self.counts.len() {
            // Grows with the largest delay seen, amortised; not per packet.
            self.counts.resize((i + 1).next_power_of_two(), 0);
        }
        self.counts[i] += n;
        self.n += n;
        self.sum += v as u128 * n as u128;
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum as f64 / self.n as f64)
    }

    pub fn max(&self) -> Option<u64> {
        self.counts.iter().rposition(|&c| c > 0).map(|i| i as u64)
    }

    /// Mahimahi's percentile: the value at index floor(q * n) of the sorted samples.
    pub fn percentile(&self, q: f64) -> Option<u64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q * self.n as f64).floor() as u64).min(self.n - 1);
        let mut seen = 0u64;
        for (v, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen > rank {
                return Some(v as u64);
            }
        }
        None
    }

    pub fn merge(&mut self, other: &IntHistogram) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.n += other.n;
        self.sum += other.sum;
    }
}

const SUB_BITS: u32 = 10;
const SUB: u64 = 1 << SUB_BITS;
const HALF: u64 = SUB / 2;

/// Log-linear histogram of u64 values (nanoseconds) with relative error below 2^-10 (0.1%).
#[derive(Clone, Debug, Default)]
pub struct LogHistogram {
    counts: Vec<u64>,
    n: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl LogHistogram {
    pub fn new() -> Self {
        LogHistogram { min: u64::MAX, ..Default::default() }
    }

    // Values below SUB are exact; above, each power of two is split into SUB/2 equal buckets.
    fn index(v: u64) -> usize {
        if v < SUB {
            return v as usize;
        }
        let exp = 63 - v.leading_zeros() - (SUB_BITS - 1);
        (SUB + (exp as u64 - 1) * HALF + ((v >> exp) - HALF)) as usize
    }

    fn value_of(i: usize) -> u64 {
        let i = i as u64;
        if i < SUB {
            return i;
        }
        let exp = (i - SUB) / HALF + 1;
        let m = (i - SUB) % HALF + HALF;
        (m << exp) + ((1u64 << exp) >> 1)
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        let i = Self::index(v);
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
        self.n += 1;
        self.sum += v as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum as f64 / self.n as f64)
    }

    /// Value at index floor(q * n) of the sorted samples, within 0.1%; exact min and max.
    pub fn percentile(&self, q: f64) -> Option<u64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q * self.n as f64).floor() as u64).min(self.n - 1);
        if rank == 0 {
            return Some(self.min);
        }
        if rank == self.n - 1 {
            return Some(self.max);
        }
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen > rank {
                return Some(Self::value_of(i).clamp(self.min, self.max));
            }
        }
        None
    }

    pub fn merge(&mut self, other: &LogHistogram) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.n += other.n;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn int_percentile_matches_mahimahi_index_rule() {
        let mut h = IntHistogram::new();
        for v in [5u64, 1, 3, 2, 4, 10, 7, 8, 9, 6] {
            h.record(v);
        }
        // sorted = 1..=10, index floor(0.95 * 10) = 9 -> 10
        assert_eq!(h.percentile(0.95), Some(10));
        assert_eq!(h.percentile(0.5), Some(6));
        assert_eq!(h.mean(), Some(5.5));
    }

    proptest! {
        #[test]
        fn log_histogram_is_within_a_tenth_of_a_percent(mut vals in prop::collection::vec(0u64..50_000_000_000, 1..300), q in 0.0f64..1.0) {
            let mut h = LogHistogram::new();
            for &v in &vals { h.record(v); }
            vals.sort();
            let want = vals[((q * vals.len() as f64).floor() as usize).min(vals.len() - 1)];
            let got = h.percentile(q).unwrap();
            let err = (got as f64 - want as f64).abs();
            prop_assert!(err <= want as f64 * 0.001 + 1.0, "got {} want {}", got, want);
        }
    }
}
