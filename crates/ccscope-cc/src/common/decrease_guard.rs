//! React to congestion at most once per round trip.
//!
//! After a decrease, further congestion signals are ignored until an ACK arrives for a packet sent
//! after the decrease: those packets are the first to see the smaller window (the NewReno recovery
//! rule, RFC 6582 §3.2, applied to delay triggers).

use ccscope_core::Time;

#[derive(Clone, Copy, Debug, Default)]
pub struct DecreaseGuard {
    last_decrease: Option<Time>,
}

impl DecreaseGuard {
    /// True if a congestion signal carried by a packet sent at `send_time` may cause a decrease.
    pub fn may_decrease(&self, send_time: Time) -> bool {
        self.last_decrease.is_none_or(|t| send_time > t)
    }

    pub fn decreased(&mut self, now: Time) {
        self.last_decrease = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_sent_before_a_decrease_cannot_trigger_another() {
        let mut g = DecreaseGuard::default();
        assert!(g.may_decrease(Time(5)));
        g.decreased(Time(10));
        assert!(!g.may_decrease(Time(9)));
        assert!(!g.may_decrease(Time(10)));
        assert!(g.may_decrease(Time(11)));
    }
}
