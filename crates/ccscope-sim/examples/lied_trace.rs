//! Per-epoch trace of every `lied` flow of a scenario (paper 003 §3.1, specs/003-mtsc.md §2.1): what each
//! measured epoch sent, measured (nu, c, gamma of eq. 4) and which branch of eq. 3 it took, plus the
//! bottleneck's 10 ms bins and each flow's totals. `cargo run --release -p ccscope-sim --example lied_trace
//! -- scenario.toml out_prefix` writes out_prefix.epochs.csv, out_prefix.link.csv, out_prefix.flows.csv.
//! A `sac` flow (§3.2) gets one row per measurement in out_prefix.sac.csv: the eq.-3 steps, a_t, S_t, its
//! level and E(L2 | l). The link file adds the bytes of the flows that keep a series (`timeseries = true`,
//! the controlled ones in the paper-003 scenarios); out_prefix.off.csv lists every ON/OFF flow's OFF periods.

use std::collections::VecDeque;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use ccscope_cc::common::condprob::SlidingIntegral;
use ccscope_cc::rate::lied::{Lied, Params, Step};
use ccscope_cc::rate::sac::{self, Sac};
use ccscope_cc::registry::parse_params;
use ccscope_cc::wrap::{Hooks, Wrapped};
use ccscope_cc::{AckEvent, AnyController, Controller, LossEvent, ParamError, SendEvent};
use ccscope_core::{Dur, Time};
use ccscope_sim::{load_scenario, FlowSpec, Simulation};

mod support;

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

/// Around LIED: measures its epochs itself (the same calls `Lied`'s `Controller` makes) to log them.
struct LiedLog {
    flow: usize,
    sends: VecDeque<Sent>,
    rows: Arc<Mutex<Vec<String>>>,
}

impl LiedLog {
    fn drain(&mut self, lied: &mut Lied, now: Time) {
        while let Some(r) = lied.next_report() {
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
                lied.lambda(),
                lied.tau().as_secs_f64() * 1e3,
            ));
        }
    }
}

impl Hooks<Lied> for LiedLog {
    fn on_send(&mut self, lied: &mut Lied, now: Time, ev: &SendEvent) -> u64 {
        let tag = lied.on_send(now, ev);
        let paced = lied
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
    fn on_ack(&mut self, lied: &mut Lied, now: Time, ev: &AckEvent) {
        lied.record_ack(ev);
        self.drain(lied, now);
    }
    fn on_loss(&mut self, lied: &mut Lied, now: Time, ev: &LossEvent) {
        lied.record_loss(ev);
        self.drain(lied, now);
    }
    fn on_timer(&mut self, lied: &mut Lied, now: Time) {
        lied.tick(now);
        self.drain(lied, now);
    }
}

/// What one SAC epoch sent and lost, counted from the tags `on_send` and `on_loss` carry.
#[derive(Clone, Copy)]
struct Tally {
    epoch: u64,
    sent: u32,
    lost: u32,
    /// The pacing rate while it was sent, packets/s.
    paced: f64,
}

/// The counters of `Sac` a row is made of (their change over one call), looked up by name.
const SAC_COUNTERS: [&str; 6] = [
    "lied_epochs_measured",
    "lied_increases",
    "lied_decreases",
    "sac_increases",
    "sac_boosted_increases",
    "sac_a_sum_micro",
];

/// The pacing rate in 1000 B packets/s (the paper-003 scenarios' packet size).
fn pps(sac: &Sac) -> f64 {
    sac.pacing_rate()
        .map_or(f64::NAN, |b| b.bps() as f64 / 8000.0)
}

fn sac_counters(sac: &Sac) -> [u64; 6] {
    let c = sac.counters();
    SAC_COUNTERS.map(|name| c.iter().find(|(n, _)| *n == name).map_or(0, |&(_, v)| v))
}

/// Around SAC, unchanged: after each call that measured epochs, logs the schedule's state: the eq.-3
/// steps and a_t from the counters' change, S_t recomputed from the signal SAC records (the same sliding
/// T1 integral, paper 003 §3.2.2 step 1), its level l and E(L2 | l) from SAC's own table.
struct SacLog {
    flow: usize,
    recent: SlidingIntegral,
    tallies: VecDeque<Tally>,
    before: [u64; 6],
    rows: Arc<Mutex<Vec<String>>>,
}

impl SacLog {
    fn tally(&mut self, tag: u64) -> Option<&mut Tally> {
        let front = self.tallies.front()?.epoch;
        self.tallies.get_mut(tag.checked_sub(front)? as usize)
    }

