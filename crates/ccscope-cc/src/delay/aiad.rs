//! AIAD, additive increase and additive decrease on delay (paper 001 §3.2).
//!
//! Each ACK grows the window by `additive_increase / cwnd` (so `additive_increase` packets per RTT);
//! an RTT sample above `rtt_threshold_ms` or a lost packet subtracts `additive_decrease` packets, at
//! most once per round trip. The write-up used 2 for both steps and found the reaction to delay too
//! slow (96.6% utilisation, 361 ms signal delay).

use serde::{Deserialize, Serialize};

use crate::common::triggered_window::{self as shared, TriggeredWindow, WindowLimits, WindowRule};
use crate::params::{invalid, ParamError, ParamSpec};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Initial window in packets (paper 001 §2.2: 2, kept for §3.2).
    pub initial_window: f64,
    /// Packets added per round trip (paper 001 §3.2: 2).
    pub additive_increase: f64,
    /// Packets removed on congestion (paper 001 §3.2: 2).
    pub additive_decrease: f64,
    /// RTT above which the window is decreased (paper 001 §3.1 tuned threshold: 100 ms).
    pub rtt_threshold_ms: f64,
    /// Decrease on packet loss too.
    pub decrease_on_loss: bool,
    /// Smallest window in packets.
    pub min_window: f64,
    /// No-ACK time before a packet is sent anyway (datagrump's default 1000 ms).
    pub timeout_ms: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            initial_window: 2.0,
            additive_increase: 2.0,
            additive_decrease: 2.0,
            rtt_threshold_ms: 100.0,
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
            doc: "additive increase per RTT (paper 001 §3.2: 2)",
        },
        ParamSpec {
            name: "additive_decrease",
            unit: "packets",
            doc: "additive decrease on congestion (paper 001 §3.2: 2)",
        },
        shared::RTT_THRESHOLD_MS,
        shared::DECREASE_ON_LOSS,
        shared::MIN_WINDOW,
        shared::TIMEOUT_MS,
    ];
    fn validate(&self) -> Result<(), ParamError> {
        self.limits().validate()?;
        if !(self.additive_increase >= 0.0) {
            return Err(invalid("additive_increase", "must be >= 0"));
        }
        if !(self.additive_decrease >= 0.0) {
            return Err(invalid("additive_decrease", "must be >= 0"));
        }
        Ok(())
    }
}

impl WindowRule for Params {
    fn limits(&self) -> WindowLimits {
        shared::window_limits!(self, f64::INFINITY)
    }
    // Paper 001 §3.2: the same additive increase as AIMD (§2.1), spread over one window of ACKs.
    fn increase(&self, cwnd: f64) -> f64 {
        shared::additive_increase(cwnd, self.additive_increase)
    }
    // Paper 001 §3.2: additive decrease, once per round trip like AIMD's.
    fn decrease(&self, cwnd: f64) -> f64 {
        cwnd - self.additive_decrease
    }
}

pub type Aiad = TriggeredWindow<Params>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_close, Script};
    use crate::Controller;
    use crate::LossCause;
    use ccscope_core::Dur;

    fn with_window(w: f64) -> Script<Aiad> {
        Script::new(Aiad::new(Params {
            initial_window: w,
            ..Default::default()
        }))
    }

    #[test]
    fn each_ack_below_threshold_adds_increase_over_cwnd() {
        let mut s = with_window(10.0);
        s.send(2);
        s.ack_oldest(Dur::from_ms(50));
        // 10 + 2/10
        assert_close(s.cc.cwnd, 10.2);
        s.ack_oldest(Dur::from_ms(50));
        // 10.2 + 2/10.2
        assert_close(s.cc.cwnd, 10.2 + 2.0 / 10.2);
    }

    #[test]
    fn rtt_at_the_threshold_still_increases() {
        let mut s = with_window(10.0);
        s.send(1);
        s.ack_oldest(Dur::from_ms(100));
        assert_close(s.cc.cwnd, 10.2);
    }

    #[test]
    fn high_rtt_subtracts_additive_decrease_once_per_round_trip() {
        let mut s = with_window(10.0);
        s.fill_window();
        s.ack_all(Dur::from_ms(300));
        // Ten late ACKs, all for packets sent before the decrease: one step of 2.
        assert_eq!(s.cc.cwnd, 8.0);
        assert_eq!(s.cc.cwnd(), 8);
    }

    #[test]
    fn a_packet_sent_after_a_decrease_may_decrease_again() {
        let mut s = with_window(10.0);
        s.send(1);
        s.ack_oldest(Dur::from_ms(300));
        s.advance(Dur::from_ms(1));
        s.send(1);
        s.ack_oldest(Dur::from_ms(300));
        assert_eq!(s.cc.cwnd, 6.0);
    }

    #[test]
    fn loss_subtracts_additive_decrease() {
        let mut s = with_window(10.0);
        s.send(3);
        s.lose_oldest(LossCause::Reordering);
        s.lose_oldest(LossCause::Timeout);
        assert_eq!(s.cc.cwnd, 8.0);
    }

    #[test]
    fn loss_is_ignored_when_decrease_on_loss_is_off() {
        let mut s = Script::new(Aiad::new(Params {
            initial_window: 10.0,
            decrease_on_loss: false,
            ..Default::default()
        }));
        s.send(1);
        s.lose_oldest(LossCause::Timeout);
        assert_eq!(s.cc.cwnd, 10.0);
    }

    #[test]
    fn window_never_falls_below_min_window() {
        let mut s = with_window(2.0);
        for _ in 0..3 {
            s.send(1);
            s.ack_oldest(Dur::from_ms(500));
        }
        assert_eq!(s.cc.cwnd, 1.0);
        assert_eq!(s.cc.cwnd(), 1);
    }
}
