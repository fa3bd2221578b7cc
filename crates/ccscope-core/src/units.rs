//! Bandwidth in integer bits per second; transmission times computed exactly.

use crate::time::{Dur, NS_PER_S};

/// A link or pacing rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bandwidth(pub u64);

impl Bandwidth {
    pub const fn from_bps(bps: u64) -> Bandwidth {
        Bandwidth(bps)
    }
    pub fn from_mbps(mbps: f64) -> Bandwidth {
        Bandwidth((mbps * 1e6).round().max(0.0) as u64)
    }
    pub fn as_mbps(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub const fn bps(self) -> u64 {
        self.0
    }
    /// Time to serialize `bytes` at this rate, rounded up to the next nanosecond.
    pub fn tx_time(self, bytes: u64) -> Dur {
        if self.0 == 0 {
            return Dur::MAX;
        }
        if bytes < 1 << 31 {
            // bytes x 8e9 < 2^64: the same quotient without a 128-bit division (a library call).
            return Dur((bytes * 8 * NS_PER_S).div_ceil(self.0));
        }
        let num = bytes as u128 * 8 * NS_PER_S as u128;
        Dur(num.div_ceil(self.0 as u128).min(u64::MAX as u128) as u64)
    }
    /// Rate that moves `bytes` in `d`.
    pub fn from_bytes_per(bytes: u64, d: Dur) -> Bandwidth {
        if d.0 == 0 {
            return Bandwidth(u64::MAX);
        }
        Bandwidth((bytes as u128 * 8 * NS_PER_S as u128 / d.0 as u128).min(u64::MAX as u128) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_1500_byte_packet_takes_one_ms_at_12_mbps() {
        assert_eq!(Bandwidth::from_mbps(12.0).tx_time(1500), Dur::from_ms(1));
        assert_eq!(Bandwidth::from_bps(3).tx_time(1), Dur(2_666_666_667));
        assert_eq!(
            Bandwidth::from_bytes_per(1500, Dur::from_ms(1)),
            Bandwidth::from_mbps(12.0)
        );
    }

    #[test]
    fn tx_time_rounds_up_the_same_on_both_sides_of_the_64_bit_shortcut() {
        let wide = |r: u64, b: u64| (b as u128 * 8 * NS_PER_S as u128).div_ceil(r as u128) as u64;
        for r in [1, 3, 7, 12_000_000, 999_999_937, u64::MAX] {
            for b in [0, 1, 52, 1500, (1 << 31) - 1, 1 << 31, (1 << 31) + 1] {
                assert_eq!(
                    Bandwidth(r).tx_time(b),
                    Dur(wide(r, b)),
                    "rate {r} bytes {b}"
                );
            }
        }
    }
}
