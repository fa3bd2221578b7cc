//! TIMELY delay-gradient control as paper 001 runs it (§4.2, Algorithm 1, after Mittal et al. 2015).
//!
//! Every ACK is one completion event: the RTT difference to the previous sample feeds an EWMA, and the
//! rate moves by one of Algorithm 1's four branches (below `t_low`: add `delta`; above `t_high`: cut in
//! proportion to the excess; otherwise add on a non-positive gradient, cut in proportion to a positive
//! one).
//!
//! "Rate" is a window in packets, as in the write-up: datagrump controllers only set a window, so the
//! team enforced Algorithm 1's rate as the number of packets in flight. Further choices:
//! - the first sample has no predecessor, so its difference is 0 (prev_rtt = new_rtt);
//! - HAI (off in the tuned run, §4.2.2) counts consecutive events whose gradient is `<= 0`, including
//!   the current one; a positive gradient or either threshold branch restarts the count;
//! - the rate is clamped to `[rate_floor, max_window]` after every event (§4.2.2 floor of 1; the cap is
//!   ours, to keep the window finite);
//! - losses and timeouts do not change the rate: Algorithm 1 reacts to RTTs only.

use ccscope_core::{Dur, Time};
use serde::{Deserialize, Serialize};

use crate::common::delay_thresholds::{
    self as algorithm1, check_algorithm1_params, check_rate_params, threshold_step, window_of, Step,
};
use crate::common::Ewma;
use crate::params::{invalid, ParamError, ParamSpec};
use crate::{AckEvent, Controller};

/// HAI's increment multiplier (paper 001 §4.2 Algorithm 1: N = 5).
const HAI_N: f64 = 5.0;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// EWMA weight of a new RTT difference (paper 001 §4.2.2 tuned: 0.8).
    pub alpha: f64,
    /// Multiplicative decrement factor (paper 001 §4.2.2 tuned: 0.3).
    pub beta: f64,
    /// Additive increment in packets (paper 001 §4.2.2 tuned: 0.25).
    pub delta: f64,
    /// RTT below which the rate grows regardless of the gradient (paper 001 §4.2.2 tuned: 60 ms).
    pub t_low_ms: f64,
    /// RTT above which the rate is cut (paper 001 §4.2.2 tuned: 150 ms).
    pub t_high_ms: f64,
    /// Normaliser of the gradient, `minRTT` (paper 001 §4.2.2: 50 ms, above the 42 ms measured).
    pub min_rtt_ms: f64,
    /// Initial rate in packets (paper 001 §4.2.2: 50, for a head start).
    pub initial_rate: f64,
    /// Hyperactive increase (paper 001 §4.2.2: disabled in the tuned run).
    pub hai: bool,
    /// Consecutive non-positive gradients before HAI adds `5 delta` (paper 001 Algorithm 1: 5).
    pub hai_threshold: u32,
    /// Smallest rate in packets (paper 001 §4.2.2: lower-bounded by 1).
    pub rate_floor: f64,
    /// Largest rate in packets (ours; keeps the window finite).
    pub max_window: f64,
    /// No-ACK time before a packet is sent anyway (datagrump's default 1000 ms).
    pub timeout_ms: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            alpha: 0.8,
            beta: 0.3,
            delta: 0.25,
            t_low_ms: 60.0,
            t_high_ms: 150.0,
            min_rtt_ms: 50.0,
            initial_rate: 50.0,
            hai: false,
            hai_threshold: 5,
            rate_floor: 1.0,
            max_window: 100_000.0,
            timeout_ms: 1000.0,
        }
    }
}

