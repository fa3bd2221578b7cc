//! Benchmark cases and a wall-clock harness (the one place outside tests that reads `Instant`).
//!
//! The cases are real scenarios loaded through `load_scenario`: the datagrump contest (paper 001),
//! loss-driven AIMD on a 100 Mbit/s droptail link with 1 and 16 flows, four Verus flows on the
//! TMobile-LTE-driving trace behind paper 000's RED queue, and 16 Cubic (reliable transport) flows
//! at 100 Mbit/s. `measure` runs a case and reports delivered packets and simulated seconds per
//! wall-clock second; `event_queue_baseline` compares the radix-heap `EventQueue` with
//! `std::collections::BinaryHeap` on a hold model. `example_scenarios` loads every scenario the
//! package ships (python/ccscope/examples), for the tests and tools that run them all.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ccscope_core::rng::{self, RngExt};
use ccscope_core::{Dur, EventQueue, Phase, Time};

use crate::config::{load_scenario, ConfigError};
use crate::scenario::Scenario;
use crate::sim::Simulation;

const DATAGRUMP: &str = include_str!("../../../python/ccscope/examples/datagrump.toml");

/// A named scenario to time.
#[derive(Clone, Debug)]
pub struct BenchCase {
    pub name: &'static str,
    pub scenario: Scenario,
}

/// A case that `cases` left out, and why (a trace it needs is not in the search path).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedCase {
    pub name: &'static str,
    pub reason: String,
}

/// The trace of the "verus-4users-red" case; not shipped with the package (it is in the shared
/// trace set, `../shared/traces` next to the repository).
pub const VERUS_TRACE: &str = "TMobile-LTE-driving.down";

/// TOML text of `n` loss-driven AIMD flows on a 100 Mbit/s, 20 ms, 1000-packet droptail path for 300 s.
fn aimd_100m_toml(name: &str, n: usize) -> String {
    let mut s = format!(
        "name = \"{name}\"\nseed = 1\nduration_s = 300\nbin_ms = 500\n\n\
         [data_link]\nrate_mbps = 100\ndelay_ms = 20\nqueue = {{ kind = \"droptail\", packets = 1000 }}\n\n\
         [ack_link]\nrate_mbps = 100\ndelay_ms = 20\n"
    );
    for i in 0..n {
        // Starts spread evenly over [0, 1) s; a 1000 ms RTT threshold is never reached (max RTT
        // = 40 ms + 1000 x 0.12 ms of queue = 160 ms), so only loss decreases the window.
        let start_s = i as f64 / n as f64;
        s.push_str(&format!(
            "\n[[flows]]\ncontroller = \"aimd\"\nrtt_threshold_ms = 1000\nstart_s = {start_s}\n"
        ));
    }
    s
}

/// TOML text of 4 Verus flows (default parameters, 1450-byte packets as in the Verus paper) on the
/// TMobile-LTE-driving downlink trace (looped), 20 ms each way, behind paper 000's RED queue;
/// ACKs over a constant 100 Mbit/s link; 300 s.
fn verus_4users_red_toml() -> String {
    format!(
        "name = \"verus-4users-red\"\nseed = 1\nduration_s = 300\nbin_ms = 500\n\n\
         [data_link]\ntrace = \"{VERUS_TRACE}\"\ndelay_ms = 20\n\
         queue = {{ kind = \"red\", min_bytes = 375000, max_bytes = 1125000, max_p = 0.001, weight = 0.002 }}\n\n\
         [ack_link]\nrate_mbps = 100\ndelay_ms = 20\n\n\
         [[flows]]\ncontroller = \"verus\"\ncount = 4\npacket_bytes = 1450\n"
    )
}

/// TOML text of 16 Cubic flows (reliable transport, its default) on the 100 Mbit/s, 20 ms,
/// 1000-packet droptail path of the AIMD cases, starts at i/16 s; 300 s.
fn cubic_16x100m_toml() -> String {
    let mut s = String::from(
        "name = \"cubic-16x100M\"\nseed = 1\nduration_s = 300\nbin_ms = 500\n\n\
         [data_link]\nrate_mbps = 100\ndelay_ms = 20\nqueue = { kind = \"droptail\", packets = 1000 }\n\n\
         [ack_link]\nrate_mbps = 100\ndelay_ms = 20\n",
    );
    for i in 0..16 {
        let start_s = i as f64 / 16.0;
        s.push_str(&format!(
            "\n[[flows]]\ncontroller = \"cubic\"\nstart_s = {start_s}\n"
        ));
    }
    s
}

