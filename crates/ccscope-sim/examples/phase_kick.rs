//! Perturbs the pacing of a scenario's last flow from a given time on, for the phase test of the paper-003
//! lock-in (docs/deviations.md; experiments/mtsc/phase.py `kick`): the run is the scenario's own up to
//! `at_s`, so a lock-in reached before it is the same one. `cargo run --release -p ccscope-sim --example
//! phase_kick -- scenario.toml out_prefix at_s MODE VALUE log_from_s` with MODE `none`, `scale` (pacing
//! rate x VALUE from `at_s` on) or `shift` (the first gap after `at_s` lengthened by VALUE ns, once). Writes
//! out_prefix.link.csv (the bottleneck's bins and the bytes of the flows that keep a series, as lied_trace
//! writes it) and, when the scenario logs packets, out_prefix.packets.csv (t_ns,event,flow,seq from
//! `log_from_s` on).

use std::io::Write;
use std::path::PathBuf;

use ccscope_cc::wrap::{Hooks, Wrapped};
use ccscope_cc::{AnyController, Controller, ParamError, SendEvent};
use ccscope_core::{Bandwidth, Dur, Time};
use ccscope_sim::{load_scenario, FlowSpec, Simulation};

mod support;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    None,
    Scale(f64),
    Shift(u64),
}

/// Around the flow's own controller: only the pacing rate the transport reads changes.
struct Kick {
    at: Time,
    mode: Mode,
    after: bool,
    /// `shift`: the rate of the one stretched gap, while it is being scheduled.
    stretched: Option<Bandwidth>,
    shifted: bool,
}

impl Hooks<AnyController> for Kick {
    fn on_send(&mut self, inner: &mut AnyController, now: Time, ev: &SendEvent) -> u64 {
        self.after = now >= self.at;
        self.stretched = None;
        if let (Mode::Shift(ns), true, false) = (self.mode, self.after, self.shifted) {
            if let Some(r) = inner.pacing_rate() {
                // The transport sets the next send at now + tx_time(bytes) of the rate read after this call.
                let gap = r.tx_time(ev.bytes as u64).as_ns() + ns;
                // tx_time rounds bits x 1e9 / rate up: the smallest rate whose tx_time is exactly `gap`.
                let bps = (ev.bytes as u64 * 8 * 1_000_000_000).div_ceil(gap);
                self.stretched = Some(Bandwidth::from_bps(bps));
                debug_assert_eq!(Bandwidth::from_bps(bps).tx_time(ev.bytes as u64), Dur(gap));
                self.shifted = true;
            }
        }
        inner.on_send(now, ev)
    }
    fn pacing_rate(&self, inner: &AnyController) -> Option<Bandwidth> {
        if let Some(r) = self.stretched {
            return Some(r);
        }
        let r = inner.pacing_rate()?;
        match self.mode {
            Mode::Scale(x) if self.after => {
                Some(Bandwidth::from_bps((r.bps() as f64 * x).round() as u64))
            }
            _ => Some(r),
        }
    }
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    assert!(
        a.len() == 6,
        "scenario.toml out_prefix at_s MODE VALUE log_from_s"
    );
    let path = PathBuf::from(&a[0]);
    let out = &a[1];
    let at = Time::from_secs_f64(a[2].parse().expect("at_s"));
    let value: f64 = a[4].parse().expect("VALUE");
    let mode = match a[3].as_str() {
        "none" => Mode::None,
        "scale" => Mode::Scale(value),
        "shift" => Mode::Shift(value as u64),
        m => panic!("MODE {m}: none, scale or shift"),
    };
    let log_from = Time::from_secs_f64(a[5].parse().expect("log_from_s")).as_ns();
    let text = std::fs::read_to_string(&path).expect("readable scenario");
    let sc = load_scenario(&text, Some(&path), &[]).unwrap_or_else(|e| panic!("{e}"));
    let last = sc.flows.len() - 1;
    let mut factory = |i: usize, f: &FlowSpec| -> Result<AnyController, ParamError> {
        let c = ccscope_cc::build(&f.controller, &f.params)?;
        if i != last {
            return Ok(c);
        }
        Ok(AnyController::boxed(Wrapped::new(
            c,
            Kick {
                at,
                mode,
                after: false,
                stretched: None,
                shifted: false,
            },
        )))
    };
    let (res, log) = Simulation::with_factory(&sc, &mut factory)
        .expect("builds")
        .run();
    support::write_link_csv(&format!("{out}.link.csv"), &res);
    if let Some(log) = log {
        let mut w =
            std::io::BufWriter::new(std::fs::File::create(format!("{out}.packets.csv")).unwrap());
        writeln!(w, "t_ns,event,flow,seq").unwrap();
        const NAMES: [&str; 4] = ["opportunity", "arrival", "departure", "drop"];
        for i in (0..log.len()).filter(|&i| log.time_ns[i] >= log_from) {
            writeln!(
                w,
                "{},{},{},{}",
                log.time_ns[i], NAMES[log.event[i] as usize], log.flow[i], log.seq[i]
            )
            .unwrap();
        }
    }
}
