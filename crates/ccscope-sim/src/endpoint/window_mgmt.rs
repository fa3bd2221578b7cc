//! Congestion-window management over a shared receive buffer (paper 002 §5): when a destination's
//! controller asks to grow and the windows together would pass RBUF, who gives way.
//!
//! - `None`: every growth is granted (the receive window alone limits what is sent).
//! - `Dynamic` (§5.1, specs/002-cmt.md A15): destinations are ranked by available bandwidth, ties to
//!   the lower SRTT, then the lower index. [`Rank::Bandwidth`] (the default) reads "available
//!   bandwidth" as the path's measured bottleneck rate (packet pairs, see `Managed::bandwidth`), as
//!   the paper's own discussion of Figs. 9-10 does ("destination 1 is ranked highest (i.e., b1 >
//!   b2)"); [`Rank::Throughput`] ranks by instantaneous throughput CWND/SRTT. A destination with no
//!   bandwidth estimate yet is ranked by CWND/SRTT; one with no RTT sample ranks last. A window at or
//!   past its BDP does not grow (growth there cannot raise throughput). Below it, a growth that fits
//!   under RBUF is granted; one that does not takes the same amount (one MTU) from the lowest-ranked
//!   destination below the grower that can give it and keep one MTU; if none can, the growth is
//!   denied and no window is touched.
//! - `Static` (§5.2, A15): destination i has a limit c_i (packets). Growth within the limit is
//!   granted when it fits under RBUF, otherwise windows above their limits give way one MTU at a time
//!   (the most over its limit first), only as much as needed; if that is not enough, it is denied
//!   and no window is touched.
//!   Growth past the limit is granted only while it fits under RBUF and the window is below the
//!   destination's bandwidth-delay product (BDP, see [`Managed::bdp_bytes`]).
//!
//! Growth requests are at most one MTU (paper eqs. 2-3), so one exchange always suffices for the
//! dynamic scheme. The controllers stay sans-IO: this module only reads windows and calls `shrink`.

use ccscope_core::Dur;

/// How a CMT association shares its receive buffer among destinations.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum WindowManagement {
    #[default]
    None,
    Dynamic(Rank),
    /// Per-destination limits in packets (from the static optimisation, paper eqs. 56-60).
    Static(Vec<u32>),
}

/// How the dynamic scheme ranks destinations (paper 002 §5.1 "available bandwidth").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Rank {
    /// The path's measured bottleneck rate.
    #[default]
    Bandwidth,
    /// Instantaneous throughput CWND/SRTT.
    Throughput,
}

/// What window management needs of a destination.
pub trait Managed {
    fn cwnd(&self) -> u64;
    fn srtt(&self) -> Option<Dur>;
    /// The path's measured bottleneck rate in bytes per second, if known.
    fn bandwidth(&self) -> Option<f64>;
    /// The destination's bandwidth-delay product estimate in bytes, if known.
    fn bdp_bytes(&self) -> Option<u64>;
    /// Take up to `bytes` of window (never below one MTU); returns what was taken.
    fn shrink(&mut self, bytes: u64) -> u64;
}

impl WindowManagement {
    pub fn is_on(&self) -> bool {
        !matches!(self, WindowManagement::None)
    }

