//! SCTP-CMT in the simulator (paper 002 §3.2, §5; specs/002-cmt.md): whole-association claims on
//! small topologies built in the test, plus the shipped examples.

use std::path::Path;

use ccscope_sim::metrics::PathSummary;
use ccscope_sim::{load_scenario, FlowSummary, RunResult, Simulation};

const MTU: f64 = 1500.0;

fn run_text(text: &str) -> RunResult {
    let sc = load_scenario(text, Some(Path::new("t.toml")), &[]).unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(&sc).unwrap().run().0
}

fn run_example(name: &str) -> RunResult {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../python/ccscope/examples")
        .join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&p).unwrap();
    Simulation::new(&load_scenario(&text, Some(&p), &[]).unwrap())
        .unwrap()
        .run()
        .0
}

/// One path: (rate Mbit/s, round-trip propagation ms, Bernoulli loss p).
#[derive(Clone, Copy)]
struct P(f64, f64, f64);

/// A CMT association over `paths`, each its own bottleneck (deep queue) with an uncongested way back.
fn scenario(paths: &[P], rbuf: u64, secs: u32, extra: &str) -> String {
    let mut t = format!("duration_s = {secs}\nseed = 7\n");
    let mut routes = Vec::new();
    for (i, P(mbps, rtt_ms, p)) in paths.iter().enumerate() {
        let loss = if *p > 0.0 {
            format!("loss = {{ kind = \"bernoulli\", p = {p} }}\n")
        } else {
            String::new()
        };
        t += &format!("[links.p{i}]\nrate_mbps = {mbps}\ndelay_ms = {}\nqueue = {{ kind = \"droptail\", packets = 2000 }}\n{loss}", rtt_ms / 2.0);
        t += &format!(
            "[links.b{i}]\nrate_mbps = 1000\ndelay_ms = {}\n",
            rtt_ms / 2.0
        );
        routes.push(format!("{{ route = [\"p{i}\"], ack_route = [\"b{i}\"] }}"));
    }
    t += &format!("[[flows]]\ncontroller = \"sctp\"\ntransport = \"cmt\"\nrbuf_bytes = {rbuf}\n{extra}\npaths = [{}]\n", routes.join(", "));
    t
}

fn counter(f: &FlowSummary, name: &str) -> u64 {
    f.counters
        .iter()
        .find(|(k, _)| *k == name)
        .unwrap_or_else(|| panic!("no counter {name}: {:?}", f.counters))
        .1
}

fn goodput(r: &RunResult) -> f64 {
    r.flows[0].goodput_mbps
}

fn mean_cwnd_packets(p: &PathSummary) -> f64 {
    p.mean_cwnd_bytes
        .expect("a CMT path reports its mean window")
        / MTU
}

#[test]
fn cross_path_reordering_over_10_and_100_ms_paths_triggers_no_fast_retransmit() {
    let r = run_text(&scenario(
        &[P(20.0, 10.0, 0.0), P(20.0, 100.0, 0.0)],
        512_000,
        20,
        "",
    ));
    let f = &r.flows[0];
    // The receiver held far more gap blocks than TCP's three SACK blocks could carry.
    assert!(counter(f, "max_gap_blocks") > 3, "{:?}", f.counters);
    // SFR: missing reports come only from later TSNs of the same destination.
    assert_eq!(
        (
            counter(f, "fast_retransmits"),
            counter(f, "timeouts"),
            f.retransmissions
        ),
        (0, 0, 0)
    );
    assert!(
        r.paths.iter().all(|p| p.sent > 10_000),
        "both paths carried data: {:?}",
        r.paths
    );
}

#[test]
fn the_association_never_has_more_than_rbuf_outstanding() {
    for (paths, rbuf, wm) in [
        (
            vec![P(21.0, 40.0, 1e-3), P(20.0, 40.0, 1e-4)],
            128_000,
            "window_management = \"dynamic\"",
        ),
        (vec![P(21.0, 40.0, 1e-2), P(5.0, 200.0, 1e-3)], 64_000, ""),
        (vec![P(50.0, 40.0, 1e-3)], 30_000, ""),
    ] {
        let r = run_text(&scenario(&paths, rbuf, 20, wm));
        let max = counter(&r.flows[0], "max_outstanding_bytes");
        // The buffer binds (the second case less: out-of-order data from the fast path fills it).
        assert!(
            max <= rbuf && 2 * max > rbuf,
            "outstanding peaked at {max} with RBUF {rbuf}"
        );
    }
}

