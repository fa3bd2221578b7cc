//! Run one bench case (or a scenario file) once, for profilers: `cargo run --release -p ccscope-sim
//! --example run_case -- newreno-1024x12M-3000s` or `-- path/to/scenario.toml`.

use std::path::{Path, PathBuf};

use ccscope_sim::{bench, load_scenario, Simulation};

fn main() {
    let arg = std::env::args()
        .nth(1)
        .expect("a bench case name or a scenario file");
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/ccscope/data/traces");
    let sc = match bench::scale_case(&arg).expect("scale case loads") {
        Some(c) => c.scenario,
        None => {
            let p = PathBuf::from(&arg);
            let text = std::fs::read_to_string(&p).expect("readable scenario");
            load_scenario(&text, Some(&p), &[traces]).unwrap_or_else(|e| panic!("{e}"))
        }
    };
    let t = std::time::Instant::now();
    let (r, _) = Simulation::new(&sc).expect("builds").run();
    let wall = t.elapsed().as_secs_f64();
    let delivered: u64 = r.flows.iter().map(|f| f.delivered).sum();
    println!(
        "{arg}: {wall:.3} s, {delivered} delivered, {} events, {:.0} ns/packet, {:.0} ns/event",
        r.events,
        wall * 1e9 / delivered as f64,
        wall * 1e9 / r.events as f64
    );
}
