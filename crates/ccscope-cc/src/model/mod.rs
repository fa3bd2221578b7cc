//! Model-driven controllers.

pub mod bbr;
pub mod bbr3;
pub mod markov;
pub mod sprout;
