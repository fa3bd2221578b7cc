//! HyStart++ (RFC 9406): leave slow start before the queue overflows, on a rise of the per-round
//! minimum RTT, through a few rounds of Conservative Slow Start (CSS).

use ccscope_core::{Dur, Time};

/// RFC 9406 §4.3 constants.
const MIN_RTT_THRESH: Dur = Dur::from_ms(4);
const MAX_RTT_THRESH: Dur = Dur::from_ms(16);
const MIN_RTT_DIVISOR: u64 = 8;
const N_RTT_SAMPLE: u32 = 8;
const CSS_GROWTH_DIVISOR: f64 = 4.0;
const CSS_ROUNDS: u32 = 5;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    SlowStart,
    /// Conservative slow start since this round's start, with the baseline minimum RTT.
    Css {
        rounds: u32,
        baseline: Dur,
    },
    /// HyStart++ has ended slow start; the caller sets ssthresh = cwnd and runs congestion avoidance.
    Done,
}

/// Per-connection HyStart++ state, driven by the ACKs of slow start.
#[derive(Clone, Debug)]
pub struct HyStart {
    phase: Phase,
    /// The round ends when a packet at or beyond this sequence number is ACKed (RFC 9406 §4.2 windowEnd).
    window_end: Option<u64>,
    last_round_min: Option<Dur>,
    current_round_min: Option<Dur>,
    samples: u32,
}

impl Default for HyStart {
    fn default() -> Self {
        HyStart {
            phase: Phase::SlowStart,
            window_end: None,
            last_round_min: None,
            current_round_min: None,
            samples: 0,
        }
    }
}

impl HyStart {
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Start over (after an RTO or a congestion event the next slow start begins afresh, §4.2).
    pub fn reset(&mut self) {
        *self = HyStart::default();
    }

    /// Process one ACK of slow start: `seq` is the acknowledged packet, `last_sent` the highest
    /// sequence sent. Returns the factor the slow-start increase is divided by (1 in slow start,
    /// CSS_GROWTH_DIVISOR in CSS); after it returns with `phase() == Done` slow start is over.
    pub fn on_ack(&mut self, _now: Time, seq: u64, last_sent: u64, rtt: Dur) -> f64 {
        if self.phase == Phase::Done {
            return 1.0;
        }
        let round_over = self.window_end.is_none_or(|end| seq >= end);
        if round_over {
            // §4.2: a new round: remember the last round's minimum, restart sampling.
            self.window_end = Some(last_sent + 1);
            if self.current_round_min.is_some() {
                self.last_round_min = self.current_round_min;
            }
            self.current_round_min = None;
            self.samples = 0;
            if let Phase::Css { rounds, baseline } = self.phase {
                // §4.2: CSS lasts CSS_ROUNDS rounds, then congestion avoidance.
                let rounds = rounds + 1;
                self.phase = if rounds >= CSS_ROUNDS {
                    Phase::Done
                } else {
                    Phase::Css { rounds, baseline }
                };
                if self.phase == Phase::Done {
                    return CSS_GROWTH_DIVISOR;
                }
            }
        }
        self.current_round_min = Some(self.current_round_min.map_or(rtt, |m| m.min(rtt)));
        self.samples += 1;
        match self.phase {
            Phase::SlowStart => {
                if let (Some(last), Some(cur)) = (self.last_round_min, self.current_round_min) {
                    if self.samples >= N_RTT_SAMPLE {
                        // §4.2: RttThresh = clamp(lastRoundMinRTT / 8, 4 ms, 16 ms).
                        let thresh = Dur(last.as_ns() / MIN_RTT_DIVISOR)
                            .clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                        if cur >= last + thresh {
                            self.phase = Phase::Css {
                                rounds: 0,
                                baseline: cur,
                            };
                            return CSS_GROWTH_DIVISOR;
                        }
                    }
                }
                1.0
            }
            Phase::Css { baseline, .. } => {
                // §4.2: a spurious exit: the RTT fell back below the baseline, resume slow start.
                if self.samples >= N_RTT_SAMPLE
                    && self.current_round_min.is_some_and(|c| c < baseline)
                {
                    self.phase = Phase::SlowStart;
                    return 1.0;
                }
                CSS_GROWTH_DIVISOR
            }
            Phase::Done => 1.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(h: &mut HyStart, first_seq: u64, n: u64, rtt_ms: u64) -> f64 {
        let mut div = 1.0;
        for s in first_seq..first_seq + n {
            // When a round starts, everything up to its last packet has been sent.
            div = h.on_ack(Time::ZERO, s, first_seq + n - 1, Dur::from_ms(rtt_ms));
        }
        div
    }

    #[test]
    fn a_flat_rtt_stays_in_slow_start() {
        let mut h = HyStart::default();
        let mut seq = 0;
        for r in 0..6 {
            let n = 10 << r;
            assert_eq!(round(&mut h, seq, n, 100), 1.0);
            seq += n;
        }
        assert_eq!(h.phase(), Phase::SlowStart);
    }

    #[test]
    fn a_min_rtt_rise_above_the_threshold_enters_css_then_ends_after_five_rounds() {
        let mut h = HyStart::default();
        round(&mut h, 0, 16, 100);
        // Threshold = clamp(100 / 8, 4, 16) = 12.5 ms: a 13 ms rise of the round minimum triggers CSS.
        assert_eq!(round(&mut h, 16, 32, 113), CSS_GROWTH_DIVISOR);
        assert!(matches!(h.phase(), Phase::Css { rounds: 0, .. }));
        let mut seq = 48;
        for _ in 0..5 {
            round(&mut h, seq, 32, 114);
            seq += 32;
        }
        assert_eq!(h.phase(), Phase::Done);
    }

    #[test]
    fn a_rise_below_the_threshold_does_not_trigger() {
        let mut h = HyStart::default();
        round(&mut h, 0, 16, 100);
        assert_eq!(round(&mut h, 16, 32, 112), 1.0);
        assert_eq!(h.phase(), Phase::SlowStart);
    }

    #[test]
    fn css_falls_back_to_slow_start_when_the_rtt_drops_below_the_baseline() {
        let mut h = HyStart::default();
        round(&mut h, 0, 16, 100);
        round(&mut h, 16, 32, 120);
        assert!(matches!(h.phase(), Phase::Css { .. }));
        round(&mut h, 48, 32, 105);
        assert_eq!(h.phase(), Phase::SlowStart);
    }
}
