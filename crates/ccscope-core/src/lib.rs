//! ccscope-core: integer time, units, the event queue, streaming statistics, shared error text and
//! bounded input reads.
//!
//! Everything here is deterministic and allocation-free on the hot path once warmed up.

pub mod event_queue;
pub mod file;
pub mod hist;
pub mod rng;
pub mod text;
pub mod time;
pub mod units;

pub use event_queue::{EventQueue, Phase};
pub use hist::{IntHistogram, LogHistogram};
pub use time::{Dur, Time, MAX_RATE_MBPS, MAX_RUN_S, MIN_RATE_MBPS};
pub use units::Bandwidth;
