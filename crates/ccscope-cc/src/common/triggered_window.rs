//! The window that paper 001's delay-triggered controllers keep (AIMD §2, AIAD §3.2, MIMD §3.3).
//!
//! The three differ only in how one event grows or shrinks the window; the trigger (an RTT above the
//! threshold or a loss asks for a decrease, at most once per round trip), the floor and cap, the
//! no-ACK timeout and their parameters are written here once. A controller file holds its `Params`
//! and a [`WindowRule`].

use ccscope_core::{Dur, Time};

use super::{DelayTrigger, Reaction};
use crate::params::{check_timer_ms, invalid, ParamError, ParamSpec};
use crate::{AckEvent, Controller, LossEvent};

/// The settings every delay-triggered window shares, read from a controller's `Params`.
#[derive(Clone, Copy, Debug)]
pub struct WindowLimits {
    pub initial_window: f64,
    pub min_window: f64,
    /// `f64::INFINITY` where the controller has no cap.
    pub max_window: f64,
    pub rtt_threshold_ms: f64,
    pub decrease_on_loss: bool,
    pub timeout_ms: f64,
}

impl WindowLimits {
    /// Range checks of the shared settings; the rule's own fields (and a cap) are checked by its `Params`.
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.initial_window >= 0.0) {
            return Err(invalid("initial_window", "must be >= 0"));
        }
        if !(self.min_window >= 0.0) {
            return Err(invalid("min_window", "must be >= 0"));
        }
        check_timer_ms("timeout_ms", self.timeout_ms)?;
        if !(self.rtt_threshold_ms > 0.0) {
            return Err(invalid("rtt_threshold_ms", "must be > 0"));
        }
        Ok(())
    }
}

/// The [`WindowLimits`] of a rule's `Params`, whose shared settings carry the shared names (paper 001
/// §2.2's parameters); `max_window` is the rule's cap, `f64::INFINITY` where it has none.
macro_rules! window_limits {
    ($params:expr, $max_window:expr) => {
        $crate::common::triggered_window::WindowLimits {
            initial_window: $params.initial_window,
            min_window: $params.min_window,
            max_window: $max_window,
            rtt_threshold_ms: $params.rtt_threshold_ms,
            decrease_on_loss: $params.decrease_on_loss,
            timeout_ms: $params.timeout_ms,
        }
    };
}
pub(crate) use window_limits;

/// How one controller moves its window; the floor and cap are applied by [`TriggeredWindow`].
pub trait WindowRule: std::fmt::Debug + Send {
    fn limits(&self) -> WindowLimits;
    /// The window after an ACK that asks for an increase.
    fn increase(&self, cwnd: f64) -> f64;
    /// The window after a congestion signal outside the last decrease's round trip.
    fn decrease(&self, cwnd: f64) -> f64;
}

/// Paper 001 §2.1's additive increase: `packets_per_rtt` spread over the ACKs of one window.
pub fn additive_increase(cwnd: f64, packets_per_rtt: f64) -> f64 {
    cwnd + packets_per_rtt / cwnd.max(1.0)
}

/// A window moved by a [`WindowRule`] under the shared delay trigger.
#[derive(Debug)]
pub struct TriggeredWindow<R> {
    pub(crate) rule: R,
    pub(crate) cwnd: f64,
    limits: WindowLimits,
    trigger: DelayTrigger,
}

impl<R: WindowRule> TriggeredWindow<R> {
    pub fn new(rule: R) -> Self {
        let limits = rule.limits();
        TriggeredWindow {
            cwnd: limits
                .initial_window
                .max(limits.min_window)
                .min(limits.max_window),
            trigger: DelayTrigger::new(limits.rtt_threshold_ms, limits.decrease_on_loss),
            limits,
            rule,
        }
    }

