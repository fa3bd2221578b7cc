//! Paper 002's round-correlated loss (eq. 7, specs/002-cmt.md A12) end to end: a NewReno flow over a
//! 21 Mbit/s, 40 ms path with an unbounded queue, so every drop is the loss model's.

use std::sync::OnceLock;

use ccscope_sim::pktlog::{LogEvent, PacketLog};
use ccscope_sim::{load_scenario, RunResult, Simulation};

const P: f64 = 0.01;
const ROUND_CORRELATED: &str = "{ kind = \"round_correlated\", p = 0.01 }";

fn scenario(loss: &str, flow: &str) -> String {
    format!(
        "seed = 1\nduration_s = 300\npacket_log = true\n[data_link]\nrate_mbps = 21\ndelay_ms = 20\nqueue = {{ kind = \"infinite\" }}\n\
         loss = {loss}\n[[flows]]\n{flow}\n"
    )
}

fn run(loss: &str) -> (RunResult, Bursts) {
    let sc = load_scenario(&scenario(loss, "controller = \"newreno\""), None, &[]).unwrap();
    let (r, log) = Simulation::new(&sc).unwrap().run();
    let b = Bursts::of(&log.expect("packet_log = true"));
    (r, b)
}

/// The correlated run and the Bernoulli run at the same p, shared by the tests that read them.
fn correlated() -> &'static (RunResult, Bursts) {
    static RUN: OnceLock<(RunResult, Bursts)> = OnceLock::new();
    RUN.get_or_init(|| run(ROUND_CORRELATED))
}

fn bernoulli() -> &'static (RunResult, Bursts) {
    static RUN: OnceLock<(RunResult, Bursts)> = OnceLock::new();
    RUN.get_or_init(|| run("{ kind = \"bernoulli\", p = 0.01 }"))
}

/// The data link's log read as loss events: a burst is a run of consecutive new-data packets (a
/// retransmission repeats a sequence number already seen) that the link dropped.
struct Bursts {
    new_data: u64,
    dropped_retransmissions: u64,
    lengths: Vec<u64>,
}

impl Bursts {
    fn of(log: &PacketLog) -> Bursts {
        let mut b = Bursts {
            new_data: 0,
            dropped_retransmissions: 0,
            lengths: Vec::new(),
        };
        let (mut next_new, mut new, mut run) = (0u64, false, 0u64);
        for i in 0..log.len() {
            if log.event[i] == LogEvent::Arrival as u8 {
                new = log.seq[i] >= next_new;
                // A packet's drop line follows its arrival line at once (the queue drops nothing).
                let dropped = log.event.get(i + 1) == Some(&(LogEvent::Drop as u8));
                if new {
                    next_new = log.seq[i] + 1;
                    b.new_data += 1;
                    if !dropped && run > 0 {
                        b.lengths.push(run);
                        run = 0;
                    }
                }
            } else if log.event[i] == LogEvent::Drop as u8 {
                if new {
                    run += 1;
                } else {
                    b.dropped_retransmissions += 1;
                }
            }
        }
        b.lengths.extend((run > 0).then_some(run));
        b
    }

    fn events(&self) -> u64 {
        self.lengths.len() as u64
    }

    fn dropped(&self) -> u64 {
        self.lengths.iter().sum()
    }

    /// New-data packets that reached the link while their round had lost nothing: the trials of eq. 7.
    fn clean(&self) -> u64 {
        self.new_data - self.dropped() + self.events()
    }
}

fn conserved(r: &RunResult) {
    assert_eq!(r.conservation_violations(), Vec::<String>::new());
}

#[test]
fn round_correlated_drops_come_as_round_tails_with_loss_events_at_rate_p() {
    let (r, b) = correlated();
    conserved(r);
    assert_eq!(
        b.dropped_retransmissions, 0,
        "retransmissions are exempt (A12)"
    );
    assert_eq!(b.dropped(), r.flows[0].dropped);
    // Eq. 7: a loss event starts with probability p per packet of a round that has lost nothing.
    // Binomial band of 4.5 standard deviations; a run of two rounds' tails back to back (probability
    // p per event) is counted once, a bias far inside the band.
    let (n, events) = (b.clean() as f64, b.events() as f64);
    let sd = (n * P * (1.0 - P)).sqrt();
    assert!(
        (events - n * P).abs() <= 4.5 * sd,
        "{events} loss events in {n} clean packets, want {:.0} ± {:.0}",
        n * P,
        4.5 * sd
    );
    assert!(b.events() > 300, "{} loss events", b.events());
    // After the first loss the rest of the round goes: several packets per event, not one.
    let mean = b.dropped() as f64 / events;
    assert!(mean > 3.0, "{mean:.2} packets per loss event");
}

#[test]
fn bernoulli_drops_at_the_same_p_are_single_packets() {
    let (r, b) = bernoulli();
    conserved(r);
    let mean = b.dropped() as f64 / b.events() as f64;
    assert!(mean < 1.1, "{mean:.2} packets per loss event");
}

