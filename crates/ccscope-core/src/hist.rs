//! Streaming histograms: memory grows with the range of values, never with the number of samples.
//!
//! Counters live in small pages allocated on first write, so a histogram pays for the values it has
//! seen, not for everything below its largest one.

const PAGE_BITS: u32 = 5;
const PAGE: usize = 1 << PAGE_BITS;
const DIR_BITS: u32 = 6;
const DIR: usize = 1 << DIR_BITS;

type Page = [u64; PAGE];

/// `DIR` consecutive pages: where each is in the arena, and which of them exist.
#[derive(Clone, Debug)]
struct Dir {
    /// Per page: its position in `arena` + 1 (0: never written).
    at: [u32; DIR],
    /// Bit j set when page j exists: a reader walks the pages that exist, in order, not every index.
    present: u64,
}

/// A sparse array of u64 counters: pages of `PAGE` slots allocated on first write, found through
/// directories of `DIR` pages also allocated on first write, so memory follows the indices in use.
#[derive(Clone, Debug)]
struct Pages {
    dirs: Vec<Option<Box<Dir>>>,
    arena: Vec<Page>,
    /// The two pages last written and their positions, most recent first: consecutive delays mostly
    /// fall in one page, and a range's two ends (a difference array's +1 and -1) in two.
    last: [(usize, usize); 2],
}

impl Default for Pages {
    fn default() -> Self {
        Pages {
            dirs: Vec::new(),
            arena: Vec::new(),
            last: [(usize::MAX, 0); 2],
        }
    }
}

impl Pages {
    /// Adds `x` (wrapping: a difference array stores -1 as u64::MAX) to slot `i`.
    #[inline]
    fn add(&mut self, i: usize, x: u64) {
        let p = i >> PAGE_BITS;
        if p != self.last[0].0 {
            let at = if p == self.last[1].0 {
                self.last[1].1
            } else {
                self.find_or_insert(p)
            };
            self.last[1] = self.last[0];
            self.last[0] = (p, at);
        }
        let s = &mut self.arena[self.last[0].1][i & (PAGE - 1)];
        *s = s.wrapping_add(x);
    }

    #[cold]
    fn find_or_insert(&mut self, p: usize) -> usize {
        let d = p >> DIR_BITS;
        if d >= self.dirs.len() {
            self.dirs.resize(d + 1, None);
        }
        let dir = self.dirs[d].get_or_insert_with(|| {
            Box::new(Dir {
                at: [0; DIR],
                present: 0,
            })
        });
        let slot = &mut dir.at[p & (DIR - 1)];
        if *slot == 0 {
            if self.arena.len() == self.arena.capacity() {
                // An eighth of headroom: amortised growth that wastes little of a long-lived histogram;
                // doubling up to 8 pages first, so a young one is not copied at every new page.
                let n = self.arena.len();
                self.arena
                    .reserve_exact(if n < 8 { n.max(1) } else { n / 8 + 1 });
            }
            self.arena.push([0; PAGE]);
            *slot = self.arena.len() as u32;
            dir.present |= 1 << (p & (DIR - 1));
        }
        *slot as usize - 1
    }

    /// The pages ever written, in index order, each with its index p (slots p PAGE .. (p+1) PAGE).
    fn pages(&self) -> impl Iterator<Item = (usize, &Page)> + '_ {
        self.dirs.iter().enumerate().flat_map(move |(d, dir)| {
            let (at, mut left) = dir
                .as_deref()
                .map_or((None, 0), |d| (Some(&d.at), d.present));
            std::iter::from_fn(move || {
                let j = (left != 0).then(|| left.trailing_zeros() as usize)?;
                left &= left - 1;
                let pos = at?[j] as usize - 1;
                Some(((d << DIR_BITS) + j, &self.arena[pos]))
            })
        })
    }

    fn merge(&mut self, other: &Pages) {
        for (p, page) in other.pages() {
            for (j, &x) in page.iter().enumerate() {
                if x != 0 {
                    self.add((p << PAGE_BITS) + j, x);
                }
            }
        }
    }

    fn heap_bytes(&self) -> usize {
        let table = self.dirs.capacity() * std::mem::size_of::<Option<Box<Dir>>>();
        let dirs = self.dirs.iter().flatten().count() * std::mem::size_of::<Dir>();
        table + dirs + self.arena.capacity() * std::mem::size_of::<Page>()
    }
}

