//! BBR v1's own state on every ACK of a scenario's BBR flows, to set beside the kernel's TCP_CC_INFO
//! samples (experiments/mahimahi/tcp_bulk.py): `cargo run --release -p ccscope-sim --example bbr_state --
//! scenario.toml out.csv`. Writes t_ns,flow,mode,cycle_idx,max_bw_pps,min_rtt_us,extra_acked,cwnd,
//! pacing_bps,in_flight,rtt_us,rate_pps,rate_interval_us,app_limited (the rate columns empty when the
//! ACK carried no rate sample) and, when the scenario sets `packet_log = true`, the data link's
//! departures as out.queue.csv (t_ns,delay_ms, the queueing delay in whole ms as Mahimahi logs it).

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use ccscope_cc::model::bbr::{Bbr, Mode};
use ccscope_cc::wrap::{Hooks, Wrapped};
use ccscope_cc::{AckEvent, AnyController, Controller, ParamError};
use ccscope_core::Time;
use ccscope_sim::{load_scenario, FlowSpec, Simulation};

type Out = Arc<Mutex<std::io::BufWriter<std::fs::File>>>;

struct Log {
    flow: usize,
    out: Out,
}

impl Hooks<Bbr> for Log {
    fn on_ack(&mut self, inner: &mut Bbr, now: Time, ev: &AckEvent) {
        inner.on_ack(now, ev);
        let mode = match inner.mode() {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        };
        let (rate, interval, app) = match &ev.rate {
            Some(r) => (
                format!("{:.3}", r.rate_pps()),
                (r.interval.as_ns() / 1000).to_string(),
                u8::from(r.is_app_limited).to_string(),
            ),
            None => Default::default(),
        };
        let mut w = self.out.lock().unwrap();
        writeln!(
            w,
            "{},{},{mode},{},{:.3},{},{},{},{},{},{},{rate},{interval},{app}",
            now.as_ns(),
            self.flow,
            inner.cycle_idx(),
            inner.max_bw(),
            inner.min_rtt().map_or(0, |d| d.as_ns() / 1000),
            inner.extra_acked(),
            inner.cwnd(),
            inner.pacing_rate().map_or(0, |b| b.bps()),
            ev.in_flight,
            ev.rtt.as_ns() / 1000,
        )
        .unwrap();
    }
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    assert!(a.len() == 2, "scenario.toml out.csv");
    let path = PathBuf::from(&a[0]);
    let text = std::fs::read_to_string(&path).expect("readable scenario");
    let sc = load_scenario(&text, Some(&path), &[]).unwrap_or_else(|e| panic!("{e}"));
    let out: Out = Arc::new(Mutex::new(std::io::BufWriter::new(
        std::fs::File::create(&a[1]).expect("writable output"),
    )));
    writeln!(
        out.lock().unwrap(),
        "t_ns,flow,mode,cycle_idx,max_bw_pps,min_rtt_us,extra_acked,cwnd,pacing_bps,in_flight,rtt_us,rate_pps,rate_interval_us,app_limited"
    )
    .unwrap();
    let mut factory = |i: usize, f: &FlowSpec| -> Result<AnyController, ParamError> {
        match ccscope_cc::build(&f.controller, &f.params)? {
            AnyController::Bbr(b) => Ok(AnyController::boxed(Wrapped::new(
                *b,
                Log {
                    flow: i,
                    out: out.clone(),
                },
            ))),
            c => Ok(c),
        }
    };
    let (res, log) = Simulation::with_factory(&sc, &mut factory)
        .expect("builds")
        .run();
    out.lock().unwrap().flush().unwrap();
    if let Some(log) = log {
        let path = a[1].strip_suffix(".csv").unwrap_or(&a[1]).to_string() + ".queue.csv";
        let mut w = std::io::BufWriter::new(std::fs::File::create(path).expect("writable output"));
        writeln!(w, "t_ns,delay_ms").unwrap();
        // pktlog.rs: the data link's log; LogEvent 2 = a departure (opportunities have flow -1).
        for i in (0..log.len()).filter(|&i| log.event[i] == 2 && log.flow[i] >= 0) {
            writeln!(w, "{},{}", log.time_ns[i], log.delay_ms[i]).unwrap();
        }
        w.flush().unwrap();
    }
    eprintln!("{} events", res.events);
}
