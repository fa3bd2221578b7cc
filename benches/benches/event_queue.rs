//! Hold model (pop the minimum, push at now + a seeded random increment) on the radix-heap
//! `EventQueue` and on `BinaryHeap<Reverse<(time, seq)>>`, with 1,000 and 1,000,000 events pending.

use ccscope_sim::bench::{HeapHold, RadixHold};
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn event_queue(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue_hold");
    g.throughput(Throughput::Elements(1));
    for pending in [1_000usize, 1_000_000] {
        let mut radix = RadixHold::new(pending, 7);
        g.bench_with_input(BenchmarkId::new("radix_heap", pending), &pending, |b, _| b.iter(|| black_box(radix.step())));
        drop(radix);
        let mut heap = HeapHold::new(pending, 7);
        g.bench_with_input(BenchmarkId::new("binary_heap", pending), &pending, |b, _| b.iter(|| black_box(heap.step())));
    }
    g.finish();
}

criterion_group!(benches, event_queue);
criterion_main!(benches);