/// The benchmark cases, in order: "contest", "aimd-1x100M", "aimd-16x100M", "verus-4users-red",
/// "cubic-16x100M". Traces are looked up in each directory of `search` in turn. "verus-4users-red"
/// needs [`VERUS_TRACE`]; when no directory of `search` holds it, the case is left out and
/// reported in the second list instead of failing.
pub fn cases(search: &[PathBuf]) -> Result<(Vec<BenchCase>, Vec<SkippedCase>), ConfigError> {
    let contest = load_scenario(DATAGRUMP, None, search)?;
    let one = load_scenario(&aimd_100m_toml("aimd-1x100M", 1), None, &[])?;
    let sixteen = load_scenario(&aimd_100m_toml("aimd-16x100M", 16), None, &[])?;
    let mut out = vec![
        BenchCase {
            name: "contest",
            scenario: contest,
        },
        BenchCase {
            name: "aimd-1x100M",
            scenario: one,
        },
        BenchCase {
            name: "aimd-16x100M",
            scenario: sixteen,
        },
    ];
    let mut skipped = Vec::new();
    if search.iter().any(|d| d.join(VERUS_TRACE).is_file()) {
        let verus = load_scenario(&verus_4users_red_toml(), None, search)?;
        out.push(BenchCase {
            name: "verus-4users-red",
            scenario: verus,
        });
    } else {
        let dirs: Vec<String> = search.iter().map(|d| d.display().to_string()).collect();
        skipped.push(SkippedCase {
            name: "verus-4users-red",
            reason: format!(
                "trace `{VERUS_TRACE}` not found in [{}]; put the shared trace set on the search path \
                 (e.g. CCSCOPE_TRACE_PATH=../shared/traces)",
                dirs.join(", ")
            ),
        });
    }
    let cubic = load_scenario(&cubic_16x100m_toml(), None, &[])?;
    out.push(BenchCase {
        name: "cubic-16x100M",
        scenario: cubic,
    });
    Ok((out, skipped))
}

/// The Python package's folder in this repository (`python/ccscope`: `examples/`, `data/traces/`),
/// for tests and tools built beside it. Not in the library: a path fixed at compile time would make
/// the same code built in two folders two different native modules (two build ids). It resolves
/// against the calling package's folder, so it is right for the crates in `crates/NAME` only.
#[macro_export]
macro_rules! package_dir {
    () => {
        ::std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/ccscope")
    };
}

/// Every scenario of `root/examples/*.toml` (`root`: the Python package's folder, see
/// [`package_dir!`]), in file-name order, with its path; traces are read from `root/data/traces`
/// and each run is cut to at most `max_duration`.
pub fn example_scenarios(
    root: &Path,
    max_duration: Dur,
) -> Result<Vec<(PathBuf, Scenario)>, ConfigError> {
    let dir = root.join("examples");
    let io = |file: &Path, e: std::io::Error| ConfigError::Io {
        file: file.display().to_string(),
        reason: e.to_string(),
    };
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(|e| io(&dir, e))? {
        let p = entry.map_err(|e| io(&dir, e))?.path();
        if p.extension().is_some_and(|x| x == "toml") {
            paths.push(p);
        }
    }
    paths.sort();
    let traces = [root.join("data/traces")];
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).map_err(|e| io(&p, e))?;
            let mut sc = load_scenario(&text, Some(&p), &traces)?;
            sc.duration = sc.duration.min(max_duration);
            Ok((p, sc))
        })
        .collect()
}

/// Scale cases, run only when named (they take seconds each): the ns-3 dumbbell with 1 and 1024
/// NewReno flows for 3000 s (cost per delivered packet against the number of flows, and flat memory),
/// and paper 003's access-link topology with 33 flows for 10,000 s and a 10 ms link series.
pub const SCALE_CASES: &[&str] = &[
    "newreno-1x12M-3000s",
    "newreno-1024x12M-3000s",
    "access-33x10000s",
    "cmt-2x21M-1000s",
];

