//! The reliable transport end to end: every byte arrives exactly once in order despite loss,
//! retransmissions repair drops, the RTO fires when a whole window is lost, and packets are conserved.

use ccscope_sim::{load_scenario, RunResult, Simulation};

fn run(text: &str) -> RunResult {
    let sc = load_scenario(text, None, &[]).unwrap();
    Simulation::new(&sc).unwrap().run().0
}

fn scenario(loss: &str, flow: &str) -> String {
    format!(
        "duration_s = 30\n[data_link]\nrate_mbps = 10\ndelay_ms = 20\nqueue = {{ kind = \"droptail\", packets = 50 }}\nloss = {loss}\n\
         [ack_link]\nrate_mbps = 10\ndelay_ms = 20\n[[flows]]\n{flow}\n"
    )
}

/// `duration_s` over the 12 Mbit/s, 20 ms example link each way, `link` keys on the data link, one flow.
fn link12(duration_s: u32, link: &str, flow: &str) -> String {
    format!(
        "seed = 1\nduration_s = {duration_s}\n[data_link]\nrate_mbps = 12\ndelay_ms = 20\n{link}\n\
         [ack_link]\nrate_mbps = 12\ndelay_ms = 20\n[[flows]]\n{flow}\n"
    )
}

/// Flow 0's counter `name`, if it keeps one.
fn counter(r: &RunResult, name: &str) -> Option<u64> {
    r.flows[0]
        .counters
        .iter()
        .find(|(n, _)| *n == name)
        .map(|c| c.1)
}

fn conserved(r: &RunResult) {
    assert_eq!(r.conservation_violations(), Vec::<String>::new());
}

#[test]
fn a_finite_transfer_arrives_completely_despite_random_loss() {
    // 2 MB in 1500-byte packets = 1334 packets, 5% loss each way of the data link.
    let r = run(&scenario(
        "{ kind = \"bernoulli\", p = 0.05 }",
        "controller = \"fixed\"\nwindow = 20\ntransport = \"reliable\"\ntransfers_bytes = [2000000]",
    ));
    conserved(&r);
    let f = &r.flows[0];
    assert!(f.dropped > 30, "expected losses, got {}", f.dropped);
    assert!(
        f.retransmissions >= f.dropped,
        "every drop is repaired: {} retx for {} drops",
        f.retransmissions,
        f.dropped
    );
    // Goodput counts each packet once: exactly the transfer.
    let goodput_bytes = (f.goodput_mbps * 1e6 / 8.0 * f.duration_s).round() as u64;
    assert!(
        (goodput_bytes as i64 - 1334 * 1500).abs() <= 1500,
        "goodput bytes {goodput_bytes}"
    );
    assert_eq!(f.in_flight, 0);
}

#[test]
fn bulk_transfer_over_a_lossless_link_never_retransmits() {
    let r = run(&scenario(
        "{ kind = \"none\" }",
        "controller = \"fixed\"\nwindow = 40\ntransport = \"reliable\"",
    ));
    conserved(&r);
    assert_eq!(r.flows[0].retransmissions, 0);
    assert_eq!(r.flows[0].declared_lost, 0);
    assert!(r.flows[0].throughput_mbps > 9.0);
}

#[test]
fn overflowing_a_droptail_buffer_is_repaired_by_fast_retransmit() {
    // A fixed window far above BDP + buffer (33 + 50 packets) overflows the queue all the time.
    let r = run(&scenario("{ kind = \"none\" }", "controller = \"fixed\"\nwindow = 200\ntransport = \"reliable\"\ntransfers_bytes = [3000000]"));
    conserved(&r);
    let f = &r.flows[0];
    assert!(f.dropped > 0);
    let goodput_bytes = (f.goodput_mbps * 1e6 / 8.0 * f.duration_s).round() as u64;
    assert!(
        (goodput_bytes as i64 - 2000 * 1500).abs() <= 1500,
        "goodput bytes {goodput_bytes}"
    );
}

#[test]
fn transfers_run_one_after_another_with_think_time() {
    let r = run(&scenario(
        "{ kind = \"none\" }",
        "controller = \"fixed\"\nwindow = 10\ntransport = \"reliable\"\ntransfers_bytes = [150000, 150000, 150000]\nthink_s = 2",
    ));
    conserved(&r);
    let f = &r.flows[0];
    assert_eq!(f.delivered, 300);
    // Three transfers and two 2 s pauses: the flow is busy > 4 s.
    assert!(f.duration_s > 4.0, "duration {}", f.duration_s);
}

