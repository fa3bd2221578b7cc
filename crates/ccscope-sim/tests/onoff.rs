//! Paper 000 §6.6 ON/OFF traffic (Table 3): the drawn sizes and OFF periods, one random sequence
//! per (seed, flow) whatever the controller, and both transports idling through OFF periods.

use std::path::{Path, PathBuf};

use ccscope_core::Dur;
use ccscope_sim::traffic::{onoff_sequence, LogNormalSize, OnOffParams, Period};
use ccscope_sim::{load_scenario, RunResult, Scenario, Simulation};

fn traces() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/ccscope/data/traces")
}

fn load(text: &str) -> Scenario {
    load_scenario(text, Some(Path::new("onoff.toml")), &[traces()]).unwrap()
}

fn scenario(controller: &str, seed: u64, duration_s: u64) -> Scenario {
    load(&format!(
        "seed = {seed}\nduration_s = {duration_s}\nbin_ms = 1000\n[data_link]\ntrace = \"Verizon-LTE-short.down\"\ndelay_ms = 20\n\
         queue = {{ kind = \"red\" }}\n[ack_link]\ntrace = \"Verizon-LTE-short.up\"\ndelay_ms = 20\n[[flows]]\ncontroller = \"{controller}\"\n\
         packet_bytes = 1450\ncount = 2\ntraffic = {{ kind = \"onoff\" }}\n"
    ))
}

fn run(sc: &Scenario) -> RunResult {
    Simulation::new(sc).unwrap().run().0
}

/// E[X | X <= m] for X log-normal(mu, sigma): mean * Phi((ln m - mu - sigma^2)/sigma) / Phi((ln m - mu)/sigma).
fn truncated_mean(p: &LogNormalSize) -> f64 {
    let (mu, s) = p.mu_sigma();
    let phi = |x: f64| 0.5 * erfc(-x / std::f64::consts::SQRT_2);
    let lm = (p.max_bytes as f64).ln();
    p.mean_bytes * phi((lm - mu - s * s) / s) / phi((lm - mu) / s)
}

// Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.3275911 * z);
    let y = t
        * (0.254829592
            + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
        * (-z * z).exp();
    if x >= 0.0 {
        y
    } else {
        2.0 - y
    }
}

#[test]
fn table_3_defaults_give_lognormal_parameters_from_mean_and_variance() {
    let p = LogNormalSize::default();
    assert_eq!(p.std_bytes, 3.3e12f64.sqrt());
    let (mu, sigma) = p.mu_sigma();
    // Table 3: mean = e^(mu + sigma²/2), var = e^(2 mu + sigma²)(e^(sigma²) - 1).
    assert!(((mu + sigma * sigma / 2.0).exp() - 4e6).abs() < 1.0);
    assert!(
        ((2.0 * mu + sigma * sigma).exp() * ((sigma * sigma).exp() - 1.0) - 3.3e12).abs() < 1e3
    );
}

#[test]
fn file_sizes_have_the_configured_mean_and_never_exceed_the_maximum() {
    let p = LogNormalSize::default();
    let v = onoff_sequence(&OnOffParams::default(), 7, 0, 200_000);
    assert!(v.iter().all(|x| x.bytes <= p.max_bytes && x.bytes > 0));
    let mean = v.iter().map(|x| x.bytes as f64).sum::<f64>() / v.len() as f64;
    let want = truncated_mean(&p);
    assert!(
        (mean / want - 1.0).abs() < 0.005,
        "mean {mean} vs truncated mean {want}"
    );
    // Truncation at 10 MB removes ~1% of the mass: the realised mean stays within 2% of 4 MB.
    assert!((mean / 4e6 - 1.0).abs() < 0.02, "mean {mean}");
    let var = v
        .iter()
        .map(|x| (x.bytes as f64 - mean).powi(2))
        .sum::<f64>()
        / v.len() as f64;
    assert!(var < 3.3e12 && var > 2.0e12, "variance {var}");
}

#[test]
fn off_durations_are_exponential_with_the_configured_mean() {
    for off_s in [60u64, 5] {
        let p = OnOffParams {
            off_mean: Dur::from_ms(off_s * 1000),
            ..Default::default()
        };
        let v = onoff_sequence(&p, 3, 1, 100_000);
        let mean = v.iter().map(|x| x.off.as_secs_f64()).sum::<f64>() / v.len() as f64;
        assert!((mean / off_s as f64 - 1.0).abs() < 0.02, "mean off {mean}");
        // Exponential: P(X > mean) = 1/e.
        let above = v
            .iter()
            .filter(|x| x.off.as_secs_f64() > off_s as f64)
            .count() as f64
            / v.len() as f64;
        assert!((above - (-1f64).exp()).abs() < 0.01, "{above}");
    }
}

