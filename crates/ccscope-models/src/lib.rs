//! Numerical kernels without PyO3: sparse Markov chains and their stationary solvers.
//!
//! - [`cmt_markov`]: the per-path round chain of Wallace & Shami's CMT-SCTP model (paper 002 §4.3),
//!   solved explicitly (CSR) or matrix-free for receive buffers up to several megabytes.

pub mod cmt_markov;