/// Four NewReno flows through a 50-packet drop-tail queue, with `extra` flow keys.
fn four_newreno(extra: &str) -> String {
    scenario(
        "{ kind = \"none\" }",
        &format!("controller = \"newreno\"\ncount = 4\nstart_jitter_s = 1\n{extra}"),
    )
}

#[test]
fn a_zero_send_overhead_moves_no_result() {
    assert_eq!(
        format!("{:?}", run(&four_newreno("send_overhead_ms = 0"))),
        format!("{:?}", run(&four_newreno("")))
    );
}

#[test]
fn a_send_overhead_run_is_reproducible_conserves_packets_and_differs_from_none() {
    let text = four_newreno("send_overhead_ms = 1.2");
    let (a, b) = (run(&text), run(&text));
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    conserved(&a);
    let none = run(&four_newreno(""));
    assert_ne!(format!("{:?}", a.flows), format!("{:?}", none.flows));
    // The waits (0.6 ms on average per send) barely slow four flows on a 40 ms path.
    let (with, without) = (a.total.delivered as f64, none.total.delivered as f64);
    assert!(with > 0.9 * without, "{with} against {without} packets");
}

#[test]
fn the_same_seed_reproduces_a_lossy_reliable_run_exactly() {
    let text = scenario(
        "{ kind = \"gilbert_elliott\", p_gb = 0.01, p_bg = 0.3 }",
        "controller = \"fixed\"\nwindow = 25\ntransport = \"reliable\"",
    );
    assert_eq!(
        format!("{:?}", run(&text).flows),
        format!("{:?}", run(&text).flows)
    );
}

fn cwnd_trace(controller: &str, drops: &str, secs: u32) -> (RunResult, Vec<(f64, u32)>) {
    cwnd_trace_with(controller, drops, secs, "")
}

fn cwnd_trace_with(
    controller: &str,
    drops: &str,
    secs: u32,
    extra: &str,
) -> (RunResult, Vec<(f64, u32)>) {
    let text = format!(
        "duration_s = {secs}\ncwnd_log = true\n[data_link]\nrate_mbps = 12\ndelay_ms = 20\n\
         queue = {{ kind = \"droptail\", packets = 1000 }}\nloss = {{ kind = \"list\", packets = [{drops}] }}\n\
         [ack_link]\nrate_mbps = 12\ndelay_ms = 20\n[[flows]]\ncontroller = \"{controller}\"\n{extra}\n"
    );
    let r = run(&text);
    let trace = r
        .cwnd
        .iter()
        .map(|&(t, _, w)| (t as f64 / 1e6, w))
        .collect();
    (r, trace)
}

#[test]
fn newreno_one_loss_halves_the_flight_once_then_grows_one_packet_per_rtt() {
    // Packet 60 is lost in the third round of slow start (rounds of 10, 20, 40 packets).
    let (r, tr) = cwnd_trace("newreno", "60", 3);
    conserved(&r);
    assert_eq!((r.total.retransmissions, r.total.rtos), (1, 0));
    let w: Vec<u32> = tr.iter().map(|x| x.1).collect();
    // Slow start from the initial window of 10 (RFC 6928), one packet per packet cumulatively ACKed
    // (ACKs 1-59); the duplicate ACKs that SACK 61 and 62 do not grow it (RFC 5681 §3.1).
    assert_eq!(w[..61], (10..=70).collect::<Vec<_>>()[..]);
    // Third duplicate ACK with 69 in the pipe (70 outstanding, each SACK let one more out, 3 SACKed):
    // ssthresh = cwnd = 69 / 2 (RFC 5681 eq. 4 on the RFC 6675 pipe), once.
    assert_eq!(w[61], 34);
    // No growth during recovery; after the retransmission is ACKed, +1 per round trip (~42 ms).
    let exit = tr[62].0;
    assert!(
        exit - tr[61].0 > 80.0,
        "recovery lasted {} ms",
        exit - tr[61].0
    );
    assert_eq!(w[62..68], [35, 36, 37, 38, 39, 40]);
    for pair in tr[62..78].windows(2) {
        let gap = pair[1].0 - pair[0].0;
        assert!((40.0..=60.0).contains(&gap), "CA step after {gap} ms");
    }
}