    fn drain(&mut self, sac: &mut Sac, now: Time) {
        let log = sac.take_signal_log();
        for s in &log {
            self.recent.add(s.value, s.start, s.end);
        }
        let after = sac_counters(sac);
        let d: [u64; 6] = std::array::from_fn(|i| after[i] - self.before[i]);
        self.before = after;
        if d[0] == 0 {
            return;
        }
        let last = log.last();
        let epoch = last.map(|s| s.epoch);
        while self
            .tallies
            .front()
            .is_some_and(|t| epoch.is_some_and(|e| t.epoch < e))
        {
            self.tallies.pop_front();
        }
        let (sent, lost, sent_at) = self
            .tallies
            .front()
            .filter(|t| Some(t.epoch) == epoch)
            .map_or((0, 0, f64::NAN), |t| (t.sent, t.lost, t.paced));
        let table = sac.table();
        let (mu1, sigma1) = table.stats(1);
        let s_t = self.recent.value();
        let l = s_t.map_or(0, |v| table.level(v, 1));
        let expected = (l > 0)
            .then(|| table.expected_next(l))
            .flatten()
            .unwrap_or(f64::NAN);
        let a_t = if d[4] > 0 {
            d[5] as f64 / 1e6 / d[4] as f64
        } else {
            0.0
        };
        let paced = pps(sac);
        self.rows.lock().unwrap().push(format!(
            "{},{:.6},{},{},{},{},{:.3},{:.3},{},{},{},{:.6},{:.3},{:.3},{:.3},{},{:.4},{:.3}",
            self.flow,
            now.as_secs_f64(),
            d[0],
            epoch.map_or(-1, |e| e as i64),
            sent,
            lost,
            sent_at,
            last.map_or(f64::NAN, |s| s.value / 1000.0),
            d[1],
            d[2],
            d[4],
            a_t,
            s_t.map_or(f64::NAN, |v| v / 1000.0),
            mu1 / 1000.0,
            sigma1 / 1000.0,
            l,
            expected,
            paced,
        ));
    }
}

impl Hooks<Sac> for SacLog {
    fn on_send(&mut self, sac: &mut Sac, now: Time, ev: &SendEvent) -> u64 {
        let tag = sac.on_send(now, ev);
        match self.tallies.back_mut() {
            Some(t) if t.epoch == tag => t.sent += 1,
            _ => self.tallies.push_back(Tally {
                epoch: tag,
                sent: 1,
                lost: 0,
                paced: pps(sac),
            }),
        }
        tag
    }
    fn on_ack(&mut self, sac: &mut Sac, now: Time, ev: &AckEvent) {
        sac.on_ack(now, ev);
        self.drain(sac, now);
    }
    fn on_loss(&mut self, sac: &mut Sac, now: Time, ev: &LossEvent) {
        if let Some(t) = self.tally(ev.tag) {
            t.lost += 1;
        }
        sac.on_loss(now, ev);
        self.drain(sac, now);
    }
    fn on_timer(&mut self, sac: &mut Sac, now: Time) {
        sac.on_timer(now);
        self.drain(sac, now);
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(args.next().expect("a scenario file"));
    let out = args.next().expect("an output prefix");
    let text = std::fs::read_to_string(&path).expect("readable scenario");
    let sc = load_scenario(&text, Some(&path), &[]).unwrap_or_else(|e| panic!("{e}"));
    let rows = Arc::new(Mutex::new(Vec::new()));
    let sac_rows = Arc::new(Mutex::new(Vec::new()));
    let mut factory = |i: usize, f: &FlowSpec| -> Result<AnyController, ParamError> {
        if f.controller == "sac" {
            let p = parse_params::<sac::Params>("sac", &f.params)?;
            let t1 = Dur::from_secs_f64(p.t1_s).as_ns();
            return Ok(AnyController::boxed(Wrapped::new(
                Sac::new(p).record_signal(),
                SacLog {
                    flow: i,
                    recent: SlidingIntegral::new(t1),
                    tallies: VecDeque::new(),
                    before: [0; 6],
                    rows: Arc::clone(&sac_rows),
                },
            )));
        }
        if f.controller != "lied" {
            return ccscope_cc::build(&f.controller, &f.params);
        }
        let p = parse_params::<Params>("lied", &f.params)?;
        Ok(AnyController::boxed(Wrapped::new(
            Lied::new(p),
            LiedLog {
                flow: i,
                sends: VecDeque::new(),
                rows: Arc::clone(&rows),
            },
        )))
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
    let mut w = std::fs::File::create(format!("{out}.sac.csv")).unwrap();
    writeln!(
        w,
        "flow,t,measured,epoch,sent,lost,sent_pps,gamma_kBps,inc,dec,boosted,a_t,s_t_kB,mu1_kB,sigma1_kB,level,expected_l2,paced_pps"
    )
    .unwrap();
    for r in sac_rows.lock().unwrap().iter() {
        writeln!(w, "{r}").unwrap();
    }
    support::write_link_csv(&format!("{out}.link.csv"), &res);
    let mut w = std::fs::File::create(format!("{out}.off.csv")).unwrap();
    writeln!(w, "flow,start_s,end_s").unwrap();
    for (i, offs) in res.off_periods.iter().enumerate() {
        for (a, b) in offs {
            writeln!(w, "{i},{a:.6},{b:.6}").unwrap();
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
