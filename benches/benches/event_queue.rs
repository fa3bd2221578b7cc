//! Hold model (pop the minimum, push at now + a seeded random increment) on the radix-heap
//! `EventQueue` and on `BinaryHeap<Reverse<(time, seq)>>`, with 1,000 and 1,000,000 events pending;
//! and a simulator-like hold on `EventQueue` alone: 16 or 256 pending, most increments under 2 ms,
//! one in ten at the same instant in the late phase, three in a hundred 100 ms to 1 s ahead.

use ccscope_core::rng::{self, RngExt};
use ccscope_core::{EventQueue, Phase, Time};
use ccscope_sim::bench::{HeapHold, RadixHold};
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn event_queue(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue_hold");
    g.throughput(Throughput::Elements(1));
    for pending in [1_000usize, 1_000_000] {
        let mut radix = RadixHold::new(pending, 7);
        g.bench_with_input(BenchmarkId::new("radix_heap", pending), &pending, |b, _| {
            b.iter(|| black_box(radix.step()))
        });
        drop(radix);
        let mut heap = HeapHold::new(pending, 7);
        g.bench_with_input(
            BenchmarkId::new("binary_heap", pending),
            &pending,
            |b, _| b.iter(|| black_box(heap.step())),
        );
    }
    g.finish();
}

/// The simulator's mix: link and pipe events a few ms ahead, same-instant late work, long timers.
struct SimLikeHold {
    q: EventQueue<u32>,
    rng: rng::Rng,
    n: u32,
}

impl SimLikeHold {
    fn new(pending: usize) -> SimLikeHold {
        let mut h = SimLikeHold {
            q: EventQueue::new(),
            rng: rng::stream(11, 0),
            n: 0,
        };
        for _ in 0..pending {
            let (dt, phase) = h.draw();
            h.q.push(Time(dt), phase, h.n);
            h.n = h.n.wrapping_add(1);
        }
        // Reach the steady state (long timers resident) before timing.
        for _ in 0..50 * pending {
            h.step();
        }
        h
    }

    fn draw(&mut self) -> (u64, Phase) {
        match self.rng.gen_range(0..100u32) {
            0..=9 => (0, Phase::Late),
            10..=96 => (self.rng.gen_range(1..2_000_000u64), Phase::Normal),
            _ => (
                self.rng.gen_range(100_000_000..1_000_000_000u64),
                Phase::Normal,
            ),
        }
    }

    #[inline]
    fn step(&mut self) -> u64 {
        let (now, ev) = self.q.pop().expect("hold keeps the queue non-empty");
        let (dt, phase) = self.draw();
        self.q.push(Time(now.0 + dt), phase, self.n);
        self.n = self.n.wrapping_add(1);
        now.0 ^ ev as u64
    }
}

fn event_queue_sim_like(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue_sim_like");
    g.throughput(Throughput::Elements(1));
    for pending in [16usize, 256] {
        let mut h = SimLikeHold::new(pending);
        g.bench_with_input(
            BenchmarkId::new("event_queue", pending),
            &pending,
            |b, _| b.iter(|| black_box(h.step())),
        );
    }
    g.finish();
}

criterion_group!(benches, event_queue, event_queue_sim_like);
criterion_main!(benches);
