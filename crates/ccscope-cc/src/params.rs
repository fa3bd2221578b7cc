//! Controller parameters: the typed `Params` each controller is built from, their documentation and
//! their errors. Controllers depend on this module; the registry (which lists the controllers) depends
//! on it and on them, so nothing here imports a controller.

use ccscope_core::text::{below_clock, beyond_bound, one_line, short_floats};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// One documented parameter of a controller.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub unit: &'static str,
    pub doc: &'static str,
}

/// A parameter value a flow's `stack` ("linux", "ns3") sets unless the flow gives the key itself,
/// as `stack` sets the reliable transport's switches.
#[derive(Clone, Copy, Debug)]
pub struct StackDefault {
    pub stack: &'static str,
    pub param: &'static str,
    /// The value, a TOML string.
    pub value: &'static str,
}

/// A parameter set a controller is built from: serde for overrides, `validate` for ranges.
pub trait Params: Default + Serialize + DeserializeOwned {
    const SPEC: &'static [ParamSpec];
    /// Values a flow's `stack` picks (none for most controllers).
    const STACK: &'static [StackDefault] = &[];
    fn validate(&self) -> Result<(), ParamError>;
    /// Whether these parameters suit a path whose propagation round trip is `rtt_ms` (e.g. a trained
    /// model's delay range); most controllers suit any path.
    fn check_round_trip(&self, _rtt_ms: f64) -> Result<(), ParamError> {
        Ok(())
    }
    /// Bytes a controller built from these parameters keeps beyond a flow's base state (which counts
    /// a few kB of controller), for the loader's bound on a run's memory before anything is
    /// allocated; only a controller whose state grows with a parameter says more.
    fn state_bytes(&self) -> u64 {
        0
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamError {
    // A name the user typed is shown escaped: a line break in it would cut the one-line error.
    #[error("unknown controller `{}` (known: {known})", one_line(.name))]
    UnknownController { name: String, known: String },
    #[error(
        "unknown parameter `{}` for controller `{controller}` (known: {known})",
        one_line(.key)
    )]
    UnknownParam {
        controller: String,
        key: String,
        known: String,
    },
    #[error("parameter `{key}`: {reason}")]
    Invalid { key: String, reason: String },
}

impl ParamError {
    /// The parameter the error is about, if any (used to point at its line in a scenario file).
    pub fn key(&self) -> Option<&str> {
        match self {
            ParamError::UnknownController { .. } => None,
            ParamError::UnknownParam { key, .. } | ParamError::Invalid { key, .. } => Some(key),
        }
    }
}

pub fn invalid(key: &str, reason: impl Into<String>) -> ParamError {
    ParamError::Invalid {
        key: key.to_string(),
        reason: reason.into(),
    }
}

/// A parameter that must be a positive finite number (a NaN fails too).
pub fn check_positive(key: &str, v: f64) -> Result<(), ParamError> {
    if v > 0.0 && v.is_finite() {
        Ok(())
    } else {
        Err(invalid(key, "must be > 0 and finite"))
    }
}

/// The shortest period of a timer that re-arms itself (an epoch, a tick, a no-ACK timeout that sends a
/// packet on every expiry): 1 us. A 1 ns no-ACK timeout sent 1e9 packets per simulated second.
pub const MIN_TIMER_MS: f64 = 0.001;

/// A timer period in ms: finite and at least [`MIN_TIMER_MS`] (a NaN fails too).
pub fn check_timer_ms(key: &str, v: f64) -> Result<(), ParamError> {
    if v >= MIN_TIMER_MS && v.is_finite() {
        Ok(())
    } else {
        Err(invalid(
            key,
            "must be finite and >= 0.001 (1 us, the shortest timer)",
        ))
    }
}

/// The largest value a parameter can mean, and what it is: a time is within the longest run, a rate
/// within the fastest link, a window (or a step of one) within `MAX_CWND`, packets per epoch within a `u32`,
/// a number of round trips within the longest run's round trips of 1 ms. Other units: no bound here.
fn unit_bound(spec: &ParamSpec) -> Option<(f64, &'static str)> {
    use ccscope_core::{MAX_RATE_MBPS, MAX_RUN_S};
    // A slow-start threshold is never the window itself and may stay "arbitrarily high" (RFC 5681 §3.1).
    if spec.unit == "packets" && spec.name.contains("ssthresh") {
        return Some((u32::MAX as f64, "the largest window"));
    }
    match spec.unit {
        "s" => Some((MAX_RUN_S, "the longest run")),
        "ms" => Some((MAX_RUN_S * 1e3, "the longest run")),
        "Mbit/s" => Some((MAX_RATE_MBPS, "the fastest link")),
        "kbit/s" => Some((MAX_RATE_MBPS * 1e3, "the fastest link")),
        // Above it a window would send millions of packets in one burst (the bound Python controllers keep).
        "packets" | "packets/RTT" => Some((crate::MAX_CWND as f64, "the largest window")),
        "packets/tau" => Some((u32::MAX as f64, "the largest window")),
        // A length in round trips (or in slowdowns of some): more than the longest run has round
        // trips of 1 ms outlasts any run on any usual path (mi_rtts = 1e300 never ended its interval).
        "srtt" | "min RTTs" | "RTTs" | "slowdowns" => {
            Some((MAX_RUN_S * 1e3, "the longest run in 1 ms round trips"))
        }
        _ => None,
    }
}

/// A given value beyond what its unit can mean (a saturating 1e300 ms timer, 1e300 packets per round)
/// is refused rather than run.
fn check_unit_bound(spec: &ParamSpec, v: &toml::Value) -> Result<(), ParamError> {
    let x = match v {
        toml::Value::Float(x) => *x,
        toml::Value::Integer(i) => *i as f64,
        _ => return Ok(()),
    };
    // A time below the clock's 1 ns is 0: a 1e-12 ms timeout fired forever at one instant.
    let unit_s = match spec.unit {
        "s" => Some(1.0),
        "ms" => Some(1e-3),
        _ => None,
    };
    if unit_s.is_some_and(|u| x != 0.0 && x.abs() * u < 1e-9) {
        return Err(invalid(spec.name, below_clock(x, spec.unit)));
    }
    match unit_bound(spec) {
        Some((most, what)) if x.abs() > most => {
            Err(invalid(spec.name, beyond_bound(x, spec.unit, most, what)))
        }
        _ => Ok(()),
    }
}

pub(crate) fn defaults_of<P: Params>() -> toml::Table {
    match toml::Value::try_from(P::default()) {
        Ok(toml::Value::Table(t)) => t,
        _ => toml::Table::new(),
    }
}

/// Parse and validate `P` from a table, attributing every error to one key.
pub fn parse_params<P: Params>(controller: &str, table: &toml::Table) -> Result<P, ParamError> {
    for key in table.keys() {
        let Some(spec) = P::SPEC.iter().find(|s| s.name == key) else {
            return Err(ParamError::UnknownParam {
                controller: controller.to_string(),
                key: key.clone(),
                known: P::SPEC
                    .iter()
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        check_unit_bound(spec, &table[key])?;
        let mut one = toml::Table::new();
        one.insert(key.clone(), table[key].clone());
        if let Err(e) = toml::Value::Table(one).try_into::<P>() {
            return Err(invalid(key, short_floats(e.message().trim())));
        }
    }
    let p: P = toml::Value::Table(table.clone())
        .try_into()
        .map_err(|e| invalid("?", e.to_string()))?;
    p.validate()?;
    Ok(p)
}
