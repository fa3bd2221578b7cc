//! Model-driven controllers.

pub mod bbr;
pub mod markov;
pub mod sprout;
