use ccscope_sim::{load_scenario, RunResult, Simulation};

fn run(cc: &str, n: u32, queue: &str, extra: &str) -> RunResult {
    let top = std::env::var("TOP").unwrap_or_default().replace("\\n", "\n") + "\n";
    let text = format!(
        "{top}duration_s = 300\nbin_ms = 1000\n[data_link]\nrate_mbps = 12\ndelay_ms = 20\nqueue = {queue}\n[ack_link]\nrate_mbps = 12\ndelay_ms = 20\n[[flows]]\ncontroller = \"{cc}\"\ncount = {n}\n{extra}\n"
    );
    let sc = load_scenario(&text, None, &[]).unwrap();
    Simulation::new(&sc).unwrap().run().0
}

fn jain_last_half(r: &RunResult, n: usize) -> f64 {
    let bins = r.bins.len() - 1;
    assert_eq!(bins, n);
    let from = r.bins[0].len() / 2;
    let x: Vec<f64> = r.bins[..n].iter().map(|b| b[from..].iter().map(|t| t.departed_bytes as f64).sum::<f64>()).collect();
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (n as f64 * s2)
}

#[test]
#[ignore]
fn sweep() {
    let ccs = std::env::var("CCS").unwrap_or("verus".into());
    let extra = std::env::var("EXTRA").unwrap_or_default().replace("\\n", "\n");
    for q in ["{ kind = \"droptail\", packets = 1000 }", "{ kind = \"red\" }", "{ kind = \"droptail\", packets = 100 }"] {
        for cc in ccs.split(',') {
            for n in [1u32, 2, 4, 8] {
                let r = run(cc, n, q, &extra);
                let per: Vec<String> = r.flows.iter().map(|f| format!("{:.2}", f.throughput_mbps)).collect();
                eprintln!("{:28} {cc} {n} util {:.3} jain {:.3} drops {} owd95 {:?} | {}", q, r.total.utilization, jain_last_half(&r, n as usize), r.total.dropped, r.total.one_way_delay_p95_ms.map(|v| v.round()), per.join(" "));
            }
        }
    }
}

#[test]
#[ignore]
fn one() {
    let cc = std::env::var("CC").unwrap_or("verus".into());
    let n: u32 = std::env::var("N").unwrap().parse().unwrap();
    let q = match std::env::var("Q").unwrap().as_str() { "dt" => "{ kind = \"droptail\", packets = 1000 }", "red" => "{ kind = \"red\" }", "dt100" => "{ kind = \"droptail\", packets = 100 }", _ => "{ kind = \"infinite\" }" };
    let extra = std::env::var("EXTRA").unwrap_or_default().replace("\\n", "\n");
    let step: usize = std::env::var("STEP").map(|s| s.parse().unwrap()).unwrap_or(10);
    let r = run(&cc, n, q, &extra);
    for t in (0..r.bins[0].len()).step_by(step) {
        let thr: Vec<String> = (0..n as usize).map(|f| format!("{:5.2}", r.bins[f][t].departed_bytes as f64 * 8e-6 / r.bin_s)).collect();
        let cw: Vec<String> = (0..n as usize).map(|f| format!("{:5}", r.bins[f][t].cwnd)).collect();
        println!("{t:4} thr {} | cwnd {}", thr.join(" "), cw.join(" "));
    }
    println!("jain {:.3} util {:.3}", jain_last_half(&r, n as usize), r.total.utilization);
}
