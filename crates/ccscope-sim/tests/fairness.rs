//! Fairness among N identical flows (N = 2, 4, 8) on a constant 12 Mbit/s link: Jain's index over the
//! flows' throughput in the last half of a 300 s run is at least 0.95, and NewReno and Cubic keep the
//! link at least 90% busy. Every run also conserves packets.
//!
//! Setup: 12 Mbit/s both ways, 20 ms one way each way (a 40-packet BDP of 1500-byte packets), all
//! flows start at t = 0, 1 s bins. Throughput is the departed bytes of a flow's bins from 150 s to the
//! end.
//!
//! - **NewReno, Cubic:** droptail, 100 packets (120 ms, 2.5 BDPs), a buffer that AIMD can fill and
//!   drain. Measured: Jain >= 0.996, utilization >= 0.996.
//! - **Verus:** RED as in paper 000's multi-user runs (min 3 Mbit, max 9 Mbit, max_p 0.1%; ccscope's
//!   `red` defaults), at R = 2, the R paper 000 ran ("Verus does not always achieve the maximum
//!   available throughput ... due to the R parameter of 2"), where paper 000 reports "almost perfect
//!   fairness", and at the default R = 6. Measured (seed 1): R = 2, Jain 0.998 / 0.996 / 0.984 for 2 / 4
//!   / 8 flows (seeds 1-5: 0.984-0.998), utilization 0.95-0.97 (not asserted: R = 2 caps the queue near
//!   d_min, below a full link); R = 6, Jain 0.995 / 0.995 / 0.954, utilization 0.999.
//!   Not a 100-packet droptail: Verus needs a buffer deep enough for R d_min of queueing. With 100
//!   packets the delay saturates at 140 ms, below R d_min at the default R = 6, the profile's tail
//!   goes flat and Verus restarts slow start every few seconds.
//! - **R = 6 is fair at seed 1 but not at every seed:** over seeds 1-5 Jain is 0.960-0.995 for 2 flows,
//!   0.943-0.995 for 4 and 0.941-0.986 for 8. The spread is the reference algorithm's (docs/deviations.md,
//!   Verus, "Fairness among identical flows"): a flow whose delay profile recorded its small windows at
//!   the other flows' standing queue maps the same `d_est` to a smaller window (8 flows, seed 2: 200 ms
//!   gives 3-9 packets for the flow at 0.75 Mbit/s, 18-35 for the others). Before ccscope took the
//!   R = 6 reference's slow-start exit (`d_est` read off the profile, not `0.75 d_min R`), seed 1 gave
//!   0.930 for 4 flows and 0.723 for 8.

use ccscope_sim::{load_scenario, RunResult, Simulation};

const DURATION_S: f64 = 300.0;

fn run(controller: &str, n: u32, queue: &str, params: &str) -> RunResult {
    run_seeded(controller, n, queue, params, 1)
}

fn run_seeded(controller: &str, n: u32, queue: &str, params: &str, seed: u64) -> RunResult {
    let text = format!(
        r#"
seed = {seed}
duration_s = {DURATION_S}
bin_ms = 1000

[data_link]
rate_mbps = 12
delay_ms = 20
queue = {queue}

[ack_link]
rate_mbps = 12
delay_ms = 20

[[flows]]
controller = "{controller}"
count = {n}
{params}
"#
    );
    let sc = load_scenario(&text, None, &[]).unwrap();
    Simulation::new(&sc).unwrap().run().0
}

/// Jain's index over the flows' departed bytes in the bins from `DURATION_S / 2` on.
fn jain_last_half(r: &RunResult) -> f64 {
    let flows = &r.bins[..r.flows.len()];
    let from = (DURATION_S / 2.0 / r.bin_s).round() as usize;
    let to = (DURATION_S / r.bin_s).round() as usize;
    let x: Vec<f64> = flows
        .iter()
        .map(|b| {
            (from..to)
                .filter_map(|i| b.get(i))
                .map(|t| t.departed_bytes as f64)
                .sum()
        })
        .collect();
    let sum: f64 = x.iter().sum();
    let sum_sq: f64 = x.iter().map(|v| v * v).sum();
    assert!(sum > 0.0, "nothing departed in the last half");
    sum * sum / (x.len() as f64 * sum_sq)
}

