//! Replays uplink logs of real `mm-link` runs (tests/data/mahimahi/, README there) through ccscope's
//! trace link and checks every opportunity, departure and drop against Mahimahi's.
//!
//! Log grammar (Mahimahi src/frontend/link_queue.cc, record_*): `# ...` header lines, then in the order
//! the link did them `t + size` (arrival), `t - size delay` (departure at the opportunity's time),
//! `t # 1504` (an opportunity used, wasted or not) and `t d packets bytes` (drops at enqueue only).
//! Times are whole ms since the shell started; opportunities fall at `base timestamp` + trace time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ccscope_core::rng::stream;
use ccscope_core::{Bandwidth, Dur, Time};
use ccscope_net::queue::{CodelFlavour, CodelParams, Limits};
use ccscope_net::{
    AnyQueue, Link, LossConfig, LossModel, Packet, QueueConfig, Service, Trace, MAHIMAHI_MTU,
};

/// What one side did, in log time (ms).
#[derive(Debug, Default, PartialEq)]
struct Outcome {
    opportunities: Vec<u64>,
    /// (time, size, delay) in the order they left.
    departures: Vec<(u64, u32, u64)>,
    /// Drops at enqueue, summed per millisecond: time -> (packets, bytes).
    enqueue_drops: BTreeMap<u64, (u64, u64)>,
    /// CoDel's drops at dequeue, which Mahimahi does not log (ccscope's side only).
    dequeue_drops: u64,
}

struct Log {
    queue: String,
    base_ms: u64,
    arrivals: Vec<(u64, u32)>,
    /// Opportunity time -> the later clocks CoDel's dequeues read there, in order (`t @ clock` lines of
    /// the clock-log build, experiments/mahimahi/clock-log.patch).
    clock: BTreeMap<u64, Vec<u64>>,
    last_ms: u64,
    mahimahi: Outcome,
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mahimahi")
}

/// Where the logs are read from: MAHIMAHI_LOG_DIR checks freshly recorded ones before they are copied.
fn log_dir() -> PathBuf {
    std::env::var_os("MAHIMAHI_LOG_DIR").map_or_else(data_dir, PathBuf::from)
}

fn parse(path: &Path) -> Log {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (mut queue, mut base_ms) = (None, None);
    let mut log = Log {
        queue: String::new(),
        base_ms: 0,
        arrivals: Vec::new(),
        clock: BTreeMap::new(),
        last_ms: 0,
        mahimahi: Outcome::default(),
    };
    for (i, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", path.display(), i + 1);
        if let Some(h) = line.strip_prefix("# ") {
            if let Some(q) = h.strip_prefix("queue: ") {
                queue = Some(q.to_string());
            } else if let Some(b) = h.strip_prefix("base timestamp: ") {
                base_ms = Some(b.parse::<u64>().unwrap_or_else(|_| panic!("{}", at())));
            }
            continue;
        }
        let f: Vec<&str> = line.split(' ').collect();
        let num = |k: usize| -> u64 {
            f.get(k)
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("{}: field {k} of `{line}`", at()))
        };
        let t = num(0);
        if f.get(1) == Some(&"@") {
            log.clock.entry(t).or_default().push(num(2));
            continue;
        }
        assert!(t >= log.last_ms, "{}: time goes backwards", at());
        log.last_ms = t;
        let m = &mut log.mahimahi;
        match f.get(1).copied() {
            Some("+") => log.arrivals.push((t, num(2) as u32)),
            Some("-") => m.departures.push((t, num(2) as u32, num(3))),
            Some("#") => m.opportunities.push(t),
            Some("d") => {
                let e = m.enqueue_drops.entry(t).or_default();
                e.0 += num(2);
                e.1 += num(3);
            }
            _ => panic!("{}: unknown event `{line}`", at()),
        }
    }
    log.queue = queue.unwrap_or_else(|| panic!("{}: no `# queue:` line", path.display()));
    log.base_ms =
        base_ms.unwrap_or_else(|| panic!("{}: no `# base timestamp:` line", path.display()));
    log
}