    pub fn name(&self) -> &'static str {
        match self {
            WindowManagement::None => "none",
            WindowManagement::Dynamic(_) => "dynamic",
            WindowManagement::Static(_) => "static",
        }
    }

    /// Destination `i` asks to grow by `want` bytes; returns the growth granted (`want` or 0), after
    /// shrinking other destinations as the scheme says.
    pub fn grant<M: Managed>(
        &self,
        i: usize,
        want: u64,
        rbuf: u64,
        mtu: u64,
        dests: &mut [M],
    ) -> u64 {
        if want == 0 {
            return 0;
        }
        let sum: u64 = dests.iter().map(Managed::cwnd).sum();
        let fits = sum + want <= rbuf;
        match self {
            WindowManagement::None => want,
            WindowManagement::Dynamic(rank) => {
                // §5.1 grows the destination that "can improve throughput by increasing its CWND": past
                // its BDP it cannot (eq. 8: RTT = CWND/b there), and §6.2 has destination 1 stop at its
                // BDP ("will use up to 108 KB" of 128). No estimate yet: plain growth.
                if dests[i].bdp_bytes().is_some_and(|b| dests[i].cwnd() >= b) {
                    return 0;
                }
                if fits {
                    return want;
                }
                // §5.1: a higher-ranked destination takes window from a lower-ranked one, the same
                // amount (A15: one MTU, floor one MTU); one that cannot give it all gives nothing.
                let order = |a: usize, b: usize| rank_order(*rank, &dests[a], a, &dests[b], b);
                let lowest = (0..dests.len())
                    .filter(|&j| j != i && dests[j].cwnd() >= mtu + want && order(i, j).is_gt())
                    .min_by(|&a, &b| order(a, b));
                match lowest {
                    Some(j) if sum <= rbuf => {
                        dests[j].shrink(want);
                        want
                    }
                    _ => 0,
                }
            }
            WindowManagement::Static(limits) => {
                let limit = |j: usize| limits.get(j).map_or(u64::MAX, |&c| c as u64 * mtu);
                let c = dests[i].cwnd();
                if c + want > limit(i) {
                    // §5.2: past the limit only while the buffer has room and the window is below the BDP.
                    let below_bdp = dests[i].bdp_bytes().is_some_and(|b| c < b);
                    return if fits && below_bdp { want } else { 0 };
                }
                // Windows above their limits give way, one MTU at a time, only as needed; if all
                // they hold above their limits cannot make room, nobody gives way and growth is denied.
                let spare: u64 = (0..dests.len())
                    .filter(|&j| j != i)
                    .map(|j| dests[j].cwnd().saturating_sub(limit(j).max(mtu)))
                    .sum();
                if sum + want > rbuf + spare {
                    return 0;
                }
                let mut sum = sum;
                while sum + want > rbuf {
                    let over = (0..dests.len())
                        .filter(|&j| j != i && dests[j].cwnd() > limit(j).max(mtu))
                        .max_by_key(|&j| {
                            (dests[j].cwnd() - limit(j).max(mtu), std::cmp::Reverse(j))
                        });
                    let Some(j) = over else { return 0 };
                    let excess = dests[j].cwnd() - limit(j).max(mtu);
                    sum -= dests[j].shrink(mtu.min(excess));
                }
                want
            }
        }
    }
}

/// Instantaneous throughput CWND/SRTT in bytes per second; no sample yet ranks last.
fn throughput<M: Managed>(m: &M) -> f64 {
    m.srtt()
        .filter(|s| s.as_ns() > 0)
        .map_or(0.0, |s| m.cwnd() as f64 / s.as_secs_f64())
}

/// A destination's available bandwidth under `rank`, bytes per second.
fn available<M: Managed>(rank: Rank, m: &M) -> f64 {
    match rank {
        Rank::Bandwidth => m.bandwidth().unwrap_or_else(|| throughput(m)),
        Rank::Throughput => throughput(m),
    }
}

