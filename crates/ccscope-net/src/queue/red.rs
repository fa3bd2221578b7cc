//! Random Early Detection (Floyd & Jacobson, 1993), thresholds on the average queue in bytes.
//!
//! Paper 000 Table 1 runs RED with min 3 Mbit, max 9 Mbit and a drop probability of 0.1%; those are
//! the defaults here (375,000 B, 1,125,000 B, max_p 0.001) with the classic weight w_q = 0.002.

use ccscope_core::rng::{Rng, RngExt};
use ccscope_core::{Bandwidth, Time};

use super::{Fifo, Limits};
use crate::Packet;

#[derive(Clone, Debug, PartialEq)]
pub struct RedParams {
    /// Average queue (bytes) below which nothing is dropped.
    pub min_bytes: f64,
    /// Average queue (bytes) at which the drop probability reaches `max_p` (every arrival dropped above).
    pub max_bytes: f64,
    /// Drop probability at `max_bytes`.
    pub max_p: f64,
    /// EWMA weight of the average queue (F&J §4: w_q).
    pub weight: f64,
    /// Between max and 2 max, raise the probability linearly from max_p to 1 instead of dropping all.
    pub gentle: bool,
    /// Physical buffer; arrivals beyond it are dropped whatever the average says.
    pub limit: Limits,
    /// Typical packet size, to age the average across idle periods (F&J §11: m = idle / s).
    pub mean_packet_bytes: u32,
}

impl Default for RedParams {
    fn default() -> Self {
        RedParams {
            min_bytes: 3e6 / 8.0,
            max_bytes: 9e6 / 8.0,
            max_p: 0.001,
            weight: 0.002,
            gentle: false,
            limit: Limits::default(),
            mean_packet_bytes: 1500,
        }
    }
}

#[derive(Debug)]
pub struct Red {
    p: RedParams,
    pub(super) fifo: Fifo,
    rng: Rng,
    link_rate: Bandwidth,
    avg: f64,
    /// Packets since the last drop while between the thresholds (F&J's `count`, -1 when below min).
    count: i64,
    idle_since: Option<Time>,
}

impl Red {
    pub fn new(p: RedParams, rng: Rng, link_rate: Bandwidth) -> Self {
        Red {
            p,
            fifo: Fifo::with_capacity(1024),
            rng,
            link_rate,
            avg: 0.0,
            count: -1,
            idle_since: Some(Time::ZERO),
        }
    }

    pub fn average_bytes(&self) -> f64 {
        self.avg
    }

    fn update_average(&mut self, now: Time) {
        let w = self.p.weight;
        match self.idle_since {
            Some(since) if self.fifo.packets() == 0 => {
                // F&J §11: decay as if m small packets had been sent while the queue sat empty.
                let s = self
                    .link_rate
                    .tx_time(self.p.mean_packet_bytes as u64)
                    .as_ns()
                    .max(1);
                let m = now.since(since).as_ns() as f64 / s as f64;
                self.avg *= (1.0 - w).powf(m);
            }
            _ => self.avg = (1.0 - w) * self.avg + w * self.fifo.bytes() as f64,
        }
        self.idle_since = None;
    }

    /// Drop probability for the current average (F&J §4 pb, with the gentle extension).
    fn base_probability(&self) -> Option<f64> {
        let (min, max) = (self.p.min_bytes, self.p.max_bytes);
        if self.avg < min {
            None
        } else if self.avg < max {
            Some(self.p.max_p * (self.avg - min) / (max - min))
        } else if self.p.gentle && self.avg < 2.0 * max {
            Some(self.p.max_p + (1.0 - self.p.max_p) * (self.avg - max) / max)
        } else {
            Some(1.0)
        }
    }

