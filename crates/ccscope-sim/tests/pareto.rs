//! Paper 003 §2.1/§4.1 Pareto ON/OFF background (specs/003-mtsc.md §1.2): the sampler's mean,
//! median and tail, one random sequence per (seed, flow) whatever the controllers, the scenario
//! keys and their errors, and the example's files all accounted for.

use std::path::Path;

use ccscope_core::Dur;
use ccscope_sim::traffic::{
    onoff_sequence, FileSize, OnOffParams, ParetoSize, Period, MAX_FILE_BYTES,
};
use ccscope_sim::{load_scenario, RunResult, Scenario, Simulation};

const N: usize = 100_000;

fn pareto(alpha: f64, mean_bytes: f64) -> OnOffParams {
    OnOffParams {
        size: FileSize::Pareto(ParetoSize::with_mean(alpha, mean_bytes)),
        off_mean: Dur::from_ms(1500),
    }
}

fn draws(alpha: f64, seed: u64) -> Vec<f64> {
    onoff_sequence(&pareto(alpha, 32_000.0), seed, 0, N)
        .iter()
        .map(|p| p.drawn_bytes)
        .collect()
}

/// Hill's estimator of alpha on the `m` largest of `x`: m / sum ln(X_(i) / X_(m+1)).
fn hill(x: &[f64], m: usize) -> f64 {
    let mut v = x.to_vec();
    v.sort_by(|a, b| b.partial_cmp(a).unwrap());
    let base = v[m].ln();
    m as f64 / v[..m].iter().map(|y| y.ln() - base).sum::<f64>()
}

#[test]
fn k_holds_the_mean_at_32_kb_across_alpha() {
    // specs/003-mtsc.md §1.2: k = 32 kB (alpha - 1)/alpha, about 1.5 kB at 1.05 and 15.6 kB at 1.95.
    let k = |a: f64| ParetoSize::with_mean(a, 32_000.0).k_bytes;
    assert!((k(1.05) - 1523.8).abs() < 0.1, "{}", k(1.05));
    assert!((k(1.95) - 15589.7).abs() < 0.1, "{}", k(1.95));
    assert!((ParetoSize::with_mean(1.35, 32_000.0).mean_bytes() - 32_000.0).abs() < 1e-6);
}

#[test]
fn every_draw_is_at_least_k_and_rounds_up_to_whole_bytes() {
    let p = ParetoSize::with_mean(1.35, 32_000.0);
    for x in onoff_sequence(&pareto(1.35, 32_000.0), 3, 0, 10_000) {
        assert!(x.drawn_bytes >= p.k_bytes, "{x:?}");
        assert_eq!(x.bytes, x.drawn_bytes.ceil() as u64);
        assert!(!x.capped());
    }
}

#[test]
fn hill_estimate_of_the_tail_index_is_near_alpha() {
    // Exact Pareto: Hill on the top m has standard error alpha / sqrt(m); allow 4 of them.
    let m = 10_000;
    for alpha in [1.05, 1.35, 1.95] {
        let a = hill(&draws(alpha, 11), m);
        let se = alpha / (m as f64).sqrt();
        assert!(
            (a - alpha).abs() < 4.0 * se,
            "alpha {alpha}: Hill {a:.4} (se {se:.4})"
        );
    }
}

#[test]
fn sample_mean_at_alpha_1_95_is_32_kb_within_its_truncated_variance() {
    // The variance is infinite for alpha < 2, so the tolerance comes from the law truncated at c,
    // where P(any of N draws > c) = N (k/c)^alpha = 1e-3: on that event the sample mean is a mean
    // of N draws of X | X <= c, with bias E[X; X > c] and variance Var(X | X <= c) / N.
    let (alpha, mean) = (1.95f64, 32_000.0f64);
    let k = ParetoSize::with_mean(alpha, mean).k_bytes;
    let c = k * (N as f64 / 1e-3).powf(1.0 / alpha);
    let tail = alpha * k.powf(alpha) * c.powf(1.0 - alpha) / (alpha - 1.0); // E[X; X > c]
    let second =
        alpha * k.powf(alpha) * (c.powf(2.0 - alpha) - k.powf(2.0 - alpha)) / (2.0 - alpha); // E[X^2; X <= c]
    let var = second - (mean - tail).powi(2);
    let tol = tail + 5.0 * (var / N as f64).sqrt();
    for seed in [1, 2, 3] {
        let x = draws(alpha, seed);
        let m = x.iter().sum::<f64>() / N as f64;
        assert!(
            (m - mean).abs() < tol,
            "seed {seed}: sample mean {m:.0} vs {mean} (tolerance {tol:.0})"
        );
    }
    assert!(
        tol < 0.05 * mean,
        "the tolerance {tol:.0} B is too loose to test anything"
    );
}

