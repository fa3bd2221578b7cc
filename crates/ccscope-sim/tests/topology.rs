//! Topologies: packets are conserved on every link and for every flow, the parking lot gives the
//! textbook unfairness, access links cap their flow, paths keep their own counters, and bad
//! topologies are refused with an error naming the field.

use std::path::{Path, PathBuf};

use ccscope_sim::{load_scenario, RunResult, Simulation};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/ccscope")
}

fn run_text(text: &str) -> RunResult {
    let sc = load_scenario(
        text,
        Some(Path::new("t.toml")),
        &[root().join("data/traces")],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(&sc).unwrap().run().0
}

fn run_example(name: &str) -> RunResult {
    let p = root().join("examples").join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&p).unwrap();
    let mut sc = load_scenario(&text, Some(&p), &[root().join("data/traces")])
        .unwrap_or_else(|e| panic!("{e}"));
    // Conservation does not depend on length: the 10,000 s paper-003 examples run their first 600 s.
    sc.duration = sc.duration.min(ccscope_core::Dur::from_ms(600_000));
    Simulation::new(&sc).unwrap().run().0
}

/// Every conservation law holds, per flow, link, path and for the ACKs.
fn assert_conserved(name: &str, r: &RunResult) {
    assert_eq!(r.conservation_violations(), Vec::<String>::new(), "{name}");
}

#[test]
fn conservation_violations_name_each_broken_law() {
    let mut r = run_example("parking_lot");
    assert_conserved("parking lot", &r);
    r.flows[1].dropped += 1;
    r.links[0].forwarded += 1;
    r.acks.2 += 1;
    r.paths[0].acks_sent = 0;
    let v = r.conservation_violations();
    assert_eq!(v.len(), 4, "{v:?}");
    assert!(v[0].starts_with("flow Some(1): sent "), "{v:?}");
    assert!(
        v[1].starts_with(&format!("link {}: departures ", r.links[0].name)),
        "{v:?}"
    );
    assert!(v[2].starts_with("ACKs: sent "), "{v:?}");
    assert!(v[3].starts_with("path 0/0: "), "{v:?}");
}

