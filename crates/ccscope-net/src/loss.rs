//! Random loss in front of a queue: Bernoulli, Gilbert-Elliott two-state correlated loss, and paper
//! 002's round-correlated loss (eq. 7) with its time-window variant.

use std::ops::Range;

use ccscope_core::rng::{Rng, RngExt};
use ccscope_core::{Dur, Time};

use crate::Packet;

#[derive(Clone, Debug, Default, PartialEq)]
pub enum LossConfig {
    #[default]
    None,
    /// Each packet is lost independently with probability `p`.
    Bernoulli { p: f64 },
    /// Gilbert-Elliott: a Markov chain over Good/Bad stepped once per packet; each state has its own
    /// loss probability. Mean burst length 1 / p_bg; stationary P(Bad) = p_gb / (p_gb + p_bg).
    GilbertElliott {
        p_gb: f64,
        p_bg: f64,
        loss_good: f64,
        loss_bad: f64,
    },
    /// Drop exactly the packets with these arrival indices (0-based, sorted), as ns-3's
    /// `ReceiveListErrorModel`: for scripted tests.
    List(Vec<u64>),
    /// Paper 002 eq. 7 as specs/002-cmt.md A12 reads it, per flow: until a packet of the sender's
    /// current round (`Packet::round`) is lost, each is lost with probability `p`; after that loss
    /// every later packet of the round is. Retransmissions (`Packet::RETX`) always pass and leave the
    /// round's state alone. A packet with round 0 (ACKs, a transport that counts no rounds) is a round
    /// of its own: lost with probability `p`, independently.
    RoundCorrelated { p: f64 },
    /// A12's robustness check, the round replaced by a time window, per flow: a packet is lost with
    /// probability `p`; every packet of the same flow that reaches the link less than `window` after
    /// such a loss is lost too. Retransmissions always pass, as in `RoundCorrelated`.
    BurstAfterLoss { p: f64, window: Dur },
}

impl LossConfig {
    /// Long-run fraction of packets lost, where the configuration alone fixes it. `None` where it
    /// depends on the traffic: `List` (on how many packets come), `RoundCorrelated` and
    /// `BurstAfterLoss` (on the rounds' sizes or the packets per window; their `p` is the
    /// probability of a loss event per packet while none is under way, not the loss rate).
    pub fn mean_loss(&self) -> Option<f64> {
        match *self {
            LossConfig::None => Some(0.0),
            LossConfig::Bernoulli { p } => Some(p),
            LossConfig::GilbertElliott {
                p_gb,
                p_bg,
                loss_good,
                loss_bad,
            } => {
                let pi_bad = if p_gb + p_bg > 0.0 {
                    p_gb / (p_gb + p_bg)
                } else {
                    0.0
                };
                Some((1.0 - pi_bad) * loss_good + pi_bad * loss_bad)
            }
            LossConfig::List(_)
            | LossConfig::RoundCorrelated { .. }
            | LossConfig::BurstAfterLoss { .. } => None,
        }
    }

    /// It keeps state per flow (`LossModel::with_flows` sizes it).
    pub fn per_flow(&self) -> bool {
        matches!(
            self,
            LossConfig::RoundCorrelated { .. } | LossConfig::BurstAfterLoss { .. }
        )
    }
}

/// One flow's state in the round-correlated and time-window models.
#[derive(Clone, Copy, Debug, Default)]
struct FlowLoss {
    /// RoundCorrelated: the round of the flow's latest packet (0: none yet), and whether a packet of
    /// it was lost.
    round: u32,
    lost: bool,
    /// BurstAfterLoss: the flow's packets are lost until this time.
    until: Time,
}

#[derive(Debug)]
pub struct LossModel {
    cfg: LossConfig,
    rng: Rng,
    bad: bool,
    /// Packets offered so far, and the next index of a `List` to drop.
    seen: u64,
    next: usize,
    /// Per-flow state of flows `first_flow..first_flow + flows.len()` (per-flow models only).
    first_flow: u32,
    flows: Vec<FlowLoss>,
}

impl LossModel {
    pub fn new(cfg: LossConfig, rng: Rng) -> Self {
        LossModel {
            cfg,
            rng,
            bad: false,
            seen: 0,
            next: 0,
            first_flow: 0,
            flows: Vec::new(),
        }
    }

