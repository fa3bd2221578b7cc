//! PIE, Proportional Integral controller Enhanced (Pan et al., RFC 8033), as Mahimahi runs it:
//! `src/packet/pie_packet_queue.cc` (after draft-ietf-aqm-pie-09 and Linux 4.4's sch_pie.c).
//!
//! Mahimahi's queue has no timer: each `enqueue()` and `dequeue()` first replays the periodic update
//! once per whole `t_update` elapsed since the last one, on its whole-millisecond `timestamp()` clock.
//! ccscope does the same on `now` floored to the millisecond, so runs replay.

use ccscope_core::rng::{Rng, RngExt};
use ccscope_core::Time;

use super::{Fifo, Limits, MAX_QUEUED_PACKETS};
use crate::Packet;

/// pie_packet_queue.hh PACKET_SIZE: below two of these queued bytes PIE never drops early.
pub const PIE_PACKET_SIZE: u64 = 1504;
/// pie_packet_queue.cc constructor dq_threshold_: bytes of backlog that start a departure-rate sample.
pub const PIE_DQ_THRESHOLD: u32 = 16384;

#[derive(Clone, Debug, PartialEq)]
pub struct PieParams {
    /// Latency target in whole ms (Mahimahi `qdelay_ref`, required there; RFC 8033 QDELAY_REF: 15 ms).
    pub qdelay_ref_ms: u32,
    /// Burst allowance in whole ms (Mahimahi `max_burst`, required there; RFC 8033 MAX_BURST: 150 ms).
    pub max_burst_ms: u32,
    /// Period of the drop-probability update in whole ms (pie_packet_queue.cc t_update_: 30).
    pub t_update_ms: u32,
    /// Weight of the delay error, per ms of delay (pie_packet_queue.cc alpha_: 0.125).
    pub alpha: f64,
    /// Weight of the delay trend, per ms of delay (pie_packet_queue.cc beta_: 1.25).
    pub beta: f64,
    /// Physical buffer (tail drop beyond it, before the early-drop test).
    pub limit: Limits,
}

impl Default for PieParams {
    fn default() -> Self {
        PieParams {
            qdelay_ref_ms: 15,
            max_burst_ms: 150,
            t_update_ms: 30,
            alpha: 0.125,
            beta: 1.25,
            limit: Limits::default(),
        }
    }
}

#[derive(Debug)]
pub struct Pie {
    p: PieParams,
    pub(super) fifo: Fifo,
    rng: Rng,
    drop_prob: f64,
    /// Whole ms left during which nothing is dropped early.
    burst_allowance: u32,
    qdelay_old: u32,
    current_qdelay: u32,
    /// Bytes dequeued in the current rate sample; `None` is Mahimahi's DQ_COUNT_INVALID (no sample).
    dq_count: Option<u32>,
    dq_tstamp: u64,
    /// Departure-rate estimate in bytes per ms (integer, as Mahimahi's avg_dq_rate_).
    avg_dq_rate: u32,
    /// Clock (ms) of the last periodic update; Mahimahi starts it at construction, ccscope's time 0.
    last_update: u64,
}

impl Pie {
    pub fn new(p: PieParams, rng: Rng) -> Self {
        Pie {
            p,
            fifo: Fifo::with_capacity(1024),
            rng,
            drop_prob: 0.0,
            // pie_packet_queue.cc constructor: burst_allowance_ starts at 0, not max_burst.
            burst_allowance: 0,
            qdelay_old: 0,
            current_qdelay: 0,
            dq_count: None,
            dq_tstamp: 0,
            avg_dq_rate: 0,
            last_update: 0,
        }
    }

    pub fn drop_prob(&self) -> f64 {
        self.drop_prob
    }

    pub fn burst_allowance_ms(&self) -> u32 {
        self.burst_allowance
    }

    pub fn current_qdelay_ms(&self) -> u32 {
        self.current_qdelay
    }

    pub fn avg_dq_rate(&self) -> u32 {
        self.avg_dq_rate
    }

    /// Mahimahi's `timestamp()`: whole milliseconds.
    #[inline]
    fn clock(now: Time) -> u64 {
        now.as_ms_floor()
    }