impl crate::params::Params for Params {
    const SPEC: &'static [ParamSpec] = &[
        ParamSpec {
            name: "alpha",
            unit: "ratio",
            doc: "EWMA weight of a new RTT difference (paper 001 §4.2.2: 0.8)",
        },
        algorithm1::BETA,
        algorithm1::DELTA,
        algorithm1::T_LOW_MS,
        algorithm1::T_HIGH_MS,
        ParamSpec {
            name: "min_rtt_ms",
            unit: "ms",
            doc: "minRTT, the gradient's normaliser (paper 001 §4.2.2: 50)",
        },
        algorithm1::INITIAL_RATE,
        ParamSpec {
            name: "hai",
            unit: "bool",
            doc: "hyperactive increase (paper 001 §4.2.2: off in the tuned run)",
        },
        ParamSpec {
            name: "hai_threshold",
            unit: "events",
            doc: "non-positive gradients in a row before HAI adds 5 delta (Algorithm 1: 5)",
        },
        algorithm1::RATE_FLOOR,
        algorithm1::MAX_WINDOW,
        algorithm1::TIMEOUT_MS,
    ];
    fn validate(&self) -> Result<(), ParamError> {
        check_algorithm1_params(
            self.alpha,
            self.beta,
            self.delta,
            self.t_low_ms,
            self.t_high_ms,
        )?;
        if !(self.min_rtt_ms > 0.0 && self.min_rtt_ms.is_finite()) {
            return Err(invalid("min_rtt_ms", "must be > 0 and finite"));
        }
        check_rate_params(
            self.initial_rate,
            self.rate_floor,
            self.max_window,
            self.timeout_ms,
        )
    }
}

#[derive(Debug)]
pub struct Timely {
    p: Params,
    /// Algorithm 1's rate, enforced as a window in packets.
    rate: f64,
    prev_rtt_ms: Option<f64>,
    /// EWMA of RTT differences in ms, starting at 0 (paper 001 §4.2.2).
    rtt_diff: Ewma,
    /// Completion events in a row with a non-positive gradient, for HAI.
    negative_events: u32,
    step: Step,
}

impl Timely {
    pub fn new(p: Params) -> Self {
        let rate = p.initial_rate.clamp(p.rate_floor, p.max_window);
        let rtt_diff = Ewma::with_initial(p.alpha, 0.0);
        Timely {
            p,
            rate,
            prev_rtt_ms: None,
            rtt_diff,
            negative_events: 0,
            step: Step::Start,
        }
    }

    /// One completion event of Algorithm 1 with `new_rtt` in ms.
    fn on_rtt(&mut self, new_rtt: f64) {
        let prev_rtt = self.prev_rtt_ms.unwrap_or(new_rtt);
        let new_rtt_diff = new_rtt - prev_rtt;
        self.prev_rtt_ms = Some(new_rtt);
        let rtt_diff = self.rtt_diff.update(new_rtt_diff);
        let normalized_gradient = rtt_diff / self.p.min_rtt_ms;
        let p = &self.p;
        let (rate, step) = if let Some(r) =
            threshold_step(self.rate, new_rtt, p.t_low_ms, p.t_high_ms, p.delta, p.beta)
        {
            self.negative_events = 0;
            r
        } else if normalized_gradient <= 0.0 {
            self.negative_events = self.negative_events.saturating_add(1);
            // Algorithm 1: N = 5 once the gradient has been negative for five completion events (HAI).
            if p.hai && self.negative_events >= p.hai_threshold {
                (self.rate + HAI_N * p.delta, Step::Hyperactive)
            } else {
                (self.rate + p.delta, Step::Additive)
            }
        } else {
            self.negative_events = 0;
            // Algorithm 1: rate (1 - beta normalized_gradient).
            (
                self.rate * (1.0 - p.beta * normalized_gradient),
                Step::GradientDecrease,
            )
        };
        debug_assert!(!rate.is_nan(), "rate is NaN after {step:?}");
        // Paper 001 §4.2.2: lower-bound the rate (1 packet); the cap keeps it finite.
        self.rate = rate.clamp(p.rate_floor, p.max_window);
        self.step = step;
    }
}

