//! Solve times of the CMT Markov chain against the receive buffer (docs/performance.md): the median
//! of three structured solves per case, at b = 21 Mbit/s, d = 40 ms, 1500 B packets, RTO_max 60 s.
//!
//! `cargo run --release -p ccscope-models --example cmt_markov_scale [-- RBUF_KB...]` (KB = 1000 B)

use std::time::Instant;

use ccscope_models::cmt_markov::{solve, throughput_curve, LossModel, Params, Solver};

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("RBUF in KB (1000 B)"))
        .collect();
    let rbufs = if args.is_empty() {
        vec![128, 176, 1000, 4000]
    } else {
        args
    };
    println!("| loss | p | RBUF (KB) | W | states | non-zeros (counted) | sweeps | residual | time (s), median of 3 | eta (Mbit/s) |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for loss in [LossModel::Correlated, LossModel::Independent] {
        for p in [1e-4, 1e-3, 1e-2] {
            for &kb in &rbufs {
                let params = Params {
                    p,
                    rbuf_bytes: kb * 1000,
                    loss,
                    ..Params::default()
                };
                let mut runs: Vec<_> = (0..3)
                    .map(|_| solve(&params, Solver::Structured).expect("solves"))
                    .collect();
                runs.sort_by(|a, b| a.solve_time_s.total_cmp(&b.solve_time_s));
                let s = &runs[1];
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
    println!();
    println!("| solver | loss | RBUF (KB) | W | non-zeros (stored) | sweeps | time (s), median of 3 | eta vs structured (relative) |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for loss in [LossModel::Correlated, LossModel::Independent] {
        for kb in [128u64, 176] {
            let params = Params {
                rbuf_bytes: kb * 1000,
                loss,
                ..Params::default()
            };
            let mut runs: Vec<_> = (0..3)
                .map(|_| solve(&params, Solver::Explicit).expect("solves"))
                .collect();
            runs.sort_by(|a, b| a.solve_time_s.total_cmp(&b.solve_time_s));
            let s = &runs[1];
            let t = solve(&params, Solver::Structured).expect("solves");
            let rel = (s.throughput_pps - t.throughput_pps).abs() / t.throughput_pps;
            println!(
                "| explicit | {} | {kb} | {} | {} | {} | {:.4} | {rel:.1e} |",
                loss.name(),
                s.window_packets,
                s.nonzeros,
                s.iterations,
                s.solve_time_s
            );
        }
    }
    println!();
    for loss in [LossModel::Correlated, LossModel::Independent] {
        let windows: Vec<u64> = (2..=200).collect();
        let mut times: Vec<f64> = (0..3)
            .map(|_| {
                let t = Instant::now();
                throughput_curve(
                    &Params {
                        loss,
                        ..Params::default()
                    },
                    &windows,
                )
                .expect("solves");
                t.elapsed().as_secs_f64()
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!(
            "throughput_curve W = 2..=200, {} (p 1e-3): {:.3} s (median of 3)",
            loss.name(),
            times[1]
        );
    }
}
