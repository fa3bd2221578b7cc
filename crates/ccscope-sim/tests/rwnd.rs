//! Flow control of the reliable transport end to end: a receive window or a send buffer smaller
//! than the path's BDP caps a flow at window/RTT, a slow reader caps it at its read rate, and a
//! closed window always reopens (window updates, or persist-timer probes when those are lost).

use ccscope_core::{Bandwidth, Dur};
use ccscope_net::LossConfig;
use ccscope_sim::endpoint::BufferParams;
use ccscope_sim::{load_scenario, FlowSpec, LinkSpec, RunResult, Scenario, Simulation};

const RTT_S: f64 = 0.040;

/// A 100 Mbit/s path with a 40 ms round trip, an unbounded queue and no loss; one NewReno flow.
fn path(buffers: BufferParams, secs: u64) -> Scenario {
    let mut f = FlowSpec::new("newreno");
    f.buffers = buffers;
    Scenario {
        name: "rwnd".into(),
        seed: 1,
        duration: Dur::from_ms(secs * 1000),
        links: vec![
            LinkSpec::constant("data_link", 100.0, 20),
            LinkSpec::constant("ack_link", 100.0, 20),
        ],
        dumbbell: Some((0, 1)),
        monitor: 0,
        flows: vec![f],
        bin: Dur::from_ms(500),
        timeseries: ccscope_sim::scenario::TimeSeries::Flows,
        packet_log: false,
        cwnd_log: false,
    }
}

fn run(sc: &Scenario) -> RunResult {
    Simulation::new(sc).unwrap().run().0
}

/// Delivered Mbit/s of flow 0 from `from_s` to the end of the run (past slow start).
fn rate_mbps(r: &RunResult, from_s: f64) -> f64 {
    let first = (from_s / r.bin_s) as usize;
    let bins = &r.bins[0][first..];
    let bytes: u64 = bins.iter().map(|b| b.delivered_bytes).sum();
    bytes as f64 * 8.0 / (r.sim_end_s - from_s) / 1e6
}

fn conserved(r: &RunResult) {
    assert_eq!(r.conservation_violations(), Vec::<String>::new());
}

fn within(got: f64, want: f64, rel: f64) {
    assert!(
        (got - want).abs() <= rel * want,
        "got {got:.3} Mbit/s, want {want:.3} within {:.0}%",
        rel * 100.0
    );
}

#[test]
fn a_flow_limited_by_a_64_kb_receive_window_runs_at_rwnd_over_rtt() {
    let r = run(&path(
        BufferParams {
            rbuf_bytes: Some(65_536),
            ..Default::default()
        },
        10,
    ));
    conserved(&r);
    // 65536 B hold 43 whole 1500-byte packets.
    let want = 43.0 * 1500.0 * 8.0 / RTT_S / 1e6;
    within(rate_mbps(&r, 2.0), want, 0.02);
    assert_eq!(r.flows[0].retransmissions, 0);
}

#[test]
fn a_flow_limited_by_its_send_buffer_runs_at_sndbuf_over_rtt() {
    let r = run(&path(
        BufferParams {
            sndbuf_bytes: Some(65_536),
            ..Default::default()
        },
        10,
    ));
    conserved(&r);
    within(rate_mbps(&r, 2.0), 43.0 * 1500.0 * 8.0 / RTT_S / 1e6, 0.02);
}

#[test]
fn a_reader_slower_than_the_link_sets_the_flow_rate() {
    // 256 KB buffer: 52 Mbit/s of window, a 20 Mbit/s reader on a 100 Mbit/s link.
    let b = BufferParams {
        rbuf_bytes: Some(262_144),
        read_rate: Some(Bandwidth::from_mbps(20.0)),
        ..Default::default()
    };
    let r = run(&path(b, 10));
    conserved(&r);
    within(rate_mbps(&r, 2.0), 20.0, 0.02);
    assert_eq!(r.flows[0].retransmissions, 0);
}

#[test]
fn a_window_closed_by_a_slow_reader_reopens_through_window_updates() {
    // An 8-packet buffer read at 1 Mbit/s on a 100 Mbit/s link: the window closes over and over.
    let b = BufferParams {
        rbuf_bytes: Some(12_000),
        read_rate: Some(Bandwidth::from_mbps(1.0)),
        ..Default::default()
    };
    let r = run(&path(b, 10));
    conserved(&r);
    within(rate_mbps(&r, 2.0), 1.0, 0.02);
}

#[test]
fn a_closed_window_whose_updates_are_lost_is_reopened_by_persist_probes() {
    // 30% of all ACKs, window updates included, are lost: some reopenings are never heard of
    // (this run sends two zero-window probes; they and RTOs keep it going).
    let b = BufferParams {
        rbuf_bytes: Some(6000),
        read_rate: Some(Bandwidth::from_mbps(0.1)),
        ..Default::default()
    };
    let mut sc = path(b, 30);
    sc.links[1].loss = LossConfig::Bernoulli { p: 0.3 };
    let r = run(&sc);
    conserved(&r);
    let last: u64 = r.bins[0][50..].iter().map(|b| b.delivered_bytes).sum();
    assert!(last > 0, "deadlocked: nothing delivered in the last 5 s");
    let got = rate_mbps(&r, 2.0);
    assert!(got > 0.05 && got <= 0.1, "{got:.3} Mbit/s");
}

#[test]
fn unlimited_buffers_are_the_default_and_change_nothing() {
    let text = |extra: &str| {
        format!(
            "duration_s = 5\n[data_link]\nrate_mbps = 10\ndelay_ms = 20\nqueue = {{ kind = \"droptail\", packets = 30 }}\n\
             loss = {{ kind = \"bernoulli\", p = 0.01 }}\n[[flows]]\ncontroller = \"cubic\"\n{extra}"
        )
    };
    let plain = load_scenario(&text(""), None, &[]).unwrap();
    assert_eq!(plain.flows[0].buffers, BufferParams::default());
    let explicit = load_scenario(&text("rbuf_bytes = \"unlimited\"\nsndbuf_bytes = \"unlimited\"\nread_rate_mbps = \"unlimited\"\n"), None, &[]).unwrap();
    assert_eq!(
        format!("{:?}", run(&plain).flows),
        format!("{:?}", run(&explicit).flows)
    );
    let set = load_scenario(
        &text("rbuf_bytes = 131072\nsndbuf_bytes = 16384\nread_rate_mbps = 8\n"),
        None,
        &[],
    )
    .unwrap();
    let want = BufferParams {
        rbuf_bytes: Some(131_072),
        read_rate: Some(Bandwidth::from_mbps(8.0)),
        sndbuf_bytes: Some(16_384),
    };
    assert_eq!(set.flows[0].buffers, want);
}

#[test]
fn buffer_keys_reject_sizes_below_a_packet_and_a_read_rate_without_a_buffer() {
    let text = |extra: &str| {
        format!("duration_s = 5\n[data_link]\nrate_mbps = 10\ndelay_ms = 20\n[[flows]]\ncontroller = \"cubic\"\n{extra}\n")
    };
    let e = load_scenario(&text("rbuf_bytes = 1000"), None, &[]).unwrap_err();
    assert_eq!(e.field(), Some("flows[0].rbuf_bytes"), "{e}");
    let e = load_scenario(&text("sndbuf_bytes = \"lots\""), None, &[]).unwrap_err();
    assert_eq!(e.field(), Some("flows[0].sndbuf_bytes"), "{e}");
    let e = load_scenario(&text("read_rate_mbps = 5"), None, &[]).unwrap_err();
    assert_eq!(e.field(), Some("flows[0].read_rate_mbps"), "{e}");
}
