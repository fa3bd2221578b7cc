//! Fixed window (paper 001 §1): keep `window` packets in flight, whatever happens.

use ccscope_core::{Dur, Time};
use serde::{Deserialize, Serialize};

use crate::params::{check_timer_ms, ParamError, ParamSpec};
use crate::{AckEvent, Controller};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Packets in flight (paper 001 §1.2: the best fixed window was 12).
    pub window: u32,
    /// Milliseconds without an ACK before one packet is sent anyway (datagrump's default 1000).
    pub timeout_ms: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            window: 12,
            timeout_ms: 1000.0,
        }
    }
}

impl crate::params::Params for Params {
    const SPEC: &'static [ParamSpec] = &[
        ParamSpec {
            name: "window",
            unit: "packets",
            doc: "packets kept in flight (paper 001 §1.2 best: 12)",
        },
        ParamSpec {
            name: "timeout_ms",
            unit: "ms",
            doc: "no-ACK time before a packet is sent anyway (datagrump: 1000)",
        },
    ];
    fn validate(&self) -> Result<(), ParamError> {
        check_timer_ms("timeout_ms", self.timeout_ms)?;
        Ok(())
    }
}

#[derive(Debug)]
pub struct Fixed {
    p: Params,
}

impl Fixed {
    pub fn new(p: Params) -> Self {
        Fixed { p }
    }
}

impl Controller for Fixed {
    fn on_ack(&mut self, _now: Time, _ev: &AckEvent) {}
    fn cwnd(&self) -> u32 {
        self.p.window
    }
    fn timeout(&self) -> Dur {
        Dur::from_ms_f64(self.p.timeout_ms)
    }
}
