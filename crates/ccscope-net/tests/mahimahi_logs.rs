//! Replays uplink logs of real `mm-link` runs (tests/data/mahimahi/, README there) through ccscope's
//! trace link and checks every opportunity, departure and drop against Mahimahi's.
//!
//! Log grammar (Mahimahi src/frontend/link_queue.cc, record_*): `# ...` header lines, then in the order
//! the link did them `t + size` (arrival), `t - size delay` (departure at the opportunity's time),
//! `t # 1504` (an opportunity used, wasted or not) and `t d packets bytes` (drops at enqueue only).
//! Times are whole ms since the shell started; opportunities fall at `base timestamp` + trace time.
//! Logs of the pie-log build (experiments/mahimahi/pie-log.patch) add PIE's decisions, updates and
//! draws: `# pie: ...`, `t e clock drop_prob draw verdict` and `clock u last_update drop_prob ...`.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ccscope_core::rng::stream;
use ccscope_core::{Bandwidth, Dur, Time};
use ccscope_net::queue::{
    CodelFlavour, CodelParams, Limits, PieDecision, PieFlavour, PieParams, PieUpdate,
};
use ccscope_net::{
    AnyQueue, Link, LossConfig, LossModel, Packet, QueueConfig, Service, Trace, MAHIMAHI_MTU,
};

/// What one side did, in log time (ms).
#[derive(Clone, Debug, Default, PartialEq)]
struct Outcome {
    opportunities: Vec<u64>,
    /// (time, size, delay) in the order they left.
    departures: Vec<(u64, u32, u64)>,
    /// Drops at enqueue, summed per millisecond: time -> (packets, bytes).
    enqueue_drops: BTreeMap<u64, (u64, u64)>,
    /// CoDel's drops at dequeue, which Mahimahi does not log (ccscope's side only).
    dequeue_drops: u64,
    /// PIE's updates, clocks in log time, from the link's start on.
    pie_updates: Vec<PieUpdate>,
    /// PIE's enqueue decisions, each with its packet's arrival time (ccscope's clock is that time).
    pie_decisions: Vec<(u64, PieDecision)>,
    /// Logged draws ccscope did not use (ccscope's side only).
    pie_draws_left: usize,
}

/// The `# pie:` header of the pie-log build: PIE's parameters and its first last_update_ (the clock
/// when the queue was built, before the link's base timestamp).
#[derive(Debug, Default)]
struct PieHeader {
    qdelay_ref: u64,
    max_burst: u64,
    t_update: u64,
    last_update: u64,
}

