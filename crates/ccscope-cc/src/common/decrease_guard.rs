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

/// What a delay-triggered window controller (paper 001 §2-3) should do with an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reaction {
    Increase,
    Decrease,
    /// A congestion signal inside the round trip of the last decrease: ignore it.
    Hold,
}

/// The trigger shared by AIMD, AIAD and MIMD: an RTT above the threshold (or, if enabled, a loss)
/// asks for a decrease, at most once per round trip; any other ACK asks for an increase.
#[derive(Clone, Copy, Debug)]
pub struct DelayTrigger {
    rtt_threshold_ms: f64,
    decrease_on_loss: bool,
    guard: DecreaseGuard,
}

impl DelayTrigger {
    pub fn new(rtt_threshold_ms: f64, decrease_on_loss: bool) -> Self {
        DelayTrigger {
            rtt_threshold_ms,
            decrease_on_loss,
            guard: DecreaseGuard::default(),
        }
    }

    fn congestion(&mut self, now: Time, send_time: Time) -> Reaction {
        if self.guard.may_decrease(send_time) {
            self.guard.decreased(now);
            Reaction::Decrease
        } else {
            Reaction::Hold
        }
    }

    pub fn on_ack(&mut self, now: Time, ev: &crate::AckEvent) -> Reaction {
        if ev.rtt.as_ms_f64() > self.rtt_threshold_ms {
            self.congestion(now, ev.send_time)
        } else {
            Reaction::Increase
        }
    }

    pub fn on_loss(&mut self, now: Time, ev: &crate::LossEvent) -> Reaction {
        if self.decrease_on_loss {
            self.congestion(now, ev.send_time)
        } else {
            Reaction::Hold
        }
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
