//! Loss-driven window controllers.

pub mod aimd;
pub mod cubic;
pub mod fixed;
pub mod newreno;
pub mod sctp;