#[test]
fn newreno_rto_after_a_tail_loss_restarts_slow_start_from_one_packet() {
    // A 100-packet transfer whose last five packets are lost: no later packet can produce
    // duplicate ACKs, so only the retransmission timer (RFC 6298, 1 s minimum) recovers them.
    let (r, tr) = cwnd_trace_with(
        "newreno",
        "95, 96, 97, 98, 99",
        5,
        "transfers_bytes = [150000]",
    );
    conserved(&r);
    assert_eq!(r.total.rtos, 1);
    assert_eq!(r.flows[0].delivered, 100);
    let i = tr
        .iter()
        .position(|x| x.1 == 1)
        .expect("cwnd fell to 1 on the RTO");
    // The timer fired about 1 s (the minimum RTO) after the last new ACK.
    assert!(tr[i].0 > 1000.0, "RTO at {} ms", tr[i].0);
    // RFC 5681 §3.1: ssthresh = max(5 in flight / 2, 2) = 2, cwnd = 1. Slow start to 2 on the first
    // ACK, then congestion avoidance: +1 after a window (2) of ACKs; the five ACKs end at 3.
    let after: Vec<u32> = tr[i..].iter().map(|x| x.1).collect();
    assert_eq!(after, [1, 2, 3]);
}

#[test]
fn cubic_window_follows_the_cubic_function_between_losses() {
    // One Cubic flow, 100 Mbit/s, 100 ms RTT (BDP 833 packets), 400-packet droptail buffer: losses
    // come only from buffer overflow, every ~10 s. RFC 9438 §4.2: W(t) = C (t - K)^3 + W_max with
    // K = cbrt((W_max - cwnd_epoch) / C), C = 0.4, t from the start of congestion avoidance.
    let text = "duration_s = 60\ncwnd_log = true\n[data_link]\nrate_mbps = 100\ndelay_ms = 50\n\
                queue = { kind = \"droptail\", packets = 400 }\n[ack_link]\nrate_mbps = 100\ndelay_ms = 50\n\
                [[flows]]\ncontroller = \"cubic\"\n";
    let r = run(text);
    conserved(&r);
    let tr: Vec<(f64, f64)> = r
        .cwnd
        .iter()
        .map(|&(t, _, w)| (t as f64 / 1e9, w as f64))
        .collect();
    // Reductions: a drop of more than 20% between consecutive samples.
    let cuts: Vec<usize> = (1..tr.len())
        .filter(|&i| tr[i].1 < 0.8 * tr[i - 1].1)
        .collect();
    assert!(
        cuts.len() >= 3,
        "expected several loss epochs, got {}",
        cuts.len()
    );
    let mut checked = 0;
    for k in 1..cuts.len() - 1 {
        let (i, next) = (cuts[k], cuts[k + 1]);
        let (w_before, w_epoch) = (tr[i - 1].1, tr[i].1);
        // Only stages begun by a fast-recovery reduction to beta = 0.7 that grow before the next cut:
        // the slow start's overshoot (about 850 packets lost in one window) ends in a timeout.
        if (w_epoch / w_before - 0.7).abs() > 0.01 || tr[i + 1].1 <= w_epoch {
            continue;
        }
        // Congestion avoidance starts at the first increase after the reduction (recovery exit).
        let t0 = tr[i + 1].0;
        // W_max is the window at the loss, or lower with fast convergence (RFC 9438 §4.7).
        let best = [w_before, w_before * (1.0 + 0.7) / 2.0]
            .iter()
            .map(|&w_max| {
                let k_s = ((w_max - w_epoch) / 0.4).cbrt();
                tr[i + 1..next]
                    .iter()
                    .filter(|p| p.0 - t0 > 0.5)
                    .map(|&(t, w)| {
                        let model = 0.4 * (t - t0 - k_s).powi(3) + w_max;
                        ((w - model) / model).abs()
                    })
                    .fold(0.0f64, f64::max)
            })
            .fold(f64::MAX, f64::min);
        eprintln!("epoch {k}: worst relative error {best:.5}");
        assert!(best < 0.01, "epoch {k}: worst relative error {best:.4}");
        checked += 1;
    }
    assert!(checked >= 3, "{checked} stages checked");
}