/// Drive a ccscope trace link with the log's arrivals, as the simulator does: an arrival at an instant
/// comes before the link's service event of that instant. Returns ccscope's outcome in log time and the
/// backlog (packets) left at the log's last millisecond, how many service calls ran late and how many
/// of CoDel's dequeues read another clock than the call they fell in. With `on_time`, every service
/// call runs at its opportunity's time, as in a simulation.
fn replay(
    log: &Log,
    trace: &Path,
    queue: &QueueConfig,
    once: bool,
    on_time: bool,
) -> (Outcome, u64, u64, u64) {
    let svc = Service::Trace {
        trace: Arc::new(Trace::from_file(trace).unwrap()),
        once,
    };
    let q = AnyQueue::new(queue, stream(0, 0), Bandwidth(0));
    let loss = LossModel::new(LossConfig::None, stream(0, 1));
    let mut link = Link::new(&svc, q, loss, Dur::from_ms(1), true);
    let base = log.base_ms;
    let to_log = |t: Time| {
        assert_eq!(t.as_ns() % 1_000_000, 0, "whole ms");
        t.as_ms_floor() + base
    };
    let codel = matches!(queue, QueueConfig::Codel(_));
    let (mut out, mut drops) = (Vec::new(), Vec::new());
    let mut ours = Outcome::default();
    let mut arrived: Vec<u64> = Vec::with_capacity(log.arrivals.len());
    let mut next: Option<Time> = None;
    let end = Time::from_ms(log.last_ms - base);
    let note_drops = |drops: &mut Vec<Packet>, ours: &mut Outcome, now: Time| {
        for p in drops.drain(..) {
            // Mahimahi logs no drop CoDel makes at dequeue (record_drop() runs only in read_packet()).
            if codel && p.enqueued < now {
                ours.dequeue_drops += 1;
                continue;
            }
            let e = ours.enqueue_drops.entry(to_log(now)).or_default();
            e.0 += 1;
            e.1 += p.bytes as u64;
        }
    };
    let (mut i, mut late, mut ticked, mut opps_seen, mut on_wire) = (0, 0, 0, 0, 0u32);
    loop {
        let arrival = log
            .arrivals
            .get(i)
            .map(|&(t, b)| (Time::from_ms(t - base), b));
        match (arrival, next) {
            // An arrival at the instant of a service event comes first (the link holds it).
            (Some((now, bytes)), s) if s.is_none_or(|s| now <= s) => {
                arrived.push(log.arrivals[i].0);
                let p = Packet::data(0, i as u64, bytes, now);
                i += 1;
                if let Some(s) = link.arrive(p, now, &mut drops) {
                    next = Some(s);
                }
                // Opportunities an idle link wasted before this arrival carry no packet.
                opps_seen = link.capacity.pending_log.as_ref().unwrap().len();
                note_drops(&mut drops, &mut ours, now);
            }
            (_, Some(s)) if s <= end => {
                // Mahimahi ran rationalize() late here: CoDel read `w`, and every opportunity up to
                // `w` was used in that one call, so the link is serviced at `w`.
                let w = match log.clock.get(&to_log(s)) {
                    Some(c) if !on_time => Time::from_ms(c[0] - base),
                    _ => s,
                };
                if w != s {
                    late += 1;
                }
                next = link.service(w, &mut out, &mut drops);
                let opps = &link.capacity.pending_log.as_ref().unwrap()[opps_seen..];
                opps_seen += opps.len();
                // A dequeue of this call that read another clock: the millisecond turned during the call.
                let mut times = opps.to_vec();
                times.dedup();
                for t in times.into_iter().filter(|_| !on_time) {
                    let clocks = log.clock.get(&(t + base)).map_or(&[][..], |c| c);
                    let other = clocks.iter().filter(|&&c| c != to_log(w)).count();
                    ticked += other as u64;
                }
                // The bytes of each departure, in order, over the opportunities this call used
                // (the one still on the wire after them takes what they leave).
                let mut opp = opps.iter();
                let (mut at, mut room) = (*opp.next().expect("an opportunity"), MAHIMAHI_MTU);
                let mut sent = on_wire;
                for p in out.drain(..) {
                    let mut need = p.bytes - sent;
                    sent = 0;
                    while need > room {
                        need -= room;
                        (at, room) = (*opp.next().expect("bytes left"), MAHIMAHI_MTU);
                    }
                    room -= need;
                    let t = at + base;
                    ours.departures
                        .push((t, p.bytes, t - arrived[p.seq as usize]));
                }
                // A packet still on the wire got every byte left (nothing queued arrives mid-call).
                on_wire = if link.backlog().0 > link.queue.packets() {
                    sent + room + MAHIMAHI_MTU * opp.count() as u32
                } else {
                    0
                };
                note_drops(&mut drops, &mut ours, w);
            }
            _ => break,
        }
    }
    link.finish(end + Dur(1));
    ours.opportunities = link
        .capacity
        .pending_log
        .take()
        .unwrap()
        .into_iter()
        .map(|ms| ms + base)
        .filter(|&t| t <= log.last_ms)
        .collect();
    (ours, link.backlog().0, late, ticked)
}

