//! The reliable transport end to end: every byte arrives exactly once in order despite loss,
//! retransmissions repair drops, the RTO fires when a whole window is lost, and packets are conserved.

use ccscope_sim::{load_scenario, RunResult, Simulation};

fn run(text: &str) -> RunResult {
    let sc = load_scenario(text, None, &[]).unwrap();
    Simulation::new(&sc).unwrap().run().0
}

fn scenario(loss: &str, flow: &str) -> String {
    format!(
        "duration_s = 30\n[data_link]\nrate_mbps = 10\ndelay_ms = 20\nqueue = {{ kind = \"droptail\", packets = 50 }}\nloss = {loss}\n\
         [ack_link]\nrate_mbps = 10\ndelay_ms = 20\n[[flows]]\n{flow}\n"
    )
}

fn conserved(r: &RunResult) {
    let t = &r.total;
    assert_eq!(t.sent, t.delivered + t.dropped + t.in_flight);
    let (s, d, x, i) = r.acks;
    assert_eq!(s, d + x + i);
}

#[test]
fn a_finite_transfer_arrives_completely_despite_random_loss() {
    // 2 MB in 1500-byte packets = 1334 packets, 5% loss each way of the data link.
    let r = run(&scenario(
        "{ kind = \"bernoulli\", p = 0.05 }",
        "controller = \"fixed\"\nwindow = 20\ntransport = \"reliable\"\ntransfers_bytes = [2000000]",
    ));
    conserved(&r);
    let f = &r.flows[0];
    assert!(f.dropped > 30, "expected losses, got {}", f.dropped);
    assert!(f.retransmissions >= f.dropped, "every drop is repaired: {} retx for {} drops", f.retransmissions, f.dropped);
    // Goodput counts each packet once: exactly the transfer.
    let goodput_bytes = (f.goodput_mbps * 1e6 / 8.0 * f.duration_s).round() as u64;
    assert!((goodput_bytes as i64 - 1334 * 1500).abs() <= 1500, "goodput bytes {goodput_bytes}");
    assert_eq!(f.in_flight, 0);
}

#[test]
fn bulk_transfer_over_a_lossless_link_never_retransmits() {
    let r = run(&scenario("{ kind = \"none\" }", "controller = \"fixed\"\nwindow = 40\ntransport = \"reliable\""));
    conserved(&r);
    assert_eq!(r.flows[0].retransmissions, 0);
    assert_eq!(r.flows[0].declared_lost, 0);
    assert!(r.flows[0].throughput_mbps > 9.0);
}

#[test]
fn overflowing_a_droptail_buffer_is_repaired_by_fast_retransmit() {
    // A fixed window far above BDP + buffer (33 + 50 packets) overflows the queue all the time.
    let r = run(&scenario("{ kind = \"none\" }", "controller = \"fixed\"\nwindow = 200\ntransport = \"reliable\"\ntransfers_bytes = [3000000]"));
    conserved(&r);
    let f = &r.flows[0];
    assert!(f.dropped > 0);
    let goodput_bytes = (f.goodput_mbps * 1e6 / 8.0 * f.duration_s).round() as u64;
    assert!((goodput_bytes as i64 - 2000 * 1500).abs() <= 1500, "goodput bytes {goodput_bytes}");
}

#[test]
fn transfers_run_one_after_another_with_think_time() {
    let r = run(&scenario(
        "{ kind = \"none\" }",
        "controller = \"fixed\"\nwindow = 10\ntransport = \"reliable\"\ntransfers_bytes = [150000, 150000, 150000]\nthink_s = 2",
    ));
    conserved(&r);
    let f = &r.flows[0];
    assert_eq!(f.delivered, 300);
    // Three transfers and two 2 s pauses: the flow is busy > 4 s.
    assert!(f.duration_s > 4.0, "duration {}", f.duration_s);
}

#[test]
fn the_same_seed_reproduces_a_lossy_reliable_run_exactly() {
    let text = scenario("{ kind = \"gilbert_elliott\", p_gb = 0.01, p_bg = 0.3 }", "controller = \"fixed\"\nwindow = 25\ntransport = \"reliable\"");
    assert_eq!(format!("{:?}", run(&text).flows), format!("{:?}", run(&text).flows));
}
