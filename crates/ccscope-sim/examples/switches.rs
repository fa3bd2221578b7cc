//! Run one scenario file with several sets of flow keys appended to its last `[[flows]]` table, and
//! print each run's transport counts: `cargo run --release -p ccscope-sim --example switches --
//! scenario.toml 'frto = false' 'frto = true'` (each argument after the file is one run's keys,
//! newline-separated; the file's last table must be the `[[flows]]` to change).

use std::path::{Path, PathBuf};

use ccscope_sim::{load_scenario, Simulation};

fn main() {
    let mut args = std::env::args().skip(1);
    let file = PathBuf::from(args.next().expect("a scenario file"));
    let base = std::fs::read_to_string(&file).expect("readable scenario");
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/ccscope/data/traces");
    for keys in args {
        let text = format!("{base}\n{}\n", keys.replace("\\n", "\n"));
        let sc = load_scenario(&text, Some(&file), std::slice::from_ref(&traces))
            .unwrap_or_else(|e| panic!("{e}"));
        let (r, _) = Simulation::new(&sc).expect("builds").run();
        for f in r.flows.iter().filter(|f| f.flow.is_some()) {
            let counters: Vec<String> = f
                .counters
                .iter()
                .map(|c| format!("{}={}", c.0, c.1))
                .collect();
            println!(
                "[{}] flow {:?} {}: goodput {:.3} Mbit/s, rtos {}, retx {}, drops {}, {}",
                keys.replace('\n', "; "),
                f.flow,
                f.controller,
                f.goodput_mbps,
                f.rtos,
                f.retransmissions,
                f.dropped,
                counters.join(" ")
            );
        }
    }
}