/// The first few places where two sequences differ, for a failure message.
fn diff<T: PartialEq + std::fmt::Debug>(what: &str, ours: &[T], theirs: &[T]) -> Option<String> {
    if ours == theirs {
        return None;
    }
    let first = ours.iter().zip(theirs).position(|(a, b)| a != b);
    let k = first.unwrap_or(ours.len().min(theirs.len()));
    Some(format!(
        "{what}: ccscope has {} and Mahimahi {}; first difference at #{k}: ccscope {:?}, Mahimahi {:?}",
        ours.len(),
        theirs.len(),
        &ours[k.min(ours.len())..(k + 3).min(ours.len())],
        &theirs[k.min(theirs.len())..(k + 3).min(theirs.len())],
    ))
}

struct Case {
    log: &'static str,
    trace: PathBuf,
    queue_line: &'static str,
    queue: QueueConfig,
    once: bool,
    /// Service calls replayed at the later clock Mahimahi's CoDel read (`t @ clock` lines).
    late: u64,
    /// Dequeues in one of them that read the next millisecond (replayed at the call's first clock).
    ticked: u64,
}

fn check(c: &Case) {
    let log = parse(&log_dir().join(c.log));
    assert_eq!(
        log.queue, c.queue_line,
        "{}: the queue this case expects",
        c.log
    );
    let (ours, backlog, late, ticked) = replay(&log, &c.trace, &c.queue, c.once, false);
    let m = &log.mahimahi;
    let drops = |o: &Outcome| {
        o.enqueue_drops
            .iter()
            .map(|(&t, &d)| (t, d))
            .collect::<Vec<_>>()
    };
    let problems: Vec<String> = [
        diff("opportunities", &ours.opportunities, &m.opportunities),
        diff("departures", &ours.departures, &m.departures),
        diff("enqueue drops", &drops(&ours), &drops(m)),
    ]
    .into_iter()
    .flatten()
    .collect();
    assert!(problems.is_empty(), "{}:\n{}", c.log, problems.join("\n"));
    assert_eq!(late, c.late, "{}: service calls at a late clock", c.log);
    assert_eq!(
        ticked, c.ticked,
        "{}: dequeues at another clock than their call",
        c.log
    );
    // Every arrival is accounted for: departed, dropped at enqueue, dropped by CoDel, or still held.
    let dropped: u64 = m.enqueue_drops.values().map(|d| d.0).sum();
    let left = log.arrivals.len() as u64 - m.departures.len() as u64 - dropped;
    assert_eq!(
        ours.dequeue_drops + backlog,
        left,
        "{}: packets neither sent nor dropped at enqueue",
        c.log
    );
}

