//! The per-packet path allocates nothing: allocations grow with the run's length (time-series
//! bins, histogram ranges), not with the number of packets.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use ccscope_sim::{load_scenario, Simulation};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// (allocations during `run`, packets delivered) for a 12 Mbit/s dumbbell of `secs` seconds.
fn allocs_per_run(controller: &str, secs: u64) -> (u64, u64) {
    let text = format!(
        "duration_s = {secs}\nbin_ms = 1000\n[data_link]\nrate_mbps = 12\ndelay_ms = 20\n\
         queue = {{ kind = \"droptail\", packets = 100 }}\nloss = {{ kind = \"bernoulli\", p = 0.001 }}\n\
         [ack_link]\nrate_mbps = 12\ndelay_ms = 20\n[[flows]]\ncontroller = \"{controller}\"\ncount = 4\n"
    );
    let sc = load_scenario(&text, None, &[]).unwrap();
    let sim = Simulation::new(&sc).unwrap();
    let before = ALLOCS.load(Ordering::Relaxed);
    let (r, _) = sim.run();
    (ALLOCS.load(Ordering::Relaxed) - before, r.total.delivered)
}

#[test]
fn the_packet_path_does_not_allocate_per_packet() {
    for cc in ["aimd", "newreno", "cubic"] {
        let (a_short, d_short) = allocs_per_run(cc, 20);
        let (a_long, d_long) = allocs_per_run(cc, 80);
        let extra_packets = d_long - d_short;
        let extra_allocs = a_long.saturating_sub(a_short);
        assert!(extra_packets > 50_000, "{cc}: {extra_packets}");
        // Growth of bins and histograms only: a handful of reallocations, never one per packet.
        assert!(extra_allocs < 100, "{cc}: {extra_allocs} more allocations for {extra_packets} more packets");
    }
}