#[test]
fn sample_median_at_alpha_1_05_is_k_two_to_the_one_over_alpha() {
    // Pr{X <= x} = 1 - (k/x)^alpha = 1/2 at x = k 2^(1/alpha). The sample median's standard error is
    // 1 / (2 f(med) sqrt(N)) = med / (alpha sqrt(N)); allow 5 of them.
    let alpha = 1.05f64;
    let k = ParetoSize::with_mean(alpha, 32_000.0).k_bytes;
    let want = k * 2f64.powf(1.0 / alpha);
    let mut x = draws(alpha, 5);
    x.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let med = (x[N / 2 - 1] + x[N / 2]) / 2.0;
    let se = want / (alpha * (N as f64).sqrt());
    assert!(
        (med - want).abs() < 5.0 * se,
        "median {med:.1} vs {want:.1} (se {se:.2})"
    );
}

#[test]
fn the_same_seed_and_flow_give_the_same_draws_and_others_do_not() {
    let p = pareto(1.05, 32_000.0);
    let a = onoff_sequence(&p, 4, 2, 1000);
    assert_eq!(a, onoff_sequence(&p, 4, 2, 1000));
    assert_ne!(a[0], onoff_sequence(&p, 5, 2, 1)[0]);
    assert_ne!(a[0], onoff_sequence(&p, 4, 3, 1)[0]);
    // Idle times: exponential with the configured mean (P(X > mean) = 1/e).
    let v = onoff_sequence(&p, 4, 2, N);
    let mean = v.iter().map(|x| x.off.as_secs_f64()).sum::<f64>() / N as f64;
    assert!((mean / 1.5 - 1.0).abs() < 0.02, "mean idle {mean}");
}

#[test]
fn a_draw_beyond_the_file_bound_is_kept_at_the_bound_and_counted() {
    // alpha barely above 1 and k = 10^15 B: P(X > 2^62) = (k / 2^62)^alpha, about 2e-4.
    let p = OnOffParams {
        size: FileSize::Pareto(ParetoSize {
            alpha: 1.0001,
            k_bytes: 1e15,
        }),
        off_mean: Dur::from_ms(1000),
    };
    let v = onoff_sequence(&p, 1, 0, 200_000);
    let capped: Vec<&Period> = v.iter().filter(|x| x.capped()).collect();
    assert!(!capped.is_empty(), "no draw beyond the bound");
    assert!(capped
        .iter()
        .all(|x| x.bytes == MAX_FILE_BYTES && x.drawn_bytes > MAX_FILE_BYTES as f64));
    assert!(v.iter().all(|x| x.bytes <= MAX_FILE_BYTES));
}

// --- scenarios ------------------------------------------------------------------------------------

fn example_text() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../python/ccscope/examples/pareto_background.toml");
    std::fs::read_to_string(p).unwrap()
}

fn load(text: &str) -> Scenario {
    load_scenario(text, Some(Path::new("p.toml")), &[]).unwrap()
}

fn run(sc: &Scenario) -> RunResult {
    Simulation::new(sc).unwrap().run().0
}

/// The example, shortened, with `n` background flows per server and a controlled bulk flow last.
fn with_controlled(controller: &str, n: u32, duration_s: u32) -> Scenario {
    let text = example_text()
        .replace("duration_s = 10000", &format!("duration_s = {duration_s}"))
        .replace("count = 16", &format!("count = {n}"));
    load(&format!(
        "{text}\n[[flows]]\ncontroller = \"{controller}\"\npacket_bytes = 1000\nack_bytes = 40\n\
         route = [\"access\", \"bottleneck\", \"server0\"]\nack_route = [\"server0_back\", \"bottleneck_back\", \"access_back\"]\n"
    ))
}