struct Log {
    queue: String,
    base_ms: u64,
    arrivals: Vec<(u64, u32)>,
    /// Opportunity time -> the later clocks CoDel's dequeues read there, in order (`t @ clock` lines of
    /// the clock-log build, experiments/mahimahi/clock-log.patch).
    clock: BTreeMap<u64, Vec<u64>>,
    last_ms: u64,
    pie: Option<PieHeader>,
    /// PIE's draws, in the order made.
    draws: VecDeque<f64>,
    /// Enqueues whose PIE read a later clock than the arrival's (the replay enqueues at the arrival's).
    pie_turned: u64,
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
        pie: None,
        draws: VecDeque::new(),
        pie_turned: 0,
        mahimahi: Outcome::default(),
    };
    for (i, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", path.display(), i + 1);
        if let Some(h) = line.strip_prefix("# ") {
            if let Some(q) = h.strip_prefix("queue: ") {
                queue = Some(q.to_string());
            } else if let Some(b) = h.strip_prefix("base timestamp: ") {
                base_ms = Some(b.parse::<u64>().unwrap_or_else(|_| panic!("{}", at())));
            } else if let Some(p) = h.strip_prefix("pie: ") {
                let kv: BTreeMap<&str, u64> = p
                    .split(' ')
                    .map(|f| {
                        let (k, v) = f.split_once('=').unwrap_or_else(|| panic!("{}", at()));
                        (k, v.parse().unwrap_or_else(|_| panic!("{}: {k}", at())))
                    })
                    .collect();
                let get = |k: &str| *kv.get(k).unwrap_or_else(|| panic!("{}: no {k}", at()));
                log.pie = Some(PieHeader {
                    qdelay_ref: get("qdelay_ref"),
                    max_burst: get("max_burst"),
                    t_update: get("t_update"),
                    last_update: get("last_update"),
                });
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
        let float = |k: usize| -> f64 {
            f.get(k)
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("{}: field {k} of `{line}`", at()))
        };
        if f.get(1) == Some(&"@") {
            log.clock.entry(t).or_default().push(num(2));
            continue;
        }
        // An update: its first field is the clock PIE read, later than the opportunity a dequeue
        // ran at, so it stays out of the link's time order.
        if f.get(1) == Some(&"u") {
            let dq_count: i64 = f
                .get(8)
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("{}: field 8 of `{line}`", at()));
            log.mahimahi.pie_updates.push(PieUpdate {
                clock_ms: t,
                last_update_ms: num(2),
                drop_prob: float(3),
                current_qdelay_ms: num(4) as u32,
                qdelay_old_ms: num(5) as u32,
                burst_allowance_ms: num(6) as u32,
                avg_dq_rate: num(7) as u32,
                dq_count: u32::try_from(dq_count).ok(),
            });
            continue;
        }
        assert!(t >= log.last_ms, "{}: time goes backwards", at());
        log.last_ms = t;
        let m = &mut log.mahimahi;
        match f.get(1).copied() {
            Some("+") => log.arrivals.push((t, num(2) as u32)),
            Some("-") => m.departures.push((t, num(2) as u32, num(3))),
            Some("#") => m.opportunities.push(t),
            Some("e") => {
                let draw = (f.get(4) != Some(&"-")).then(|| float(4));
                log.draws.extend(draw);
                let clock = num(2);
                log.pie_turned += (clock != t) as u64;
                let verdict = f.get(5).and_then(|v| v.chars().next());
                m.pie_decisions.push((
                    t,
                    PieDecision {
                        clock_ms: t,
                        drop_prob: float(3),
                        draw,
                        verdict: verdict.unwrap_or_else(|| panic!("{}: no verdict", at())),
                    },
                ));
            }
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
    let mut q = AnyQueue::new(queue, stream(0, 0), Bandwidth(0));
    let base = log.base_ms;
    // PIE: the logged draws, and Mahimahi's update phase (its queue was built before the link's base
    // timestamp; the updates before it ran on the empty queue and changed nothing, checked below).
    let phase = log
        .pie
        .as_ref()
        .map(|h| (h.last_update as i64 - base as i64).rem_euclid(h.t_update as i64) as u64);
    if let (AnyQueue::Pie(pie), Some(phase)) = (&mut q, phase) {
        pie.start_replay(log.draws.clone(), phase);
    }
    let loss = LossModel::new(LossConfig::None, stream(0, 1));
    let mut link = Link::new(&svc, q, loss, Dur::from_ms(1), true);
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
    if let AnyQueue::Pie(pie) = &link.queue {
        let r = pie.replay().expect("a PIE log has a `# pie:` line");
        ours.pie_draws_left = r.draws.len();
        ours.pie_updates = r
            .updates
            .iter()
            .map(|u| PieUpdate {
                clock_ms: u.clock_ms + base,
                last_update_ms: u.last_update_ms + base,
                ..u.clone()
            })
            .collect();
        ours.pie_decisions = r
            .decisions
            .iter()
            .map(|d| {
                let t = d.clock_ms + base;
                (
                    t,
                    PieDecision {
                        clock_ms: t,
                        ..d.clone()
                    },
                )
            })
            .collect();
    }
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
    /// PIE enqueues that read the next millisecond (replayed at the arrival's).
    pie_turned: u64,
}

fn check(c: &Case) -> Outcome {
    let log = parse(&log_dir().join(c.log));
    assert_eq!(
        log.queue, c.queue_line,
        "{}: the queue this case expects",
        c.log
    );
    let (ours, backlog, late, ticked) = replay(&log, &c.trace, &c.queue, c.once, false);
    let mut m = log.mahimahi.clone();
    if let (QueueConfig::Pie(p), Some(h)) = (&c.queue, &log.pie) {
        let ms = |d: Dur| d.as_ns() / 1_000_000;
        assert_eq!(
            (ms(p.target), ms(p.max_burst), ms(p.t_update)),
            (h.qdelay_ref, h.max_burst, h.t_update),
            "{}: the PIE parameters this case expects",
            c.log
        );
        // Updates before ccscope's first (its phase) ran before the link started: nothing changed.
        let first = ours
            .pie_updates
            .first()
            .map_or(u64::MAX, |u| u.last_update_ms);
        let before = m
            .pie_updates
            .iter()
            .take_while(|u| u.last_update_ms < first);
        for u in before {
            assert_eq!(
                (
                    u.drop_prob,
                    u.current_qdelay_ms,
                    u.burst_allowance_ms,
                    u.avg_dq_rate,
                    u.dq_count
                ),
                (0.0, 0, 0, 0, None),
                "{}: an update before the link started changed PIE",
                c.log
            );
        }
        m.pie_updates.retain(|u| u.last_update_ms >= first);
    }
    let m = &m;
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
        diff("PIE updates", &ours.pie_updates, &m.pie_updates),
        diff("PIE decisions", &ours.pie_decisions, &m.pie_decisions),
    ]
    .into_iter()
    .flatten()
    .collect();
    assert!(problems.is_empty(), "{}:\n{}", c.log, problems.join("\n"));
    assert_eq!(ours.pie_draws_left, 0, "{}: logged draws left", c.log);
    assert_eq!(late, c.late, "{}: service calls at a late clock", c.log);
    assert_eq!(
        log.pie_turned, c.pie_turned,
        "{}: PIE enqueues at a later clock",
        c.log
    );
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
    ours
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
    let _ = check(&Case {
        log: "droptail-verizon.log",
        trace: traces().join("Verizon-LTE-short.up"),
        queue_line: "droptail [packets=20]",
        queue: QueueConfig::DropTail(packets(20)),
        once: false,
        late: 0,
        ticked: 0,
        pie_turned: 0,
    });
}

