//! Per-epoch trace of every `lied` flow of a scenario (paper 003 §3.1, specs/003-mtsc.md §2.1): what each
//! measured epoch sent, measured (nu, c, gamma of eq. 4) and which branch of eq. 3 it took, plus the
//! bottleneck's 10 ms bins and each flow's totals. `cargo run --release -p ccscope-sim --example lied_trace
//! -- scenario.toml out_prefix` writes out_prefix.epochs.csv, out_prefix.link.csv, out_prefix.flows.csv.

use std::collections::VecDeque;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use ccscope_cc::rate::lied::{Lied, Params, Step};
use ccscope_cc::registry::parse_params;
use ccscope_cc::{AckEvent, AnyController, Controller, LossEvent, ParamError, SendEvent};
use ccscope_core::{Bandwidth, Dur, Time};
use ccscope_sim::{load_scenario, FlowSpec, Simulation};

/// What the sender did in one epoch, seen from `on_send`.
#[derive(Clone, Copy)]
struct Sent {
    epoch: u64,
    count: u32,
    first: Time,
    last: Time,
    /// The pacing rate while it was sent, packets/s.
    paced: f64,
}

/// Forwards to LIED, measuring epochs itself (the same calls `Lied`'s `Controller` makes) to log them.
struct Spy {
    flow: usize,
    lied: Lied,
    sends: VecDeque<Sent>,
    rows: Arc<Mutex<Vec<String>>>,
}

impl Spy {
    fn drain(&mut self, now: Time) {
        while let Some(r) = self.lied.next_report() {
            while self.sends.front().is_some_and(|s| s.epoch < r.epoch) {
                self.sends.pop_front();
            }
            let s = self.sends.front().copied().filter(|s| s.epoch == r.epoch);
            let (sent, first, last, paced) = s.map_or((0, f64::NAN, f64::NAN, f64::NAN), |s| {
                (
                    s.count,
                    s.first.as_secs_f64(),
                    s.last.as_secs_f64(),
                    s.paced,
                )
            });
            let (r0, r1) = r.span.map_or((f64::NAN, f64::NAN), |(a, b)| {
                (a.as_secs_f64(), b.as_secs_f64())
            });
            let step = match r.step {
                Step::Increase => "inc",
                Step::Decrease => "dec",
            };
            self.rows.lock().unwrap().push(format!(
                "{},{:.6},{},{},{:.6},{:.6},{:.3},{:.6},{:.6},{:.3},{:.6},{:.3},{},{:.3},{:.3}",
                self.flow,
                now.as_secs_f64(),
                r.epoch,
                sent,
                first,
                last,
                paced,
                r0,
                r1,
                r.nu / 1000.0,
                r.c,
                r.gamma / 1000.0,
                step,
                self.lied.lambda(),
                self.lied.tau().as_secs_f64() * 1e3,
            ));
        }
    }
}

impl Controller for Spy {
    fn on_send(&mut self, now: Time, ev: &SendEvent) -> u64 {
        let tag = self.lied.on_send(now, ev);
        let paced = self
            .lied
            .pacing_rate()
            .map_or(f64::NAN, |b| b.bps() as f64 / (8.0 * ev.bytes as f64));
        match self.sends.back_mut() {
            Some(s) if s.epoch == tag => {
                s.count += 1;
                s.last = now;
            }
            _ => self.sends.push_back(Sent {
                epoch: tag,
                count: 1,
                first: now,
                last: now,
                paced,
            }),
        }
        tag
    }
    fn on_ack(&mut self, now: Time, ev: &AckEvent) {
        self.lied.record_ack(ev);
        self.drain(now);
    }
    fn on_loss(&mut self, now: Time, ev: &LossEvent) {
        self.lied.record_loss(ev);
        self.drain(now);
    }
    fn on_timer(&mut self, now: Time) {
        self.lied.tick(now);
        self.drain(now);
    }
    fn next_timer(&self) -> Option<Time> {
        self.lied.next_timer()
    }
    fn cwnd(&self) -> u32 {
        self.lied.cwnd()
    }
    fn pacing_rate(&self) -> Option<Bandwidth> {
        self.lied.pacing_rate()
    }
    fn timeout(&self) -> Dur {
        self.lied.timeout()
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.lied.counters()
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(args.next().expect("a scenario file"));
    let out = args.next().expect("an output prefix");
    let text = std::fs::read_to_string(&path).expect("readable scenario");
    let sc = load_scenario(&text, Some(&path), &[]).unwrap_or_else(|e| panic!("{e}"));
    let rows = Arc::new(Mutex::new(Vec::new()));
    let mut factory = |i: usize, f: &FlowSpec| -> Result<AnyController, ParamError> {
        if f.controller != "lied" {
            return ccscope_cc::build(&f.controller, &f.params);
        }
        let p = parse_params::<Params>("lied", &f.params)?;
        Ok(AnyController::boxed(Spy {
            flow: i,
            lied: Lied::new(p),
            sends: VecDeque::new(),
            rows: Arc::clone(&rows),
        }))
    };
    let (res, _) = Simulation::with_factory(&sc, &mut factory)
        .expect("builds")
        .run();
    let mut w = std::fs::File::create(format!("{out}.epochs.csv")).unwrap();
    writeln!(
        w,
        "flow,t,epoch,sent,first_send,last_send,paced_pps,recv0,recv1,nu_kBps,c,gamma_kBps,step,lambda_after,tau_ms"
    )
    .unwrap();
    for r in rows.lock().unwrap().iter() {
        writeln!(w, "{r}").unwrap();
    }
    let mut w = std::fs::File::create(format!("{out}.link.csv")).unwrap();
    writeln!(w, "t,departed_bytes,dropped,queue_delay_mean_ms").unwrap();
    if let Some(link) = res.bins.last() {
        for (i, b) in link.iter().enumerate() {
            let q = if b.departures > 0 {
                b.queue_delay_sum_ms as f64 / b.departures as f64
            } else {
                0.0
            };
            writeln!(
                w,
                "{:.3},{},{},{:.3}",
                i as f64 * res.bin_s,
                b.departed_bytes,
                b.dropped,
                q
            )
            .unwrap();
        }
    }
    let mut w = std::fs::File::create(format!("{out}.flows.csv")).unwrap();
    writeln!(
        w,
        "flow,controller,sent,delivered,dropped,declared_lost,throughput_mbps"
    )
    .unwrap();
    for (i, f) in res.flows.iter().enumerate() {
        writeln!(
            w,
            "{i},{},{},{},{},{},{:.4}",
            f.controller, f.sent, f.delivered, f.dropped, f.declared_lost, f.throughput_mbps
        )
        .unwrap();
    }
}
