//! Controllers by stable name, built from typed parameters whose defaults are the papers' values.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::{aiad, aimd, fixed, mimd, queue_gradient, timely, AnyController};

/// One documented parameter of a controller.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub unit: &'static str,
    pub doc: &'static str,
}

/// A parameter set a controller is built from: serde for overrides, `validate` for ranges.
pub trait Params: Default + Serialize + DeserializeOwned {
    const SPEC: &'static [ParamSpec];
    fn validate(&self) -> Result<(), ParamError>;
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamError {
    #[error("unknown controller `{name}` (known: {known})")]
    UnknownController { name: String, known: String },
    #[error("unknown parameter `{key}` for controller `{controller}` (known: {known})")]
    UnknownParam { controller: String, key: String, known: String },
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
    ParamError::Invalid { key: key.to_string(), reason: reason.into() }
}

/// A registered controller.
pub struct ControllerInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub params: &'static [ParamSpec],
    pub build: fn(&toml::Table) -> Result<AnyController, ParamError>,
    pub defaults: fn() -> toml::Table,
}

macro_rules! entry {
    ($module:ident, $ty:ident, $summary:literal) => {
        ControllerInfo {
            name: stringify!($module),
            summary: $summary,
            params: <$module::Params as Params>::SPEC,
            build: |t| Ok(Box::new($module::$ty::new(parse_params(stringify!($module), t)?))),
            defaults: defaults_of::<$module::Params>,
        }
    };
}

/// Every built-in controller.
pub const CONTROLLERS: &[ControllerInfo] = &[
    entry!(fixed, Fixed, "fixed window (paper 001 §1)"),
    entry!(aimd, Aimd, "AIMD with a delay trigger (paper 001 §2, §3.1)"),
    entry!(aiad, Aiad, "additive increase, additive decrease on delay (paper 001 §3.2)"),
    entry!(mimd, Mimd, "multiplicative increase and decrease on delay (paper 001 §3.3)"),
    entry!(timely, Timely, "TIMELY delay gradient (paper 001 §4.2, Algorithm 1)"),
    entry!(queue_gradient, QueueGradient, "delay thresholds with a queue-occupancy gradient (paper 001 §4.3)"),
];

fn defaults_of<P: Params>() -> toml::Table {
    match toml::Value::try_from(P::default()) {
        Ok(toml::Value::Table(t)) => t,
        _ => toml::Table::new(),
    }
}

/// Parse and validate `P` from a table, attributing every error to one key.
pub fn parse_params<P: Params>(controller: &str, table: &toml::Table) -> Result<P, ParamError> {
    for key in table.keys() {
        if !P::SPEC.iter().any(|s| s.name == key) {
            return Err(ParamError::UnknownParam {
                controller: controller.to_string(),
                key: key.clone(),
                known: P::SPEC.iter().map(|s| s.name).collect::<Vec<_>>().join(", "),
            });
        }
        let mut one = toml::Table::new();
        one.insert(key.clone(), table[key].clone());
        if let Err(e) = toml::Value::Table(one).try_into::<P>() {
            return Err(invalid(key, e.message().trim().to_string()));
        }
    }
    let p: P = toml::Value::Table(table.clone()).try_into().map_err(|e| invalid("?", e.to_string()))?;
    p.validate()?;
    Ok(p)
}

/// Build the controller `name` with parameter overrides `params`.
pub fn build(name: &str, params: &toml::Table) -> Result<AnyController, ParamError> {
    let info = find(name)?;
    (info.build)(params)
}

/// The registry entry for `name`.
pub fn find(name: &str) -> Result<&'static ControllerInfo, ParamError> {
    CONTROLLERS.iter().find(|c| c.name == name).ok_or_else(|| ParamError::UnknownController {
        name: name.to_string(),
        known: CONTROLLERS.iter().map(|c| c.name).collect::<Vec<_>>().join(", "),
    })
}

/// (name, default as TOML text, unit, doc) for each parameter of `name`.
pub fn describe(name: &str) -> Result<Vec<(String, String, String, String)>, ParamError> {
    let info = find(name)?;
    let defaults = (info.defaults)();
    Ok(info
        .params
        .iter()
        .map(|s| {
            let d = defaults.get(s.name).map(|v| v.to_string()).unwrap_or_else(|| "none".into());
            (s.name.to_string(), d, s.unit.to_string(), s.doc.to_string())
        })
        .collect())
}
