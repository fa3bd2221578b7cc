//! Record the events a Copa flow's controller sees in a simulation as a replayable script, for the
//! differential test against genericCC (experiments/copa_reference/README.md):
//! `cargo run --release -p ccscope-sim --example copa_script -- <trace> <seconds> [cubic|alone] [ctcp|reliable] > script.txt`.
//! Copa runs on its registry transport (datagrams in `ctcp` mode, genericCC's own sender loop
//! ctcp.hh, where `T t` is its restart after 2 s without an ACK) unless `reliable` puts it on the
//! reliable transport (where `T t` is an RTO).
//! Copa's data crosses `<trace>` (20 ms one way, a 500-packet droptail buffer) and its ACKs an
//! uncongested 100 Mbit/s 20 ms link, the setup of tests/schemes.rs; `cubic` adds one Cubic flow from
//! the same start (the competitive-mode run). `<trace>` may also be `12mbps` (the schemes.rs constant
//! link, 400-packet buffer).
//!
//! Script lines (times in ns): `S t id` a transmission left (each transmission, retransmissions too,
//! gets the next id, as genericCC numbers every datagram); `A t id rtt` its ACK came back; `T t` the
//! retransmission timer fired. Losses are not written: genericCC's controller infers them itself from
//! a gap in the ACKed ids, and the replay on both sides does the same.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use ccscope_cc::wrap::{Hooks, Wrapped};
use ccscope_cc::{AckEvent, AnyController, Controller, SendEvent};
use ccscope_core::Time;
use ccscope_sim::{load_scenario, Simulation};

/// Around the flow's controller: writes each event it gets.
struct Recorder {
    lines: Arc<Mutex<Vec<String>>>,
    /// The id of the latest transmission of each sequence number.
    ids: HashMap<u64, u64>,
    next_id: u64,
}

impl Recorder {
    fn log(&self, line: String) {
        self.lines.lock().expect("recorder lock").push(line);
    }
}

impl Hooks<AnyController> for Recorder {
    fn on_send(&mut self, inner: &mut AnyController, now: Time, ev: &SendEvent) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.ids.insert(ev.seq, id);
        self.log(format!("S {} {id}", now.as_ns()));
        inner.on_send(now, ev)
    }
    fn on_ack(&mut self, inner: &mut AnyController, now: Time, ev: &AckEvent) {
        if let Some(&id) = self.ids.get(&ev.seq) {
            self.log(format!("A {} {id} {}", now.as_ns(), ev.rtt.as_ns()));
        }
        inner.on_ack(now, ev)
    }
    fn on_rto(&mut self, inner: &mut AnyController, now: Time) {
        self.log(format!("T {}", now.as_ns()));
        inner.on_rto(now)
    }
    fn on_rto_repeated(&mut self, inner: &mut AnyController, now: Time) {
        self.log(format!("T {}", now.as_ns()));
        inner.on_rto_repeated(now)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let trace = args
        .get(1)
        .map_or("TMobile-LTE-driving.down", |s| s.as_str());
    let seconds: f64 = args.get(2).map_or(30.0, |s| s.parse().expect("seconds"));
    let cubic = args.get(3).is_some_and(|s| s == "cubic");
    let sender_arg = args.get(4).map_or("", |s| s.as_str());
    let sender = match sender_arg {
        "ctcp" => "transport = \"datagram\"\ndatagram_mode = \"ctcp\"\n",
        "reliable" => "transport = \"reliable\"\n",
        "" => "",
        other => panic!("sender `{other}`: ctcp or reliable"),
    };
    let data_link = if trace == "12mbps" {
        "rate_mbps = 12\ndelay_ms = 20\nqueue = { kind = \"droptail\", packets = 400 }".to_string()
    } else {
        format!(
            "trace = \"{trace}\"\ndelay_ms = 20\nqueue = {{ kind = \"droptail\", packets = 500 }}"
        )
    };
    let competitor = if cubic {
        "\n[[flows]]\ncontroller = \"cubic\"\n"
    } else {
        ""
    };
    let text = format!(
        "seed = 1\nduration_s = {seconds}\n\n[data_link]\n{data_link}\n\n[ack_link]\nrate_mbps = 100\ndelay_ms = 20\n\n[[flows]]\ncontroller = \"copa\"\n{sender}{competitor}"
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dirs = [
        root.join("../../python/ccscope/data/traces"),
        root.join("../../../shared/traces"),
    ];
    let sc = load_scenario(&text, None, &dirs).unwrap_or_else(|e| panic!("{e}"));
    let lines = Arc::new(Mutex::new(Vec::new()));
    let mut first = true;
    let sim = Simulation::with_factory(&sc, &mut |_, f| {
        let cc = ccscope_cc::build(&f.controller, &f.params)?;
        if f.controller != "copa" || !std::mem::take(&mut first) {
            return Ok(cc);
        }
        Ok(AnyController::boxed(Wrapped::new(
            cc,
            Recorder {
                lines: Arc::clone(&lines),
                ids: HashMap::new(),
                next_id: 0,
            },
        )))
    })
    .expect("scenario builds");
    let (r, _) = sim.run();
    println!(
        "# copa script: {trace}, {seconds} s, competitor: {}, sender: {}",
        if cubic { "cubic" } else { "none" },
        if sender_arg.is_empty() {
            "registry default"
        } else {
            sender_arg
        }
    );
    for f in &r.flows {
        println!("# flow {}: {:.3} Mbit/s", f.controller, f.throughput_mbps);
    }
    for l in lines.lock().expect("recorder lock").iter() {
        println!("{l}");
    }
}
