//! ccscope-sim: scenarios, endpoints, the discrete-event loop and streaming metrics.

pub mod bench;
pub mod config;
pub mod endpoint;
pub mod metrics;
pub mod pktlog;
pub mod scenario;
pub mod schema;
pub mod sim;
pub mod traffic;

pub use config::{load_scenario, load_scenario_overridden, load_scenario_with, ConfigError};
pub use metrics::{FlowSummary, RunResult, TimeBin};
pub use scenario::{FlowSpec, LinkSpec, Scenario};
pub use sim::{ControllerFactory, Simulation};
