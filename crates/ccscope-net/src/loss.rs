//! Random loss in front of a queue: Bernoulli, or Gilbert-Elliott two-state correlated loss.

use ccscope_core::rng::{Rng, RngExt};

#[derive(Clone, Debug, Default, PartialEq)]
pub enum LossConfig {
    #[default]
    None,
    /// Each packet is lost independently with probability `p`.
    Bernoulli { p: f64 },
    /// Gilbert-Elliott: a Markov chain over Good/Bad stepped once per packet; each state has its own
    /// loss probability. Mean burst length 1 / p_bg; stationary P(Bad) = p_gb / (p_gb + p_bg).
    GilbertElliott { p_gb: f64, p_bg: f64, loss_good: f64, loss_bad: f64 },
    /// Drop exactly the packets with these arrival indices (0-based, sorted), as ns-3's
    /// `ReceiveListErrorModel`: for scripted tests.
    List(Vec<u64>),
}

impl LossConfig {
    /// Long-run loss rate.
    pub fn mean_loss(&self) -> f64 {
        match *self {
            LossConfig::None => 0.0,
            LossConfig::Bernoulli { p } => p,
            LossConfig::List(_) => 0.0,
            LossConfig::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => {
                let pi_bad = if p_gb + p_bg > 0.0 { p_gb / (p_gb + p_bg) } else { 0.0 };
                (1.0 - pi_bad) * loss_good + pi_bad * loss_bad
            }
        }
    }
}

#[derive(Debug)]
pub struct LossModel {
    cfg: LossConfig,
    rng: Rng,
    bad: bool,
    /// Packets offered so far, and the next index of a `List` to drop.
    seen: u64,
    next: usize,
}

impl LossModel {
    pub fn new(cfg: LossConfig, rng: Rng) -> Self {
        LossModel { cfg, rng, bad: false, seen: 0, next: 0 }
    }

    /// Decide the fate of the next packet: true drops it.
    #[inline]
    pub fn drops(&mut self) -> bool {
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
            LossConfig::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => {
                let flip = if self.bad { p_bg } else { p_gb };
                if self.rng.gen::<f64>() < flip {
                    self.bad = !self.bad;
                }
                let p = if self.bad { loss_bad } else { loss_good };
                p > 0.0 && self.rng.gen::<f64>() < p
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccscope_core::rng::stream;

    #[test]
    fn bernoulli_rate_matches_p() {
        let mut m = LossModel::new(LossConfig::Bernoulli { p: 0.1 }, stream(1, 0));
        let n = 200_000;
        let lost = (0..n).filter(|_| m.drops()).count();
        assert!((lost as f64 / n as f64 - 0.1).abs() < 0.003);
    }

    #[test]
    fn gilbert_elliott_losses_come_in_bursts_at_the_stationary_rate() {
        let cfg = LossConfig::GilbertElliott { p_gb: 0.01, p_bg: 0.25, loss_good: 0.0, loss_bad: 1.0 };
        let mean = cfg.mean_loss();
        let mut m = LossModel::new(cfg, stream(2, 0));
        let n = 400_000;
        let seq: Vec<bool> = (0..n).map(|_| m.drops()).collect();
        let lost = seq.iter().filter(|&&x| x).count() as f64;
        assert!((lost / n as f64 - mean).abs() < 0.004, "{} vs {mean}", lost / n as f64);
        // P(loss | previous lost) = 1 - p_bg = 0.75, far above the marginal ~0.038.
        let pairs = seq.windows(2).filter(|w| w[0]).count() as f64;
        let both = seq.windows(2).filter(|w| w[0] && w[1]).count() as f64;
        assert!((both / pairs - 0.75).abs() < 0.03);
    }
}