/// TOML text of paper 003 Fig. 7 (`examples/access_links.toml`) with 33 bulk NewReno clients (16 to
/// one server, 17 to the other), 10,000 s, the link's 10 ms series only.
pub fn access_33_toml() -> String {
    include_str!("../../../python/ccscope/examples/access_links.toml")
        .replace(
            "duration_s = 60",
            "duration_s = 10000\ntimeseries = \"link\"",
        )
        .replace("bin_ms = 1000", "bin_ms = 10")
        .replacen("count = 2", "count = 16", 1)
        .replacen("count = 2", "count = 17", 1)
}

/// TOML text of paper 002 §6.2 (`examples/cmt_two_paths.toml`): one SCTP-CMT association over two
/// 21/20 Mbit/s, 40 ms paths with Bernoulli loss, RBUF 128 KB, dynamic management, for 1,000 s.
pub fn cmt_two_paths_toml(secs: u32) -> String {
    include_str!("../../../python/ccscope/examples/cmt_two_paths.toml")
        .replace("duration_s = 60", &format!("duration_s = {secs}"))
}

/// The scale cases by name (see [`SCALE_CASES`]).
pub fn scale_case(name: &str) -> Result<Option<BenchCase>, ConfigError> {
    let dumbbell =
        |n: usize| ns3_dumbbell_toml("newreno", n).replace("duration_s = 300", "duration_s = 3000");
    let text = match name {
        "newreno-1x12M-3000s" => dumbbell(1),
        "newreno-1024x12M-3000s" => dumbbell(1024),
        "access-33x10000s" => access_33_toml(),
        "cmt-2x21M-1000s" => cmt_two_paths_toml(1000),
        _ => return Ok(None),
    };
    let name = SCALE_CASES
        .iter()
        .find(|&&n| n == name)
        .expect("listed above");
    Ok(Some(BenchCase {
        name,
        scenario: load_scenario(&text, None, &[])?,
    }))
}

/// TOML text of the ns-3 dumbbell of `../shared/bench/ns3` (`dumbbell.cc`, its defaults): `n` flows
/// of `controller` through a 12 Mbit/s, 20 ms, 1000-packet droptail bottleneck, ACKs back over the
/// same 12 Mbit/s, 20 ms link, 1500-byte data packets, 52-byte ACKs (IP 20 + TCP 20 + timestamp
/// option 12), starts uniform in [0, 1) s, 300 s.
pub fn ns3_dumbbell_toml(controller: &str, n: usize) -> String {
    format!(
        "name = \"ns3-dumbbell-{controller}-{n}\"\nseed = 1\nduration_s = 300\nbin_ms = 500\n\n\
         [data_link]\nrate_mbps = 12\ndelay_ms = 20\nqueue = {{ kind = \"droptail\", packets = 1000 }}\n\n\
         [ack_link]\nrate_mbps = 12\ndelay_ms = 20\n\n\
         [[flows]]\ncontroller = \"{controller}\"\ncount = {n}\nstart_jitter_s = 1\npacket_bytes = 1500\nack_bytes = 52\n"
    )
}

/// The two ns-3 comparison scenarios (not part of [`cases`]): "ns3-cubic-1x12M" (one Cubic flow,
/// `dumbbell --nFlows=1 --tcp=Cubic`) and "ns3-newreno-16x12M" (`--nFlows=16 --tcp=NewReno`).
pub fn ns3_dumbbell_cases() -> Result<Vec<BenchCase>, ConfigError> {
    Ok(vec![
        BenchCase {
            name: "ns3-cubic-1x12M",
            scenario: load_scenario(&ns3_dumbbell_toml("cubic", 1), None, &[])?,
        },
        BenchCase {
            name: "ns3-newreno-16x12M",
            scenario: load_scenario(&ns3_dumbbell_toml("newreno", 16), None, &[])?,
        },
    ])
}

/// What one case costs: the median run of `measure`'s repeats.
#[derive(Clone, Debug)]
pub struct BenchFigures {
    pub name: String,
    /// Median wall-clock seconds of one run (build included, summary included).
    pub wall_s: f64,
    /// Simulated seconds of one run.
    pub sim_s: f64,
    /// Data packets delivered to receivers (all flows).
    pub delivered: u64,
    /// Events popped from the event queue.
    pub events: u64,
    /// Distinct data delivered in order, Mbit/s of on-wire packet bytes (the summary's `goodput_mbps`).
    pub goodput_mbps: f64,
    pub pkts_per_wall_s: f64,
    pub sim_s_per_wall_s: f64,
}