#[test]
fn a_lossy_path_fast_retransmits_to_its_own_destination_only() {
    let r = run_text(&scenario(
        &[P(10.0, 40.0, 0.0), P(10.0, 40.0, 0.01)],
        256_000,
        30,
        "",
    ));
    let (clean, lossy) = (&r.paths[0], &r.paths[1]);
    assert_eq!(
        (
            clean.fast_retransmits,
            clean.retransmissions,
            clean.timeouts
        ),
        (0, 0, 0),
        "{clean:?}"
    );
    assert!(lossy.fast_retransmits > 50, "{lossy:?}");
    // A10: every retransmission of a path-1 loss went to path 1.
    assert!(lossy.retransmissions >= lossy.fast_retransmits, "{lossy:?}");
    assert_eq!(r.flows[0].retransmissions, lossy.retransmissions);
}

#[test]
fn a_single_path_with_bandwidth_delay_far_above_rbuf_runs_at_rbuf_per_round_trip() {
    // b d = 100 Mbit/s x 40 ms = 333 packets >> W = 20 packets.
    let rbuf = 30_000u64;
    let r = run_text(&scenario(&[P(100.0, 40.0, 0.0)], rbuf, 30, ""));
    // W / RTT, RTT = d + one packet's transmission at 100 Mbit/s and an ACK's at 1 Gbit/s.
    let rtt_s = 0.040 + 1500.0 * 8.0 / 100e6 + 76.0 * 8.0 / 1e9;
    let expected = rbuf as f64 * 8.0 / rtt_s / 1e6;
    let g = goodput(&r);
    assert!(
        (g - expected).abs() < 0.03 * expected,
        "goodput {g:.3} Mbit/s, W/RTT {expected:.3}"
    );
}

#[test]
fn single_path_throughput_falls_as_loss_rises() {
    let g: Vec<f64> = [1e-4, 1e-3, 1e-2]
        .iter()
        .map(|&p| goodput(&run_text(&scenario(&[P(21.0, 40.0, p)], 128_000, 60, ""))))
        .collect();
    assert!(g[0] > g[1] && g[1] > g[2], "{g:?}");
    // Loss-limited at 1e-2: far below the link.
    assert!(g[2] < 0.5 * g[0], "{g:?}");
}

#[test]
fn two_paths_with_a_large_buffer_beat_either_path_alone() {
    let (a, b) = (P(21.0, 40.0, 1e-3), P(20.0, 40.0, 1e-4));
    let rbuf = 1_000_000;
    let one = |p: P| goodput(&run_text(&scenario(&[p], rbuf, 60, "")));
    let both = goodput(&run_text(&scenario(&[a, b], rbuf, 60, "")));
    let (ga, gb) = (one(a), one(b));
    assert!(
        both > 1.2 * ga.max(gb),
        "both {both:.2}, alone {ga:.2} and {gb:.2}"
    );
}

#[test]
fn dynamic_management_keeps_the_windows_within_rbuf() {
    let paths = [P(21.0, 40.0, 1e-3), P(20.0, 40.0, 1e-4)];
    for rank in ["bandwidth", "throughput"] {
        let r = run_text(&scenario(
            &paths,
            128_000,
            60,
            &format!("window_management = \"dynamic\"\ndynamic_rank = \"{rank}\""),
        ));
        let max = counter(&r.flows[0], "max_cwnd_sum_bytes");
        assert!(max <= 128_000, "{rank}: sum of windows peaked at {max}");
    }
    // Without management, model mode stops a window at W = floor(RBUF / MTU) packets (paper §3.1,
    // the chain's cap); RFC 4960's growth on a full window alone passes RBUF by the last MTU.
    let max_sum = |mode: &str| {
        let extra = format!("cmt_mode = \"{mode}\"");
        let r = run_text(&scenario(&[P(21.0, 40.0, 1e-4)], 128_000, 30, &extra));
        counter(&r.flows[0], "max_cwnd_sum_bytes")
    };
    assert_eq!(max_sum("model"), 85 * 1500);
    assert!(max_sum("rfc4960") > 128_000);
}

#[test]
fn dynamic_management_by_bandwidth_gives_the_buffer_to_the_faster_path() {
    // Lossless, both b d >> RBUF: the 30 Mbit/s path ranks first and keeps most of the buffer.
    let paths = [P(10.0, 40.0, 0.0), P(30.0, 40.0, 0.0)];
    let r = run_text(&scenario(
        &paths,
        128_000,
        30,
        "window_management = \"dynamic\"",
    ));
    let (slow, fast) = (
        mean_cwnd_packets(&r.paths[0]),
        mean_cwnd_packets(&r.paths[1]),
    );
    assert!(
        fast > 3.0 * slow,
        "mean windows {slow:.1} and {fast:.1} packets"
    );
}