/// Ordering from lowest-ranked to highest: less bandwidth, then higher SRTT, then higher index.
fn rank_order<M: Managed>(rank: Rank, a: &M, ia: usize, b: &M, ib: usize) -> std::cmp::Ordering {
    let srtt = |m: &M| m.srtt().map_or(u64::MAX, Dur::as_ns);
    available(rank, a)
        .total_cmp(&available(rank, b))
        .then(srtt(b).cmp(&srtt(a)))
        .then(ib.cmp(&ia))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: u64 = 1500;
    const DYN: WindowManagement = WindowManagement::Dynamic(Rank::Throughput);

    #[derive(Clone, Debug)]
    struct D {
        cwnd: u64,
        srtt_ms: u64,
        bdp: Option<u64>,
        bw: Option<f64>,
    }

    impl Managed for D {
        fn cwnd(&self) -> u64 {
            self.cwnd
        }
        fn srtt(&self) -> Option<Dur> {
            Some(Dur::from_ms(self.srtt_ms))
        }
        fn bdp_bytes(&self) -> Option<u64> {
            self.bdp
        }
        fn bandwidth(&self) -> Option<f64> {
            self.bw
        }
        fn shrink(&mut self, bytes: u64) -> u64 {
            let t = bytes.min(self.cwnd - MTU);
            self.cwnd -= t;
            t
        }
    }

    fn d(packets: u64, srtt_ms: u64) -> D {
        D {
            cwnd: packets * MTU,
            srtt_ms,
            bdp: None,
            bw: None,
        }
    }

    fn packets(ds: &[D]) -> Vec<u64> {
        ds.iter().map(|x| x.cwnd / MTU).collect()
    }

    #[test]
    fn dynamic_window_stops_growing_at_its_bdp_even_with_buffer_room() {
        // A 17-packet BDP (5 Mbit/s x 40 ms): growth to 17 is granted, past it denied, room or not.
        let mut ds = vec![
            D {
                bdp: Some(17 * MTU),
                ..d(16, 40)
            },
            d(10, 40),
        ];
        assert_eq!(DYN.grant(0, MTU, 1000 * MTU, MTU, &mut ds), MTU);
        ds[0].cwnd += MTU;
        assert_eq!(DYN.grant(0, MTU, 1000 * MTU, MTU, &mut ds), 0);
        assert_eq!(packets(&ds), vec![17, 10]);
        // Without an estimate yet the window grows as plain SCTP.
        let mut ds = vec![d(40, 40), d(10, 40)];
        assert_eq!(DYN.grant(0, MTU, 1000 * MTU, MTU, &mut ds), MTU);
    }

    #[test]
    fn dynamic_grants_growth_that_fits_under_the_buffer() {
        let mut ds = [d(4, 40), d(4, 40)];
        assert_eq!(DYN.grant(1, MTU, 10 * MTU, MTU, &mut ds), MTU);
        assert_eq!(packets(&ds), [4, 4]);
    }

    #[test]
    fn dynamic_full_buffer_takes_one_mtu_from_the_lower_ranked_destination() {
        // 6 packets / 40 ms outranks 4 packets / 40 ms.
        let mut ds = [d(6, 40), d(4, 40)];
        assert_eq!(DYN.grant(0, MTU, 10 * MTU, MTU, &mut ds), MTU);
        assert_eq!(
            packets(&ds),
            [6, 3],
            "the grower's window grows by the caller"
        );
        // The lower-ranked one cannot take from the higher-ranked one: denied.
        let mut ds = [d(6, 40), d(4, 40)];
        assert_eq!(DYN.grant(1, MTU, 10 * MTU, MTU, &mut ds), 0);
        assert_eq!(packets(&ds), [6, 4]);
    }

    #[test]
    fn dynamic_ties_in_throughput_go_to_the_lower_delay_and_nobody_drops_below_one_mtu() {
        // Equal cwnd/srtt (2/20 = 4/40): the 20 ms destination ranks higher.
        let mut ds = [d(4, 40), d(2, 20)];
        assert_eq!(DYN.grant(1, MTU, 6 * MTU, MTU, &mut ds), MTU);
        assert_eq!(packets(&ds), [3, 2]);
        let mut ds = [d(9, 10), d(1, 40)];
        assert_eq!(
            DYN.grant(0, MTU, 10 * MTU, MTU, &mut ds),
            0,
            "the other is at one MTU"
        );
    }

    #[test]
    fn dynamic_by_bandwidth_lets_the_faster_path_take_from_the_larger_window() {
        // Path 0 measures 21 Mbit/s with a small window, path 1 20 Mbit/s with a large one.
        let wm = WindowManagement::Dynamic(Rank::Bandwidth);
        let mut ds = [
            D {
                bw: Some(21e6 / 8.0),
                ..d(2, 40)
            },
            D {
                bw: Some(20e6 / 8.0),
                ..d(8, 40)
            },
        ];
        assert_eq!(wm.grant(0, MTU, 10 * MTU, MTU, &mut ds), MTU);
        assert_eq!(packets(&ds), [2, 7]);
        assert_eq!(
            wm.grant(1, MTU, 9 * MTU, MTU, &mut ds),
            0,
            "path 1 ranks lower"
        );
        // Without an estimate, CWND/SRTT stands in: 8 packets / 40 ms beat 2 / 40 ms.
        let mut ds = [
            d(2, 40),
            D {
                bw: None,
                ..d(8, 40)
            },
        ];
        assert_eq!(wm.grant(1, MTU, 10 * MTU, MTU, &mut ds), MTU);
        assert_eq!(packets(&ds), [1, 8]);
    }

    #[test]
    fn static_within_the_limit_takes_only_what_is_needed_from_windows_over_their_limits() {
        let wm = WindowManagement::Static(vec![5, 5]);
        let mut ds = [d(3, 40), d(7, 40)];
        assert_eq!(wm.grant(0, MTU, 10 * MTU, MTU, &mut ds), MTU);
        assert_eq!(packets(&ds), [3, 6]);
        // With room left no one gives way.
        let mut ds = [d(3, 40), d(6, 40)];
        assert_eq!(wm.grant(0, MTU, 10 * MTU, MTU, &mut ds), MTU);
        assert_eq!(packets(&ds), [3, 6]);
        // Nobody over a limit: denied.
        let mut ds = [d(5, 40), d(5, 40)];
        assert_eq!(wm.grant(0, MTU, 10 * MTU, MTU, &mut ds), 0);
    }

    #[test]
    fn static_growth_past_the_limit_needs_room_and_a_window_below_the_bdp() {
        let wm = WindowManagement::Static(vec![2, 5]);
        let mut ds = [
            D {
                bdp: Some(4 * MTU),
                ..d(2, 40)
            },
            d(3, 40),
        ];
        assert_eq!(
            wm.grant(0, MTU, 10 * MTU, MTU, &mut ds),
            MTU,
            "room, and 2 < BDP 4"
        );
        let mut ds = [
            D {
                bdp: Some(4 * MTU),
                ..d(4, 40)
            },
            d(3, 40),
        ];
        assert_eq!(wm.grant(0, MTU, 10 * MTU, MTU, &mut ds), 0, "at the BDP");
        let mut ds = [
            D {
                bdp: Some(9 * MTU),
                ..d(5, 40)
            },
            d(5, 40),
        ];
        assert_eq!(
            wm.grant(0, MTU, 10 * MTU, MTU, &mut ds),
            0,
            "the buffer is full"
        );
        let mut ds = [d(2, 40), d(3, 40)];
        assert_eq!(
            wm.grant(0, MTU, 10 * MTU, MTU, &mut ds),
            0,
            "no BDP estimate yet"
        );
    }

    #[test]
    fn dynamic_denial_leaves_the_lower_ranked_window_untouched() {
        // RFC-mode windows need not be whole MTUs: the lower-ranked one can give only 750 bytes of
        // the 1500 asked, so the growth is denied (§5.1 "if none can") and nothing is taken.
        let mut ds = [
            d(6, 40),
            D {
                cwnd: MTU + 750,
                ..d(1, 40)
            },
        ];
        let rbuf = 7 * MTU + 750;
        assert_eq!(DYN.grant(0, MTU, rbuf, MTU, &mut ds), 0);
        assert_eq!([ds[0].cwnd, ds[1].cwnd], [6 * MTU, MTU + 750]);
    }

    #[test]
    fn static_denial_leaves_windows_over_their_limits_untouched() {
        // Destination 1 is 750 bytes over its 2-packet limit; the grower needs 1500: denied, and the
        // 750 stay (§5.2 reduces an over-limit window only for a growth it makes possible).
        let wm = WindowManagement::Static(vec![6, 2]);
        let mut ds = [
            d(5, 40),
            D {
                cwnd: 2 * MTU + 750,
                ..d(1, 40)
            },
        ];
        let rbuf = 7 * MTU + 750;
        assert_eq!(wm.grant(0, MTU, rbuf, MTU, &mut ds), 0);
        assert_eq!([ds[0].cwnd, ds[1].cwnd], [5 * MTU, 2 * MTU + 750]);
    }

    #[test]
    fn none_grants_everything() {
        let mut ds = [d(60, 40), d(60, 40)];
        assert_eq!(
            WindowManagement::None.grant(0, MTU, 10 * MTU, MTU, &mut ds),
            MTU
        );
    }
}