#[test]
fn drophead_on_verizon_lte_departs_and_drops_as_mm_link_did() {
    let _ = check(&Case {
        log: "drophead-verizon.log",
        trace: traces().join("Verizon-LTE-short.up"),
        queue_line: "drophead [packets=20]",
        queue: QueueConfig::DropHead(packets(20)),
        once: false,
        late: 0,
        ticked: 0,
        pie_turned: 0,
    });
}

#[test]
fn an_infinite_queue_on_a_looping_synthetic_trace_departs_as_mm_link_did() {
    let _ = check(&Case {
        log: "infinite-synthetic.log",
        trace: data_dir().join("synthetic-40ms.trace"),
        queue_line: "infinite",
        queue: QueueConfig::Infinite,
        once: false,
        late: 0,
        ticked: 0,
        pie_turned: 0,
    });
}

#[test]
fn a_once_trace_stops_serving_where_mm_link_did() {
    let _ = check(&Case {
        log: "once-droptail-synthetic.log",
        trace: data_dir().join("synthetic-once-2s.trace"),
        queue_line: "droptail [packets=30]",
        queue: QueueConfig::DropTail(packets(30)),
        once: true,
        late: 0,
        ticked: 0,
        pie_turned: 0,
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
        pie_turned: 0,
    }
}

// CODELPacketQueue::dequeue() reads the wall clock; the log's `t @ clock` lines say when it read a later
// one than the opportunity's, and the replay services the link then.
#[test]
fn codel_on_verizon_lte_departs_as_mm_link_did_at_the_clocks_it_read() {
    let _ = check(&codel_case());
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

/// (updates, decisions, draws, early drops, drops at the full buffer) of a PIE replay.
fn pie_counts(o: &Outcome) -> (usize, usize, usize, usize, usize) {
    let d = &o.pie_decisions;
    let n = |v: char| d.iter().filter(|(_, x)| x.verdict == v).count();
    (
        o.pie_updates.len(),
        d.len(),
        d.iter().filter(|(_, x)| x.draw.is_some()).count(),
        n('d'),
        n('f'),
    )
}

fn pie_case(qdelay_ref_ms: u64, max_burst_ms: u64) -> QueueConfig {
    QueueConfig::Pie(PieParams {
        target: Dur::from_ms(qdelay_ref_ms),
        max_burst: Dur::from_ms(max_burst_ms),
        limit: packets(1000),
        ..PieParams::of(PieFlavour::Mahimahi)
    })
}

// PIEPacketQueue reads the wall clock and draws from a randomly seeded generator; the pie-log build
// logs both, and with its draws ccscope's Mahimahi flavour makes every update and decision it made.
#[test]
fn pie_on_verizon_lte_updates_draws_and_drops_as_mm_link_did() {
    let ours = check(&Case {
        log: "pie-verizon.log",
        trace: traces().join("Verizon-LTE-short.up"),
        queue_line: "pie [packets=1000]",
        queue: pie_case(15, 150),
        once: false,
        late: 11,
        ticked: 0,
        pie_turned: 1,
    });
    assert_eq!(pie_counts(&ours), (153, 2149, 1353, 434, 0));
}

#[test]
fn pie_with_a_5_ms_target_updates_draws_and_drops_as_mm_link_did() {
    let ours = check(&Case {
        log: "pie-verizon-ref5.log",
        trace: traces().join("Verizon-LTE-short.up"),
        queue_line: "pie [packets=1000]",
        queue: pie_case(5, 50),
        once: false,
        late: 9,
        ticked: 0,
        pie_turned: 1,
    });
    assert_eq!(pie_counts(&ours), (144, 2149, 1522, 449, 0));
}

// The same runs serviced on time, as a simulation does. PIEPacketQueue::dequeue() reads the wall clock
// for its departure-rate sample: in pie-verizon.log the dequeue at opportunity 1285 read 1286, so the
// sample ending there spanned 1 ms more; on time the rate comes out 1437 B/ms, not 1430, the 1290 ms
// update finds 2 ms of delay, not 3, and the runs part (the logged draws then fall on other
// decisions). The late clocks of pie-verizon-ref5.log ended no sample and crossed no update.
#[test]
fn pie_serviced_on_time_parts_from_a_late_mm_link_only_where_a_late_clock_ended_a_rate_sample() {
    let on_time = |log: &str, qdelay_ref_ms, max_burst_ms| {
        let l = parse(&log_dir().join(log));
        let trace = traces().join("Verizon-LTE-short.up");
        let q = pie_case(qdelay_ref_ms, max_burst_ms);
        let (ours, _, late, _) = replay(&l, &trace, &q, false, true);
        assert_eq!(late, 0);
        let first = ours.pie_updates[0].last_update_ms;
        let theirs: Vec<PieUpdate> = (l.mahimahi.pie_updates.iter())
            .filter(|u| u.last_update_ms >= first)
            .cloned()
            .collect();
        let k = ours
            .pie_updates
            .iter()
            .zip(&theirs)
            .position(|(a, b)| a != b);
        let parted = k.map(|k| (ours.pie_updates[k].clone(), theirs[k].clone()));
        (parted, ours.departures == l.mahimahi.departures)
    };
    let (parted, same) = on_time("pie-verizon.log", 15, 150);
    let (ours, theirs) = parted.expect("the runs part");
    assert_eq!(
        (
            ours.last_update_ms,
            ours.avg_dq_rate,
            ours.current_qdelay_ms
        ),
        (1290, 1437, 2)
    );
    assert_eq!(
        (
            theirs.last_update_ms,
            theirs.avg_dq_rate,
            theirs.current_qdelay_ms
        ),
        (1290, 1430, 3)
    );
    assert!(!same);
    assert_eq!(on_time("pie-verizon-ref5.log", 5, 50), (None, true));
}
