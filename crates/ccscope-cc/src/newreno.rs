//! TCP NewReno
//!
//! Placeholder: being written.

use ccscope_core::Time;
use serde::{Deserialize, Serialize};

use crate::registry::{ParamError, ParamSpec};
use crate::{AckEvent, Controller};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {}

impl crate::registry::Params for Params {
    const SPEC: &'static [ParamSpec] = &[];
    fn validate(&self) -> Result<(), ParamError> {
        Ok(())
    }
}

#[derive(Debug)]
pub struct NewReno {
    _p: Params,
}

impl NewReno {
    pub fn new(p: Params) -> Self {
        NewReno { _p: p }
    }
}

impl Controller for NewReno {
    fn on_ack(&mut self, _now: Time, _ev: &AckEvent) {}
    fn cwnd(&self) -> u32 {
        1
    }
}