/// A percentile's walk through an `IntHistogram`'s buckets in order.
struct Walk {
    /// The sorted index sought.
    rank: u64,
    /// Values in the buckets walked so far.
    seen: u64,
    /// Ranges covering the next bucket whole (the prefix sum of the cover marks).
    cover: u64,
}

/// Values below this are counted exactly (17.5 min of whole milliseconds).
pub const INT_EXACT: u64 = 1 << INT_EXACT_BITS;
const INT_EXACT_BITS: u32 = 20;
/// Above `INT_EXACT`, each power of two is split into 2^INT_SUB_BITS equal buckets.
const INT_SUB_BITS: u32 = 9;
const INT_BUCKETS: usize =
    INT_EXACT as usize + (64 - INT_EXACT_BITS as usize) * (1 << INT_SUB_BITS);

/// Counts of non-negative integers (delays in whole milliseconds, as Mahimahi logs them): exact below
/// `INT_EXACT`; above, in log-linear buckets reported at their midpoint, within 2^-10 (0.1%).
///
/// Besides single values it takes ranges (one count for every value in [lo, hi]) in O(1), as a
/// difference array over buckets: count, sum, mean and max stay exact whatever the values.
/// Memory is bounded (at most `INT_BUCKETS` slots of two arrays) and in practice follows the values seen.
#[derive(Clone, Debug)]
pub struct IntHistogram {
    /// Counts recorded into one bucket (single values, partly covered buckets of a range).
    pts: Pages,
    /// Difference array of how many ranges cover each bucket whole: its prefix sum times the bucket's
    /// width is the bucket's count from ranges.
    cover: Pages,
    n: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for IntHistogram {
    fn default() -> Self {
        IntHistogram {
            pts: Pages::default(),
            cover: Pages::default(),
            n: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }
}

impl IntHistogram {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    fn index(v: u64) -> usize {
        if v < INT_EXACT {
            return v as usize;
        }
        let e = 63 - v.leading_zeros();
        let sub = (v >> (e - INT_SUB_BITS)) - (1 << INT_SUB_BITS);
        INT_EXACT as usize + ((e - INT_EXACT_BITS) as usize) * (1 << INT_SUB_BITS) + sub as usize
    }

    /// First value of bucket `i` and its width.
    fn bucket(i: usize) -> (u64, u64) {
        if i < INT_EXACT as usize {
            return (i as u64, 1);
        }
        let k = i - INT_EXACT as usize;
        let e = (k >> INT_SUB_BITS) as u32 + INT_EXACT_BITS;
        let sub = (k & ((1 << INT_SUB_BITS) - 1)) as u64;
        let w = 1u64 << (e - INT_SUB_BITS);
        (((1 << INT_SUB_BITS) + sub) * w, w)
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        self.record_n(v, 1);
    }

    #[inline]
    pub fn record_n(&mut self, v: u64, n: u64) {
        if n == 0 {
            return;
        }
        self.pts.add(Self::index(v), n);
        self.n += n;
        self.sum += v as u128 * n as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// One count for every value in [lo, hi] (nothing if lo > hi), in O(1).
    pub fn record_range(&mut self, lo: u64, hi: u64) {
        if lo > hi {
            return;
        }
        debug_assert!(hi < u64::MAX, "a range over every u64 has 2^64 values");
        let len = hi - lo + 1;
        let (b_lo, b_hi) = (Self::index(lo), Self::index(hi));
        if b_lo == b_hi {
            self.pts.add(b_lo, len);
        } else {
            // Partly covered end buckets count their overlap; the buckets between are covered whole.
            let (s_lo, w_lo) = Self::bucket(b_lo);
            let first = if lo == s_lo {
                b_lo
            } else {
                self.pts.add(b_lo, w_lo - (lo - s_lo));
                b_lo + 1
            };
            let (s_hi, w_hi) = Self::bucket(b_hi);
            let last = if hi - s_hi == w_hi - 1 {
                b_hi
            } else {
                self.pts.add(b_hi, hi - s_hi + 1);
                b_hi - 1
            };
            if first <= last {
                self.cover.add(first, 1);
                if last + 1 < INT_BUCKETS {
                    self.cover.add(last + 1, u64::MAX);
                }
            }
        }
        self.n += len;
        // (lo + hi)(hi - lo + 1) is always even: one of the two factors is.
        self.sum += (lo as u128 + hi as u128) * len as u128 / 2;
        self.min = self.min.min(lo);
        self.max = self.max.max(hi);
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum as f64 / self.n as f64)
    }

    pub fn max(&self) -> Option<u64> {
        (self.n > 0).then_some(self.max)
    }

    pub fn min(&self) -> Option<u64> {
        (self.n > 0).then_some(self.min)
    }

    /// Mahimahi's percentile: the value at index floor(q * n) of the sorted samples; exact below
    /// `INT_EXACT`, the bucket's midpoint (clamped to the exact min and max) above.
    pub fn percentile(&self, q: f64) -> Option<u64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q * self.n as f64).floor() as u64).min(self.n - 1);
        let mut walk = Walk {
            rank,
            seen: 0,
            cover: 0,
        };
        let last = Self::index(self.max) >> PAGE_BITS;
        let (mut pts, mut cov) = (self.pts.pages().peekable(), self.cover.pages().peekable());
        // Only the pages that exist are looked up; the unwritten ones between them are counted whole.
        let mut next = 0;
        while next <= last {
            let p = [pts.peek(), cov.peek()]
                .into_iter()
                .flatten()
                .map(|&(p, _)| p.min(last + 1))
                .min()
                .unwrap_or(last + 1);
            if p > next && walk.cover > 0 {
                if let Some(v) = self.walk_gap(&mut walk, next, p) {
                    return Some(v);
                }
            }
            if p > last {
                break;
            }
            let a = pts.next_if(|&(q, _)| q == p).map(|(_, page)| page);
            let b = cov.next_if(|&(q, _)| q == p).map(|(_, page)| page);
            if let Some(v) = self.walk_page(&mut walk, p, a, b) {
                return Some(v);
            }
            next = p + 1;
        }
        Some(self.max)
    }

    /// Counts the unwritten pages `from..to` into `walk` (each bucket in them holds `walk.cover` times
    /// its width), and returns the value at the rank if it falls in them; a division per run of pages
    /// of one bucket width finds the page, where `walk_page` would visit them one by one.
    fn walk_gap(&self, walk: &mut Walk, from: usize, to: usize) -> Option<u64> {
        // Pages of one width: the exact range, then 2^INT_SUB_BITS buckets per power of two.
        const EXACT_PAGES: usize = INT_EXACT as usize >> PAGE_BITS;
        const RUN: usize = 1 << (INT_SUB_BITS - PAGE_BITS);
        debug_assert!(walk.cover > 0 && walk.seen <= walk.rank);
        let mut g = from;
        while g < to {
            let end = if g < EXACT_PAGES {
                EXACT_PAGES
            } else {
                g - (g - EXACT_PAGES) % RUN + RUN
            };
            let end = end.min(to);
            let per_page = walk.cover * Self::bucket(g << PAGE_BITS).1 * PAGE as u64;
            // Whole pages that leave the count at or below the rank, as walk_page skips them.
            let k = (walk.rank - walk.seen) / per_page;
            if k < (end - g) as u64 {
                walk.seen += k * per_page;
                return self.walk_page(walk, g + k as usize, None, None);
            }
            walk.seen += (end - g) as u64 * per_page;
            g = end;
        }
        None
    }

    /// Counts page `p` (its point counts `pts`, its cover marks `cov`; `None`: never written) into
    /// `walk`, and returns the value at the rank if it falls in this page.
    fn walk_page(
        &self,
        walk: &mut Walk,
        p: usize,
        pts: Option<&Page>,
        cov: Option<&Page>,
    ) -> Option<u64> {
        let base = p << PAGE_BITS;
        // Pages never straddle a change of bucket width (INT_EXACT and 2^INT_SUB_BITS are multiples of PAGE).
        let w = Self::bucket(base).1;
        if cov.is_none() {
            // No cover mark in it: its count is its points' sum (a vectorised add) plus the cover.
            let c = pts.map_or(0, |c| c.iter().sum::<u64>()) + walk.cover * w * PAGE as u64;
            if walk.seen + c <= walk.rank {
                walk.seen += c;
                return None;
            }
        }
        for j in 0..PAGE {
            walk.cover = walk.cover.wrapping_add(cov.map_or(0, |c| c[j]));
            walk.seen += pts.map_or(0, |c| c[j]) + walk.cover * w;
            if walk.seen > walk.rank {
                let (s, w) = Self::bucket(base + j);
                return Some((s + w / 2).clamp(self.min, self.max));
            }
        }
        None
    }

    pub fn merge(&mut self, other: &IntHistogram) {
        self.pts.merge(&other.pts);
        self.cover.merge(&other.cover);
        self.n += other.n;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Bytes this histogram holds on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.pts.heap_bytes() + self.cover.heap_bytes()
    }
}

