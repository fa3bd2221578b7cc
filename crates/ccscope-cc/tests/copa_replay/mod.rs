//! Replay a Copa event script (crates/ccscope-sim/examples/copa_script.rs writes one) through
//! `ccscope_cc::delay::copa::Copa` with genericCC's sender semantics, printing its decisions in the
//! format experiments/copa_reference/reference_harness.cc prints genericCC's.
//!
//! genericCC's controller learns of a loss only inside `onACK`, when the ACKed id jumps over ids still
//! unacknowledged (markoviancc.cc onACK); so here every such id is reported with `on_loss` just before
//! the `on_ack` that reveals it, in the order ccscope's reliable transport reports losses and ACKs.

use std::collections::BTreeMap;

use ccscope_cc::delay::copa::{Copa, Mode, Params};
use ccscope_cc::{AckEvent, Controller, LossCause, LossEvent, SendEvent};
use ccscope_core::{Dur, Time};

/// One decision line: (line, kind, cwnd, delta, mode, slow start, velocity, intersend ms).
pub type Decision = (u64, char, f64, f64, u8, u8, f64, f64);

/// Replay `script` through a default Copa and return its decision after every event.
pub fn replay(script: &str) -> Vec<Decision> {
    let mut cc = Copa::new(Params::default());
    let mut outstanding: BTreeMap<u64, Time> = BTreeMap::new();
    let mut out = Vec::new();
    for (i, text) in script.lines().enumerate() {
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let mut f = text.split_whitespace();
        let kind = f.next().and_then(|k| k.chars().next()).expect("event kind");
        let mut num = || -> u64 { f.next().expect("field").parse().expect("integer") };
        let now = Time(num());
        match kind {
            'S' => {
                let id = num();
                let ev = SendEvent {
                    seq: id,
                    bytes: 1500,
                    in_flight: outstanding.len() as u32 + 1,
                    after_timeout: false,
                    retransmission: false,
                    app_limited: false,
                };
                cc.on_send(now, &ev);
                outstanding.insert(id, now);
            }
            'A' => {
                let (id, rtt) = (num(), Dur(num()));
                // markoviancc.cc onACK: only an ACK of a packet still unacknowledged reveals losses.
                if outstanding.contains_key(&id) {
                    let lost: Vec<(u64, Time)> =
                        outstanding.range(..id).map(|(&k, &t)| (k, t)).collect();
                    for (seq, sent) in lost {
                        outstanding.remove(&seq);
                        let ev = LossEvent {
                            seq,
                            bytes: 1500,
                            send_time: sent,
                            in_flight: outstanding.len() as u32,
                            cause: LossCause::Reordering,
                            tag: 0,
                        };
                        cc.on_loss(now, &ev);
                    }
                }
                outstanding.remove(&id);
                let ev = AckEvent {
                    seq: id,
                    bytes: 1500,
                    send_time: Time(now.0 - rtt.0),
                    recv_time: Time(now.0 - rtt.0 / 2),
                    rtt,
                    ca_rtt: rtt,
                    in_flight: outstanding.len() as u32,
                    last_sent_seq: outstanding.keys().next_back().copied().unwrap_or(id),
                    tag: 0,
                    newly_acked: 1,
                    snd_una_advanced: true,
                    in_recovery: false,
                    rate: None,
                    host_bytes: None,
                };
                cc.on_ack(now, &ev);
            }
            'T' => {
                let restarts = |cc: &Copa| {
                    cc.counters()
                        .iter()
                        .find(|c| c.0 == "restarts")
                        .map_or(0, |c| c.1)
                };
                let before = restarts(&cc);
                cc.on_rto(now);
                // markoviancc.cc init() clears unacknowledged_packets: no later gap reaches back past it.
                if restarts(&cc) > before {
                    outstanding.clear();
                }
            }
            k => panic!("line {}: unknown event {k:?}", i + 1),
        }
        let intersend_ms = cc.intersend_s() * 1e3;
        out.push((
            i as u64 + 1,
            kind,
            cc.cwnd_f64(),
            cc.delta(),
            u8::from(cc.mode() == Mode::Competitive),
            u8::from(cc.in_slow_start()),
            cc.velocity(),
            intersend_ms,
        ));
    }
    out
}

/// The harness's text form of a decision.
#[allow(dead_code)]
pub fn format(d: &Decision) -> String {
    format!(
        "{} {} {:?} {:?} {} {} {:?} {:?}",
        d.0, d.1, d.2, d.3, d.4, d.5, d.6, d.7
    )
}

/// Parse one line the reference harness printed.
#[allow(dead_code)]
pub fn parse(line: &str) -> Decision {
    let f: Vec<&str> = line.split_whitespace().collect();
    let n = |k: usize| -> f64 { f[k].parse().expect("number") };
    (
        f[0].parse().expect("line"),
        f[1].chars().next().expect("kind"),
        n(2),
        n(3),
        f[4].parse().expect("mode"),
        f[5].parse().expect("slow start"),
        n(6),
        n(7),
    )
}
