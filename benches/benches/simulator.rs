//! Whole-scenario throughput: the contest and loss-driven AIMD at 100 Mbit/s with 1 and 16 flows,
//! reported as delivered packets per second of wall time.

use std::path::Path;
use std::time::Duration;

use ccscope_sim::bench::cases;
use ccscope_sim::Simulation;
use criterion::{black_box, criterion_group, criterion_main, Criterion, SamplingMode, Throughput};

fn simulator(c: &mut Criterion) {
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../python/ccscope/data/traces");
    let mut g = c.benchmark_group("simulator");
    // One run of a 300 s case takes seconds: ten flat samples of one run each.
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(12));
    for case in cases(&traces).expect("benchmark scenarios load") {
        let (res, _) = Simulation::new(&case.scenario).expect("valid").run();
        g.throughput(Throughput::Elements(res.total.delivered));
        g.bench_function(case.name, |b| b.iter(|| black_box(Simulation::new(&case.scenario).expect("valid").run())));
    }
    g.finish();
}

criterion_group!(benches, simulator);
criterion_main!(benches);