    fn react(&mut self, r: Reaction) {
        match r {
            Reaction::Increase => {
                self.cwnd = self.rule.increase(self.cwnd).min(self.limits.max_window);
            }
            Reaction::Decrease => {
                self.cwnd = self.rule.decrease(self.cwnd).max(self.limits.min_window);
            }
            Reaction::Hold => {}
        }
    }
}

impl<R: WindowRule> Controller for TriggeredWindow<R> {
    fn on_ack(&mut self, now: Time, ev: &AckEvent) {
        let r = self.trigger.on_ack(now, ev);
        self.react(r);
    }
    fn on_loss(&mut self, now: Time, ev: &LossEvent) {
        let r = self.trigger.on_loss(now, ev);
        self.react(r);
    }
    fn cwnd(&self) -> u32 {
        self.cwnd as u32
    }
    fn timeout(&self) -> Dur {
        Dur::from_ms_f64(self.limits.timeout_ms)
    }
}

/// The shared parameters' documentation, for each controller's `Params::SPEC`.
pub const INITIAL_WINDOW: ParamSpec = ParamSpec {
    name: "initial_window",
    unit: "packets",
    doc: "initial window (paper 001 §2.2: 2)",
};
pub const RTT_THRESHOLD_MS: ParamSpec = ParamSpec {
    name: "rtt_threshold_ms",
    unit: "ms",
    doc: "decrease when an RTT exceeds this (paper 001 §3.1: 100)",
};
pub const DECREASE_ON_LOSS: ParamSpec = ParamSpec {
    name: "decrease_on_loss",
    unit: "bool",
    doc: "also decrease on a lost packet",
};
pub const MIN_WINDOW: ParamSpec = ParamSpec {
    name: "min_window",
    unit: "packets",
    doc: "window floor",
};
pub const TIMEOUT_MS: ParamSpec = ParamSpec {
    name: "timeout_ms",
    unit: "ms",
    doc: "no-ACK time before a packet is sent anyway (datagrump: 1000)",
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delay::{aiad, mimd};
    use crate::window::aimd;

    /// A `Params` of no controller: the shared mapping reads any struct with the shared names.
    struct Shared {
        initial_window: f64,
        min_window: f64,
        rtt_threshold_ms: f64,
        decrease_on_loss: bool,
        timeout_ms: f64,
    }

    fn fields(l: WindowLimits) -> (f64, f64, f64, f64, bool, f64) {
        (
            l.initial_window,
            l.min_window,
            l.max_window,
            l.rtt_threshold_ms,
            l.decrease_on_loss,
            l.timeout_ms,
        )
    }

    #[test]
    fn every_delay_triggered_rule_reads_its_limits_through_the_one_shared_mapping() {
        let s = Shared {
            initial_window: 3.0,
            min_window: 1.5,
            rtt_threshold_ms: 77.0,
            decrease_on_loss: false,
            timeout_ms: 250.0,
        };
        let want = (3.0, 1.5, f64::INFINITY, 77.0, false, 250.0);
        assert_eq!(fields(window_limits!(s, f64::INFINITY)), want);
        let aimd = aimd::Params {
            initial_window: 3.0,
            min_window: 1.5,
            rtt_threshold_ms: 77.0,
            decrease_on_loss: false,
            timeout_ms: 250.0,
            ..Default::default()
        };
        assert_eq!(fields(aimd.limits()), want);
        let aiad = aiad::Params {
            initial_window: 3.0,
            min_window: 1.5,
            rtt_threshold_ms: 77.0,
            decrease_on_loss: false,
            timeout_ms: 250.0,
            ..Default::default()
        };
        assert_eq!(fields(aiad.limits()), want);
        // MIMD is the same mapping with its own cap.
        let mimd = mimd::Params {
            initial_window: 3.0,
            min_window: 1.5,
            max_window: 900.0,
            rtt_threshold_ms: 77.0,
            decrease_on_loss: false,
            timeout_ms: 250.0,
            ..Default::default()
        };
        assert_eq!(fields(mimd.limits()), (3.0, 1.5, 900.0, 77.0, false, 250.0));
    }
}