    // pie_packet_queue.cc enqueue(): update first, then the buffer limit, then the early drop.
    pub(super) fn enqueue(&mut self, pkt: Packet, now: Time, drops: &mut Vec<Packet>) {
        self.calculate_drop_prob(Self::clock(now));
        let fits = self.fifo.packets() < MAX_QUEUED_PACKETS
            && self.p.limit.fits(
                self.fifo.packets() + 1,
                self.fifo.bytes() + pkt.bytes as u64,
            );
        if !fits || self.drop_early() {
            drops.push(pkt);
        } else {
            self.fifo.push(pkt);
        }
        debug_assert!((0.0..=1.0).contains(&self.drop_prob));
    }

    // pie_packet_queue.cc drop_early(): true drops; the random draw comes last, only when needed.
    fn drop_early(&mut self) -> bool {
        if self.burst_allowance > 0 {
            return false;
        }
        if self.qdelay_old < self.p.qdelay_ref_ms / 2 && self.drop_prob < 0.2 {
            return false;
        }
        if self.fifo.bytes() < 2 * PIE_PACKET_SIZE {
            return false;
        }
        self.rng.gen::<f64>() < self.drop_prob
    }

    // pie_packet_queue.cc dequeue(): Mahimahi never dequeues an empty queue, so nothing runs then.
    pub(super) fn dequeue(&mut self, now: Time) -> Option<Packet> {
        let ret = self.fifo.pop()?;
        let now = Self::clock(now);
        let bytes = self.fifo.bytes();
        if bytes >= PIE_DQ_THRESHOLD as u64 && self.dq_count.is_none() {
            self.dq_tstamp = now;
            self.dq_count = Some(0);
        }
        if let Some(count) = self.dq_count {
            let count = count.wrapping_add(ret.bytes);
            self.dq_count = Some(count);
            let dtime = now.saturating_sub(self.dq_tstamp);
            if count > PIE_DQ_THRESHOLD && dtime > 0 {
                // Integer bytes per ms; EWMA with weight 1/8 in shifts, as Mahimahi (and Linux 4.4).
                let rate_sample = (count as u64 / dtime) as u32;
                self.avg_dq_rate = if self.avg_dq_rate == 0 {
                    rate_sample
                } else {
                    (self.avg_dq_rate - (self.avg_dq_rate >> 3)) + (rate_sample >> 3)
                };
                if bytes < PIE_DQ_THRESHOLD as u64 {
                    self.dq_count = None;
                } else {
                    self.dq_count = Some(0);
                    self.dq_tstamp = now;
                }
                // The burst allowance also runs down here by the sample's span (as Linux 4.4).
                self.burst_allowance = self
                    .burst_allowance
                    .saturating_sub(dtime.min(u32::MAX as u64) as u32);
            }
        }
        self.calculate_drop_prob(now);
        Some(ret)
    }

    // pie_packet_queue.cc calculate_drop_prob(): one update per whole t_update since the last, on the
    // queue as it stands now; an update is due only once strictly more than t_update has passed.
    fn calculate_drop_prob(&mut self, now: u64) {
        let t_update = self.p.t_update_ms as u64;
        let bytes = self.fifo.bytes();
        let half_ref = self.p.qdelay_ref_ms / 2;
        while now.saturating_sub(self.last_update) > t_update {
            let before = self.state();
            let mut update_prob = true;
            self.qdelay_old = self.current_qdelay;
            // Little's law on the departure-rate estimate (RFC 8033 §4.3), integer ms.
            self.current_qdelay = match self.avg_dq_rate {
                0 => 0,
                r => (bytes / r as u64).min(u32::MAX as u64) as u32,
            };
            if self.current_qdelay == 0 && bytes != 0 {
                update_prob = false;
            }
            // RFC 8033 §4.2: p = alpha (qdelay - ref) + beta (qdelay - qdelay_old), here in ms.
            let mut p = self.p.alpha
                * (self.current_qdelay as i64 - self.p.qdelay_ref_ms as i64) as f64
                + self.p.beta * (self.current_qdelay as i64 - self.qdelay_old as i64) as f64;
            // Linux 4.4's three-step scaling (>> 7, >> 5, >> 4), not RFC 8033's finer table.
            if self.drop_prob < 0.01 {
                p /= 128.0;
            } else if self.drop_prob < 0.1 {
                p /= 32.0;
            } else {
                p /= 16.0;
            }
            self.drop_prob += p;
            if self.drop_prob < 0.0 {
                self.drop_prob = 0.0;
            } else if self.drop_prob > 1.0 {
                self.drop_prob = 1.0;
                update_prob = false;
            }
            // Decay (x 0.98) only with both estimates exactly 0 and the update not suppressed above.
            if self.current_qdelay == 0 && self.qdelay_old == 0 && update_prob {
                self.drop_prob *= 0.98;
            }
            self.burst_allowance = self.burst_allowance.saturating_sub(self.p.t_update_ms);
            self.last_update += t_update;
            // A quiet queue regains its burst allowance (RFC 8033 §4.4) and restarts rate sampling.
            if self.drop_prob == 0.0
                && self.current_qdelay < half_ref
                && self.qdelay_old < half_ref
                && self.avg_dq_rate > 0
            {
                self.dq_count = None;
                self.avg_dq_rate = 0;
                self.burst_allowance = self.p.max_burst_ms;
            }
            // The queue cannot change within the loop, so an update that changed nothing is a fixed
            // point: skip the identical updates left (an idle hour at 1 ms would be 3.6 M of them).
            if self.state() == before {
                let left = now.saturating_sub(self.last_update).saturating_sub(1) / t_update;
                self.last_update += left * t_update;
            }
        }
    }