#[test]
fn at_the_same_loss_rate_correlated_loss_means_fewer_loss_events_and_more_throughput() {
    // Bernoulli at the packet loss rate the correlated run measured: the same packets lost, spread
    // one per event instead of a round's tail per event.
    let (rc, bc) = correlated();
    let q = rc.flows[0].dropped as f64 / rc.flows[0].sent as f64;
    let (rb, bb) = run(&format!("{{ kind = \"bernoulli\", p = {q} }}"));
    let per_packet = |b: &Bursts, r: &RunResult| b.events() as f64 / r.flows[0].sent as f64;
    let (ec, eb) = (per_packet(bc, rc), per_packet(&bb, &rb));
    assert!(
        ec < eb / 2.0,
        "loss events per packet: correlated {ec:.4}, bernoulli {eb:.4}"
    );
    let (gc, gb) = (rc.flows[0].goodput_mbps, rb.flows[0].goodput_mbps);
    assert!(
        gc > gb,
        "goodput: correlated {gc:.3} Mbit/s, bernoulli at {q:.4} {gb:.3} Mbit/s"
    );
}

#[test]
fn at_the_same_p_a_correlated_loss_event_costs_a_round_tail_and_throughput() {
    // Eqs. 6 and 7 give a round the same chance of losing nothing, (1-p)^x: loss events per clean
    // packet are p under both, but each correlated event takes the rest of its round with it.
    let (rc, bc) = correlated();
    let (rb, bb) = bernoulli();
    let rate = |b: &Bursts| b.events() as f64 / b.clean() as f64;
    assert!(
        (rate(bc) / rate(bb) - 1.0).abs() < 0.15,
        "events per clean packet: {:.4} vs {:.4}",
        rate(bc),
        rate(bb)
    );
    assert!(
        rc.flows[0].dropped > 3 * rb.flows[0].dropped,
        "{} vs {} packets lost",
        rc.flows[0].dropped,
        rb.flows[0].dropped
    );
    let (gc, gb) = (rc.flows[0].goodput_mbps, rb.flows[0].goodput_mbps);
    assert!(
        gc < gb,
        "goodput: correlated {gc:.3} Mbit/s, bernoulli {gb:.3} Mbit/s"
    );
}

#[test]
fn a_burst_after_loss_window_drops_every_new_packet_in_it() {
    // Window of one 40 ms round trip: the time-window reading of "the rest of the round".
    let (r, b) = run("{ kind = \"burst_after_loss\", p = 0.01, window_ms = 40 }");
    conserved(&r);
    assert_eq!(b.dropped_retransmissions, 0);
    let mean = b.dropped() as f64 / b.events() as f64;
    assert!(mean > 3.0, "{mean:.2} packets per loss event");
}

#[test]
fn the_same_seed_replays_round_correlated_loss_bit_for_bit() {
    let (a, _) = correlated();
    let (b, _) = run(ROUND_CORRELATED);
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
}

#[test]
fn round_correlated_errors_name_file_line_and_field() {
    let load = |loss: &str, flow: &str| {
        load_scenario(
            &scenario(loss, flow),
            Some(std::path::Path::new("s.toml")),
            &[],
        )
        .map(|_| ())
    };
    let newreno = "controller = \"newreno\"";
    assert!(load(ROUND_CORRELATED, newreno).is_ok());
    let e = load("{ kind = \"round_correlated\", p = 1.5 }", newreno)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "s.toml:8: field `data_link.loss.p`: 1.5 is out of range: must be a probability in [0, 1]"
    );
    let e = load(
        "{ kind = \"round_correlated\", p = 0.01, window = 3 }",
        newreno,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("s.toml:8: field `data_link.loss") && e.contains("unknown key `window`"),
        "{e}"
    );
    let e = load("{ kind = \"round_correlated\" }", newreno)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("s.toml:8: field `data_link.loss") && e.contains("missing field `p`"),
        "{e}"
    );
    let e = load(
        "{ kind = \"burst_after_loss\", p = 0.01, window_ms = 0 }",
        newreno,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "s.toml:8: field `data_link.loss.window_ms`: 0 must be > 0"
    );
    // A transport that counts no rounds cannot drive it; the time-window variant needs no rounds.
    let e = load(
        ROUND_CORRELATED,
        "controller = \"newreno\"\ntransport = \"datagram\"",
    )
    .unwrap_err()
    .to_string();
    assert_eq!(e, "s.toml:8: field `data_link.loss`: round_correlated needs a transport that counts rounds (reliable or cmt): flows[0] uses the datagram transport, which counts none");
    assert!(load(
        "{ kind = \"burst_after_loss\", p = 0.01, window_ms = 40 }",
        "controller = \"fixed\"\ntransport = \"datagram\""
    )
    .is_ok());
    // ACKs carry no round.
    let acks = scenario("{ kind = \"none\" }", newreno) + "[ack_link]\nrate_mbps = 21\ndelay_ms = 20\nloss = { kind = \"round_correlated\", p = 0.01 }\n";
    let e = load_scenario(&acks, Some(std::path::Path::new("s.toml")), &[])
        .unwrap_err()
        .to_string();
    assert_eq!(e, "s.toml:14: field `ack_link.loss`: round_correlated needs a transport that counts rounds (reliable or cmt): flows[0]'s ACKs cross this link, and ACKs carry no round");
}