#[test]
fn background_draws_are_the_same_whatever_the_controlled_flows_controller() {
    let a = run(&with_controlled("newreno", 3, 120));
    let b = run(&with_controlled("cubic", 3, 120));
    // The controllers matter (else this test could not fail)...
    assert_ne!(a.flows[6].delivered, b.flows[6].delivered);
    // ...but every background flow draws the same files and idle times, those of its (seed, flow).
    let p = pareto(1.35, 32_000.0);
    let p = OnOffParams {
        off_mean: Dur::from_secs_f64(1.5603),
        ..p
    };
    let mut differ = false;
    for f in 0..6 {
        let (x, y) = (&a.transfers[f], &b.transfers[f]);
        let n = x.len().min(y.len());
        assert!(n >= 10, "flow {f}: {} and {} files", x.len(), y.len());
        assert_eq!(
            x[..n],
            y[..n],
            "flow {f}: the draws differ between controllers"
        );
        assert_eq!(
            x[..n],
            onoff_sequence(&p, 1, f, n)[..],
            "flow {f}: not the (seed, flow) stream"
        );
        differ |= a.flows[f].fct_mean_s != b.flows[f].fct_mean_s;
    }
    assert!(
        differ,
        "the background saw no difference at all between controllers"
    );
    assert_ne!(a.transfers[0][0], a.transfers[1][0]);
}

#[test]
fn the_example_carries_background_and_accounts_for_every_file() {
    let sc = load(&example_text().replace("duration_s = 10000", "duration_s = 60"));
    let r = run(&sc);
    assert_eq!(r.flows.len(), 32);
    let bottleneck = r.links.iter().find(|l| l.name == "bottleneck").unwrap();
    assert!(
        bottleneck.throughput_mbps > 0.5,
        "bottleneck {:.3} Mbit/s",
        bottleneck.throughput_mbps
    );
    for f in r.flows.iter().chain(std::iter::once(&r.total)) {
        assert_eq!(
            f.sent,
            f.delivered + f.dropped + f.in_flight,
            "conservation, flow {:?}",
            f.flow
        );
    }
    for (i, f) in r.flows.iter().enumerate() {
        let drawn = &r.transfers[i];
        // Files started = files completed + the one in progress (at most one).
        assert_eq!(f.transfers_started, drawn.len() as u64);
        assert!(
            f.transfers_started - f.transfers_done <= 1,
            "flow {i}: {} started, {} done",
            f.transfers_started,
            f.transfers_done
        );
        assert_eq!(r.off_periods[i].len() as u64, f.transfers_done);
        let done: u64 = drawn[..f.transfers_done as usize]
            .iter()
            .map(|p| p.bytes)
            .sum();
        assert_eq!(f.file_bytes_done, done, "flow {i}");
        // Every completed file's bytes reached the receiver (1000 B packets, whole packets per file).
        let done_packets: u64 = drawn[..f.transfers_done as usize]
            .iter()
            .map(|p| p.bytes.div_ceil(1000))
            .sum();
        assert!(
            f.goodput_bytes >= done_packets * 1000,
            "flow {i}: {} B delivered, {done_packets} packets of files done",
            f.goodput_bytes
        );
        assert!(
            f.transfers_done >= 3,
            "flow {i}: {} files",
            f.transfers_done
        );
        let largest = drawn.iter().map(|p| p.drawn_bytes).fold(0.0, f64::max);
        assert_eq!(f.largest_file_bytes, Some(largest));
        assert!(
            f.on_rate_mbps.is_some_and(|x| x > 0.0 && x <= 10.0),
            "flow {i}: ON rate {:?}",
            f.on_rate_mbps
        );
    }
    assert_eq!(
        r.total.transfers_started,
        r.flows.iter().map(|f| f.transfers_started).sum::<u64>()
    );
    // Link rows only, at 10 ms: 6000 bins, no per-flow series.
    assert_eq!(r.bin_s, 0.01);
    assert!(r.bins[..32].iter().all(|b| b.is_empty()));
    assert!(
        (6000..=6001).contains(&r.bins[32].len()),
        "{} link bins",
        r.bins[32].len()
    );
}

