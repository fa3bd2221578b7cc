//! The whole `RunResult` (its `Debug` text, window log included) and the packet log of each scenario
//! file given, to diff two builds on scenarios the fixed set of `dump_results` leaves out (trace and
//! per-flow links, loss models, stacks and their switches, multipath): `cargo run --release -p
//! ccscope-sim --example dump_scenario -- a.toml b.toml > out.txt`. Every conservation law a run
//! breaks goes to stderr, one line each.

use std::path::{Path, PathBuf};

use ccscope_sim::{load_scenario, Simulation};

fn main() {
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/ccscope/data/traces");
    for arg in std::env::args().skip(1) {
        let p = PathBuf::from(&arg);
        let text = std::fs::read_to_string(&p).expect("readable scenario");
        let mut sc =
            load_scenario(&text, Some(&p), &[traces.clone()]).unwrap_or_else(|e| panic!("{e}"));
        sc.cwnd_log = true;
        let (r, log) = Simulation::new(&sc).expect("builds").run();
        for v in r.conservation_violations() {
            eprintln!("{arg}: {v}");
        }
        println!("== {arg}\n{r:?}\n{log:?}");
    }
}
