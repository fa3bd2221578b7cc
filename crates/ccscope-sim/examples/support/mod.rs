//! What more than one example writes.

use std::io::Write;

use ccscope_sim::RunResult;

/// `path`: the bottleneck's bins (its departed bytes, drops and mean queueing delay) and the bytes of the
/// flows that keep a series (`timeseries = true`) in each bin.
pub fn write_link_csv(path: &str, res: &RunResult) {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(
        w,
        "t,departed_bytes,dropped,queue_delay_mean_ms,series_bytes"
    )
    .unwrap();
    // Per flow, then the whole link last; a flow without a series has no bins.
    let (link, flows) = res.bins.split_last().expect("the link's bins");
    for (i, b) in link.iter().enumerate() {
        let q = if b.departures > 0 {
            b.queue_delay_sum_ms as f64 / b.departures as f64
        } else {
            0.0
        };
        let series: u64 = flows
            .iter()
            .filter_map(|f| f.get(i))
            .map(|b| b.departed_bytes)
            .sum();
        writeln!(
            w,
            "{:.3},{},{},{:.3},{}",
            i as f64 * res.bin_s,
            b.departed_bytes,
            b.dropped,
            q,
            series
        )
        .unwrap();
    }
    w.flush().unwrap();
}
