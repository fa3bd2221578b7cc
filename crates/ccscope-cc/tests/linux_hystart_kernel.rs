//! Linux 6.18's Cubic leaving slow start through a real `mm-delay 20 mm-link` (12 Mbit/s, 100-packet
//! drop-tail queue), traced ACK by ACK from the kernel's own tracepoints (tcp_probe, net_dev_start_xmit;
//! experiments/mahimahi/trace_tcp.sh and hystart_trace.py, data/linux_hystart/README.md), replayed through
//! ccscope's Cubic with `hystart = "linux"`: before every ACK the same window, and slow start ends at the
//! same ACK with the same ssthresh. Of six runs, two ended by the ACK train at 103 packets and four by the
//! delay test at 168 (README.md there): which one fires depends on whether an ACK covering two packets
//! (2.2 ms after the one before it on the emulated link, over `hystart_ack_delta_us`) breaks the train.

use ccscope_cc::window::cubic::{Cubic, Params};
use ccscope_cc::{AckEvent, Controller, SendEvent};
use ccscope_core::Time;

const MSS: u32 = 1448;
/// tcp_probe's `ssthresh` before slow start ends: TCP_INFINITE_SSTHRESH.
const INFINITE_SSTHRESH: u64 = 0x7fff_ffff;

enum Row {
    Send {
        t: Time,
        packet: u64,
    },
    /// The state tcp_probe saw before the ACK: SND.UNA and SND.NXT in packets, snd_cwnd, snd_ssthresh.
    Ack {
        t: Time,
        una: u64,
        nxt: u64,
        cwnd: u64,
        ssthresh: u64,
    },
}

fn parse(text: &str) -> Vec<Row> {
    text.lines()
        .skip(1)
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            let n = |i: usize| -> u64 { f[i].parse().expect("a number") };
            let t = Time(n(1) * 1000);
            match f[0] {
                "send" => Row::Send { t, packet: n(2) },
                "ack" => Row::Ack {
                    t,
                    una: n(2),
                    nxt: n(3),
                    cwnd: n(4),
                    ssthresh: n(5),
                },
                other => panic!("unknown row {other}"),
            }
        })
        .collect()
}

/// Replays a run; returns (index of the ACK that ended slow start, ssthresh it set).
fn replay(text: &str) -> (usize, u64) {
    let rows = parse(text);
    let mut cc = Cubic::new(Params {
        hystart: ccscope_cc::common::hystart::Flavour::Linux,
        ..Default::default()
    });
    let mut sent: Vec<Time> = Vec::new();
    let acks: Vec<(Time, u64, u64, u64, u64)> = rows
        .iter()
        .filter_map(|r| match *r {
            Row::Ack {
                t,
                una,
                nxt,
                cwnd,
                ssthresh,
            } => Some((t, una, nxt, cwnd, ssthresh)),
            Row::Send { .. } => None,
        })
        .collect();
    let mut k = 0;
    let mut exit = None;
    for row in &rows {
        match *row {
            Row::Send { t, packet } => {
                assert_eq!(packet, sent.len() as u64);
                sent.push(t);
                let ev = SendEvent {
                    seq: packet,
                    bytes: MSS,
                    in_flight: 1,
                    after_timeout: false,
                    retransmission: false,
                    app_limited: false,
                };
                cc.on_send(t, &ev);
            }
            Row::Ack {
                t,
                una,
                nxt,
                cwnd,
                ssthresh,
            } => {
                // The kernel's state before this ACK is ours after the previous one.
                assert_eq!(cc.cwnd() as u64, cwnd, "cwnd before ACK {k}");
                let ours = cc.ssthresh() as u64;
                if ssthresh == INFINITE_SSTHRESH {
                    assert!(
                        ours >= INFINITE_SSTHRESH,
                        "ssthresh {ours} set before ACK {k}"
                    );
                } else {
                    // The kernel set it at the previous ACK: done.
                    assert_eq!(ours, ssthresh, "ssthresh before ACK {k}");
                    exit = Some((k - 1, ssthresh));
                    break;
                }
                // This ACK acknowledged up to the next one's SND.UNA.
                let acked_to = acks.get(k + 1).expect("an ACK after it").1;
                if acked_to > una {
                    // It echoes the first packet it acknowledges (RFC 7323 §4.3).
                    let first = sent[una as usize];
                    let ev = AckEvent {
                        seq: una,
                        bytes: MSS,
                        send_time: first,
                        recv_time: t,
                        rtt: t - first,
                        // Linux's ca_rtt_us: the newest packet it acknowledges (none resent here).
                        ca_rtt: t - sent[acked_to as usize - 1],
                        in_flight: (nxt - acked_to) as u32,
                        last_sent_seq: nxt - 1,
                        tag: 0,
                        newly_acked: (acked_to - una) as u32,
                        snd_una_advanced: true,
                        in_recovery: false,
                        rate: None,
                        host_bytes: None,
                    };
                    cc.on_ack(t, &ev);
                }
                k += 1;
            }
        }
    }
    exit.expect("slow start ended in the trace")
}

macro_rules! run {
    ($r:literal) => {
        include_str!(concat!(
            "data/linux_hystart/cubic-const12-q100-r",
            $r,
            ".csv"
        ))
    };
}

#[test]
fn linux_cubic_leaves_slow_start_at_the_kernels_ack_by_the_ack_train() {
    // Round 4's ACKs all covered one packet (~1.1 ms apart) past (delay_min + 1 ms) / 2.
    assert_eq!(replay(run!("1")), (84, 103));
    assert_eq!(replay(run!("6")), (84, 103));
}

#[test]
fn linux_cubic_leaves_slow_start_at_the_kernels_ack_by_the_delay_test() {
    // The train broken by two-packet ACKs, the round's minimum RTT rose past delay_min + 5.2 ms.
    assert_eq!(replay(run!("2")), (143, 168));
    assert_eq!(replay(run!("3")), (135, 168));
    assert_eq!(replay(run!("4")), (144, 168));
    assert_eq!(replay(run!("5")), (144, 168));
}