/// Run `case` `repeats` times (at least once) and report the median wall time.
pub fn measure(case: &BenchCase, repeats: usize) -> BenchFigures {
    let mut walls = Vec::with_capacity(repeats.max(1));
    let mut last = None;
    for _ in 0..repeats.max(1) {
        let t0 = Instant::now();
        let sim = Simulation::new(&case.scenario).expect("benchmark scenarios are valid");
        let (res, _) = black_box(sim.run());
        walls.push(t0.elapsed().as_secs_f64());
        last = Some(res);
    }
    let res = last.expect("ran at least once");
    walls.sort_by(f64::total_cmp);
    let wall_s = walls[walls.len() / 2];
    BenchFigures {
        name: case.name.to_string(),
        wall_s,
        sim_s: res.sim_end_s,
        delivered: res.total.delivered,
        events: res.events,
        goodput_mbps: res.total.goodput_mbps,
        pkts_per_wall_s: res.total.delivered as f64 / wall_s,
        sim_s_per_wall_s: res.sim_end_s / wall_s,
    }
}

/// Hold-model increments are uniform in [0, HOLD_RANGE_NS): pending events span about 1 ms.
const HOLD_RANGE_NS: u64 = 1 << 20;

/// Hold model on the radix heap: `pending` events resident; each step pops the minimum and pushes
/// one event at now + a random increment.
pub struct RadixHold {
    q: EventQueue<u64>,
    rng: rng::Rng,
    n: u64,
}

impl RadixHold {
    pub fn new(pending: usize, seed: u64) -> RadixHold {
        let mut rng = rng::stream(seed, 0);
        let mut q = EventQueue::new();
        for i in 0..pending as u64 {
            q.push(Time(rng.gen_range(0..HOLD_RANGE_NS)), Phase::Normal, i);
        }
        RadixHold {
            q,
            rng,
            n: pending as u64,
        }
    }

    /// One pop + one push; returns the popped event's time.
    #[inline]
    pub fn step(&mut self) -> u64 {
        let (now, ev) = self.q.pop().expect("hold model keeps the queue non-empty");
        let inc = self.rng.gen_range(0..HOLD_RANGE_NS);
        self.q.push(Time(now.0 + inc), Phase::Normal, self.n);
        self.n += 1;
        now.0 ^ ev
    }
}

/// The same hold model on `BinaryHeap<Reverse<(time, seq)>>` (ties break by insertion order too).
pub struct HeapHold {
    q: BinaryHeap<Reverse<(u64, u64)>>,
    rng: rng::Rng,
    n: u64,
}

impl HeapHold {
    pub fn new(pending: usize, seed: u64) -> HeapHold {
        let mut rng = rng::stream(seed, 0);
        let mut q = BinaryHeap::with_capacity(pending + 1);
        for i in 0..pending as u64 {
            q.push(Reverse((rng.gen_range(0..HOLD_RANGE_NS), i)));
        }
        HeapHold {
            q,
            rng,
            n: pending as u64,
        }
    }

    #[inline]
    pub fn step(&mut self) -> u64 {
        let Reverse((now, seq)) = self.q.pop().expect("hold model keeps the queue non-empty");
        let inc = self.rng.gen_range(0..HOLD_RANGE_NS);
        self.q.push(Reverse((now + inc, self.n)));
        self.n += 1;
        now ^ seq
    }
}

fn ns_per_op(warm_up: usize, ops: usize, mut step: impl FnMut() -> u64) -> f64 {
    let ops = ops.max(1);
    let mut acc = 0u64;
    for _ in 0..warm_up {
        acc = acc.wrapping_add(step());
    }
    let t0 = Instant::now();
    for _ in 0..ops {
        acc = acc.wrapping_add(step());
    }
    black_box(acc);
    t0.elapsed().as_secs_f64() * 1e9 / ops as f64
}

