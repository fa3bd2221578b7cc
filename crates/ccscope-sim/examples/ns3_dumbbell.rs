//! The ns-3 dumbbell of ../shared/bench/ns3 (12 or 100 Mbit/s, 20 ms, 1000-packet droptail, 1 or 16
//! bulk flows starting in [0, 1) s, seed 1) with each reliable-transport preset, for the goodput table
//! of docs/performance.md: `cargo run --release -p ccscope-sim --example ns3_dumbbell [-- STACK...]`
//! (default: rfc ns3 linux). A STACK may carry extra flow keys after a colon, comma-separated, e.g.
//! `ns3:delayed_ack="none"` or `ns3:slow_start_limit=1` (a controller parameter the controller does
//! not know is skipped for it); `--rate 12` runs only the 12 Mbit/s cases, `--case 1:cubic` only the
//! cases of that many flows of that controller, `--queue 1001` gives the bottleneck that many packets
//! instead of 1000. Goodput is payload (x 1448/1500), as ns-3 counts it; acks/pkt is ACKs sent per
//! data packet delivered.

use ccscope_sim::{load_scenario, Simulation};

const CASES: [(u32, &str, u32, u32); 8] = [
    (1, "cubic", 12, 300),
    (1, "newreno", 12, 300),
    (16, "cubic", 12, 300),
    (16, "newreno", 12, 300),
    (1, "cubic", 100, 60),
    (1, "newreno", 100, 60),
    (16, "cubic", 100, 60),
    (16, "newreno", 100, 60),
];

/// Flow keys of the transport; any other key is a controller parameter.
const TRANSPORT_KEYS: [&str; 9] = [
    "delayed_ack",
    "dsack",
    "frto",
    "limited_transmit",
    "prr",
    "rack",
    "tlp",
    "rto_estimator",
    "min_rto_ms",
];

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut only_rate = None;
    if let Some(i) = args.iter().position(|a| a == "--rate") {
        let r = args.get(i + 1).and_then(|r| r.parse::<u32>().ok());
        only_rate = Some(r.unwrap_or_else(|| panic!("--rate needs Mbit/s, e.g. --rate 12")));
        args.drain(i..i + 2);
    }
    let mut only_case = None;
    if let Some(i) = args.iter().position(|a| a == "--case") {
        let c = args.get(i + 1).and_then(|c| {
            let (n, cc) = c.split_once(':')?;
            Some((n.parse::<u32>().ok()?, cc.to_string()))
        });
        only_case =
            Some(c.unwrap_or_else(|| panic!("--case needs FLOWS:CONTROLLER, e.g. --case 1:cubic")));
        args.drain(i..i + 2);
    }
    let mut queue = 1000;
    if let Some(i) = args.iter().position(|a| a == "--queue") {
        let q = args.get(i + 1).and_then(|q| q.parse::<u32>().ok());
        queue = q.unwrap_or_else(|| panic!("--queue needs packets, e.g. --queue 1001"));
        args.drain(i..i + 2);
    }
    let mut stacks = args;
    if stacks.is_empty() {
        stacks = vec!["rfc".into(), "ns3".into(), "linux".into()];
    }
    for (n, cc, rate, dur) in CASES {
        if only_rate.is_some_and(|r| r != rate)
            || only_case
                .as_ref()
                .is_some_and(|(m, c)| (*m, c.as_str()) != (n, cc))
        {
            continue;
        }
        for spec in &stacks {
            let (stack, extra) = spec.split_once(':').unwrap_or((spec, ""));
            // A controller parameter goes only to the controller that has it (newreno's slow_start_limit).
            let known: Vec<&str> = ccscope_cc::registry::find(cc)
                .map(|e| e.params.iter().map(|p| p.name).collect())
                .unwrap_or_default();
            let keys: String = extra
                .split(',')
                .filter(|kv| !kv.is_empty())
                .filter(|kv| {
                    let k = kv.split('=').next().unwrap_or("").trim();
                    TRANSPORT_KEYS.contains(&k) || known.contains(&k)
                })
                .map(|kv| format!("{kv}\n"))
                .collect();
            let text = format!(
                "seed = 1\nduration_s = {dur}\nbin_ms = 500\n\
                 [data_link]\nrate_mbps = {rate}\ndelay_ms = 20\nqueue = {{ kind = \"droptail\", packets = {queue} }}\n\
                 [ack_link]\nrate_mbps = {rate}\ndelay_ms = 20\n\
                 [[flows]]\ncontroller = \"{cc}\"\ncount = {n}\nstart_jitter_s = 1\npacket_bytes = 1500\n\
                 ack_bytes = 52\nstack = \"{stack}\"\n{keys}"
            );
            let sc = load_scenario(&text, None, &[]).unwrap_or_else(|e| panic!("{e}"));
            let (r, _) = Simulation::new(&sc).expect("builds").run();
            let flows: Vec<_> = r.flows.iter().filter(|f| f.flow.is_some()).collect();
            let sum = |g: &dyn Fn(&ccscope_sim::FlowSummary) -> u64| {
                flows.iter().map(|f| g(f)).sum::<u64>()
            };
            let goodput: f64 = flows.iter().map(|f| f.goodput_mbps).sum::<f64>() * 1448.0 / 1500.0;
            let counter = |name: &str| -> u64 {
                flows
                    .iter()
                    .flat_map(|f| f.counters.iter())
                    .filter(|c| c.0 == name)
                    .map(|c| c.1)
                    .sum()
            };
            let delivered = sum(&|f| f.delivered).max(1);
            println!(
                "{n:2} {cc:8} {rate:3}M {dur:3}s stack={spec:5} goodput={goodput:.3} rtos={} retx={} drops={} lost={} spurious_rtos={} tlp_probes={} tlp_recoveries={} reo_timeouts={} acks/pkt={:.3}",
                sum(&|f| f.rtos),
                sum(&|f| f.retransmissions),
                sum(&|f| f.dropped),
                sum(&|f| f.declared_lost),
                counter("spurious_rtos"),
                counter("tlp_probes"),
                counter("tlp_recoveries"),
                counter("rack_reo_timeouts"),
                r.acks.0 as f64 / delivered as f64,
            );
        }
    }
}