    /// The flows whose packets may cross the link: a per-flow model keeps a state for each, allocated
    /// here once. A packet of a flow outside the range is judged alone (lost with probability `p`).
    pub fn with_flows(mut self, flows: Range<u32>) -> Self {
        if self.cfg.per_flow() {
            self.first_flow = flows.start;
            self.flows = vec![FlowLoss::default(); flows.len()];
        }
        self
    }

    /// Decide the fate of `pkt`, reaching the link at `now`: true drops it. A lossless link (most
    /// of them) answers inline; the models are out of line.
    #[inline(always)]
    pub fn drops(&mut self, pkt: &Packet, now: Time) -> bool {
        if let LossConfig::None = self.cfg {
            self.seen += 1;
            return false;
        }
        self.drops_modelled(pkt, now)
    }

    #[inline(never)]
    fn drops_modelled(&mut self, pkt: &Packet, now: Time) -> bool {
        let i = self.seen;
        self.seen += 1;
        match self.cfg {
            LossConfig::None => false,
            LossConfig::List(ref l) => {
                if l.get(self.next) == Some(&i) {
                    self.next += 1;
                    true
                } else {
                    false
                }
            }
            LossConfig::Bernoulli { p } => self.rng.gen::<f64>() < p,
            LossConfig::GilbertElliott {
                p_gb,
                p_bg,
                loss_good,
                loss_bad,
            } => {
                let flip = if self.bad { p_bg } else { p_gb };
                if self.rng.gen::<f64>() < flip {
                    self.bad = !self.bad;
                }
                let p = if self.bad { loss_bad } else { loss_good };
                p > 0.0 && self.rng.gen::<f64>() < p
            }
            LossConfig::RoundCorrelated { p } => {
                // A12: retransmissions are exempt.
                if pkt.round & Packet::RETX != 0 {
                    return false;
                }
                let slot = pkt.flow.wrapping_sub(self.first_flow) as usize;
                debug_assert!(
                    pkt.round == 0 || slot < self.flows.len(),
                    "flow {} has no loss state on this link",
                    pkt.flow
                );
                let Some(f) = self.flows.get_mut(slot).filter(|_| pkt.round != 0) else {
                    return self.rng.gen::<f64>() < p;
                };
                // A sender's rounds only grow and a link keeps a flow's order: another number is a new round.
                if f.round != pkt.round {
                    f.round = pkt.round;
                    f.lost = false;
                }
                // Eq. 7: lost with probability p while nothing of the round is lost, then with probability 1.
                if !f.lost {
                    f.lost = self.rng.gen::<f64>() < p;
                }
                f.lost
            }
            LossConfig::BurstAfterLoss { p, window } => {
                if pkt.round & Packet::RETX != 0 {
                    return false;
                }
                let slot = pkt.flow.wrapping_sub(self.first_flow) as usize;
                debug_assert!(
                    slot < self.flows.len(),
                    "flow {} has no loss state on this link",
                    pkt.flow
                );
                let Some(f) = self.flows.get_mut(slot) else {
                    return self.rng.gen::<f64>() < p;
                };
                if now < f.until {
                    return true;
                }
                let lost = self.rng.gen::<f64>() < p;
                if lost {
                    f.until = now + window;
                }
                lost
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccscope_core::rng::stream;

    /// A data packet of `flow` in `round` (with `Packet::RETX` for a retransmission).
    fn pkt(flow: u32, round: u32) -> Packet {
        let mut p = Packet::data(flow, 0, 1500, Time::ZERO);
        p.round = round;
        p
    }

    fn round_correlated(p: f64, seed: u64) -> LossModel {
        LossModel::new(LossConfig::RoundCorrelated { p }, stream(seed, 0)).with_flows(0..2)
    }

    /// Packets lost in a round of `x` packets of flow 0.
    fn lost_in_round(m: &mut LossModel, round: u32, x: usize) -> usize {
        (0..x)
            .filter(|_| m.drops(&pkt(0, round), Time::ZERO))
            .count()
    }

    /// `n` standard deviations of a binomial count (n trials of probability q) around its mean.
    fn binomial_band(trials: f64, q: f64, n: f64) -> std::ops::RangeInclusive<f64> {
        let (mean, sd) = (trials * q, (trials * q * (1.0 - q)).sqrt());
        mean - n * sd..=mean + n * sd
    }

    #[test]
    fn bernoulli_rate_matches_p() {
        let mut m = LossModel::new(LossConfig::Bernoulli { p: 0.1 }, stream(1, 0));
        let n = 200_000;
        let lost = (0..n).filter(|_| m.drops(&pkt(0, 0), Time::ZERO)).count();
        assert!((lost as f64 / n as f64 - 0.1).abs() < 0.003);
    }

    #[test]
    fn gilbert_elliott_losses_come_in_bursts_at_the_stationary_rate() {
        let cfg = LossConfig::GilbertElliott {
            p_gb: 0.01,
            p_bg: 0.25,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let mean = cfg.mean_loss().expect("fixed by the configuration");
        let mut m = LossModel::new(cfg, stream(2, 0));
        let n = 400_000;
        let seq: Vec<bool> = (0..n).map(|_| m.drops(&pkt(0, 0), Time::ZERO)).collect();
        let lost = seq.iter().filter(|&&x| x).count() as f64;
        assert!(
            (lost / n as f64 - mean).abs() < 0.004,
            "{} vs {mean}",
            lost / n as f64
        );
        // P(loss | previous lost) = 1 - p_bg = 0.75, far above the marginal ~0.038.
        let pairs = seq.windows(2).filter(|w| w[0]).count() as f64;
        let both = seq.windows(2).filter(|w| w[0] && w[1]).count() as f64;
        assert!((both / pairs - 0.75).abs() < 0.03);
    }

    #[test]
    fn after_the_first_loss_the_rest_of_the_round_is_lost_but_retransmissions_pass() {
        let mut m = round_correlated(0.05, 3);
        let fate: Vec<bool> = (0..200).map(|_| m.drops(&pkt(0, 1), Time::ZERO)).collect();
        let first = fate
            .iter()
            .position(|&x| x)
            .expect("200 packets at p = 0.05: a loss");
        assert!(
            first > 0,
            "this seed loses a later packet, so the clean head is tested too"
        );
        assert!(
            fate[..first].iter().all(|&x| !x) && fate[first..].iter().all(|&x| x),
            "{fate:?}"
        );
        // Retransmissions in the middle of the lost tail pass and leave it lost.
        for _ in 0..5 {
            assert!(!m.drops(&pkt(0, 1 | Packet::RETX), Time::ZERO));
            assert!(m.drops(&pkt(0, 1), Time::ZERO));
        }
        // Another flow's round is its own.
        assert!(
            !m.drops(&pkt(1, 1), Time::ZERO),
            "flow 1's first packet (seed 3)"
        );
        // The next round starts clean: its first packets pass (this seed), not the whole round lost.
        let next: Vec<bool> = (0..5).map(|_| m.drops(&pkt(0, 2), Time::ZERO)).collect();
        assert_eq!(next, [false; 5]);
    }

    #[test]
    fn a_retransmission_never_starts_a_round_or_draws_a_loss() {
        // p = 1: every packet that is judged is lost, so a passing packet was not judged.
        let mut m = round_correlated(1.0, 4);
        assert!(m.drops(&pkt(0, 1), Time::ZERO));
        assert!(!m.drops(&pkt(0, 2 | Packet::RETX), Time::ZERO));
        // Round 2's retransmission did not reset the state: round 1's next packet is still lost,
        // and round 2's first new packet starts its round (lost at p = 1).
        assert!(m.drops(&pkt(0, 1), Time::ZERO));
        assert!(m.drops(&pkt(0, 2), Time::ZERO));
    }

    #[test]
    fn packets_without_a_round_are_lost_independently_with_probability_p() {
        let mut m = round_correlated(0.1, 5);
        let seq: Vec<bool> = (0..200_000)
            .map(|_| m.drops(&pkt(0, 0), Time::ZERO))
            .collect();
        let lost = seq.iter().filter(|&&x| x).count() as f64;
        assert!(
            binomial_band(seq.len() as f64, 0.1, 4.5).contains(&lost),
            "{lost}"
        );
        // No correlation: P(loss | previous lost) is p again.
        let pairs = seq.windows(2).filter(|w| w[0]).count() as f64;
        let both = seq.windows(2).filter(|w| w[0] && w[1]).count() as f64;
        assert!(
            binomial_band(pairs, 0.1, 4.5).contains(&both),
            "{both} of {pairs}"
        );
    }

    #[test]
    fn losses_per_round_follow_eq_7() {
        // Paper 002 eq. 7: P(0, x) = (1-p)^x; P(g, x) = p (1-p)^(x-g) for 1 <= g <= x.
        let (p, x, rounds) = (0.05, 20usize, 100_000u32);
        let mut m = round_correlated(p, 6);
        let mut count = vec![0u32; x + 1];
        for r in 1..=rounds {
            count[lost_in_round(&mut m, r, x)] += 1;
        }
        let n = rounds as f64;
        for (g, &c) in count.iter().enumerate() {
            let want = if g == 0 {
                (1.0 - p).powi(x as i32)
            } else {
                p * (1.0 - p).powi((x - g) as i32)
            };
            // 4.5 binomial standard deviations per class: 21 classes wrongly fail with p < 1e-4.
            assert!(
                binomial_band(n, want, 4.5).contains(&(c as f64)),
                "g = {g}: {c} rounds, want {:.0}",
                n * want
            );
        }
    }

    #[test]
    fn after_a_loss_the_flow_loses_every_packet_for_the_window() {
        let window = Dur::from_ms(10);
        let mut m = LossModel::new(LossConfig::BurstAfterLoss { p: 0.01, window }, stream(7, 0))
            .with_flows(0..2);
        // Flow 0 sends a packet every ms for 20 s: each burst is the 10 packets of its window.
        let fate: Vec<bool> = (0..20_000u64)
            .map(|t| m.drops(&pkt(0, 0), Time::from_ms(t)))
            .collect();
        let starts: Vec<usize> = (0..fate.len())
            .filter(|&t| fate[t] && (t == 0 || !fate[t - 1]))
            .collect();
        assert!(starts.len() > 50, "{} bursts", starts.len());
        for &s in &starts {
            let len = fate[s..].iter().take_while(|&&x| x).count();
            // A burst is one window (10 packets), or several back to back when a loss follows it at once.
            assert!(len >= 10, "burst at {s} ms of {len} packets");
        }
        let lone = starts
            .iter()
            .filter(|&&s| fate[s..].iter().take_while(|&&x| x).count() == 10)
            .count();
        assert!(
            lone as f64 > 0.9 * starts.len() as f64,
            "a burst ends after its window: {lone} of {}",
            starts.len()
        );
        // Inside a window: retransmissions pass, another flow is not touched.
        let s = Time::from_ms(starts[0] as u64);
        let mut m = LossModel::new(LossConfig::BurstAfterLoss { p: 1.0, window }, stream(7, 0))
            .with_flows(0..2);
        assert!(m.drops(&pkt(0, 0), s));
        assert!(!m.drops(&pkt(0, Packet::RETX), s + Dur::from_ms(1)));
        assert!(m.drops(&pkt(0, 0), s + Dur::from_ms(9)));
        let mut other = LossModel::new(LossConfig::BurstAfterLoss { p: 0.0, window }, stream(7, 0))
            .with_flows(0..2);
        other.flows[0].until = s + window;
        assert!(
            other.drops(&pkt(0, 0), s + Dur::from_ms(9)),
            "inside flow 0's window"
        );
        assert!(
            !other.drops(&pkt(1, 0), s + Dur::from_ms(9)),
            "flow 1 has no window open"
        );
        assert!(
            !other.drops(&pkt(0, 0), s + window),
            "the window is half-open"
        );
    }

    #[test]
    fn mean_loss_is_only_given_where_the_configuration_fixes_it() {
        assert_eq!(LossConfig::Bernoulli { p: 0.01 }.mean_loss(), Some(0.01));
        assert_eq!(LossConfig::RoundCorrelated { p: 0.01 }.mean_loss(), None);
        assert_eq!(
            LossConfig::BurstAfterLoss {
                p: 0.01,
                window: Dur::from_ms(5)
            }
            .mean_loss(),
            None
        );
        assert_eq!(LossConfig::List(vec![3]).mean_loss(), None);
    }
}
