//! Criterion benchmarks for ccscope; the code lives in `benches/` and `ccscope_sim::bench`.
//! Run with `cargo bench -p ccscope-benches`; figures and targets are in `docs/performance.md`.
