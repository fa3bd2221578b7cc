//! AIMD with a delay trigger (paper 001 §2.1-2.2; the delay-triggered variant of §3.1 is the same
//! controller with a lower `rtt_threshold_ms`).
//!
//! Each ACK grows the window by `additive_increase / cwnd` (so `additive_increase` packets per RTT);
//! an RTT sample above `rtt_threshold_ms` or a lost packet multiplies it by `decrease_factor`, at most
//! once per round trip.

use serde::{Deserialize, Serialize};

use crate::common::triggered_window::{self as shared, TriggeredWindow, WindowLimits, WindowRule};
use crate::params::{invalid, ParamError, ParamSpec};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Initial window in packets (paper 001 §2.2: 2).
    pub initial_window: f64,
    /// Packets added per round trip (paper 001 §2.2, Table 2: 2).
    pub additive_increase: f64,
    /// Window multiplier on congestion (paper 001 §2.2, Table 2: 0.4).
    pub decrease_factor: f64,
    /// RTT above which the window is decreased (paper 001 §2.2: 210 ms; §3.1 tuned: 100 ms).
    pub rtt_threshold_ms: f64,
    /// Decrease on packet loss too.
    pub decrease_on_loss: bool,
    /// Smallest window in packets.
    pub min_window: f64,
    /// No-ACK time before a packet is sent anyway.
    pub timeout_ms: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            initial_window: 2.0,
            additive_increase: 2.0,
            decrease_factor: 0.4,
            rtt_threshold_ms: 210.0,
            decrease_on_loss: true,
            min_window: 1.0,
            timeout_ms: 1000.0,
        }
    }
}

impl crate::params::Params for Params {
    const SPEC: &'static [ParamSpec] = &[
        shared::INITIAL_WINDOW,
        ParamSpec {
            name: "additive_increase",
            unit: "packets/RTT",
            doc: "additive increase per RTT (paper 001 Table 2: 2)",
        },
        ParamSpec {
            name: "decrease_factor",
            unit: "ratio",
            doc: "multiplicative decrease (paper 001 Table 2: 0.4)",
        },
        ParamSpec {
            name: "rtt_threshold_ms",
            unit: "ms",
            doc: "decrease when an RTT exceeds this (paper 001 §2.2: 210; §3.1: 100)",
        },
        shared::DECREASE_ON_LOSS,
        shared::MIN_WINDOW,
        shared::TIMEOUT_MS,
    ];
    fn validate(&self) -> Result<(), ParamError> {
        self.limits().validate()?;
        if !(self.additive_increase >= 0.0) {
            return Err(invalid("additive_increase", "must be >= 0"));
        }
        if !(self.decrease_factor > 0.0 && self.decrease_factor <= 1.0) {
            return Err(invalid("decrease_factor", "must be in (0, 1]"));
        }
        Ok(())
    }
}

impl WindowRule for Params {
    fn limits(&self) -> WindowLimits {
        shared::window_limits!(self, f64::INFINITY)
    }
    // Paper 001 §2.1: additive increase, spread over the ACKs of one window.
    fn increase(&self, cwnd: f64) -> f64 {
        shared::additive_increase(cwnd, self.additive_increase)
    }
    // Paper 001 §2.2: multiplicative decrease, once per round trip.
    fn decrease(&self, cwnd: f64) -> f64 {
        cwnd * self.decrease_factor
    }
}

pub type Aimd = TriggeredWindow<Params>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Script;
    use ccscope_core::Dur;

    #[test]
    fn grows_by_additive_increase_per_window_of_acks() {
        let mut s = Script::new(Aimd::new(Params {
            initial_window: 10.0,
            ..Default::default()
        }));
        s.fill_window();
        s.ack_all(Dur::from_ms(50));
        // 10 ACKs at w ~ 10..12: w grows by ~2 over one window.
        assert!((s.cc.cwnd - 11.84).abs() < 0.05, "cwnd {}", s.cc.cwnd);
    }

    #[test]
    fn high_rtt_decreases_once_per_round_trip() {
        let mut s = Script::new(Aimd::new(Params {
            initial_window: 10.0,
            ..Default::default()
        }));
        s.fill_window();
        s.ack_all(Dur::from_ms(300));
        assert_eq!(s.cc.cwnd, 4.0);
    }
}