const SUB_BITS: u32 = 10;
const SUB: u64 = 1 << SUB_BITS;
const HALF: u64 = SUB / 2;

/// Log-linear histogram of u64 values (nanoseconds) with relative error below 2^-10 (0.1%).
#[derive(Clone, Debug)]
pub struct LogHistogram {
    counts: Pages,
    n: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for LogHistogram {
    fn default() -> Self {
        LogHistogram {
            counts: Pages::default(),
            n: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }
}

impl LogHistogram {
    pub fn new() -> Self {
        Self::default()
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
        self.counts.add(Self::index(v), 1);
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
        let last = Self::index(self.max) >> PAGE_BITS;
        for (p, page) in self.counts.pages().take_while(|&(p, _)| p <= last) {
            for (j, &c) in page.iter().enumerate() {
                seen += c;
                if seen > rank {
                    return Some(Self::value_of((p << PAGE_BITS) + j).clamp(self.min, self.max));
                }
            }
        }
        None
    }

    pub fn merge(&mut self, other: &LogHistogram) {
        self.counts.merge(&other.counts);
        self.n += other.n;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Bytes this histogram holds on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.counts.heap_bytes()
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

    #[test]
    fn int_range_counts_every_value_once() {
        let mut h = IntHistogram::new();
        h.record_range(3, 6);
        h.record(4);
        h.record_range(9, 8);
        // sorted = 3, 4, 4, 5, 6
        assert_eq!(h.count(), 5);
        assert_eq!(h.mean(), Some(22.0 / 5.0));
        assert_eq!((h.min(), h.max()), (Some(3), Some(6)));
        assert_eq!(
            [0.0, 0.2, 0.4, 0.6, 0.8].map(|q| h.percentile(q).unwrap()),
            [3, 4, 4, 5, 6]
        );
    }

    #[test]
    fn a_billion_value_range_is_recorded_in_constant_memory_with_exact_count_and_mean() {
        let mut h = IntHistogram::new();
        h.record_range(5, 1_000_000_004);
        assert_eq!(h.count(), 1_000_000_000);
        assert_eq!(h.mean(), Some(500_000_004.5));
        assert_eq!(h.max(), Some(1_000_000_004));
        // Sorted value at rank 10^6 is 10^6 + 5; at rank 9.5 * 10^8 it is 950_000_005.
        for (q, want) in [(0.001, 1_000_005.0), (0.95, 950_000_005.0)] {
            let p = h.percentile(q).unwrap() as f64;
            assert!((p - want).abs() <= want / 1024.0, "{q}: {p}");
        }
        // Two partly covered end buckets, two cover marks: a few pages, not 10^9 counters.
        assert!(h.heap_bytes() < 16 * 1024, "{}", h.heap_bytes());
    }

    #[test]
    fn memory_follows_the_values_seen_not_the_largest() {
        let mut h = IntHistogram::new();
        h.record(1);
        h.record(1_000_000);
        // Two pages, two directories and a table of ~490 slots for them; a dense array holds 10^6 counters.
        assert!(
            h.heap_bytes() <= 2 * 8 * PAGE + 2 * 8 * DIR + 8 * 512,
            "{}",
            h.heap_bytes()
        );
        assert_eq!(h.percentile(0.5), Some(1_000_000));
    }

    /// The value at `rank` of the sorted multiset of [lo, hi] ranges, by bisection on the value.
    fn sorted_value_at(ranges: &[(u64, u64)], rank: u64) -> u64 {
        let below = |x: u64| {
            ranges
                .iter()
                .map(|&(lo, hi)| if x < lo { 0 } else { hi.min(x) - lo + 1 })
                .sum::<u64>()
        };
        let (mut a, mut b) = (0u64, ranges.iter().map(|r| r.1).max().unwrap());
        while a < b {
            let m = a + (b - a) / 2;
            if below(m) > rank {
                b = m;
            } else {
                a = m + 1;
            }
        }
        a
    }

    /// Page `p` looked up by its index, as the walks did before they took only the pages that exist.
    fn page_at(pages: &Pages, p: usize) -> Option<&Page> {
        let at = pages.dirs.get(p >> DIR_BITS)?.as_deref()?.at[p & (DIR - 1)];
        (at > 0).then(|| &pages.arena[at as usize - 1])
    }

    /// Reference: the percentile by every page index from 0 to the max's, present or not.
    fn percentile_by_every_page(h: &IntHistogram, q: f64) -> Option<u64> {
        if h.n == 0 {
            return None;
        }
        let rank = ((q * h.n as f64).floor() as u64).min(h.n - 1);
        let mut walk = Walk {
            rank,
            seen: 0,
            cover: 0,
        };
        for p in 0..=(IntHistogram::index(h.max) >> PAGE_BITS) {
            let (pts, cov) = (page_at(&h.pts, p), page_at(&h.cover, p));
            if let Some(v) = h.walk_page(&mut walk, p, pts, cov) {
                return Some(v);
            }
        }
        Some(h.max)
    }

    /// Reference: the log histogram's percentile by every page index up to the max's.
    fn log_percentile_by_every_page(h: &LogHistogram, q: f64) -> Option<u64> {
        let rank = ((q * h.n as f64).floor() as u64).min(h.n.checked_sub(1)?);
        if rank == 0 || rank == h.n - 1 {
            return h.percentile(q);
        }
        let mut seen = 0u64;
        for p in 0..=(LogHistogram::index(h.max) >> PAGE_BITS) {
            for (j, &c) in page_at(&h.counts, p).into_iter().flatten().enumerate() {
                seen += c;
                if seen > rank {
                    return Some(LogHistogram::value_of((p << PAGE_BITS) + j).clamp(h.min, h.max));
                }
            }
        }
        None
    }

    const QS: [f64; 9] = [0.0, 0.01, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999_999];

    #[test]
    fn pages_are_walked_in_index_order_whatever_order_they_were_written_in() {
        let mut pages = Pages::default();
        for i in [5_000_000usize, 40, 2048, 31, 2047, 100_000, 32, 0] {
            pages.add(i, 1);
        }
        let order: Vec<usize> = pages.pages().map(|(p, _)| p).collect();
        assert_eq!(order, [0, 1, 63, 64, 3125, 156_250]);
        // Each page comes with its own counters: slot i is in page i / PAGE at i % PAGE.
        let slots: Vec<usize> = pages
            .pages()
            .flat_map(|(p, page)| {
                page.iter()
                    .enumerate()
                    .filter(|e| *e.1 != 0)
                    .map(move |(j, _)| p * PAGE + j)
            })
            .collect();
        assert_eq!(slots, [0, 31, 32, 40, 2047, 2048, 100_000, 5_000_000]);
    }

    #[test]
    fn an_empty_histogram_has_no_percentile() {
        assert_eq!(IntHistogram::new().percentile(0.95), None);
        assert_eq!(LogHistogram::new().percentile(0.95), None);
    }

    #[test]
    fn one_value_is_every_percentile() {
        for v in [
            0u64,
            31,
            32,
            2047,
            2048,
            INT_EXACT - 1,
            INT_EXACT,
            123_456_789,
        ] {
            let mut h = IntHistogram::new();
            h.record(v);
            for q in QS {
                assert_eq!(h.percentile(q), Some(v), "{v} at {q}");
            }
        }
    }

    #[test]
    fn values_on_page_and_directory_boundaries_are_found_exactly() {
        // 31 | 32 ends and starts a page; 2047 | 2048 a directory of pages; 2^20 - 1 | 2^20 the exact range.
        let vals = [
            31u64,
            32,
            63,
            64,
            2047,
            2048,
            4095,
            4096,
            INT_EXACT - 1,
            INT_EXACT,
        ];
        let mut h = IntHistogram::new();
        for &v in &vals {
            h.record(v);
        }
        for (i, &v) in vals.iter().enumerate() {
            let q = (i as f64 + 0.5) / vals.len() as f64;
            assert_eq!(h.percentile(q), Some(v), "rank {i}");
        }
    }

    #[test]
    fn a_rank_inside_unwritten_pages_covered_by_a_range_is_found_there() {
        // Two marks 100,000 buckets apart, thousands of unwritten pages between them, and a few points.
        let mut h = IntHistogram::new();
        h.record_range(1_000, 100_999);
        h.record(5);
        h.record(200_000);
        // n = 100,002; rank floor(0.5 n) = 50,001 is the value 1,000 + 50,000 (rank 0 is 5).
        assert_eq!(h.percentile(0.5), Some(51_000));
        assert_eq!(h.percentile(0.0), Some(5));
        assert_eq!(h.percentile(0.999_999), Some(200_000));
        for q in QS {
            assert_eq!(h.percentile(q), percentile_by_every_page(&h, q), "{q}");
        }
        // Above 2^20 a gap spans runs of pages of different bucket widths (one per power of two).
        let mut h = IntHistogram::new();
        h.record_range(INT_EXACT - 10, 1 << 40);
        h.record(3);
        for q in QS.into_iter().chain([0.3, 0.6, 0.97]) {
            assert_eq!(h.percentile(q), percentile_by_every_page(&h, q), "{q}");
        }
    }

    /// Sparse sets of values: clusters far apart (gaps of many pages and directories), some recorded as ranges.
    fn sparse() -> impl Strategy<Value = Vec<(u64, u64)>> {
        let at = prop_oneof![0u64..4_200, 0u64..INT_EXACT + 70_000, 0u64..1 << 45];
        prop::collection::vec(
            (
                at,
                prop_oneof![Just(0u64), 0..3u64, 0..5_000u64, 0..1u64 << 30],
            )
                .prop_map(|(lo, l)| (lo, lo + l)),
            0..12,
        )
    }

    fn ranges(max_v: u64, max_len: u64) -> impl Strategy<Value = Vec<(u64, u64)>> {
        prop::collection::vec(
            (0..max_v, prop_oneof![Just(0u64), 0..max_len]).prop_map(|(lo, l)| (lo, lo + l)),
            1..60,
        )
    }

    /// Reference without pages: the first bucket whose end has more than `rank` values of the weighted
    /// ranges (lo, hi, times) at or below it, found by bisection, reported as `percentile` reports it.
    fn int_percentile_by_bucket_counts(rs: &[(u64, u64, u64)], q: f64) -> Option<u64> {
        let n: u64 = rs.iter().map(|&(lo, hi, k)| (hi - lo + 1) * k).sum();
        if n == 0 {
            return None;
        }
        let rank = ((q * n as f64).floor() as u64).min(n - 1);
        let upto = |b: usize| {
            let (s, w) = IntHistogram::bucket(b);
            let end = s + (w - 1);
            rs.iter()
                .map(|&(lo, hi, k)| {
                    if end < lo {
                        0
                    } else {
                        (hi.min(end) - lo + 1) * k
                    }
                })
                .sum::<u64>()
        };
        let (mut a, mut b) = (0usize, INT_BUCKETS - 1);
        while a < b {
            let m = a + (b - a) / 2;
            if upto(m) > rank {
                b = m;
            } else {
                a = m + 1;
            }
        }
        let min = rs.iter().map(|r| r.0).min()?;
        let max = rs.iter().map(|r| r.1).max()?;
        let (s, w) = IntHistogram::bucket(a);
        Some((s + w / 2).clamp(min, max))
    }

    /// Values on the edges the walks treat specially: 0, pages, directories, the exact range, the
    /// change of bucket width at each power of two, and the top of u64.
    fn edge_value() -> impl Strategy<Value = u64> {
        prop_oneof![
            prop::sample::select(vec![
                0u64,
                1,
                31,
                32,
                33,
                2047,
                2048,
                INT_EXACT - 1,
                INT_EXACT,
                INT_EXACT + 1,
                1 << 21,
                (1 << 33) - 1,
                1 << 62,
                (1 << 63) - 1,
                1 << 63,
                u64::MAX - (1 << 54),
                u64::MAX - 2,
            ]),
            0u64..INT_EXACT + 5_000,
            (1u64 << 62)..u64::MAX - 1,
            any::<u64>().prop_map(|v| v.min(u64::MAX - 2)),
        ]
    }

    /// Weighted values and ranges (lo, hi, times) with their ends on edges; lengths and weights kept
    /// small enough that the count fits in u64.
    fn edgy() -> impl Strategy<Value = Vec<(u64, u64, u64)>> {
        prop::collection::vec(
            (
                edge_value(),
                prop_oneof![Just(0u64), 0..70u64, 0..1u64 << 40, 0..1u64 << 58],
                prop_oneof![Just(1u64), 1..4u64],
            )
                .prop_map(|(lo, l, k)| (lo, lo.saturating_add(l).min(u64::MAX - 1), k)),
            1..10,
        )
    }

    proptest! {
        #[test]
        fn int_percentiles_equal_bucket_counts_at_the_edges_and_after_any_split_and_merge(
            rs in edgy(), split in any::<u64>(), q in 0.0f64..1.0,
        ) {
            // Each weighted range goes to one side (split's bits); a point can also go to both halves.
            let (mut a, mut b) = (IntHistogram::new(), IntHistogram::new());
            for (i, &(lo, hi, k)) in rs.iter().enumerate() {
                let h = if split >> (i % 64) & 1 == 0 { &mut a } else { &mut b };
                if lo == hi {
                    h.record_n(lo, k);
                } else {
                    for _ in 0..k {
                        h.record_range(lo, hi);
                    }
                }
            }
            let (a0, b0) = (a.clone(), b.clone());
            a.merge(&b0);
            b.merge(&a0);
            for q in QS.into_iter().chain([1.0, 1.0 - f64::EPSILON, q]) {
                let want = int_percentile_by_bucket_counts(&rs, q);
                prop_assert_eq!(a.percentile(q), want, "{}", q);
                prop_assert_eq!(b.percentile(q), want, "{} merged the other way", q);
            }
        }

        #[test]
        fn log_percentiles_equal_the_sorted_values_bucket_after_any_split_and_merge(
            vals in prop::collection::vec(edge_value(), 1..40), split in any::<u64>(), q in 0.0f64..1.0,
        ) {
            let (mut a, mut b) = (LogHistogram::new(), LogHistogram::new());
            for (i, &v) in vals.iter().enumerate() {
                if split >> (i % 64) & 1 == 0 { a.record(v) } else { b.record(v) }
            }
            a.merge(&b);
            let mut sorted = vals.clone();
            sorted.sort();
            let (min, max) = (sorted[0], sorted[sorted.len() - 1]);
            for q in QS.into_iter().chain([1.0, 1.0 - f64::EPSILON, q]) {
                let rank = ((q * vals.len() as f64).floor() as usize).min(vals.len() - 1);
                let want = if rank == 0 {
                    min
                } else if rank == vals.len() - 1 {
                    max
                } else {
                    LogHistogram::value_of(LogHistogram::index(sorted[rank])).clamp(min, max)
                };
                prop_assert_eq!(a.percentile(q), Some(want), "{}", q);
            }
        }

        #[test]
        fn percentiles_walking_only_written_pages_equal_the_walk_of_every_page(rs in sparse(), q in 0.0f64..1.0) {
            let (mut h, mut l) = (IntHistogram::new(), LogHistogram::new());
            for &(lo, hi) in &rs {
                if lo == hi { h.record(lo) } else { h.record_range(lo, hi) }
                l.record(lo);
                l.record(hi);
            }
            for q in QS.into_iter().chain([q]) {
                prop_assert_eq!(h.percentile(q), percentile_by_every_page(&h, q), "{}", q);
                prop_assert_eq!(l.percentile(q), log_percentile_by_every_page(&l, q), "{}", q);
            }
            let n: u64 = rs.iter().map(|r| r.1 - r.0 + 1).sum();
            if n > 0 && rs.iter().all(|r| r.1 < INT_EXACT) {
                let rank = ((q * n as f64).floor() as u64).min(n - 1);
                prop_assert_eq!(h.percentile(q), Some(sorted_value_at(&rs, rank)));
            }
        }

        #[test]
        fn int_histogram_is_exact_below_2_pow_20(rs in ranges(1_000_000, 40_000), q in 0.0f64..1.0) {
            let mut h = IntHistogram::new();
            for &(lo, hi) in &rs {
                if lo == hi { h.record(lo) } else { h.record_range(lo, hi) }
            }
            let n: u64 = rs.iter().map(|r| r.1 - r.0 + 1).sum();
            let sum: u128 = rs.iter().map(|&(lo, hi)| (lo + hi) as u128 * (hi - lo + 1) as u128 / 2).sum();
            prop_assert_eq!(h.count(), n);
            prop_assert_eq!(h.mean(), Some(sum as f64 / n as f64));
            prop_assert_eq!(h.max(), rs.iter().map(|r| r.1).max());
            let rank = ((q * n as f64).floor() as u64).min(n - 1);
            prop_assert_eq!(h.percentile(q), Some(sorted_value_at(&rs, rank)));
        }

        #[test]
        fn int_histogram_is_within_a_tenth_of_a_percent_above_2_pow_20(rs in ranges(1 << 40, 1 << 36), q in 0.0f64..1.0) {
            let (mut h, mut a, mut b) = (IntHistogram::new(), IntHistogram::new(), IntHistogram::new());
            for (i, &(lo, hi)) in rs.iter().enumerate() {
                h.record_range(lo, hi);
                if i % 2 == 0 { a.record_range(lo, hi) } else { b.record_range(lo, hi) }
            }
            let n: u64 = rs.iter().map(|r| r.1 - r.0 + 1).sum();
            prop_assert_eq!(h.count(), n);
            let want = sorted_value_at(&rs, ((q * n as f64).floor() as u64).min(n - 1));
            let got = h.percentile(q).unwrap();
            if want < INT_EXACT {
                prop_assert_eq!(got, want);
            } else {
                prop_assert!((got as f64 - want as f64).abs() <= want as f64 / 1024.0, "got {} want {}", got, want);
            }
            a.merge(&b);
            prop_assert_eq!(a.percentile(q), Some(got));
            prop_assert_eq!(a.count(), n);
        }

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

    #[test]
    fn log_histogram_of_one_way_delays_allocates_only_their_pages() {
        let mut h = LogHistogram::new();
        // 40 ms to 80 ms in ns: ~512 contiguous buckets, in one directory; a dense array reaches index ~10k (80 KB).
        for v in (40_000_000u64..80_000_000).step_by(10_007) {
            h.record(v);
        }
        assert!(
            h.heap_bytes() <= (512 / PAGE + 2) * 8 * PAGE + 8 * DIR + 64,
            "{}",
            h.heap_bytes()
        );
    }
}
