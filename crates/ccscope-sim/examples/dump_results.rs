//! The whole `RunResult` (its `Debug` text, window log included) of a fixed set of scenarios, to diff
//! two builds that must give bit-identical results: `cargo run --release -p ccscope-sim --example
//! dump_results > before.txt`, change, rerun into `after.txt`, `cmp before.txt after.txt`.
//! The set: the ns-3 dumbbell with 1 NewReno, 1 Cubic and 16 NewReno flows (300 s) under each
//! `timeseries` choice; every scenario of python/ccscope/examples (at most 60 s); every registered
//! controller, two flows with its default transport over a lossy dumbbell (20 s).

use ccscope_core::Dur;
use ccscope_sim::{bench, load_scenario, Scenario, Simulation};

fn dump(name: &str, mut sc: Scenario) {
    sc.cwnd_log = true;
    let (r, _) = Simulation::new(&sc).expect("builds").run();
    println!("== {name}\n{r:?}");
}

fn main() {
    for (cc, n) in [("newreno", 1), ("cubic", 1), ("newreno", 16)] {
        for ts in ["", "timeseries = \"link\"\n", "timeseries = \"none\"\n"] {
            let text = format!("{ts}{}", bench::ns3_dumbbell_toml(cc, n));
            dump(
                &format!("ns3 {cc} {n} {ts}"),
                load_scenario(&text, None, &[]).unwrap(),
            );
        }
    }
    for (p, sc) in
        bench::example_scenarios(&ccscope_sim::package_dir!(), Dur::from_ms(60_000)).unwrap()
    {
        dump(&p.display().to_string(), sc);
    }
    for info in ccscope_cc::CONTROLLERS {
        if info.transport == ccscope_cc::Transport::Cmt {
            continue; // the CMT examples above cover SCTP
        }
        let text = format!(
            "seed = 5\nduration_s = 20\nbin_ms = 100\n[data_link]\nrate_mbps = 8\ndelay_ms = 15\n\
             queue = {{ kind = \"droptail\", packets = 40 }}\nloss = {{ kind = \"bernoulli\", p = 0.005 }}\n\
             [ack_link]\nrate_mbps = 8\ndelay_ms = 15\n[[flows]]\ncontroller = \"{}\"\ncount = 2\n\
             start_jitter_s = 1\n",
            info.name
        );
        dump(info.name, load_scenario(&text, None, &[]).unwrap());
    }
}