    pub(super) fn enqueue(&mut self, pkt: Packet, now: Time, drops: &mut Vec<Packet>) {
        self.update_average(now);
        let drop = match self.base_probability() {
            None => {
                self.count = -1;
                false
            }
            Some(pb) if pb >= 1.0 => {
                self.count = 0;
                true
            }
            Some(pb) => {
                self.count += 1;
                // F&J §4: pa = pb / (1 - count pb) spreads drops evenly between them.
                let denom = 1.0 - self.count as f64 * pb;
                let pa = if denom <= 0.0 {
                    1.0
                } else {
                    (pb / denom).min(1.0)
                };
                let hit = self.rng.gen::<f64>() < pa;
                if hit {
                    self.count = 0;
                }
                hit
            }
        };
        if drop
            || !self.p.limit.fits(
                self.fifo.packets() + 1,
                self.fifo.bytes() + pkt.bytes as u64,
            )
        {
            drops.push(pkt);
        } else {
            self.fifo.push(pkt);
        }
    }

    pub(super) fn dequeue(&mut self, now: Time) -> Option<Packet> {
        let p = self.fifo.pop();
        if self.fifo.packets() == 0 && self.idle_since.is_none() {
            self.idle_since = Some(now);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{AnyQueue, QueueConfig};

    fn red(p: RedParams) -> AnyQueue {
        AnyQueue::new(
            &QueueConfig::Red(p),
            ccscope_core::rng::stream(3, 3),
            Bandwidth::from_mbps(10.0),
        )
    }

    #[test]
    fn below_min_threshold_nothing_is_dropped() {
        let mut q = red(RedParams {
            weight: 1.0,
            ..Default::default()
        });
        let mut d = Vec::new();
        for s in 0..200 {
            q.enqueue(Packet::data(0, s, 1500, Time(0)), Time(0), &mut d);
        }
        // 200 x 1500 B = 300 kB < 375 kB.
        assert!(d.is_empty());
    }

    #[test]
    fn average_above_max_drops_every_arrival() {
        let mut q = red(RedParams {
            weight: 1.0,
            ..Default::default()
        });
        let mut d = Vec::new();
        for s in 0..1000 {
            q.enqueue(Packet::data(0, s, 1500, Time(0)), Time(0), &mut d);
        }
        // With w = 1 the average is the instantaneous queue: it stops growing at max (750 packets).
        assert_eq!(q.bytes(), 1_125_000);
        assert_eq!(d.len(), 250);
    }

    #[test]
    fn drop_rate_between_thresholds_is_near_the_uniformised_probability() {
        // Hold the average at the midpoint: pb = max_p / 2; F&J's count makes drops ~ every 1/pb.
        let p = RedParams {
            min_bytes: 0.0,
            max_bytes: 2.0,
            max_p: 0.1,
            weight: 0.0,
            ..Default::default()
        };
        let mut q = red(p);
        if let AnyQueue::Red(r) = &mut q {
            r.avg = 1.0;
        }
        let mut d = Vec::new();
        let n = 100_000;
        for s in 0..n {
            q.enqueue(Packet::data(0, s, 1, Time(0)), Time(0), &mut d);
        }
        // count is 1 for the first packet after a drop, so the gap is uniform on 1..1/pb - 1:
        // mean 1 / (2 pb) = 10 packets, against 20 for independent drops with probability pb.
        let rate = d.len() as f64 / n as f64;
        assert!((rate - 0.1).abs() < 0.003, "drop rate {rate}");
    }

    #[test]
    fn idle_time_ages_the_average() {
        let mut q = red(RedParams::default());
        if let AnyQueue::Red(r) = &mut q {
            r.avg = 1e6;
            r.idle_since = Some(Time::ZERO);
        }
        let mut d = Vec::new();
        // One second idle at 10 Mbit/s = 833 packet times: avg *= 0.998^833 ~ 0.189.
        q.enqueue(
            Packet::data(0, 0, 1500, Time::from_ms(1000)),
            Time::from_ms(1000),
            &mut d,
        );
        let AnyQueue::Red(r) = &q else { unreachable!() };
        assert!((r.average_bytes() / 1e6 - 0.998f64.powf(10e6 / 12000.0)).abs() < 1e-3);
    }
}
