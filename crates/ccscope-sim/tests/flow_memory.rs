//! A flow's statistics without time-series bins hold memory bounded by the range of its delays, not by
//! the length of the run: the heap this thread holds is measured by a counting allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use ccscope_core::rng::{self, RngExt};
use ccscope_core::{Dur, Time};
use ccscope_sim::metrics::FlowStats;

struct Counting;

thread_local! {
    // Per thread, so the test harness's own allocations on other threads do not count.
    static LIVE: Cell<i64> = const { Cell::new(0) };
}

fn count(delta: i64) {
    let _ = LIVE.try_with(|l| l.set(l.get() + delta));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count(l.size() as i64);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        count(-(l.size() as i64));
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count(n as i64 - l.size() as i64);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn live() -> i64 {
    LIVE.with(Cell::get)
}

/// Idle stretches a flow falls into now and then (ms).
const IDLE_MS: [u64; 5] = [700, 2_000, 5_000, 30_000, 90_000];

/// Packets every 1..20 ms with 0..100 ms of queueing, one in 1000 followed by an idle stretch, up to
/// `until_ms`. Its delays repeat: after a while no packet brings a delay (or backfilled run) not seen before.
fn drive(s: &mut FlowStats, rng: &mut rng::Rng, t_ms: &mut u64, until_ms: u64) {
    const MS: u64 = 1_000_000;
    while *t_ms < until_ms {
        let arr = Time(*t_ms * MS + rng.gen_range(0..MS));
        let dep = Time(arr.as_ns() + rng.gen_range(0..100) * MS);
        s.on_link_arrival(arr, 1500);
        s.on_link_departure(dep, arr, 1500);
        s.on_delivery(Time(dep.as_ns() + 20 * MS), arr, 1500);
        *t_ms += match rng.gen_range(0..1000) {
            0 => IDLE_MS[rng.gen_range(0..IDLE_MS.len())],
            _ => rng.gen_range(1..20),
        };
    }
}

#[test]
fn flow_stats_without_bins_stop_growing_while_simulated_time_does() {
    let base = live();
    let mut s = FlowStats::new(None);
    let (mut rng, mut t) = (rng::stream(7, 0), 0);
    drive(&mut s, &mut rng, &mut t, 1_000_000);
    let at_1e6 = live() - base;
    drive(&mut s, &mut rng, &mut t, 10_000_000);
    let at_1e7 = live() - base;
    // The statistics' own account of their heap is what the allocator saw.
    assert_eq!(at_1e7, s.heap_bytes() as i64);
    // 21 KB after 10^6 ms, 23 KB after 10^7 ms: ten times the time adds the few pages of delays first seen late.
    assert!(at_1e7 < 32 * 1024, "{at_1e7} bytes after 10^7 ms");
    assert!(
        at_1e7 - at_1e6 < 4 * 1024,
        "{at_1e6} -> {at_1e7} bytes from 10^6 to 10^7 ms"
    );
    let sig = s.signal().histogram();
    assert!(
        sig.count() > 9_000_000,
        "every millisecond has a signal delay: {}",
        sig.count()
    );

    // The same flow with 500 ms bins grows by one bin per 500 ms: ~20 000 bins over 10^7 ms.
    let mut b = FlowStats::new(Some(Dur(500_000_000)));
    let (mut rng, mut t) = (rng::stream(7, 0), 0);
    drive(&mut b, &mut rng, &mut t, 10_000_000);
    assert!(b.bins().len() >= 19_500, "{}", b.bins().len());
    assert_eq!(
        b.signal().histogram().percentile(0.95),
        sig.percentile(0.95)
    );
}
