//! Paper 003's controlled flow (specs/003-mtsc.md §1.2, §2.1-2.4): examples/sac_pareto.toml, shortened to
//! 200 s, run once with `lied` and once with `sac` as connection 33 behind the same Pareto background.

use std::path::Path;

use ccscope_sim::{load_scenario, RunResult, Simulation};

const DURATION_S: u32 = 200;

fn run(controller: &str) -> RunResult {
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/ccscope/examples/sac_pareto.toml");
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.contains("controller = \"sac\""));
    let text = text
        .replace("duration_s = 10000", &format!("duration_s = {DURATION_S}"))
        .replace(
            "controller = \"sac\"",
            &format!("controller = \"{controller}\""),
        );
    let sc = load_scenario(&text, Some(&p), &[]).unwrap();
    Simulation::new(&sc).unwrap().run().0
}

fn counter(r: &RunResult, flow: usize, name: &str) -> u64 {
    r.flows[flow]
        .counters
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, v)| v)
        .unwrap_or_else(|| panic!("flow {flow}: no counter {name}"))
}

#[test]
fn lied_and_sac_both_move_data_behind_the_same_background_and_sac_boosts_only_increases() {
    let lied = run("lied");
    let sac = run("sac");
    let me = 32;
    assert_eq!((lied.flows.len(), sac.flows.len()), (33, 33));
    for r in [&lied, &sac] {
        let f = &r.flows[me];
        assert!(
            f.throughput_mbps > 0.5 && f.throughput_mbps <= 10.0,
            "{}: {:.3} Mbit/s",
            f.controller,
            f.throughput_mbps
        );
        assert_eq!(
            f.sent,
            f.delivered + f.dropped + f.in_flight,
            "conservation, {}",
            f.controller
        );
        assert!(
            counter(r, me, "lied_decreases") > 0,
            "{}: never backed off",
            f.controller
        );
    }
    // SAC acts on LIED's increase steps only: every boost is one of them, and there were some.
    let increases = counter(&sac, me, "sac_increases");
    let boosted = counter(&sac, me, "sac_boosted_increases");
    assert_eq!(increases, counter(&sac, me, "lied_increases"));
    assert!(
        boosted > 0 && boosted <= increases,
        "{boosted} boosts, {increases} increases"
    );
    // The inverse schedule's a_t is at most eps(1) = 1 packet per tau.
    assert!(counter(&sac, me, "sac_a_sum_micro") <= boosted * 1_000_000);
    // 200 s of 2 s + 2 s blocks from the first arrival: 49 or 50 complete blocks.
    let blocks = counter(&sac, me, "sac_blocks");
    assert!((48..=50).contains(&blocks), "{blocks} blocks");
    // The generic control and SAC differ (else nothing here could fail)...
    assert_ne!(lied.flows[me].delivered, sac.flows[me].delivered);
    // ...but the background drew the same files and idle times (common random numbers).
    for f in 0..32 {
        let (x, y) = (&lied.transfers[f], &sac.transfers[f]);
        let n = x.len().min(y.len());
        assert!(n >= 5, "flow {f}: {} and {} files", x.len(), y.len());
        assert_eq!(
            x[..n],
            y[..n],
            "flow {f}: the draws differ between controllers"
        );
    }
}

#[test]
fn a_sac_run_is_deterministic() {
    let (a, b) = (run("sac"), run("sac"));
    assert_eq!(a.events, b.events);
    for (x, y) in a.flows.iter().zip(&b.flows) {
        assert_eq!(
            (x.sent, x.delivered, x.dropped),
            (y.sent, y.delivered, y.dropped)
        );
        assert_eq!(x.counters, y.counters);
    }
}