/// Departures whose packet (arrival time, size) one side sent and the other did not, as a multiset.
fn fates_differ(a: &[(u64, u32, u64)], b: &[(u64, u32, u64)]) -> usize {
    let mut n: BTreeMap<(u64, u32), i64> = BTreeMap::new();
    for &(t, size, delay) in a {
        *n.entry((t - delay, size)).or_default() += 1;
    }
    for &(t, size, delay) in b {
        *n.entry((t - delay, size)).or_default() -= 1;
    }
    n.values().map(|d| d.unsigned_abs() as usize).sum()
}

fn traces() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/ccscope/data/traces")
}

fn packets(n: u64) -> Limits {
    Limits {
        packets: Some(n),
        bytes: None,
    }
}

#[test]
fn droptail_on_verizon_lte_departs_and_drops_as_mm_link_did() {
    check(&Case {
        log: "droptail-verizon.log",
        trace: traces().join("Verizon-LTE-short.up"),
        queue_line: "droptail [packets=20]",
        queue: QueueConfig::DropTail(packets(20)),
        once: false,
        late: 0,
        ticked: 0,
    });
}

#[test]
fn drophead_on_verizon_lte_departs_and_drops_as_mm_link_did() {
    check(&Case {
        log: "drophead-verizon.log",
        trace: traces().join("Verizon-LTE-short.up"),
        queue_line: "drophead [packets=20]",
        queue: QueueConfig::DropHead(packets(20)),
        once: false,
        late: 0,
        ticked: 0,
    });
}

#[test]
fn an_infinite_queue_on_a_looping_synthetic_trace_departs_as_mm_link_did() {
    check(&Case {
        log: "infinite-synthetic.log",
        trace: data_dir().join("synthetic-40ms.trace"),
        queue_line: "infinite",
        queue: QueueConfig::Infinite,
        once: false,
        late: 0,
        ticked: 0,
    });
}

#[test]
fn a_once_trace_stops_serving_where_mm_link_did() {
    check(&Case {
        log: "once-droptail-synthetic.log",
        trace: data_dir().join("synthetic-once-2s.trace"),
        queue_line: "droptail [packets=30]",
        queue: QueueConfig::DropTail(packets(30)),
        once: true,
        late: 0,
        ticked: 0,
    });
}

fn codel_case() -> Case {
    Case {
        log: "codel-verizon.log",
        trace: traces().join("Verizon-LTE-short.up"),
        queue_line: "codel [packets=1000]",
        queue: QueueConfig::Codel(CodelParams {
            limit: packets(1000),
            mtu_bytes: MAHIMAHI_MTU,
            flavour: CodelFlavour::Mahimahi,
            ..CodelParams::default()
        }),
        once: false,
        late: 83,
        ticked: 2,
    }
}

// CODELPacketQueue::dequeue() reads the wall clock; the log's `t @ clock` lines say when it read a later
// one than the opportunity's, and the replay services the link then.
#[test]
fn codel_on_verizon_lte_departs_as_mm_link_did_at_the_clocks_it_read() {
    check(&codel_case());
}

// The same run serviced on time, as a simulation does: the late clocks are what separates the two.
#[test]
fn codel_on_verizon_lte_serviced_on_time_sends_other_packets_than_a_late_mm_link() {
    let c = codel_case();
    let log = parse(&log_dir().join(c.log));
    let (ours, _, late, _) = replay(&log, &c.trace, &c.queue, c.once, true);
    assert_eq!(late, 0);
    assert_eq!(ours.opportunities, log.mahimahi.opportunities);
    assert_eq!(fates_differ(&ours.departures, &log.mahimahi.departures), 22);
}
