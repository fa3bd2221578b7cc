//! PIE (both flavours: Mahimahi's pie_packet_queue.cc and RFC 8033 as Linux runs it) in front of one
//! bulk flow on a constant 12 Mbit/s link, 20 ms one way each way (a 40-packet BDP of 1500-byte
//! packets), 60 s: PIE holds the mean queueing delay near its 15 ms target (Mahimahi's, under it) where
//! a drop-tail queue of the same 200 packets (200 ms) fills, at about the same throughput. Every run
//! conserves packets and replays with its seed.

use ccscope_sim::{load_scenario, RunResult, Simulation};

fn run(controller: &str, queue: &str, seed: u64) -> RunResult {
    let text = format!(
        r#"
seed = {seed}
duration_s = 60

[data_link]
rate_mbps = 12
delay_ms = 20
queue = {queue}

[ack_link]
rate_mbps = 12
delay_ms = 20

[[flows]]
controller = "{controller}"
"#
    );
    let sc = load_scenario(&text, None, &[]).unwrap();
    Simulation::new(&sc).unwrap().run().0
}

fn assert_conserved(r: &RunResult) {
    assert_eq!(r.conservation_violations(), Vec::<String>::new());
}

const PIE: &str = r#"{ kind = "pie", flavour = "mahimahi", packets = 200 }"#;
const PIE_RFC: &str = r#"{ kind = "pie", flavour = "rfc8033", packets = 200 }"#;
/// Gains 62.5 times smaller: Linux 4.4's per-second alpha and beta on Mahimahi's millisecond delays.
const PIE_SLOW: &str =
    r#"{ kind = "pie", flavour = "mahimahi", packets = 200, alpha = 0.002, beta = 0.02 }"#;
const DROPTAIL: &str = r#"{ kind = "droptail", packets = 200 }"#;

#[test]
fn pie_holds_a_bulk_flows_queueing_delay_near_its_target_far_below_droptails() {
    // Measured (seed 1), mean queueing delay and throughput: cubic 7.2 ms at 11.81 Mbit/s (Mahimahi),
    // 16.7 ms at 11.63 (RFC 8033), droptail 167.7 ms at 11.99; newreno 6.2 ms at 10.80, 18.2 at 11.57,
    // droptail 142.7 at 11.99.
    for controller in ["cubic", "newreno"] {
        let tail = run(controller, DROPTAIL, 1);
        assert_conserved(&tail);
        let (qt, tt) = (
            tail.total.queue_delay_mean_ms.unwrap(),
            tail.total.throughput_mbps,
        );
        for (queue, lo, hi) in [(PIE, 2.0, 15.0), (PIE_RFC, 10.0, 25.0)] {
            let pie = run(controller, queue, 1);
            assert_conserved(&pie);
            let (qp, tp) = (
                pie.total.queue_delay_mean_ms.unwrap(),
                pie.total.throughput_mbps,
            );
            assert!(
                qp > lo && qp < hi,
                "{controller} {queue}: mean queueing delay {qp} ms"
            );
            assert!(
                qt > 5.0 * qp,
                "{controller} {queue}: droptail {qt} ms, PIE {qp} ms"
            );
            assert!(
                tp > 0.88 * tt,
                "{controller} {queue}: {tp} Mbit/s, droptail {tt}"
            );
        }
    }
}

#[test]
fn pie_runs_replay_with_their_seed() {
    let (a, b) = (run("cubic", PIE, 3), run("cubic", PIE, 3));
    assert_conserved(&a);
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
    assert_eq!(format!("{:?}", a.links), format!("{:?}", b.links));
    // The early drops draw on the seed: another seed drops other packets.
    assert_ne!(
        format!("{:?}", a.flows),
        format!("{:?}", run("cubic", PIE, 4).flows)
    );
}

#[test]
#[ignore = "prints the PIE against droptail table; run with --ignored --nocapture"]
fn print_pie_against_droptail() {
    for controller in ["cubic", "newreno"] {
        for seed in 1..=3 {
            for (name, q) in [
                ("pie", PIE),
                ("pie/62.5", PIE_SLOW),
                ("rfc8033", PIE_RFC),
                ("droptail", DROPTAIL),
            ] {
                let t = run(controller, q, seed).total;
                println!(
                    "{controller:8} seed {seed} {name:9} qdelay mean {:6.1} ms p95 {:6.1} ms  {:5.2} Mbit/s  drops {}",
                    t.queue_delay_mean_ms.unwrap(),
                    t.queue_delay_p95_ms.unwrap(),
                    t.throughput_mbps,
                    t.dropped
                );
            }
        }
    }
}
