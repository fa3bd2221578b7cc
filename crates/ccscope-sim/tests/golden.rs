//! Golden summaries: every embedded example's headline numbers as a small diffable text snapshot.
//! A change in any number shows up in review; update with `INSTA_UPDATE=always cargo test --test golden`
//! only after checking the new numbers are right.

use std::fmt::Write;
use std::path::Path;

use ccscope_sim::{load_scenario, Simulation};

fn summary(name: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/ccscope");
    let p = root.join("examples").join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&p).unwrap();
    let sc = load_scenario(&text, Some(&p), &[root.join("data/traces")]).unwrap();
    let (r, _) = Simulation::new(&sc).unwrap().run();
    let mut s = String::new();
    writeln!(s, "flow controller sent delivered dropped in_flight tput_mbps p95_qdelay_ms p95_signal_ms p95_owd_ms score").unwrap();
    for f in r.flows.iter().chain(std::iter::once(&r.total)) {
        writeln!(
            s,
            "{} {} {} {} {} {} {:.4} {} {} {:.2} {:.3}",
            f.flow
                .map(|x| x.to_string())
                .unwrap_or_else(|| "all".into()),
            f.controller,
            f.sent,
            f.delivered,
            f.dropped,
            f.in_flight,
            f.throughput_mbps,
            f.queue_delay_p95_ms.unwrap_or(-1.0),
            f.signal_delay_p95_ms.unwrap_or(-1.0),
            f.one_way_delay_p95_ms.unwrap_or(-1.0),
            f.score.unwrap_or(0.0),
        )
        .unwrap();
    }
    writeln!(
        s,
        "jain {:.4} events {}",
        r.jain_index.unwrap_or(0.0),
        r.events
    )
    .unwrap();
    s
}

macro_rules! golden {
    ($($name:ident),*) => {$(
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), summary(stringify!($name)));
        }
    )*};
}

golden!(
    datagrump,
    fixed,
    aimd,
    delay_triggered,
    aiad,
    mimd,
    timely,
    queue_gradient,
    constant_rate,
    red_lossy,
    newreno,
    cubic,
    vegas,
    sprout
);
