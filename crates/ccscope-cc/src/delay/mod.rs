//! Delay-driven controllers.

pub mod aiad;
pub mod ledbat;
pub mod mimd;
pub mod queue_gradient;
pub mod timely;
pub mod vegas;
pub mod verus;
// Copa (issue 13)
pub mod copa;
