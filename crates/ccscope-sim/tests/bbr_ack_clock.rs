//! BBR v1's bandwidth estimate against an irregular ACK clock (docs/performance.md, "BBR's standing
//! queue (session 19)"). On mm-link's constant 12 Mbit/s link (one 1504-byte opportunity a ms, 20 ms
//! each way, 100-packet droptail) the kernel's estimate ran 1.4-1.5% above the link rate, because the
//! emulator hands some ACKs over a millisecond late. That is past the 1% pacing margin, so the queue
//! climbed from one PROBE_RTT to the next. ccscope's BBR on the same scenario:
//! - with an exact ACK clock, the estimate is the link rate and the queue stays flat;
//! - with ACKs held a millisecond in 10% of the ms, the estimate runs more than 1% high and the queue
//!   climbs between PROBE_RTTs.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use ccscope_cc::model::bbr::{Bbr, Mode};
use ccscope_cc::wrap::{Hooks, Wrapped};
use ccscope_cc::{AckEvent, AnyController, Controller, ParamError};
use ccscope_core::rng::{self, RngExt};
use ccscope_core::Time;
use ccscope_sim::{load_scenario, FlowSpec, Simulation};

const LINK_PPS: f64 = 1000.0;
const DURATION_S: f64 = 31.0;

/// (time s, mode, bandwidth estimate in packets/s) on every ACK.
type Trail = Arc<Mutex<Vec<(f64, Mode, f64)>>>;

struct Watch(Trail);

impl Hooks<Bbr> for Watch {
    fn on_ack(&mut self, inner: &mut Bbr, now: Time, ev: &AckEvent) {
        inner.on_ack(now, ev);
        let t = now.as_ns() as f64 / 1e9;
        self.0
            .lock()
            .unwrap()
            .push((t, inner.mode(), inner.max_bw()));
    }
}

struct Run {
    trail: Vec<(f64, Mode, f64)>,
    /// (departure time s, queueing delay ms) of each data packet.
    departures: Vec<(f64, f64)>,
}

impl Run {
    /// The estimates in PROBE_BW from 5 s on.
    fn probe_bw_estimates(&self) -> Vec<f64> {
        self.trail
            .iter()
            .filter(|(t, m, _)| *t >= 5.0 && *m == Mode::ProbeBw)
            .map(|x| x.2)
            .collect()
    }

    /// Mean queueing delay of the departures `from_s..to_s` after a PROBE_RTT ended.
    fn queue_after_probe_rtt(&self, from_s: f64, to_s: f64) -> f64 {
        let exits: Vec<f64> = self
            .trail
            .windows(2)
            .filter(|w| w[0].1 == Mode::ProbeRtt && w[1].1 != Mode::ProbeRtt)
            .map(|w| w[1].0)
            .collect();
        assert!(exits.len() >= 2, "PROBE_RTT ended {} times", exits.len());
        let d: Vec<f64> = self
            .departures
            .iter()
            .filter_map(|&(t, delay)| {
                let last = exits.iter().rev().find(|&&e| e <= t)?;
                (t - last >= from_s && t - last < to_s).then_some(delay)
            })
            .collect();
        d.iter().sum::<f64>() / d.len() as f64
    }
}

fn trace(name: &str, text: String) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The kernel comparison's scenario (experiments/mahimahi/kernel_compare.py `ccscope_run`), with the ACK
/// direction a Mahimahi trace of 100 opportunities in every ms except a seeded `held_percent` of them.
fn run(held_percent: u32) -> Run {
    let data = trace("bbr-ack-clock-const12.trace", "1\n".into());
    let mut rng = rng::stream(7, held_percent as u64);
    let mut ack = String::new();
    for ms in 1..=(DURATION_S as u64 + 1) * 1000 {
        if rng.gen_range(0..100) >= held_percent {
            ack.push_str(&format!("{ms}\n").repeat(100));
        }
    }
    let ack = trace(&format!("bbr-ack-clock-held{held_percent}.trace"), ack);
    let text = format!(
        r#"
seed = 1
duration_s = {DURATION_S}
packet_log = true
[data_link]
trace = "{}"
delay_ms = 20
queue = {{ kind = "droptail", packets = 100 }}
[ack_link]
trace = "{}"
delay_ms = 20
[[flows]]
controller = "bbr"
packet_bytes = 1504
ack_bytes = 56
stack = "linux"
"#,
        data.display(),
        ack.display()
    );
    let sc = load_scenario(&text, None, &[]).unwrap();
    let trail: Trail = Arc::default();
    let mut factory = |_: usize, f: &FlowSpec| -> Result<AnyController, ParamError> {
        match ccscope_cc::build(&f.controller, &f.params)? {
            AnyController::Bbr(b) => {
                Ok(AnyController::boxed(Wrapped::new(*b, Watch(trail.clone()))))
            }
            c => Ok(c),
        }
    };
    let (_, log) = Simulation::with_factory(&sc, &mut factory).unwrap().run();
    let log = log.expect("packet_log = true");
    // pktlog.rs: event 2 is a departure; opportunities have flow -1.
    let departures = (0..log.len())
        .filter(|&i| log.event[i] == 2 && log.flow[i] >= 0)
        .map(|i| (log.time_ns[i] as f64 / 1e9, log.delay_ms[i] as f64))
        .collect();
    let trail = std::mem::take(&mut *trail.lock().unwrap());
    Run { trail, departures }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn an_exact_ack_clock_gives_the_link_rate_and_a_flat_queue() {
    let r = run(0);
    let bw = r.probe_bw_estimates();
    let max = bw.iter().cloned().fold(0.0, f64::max);
    assert!(
        (max - LINK_PPS).abs() < 1e-6,
        "max estimate {max} packets/s"
    );
    let (early, late) = (
        r.queue_after_probe_rtt(0.0, 2.0),
        r.queue_after_probe_rtt(7.0, 10.0),
    );
    assert!(
        early < 12.0 && late < 12.0,
        "queue {early:.1} -> {late:.1} ms"
    );
    assert!(
        (late - early).abs() < 2.0,
        "queue {early:.1} -> {late:.1} ms"
    );
}

#[test]
fn acks_held_a_ms_now_and_then_push_the_estimate_past_the_pacing_margin_and_the_queue_climbs() {
    let r = run(10);
    let bw = median(r.probe_bw_estimates());
    // tcp_bbr.c bbr_pacing_margin_percent = 1: above 1% high, the gain-1 phases pace above the link.
    assert!(bw > 1.01 * LINK_PPS, "median estimate {bw:.1} packets/s");
    let (early, late) = (
        r.queue_after_probe_rtt(0.0, 2.0),
        r.queue_after_probe_rtt(7.0, 10.0),
    );
    assert!(late > early + 10.0, "queue {early:.1} -> {late:.1} ms");
}
