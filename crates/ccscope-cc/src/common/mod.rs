//! Machinery shared by several controllers; each piece lives here once.

pub mod bbr;
pub mod ccm;
pub mod condprob;
pub mod decrease_guard;
pub mod delay_thresholds;
pub mod ewma;
pub mod extreme_window;
pub mod hystart;
pub mod minmax;
pub mod poisson;
pub mod rate_sample;
pub mod reno;
pub mod rtt;
pub mod spline;
pub mod triggered_window;

pub use decrease_guard::{DecreaseGuard, DelayTrigger, Reaction};
pub use ewma::Ewma;
pub use extreme_window::ExtremeWindow;
pub use minmax::Minmax;
pub use rate_sample::{PacketSendState, RateSample, RateSampler};
pub use rtt::RttEstimator;
pub use spline::SmoothingSpline;
