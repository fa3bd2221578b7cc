//! Delay thresholds with a queue-occupancy gradient: the `hybrid` scheme of paper 001 §4.3.
//!
//! The structure is TIMELY's (`crate::timely`, Algorithm 1): RTT samples below `t_low` add `delta`,
//! above `t_high` cut in proportion to the excess. Between the thresholds the gradient is not of the
//! RTT but of the queue estimate inspired by Sprout: "the seq number of last sent packet" minus "the
//! seq number in the latest ack" (§4.3), i.e. the packets sent after the acknowledged one. A
//! non-positive gradient adds `delta`; a positive one cuts by `beta` times the normalised gradient,
//! capped at 1.
//!
//! As in `timely`, "rate" is a window in packets. The write-up does not give the gradient's
//! normaliser (TIMELY's is minRTT, which has the wrong unit here): `queue_norm_packets` and its
//! default of 10 are ours, and so is the cap of the normalised gradient at 1 (a cut never exceeds
//! `beta`). There is no HAI. The first sample's difference is 0; losses do not change the rate.

use ccscope_core::{Dur, Time};
use serde::{Deserialize, Serialize};

use crate::common::delay_thresholds::{
    self as algorithm1, check_algorithm1_params, check_rate_params, threshold_step, window_of, Step,
};
use crate::common::Ewma;
use crate::params::{invalid, ParamError, ParamSpec};
use crate::{AckEvent, Controller};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// EWMA weight of a new queue difference (TIMELY tuning carried over, paper 001 §4.2.2: 0.8).
    pub alpha: f64,
    /// Multiplicative decrement factor (paper 001 §4.2.2: 0.3).
    pub beta: f64,
    /// Additive increment in packets (paper 001 §4.2.2: 0.25).
    pub delta: f64,
    /// RTT below which the rate grows regardless of the gradient (paper 001 §4.2.2: 60 ms).
    pub t_low_ms: f64,
    /// RTT above which the rate is cut (paper 001 §4.2.2: 150 ms).
    pub t_high_ms: f64,
    /// Queue change in packets that counts as a gradient of 1 (ours; the write-up gives none).
    pub queue_norm_packets: f64,
    /// Initial rate in packets (paper 001 §4.2.2: 50).
    pub initial_rate: f64,
    /// Smallest rate in packets (paper 001 §4.2.2: 1).
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
            queue_norm_packets: 10.0,
            initial_rate: 50.0,
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
            doc: "EWMA weight of a new queue difference (paper 001 §4.2.2: 0.8)",
        },
        algorithm1::BETA,
        algorithm1::DELTA,
        algorithm1::T_LOW_MS,
        algorithm1::T_HIGH_MS,
        ParamSpec {
            name: "queue_norm_packets",
            unit: "packets",
            doc: "queue change that is a gradient of 1 (ours; paper 001 §4.3 gives none)",
        },
        algorithm1::INITIAL_RATE,
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
        if !(self.queue_norm_packets > 0.0 && self.queue_norm_packets.is_finite()) {
            return Err(invalid("queue_norm_packets", "must be > 0 and finite"));
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
pub struct QueueGradient {
    p: Params,
    /// The rate, enforced as a window in packets.
    rate: f64,
    /// Previous queue estimate in packets.
    prev_q: Option<f64>,
    /// EWMA of queue differences in packets, starting at 0 (as TIMELY's rtt_diff, paper 001 §4.2.2).
    q_diff: Ewma,
    step: Step,
}

impl QueueGradient {
    pub fn new(p: Params) -> Self {
        let rate = p.initial_rate.clamp(p.rate_floor, p.max_window);
        let q_diff = Ewma::with_initial(p.alpha, 0.0);
        QueueGradient {
            p,
            rate,
            prev_q: None,
            q_diff,
            step: Step::Start,
        }
    }
}

impl Controller for QueueGradient {
    fn on_ack(&mut self, _now: Time, ev: &AckEvent) {
        // Paper 001 §4.3: packets in the queue = last sent seq - acked seq.
        let q = ev.last_sent_seq.saturating_sub(ev.seq) as f64;
        let new_q_diff = q - self.prev_q.unwrap_or(q);
        self.prev_q = Some(q);
        let q_diff = self.q_diff.update(new_q_diff);
        let normalized_gradient = q_diff / self.p.queue_norm_packets;
        let rtt = ev.rtt.as_ms_f64();
        let p = &self.p;
        // Paper 001 §4.3: "still use the two thresholds for the delay".
        let (rate, step) = if let Some(r) =
            threshold_step(self.rate, rtt, p.t_low_ms, p.t_high_ms, p.delta, p.beta)
        {
            r
        } else if normalized_gradient <= 0.0 {
            // Algorithm 1's additive increase, on a draining or steady queue.
            (self.rate + p.delta, Step::Additive)
        } else {
            // Algorithm 1's gradient decrease with the queue gradient, capped so a cut is at most beta.
            (
                self.rate * (1.0 - p.beta * normalized_gradient.min(1.0)),
                Step::GradientDecrease,
            )
        };
        debug_assert!(!rate.is_nan(), "rate is NaN after {step:?}");
        // Paper 001 §4.2.2: lower-bound the rate (1 packet); the cap keeps it finite.
        self.rate = rate.clamp(p.rate_floor, p.max_window);
        self.step = step;
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

    fn qg(p: Params) -> Script<QueueGradient> {
        Script::new(QueueGradient::new(p))
    }

    #[test]
    fn queue_estimate_counts_packets_sent_after_the_acked_one() {
        let mut s = qg(Params::default());
        s.send(5);
        s.ack_oldest(Dur::from_ms(100));
        // seq 0 acked, seq 4 last sent.
        assert_eq!(s.cc.prev_q, Some(4.0));
    }

    #[test]
    fn rtt_below_t_low_adds_delta() {
        let mut s = qg(Params::default());
        s.send(1);
        s.ack_oldest(Dur::from_ms(40));
        assert_eq!(s.cc.rate, 50.25);
        assert_eq!(s.cc.state_name(), "below_t_low");
    }

    #[test]
    fn rtt_above_t_high_cuts_by_beta_times_excess() {
        let mut s = qg(Params::default());
        s.send(1);
        s.ack_oldest(Dur::from_ms(300));
        // 50 (1 - 0.3 (1 - 150/300))
        assert_close(s.cc.rate, 42.5);
    }

    #[test]
    fn growing_queue_decreases_multiplicatively() {
        let mut s = qg(Params::default());
        s.send(5);
        s.ack_oldest(Dur::from_ms(100));
        // q = 4, first sample: difference 0, add delta.
        assert_eq!(s.cc.rate, 50.25);
        s.send(5);
        s.ack_oldest(Dur::from_ms(100));
        // q = 9 - 1 = 8; q_diff = 0.8 * 4 = 3.2; gradient 0.32; 50.25 (1 - 0.3 * 0.32) = 45.426
        assert_close(s.cc.rate, 45.426);
        assert_eq!(s.cc.state_name(), "gradient_decrease");
    }

    #[test]
    fn a_cut_never_exceeds_beta() {
        let mut s = qg(Params::default());
        s.send(1);
        s.ack_oldest(Dur::from_ms(100));
        s.send(100);
        s.ack_oldest(Dur::from_ms(100));
        // q jumps 0 -> 99: gradient 7.92, capped at 1: 50.25 * 0.7
        assert_close(s.cc.rate, 50.25 * 0.7);
    }

    #[test]
    fn draining_queue_adds_delta() {
        let mut s = qg(Params::default());
        s.send(10);
        s.ack_oldest(Dur::from_ms(100));
        s.ack_oldest(Dur::from_ms(100));
        s.ack_oldest(Dur::from_ms(100));
        // q = 9, 8, 7: gradient 0 then negative; one delta each.
        assert_eq!(s.cc.rate, 50.75);
        assert_eq!(s.cc.state_name(), "additive");
    }

    #[test]
    fn rate_never_falls_below_the_floor() {
        let mut s = qg(Params {
            initial_rate: 1.5,
            ..Default::default()
        });
        s.send(1);
        s.ack_oldest(Dur::from_ms(100));
        s.send(50);
        for _ in 0..5 {
            s.send(10);
            s.ack_oldest(Dur::from_ms(100));
        }
        assert_eq!(s.cc.rate, 1.0);
        assert_eq!(s.cc.cwnd(), 1);
    }

    #[test]
    fn zero_queue_normaliser_is_rejected() {
        let p = Params {
            queue_norm_packets: 0.0,
            ..Default::default()
        };
        assert_eq!(
            p.validate()
                .err()
                .and_then(|e| e.key().map(str::to_string))
                .as_deref(),
            Some("queue_norm_packets")
        );
    }
}