#[test]
fn static_limits_hold_once_the_buffer_is_full_and_give_way_while_it_has_room() {
    // b d = 333 packets on each path: both would take the whole buffer (85 packets).
    let paths = [P(100.0, 40.0, 0.0), P(100.0, 40.0, 0.0)];
    let r = run_text(&scenario(
        &paths,
        128_000,
        30,
        "window_management = \"static\"\ncwnd_limits_packets = [20, 65]",
    ));
    let (a, b) = (
        mean_cwnd_packets(&r.paths[0]),
        mean_cwnd_packets(&r.paths[1]),
    );
    assert!(
        (19.0..=21.5).contains(&a) && (62.0..=65.5).contains(&b),
        "mean windows {a:.2} and {b:.2} packets for limits 20 and 65"
    );
    assert!(counter(&r.flows[0], "max_cwnd_sum_bytes") <= 128_000);
    // Limits summing to far less than RBUF: the windows exceed them while the buffer has room.
    let r = run_text(&scenario(
        &paths,
        128_000,
        30,
        "window_management = \"static\"\ncwnd_limits_packets = [10, 10]",
    ));
    let (a, b) = (
        mean_cwnd_packets(&r.paths[0]),
        mean_cwnd_packets(&r.paths[1]),
    );
    assert!(
        a + b > 70.0 && a > 20.0 && b > 20.0,
        "mean windows {a:.2} and {b:.2} packets"
    );
}

#[test]
fn the_same_seed_gives_identical_results() {
    let text = scenario(
        &[P(21.0, 40.0, 1e-3), P(20.0, 60.0, 1e-3)],
        128_000,
        20,
        "window_management = \"dynamic\"",
    );
    let (a, b) = (run_text(&text), run_text(&text));
    assert_eq!(
        format!("{:?}{:?}{:?}", a.flows, a.paths, a.links),
        format!("{:?}{:?}{:?}", b.flows, b.paths, b.links)
    );
    let other = run_text(&text.replace("seed = 7", "seed = 8"));
    assert_ne!(
        a.flows[0].sent, other.flows[0].sent,
        "the seed drives the losses"
    );
}

#[test]
fn the_two_path_example_uses_both_paths_and_reports_each() {
    let r = run_example("cmt_two_paths");
    let f = &r.flows[0];
    assert_eq!(f.sent, f.delivered + f.dropped + f.in_flight);
    assert!(
        r.paths.len() == 2
            && r.paths
                .iter()
                .all(|p| p.sent > 1000 && p.mean_cwnd_bytes.is_some()),
        "{:?}",
        r.paths
    );
    // Loss on each path at its Bernoulli rate shows up as that path's fast retransmits.
    assert!(
        r.paths[0].fast_retransmits > r.paths[1].fast_retransmits,
        "{:?}",
        r.paths
    );
    // The two paths together beat the 21 Mbit/s path alone at p = 1e-3 (about 11.5 Mbit/s, paper §6.1).
    let single = goodput(&run_example("cmt_single_path"));
    assert!(goodput(&r) > 1.3 * single, "{} vs {single}", goodput(&r));
}