/// Nanoseconds per hold-model operation (pop + push) with `pending` events resident:
/// (radix heap `EventQueue`, `BinaryHeap`). Both use the same seeded increments. Filling the
/// queues and a warm-up of `pending` operations are not timed: the warm-up reaches the steady
/// state, where the radix heap no longer pays for re-spreading the initial fill.
pub fn event_queue_baseline(pending: usize, ops: usize) -> (f64, f64) {
    let pending = pending.max(1);
    let mut radix = RadixHold::new(pending, 7);
    let radix_ns = ns_per_op(pending, ops, || radix.step());
    drop(radix);
    let mut heap = HeapHold::new(pending, 7);
    let heap_ns = ns_per_op(pending, ops, || heap.step());
    (radix_ns, heap_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/ccscope/data/traces")
    }

    #[test]
    fn example_scenarios_loads_every_toml_of_the_examples_folder_in_name_order_each_cut_to_the_limit(
    ) {
        let limit = Dur::from_ms(3_000);
        let got = example_scenarios(&crate::package_dir!(), limit).unwrap();
        let mut tomls: Vec<String> = std::fs::read_dir(crate::package_dir!().join("examples"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".toml"))
            .collect();
        tomls.sort();
        let names: Vec<String> = got
            .iter()
            .map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, tomls);
        assert!(got.iter().all(|(_, sc)| sc.duration <= limit));
        // Cut, not replaced: an example shorter than the limit keeps its own length.
        let whole = example_scenarios(&crate::package_dir!(), Dur(u64::MAX)).unwrap();
        assert!(whole.iter().any(|(_, sc)| sc.duration > limit));
        for ((_, cut), (_, sc)) in got.iter().zip(&whole) {
            assert_eq!(cut.duration, sc.duration.min(limit));
        }
    }

    /// The shipped traces, then the shared trace set next to the repository when it is there.
    fn traces() -> Vec<PathBuf> {
        let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
        let mut v = vec![shipped()];
        if shared.is_dir() {
            v.push(shared);
        }
        v
    }

    #[test]
    fn scale_cases_load_with_their_flows_and_series() {
        let c = |n| scale_case(n).unwrap().unwrap().scenario;
        assert_eq!(c("newreno-1x12M-3000s").flows.len(), 1);
        let many = c("newreno-1024x12M-3000s");
        assert_eq!(
            (many.flows.len(), many.timeseries),
            (1024, crate::scenario::TimeSeries::Link)
        );
        let access = c("access-33x10000s");
        assert_eq!(
            (
                access.flows.len(),
                access.duration.as_secs_f64(),
                access.bin.as_ms_f64()
            ),
            (33, 10_000.0, 10.0)
        );
        assert!(scale_case("nope").unwrap().is_none());
    }

    #[test]
    fn bench_cases_load_and_the_contest_delivers_packets() {
        let (all, skipped) = cases(&traces()).unwrap();
        let names: Vec<_> = all
            .iter()
            .map(|c| c.name)
            .chain(skipped.iter().map(|s| s.name))
            .collect();
        assert_eq!(names.len(), 5, "{names:?}");
        for n in [
            "contest",
            "aimd-1x100M",
            "aimd-16x100M",
            "verus-4users-red",
            "cubic-16x100M",
        ] {
            assert!(names.contains(&n), "{names:?}");
        }
        let cs = &all;
        assert_eq!(cs[1].scenario.flows.len(), 1);
        assert_eq!(cs[2].scenario.flows.len(), 16);
        assert_eq!(cs[2].scenario.duration.as_ns(), 300_000_000_000);
        let starts: Vec<u64> = cs[2]
            .scenario
            .flows
            .iter()
            .map(|f| f.start.as_ns())
            .collect();
        assert!(
            starts.windows(2).all(|w| w[0] < w[1]) && starts[15] < 1_000_000_000,
            "{starts:?}"
        );
        let cubic = cs.iter().find(|c| c.name == "cubic-16x100M").unwrap();
        assert_eq!(cubic.scenario.flows.len(), 16);
        assert!(cubic.scenario.flows.iter().all(|f| f.controller == "cubic"));
        assert_eq!(cubic.scenario.duration.as_ns(), 300_000_000_000);
        if let Some(v) = cs.iter().find(|c| c.name == "verus-4users-red") {
            assert_eq!(v.scenario.flows.len(), 4);
            assert!(v
                .scenario
                .flows
                .iter()
                .all(|f| f.controller == "verus" && f.packet_bytes == 1450));
        }
        // Only the 140 s contest runs here: the 300 s cases are too slow for a debug build.
        let f = measure(&cs[0], 1);
        assert!(f.delivered > 0 && f.events > 0 && f.wall_s > 0.0, "{f:?}");
        assert!((f.sim_s - 140.0).abs() < 1.0, "{f:?}");
    }

    #[test]
    fn bench_verus_case_is_skipped_with_a_note_when_its_trace_is_missing() {
        let (all, skipped) = cases(&[shipped()]).unwrap();
        let names: Vec<_> = all.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            ["contest", "aimd-1x100M", "aimd-16x100M", "cubic-16x100M"]
        );
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].name, "verus-4users-red");
        assert!(
            skipped[0].reason.contains(VERUS_TRACE),
            "{}",
            skipped[0].reason
        );
    }

    #[test]
    fn bench_ns3_dumbbell_cases_load() {
        let cs = ns3_dumbbell_cases().unwrap();
        assert_eq!(cs[0].scenario.flows.len(), 1);
        assert_eq!(cs[1].scenario.flows.len(), 16);
        assert!(cs[1]
            .scenario
            .flows
            .iter()
            .all(|f| f.controller == "newreno" && f.packet_bytes == 1500));
    }

    #[test]
    fn bench_hold_models_pop_the_same_times() {
        let (mut r, mut h) = (RadixHold::new(100, 3), HeapHold::new(100, 3));
        for _ in 0..1000 {
            let (a, b) = (r.q.pop().unwrap(), h.q.pop().unwrap().0);
            assert_eq!((a.0 .0, a.1), b);
            let inc = r.rng.gen_range(0..HOLD_RANGE_NS);
            assert_eq!(inc, h.rng.gen_range(0..HOLD_RANGE_NS));
            r.q.push(Time(a.0 .0 + inc), Phase::Normal, r.n);
            h.q.push(Reverse((b.0 + inc, h.n)));
            r.n += 1;
            h.n += 1;
        }
        let (a, b) = event_queue_baseline(100, 1000);
        assert!(a > 0.0 && b > 0.0);
    }

    /// Prints the figures of docs/performance.md:
    /// `cargo test --release -p ccscope-sim --lib bench_print_figures -- --ignored --nocapture`.
    #[test]
    #[ignore = "slow; run in release to collect figures"]
    fn bench_print_figures() {
        let (all, skipped) = cases(&traces()).unwrap();
        for s in &skipped {
            println!("{:<16} skipped: {}", s.name, s.reason);
        }
        for c in all {
            let f = measure(&c, 3);
            println!(
                "{:<16} wall {:>8.4} s  sim {:>6.1} s  delivered {:>10}  events {:>10}  {:>12.0} pkt/wall-s  {:>9.1} sim-s/wall-s",
                f.name, f.wall_s, f.sim_s, f.delivered, f.events, f.pkts_per_wall_s, f.sim_s_per_wall_s
            );
        }
        for pending in [1_000, 1_000_000] {
            let (r, h) = event_queue_baseline(pending, 2_000_000);
            println!("event queue, {pending:>9} pending: radix {r:.1} ns/op, binary heap {h:.1} ns/op, heap/radix {:.2}", h / r);
        }
    }

    /// Prints ccscope's side of the ns-3 comparison in docs/performance.md (median of 3 runs):
    /// `cargo test --release -p ccscope-sim --lib bench_print_ns3_dumbbell -- --ignored --nocapture`.
    #[test]
    #[ignore = "slow; run in release to collect figures"]
    fn bench_print_ns3_dumbbell() {
        for c in ns3_dumbbell_cases().unwrap() {
            let f = measure(&c, 3);
            // ns-3 reports goodput as application bytes: 1448 of each 1500-byte packet.
            let payload = f.goodput_mbps * 1448.0 / 1500.0;
            println!(
                "{:<18} wall {:>8.4} s  sim {:>6.1} s  delivered {:>9}  events {:>9}  {:>10.0} pkt/wall-s  goodput {:.3} Mbit/s ({payload:.3} of payload)",
                f.name, f.wall_s, f.sim_s, f.delivered, f.events, f.pkts_per_wall_s, f.goodput_mbps
            );
        }
    }
}
