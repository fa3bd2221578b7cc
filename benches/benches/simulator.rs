//! Whole-scenario throughput: the contest, loss-driven AIMD at 100 Mbit/s with 1 and 16 flows,
//! 4 Verus flows on TMobile-LTE-driving behind RED, and 16 Cubic flows at 100 Mbit/s, reported as
//! delivered packets per second of wall time. The Verus case needs the shared trace set
//! (`../shared/traces` next to the repository, or a directory in $CCSCOPE_TRACE_PATH); without it
//! the case is skipped with a note.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ccscope_sim::bench::cases;
use ccscope_sim::Simulation;
use criterion::{black_box, criterion_group, criterion_main, Criterion, SamplingMode, Throughput};

fn simulator(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut search: Vec<PathBuf> = vec![root.join("python/ccscope/data/traces")];
    let shared = root.join("../shared/traces");
    if shared.is_dir() {
        search.push(shared);
    }
    if let Some(extra) = std::env::var_os("CCSCOPE_TRACE_PATH") {
        search.extend(std::env::split_paths(&extra).filter(|p| !p.as_os_str().is_empty()));
    }
    let (cases, skipped) = cases(&search).expect("benchmark scenarios load");
    for s in &skipped {
        eprintln!("simulator/{}: skipped: {}", s.name, s.reason);
    }
    let mut g = c.benchmark_group("simulator");
    // One run of a 300 s case takes seconds: ten flat samples of one run each.
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(12));
    for case in cases {
        let (res, _) = Simulation::new(&case.scenario).expect("valid").run();
        g.throughput(Throughput::Elements(res.total.delivered));
        g.bench_function(case.name, |b| {
            b.iter(|| black_box(Simulation::new(&case.scenario).expect("valid").run()))
        });
    }
    g.finish();
}

criterion_group!(benches, simulator);
criterion_main!(benches);
