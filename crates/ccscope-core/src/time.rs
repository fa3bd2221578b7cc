//! Simulated time in integer nanoseconds: exact, totally ordered, replayable.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// The longest run a scenario may simulate, in seconds (115 days; integer ns reach 584 years). Any time a
/// scenario or a controller's parameter gives is bounded by it.
pub const MAX_RUN_S: f64 = 1e7;

/// The fastest link a scenario may declare, Mbit/s (and so the highest rate a parameter may name).
pub const MAX_RATE_MBPS: f64 = 1e9;

/// The slowest link a scenario may declare, Mbit/s: one bit per second (rates are integer bits per second;
/// below one, packets would never leave).
pub const MIN_RATE_MBPS: f64 = 1e-6;

/// An instant of simulated time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A span of simulated time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub u64);

pub const NS_PER_MS: u64 = 1_000_000;
pub const NS_PER_S: u64 = 1_000_000_000;

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub const fn from_ms(ms: u64) -> Time {
        Time(ms * NS_PER_MS)
    }
    pub fn from_secs_f64(s: f64) -> Time {
        Time((s * NS_PER_S as f64).round() as u64)
    }
    pub const fn as_ns(self) -> u64 {
        self.0
    }
    /// Whole milliseconds, rounded down: the resolution of Mahimahi's logs.
    pub const fn as_ms_floor(self) -> u64 {
        self.0 / NS_PER_MS
    }
    pub fn as_ms_f64(self) -> f64 {
        self.0 as f64 / NS_PER_MS as f64
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_S as f64
    }
    /// Time elapsed since `earlier`, zero if `earlier` is later.
    pub fn since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    pub const ZERO: Dur = Dur(0);
    pub const MAX: Dur = Dur(u64::MAX);

    pub const fn from_ms(ms: u64) -> Dur {
        Dur(ms * NS_PER_MS)
    }
    pub const fn from_us(us: u64) -> Dur {
        Dur(us * 1000)
    }
    pub fn from_ms_f64(ms: f64) -> Dur {
        Dur((ms * NS_PER_MS as f64).round().max(0.0) as u64)
    }
    pub fn from_secs_f64(s: f64) -> Dur {
        Dur((s * NS_PER_S as f64).round().max(0.0) as u64)
    }
    pub const fn as_ns(self) -> u64 {
        self.0
    }
    pub fn as_ms_f64(self) -> f64 {
        self.0 as f64 / NS_PER_MS as f64
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_S as f64
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    fn add(self, d: Dur) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<Time> for Time {
    type Output = Dur;
    fn sub(self, t: Time) -> Dur {
        debug_assert!(t <= self, "time went backwards: {t:?} > {self:?}");
        Dur(self.0.saturating_sub(t.0))
    }
}
impl Add for Dur {
    type Output = Dur;
    fn add(self, d: Dur) -> Dur {
        Dur(self.0.saturating_add(d.0))
    }
}
impl Sub for Dur {
    type Output = Dur;
    fn sub(self, d: Dur) -> Dur {
        Dur(self.0.saturating_sub(d.0))
    }
}
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.as_secs_f64())
    }
}
impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}ms", self.as_ms_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_arithmetic_is_exact_in_nanoseconds() {
        let t = Time::from_ms(20) + Dur::from_us(1500);
        assert_eq!(t.as_ns(), 21_500_000);
        assert_eq!(t.as_ms_floor(), 21);
        assert_eq!(t - Time::from_ms(1), Dur(20_500_000));
        assert_eq!(Time::from_ms(1).since(t), Dur::ZERO);
    }
}
