//! Machinery shared by several controllers; each piece lives here once.

pub mod decrease_guard;
pub mod ewma;
pub mod rtt;

pub use decrease_guard::DecreaseGuard;
pub use ewma::Ewma;
pub use rtt::RttEstimator;
