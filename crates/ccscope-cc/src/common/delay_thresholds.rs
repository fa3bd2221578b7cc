//! TIMELY's Algorithm 1 as paper 001 §4.2 runs it: the delay-threshold branches, the rate enforced as a
//! window, and their parameter checks, shared by `timely` and `queue_gradient`.

use crate::params::{check_timer_ms, invalid, ParamError, ParamSpec};

pub use super::triggered_window::TIMEOUT_MS;

/// The shared parameters' documentation, for `timely`'s and `queue_gradient`'s `Params::SPEC`.
pub const BETA: ParamSpec = ParamSpec {
    name: "beta",
    unit: "ratio",
    doc: "multiplicative decrement factor (paper 001 §4.2.2: 0.3)",
};
pub const DELTA: ParamSpec = ParamSpec {
    name: "delta",
    unit: "packets",
    doc: "additive increment per event (paper 001 §4.2.2: 0.25)",
};
pub const T_LOW_MS: ParamSpec = ParamSpec {
    name: "t_low_ms",
    unit: "ms",
    doc: "always increase below this RTT (paper 001 §4.2.2: 60)",
};
pub const T_HIGH_MS: ParamSpec = ParamSpec {
    name: "t_high_ms",
    unit: "ms",
    doc: "cut in proportion to the RTT above this (paper 001 §4.2.2: 150)",
};
pub const INITIAL_RATE: ParamSpec = ParamSpec {
    name: "initial_rate",
    unit: "packets",
    doc: "initial rate, enforced as a window (paper 001 §4.2.2: 50)",
};
pub const RATE_FLOOR: ParamSpec = ParamSpec {
    name: "rate_floor",
    unit: "packets",
    doc: "rate lower bound (paper 001 §4.2.2: 1)",
};
pub const MAX_WINDOW: ParamSpec = ParamSpec {
    name: "max_window",
    unit: "packets",
    doc: "rate upper bound (ours; keeps the window finite)",
};

/// Range checks on Algorithm 1's constants, shared with `queue_gradient`.
pub fn check_algorithm1_params(
    alpha: f64,
    beta: f64,
    delta: f64,
    t_low_ms: f64,
    t_high_ms: f64,
) -> Result<(), ParamError> {
    if !(0.0..=1.0).contains(&alpha) {
        return Err(invalid("alpha", "must be in [0, 1]"));
    }
    if !(0.0..=1.0).contains(&beta) {
        return Err(invalid("beta", "must be in [0, 1]"));
    }
    if !(delta >= 0.0 && delta.is_finite()) {
        return Err(invalid("delta", "must be >= 0 and finite"));
    }
    if !(t_low_ms >= 0.0) {
        return Err(invalid("t_low_ms", "must be >= 0"));
    }
    if !(t_high_ms > t_low_ms && t_high_ms.is_finite()) {
        return Err(invalid("t_high_ms", "must be finite and > t_low_ms"));
    }
    Ok(())
}

/// Range checks on a rate enforced as a window, shared with `queue_gradient`.
pub fn check_rate_params(
    initial_rate: f64,
    rate_floor: f64,
    max_window: f64,
    timeout_ms: f64,
) -> Result<(), ParamError> {
    if !(initial_rate >= 0.0) {
        return Err(invalid("initial_rate", "must be >= 0"));
    }
    if !(rate_floor >= 0.0) {
        return Err(invalid("rate_floor", "must be >= 0"));
    }
    if !(max_window >= rate_floor && max_window > 0.0 && max_window.is_finite()) {
        return Err(invalid(
            "max_window",
            "must be finite, > 0 and >= rate_floor",
        ));
    }
    check_timer_ms("timeout_ms", timeout_ms)?;
    Ok(())
}

/// The branch of Algorithm 1 the latest completion event took (reported by `state_name`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// No completion event yet.
    Start,
    /// new_rtt < T_low: additive increase.
    BelowTLow,
    /// new_rtt > T_high: decrease in proportion to the excess.
    AboveTHigh,
    /// Gradient <= 0: rate + delta.
    Additive,
    /// Gradient <= 0 for `hai_threshold` events: rate + 5 delta.
    Hyperactive,
    /// Gradient > 0: decrease in proportion to the gradient.
    GradientDecrease,
}

impl Step {
    pub fn name(self) -> &'static str {
        match self {
            Step::Start => "start",
            Step::BelowTLow => "below_t_low",
            Step::AboveTHigh => "above_t_high",
            Step::Additive => "additive",
            Step::Hyperactive => "hyperactive",
            Step::GradientDecrease => "gradient_decrease",
        }
    }
}

/// Algorithm 1's two delay thresholds: the new rate when `rtt_ms` lies outside `[t_low, t_high]`.
pub fn threshold_step(
    rate: f64,
    rtt_ms: f64,
    t_low_ms: f64,
    t_high_ms: f64,
    delta: f64,
    beta: f64,
) -> Option<(f64, Step)> {
    if rtt_ms < t_low_ms {
        // Algorithm 1: rate + delta.
        Some((rate + delta, Step::BelowTLow))
    } else if rtt_ms > t_high_ms {
        // Algorithm 1: rate (1 - beta (1 - T_high / new_rtt)).
        Some((
            rate * (1.0 - beta * (1.0 - t_high_ms / rtt_ms)),
            Step::AboveTHigh,
        ))
    } else {
        None
    }
}

/// The window that enforces `rate`: whole packets, but never under the floor (paper 001 §4.2.2).
pub fn window_of(rate: f64, rate_floor: f64) -> u32 {
    (rate as u32).max(rate_floor.ceil() as u32)
}