/// The ns-3 dumbbell (12 Mbit/s, 20 ms, 1000-packet droptail) with one Cubic flow for 60 s.
fn deep_buffer_cubic(estimator: &str) -> RunResult {
    run(&format!(
        "duration_s = 60\n[data_link]\nrate_mbps = 12\ndelay_ms = 20\nqueue = {{ kind = \"droptail\", packets = 1000 }}\n\
         [ack_link]\nrate_mbps = 12\ndelay_ms = 20\n[[flows]]\ncontroller = \"cubic\"\npacket_bytes = 1500\nack_bytes = 52\n\
         rto_estimator = \"{estimator}\"\n"
    ))
}

#[test]
fn linux_rto_spares_the_spurious_timeouts_rfc6298_takes_behind_a_full_queue() {
    // Behind a full 1000-packet queue the fast retransmission waits ~1 s, about SRTT: RFC 6298's
    // RTO (SRTT + 4 RTTVAR, with RTTVAR near 0 on a steady RTT) expires first and the sender resends
    // a queue's worth of packets that were not lost. Linux's RTTVAR never falls below tcp_rto_min.
    let rfc = deep_buffer_cubic("rfc6298");
    let linux = deep_buffer_cubic("linux");
    conserved(&rfc);
    conserved(&linux);
    let (r, l) = (&rfc.flows[0], &linux.flows[0]);
    assert!(r.rtos >= 2, "RFC 6298 timeouts: {}", r.rtos);
    assert_eq!(l.rtos, 0, "Linux timeouts");
    // Spurious timeouts resend what was queued: many more retransmissions than drops.
    assert!(
        r.retransmissions > 3 * r.dropped,
        "{} retx, {} drops",
        r.retransmissions,
        r.dropped
    );
    assert!(
        l.retransmissions <= l.dropped + 10,
        "{} retx, {} drops",
        l.retransmissions,
        l.dropped
    );
    assert!(
        l.goodput_mbps > r.goodput_mbps * 1.03,
        "{} vs {}",
        l.goodput_mbps,
        r.goodput_mbps
    );
}

#[test]
fn an_unknown_rto_estimator_is_refused_naming_the_field() {
    let e = load_scenario(
        "duration_s = 1\n[data_link]\nrate_mbps = 12\n[ack_link]\nrate_mbps = 12\n[[flows]]\ncontroller = \"cubic\"\nrto_estimator = \"bsd\"\n",
        None,
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("rto_estimator") && e.contains("linux"), "{e}");
}