    fn state(&self) -> (u64, u32, u32, u32, u32, Option<u32>) {
        (
            self.drop_prob.to_bits(),
            self.qdelay_old,
            self.current_qdelay,
            self.burst_allowance,
            self.avg_dq_rate,
            self.dq_count,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{AnyQueue, QueueConfig};
    use ccscope_core::Bandwidth;

    fn pie(p: PieParams) -> Pie {
        Pie::new(p, ccscope_core::rng::stream(1, 1))
    }

    fn pkt(seq: u64) -> Packet {
        Packet::data(0, seq, 1500, Time::ZERO)
    }

    /// Queue `n` packets of 1500 B at `t_ms` (the first arrival runs any due update).
    fn fill(q: &mut Pie, n: u64, t_ms: u64) -> usize {
        let mut d = Vec::new();
        for s in 0..n {
            q.enqueue(pkt(s), Time::from_ms(t_ms), &mut d);
        }
        d.len()
    }

    // pie_packet_queue.cc dequeue() and calculate_drop_prob(), worked by hand: 100 packets queued at
    // 0, one dequeued per ms from 1 ms. A rate sample starts at the 1 ms dequeue (148,500 B left) and
    // ends once more than 16,384 B have left: at 11 ms, 16,500 B / 10 ms = 1650 B/ms; at 22 ms,
    // 16,500 / 11 = 1500, avg = 1650 - (1650 >> 3) + (1500 >> 3) = 1631. The first update is due only
    // at 31 ms (31 - 0 > 30): 103,500 B / 1631 = 63 ms, p = (0.125 (63 - 15) + 1.25 (63 - 0)) / 128
    // = 84.75 / 128 = 0.662109375. Samples at 33, 44, 55 ms give 1615, 1601, 1588; at 61 ms
    // (61 - 30 > 30): 58,500 / 1588 = 36 ms, p = (0.125 (36 - 15) + 1.25 (36 - 63)) / 16 = -1.9453125,
    // so drop_prob is clamped to 0.
    #[test]
    fn the_drop_probability_follows_mahimahis_update_on_a_draining_queue() {
        let mut q = pie(PieParams::default());
        assert_eq!(fill(&mut q, 100, 0), 0);
        let mut seen = Vec::new();
        for k in 1..=61u64 {
            assert!(q.dequeue(Time::from_ms(k)).is_some());
            if [11, 22, 30, 31, 60, 61].contains(&k) {
                seen.push((k, q.avg_dq_rate(), q.current_qdelay_ms(), q.drop_prob()));
            }
        }
        assert_eq!(
            seen,
            [
                (11, 1650, 0, 0.0),
                (22, 1631, 0, 0.0),
                (30, 1631, 0, 0.0),
                (31, 1631, 63, 0.662109375),
                (60, 1588, 63, 0.662109375),
                (61, 1588, 36, 0.0),
            ]
        );
    }

    // pie_packet_queue.cc: burst_allowance_ starts at 0; an update that finds the queue quiet
    // (drop_prob 0, both delays under qdelay_ref / 2, a rate measured) grants max_burst and forgets
    // the rate; each update takes t_update off it and a finished rate sample its span (dtime).
    #[test]
    fn the_burst_allowance_starts_at_zero_is_granted_when_quiet_and_runs_down() {
        let mut q = pie(PieParams::default());
        assert_eq!(q.burst_allowance_ms(), 0);
        fill(&mut q, 20, 0);
        // 1 ms .. 20 ms: the sample from 1 ms ends at 11 ms (16,500 B / 10 ms), 13,500 B left.
        for k in 1..=20 {
            q.dequeue(Time::from_ms(k));
        }
        assert_eq!((q.avg_dq_rate(), q.burst_allowance_ms()), (1650, 0));
        // The 31 ms arrival runs the 30 ms update on the empty queue: quiet, so 150 ms are granted.
        fill(&mut q, 20, 31);
        assert_eq!((q.avg_dq_rate(), q.burst_allowance_ms()), (0, 150));
        // Dequeues from 32 ms: the sample from 32 ms ends at 42 ms and takes its 10 ms off.
        for k in 32..=42 {
            q.dequeue(Time::from_ms(k));
        }
        assert_eq!((q.avg_dq_rate(), q.burst_allowance_ms()), (1650, 140));
    }

    // pie_packet_queue.cc calculate_drop_prob(): with no event between them, the updates due at 60,
    // 90, 120 and 150 ms run at the next event, on the queue as it stands then (1500 B, no rate:
    // qdelay 0, the decay suppressed), each taking 30 ms off the allowance; at 180 ms the 180 update
    // is not due yet (180 - 150 = 30).
    #[test]
    fn missed_updates_are_replayed_at_the_next_event_one_per_t_update() {
        let run = |t_ms| {
            let mut q = pie(PieParams::default());
            fill(&mut q, 20, 0);
            for k in 1..=20 {
                q.dequeue(Time::from_ms(k));
            }
            fill(&mut q, 1, 31);
            assert_eq!(q.burst_allowance_ms(), 150);
            fill(&mut q, 1, t_ms);
            (q.burst_allowance_ms(), q.last_update)
        };
        assert_eq!(run(180), (30, 150));
        assert_eq!(run(181), (0, 180));
    }

    /// A queue of 10 packets whose update state says: drop every arrival.
    fn condemned(burst: u32, qdelay_old: u32, drop_prob: f64) -> Pie {
        let mut q = pie(PieParams::default());
        fill(&mut q, 10, 0);
        (q.burst_allowance, q.qdelay_old, q.drop_prob) = (burst, qdelay_old, drop_prob);
        q
    }

    // pie_packet_queue.cc drop_early(): burst allowance first, then the light-load guard
    // (qdelay_old < qdelay_ref / 2 and drop_prob < 0.2), then under 2 x 1504 B queued.
    #[test]
    fn early_drops_wait_for_the_burst_allowance_and_spare_a_lightly_loaded_or_short_queue() {
        let mut d = Vec::new();
        let mut q = condemned(1, 100, 1.0);
        q.enqueue(pkt(10), Time::ZERO, &mut d);
        assert!(d.is_empty(), "1 ms of burst allowance left");
        let mut q = condemned(0, 100, 1.0);
        q.enqueue(pkt(10), Time::ZERO, &mut d);
        assert_eq!(d.len(), 1, "no allowance, p = 1");
        d.clear();
        // qdelay_ref 15: 15 / 2 = 7 in integers, so 6 ms is light load, 7 ms is not.
        let mut q = condemned(0, 6, 0.19);
        q.rng = ccscope_core::rng::stream(9, 9);
        for s in 0..1000 {
            q.enqueue(pkt(s), Time::ZERO, &mut d);
            q.fifo.pop();
        }
        assert!(d.is_empty());
        let mut q = condemned(0, 7, 0.19);
        for s in 0..1000 {
            let n = d.len();
            q.enqueue(pkt(s), Time::ZERO, &mut d);
            if d.len() == n {
                q.fifo.pop();
            }
        }
        let rate = d.len() as f64 / 1000.0;
        assert!((rate - 0.19).abs() < 0.04, "drop rate {rate}");
        d.clear();
        // Two 1500 B packets (3000 B) are under 2 x 1504 B: never dropped early.
        let mut q = condemned(0, 100, 1.0);
        while q.fifo.packets() > 2 {
            q.fifo.pop();
        }
        q.enqueue(pkt(10), Time::ZERO, &mut d);
        assert!(d.is_empty());
        q.enqueue(pkt(11), Time::ZERO, &mut d);
        assert_eq!(d.len(), 1, "4500 B queued");
    }

    #[test]
    fn the_buffer_limit_drops_before_any_random_draw() {
        let mut q = pie(PieParams {
            limit: Limits {
                packets: Some(3),
                bytes: None,
            },
            ..PieParams::default()
        });
        assert_eq!(fill(&mut q, 5, 0), 2);
        assert_eq!(q.fifo.packets(), 3);
    }

    // Both calls run the update and the rate estimate, so an idle link may not skip them.
    #[test]
    fn a_packet_reaching_an_empty_pie_queue_goes_through_enqueue_and_dequeue() {
        let mut q = AnyQueue::new(
            &QueueConfig::Pie(PieParams::default()),
            ccscope_core::rng::stream(1, 1),
            Bandwidth(0),
        );
        assert_eq!(
            q.through_empty(pkt(1), Time::ZERO, &mut Vec::new()),
            Err(pkt(1))
        );
    }

    // The skip over fixed-point updates must give what one update per period gives.
    #[test]
    fn a_long_gap_replays_to_the_same_state_as_one_update_per_period() {
        for (queued, t_update_ms) in [(0, 1), (3, 1), (20, 30), (40, 7)] {
            let mk = || {
                let mut q = pie(PieParams {
                    t_update_ms,
                    ..PieParams::default()
                });
                fill(&mut q, 40, 0);
                for k in 1..=40 - queued {
                    q.dequeue(Time::from_ms(k));
                }
                q.drop_prob = 0.5;
                q
            };
            let (mut a, mut b) = (mk(), mk());
            a.calculate_drop_prob(100_000);
            for t in 41..=100_000 {
                b.calculate_drop_prob(t);
            }
            assert_eq!(
                (a.state(), a.last_update),
                (b.state(), b.last_update),
                "{queued} {t_update_ms}"
            );
        }
    }

    #[test]
    fn an_empty_dequeue_changes_nothing() {
        let mut q = pie(PieParams::default());
        assert!(q.dequeue(Time::from_ms(1000)).is_none());
        assert_eq!(q.last_update, 0);
    }

    #[derive(Clone, Debug)]
    enum Op {
        Arrive(u32),
        Serve,
        Wait(u64),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            (40u32..1505).prop_map(Op::Arrive),
            Just(Op::Serve),
            (0u64..40_000_000).prop_map(Op::Wait),
        ]
    }

    /// Drive an `AnyQueue::Pie` through `ops`: (seqs dropped, seqs served).
    fn drive(ops: &[Op], limit: Option<u64>, seed: u64) -> (Vec<u64>, Vec<u64>) {
        let p = PieParams {
            limit: Limits {
                packets: limit,
                bytes: None,
            },
            ..PieParams::default()
        };
        let mut q = AnyQueue::new(
            &QueueConfig::Pie(p),
            ccscope_core::rng::stream(seed, 1),
            Bandwidth(0),
        );
        let (mut t, mut seq) = (Time::ZERO, 0);
        let (mut drops, mut served) = (Vec::new(), Vec::new());
        for o in ops {
            match *o {
                Op::Arrive(b) => {
                    let before = q.bytes();
                    let n = drops.len();
                    q.enqueue(Packet::data(0, seq, b, t), t, &mut drops);
                    // Nothing is dropped early below 2 x 1504 B queued (drop_early's last guard).
                    assert!(drops.len() == n || before >= 2 * PIE_PACKET_SIZE || limit.is_some());
                    seq += 1;
                }
                Op::Serve => served.extend(q.dequeue(t, &mut drops).map(|p| p.seq)),
                Op::Wait(dt) => t += ccscope_core::Dur(dt),
            }
            let AnyQueue::Pie(pie) = &q else {
                unreachable!()
            };
            assert!((0.0..=1.0).contains(&pie.drop_prob()));
            assert!(pie.burst_allowance_ms() <= pie.p.max_burst_ms);
            assert!(limit.is_none_or(|l| q.packets() <= l));
            // Every packet offered is queued, served or dropped, once.
            assert_eq!(q.packets() + served.len() as u64 + drops.len() as u64, seq);
        }
        (drops.iter().map(|p| p.seq).collect(), served)
    }

    proptest::proptest! {
        #[test]
        fn pie_conserves_packets_keeps_its_bounds_and_replays_with_a_seed(
            ops in proptest::collection::vec(op(), 1..400),
            limit in proptest::option::of(1u64..50),
        ) {
            let a = drive(&ops, limit, 7);
            proptest::prop_assert_eq!(&a, &drive(&ops, limit, 7));
            let mut all: Vec<u64> = a.0.iter().chain(&a.1).copied().collect();
            all.sort();
            all.dedup();
            proptest::prop_assert_eq!(all.len(), a.0.len() + a.1.len());
        }
    }
}
