//! Paper 003's controlled flow (specs/003-mtsc.md §1.2, §2.1-2.4): examples/sac_pareto.toml, shortened to
//! 200 s, run once with `lied` and once with `sac` as connection 33 behind the same Pareto background;
//! and the `receiver_aggregate` signal (spec §6 item 1) against the packet log.

use std::path::Path;
use std::sync::{Arc, Mutex};

use ccscope_cc::rate::sac::{self, Sac, Signal, SignalSample};
use ccscope_cc::registry::parse_params;
use ccscope_cc::wrap::{Hooks, Wrapped};
use ccscope_cc::{AckEvent, AnyController, Controller, LossEvent, ParamError};
use ccscope_core::Time;
use ccscope_sim::{load_scenario, FlowSpec, RunResult, Simulation};

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

/// Around SAC: hands its level-series observations to the test as they happen.
struct Spy {
    seen: Arc<Mutex<Vec<SignalSample>>>,
}

impl Spy {
    fn drain(&mut self, sac: &mut Sac) {
        let taken = sac.take_signal_log();
        self.seen.lock().unwrap().extend(taken);
    }
}

impl Hooks<Sac> for Spy {
    fn on_ack(&mut self, sac: &mut Sac, now: Time, ev: &AckEvent) {
        sac.on_ack(now, ev);
        self.drain(sac);
    }
    fn on_loss(&mut self, sac: &mut Sac, now: Time, ev: &LossEvent) {
        sac.on_loss(now, ev);
        self.drain(sac);
    }
    fn on_timer(&mut self, sac: &mut Sac, now: Time) {
        sac.on_timer(now);
        self.drain(sac);
    }
}

/// Spec §6 item 1's `receiver_aggregate` signal checked as spec A6 checks gamma: the per-epoch host
/// bytes SAC learned from the receiver's ACK stamps equal a recomputation from the packet log of the
/// receiving host's link (server0: the SAC flow's and 16 background clients' data), within 1 packet.
#[test]
fn receiver_aggregate_series_equals_the_host_arrivals_in_the_packet_log() {
    const SECS: u32 = 60;
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/ccscope/examples/sac_pareto.toml");
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace("duration_s = 10000", &format!("duration_s = {SECS}"))
        .replace(
            "monitor = \"bottleneck\"",
            "monitor = \"server0\"\npacket_log = true",
        )
        .replace(
            "controller = \"sac\"",
            "controller = \"sac\"\nsignal = \"receiver_aggregate\"",
        );
    let sc = load_scenario(&text, Some(&p), &[]).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server0_delay = sc.links[sc.monitor].delay;
    let mut factory = |_: usize, f: &FlowSpec| -> Result<AnyController, ParamError> {
        if f.controller != "sac" {
            return ccscope_cc::build(&f.controller, &f.params);
        }
        let params = parse_params::<sac::Params>("sac", &f.params)?;
        assert_eq!(params.signal, Signal::ReceiverAggregate);
        Ok(AnyController::boxed(Wrapped::new(
            Sac::new(params).record_signal(),
            Spy {
                seen: Arc::clone(&seen),
            },
        )))
    };
    let (res, log) = Simulation::with_factory(&sc, &mut factory).unwrap().run();
    let log = log.expect("packet_log = true");
    let me = 32;
    let f = &res.flows[me];
    assert_eq!(
        f.sent,
        f.delivered + f.dropped + f.in_flight,
        "conservation"
    );
    assert_eq!(counter(&res, me, "sac_no_host_feedback"), 0);
    // Host arrival times: server0 departures (data only, in time order) plus its delay.
    let mut arrivals: Vec<(u64, u64, bool)> = (0..log.len())
        .filter(|&i| log.event[i] == 2)
        .map(|i| {
            let t = log.time_ns[i] + server0_delay.as_ns();
            (t, log.bytes[i] as u64, log.flow[i] == me as i32)
        })
        .collect();
    arrivals.sort_by_key(|a| a.0);
    let bytes_in = |a: Time, b: Time, own_only: bool| -> u64 {
        arrivals
            .iter()
            .filter(|x| x.0 > a.as_ns() && x.0 <= b.as_ns() && (!own_only || x.2))
            .map(|x| x.1)
            .sum()
    };
    let samples = seen.lock().unwrap().clone();
    assert!(samples.len() > 1000, "{} epochs measured", samples.len());
    let (mut host, mut own, mut worst) = (0u64, 0u64, 0i64);
    for (k, s) in samples.iter().enumerate() {
        if k > 0 {
            assert_eq!(s.start, samples[k - 1].end, "spans tile the receive axis");
        }
        let reported = s.host_bytes.expect("every ACK carries the host total");
        let recomputed = bytes_in(s.start, s.end, false);
        let d = reported as i64 - recomputed as i64;
        assert!(
            d.abs() <= 1000,
            "epoch {}: ACKs say {reported} B, the log {recomputed} B",
            s.epoch
        );
        worst = worst.max(d.abs());
        let secs = s.end.since(s.start).as_secs_f64();
        if secs > 0.0 {
            assert!((s.value * secs - reported as f64).abs() < 1e-6 * reported.max(1) as f64);
        }
        host += reported;
        own += bytes_in(s.start, s.end, true);
    }
    let (a, b) = (samples[0].start, samples[samples.len() - 1].end);
    assert!(
        host.abs_diff(bytes_in(a, b, false)) <= 1000,
        "totals over the run"
    );
    // The signal is the host's, not the flow's: the background's data is in it.
    assert!(host > own + 1_000_000, "host {host} B, own {own} B");
    eprintln!("{} epochs, largest difference {worst} B", samples.len());
}

/// Paper 003 eq. 3 at LIED's upper clamp: alone on a 10 Mbit/s path, LIED climbs to the access rate (the
/// clamp, 1,250 packets/s of 1000 B) without a cut; when a NewReno flow arrives at 30 s its gamma there
/// falls below the last epoch's under the clamp, so it cuts and keeps its loss low. Before the fix an epoch
/// held at the clamp always counted as an increase: no cut in the whole run, LIED stayed at the access rate.
#[test]
fn lied_leaves_the_access_rate_when_a_competitor_makes_its_gamma_fall_there() {
    let text = r#"
seed = 1
duration_s = 90
bin_ms = 1000

[data_link]
rate_mbps = 10
delay_ms = 15
queue = { kind = "droptail", packets = 50 }

[ack_link]
rate_mbps = 10
delay_ms = 15

[[flows]]
controller = "lied"
transport = "datagram"
packet_bytes = 1000
ack_bytes = 40

[[flows]]
controller = "newreno"
packet_bytes = 1000
start_s = 30
"#;
    let sc = load_scenario(text, None, &[]).unwrap();
    let (res, _) = Simulation::new(&sc).unwrap().run();
    let lied = &res.flows[0];
    assert_eq!(
        lied.sent,
        lied.delivered + lied.dropped + lied.in_flight,
        "conservation"
    );
    let cuts = counter(&res, 0, "lied_decreases");
    let loss = lied.dropped as f64 / lied.sent as f64;
    assert!(cuts > 0, "no cut at the clamp");
    assert!(
        loss < 0.05,
        "LIED lost {loss:.3} of its packets ({cuts} cuts)"
    );
    assert!(
        res.flows[1].throughput_mbps > 1.0,
        "{}",
        res.flows[1].throughput_mbps
    );
}