impl Controller for Timely {
    fn on_ack(&mut self, _now: Time, ev: &AckEvent) {
        self.on_rtt(ev.rtt.as_ms_f64());
    }
    fn cwnd(&self) -> u32 {
        window_of(self.rate, self.p.rate_floor)
    }
    fn timeout(&self) -> Dur {
        Dur::from_ms_f64(self.p.timeout_ms)
    }
    fn state_name(&self) -> &'static str {
        self.step.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params as _;
    use crate::testing::{assert_close, Script};
    use crate::LossCause;

    fn timely(p: Params) -> Script<Timely> {
        Script::new(Timely::new(p))
    }

    fn ack_rtts(s: &mut Script<Timely>, rtts_ms: &[u64]) {
        for &r in rtts_ms {
            s.send_and_ack(Dur::from_ms(r));
        }
    }

    #[test]
    fn rtt_below_t_low_adds_delta() {
        let mut s = timely(Params::default());
        ack_rtts(&mut s, &[40]);
        assert_eq!(s.cc.rate, 50.25);
        assert_eq!(s.cc.state_name(), "below_t_low");
    }

    #[test]
    fn rtt_above_t_high_cuts_by_beta_times_excess() {
        let mut s = timely(Params::default());
        ack_rtts(&mut s, &[300]);
        // 50 (1 - 0.3 (1 - 150/300)) = 50 * 0.85
        assert_close(s.cc.rate, 42.5);
        assert_eq!(s.cc.cwnd(), 42);
    }

    #[test]
    fn first_sample_has_zero_gradient_and_adds_delta() {
        let mut s = timely(Params::default());
        ack_rtts(&mut s, &[100]);
        assert_eq!(s.cc.rtt_diff.get(), Some(0.0));
        assert_eq!(s.cc.rate, 50.25);
        assert_eq!(s.cc.state_name(), "additive");
    }

    #[test]
    fn positive_gradient_decreases_multiplicatively() {
        let mut s = timely(Params::default());
        ack_rtts(&mut s, &[100, 110]);
        // rtt_diff = 0.2 * 0 + 0.8 * 10 = 8; gradient 8/50 = 0.16; 50.25 (1 - 0.3 * 0.16) = 47.838
        assert_close(s.cc.rtt_diff.get().unwrap(), 8.0);
        assert_close(s.cc.rate, 47.838);
        assert_eq!(s.cc.state_name(), "gradient_decrease");
    }

    #[test]
    fn negative_gradient_adds_one_delta_without_hai() {
        let mut s = timely(Params::default());
        ack_rtts(&mut s, &[100, 95, 90, 85, 80, 75]);
        // Six non-positive gradients, one delta each: HAI is off in the tuned run (§4.2.2).
        assert_eq!(s.cc.rate, 51.5);
    }

    #[test]
    fn hai_adds_five_deltas_after_five_negative_gradients() {
        let mut s = timely(Params {
            hai: true,
            ..Default::default()
        });
        ack_rtts(&mut s, &[100, 95, 90, 85]);
        // Events 1-4: gradient 0, then negative; one delta each.
        assert_eq!(s.cc.rate, 51.0);
        ack_rtts(&mut s, &[80]);
        // Event 5 is the fifth non-positive gradient in a row: 5 delta.
        assert_eq!(s.cc.rate, 52.25);
        assert_eq!(s.cc.state_name(), "hyperactive");
        ack_rtts(&mut s, &[75]);
        assert_eq!(s.cc.rate, 53.5);
    }

    #[test]
    fn hai_count_restarts_after_a_positive_gradient() {
        let mut s = timely(Params {
            hai: true,
            ..Default::default()
        });
        ack_rtts(&mut s, &[100, 95, 90, 85, 80]);
        assert_eq!(s.cc.state_name(), "hyperactive");
        // rtt_diff: 0.2 * -4.992 + 0.8 * 50 = 39.0016 > 0.
        ack_rtts(&mut s, &[130]);
        assert_eq!(s.cc.state_name(), "gradient_decrease");
        // rtt_diff: 0.2 * 39.0016 + 0.8 * -30 = -16.19968 <= 0, but the count is back at 1.
        let before = s.cc.rate;
        ack_rtts(&mut s, &[100]);
        assert_eq!(s.cc.state_name(), "additive");
        assert_close(s.cc.rate, before + 0.25);
    }