fn common_prefix(a: &[Period], b: &[Period]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[test]
fn every_controller_gets_the_same_sequence_under_the_same_seed() {
    let a = run(&scenario("verus", 1, 600));
    let b = run(&scenario("newreno", 1, 600));
    let c = run(&scenario("verus", 2, 600));
    for f in 0..2 {
        let (sa, sb, sc) = (&a.transfers[f], &b.transfers[f], &c.transfers[f]);
        let n = sa.len().min(sb.len());
        assert!(
            n >= 3,
            "flow {f}: too few periods ({}, {})",
            sa.len(),
            sb.len()
        );
        assert_eq!(
            common_prefix(sa, sb),
            n,
            "flow {f}: sequences differ between controllers"
        );
        assert_eq!(
            &sa[..n],
            &onoff_sequence(&OnOffParams::default(), 1, f, n)[..]
        );
        assert_eq!(
            common_prefix(sa, sc),
            0,
            "flow {f}: another seed gives the same first period"
        );
    }
    // Flows draw from their own streams.
    assert_ne!(a.transfers[0][0], a.transfers[1][0]);
}

fn check_onoff_run(controller: &str) -> RunResult {
    let sc = scenario(controller, 1, 600);
    let r = run(&sc);
    for f in r.flows.iter().chain(std::iter::once(&r.total)) {
        assert_eq!(
            f.sent,
            f.delivered + f.dropped + f.in_flight,
            "{controller}: conservation broken for {:?}",
            f.flow
        );
    }
    for (i, f) in r.flows.iter().enumerate() {
        assert!(
            f.transfers_done >= 3,
            "{controller} flow {i}: {} transfers",
            f.transfers_done
        );
        assert!(
            f.fct_mean_s.is_some_and(|t| t > 0.0 && t < 300.0),
            "{controller}: fct {:?}",
            f.fct_mean_s
        );
        // Idle during OFF: no packet of this flow reaches or leaves the link in a bin fully inside
        // an OFF period.
        let bins = &r.bins[i];
        let mut idle_bins = 0;
        for &(a, b) in &r.off_periods[i] {
            let first = (a / r.bin_s).ceil() as usize;
            let last = ((b.min(r.sim_end_s) / r.bin_s).floor() as usize).min(bins.len());
            for (k, bin) in bins.iter().enumerate().take(last).skip(first) {
                assert_eq!(
                    (bin.ingress_bytes, bin.departed_bytes, bin.delivered_bytes),
                    (0, 0, 0),
                    "{controller} flow {i}: bin {k} inside OFF ({a:.1}, {b:.1})"
                );
                idle_bins += 1;
            }
        }
        assert!(
            idle_bins >= 30,
            "{controller} flow {i}: only {idle_bins} idle bins checked"
        );
        assert_eq!(r.off_periods[i].len() as u64, f.transfers_done);
    }
    r
}

#[test]
fn verus_onoff_completes_transfers_conserves_packets_and_idles() {
    let r = check_onoff_run("verus");
    eprintln!(
        "verus: {:?}",
        r.flows
            .iter()
            .map(|f| (f.transfers_done, f.fct_mean_s, f.throughput_mbps))
            .collect::<Vec<_>>()
    );
}

#[test]
fn newreno_onoff_completes_transfers_conserves_packets_and_idles() {
    let r = check_onoff_run("newreno");
    eprintln!(
        "newreno: {:?}",
        r.flows
            .iter()
            .map(|f| (f.transfers_done, f.fct_mean_s, f.throughput_mbps))
            .collect::<Vec<_>>()
    );
}

#[test]
fn the_verus_onoff_example_loads() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../python/ccscope/examples/verus_onoff.toml");
    let sc = load_scenario(&std::fs::read_to_string(&p).unwrap(), Some(&p), &[traces()]).unwrap();
    assert_eq!(sc.flows.len(), 4);
    assert!(
        matches!(&sc.flows[0].app, ccscope_sim::scenario::App::OnOff(p) if p.off_mean == Dur::from_ms(60_000))
    );
}