/// A Mahimahi trace of one opportunity per millisecond (12 Mbit/s) for 20 s with no opportunity in
/// [5 s, 7.5 s): a cellular outage that holds packets in the queue without losing them (the flow is
/// held to 200 packets by its receive window, so the 1000-packet queue never overflows).
fn outage_trace(tag: &str) -> std::path::PathBuf {
    let path =
        std::env::temp_dir().join(format!("ccscope-outage-{tag}-{}.trace", std::process::id()));
    let lines: Vec<String> = (1..=20_000u32)
        .filter(|ms| !(5_000..7_500).contains(ms))
        .map(|ms| ms.to_string())
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn outage_run(trace: &std::path::Path, frto: bool) -> RunResult {
    outage_run_of("newreno", "stack = \"linux\"", trace, frto)
}

fn outage_run_of(cc: &str, stack: &str, trace: &std::path::Path, frto: bool) -> RunResult {
    run(&format!(
        "duration_s = 20\n[data_link]\ntrace = \"{}\"\ndelay_ms = 20\nqueue = {{ kind = \"droptail\", packets = 1000 }}\n\
         [ack_link]\nrate_mbps = 12\ndelay_ms = 20\n[[flows]]\ncontroller = \"{cc}\"\n{stack}\nrbuf_bytes = 300000\nfrto = {frto}\n",
        trace.display()
    ))
}

#[test]
fn frto_undoes_the_timeout_an_outage_causes_and_spares_the_go_back_n() {
    let trace = outage_trace("newreno");
    let (on, off) = (outage_run(&trace, true), outage_run(&trace, false));
    std::fs::remove_file(&trace).ok();
    conserved(&on);
    conserved(&off);
    let (a, b) = (&on.flows[0], &off.flows[0]);
    let spurious = |f: &ccscope_sim::FlowSummary| {
        f.counters
            .iter()
            .find(|c| c.0 == "spurious_rtos")
            .map(|c| c.1)
    };
    assert!(
        a.rtos >= 1 && b.rtos >= 1,
        "the outage outlasts the RTO: {} / {}",
        a.rtos,
        b.rtos
    );
    // One undo for the outage's episode, however many backed-off timeouts it took (Linux counts
    // TCPSpuriousRTOs once per undo).
    assert_eq!(spurious(a), Some(1), "{} timeouts", a.rtos);
    assert_eq!(spurious(b), None, "the counter appears only with F-RTO on");
    // Nothing was lost in the outage: with F-RTO only the timeouts' own packets and the Linux
    // stack's tail loss probe (sent 2 SRTT into the outage, before the RTO) are resent; without it
    // the window held in the queue is resent too.
    assert_eq!((a.dropped, b.dropped), (0, 0));
    let probes = a
        .counters
        .iter()
        .find(|c| c.0 == "tlp_probes")
        .map_or(0, |c| c.1);
    assert_eq!(probes, 1);
    assert!(
        a.retransmissions <= a.rtos + probes,
        "{} retx",
        a.retransmissions
    );
    assert!(b.retransmissions > 100, "{} retx", b.retransmissions);
    assert!(
        a.goodput_mbps > b.goodput_mbps,
        "{} vs {}",
        a.goodput_mbps,
        b.goodput_mbps
    );
}

#[test]
fn every_loss_recovery_switch_delivers_a_lossy_transfer_completely_and_conserves_packets() {
    // 1334 packets through 5% random loss and a 50-packet droptail queue, NewReno and Cubic.
    for cc in ["newreno", "cubic"] {
        for switches in [
            "stack = \"linux\"",
            "stack = \"ns3\"",
            "limited_transmit = true",
            "prr = true",
            "rack = true",
            "tlp = true",
            "rack = true\ntlp = true\ndsack = true",
        ] {
            let r = run(&scenario(
                "{ kind = \"bernoulli\", p = 0.05 }",
                &format!("controller = \"{cc}\"\ntransfers_bytes = [2000000]\n{switches}"),
            ));
            conserved(&r);
            let f = &r.flows[0];
            assert!(f.retransmissions >= f.dropped, "{cc} {switches}");
            assert_eq!(f.goodput_bytes, 1334 * 1500, "{cc} {switches}");
            assert_eq!((f.in_flight, f.transfers_done), (0, 1), "{cc} {switches}");
        }
    }
}

/// Short transfers (20 packets, 0.2 s apart) through 2% random loss: most losses are tail losses
/// that no later packet reveals (RFC 8985 §1).
fn short_transfers(switches: &str) -> RunResult {
    run(&format!(
        "duration_s = 120\nseed = 3\n[data_link]\nrate_mbps = 10\ndelay_ms = 20\nqueue = {{ kind = \"droptail\", packets = 100 }}\n\
         loss = {{ kind = \"bernoulli\", p = 0.02 }}\n[ack_link]\nrate_mbps = 10\ndelay_ms = 20\n\
         [[flows]]\ncontroller = \"newreno\"\ntransfers_bytes = [{}]\nthink_s = 0.2\n{switches}\n",
        vec!["30000"; 400].join(", ")
    ))
}

#[test]
fn rack_tlp_repairs_the_tail_losses_of_short_transfers_without_waiting_for_timeouts() {
    let plain = short_transfers("");
    let racktlp = short_transfers("rack = true\ntlp = true");
    conserved(&plain);
    conserved(&racktlp);
    let (a, b) = (&plain.flows[0], &racktlp.flows[0]);
    let counter =
        |f: &ccscope_sim::FlowSummary, n: &str| f.counters.iter().find(|c| c.0 == n).map(|c| c.1);
    // RFC 8985 §7: the probe turns most timeouts into fast recoveries.
    assert!(
        b.rtos * 2 < a.rtos,
        "RTOs {} with RACK-TLP vs {}",
        b.rtos,
        a.rtos
    );
    assert!(counter(b, "tlp_probes").is_some_and(|p| p > 0));
    assert!(
        b.fct_mean_s < a.fct_mean_s,
        "{:?} vs {:?}",
        b.fct_mean_s,
        a.fct_mean_s
    );
    assert!(b.transfers_done >= a.transfers_done);
}

#[test]
fn frto_cuts_cubics_spurious_retransmissions_after_an_outage() {
    // Issue 13: Cubic on the outage trace, RFC defaults with F-RTO off and on. Nothing is dropped,
    // so every retransmission is spurious (measured: 674 -> 2, 9.41 -> 10.48 Mbit/s).
    let trace = outage_trace("cubic");
    let (on, off) = (
        outage_run_of("cubic", "", &trace, true),
        outage_run_of("cubic", "", &trace, false),
    );
    std::fs::remove_file(&trace).ok();
    let (a, b) = (&on.flows[0], &off.flows[0]);
    assert_eq!((a.dropped, b.dropped), (0, 0));
    assert!(a.retransmissions <= a.rtos, "{} retx", a.retransmissions);
    assert!(
        b.retransmissions > 100 * a.retransmissions.max(1),
        "{} vs {}",
        b.retransmissions,
        a.retransmissions
    );
    assert!(a.goodput_mbps > b.goodput_mbps);
}

#[test]
fn with_ns3_delayed_acks_about_one_ack_goes_per_two_packets_and_every_byte_arrives() {
    for stack in ["ns3", "linux"] {
        let r = run(&scenario(
            "{ kind = \"bernoulli\", p = 0.01 }",
            &format!("controller = \"newreno\"\nstack = \"{stack}\"\ntransfers_bytes = [3000000]"),
        ));
        conserved(&r);
        let f = &r.flows[0];
        assert!(
            f.dropped > 10,
            "{stack}: expected losses, got {}",
            f.dropped
        );
        let goodput_bytes = (f.goodput_mbps * 1e6 / 8.0 * f.duration_s).round() as u64;
        assert!(
            (goodput_bytes as i64 - 2000 * 1500).abs() <= 1500,
            "{stack}: goodput bytes {goodput_bytes}"
        );
        assert_eq!(f.in_flight, 0, "{stack}");
    }
    let bulk = |stack: &str| {
        let r = run(&scenario(
            "{ kind = \"none\" }",
            &format!("controller = \"newreno\"\nstack = \"{stack}\""),
        ));
        conserved(&r);
        r.acks.0 as f64 / r.total.delivered as f64
    };
    let per_packet = bulk("rfc");
    let ns3 = bulk("ns3");
    assert!((per_packet - 1.0).abs() < 1e-9, "{per_packet}");
    // Every second in-order packet, plus the ACKs sent at once around the losses.
    assert!((0.48..0.56).contains(&ns3), "{ns3} ACKs per packet");
}

/// Drops of one NewReno flow over the ns-3 dumbbell (12 Mbit/s, 20 ms, 1000-packet droptail) in 30 s:
/// the first slow start's overshoot (the buffer is not filled again within the run).
fn first_overshoot_drops(keys: &str) -> u64 {
    let r = run(&format!(
        "seed = 1\nduration_s = 30\n[data_link]\nrate_mbps = 12\ndelay_ms = 20\n\
         queue = {{ kind = \"droptail\", packets = 1000 }}\n[ack_link]\nrate_mbps = 12\ndelay_ms = 20\n\
         [[flows]]\ncontroller = \"newreno\"\npacket_bytes = 1500\nack_bytes = 52\n{keys}\n"
    ));
    conserved(&r);
    r.total.dropped
}

#[test]
fn ns3_style_delayed_acks_with_ns3_newreno_slow_start_roughly_halve_the_first_overshoot() {
    let per_packet = first_overshoot_drops("stack = \"ns3\"\ndelayed_ack = \"none\"");
    let ns3 = first_overshoot_drops("stack = \"ns3\"\nslow_start_limit = 1");
    // One segment per ACK (TcpNewReno::SlowStart) at one ACK per two segments: the window grows by
    // about 1.5 per round trip instead of 2, so the last round overshoots by about half as much.
    let ratio = ns3 as f64 / per_packet as f64;
    assert!(per_packet > 500, "{per_packet}");
    assert!(
        (0.4..0.6).contains(&ratio),
        "{ns3} / {per_packet} = {ratio}"
    );
    // Delayed ACKs alone do not: a controller that adds every packet an ACK covers still doubles.
    let byte_counting = first_overshoot_drops("stack = \"ns3\"");
    let ratio = byte_counting as f64 / per_packet as f64;
    assert!(
        (0.9..1.1).contains(&ratio),
        "{byte_counting} / {per_packet}"
    );
}

#[test]
fn the_send_overhead_leaves_a_paced_flows_rate_alone() {
    // ns-2's TCP does not pace: a packet the pacer held goes when the pacer releases it, as a timer's
    // send (ns-2's force), instead of waiting a random overhead of its own after each pacing gap.
    let bbr = |overhead_ms: f64| {
        let r = run(&link12(
            30,
            "queue = { kind = \"droptail\", packets = 400 }",
            &format!("controller = \"bbr\"\nsend_overhead_ms = {overhead_ms}"),
        ));
        conserved(&r);
        r.flows[0].goodput_mbps
    };
    let (without, with) = (bbr(0.0), bbr(0.7));
    assert!(without > 11.5, "{without}");
    assert!(with > 0.99 * without, "{with} vs {without} Mbit/s");
}

#[test]
fn lied_measures_every_epoch_and_keeps_its_rate_when_the_receiver_delays_its_acks() {
    // A delayed ACK covers two packets, often of two epochs, and reports the first one's arrival only:
    // each packet must still count in its own epoch (or the later epoch never completes and LIED stops
    // measuring), and the span must count what arrived in it (or its rate jitters by a packet per epoch
    // and eq. 3's sign test cuts the rate on a lossless path).
    let lied = |delayed_ack: &str| {
        let r = run(&link12(
            20,
            "queue = { kind = \"droptail\", packets = 400 }",
            &format!(
                "controller = \"lied\"\ntransport = \"reliable\"\ndelayed_ack = \"{delayed_ack}\""
            ),
        ));
        conserved(&r);
        assert_eq!(r.flows[0].dropped, 0, "{delayed_ack}");
        let count = |name: &str| counter(&r, name).expect(name);
        (
            r.flows[0].goodput_mbps,
            count("lied_epochs_measured"),
            count("lied_decreases"),
        )
    };
    let (per_packet, epochs, decreases) = lied("none");
    assert!(
        per_packet > 9.5 && epochs > 400 && decreases == 0,
        "{per_packet} {epochs} {decreases}"
    );
    for policy in ["ns3", "linux"] {
        let (goodput, measured, decreases) = lied(policy);
        assert!(
            goodput > 0.98 * per_packet,
            "{policy}: {goodput} vs {per_packet} Mbit/s"
        );
        assert!(
            measured as f64 > 0.95 * epochs as f64,
            "{policy}: {measured} of {epochs} epochs"
        );
        assert_eq!(decreases, 0, "{policy}");
    }
}

#[test]
fn vivace_keeps_finishing_monitor_intervals_when_the_receiver_delays_its_acks() {
    // python/ccscope/examples/vivace.toml under each stack's delayed ACKs: one ACK often covers the last
    // packet of one monitor interval and the first of the next. Each packet must count in its own
    // interval; credited to the echoed packet's, the next interval stayed a packet short for ever, no
    // interval finished after the 16th and the rate froze (at 12 Mbit/s here, the STARTING rate).
    let vivace = |stack: &str| {
        let r = run(&link12(
            60,
            "queue = { kind = \"droptail\", packets = 400 }",
            &format!("controller = \"vivace\"\n{stack}"),
        ));
        conserved(&r);
        let f = &r.flows[0];
        let count = |name: &str| counter(&r, name).expect(name);
        let (p95, mis, decisions) = (
            f.one_way_delay_p95_ms.expect("delivered"),
            count("monitor_intervals"),
            count("decisions"),
        );
        eprintln!(
            "vivace {stack:?}: {:.2} Mbit/s, p95 one-way delay {p95:.1} ms, {mis} MIs, {decisions} \
             decisions, {} ACKs for {} packets",
            f.throughput_mbps, r.acks.0, f.delivered
        );
        (
            f.throughput_mbps,
            p95,
            mis,
            decisions,
            r.acks.0 as f64 / f.delivered as f64,
        )
    };
    let (per_packet, per_packet_p95, per_packet_mis, per_packet_decisions, _) = vivace("");
    assert!(per_packet_decisions > 100, "{per_packet_decisions}");
    for stack in ["stack = \"linux\"", "stack = \"ns3\""] {
        let (thr, p95, mis, decisions, acks_per_packet) = vivace(stack);
        assert!(
            acks_per_packet < 0.6,
            "{stack}: {acks_per_packet} ACKs per packet"
        );
        assert!(
            mis as f64 > 0.9 * per_packet_mis as f64
                && decisions as f64 > 0.9 * per_packet_decisions as f64,
            "{stack}: {mis} MIs and {decisions} decisions"
        );
        assert!(
            thr > 0.98 * per_packet,
            "{stack}: {thr} vs {per_packet} Mbit/s"
        );
        assert!(
            p95 < per_packet_p95 + 2.0,
            "{stack}: p95 {p95} vs {per_packet_p95} ms"
        );
    }
}

#[test]
fn a_loss_probe_resending_an_outstanding_packet_leaves_no_lied_epoch_unmeasured() {
    // A tail loss probe resends the last packet while it is outstanding: the transmission it resent over
    // must still come back to a controller that counts packets by tag (as lost when the probe repaired
    // it), or its epoch never completes and LIED stops measuring for 4096 epochs.
    let lied = |tlp: bool| {
        let r = run(&link12(
            20,
            "loss = { kind = \"bernoulli\", p = 0.02 }",
            &format!(
                "controller = \"lied\"\ntransport = \"reliable\"\nstack = \"linux\"\ntlp = {tlp}\n\
                 transfers_bytes = [150000, 150000, 150000, 150000, 150000, 150000]\nthink_s = 0.5"
            ),
        ));
        conserved(&r);
        let count = |name: &str| counter(&r, name).unwrap_or(0);
        (
            count("tlp_probes"),
            count("lied_epochs_measured"),
            count("lied_epochs_dropped"),
        )
    };
    let (_, without, _) = lied(false);
    let (probes, with, dropped) = lied(true);
    assert!(probes > 0, "no probe fired");
    assert_eq!(dropped, 0);
    assert!(
        with as f64 > 0.8 * without as f64,
        "{with} epochs with probes, {without} without"
    );
}

#[test]
fn sixteen_linux_cubic_flows_with_delayed_acks_take_no_timeout_behind_a_full_queue() {
    // The ns-3 dumbbell (12 Mbit/s, 20 ms, 1000-packet droptail), 16 Cubic flows, 60 s. A hole found
    // late (its flow's next packet left long after it) is resent well after the ACK that last restarted
    // the timer; Linux restarts it when it resends the head (tcp_xmit_retransmit_queue), so the resend
    // has a whole RTO to come back through the ~1 s queue.
    let r = run(
        "seed = 1\nduration_s = 60\n[data_link]\nrate_mbps = 12\ndelay_ms = 20\n\
         queue = { kind = \"droptail\", packets = 1000 }\n[ack_link]\nrate_mbps = 12\ndelay_ms = 20\n\
         [[flows]]\ncontroller = \"cubic\"\ncount = 16\nstart_jitter_s = 1\npacket_bytes = 1500\n\
         ack_bytes = 52\nstack = \"linux\"\n",
    );
    conserved(&r);
    let flows = r.flows.iter().filter(|f| f.flow.is_some());
    let (rtos, retx, lost, dropped) = flows.fold((0, 0, 0, 0), |(a, b, c, d), f| {
        (
            a + f.rtos,
            b + f.retransmissions,
            c + f.declared_lost,
            d + f.dropped,
        )
    });
    assert!(dropped > 500, "the queue overflows: {dropped} drops");
    assert_eq!(rtos, 0, "{retx} retransmissions, {lost} declared lost");
    assert_eq!(retx, lost, "nothing resent that was not declared lost");
}

#[test]
fn each_on_periods_connection_acks_its_first_packet_at_once_as_an_ns3_receiver_does() {
    // One-packet files (1000 B, at most 1400) on a new connection per ON period: ns-3's ProcessSynRcvd
    // primes the delayed-ACK count, so a lone first packet is ACKed at once, not after 200 ms.
    let fct = |delayed_ack: &str| {
        let r = run(&format!(
            "seed = 2\nduration_s = 60\n[data_link]\nrate_mbps = 12\ndelay_ms = 20\n[ack_link]\nrate_mbps = 12\n\
             delay_ms = 20\n[[flows]]\ncontroller = \"newreno\"\ndelayed_ack = \"{delayed_ack}\"\n\
             traffic = {{ kind = \"onoff\", mean_bytes = 1000, std_bytes = 100, max_bytes = 1400, off_mean_s = 1 }}\n"
        ));
        conserved(&r);
        let f = &r.flows[0];
        assert!(f.transfers_done > 30, "{delayed_ack}: {}", f.transfers_done);
        f.fct_mean_s.expect("transfers done")
    };
    let (none, ns3, linux) = (fct("none"), fct("ns3"), fct("linux"));
    // An RTT is 40 ms; a 200 ms wait on most transfers would put the mean near 180 ms.
    assert!(none < 0.06, "{none}");
    for (policy, got) in [("ns3", ns3), ("linux", linux)] {
        assert!(
            got < none + 0.02,
            "{policy}: mean FCT {got} s against {none} s"
        );
    }
}