    #[test]
    fn hai_count_restarts_after_a_threshold_branch() {
        let mut s = timely(Params {
            hai: true,
            ..Default::default()
        });
        // Four non-positive gradients, then a sample below T_low (rtt_diff -21.792): the count restarts.
        ack_rtts(&mut s, &[100, 95, 90, 85, 59]);
        assert_eq!(s.cc.state_name(), "below_t_low");
        // rtt_diff 0.2 * -21.792 + 0.8 * 1 = -3.5584 <= 0: without the restart this would be the fifth.
        let before = s.cc.rate;
        ack_rtts(&mut s, &[60]);
        assert_eq!(s.cc.state_name(), "additive");
        assert_close(s.cc.rate, before + 0.25);
        ack_rtts(&mut s, &[60, 60, 60]);
        assert_eq!(s.cc.state_name(), "additive");
        ack_rtts(&mut s, &[60]);
        assert_eq!(s.cc.state_name(), "hyperactive");
    }

    #[test]
    fn rate_never_falls_below_the_floor() {
        let mut s = timely(Params {
            initial_rate: 1.5,
            ..Default::default()
        });
        ack_rtts(&mut s, &[2000]);
        // 1.5 (1 - 0.3 (1 - 150/2000)) = 1.08375
        assert_close(s.cc.rate, 1.08375);
        ack_rtts(&mut s, &[2000]);
        assert_eq!(s.cc.rate, 1.0);
        assert_eq!(s.cc.cwnd(), 1);
        // A gradient above 1/beta would make the rate negative: clamp to the floor.
        let mut s = timely(Params {
            min_rtt_ms: 10.0,
            ..Default::default()
        });
        ack_rtts(&mut s, &[60, 149]);
        assert_eq!(s.cc.rate, 1.0);
    }

    #[test]
    fn rate_is_capped_at_max_window() {
        let mut s = timely(Params {
            max_window: 50.5,
            ..Default::default()
        });
        ack_rtts(&mut s, &[40, 40, 40]);
        assert_eq!(s.cc.rate, 50.5);
        assert_eq!(s.cc.cwnd(), 50);
    }

    #[test]
    fn cwnd_rounds_the_rate_down_but_not_below_the_floor() {
        assert_eq!(window_of(50.9, 1.0), 50);
        assert_eq!(window_of(1.5, 1.5), 2);
        assert_eq!(window_of(0.4, 0.0), 0);
    }

    #[test]
    fn losses_leave_the_rate_alone() {
        let mut s = timely(Params::default());
        s.send(2);
        s.lose_oldest(LossCause::Timeout);
        s.lose_oldest(LossCause::Reordering);
        assert_eq!(s.cc.rate, 50.0);
    }

    #[test]
    fn validate_rejects_t_low_not_below_t_high() {
        let p = Params {
            t_low_ms: 150.0,
            ..Default::default()
        };
        assert_eq!(
            p.validate()
                .err()
                .and_then(|e| e.key().map(str::to_string))
                .as_deref(),
            Some("t_high_ms")
        );
        let p = Params {
            alpha: 1.5,
            ..Default::default()
        };
        assert_eq!(
            p.validate()
                .err()
                .and_then(|e| e.key().map(str::to_string))
                .as_deref(),
            Some("alpha")
        );
        let p = Params {
            rate_floor: -1.0,
            ..Default::default()
        };
        assert_eq!(
            p.validate()
                .err()
                .and_then(|e| e.key().map(str::to_string))
                .as_deref(),
            Some("rate_floor")
        );
    }
}
