//! MIMD, multiplicative increase and multiplicative decrease on delay (paper 001 §3.3).
//!
//! Each ACK whose RTT is at most `rtt_threshold_ms` multiplies the window by `increase_factor`; an
//! RTT above the threshold or a lost packet multiplies it by `decrease_factor`, at most once per round
//! trip. Applying the increase per ACK rather than per round trip is the aggressive behaviour the
//! write-up measured (a window that compounds within one RTT, and a signal delay that exploded, score
//! 0.1). `max_window` is ours: it keeps the window finite while the delay signal is on its way back.

use serde::{Deserialize, Serialize};

use crate::common::triggered_window::{self as shared, TriggeredWindow, WindowLimits, WindowRule};
use crate::params::{invalid, ParamError, ParamSpec};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Initial window in packets (paper 001 §2.2: 2, kept for §3.3).
    pub initial_window: f64,
    /// Window multiplier per ACK below the threshold (paper 001 §3.3: 1.1).
    pub increase_factor: f64,
    /// Window multiplier on congestion (paper 001 §3.3: 0.5).
    pub decrease_factor: f64,
    /// RTT above which the window is decreased (paper 001 §3.1 tuned threshold: 100 ms).
    pub rtt_threshold_ms: f64,
    /// Decrease on packet loss too.
    pub decrease_on_loss: bool,
    /// Smallest window in packets.
    pub min_window: f64,
    /// Largest window in packets (ours; the paper has no cap).
    pub max_window: f64,
    /// No-ACK time before a packet is sent anyway (datagrump's default 1000 ms).
    pub timeout_ms: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            initial_window: 2.0,
            increase_factor: 1.1,
            decrease_factor: 0.5,
            rtt_threshold_ms: 100.0,
            decrease_on_loss: true,
            min_window: 1.0,
            max_window: 100_000.0,
            timeout_ms: 1000.0,
        }
    }
}

impl crate::params::Params for Params {
    const SPEC: &'static [ParamSpec] = &[
        shared::INITIAL_WINDOW,
        ParamSpec {
            name: "increase_factor",
            unit: "ratio",
            doc: "window multiplier per ACK below the threshold (paper 001 §3.3: 1.1)",
        },
        ParamSpec {
            name: "decrease_factor",
            unit: "ratio",
            doc: "window multiplier on congestion (paper 001 §3.3: 0.5)",
        },
        shared::RTT_THRESHOLD_MS,
        shared::DECREASE_ON_LOSS,
        shared::MIN_WINDOW,
        ParamSpec {
            name: "max_window",
            unit: "packets",
            doc: "window cap (ours; keeps the window finite)",
        },
        shared::TIMEOUT_MS,
    ];
    fn validate(&self) -> Result<(), ParamError> {
        self.limits().validate()?;
        if !(self.increase_factor >= 1.0 && self.increase_factor.is_finite()) {
            return Err(invalid("increase_factor", "must be >= 1 and finite"));
        }
        if !(self.decrease_factor > 0.0 && self.decrease_factor <= 1.0) {
            return Err(invalid("decrease_factor", "must be in (0, 1]"));
        }
        if !(self.max_window >= self.min_window && self.max_window.is_finite()) {
            return Err(invalid("max_window", "must be finite and >= min_window"));
        }
        Ok(())
    }
}

impl WindowRule for Params {
    fn limits(&self) -> WindowLimits {
        shared::window_limits!(self, self.max_window)
    }
    // Paper 001 §3.3: multiplicative increase on every ACK, hence the bursts of Figure 6.
    fn increase(&self, cwnd: f64) -> f64 {
        cwnd * self.increase_factor
    }
    // Paper 001 §3.3: multiplicative decrease, once per round trip like AIMD's.
    fn decrease(&self, cwnd: f64) -> f64 {
        cwnd * self.decrease_factor
    }
}

pub type Mimd = TriggeredWindow<Params>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params as _;
    use crate::testing::{assert_close, Script};
    use crate::Controller;
    use crate::LossCause;
    use ccscope_core::Dur;

    fn with_window(w: f64) -> Script<Mimd> {
        Script::new(Mimd::new(Params {
            initial_window: w,
            ..Default::default()
        }))
    }

    #[test]
    fn each_ack_below_threshold_multiplies_by_increase_factor() {
        let mut s = with_window(10.0);
        s.send(1);
        s.ack_oldest(Dur::from_ms(50));
        assert_close(s.cc.cwnd, 11.0);
    }

    #[test]
    fn one_window_of_acks_compounds_the_increase() {
        let mut s = with_window(10.0);
        s.fill_window();
        s.ack_all(Dur::from_ms(50));
        // 10 * 1.1^10 = 25.937...: the window more than doubles in one RTT (paper 001 §3.3).
        assert_close(s.cc.cwnd, 10.0 * 1.1f64.powi(10));
        assert_eq!(s.cc.cwnd(), 25);
    }

    #[test]
    fn high_rtt_halves_once_per_round_trip() {
        let mut s = with_window(10.0);
        s.fill_window();
        s.ack_all(Dur::from_ms(300));
        assert_eq!(s.cc.cwnd, 5.0);
    }

    #[test]
    fn loss_halves_the_window() {
        let mut s = with_window(10.0);
        s.send(2);
        s.lose_oldest(LossCause::Reordering);
        s.lose_oldest(LossCause::Reordering);
        assert_eq!(s.cc.cwnd, 5.0);
    }

    #[test]
    fn growth_stops_at_max_window() {
        let mut s = Script::new(Mimd::new(Params {
            initial_window: 19.0,
            max_window: 20.0,
            ..Default::default()
        }));
        s.send(3);
        s.ack_all(Dur::from_ms(50));
        assert_eq!(s.cc.cwnd, 20.0);
    }

    #[test]
    fn window_never_falls_below_min_window() {
        let mut s = with_window(1.0);
        s.send_and_ack(Dur::from_ms(500));
        assert_eq!(s.cc.cwnd, 1.0);
        assert_eq!(s.cc.cwnd(), 1);
    }

    #[test]
    fn increase_factor_below_one_is_rejected() {
        let p = Params {
            increase_factor: 0.9,
            ..Default::default()
        };
        assert_eq!(
            p.validate()
                .err()
                .and_then(|e| e.key().map(str::to_string))
                .as_deref(),
            Some("increase_factor")
        );
    }
}