fn assert_conserved(r: &RunResult) {
    assert_eq!(r.conservation_violations(), Vec::<String>::new());
}

/// Run N flows, check conservation, Jain >= 0.95 over the last half and, if given, utilization.
fn check(controller: &str, n: u32, queue: &str, params: &str, min_utilization: Option<f64>) {
    let r = run(controller, n, queue, params);
    assert_eq!(r.flows.len(), n as usize);
    assert_conserved(&r);
    let jain = jain_last_half(&r);
    let tputs: Vec<String> = r
        .flows
        .iter()
        .map(|f| format!("{:.2}", f.throughput_mbps))
        .collect();
    let u = r.total.utilization;
    let what = format!(
        "{controller} x{n} {params:?}: jain {jain:.3}, utilization {u:.3}, Mbit/s [{}]",
        tputs.join(" ")
    );
    assert!(jain >= 0.95, "{what}");
    if let Some(min) = min_utilization {
        assert!(u >= min, "{what}");
    }
}

const DROPTAIL_100: &str = r#"{ kind = "droptail", packets = 100 }"#;
/// Paper 000: RED, min 3 Mbit, max 9 Mbit, drop probability 0.1% (ccscope's `red` defaults, spelled out).
const RED_PAPER_000: &str =
    r#"{ kind = "red", min_bytes = 375000, max_bytes = 1125000, max_p = 0.001, weight = 0.002 }"#;

#[test]
fn newreno_2_flows() {
    check("newreno", 2, DROPTAIL_100, "", Some(0.90));
}

#[test]
fn newreno_4_flows() {
    check("newreno", 4, DROPTAIL_100, "", Some(0.90));
}

#[test]
fn newreno_8_flows() {
    check("newreno", 8, DROPTAIL_100, "", Some(0.90));
}

#[test]
fn cubic_2_flows() {
    check("cubic", 2, DROPTAIL_100, "", Some(0.90));
}

#[test]
fn cubic_4_flows() {
    check("cubic", 4, DROPTAIL_100, "", Some(0.90));
}

#[test]
fn cubic_8_flows() {
    check("cubic", 8, DROPTAIL_100, "", Some(0.90));
}

#[test]
fn verus_r2_2_flows() {
    check("verus", 2, RED_PAPER_000, "r = 2", None);
}

#[test]
fn verus_r2_4_flows() {
    check("verus", 4, RED_PAPER_000, "r = 2", None);
}

#[test]
fn verus_r2_8_flows() {
    check("verus", 8, RED_PAPER_000, "r = 2", None);
}

#[test]
fn verus_default_r6_2_flows() {
    check("verus", 2, RED_PAPER_000, "", None);
}

#[test]
fn verus_default_r6_4_flows() {
    check("verus", 4, RED_PAPER_000, "", None);
}

#[test]
fn verus_default_r6_8_flows() {
    check("verus", 8, RED_PAPER_000, "", None);
}

/// R = 6 over RED's seeds 1-5 (flows start together, so the seed moves only RED's drops): fair on
/// average, and no seed below 0.93 (measured: 4 flows 0.943-0.995, mean 0.974; 8 flows 0.941-0.986,
/// mean 0.961).
fn check_r6_over_seeds(n: u32) {
    let jains: Vec<f64> = (1..=5)
        .map(|seed| {
            let r = run_seeded("verus", n, RED_PAPER_000, "", seed);
            assert_conserved(&r);
            jain_last_half(&r)
        })
        .collect();
    let mean = jains.iter().sum::<f64>() / jains.len() as f64;
    assert!(
        mean >= 0.95 && jains.iter().all(|&j| j >= 0.93),
        "verus x{n} R = 6, seeds 1-5: {jains:.3?}, mean {mean:.3}"
    );
}

#[test]
fn verus_default_r6_4_flows_is_fair_on_average_over_five_seeds() {
    check_r6_over_seeds(4);
}

#[test]
fn verus_default_r6_8_flows_is_fair_on_average_over_five_seeds() {
    check_r6_over_seeds(8);
}