#[test]
fn the_send_window_holds_at_most_20_packets_unacknowledged() {
    // ns-2 `window_` = 20: the example's send buffer of 20 x 1000 B. With one flow and a 1 MB file
    // the window is the limit: at most 20 packets per round trip (32.5 ms base), about 4.9 Mbit/s.
    let text = example_text()
        .replace("duration_s = 10000", "duration_s = 30")
        .replace("count = 16", "count = 1")
        .replace("mean_bytes = 32000", "min_bytes = 1000000")
        .replace("alpha = 1.35", "alpha = 50");
    let r = run(&load(&text));
    let f = &r.flows[0];
    assert!(f.transfers_done >= 1);
    let rate = f.on_rate_mbps.unwrap();
    // 20 packets x 8000 bit per RTT of 32.4 ms (30 ms propagation, 3 serialisations of 0.8 ms minus
    // the ACK's): 4.9 Mbit/s; slow start and the queue keep it below that.
    assert!(
        rate < 20.0 * 8000.0 / 0.0300 / 1e6,
        "ON rate {rate:.2} Mbit/s exceeds 20 packets per RTT"
    );
    assert!(rate > 3.0, "ON rate {rate:.2} Mbit/s");
}

// --- errors ---------------------------------------------------------------------------------------

fn traffic_err(traffic: &str) -> String {
    let text = format!(
        "duration_s = 1\n[data_link]\nrate_mbps = 10\ndelay_ms = 5\n[[flows]]\ncontroller = \"newreno\"\ntraffic = {{ kind = \"onoff\", {traffic} }}\n"
    );
    load_scenario(&text, Some(Path::new("p.toml")), &[])
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_pareto_keys_are_refused_with_file_line_and_field() {
    let cases = [
        (
            "size = \"pareto\", alpha = 1.0",
            "alpha",
            "for alpha <= 1 the Pareto mean is infinite",
        ),
        (
            "size = \"pareto\", alpha = 0.5, min_bytes = 1000",
            "alpha",
            "must be a finite number > 1",
        ),
        ("size = \"pareto\"", "alpha", "missing"),
        (
            "size = \"pareto\", alpha = 1.5, mean_bytes = 32000, min_bytes = 1000",
            "min_bytes",
            "not both",
        ),
        (
            "size = \"pareto\", alpha = 1.5, mean_bytes = -5",
            "mean_bytes",
            "must be a finite number > 0",
        ),
        (
            "size = \"pareto\", alpha = 1.5, min_bytes = 0",
            "min_bytes",
            "must be a finite number > 0",
        ),
        (
            "size = \"pareto\", alpha = 1.5, off_mean_s = -1",
            "off_mean_s",
            "must be > 0",
        ),
        (
            "size = \"pareto\", alpha = 1.5, max_bytes = 1e6",
            "max_bytes",
            "untruncated",
        ),
        (
            "size = \"pareto\", alpha = 1.5, std_bytes = 1e6",
            "std_bytes",
            "only for size = \"lognormal\"",
        ),
        ("alpha = 1.5", "alpha", "only for size = \"pareto\""),
        // An unknown value of a tagged table's field names that field (the loader finds the key).
        ("size = \"weibull\"", "size", "unknown value `weibull`"),
    ];
    for (t, field, why) in cases {
        let e = traffic_err(t);
        let want = format!("p.toml:7: field `flows[0].traffic.{field}`: ");
        assert!(e.starts_with(&want) && e.contains(why), "{t}: {e}");
    }
}

#[test]
fn pareto_defaults_to_a_32_kb_mean_and_min_bytes_sets_k() {
    let sc = |t: &str| {
        load(&format!("duration_s = 1\n[data_link]\nrate_mbps = 10\n[[flows]]\ncontroller = \"newreno\"\ntraffic = {{ kind = \"onoff\", {t} }}\n"))
    };
    let size = |s: &Scenario| match &s.flows[0].app {
        ccscope_sim::endpoint::App::OnOff(p) => p.size,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        size(&sc("size = \"pareto\", alpha = 1.6")),
        FileSize::Pareto(ParetoSize::with_mean(1.6, 32_000.0))
    );
    assert_eq!(
        size(&sc("size = \"pareto\", alpha = 1.6, min_bytes = 1200")),
        FileSize::Pareto(ParetoSize {
            alpha: 1.6,
            k_bytes: 1200.0
        })
    );
    assert_eq!(size(&sc("off_mean_s = 3")), OnOffParams::default().size);
}