#[test]
fn every_example_conserves_packets_per_link_per_flow_and_per_path() {
    let mut names: Vec<String> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .filter_map(|e| {
            e.ok()?
                .path()
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    assert!(names.len() >= 22, "{names:?}");
    assert!(
        names.iter().any(|n| n == "cmt_two_paths") && names.iter().any(|n| n == "cmt_single_path"),
        "{names:?}"
    );
    for n in &names {
        assert_conserved(n, &run_example(n));
    }
}

/// A parking lot of `hops` 10 Mbit/s links with one long NewReno flow across all and one cross flow
/// per link. Returns (long flow's throughput, the cross flows' throughputs, the run).
fn parking_lot(hops: usize, secs: u32, seed: u64) -> (f64, Vec<f64>, RunResult) {
    let mut t = format!("duration_s = {secs}\nseed = {seed}\n");
    for k in 1..=hops {
        t += &format!("[links.hop{k}]\nrate_mbps = 10\ndelay_ms = 10\nqueue = {{ kind = \"droptail\", packets = 100 }}\n");
        t += &format!("[links.back{k}]\nrate_mbps = 100\ndelay_ms = 10\n");
    }
    let names = |p: &str, rev: bool| {
        let mut v: Vec<String> = (1..=hops).map(|k| format!("\"{p}{k}\"")).collect();
        if rev {
            v.reverse();
        }
        v.join(", ")
    };
    t += &format!(
        "[[flows]]\ncontroller = \"newreno\"\nstart_jitter_s = 1\nroute = [{}]\nack_route = [{}]\n",
        names("hop", false),
        names("back", true)
    );
    for k in 1..=hops {
        t += &format!("[[flows]]\ncontroller = \"newreno\"\nstart_jitter_s = 1\nroute = [\"hop{k}\"]\nack_route = [\"back{k}\"]\n");
    }
    let r = run_text(&t);
    assert_conserved("parking lot", &r);
    let long = r.flows[0].throughput_mbps;
    let cross = r.flows[1..].iter().map(|f| f.throughput_mbps).collect();
    (long, cross, r)
}

#[test]
fn parking_lot_long_flow_gets_less_than_each_one_hop_flow() {
    let r = run_example("parking_lot");
    assert_conserved("parking_lot", &r);
    let long = r.flows[0].throughput_mbps;
    for f in &r.flows[1..] {
        assert!(
            long < f.throughput_mbps,
            "long {long:.2} vs cross {:.2}",
            f.throughput_mbps
        );
    }
    // Every bottleneck is busy and the index says the shares are unequal.
    for l in r.links.iter().filter(|l| l.name.starts_with("hop")) {
        assert!(l.utilization > 0.9, "{}: {:.3}", l.name, l.utilization);
    }
    assert!(r.jain_index.unwrap() < 0.95, "{:?}", r.jain_index);
}

#[test]
fn parking_lot_long_flow_share_falls_as_hops_are_added() {
    // Mean over five start-time draws (1 s of jitter per flow): one run's share depends on phase.
    let share = |hops| {
        let shares = (1..=5).map(|seed| {
            let (long, cross, _) = parking_lot(hops, 60, seed);
            long / (long + cross.iter().sum::<f64>() / cross.len() as f64)
        });
        shares.sum::<f64>() / 5.0
    };
    let s: Vec<f64> = (1..=3).map(share).collect();
    // One hop: two identical flows on one link share it about equally.
    assert!((s[0] - 0.5).abs() < 0.1, "{s:?}");
    assert!(
        s[0] > s[1] && s[1] > s[2],
        "long flow's share by hops: {s:?}"
    );
}

#[test]
fn a_round_trip_over_three_hops_is_three_serializations_and_both_directions_delays() {
    // Store and forward, as ns-3's point-to-point devices (experiments/ns3/parking_lot.cc): one packet in
    // flight crosses hop1..hop3 (1502 B at 10 Mbit/s, 10 ms each), its ACK back3..back1 (54 B at 100 Mbit/s).
    let mut t = String::from("duration_s = 100\n");
    for k in 1..=3 {
        t += &format!("[links.hop{k}]\nrate_mbps = 10\ndelay_ms = 10\nqueue = {{ kind = \"droptail\", packets = 100 }}\n");
        t += &format!("[links.back{k}]\nrate_mbps = 100\ndelay_ms = 10\n");
    }
    t += "[[flows]]\ncontroller = \"fixed\"\nwindow = 1\ntransport = \"reliable\"\npacket_bytes = 1502\nack_bytes = 54\n\
          route = [\"hop1\", \"hop2\", \"hop3\"]\nack_route = [\"back3\", \"back2\", \"back1\"]\n";
    let r = run_text(&t);
    assert_conserved("three hops, one packet in flight", &r);
    // 1502 B at 10 Mbit/s = 1,201,600 ns per hop; 54 B at 100 Mbit/s = 4,320 ns per hop.
    let forward_ns = 3 * (1502 * 8 * 100) + 30_000_000;
    let rtt_ns = forward_ns + 3 * (54 * 8 * 10) + 30_000_000;
    // Packet k leaves at k x RTT and arrives one forward trip later; those arrived by 100 s are delivered.
    let expected = (100_000_000_000u64 - forward_ns) / rtt_ns + 1;
    assert_eq!(r.flows[0].delivered, expected);
}

/// One client: a 10 Mbit/s access link in front of a `bottleneck_mbps` link.
fn access(bottleneck_mbps: f64) -> RunResult {
    run_text(&format!(
        "duration_s = 30\n\
         [links.access]\nper_flow = true\nrate_mbps = 10\ndelay_ms = 5\nqueue = {{ kind = \"droptail\", packets = 1000 }}\n\
         [links.bottleneck]\nrate_mbps = {bottleneck_mbps}\ndelay_ms = 5\nqueue = {{ kind = \"droptail\", packets = 50 }}\n\
         [links.back]\nrate_mbps = 100\ndelay_ms = 10\n\
         [[flows]]\ncontroller = \"cubic\"\npacket_bytes = 1000\nack_bytes = 40\nroute = [\"access\", \"bottleneck\"]\nack_route = [\"back\"]\n"
    ))
}

#[test]
fn a_10_mbit_access_link_caps_one_flow_at_10_mbit_on_a_faster_bottleneck() {
    let r = access(100.0);
    assert_conserved("access", &r);
    let t = r.flows[0].throughput_mbps;
    assert!(t <= 10.0 && t > 9.0, "{t}");
    let bottleneck = r.links.iter().find(|l| l.name == "bottleneck").unwrap();
    assert!(bottleneck.utilization < 0.11, "{}", bottleneck.utilization);
    let acc = r.links.iter().find(|l| l.name == "access#0").unwrap();
    assert!(acc.utilization > 0.9, "{}", acc.utilization);
}

#[test]
fn access_links_example_drops_only_at_the_bottleneck() {
    let r = run_example("access_links");
    assert_conserved("access_links", &r);
    let dropped = |prefix: &str| {
        r.links
            .iter()
            .filter(|l| l.name.starts_with(prefix))
            .map(|l| l.dropped)
            .sum::<u64>()
    };
    assert!(dropped("bottleneck") > 0);
    assert_eq!(dropped("access"), 0);
    assert_eq!(dropped("server"), 0);
    // Four copies of each per-flow link, one per client.
    assert_eq!(
        r.links
            .iter()
            .filter(|l| l.name.starts_with("access#"))
            .count(),
        4
    );
    let b = r.links.iter().find(|l| l.name == "bottleneck").unwrap();
    assert!(b.utilization > 0.9, "{}", b.utilization);
    assert!(r.total.throughput_mbps <= 10.0);
}

#[test]
fn two_paths_keep_their_own_counters_and_loss_rates() {
    let r = run_example("two_paths");
    assert_conserved("two_paths", &r);
    let (p0, p1) = (&r.paths[0], &r.paths[1]);
    assert_eq!(r.paths.len(), 2);
    // Round-robin: the paths' counts differ by at most one packet.
    assert!(p0.sent.abs_diff(p1.sent) <= 1, "{} {}", p0.sent, p1.sent);
    // ACKs return on the path their packet took.
    assert_eq!(p0.acks_sent, p0.delivered);
    assert_eq!(p1.acks_sent, p1.delivered);
    // Loss is detected per path: a path overtaking the other does not make packets "lost".
    let f = &r.flows[0];
    assert!(
        f.declared_lost <= f.dropped,
        "declared {} vs dropped {}",
        f.declared_lost,
        f.dropped
    );
    // Random loss at each path's rate (0.1% and 1%), within four binomial standard deviations.
    for (p, rate) in [(p0, 0.001), (p1, 0.01)] {
        let n = p.sent as f64;
        let sd = (n * rate * (1.0 - rate)).sqrt();
        assert!(
            (p.dropped as f64 - n * rate).abs() < 4.0 * sd + 2.0,
            "path {}: {} of {}",
            p.path,
            p.dropped,
            p.sent
        );
    }
}

fn load_err(text: &str) -> String {
    load_scenario(text, Some(Path::new("t.toml")), &[])
        .unwrap_err()
        .to_string()
}

const LINKS: &str = "duration_s = 1\n[links.a]\nrate_mbps = 10\n[links.b]\nrate_mbps = 10\n";

#[test]
fn bad_topologies_are_refused_naming_file_line_and_field() {
    let e = load_err(&format!(
        "{LINKS}[[flows]]\ncontroller = \"fixed\"\nroute = [\"a\", \"c\"]\nack_route = [\"b\"]\n"
    ));
    assert!(
        e.starts_with("t.toml:8: field `flows[0].route`: unknown link `c`"),
        "{e}"
    );
    let e = load_err(&format!(
        "{LINKS}[[flows]]\ncontroller = \"fixed\"\nroute = [\"a\", \"a\"]\nack_route = [\"b\"]\n"
    ));
    assert!(
        e.starts_with("t.toml:8: field `flows[0].route`: link `a` appears twice"),
        "{e}"
    );
    let e = load_err(&format!(
        "{LINKS}[[flows]]\ncontroller = \"fixed\"\nroute = [\"a\"]\n"
    ));
    assert!(
        e.starts_with(
            "t.toml:8: field `flows[0].route`: a flow with a `route` needs an `ack_route`"
        ),
        "{e}"
    );
    let e = load_err(&format!("{LINKS}[[flows]]\ncontroller = \"fixed\"\n"));
    assert!(e.contains("field `flows[0].route`: missing"), "{e}");
    let e = load_err(&LINKS.replace("[links.b]\nrate_mbps = 10", "[links.b]\nrate_mbps = 0"));
    assert!(
        e.starts_with("t.toml:5: field `links.b.rate_mbps`: 0 must be > 0"),
        "{e}"
    );
    let e = load_err(&format!("{LINKS}[[flows]]\ncontroller = \"fixed\"\nroute = [\"a\"]\nack_route = [\"b\"]\ndelay_ms = 3\n"));
    assert!(
        e.contains(
            "field `flows[0].delay_ms`: a flow with a route takes its delays from its links"
        ),
        "{e}"
    );
    let e = load_err(&format!("monitor = \"zz\"\n{LINKS}[[flows]]\ncontroller = \"fixed\"\nroute = [\"a\"]\nack_route = [\"b\"]\n"));
    assert!(e.contains("field `monitor`: unknown link `zz`"), "{e}");
    // A line break in a name the user typed is shown escaped: the error stays one line.
    let e = load_err(&format!("monitor = \"z\\nz\"\n{LINKS}[[flows]]\ncontroller = \"fixed\"\nroute = [\"a\"]\nack_route = [\"b\"]\n"));
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("field `monitor`: unknown link `z\\nz`"), "{e}");
}

#[test]
fn huge_requests_are_refused_before_anything_is_allocated() {
    let flow = "[[flows]]\ncontroller = \"fixed\"\nroute = [\"a\"]\nack_route = [\"b\"]\n";
    let e = load_err(&format!(
        "{LINKS}{}",
        flow.replace("[[flows]]\n", "[[flows]]\ncount = 99999999\n")
    ));
    assert!(
        e.contains("field `flows[0].count`: 99999999 flows in all: at most"),
        "{e}"
    );
    let e = load_err(&format!(
        "{}{flow}",
        LINKS.replace("duration_s = 1", "duration_s = 1e300")
    ));
    assert_eq!(
        e,
        "t.toml:1: field `duration_s`: 1e300 s is beyond 1e7 s (the longest run)"
    );
}

#[test]
fn a_fixed_ack_path_carries_every_ack_whatever_path_the_data_took() {
    let text = std::fs::read_to_string(root().join("examples/two_paths.toml")).unwrap();
    let r = run_text(
        &text
            .replace("duration_s = 30", "duration_s = 5")
            .replace("window = 100", "window = 100\nack_path = 1"),
    );
    assert_conserved("two_paths ack_path = 1", &r);
    let (p0, p1) = (&r.paths[0], &r.paths[1]);
    assert!(p0.delivered > 0 && p1.delivered > 0);
    assert_eq!(
        (p0.acks_sent, p1.acks_sent),
        (0, p0.delivered + p1.delivered)
    );
}

#[test]
fn time_series_are_kept_only_where_asked() {
    let text = std::fs::read_to_string(root().join("examples/parking_lot.toml"))
        .unwrap()
        .replace("duration_s = 60", "duration_s = 5");
    let bins = |extra: &str| {
        let r = run_text(&format!("{extra}\n{text}"));
        r.bins.iter().map(|b| !b.is_empty()).collect::<Vec<bool>>()
    };
    // Four flows, then the monitored link last.
    assert_eq!(bins(""), [true; 5]);
    assert_eq!(
        bins("timeseries = \"link\""),
        [false, false, false, false, true]
    );
    assert_eq!(bins("timeseries = \"none\""), [false; 5]);
    let one = text.replacen(
        "controller = \"newreno\"\nroute = [\"hop1\"]",
        "controller = \"newreno\"\ntimeseries = true\nroute = [\"hop1\"]",
        1,
    );
    let r = run_text(&format!("timeseries = \"none\"\n{one}"));
    assert_eq!(
        r.bins.iter().map(|b| !b.is_empty()).collect::<Vec<_>>(),
        [false, true, false, false, false]
    );
}
