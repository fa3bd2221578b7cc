//! Rate-based controllers on a measured throughput signal.

pub mod lied;
pub mod sac;
// PCC Vivace (issue 13)
pub mod vivace;
