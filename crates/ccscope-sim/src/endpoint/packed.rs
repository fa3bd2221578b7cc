//! Optional sequence numbers and times in 8 bytes (`Option<u64>` and `Option<Time>` take 16): the
//! value `u64::MAX`, which no sequence number or deadline of a run reaches, stands for none. They
//! keep the per-flow state an ACK touches in fewer cache lines.

use ccscope_core::Time;

/// A type with a value set aside to mean "none".
pub trait Sentinel: Copy + PartialEq {
    const NONE: Self;
}

impl Sentinel for u64 {
    const NONE: u64 = u64::MAX;
}

impl Sentinel for Time {
    const NONE: Time = Time(u64::MAX);
}

/// An `Option<T>` stored as a `T`, `T::NONE` for `None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packed<T: Sentinel>(T);

impl<T: Sentinel> Packed<T> {
    pub const NONE: Packed<T> = Packed(T::NONE);

    #[inline]
    pub fn get(self) -> Option<T> {
        (self.0 != T::NONE).then_some(self.0)
    }
    #[inline]
    pub fn is_some(self) -> bool {
        self.0 != T::NONE
    }
    #[inline]
    pub fn is_none(self) -> bool {
        self.0 == T::NONE
    }
    #[inline]
    pub fn is_some_and(self, f: impl FnOnce(T) -> bool) -> bool {
        self.get().is_some_and(f)
    }
    #[inline]
    pub fn is_none_or(self, f: impl FnOnce(T) -> bool) -> bool {
        self.get().is_none_or(f)
    }
    #[inline]
    pub fn map_or<U>(self, default: U, f: impl FnOnce(T) -> U) -> U {
        self.get().map_or(default, f)
    }
}

impl Packed<Time> {
    /// The earlier of two deadlines, none when both are: none is `Time(u64::MAX)`, later than any
    /// deadline, so it is their minimum (no branch).
    #[inline]
    pub fn earliest(self, other: Packed<Time>) -> Packed<Time> {
        Packed(self.0.min(other.0))
    }
}

impl<T: Sentinel> From<Option<T>> for Packed<T> {
    #[inline]
    fn from(v: Option<T>) -> Packed<T> {
        // A deadline saturated to the end of time would read as none: no run gets there.
        debug_assert!(v != Some(T::NONE), "value reserved for none");
        Packed(v.unwrap_or(T::NONE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_round_trips_every_value_but_the_sentinel_and_is_half_an_option() {
        for v in [Some(0u64), Some(1), Some(u64::MAX - 1), None] {
            assert_eq!(Packed::from(v).get(), v);
        }
        assert_eq!(Packed::from(Some(Time(5))).get(), Some(Time(5)));
        assert!(Packed::<Time>::NONE.is_none());
        assert_eq!(std::mem::size_of::<Packed<Time>>(), 8);
        assert_eq!(std::mem::size_of::<Option<Time>>(), 16);
    }

    #[test]
    fn the_earliest_of_two_deadlines_is_the_earlier_one_or_the_one_set() {
        let (none, t3, t5) = (
            Packed::<Time>::NONE,
            Packed::from(Some(Time(3))),
            Packed::from(Some(Time(5))),
        );
        assert_eq!(t3.earliest(t5).get(), Some(Time(3)));
        assert_eq!(t5.earliest(t3).get(), Some(Time(3)));
        assert_eq!(none.earliest(t5).get(), Some(Time(5)));
        assert_eq!(t5.earliest(none).get(), Some(Time(5)));
        assert_eq!(none.earliest(none).get(), None);
    }
}
