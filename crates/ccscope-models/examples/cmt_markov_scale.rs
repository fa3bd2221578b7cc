//! Solve times of the CMT Markov chain against the receive buffer (docs/performance.md).
//!
//! `cargo run --release -p ccscope-models --example cmt_markov_scale [-- RBUF_KB...]`

use ccscope_models::cmt_markov::{solve, LossModel, Params, Solver};

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).map(|a| a.parse().expect("RBUF in KB (1000 B)")).collect();
    let rbufs = if args.is_empty() { vec![128, 176, 1000, 4000] } else { args };
    println!("| loss | p | RBUF (KB) | W | states | non-zeros | sweeps | residual | time (s) | eta (Mbit/s) |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for loss in [LossModel::Correlated, LossModel::Independent] {
        for p in [1e-4, 1e-3, 1e-2] {
            for &kb in &rbufs {
                let params = Params { p, rbuf_bytes: kb * 1000, loss, ..Params::default() };
                let s = solve(&params, Solver::Structured).expect("solves");
                println!(
                    "| {} | {:.0e} | {} | {} | {} | {:.3e} | {} | {:.1e} | {:.4} | {:.4} |",
                    loss.name(),
                    p,
                    kb,
                    s.window_packets,
                    s.states,
                    s.nonzeros as f64,
                    s.iterations,
                    s.residual,
                    s.solve_time_s,
                    s.throughput_mbps
                );
            }
        }
    }
}