#[test]
fn bad_cmt_flows_get_one_clear_error_naming_the_field() {
    let ok = scenario(&[P(21.0, 40.0, 1e-3), P(20.0, 40.0, 1e-4)], 128_000, 5, "");
    let err = |t: &str| {
        load_scenario(t, Some(Path::new("t.toml")), &[])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let line_of = |t: &str, key: &str| t.lines().position(|l| l.starts_with(key)).unwrap() + 1;
    // Static without limits; limits of the wrong length; a limit below one packet.
    let t = ok.replace(
        "rbuf_bytes = 128000",
        "rbuf_bytes = 128000\nwindow_management = \"static\"",
    );
    assert_eq!(err(&t), format!("t.toml:{}: field `flows[0].window_management`: static window management needs `cwnd_limits_packets`, one limit per path", line_of(&t, "window_management")));
    let t = ok.replace(
        "rbuf_bytes = 128000",
        "rbuf_bytes = 128000\nwindow_management = \"static\"\ncwnd_limits_packets = [40]",
    );
    assert_eq!(err(&t), format!("t.toml:{}: field `flows[0].cwnd_limits_packets`: 1 limits for 2 paths: give one per path", line_of(&t, "cwnd_limits_packets")));
    let t = ok.replace(
        "rbuf_bytes = 128000",
        "rbuf_bytes = 128000\nwindow_management = \"static\"\ncwnd_limits_packets = [40, 0]",
    );
    assert!(
        err(&t).starts_with(&format!(
            "t.toml:{}: field `flows[0].cwnd_limits_packets[1]`: 0: a limit is at least 1 packet",
            line_of(&t, "cwnd_limits_packets")
        )),
        "{}",
        err(&t)
    );
    // CMT without paths (the dumbbell), and without a buffer.
    let t = "duration_s = 5\n[data_link]\nrate_mbps = 10\n[[flows]]\ncontroller = \"sctp\"\nrbuf_bytes = 128000\n";
    assert!(
        err(t).starts_with("t.toml:4: field `flows[0].paths`: missing: a cmt flow needs `paths"),
        "{}",
        err(t)
    );
    let t = ok.replace("rbuf_bytes = 128000\n", "");
    assert!(
        err(&t).contains("field `flows[0].rbuf_bytes`: missing"),
        "{}",
        err(&t)
    );
    let t = ok.replace(
        "rbuf_bytes = 128000",
        "rbuf_bytes = 128000\ncmt_mode = \"tcp\"",
    );
    assert!(
        err(&t).contains("field `flows[0].cmt_mode`: unknown mode `tcp`"),
        "{}",
        err(&t)
    );
    let t = ok.replace("controller = \"sctp\"", "controller = \"newreno\"");
    assert!(
        err(&t)
            .contains("field `flows[0].controller`: a cmt association runs the `sctp` controller"),
        "{}",
        err(&t)
    );
    // One path is fine: single-homed.
    assert!(load_scenario(&scenario(&[P(21.0, 40.0, 1e-3)], 128_000, 5, ""), None, &[]).is_ok());
}

#[test]
fn rfc_mode_runs_with_its_own_rules() {
    let paths = [P(21.0, 40.0, 1e-3), P(20.0, 40.0, 1e-4)];
    let model = run_text(&scenario(&paths, 128_000, 30, "cmt_mode = \"model\""));
    let rfc = run_text(&scenario(&paths, 128_000, 30, "cmt_mode = \"rfc4960\""));
    assert_ne!(model.flows[0].sent, rfc.flows[0].sent);
    assert!(goodput(&rfc) > 10.0, "{}", goodput(&rfc));
    assert!(counter(&rfc.flows[0], "max_outstanding_bytes") <= 128_000);
}

#[test]
fn rbuf_and_conservation_hold_across_buffers_losses_modes_and_management() {
    // Three paths of 5, 15 and 25 Mbit/s with 10, 100 and 300 ms round trips, shallow queues, loss on
    // data and SACKs alike.
    let mut seed = 0;
    for rbuf in [1500u64, 4500, 20_000, 128_000] {
        for p in [0.0, 0.01, 0.2] {
            for extra in [
                "",
                "window_management = \"dynamic\"",
                "window_management = \"dynamic\"\ndynamic_rank = \"throughput\"",
                "window_management = \"static\"\ncwnd_limits_packets = [1, 2, 30]",
                "cmt_mode = \"rfc4960\"",
                "ack_path = 1",
            ] {
                seed += 1;
                let mut t = format!("duration_s = 20\nseed = {seed}\n");
                for (i, d) in [5.0, 50.0, 150.0].iter().enumerate() {
                    let loss = format!("loss = {{ kind = \"bernoulli\", p = {p} }}");
                    t += &format!("[links.p{i}]\nrate_mbps = {}\ndelay_ms = {d}\nqueue = {{ kind = \"droptail\", packets = 20 }}\n{loss}\n", 5 + 10 * i);
                    t += &format!("[links.b{i}]\nrate_mbps = 100\ndelay_ms = {d}\n{loss}\n");
                }
                let routes = (0..3)
                    .map(|i| format!("{{ route = [\"p{i}\"], ack_route = [\"b{i}\"] }}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                t += &format!("[[flows]]\ncontroller = \"sctp\"\nrbuf_bytes = {rbuf}\n{extra}\npaths = [{routes}]\n");
                let r = run_text(&t);
                let f = &r.flows[0];
                let what = format!("RBUF {rbuf}, p {p}, {}", extra.replace('\n', " "));
                assert!(
                    counter(f, "max_outstanding_bytes") <= rbuf,
                    "{what}: {:?}",
                    f.counters
                );
                if !extra.is_empty()
                    && !extra.starts_with("cmt_mode")
                    && !extra.starts_with("ack_path")
                    && rbuf >= 3 * 1500
                {
                    assert!(
                        counter(f, "max_cwnd_sum_bytes") <= rbuf,
                        "{what}: {:?}",
                        f.counters
                    );
                }
                assert_eq!(f.sent, f.delivered + f.dropped + f.in_flight, "{what}");
                assert!(f.goodput_mbps > 0.0, "{what}");
            }
        }
    }
}
