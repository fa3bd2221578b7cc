//! Slow-start exits. HyStart++ (RFC 9406): leave slow start before the queue overflows, on a rise of
//! the per-round minimum RTT, through a few rounds of Conservative Slow Start (CSS). The classic
//! HyStart (Ha and Rhee, "Taming the Elephants", 2008) as Linux 6.x `tcp_cubic.c` and ns-3.37
//! `tcp-cubic.cc` run it: an ACK-train test and a delay test, either ending slow start at once.

use ccscope_core::{Dur, Time};
use serde::{Deserialize, Serialize};

/// Which slow-start exit a controller runs: a scenario's `hystart` takes the names, or `true`
/// (HyStart++, the value's meaning before the classic ones were added) and `false` (none).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Flavour {
    /// No early exit: slow start runs to ssthresh or a loss.
    Off,
    /// HyStart++ (RFC 9406), as RFC 9438 §4.10 recommends.
    Rfc9406,
    /// Linux 6.x `tcp_cubic.c` `hystart_update()`.
    Linux,
    /// ns-3.37 `TcpCubic::HystartUpdate`.
    Ns3,
}

impl Flavour {
    pub const NAMES: &'static str =
        "\"rfc9406\", \"linux\", \"ns3\", \"off\", true (= \"rfc9406\") or false";
}

impl<'de> Deserialize<'de> for Flavour {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Given {
            Bool(bool),
            Name(String),
        }
        let bad = || serde::de::Error::custom(format!("expected {}", Flavour::NAMES));
        match Given::deserialize(d).map_err(|_| bad())? {
            Given::Bool(true) => Ok(Flavour::Rfc9406),
            Given::Bool(false) => Ok(Flavour::Off),
            Given::Name(n) => match n.as_str() {
                "rfc9406" => Ok(Flavour::Rfc9406),
                "linux" => Ok(Flavour::Linux),
                "ns3" => Ok(Flavour::Ns3),
                "off" => Ok(Flavour::Off),
                _ => Err(bad()),
            },
        }
    }
}

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

/// The classic HyStart of a Cubic implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Classic {
    Linux,
    Ns3,
}

/// tcp_cubic.c (Linux 6.x) L57 `hystart_low_window`; tcp-cubic.cc `HyStartLowWindow`: 16 packets.
const CLASSIC_LOW_WINDOW: f64 = 16.0;
/// tcp_cubic.c L58 `hystart_ack_delta_us` 2000; tcp-cubic.cc `HyStartAckDelta` 2 ms.
const CLASSIC_ACK_DELTA: Dur = Dur::from_ms(2);
/// tcp_cubic.c L44 `HYSTART_MIN_SAMPLES`; tcp-cubic.cc `HyStartMinSamples`: 8.
const CLASSIC_MIN_SAMPLES: u32 = 8;
/// tcp_cubic.c L45-46 `HYSTART_DELAY_MIN`/`MAX`: 4 and 16 ms.
const LINUX_DELAY_MIN: Dur = Dur::from_ms(4);
const LINUX_DELAY_MAX: Dur = Dur::from_ms(16);
/// tcp-cubic.cc `HyStartDelayMin` 4 ms and `HyStartDelayMax` 1000 ms (ns-3.37).
const NS3_DELAY_MIN: Dur = Dur::from_ms(4);
const NS3_DELAY_MAX: Dur = Dur::from_ms(1000);
/// `sk_gso_max_size` of a device without BIG TCP (GSO_LEGACY_MAX_SIZE), for `hystart_ack_delay`.
const LINUX_GSO_MAX_BYTES: f64 = 65_536.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Round {
    /// tcp_cubic.c `round_start`: when the round began.
    start: Time,
    /// `last_ack`: the latest ACK of the round's train (ACKs at most `CLASSIC_ACK_DELTA` apart).
    last_ack: Time,
    /// `end_seq` = SND.NXT at the round's start: the round ends when a packet at or beyond it is ACKed.
    end: u64,
}

/// The classic HyStart (Ha and Rhee 2008) as Linux's or ns-3.37's Cubic runs it, driven by the ACKs of
/// slow start. It never slows slow start down: when a test fires the caller sets ssthresh = cwnd.
#[derive(Clone, Debug)]
pub struct ClassicHyStart {
    flavour: Classic,
    /// tcp_cubic.c `found`: slow start has been ended; nothing runs again until an RTO.
    found: bool,
    /// `delay_min`: the connection's minimum RTT, kept from every sample not discarded.
    delay_min: Option<Dur>,
    round: Option<Round>,
    /// `curr_rtt`: the round's minimum RTT (ns-3: of its first `CLASSIC_MIN_SAMPLES` samples).
    curr_rtt: Option<Dur>,
    sample_cnt: u32,
}

impl ClassicHyStart {
    pub fn new(flavour: Classic) -> Self {
        ClassicHyStart {
            flavour,
            found: false,
            delay_min: None,
            round: None,
            curr_rtt: None,
            sample_cnt: 0,
        }
    }

    /// Slow start has been ended by one of the tests.
    pub fn found(&self) -> bool {
        self.found
    }

    pub fn delay_min(&self) -> Option<Dur> {
        self.delay_min
    }

    /// RTT samples are dropped for this long after a congestion-avoidance stage begins: tcp_cubic.c
    /// L463 (HZ jiffies, 1 s); tcp-cubic.cc `PktsAcked` with `CubicDelta` (ns-3.37: 10 ms).
    pub fn discard_after_epoch(&self) -> Dur {
        match self.flavour {
            Classic::Linux => Dur::from_ms(1000),
            Classic::Ns3 => Dur::from_ms(10),
        }
    }

    /// Every RTT sample not discarded: tcp_cubic.c L471-472 "first time call or link delay decreases".
    pub fn on_rtt(&mut self, rtt: Dur) {
        self.delay_min = Some(self.delay_min.map_or(rtt, |m| m.min(rtt)));
    }

    /// One ACK in slow start while `found()` is false, after `on_rtt`: `seq` is the acknowledged
    /// packet, `last_sent` the highest sent, `cwnd` the window before this ACK's growth in packets,
    /// `ack_delay` Linux's `hystart_ack_delay` (see `linux_ack_delay`; ns-3 ignores it). Returns true
    /// when slow start ends at this ACK.
    pub fn on_slow_start_ack(
        &mut self,
        now: Time,
        seq: u64,
        last_sent: u64,
        rtt: Dur,
        cwnd: f64,
        ack_delay: Dur,
    ) -> bool {
        debug_assert!(!self.found);
        match self.flavour {
            Classic::Linux => {
                // tcp_cubic.c L392-393: a new round when SND.UNA passes end_seq, before the low window.
                self.new_round_if_over(now, seq, last_sent);
                // L396-397: nothing below hystart_low_window.
                if cwnd < CLASSIC_LOW_WINDOW {
                    return false;
                }
                let delay_min = self.delay_min.unwrap_or(rtt);
                // L406-414: the train must last past (delay_min + ack_delay) / 2 without pacing (SK_PACING_NONE).
                self.train(Dur((delay_min + ack_delay).as_ns() >> 1), now);
                // L433-434: the round's minimum over all its samples.
                self.curr_rtt = Some(self.curr_rtt.map_or(rtt, |c| c.min(rtt)));
                if self.sample_cnt < CLASSIC_MIN_SAMPLES {
                    self.sample_cnt += 1;
                } else {
                    // L438-439: delay_min + clamp(delay_min / 8, 4 ms, 16 ms).
                    let thresh =
                        Dur(delay_min.as_ns() >> 3).clamp(LINUX_DELAY_MIN, LINUX_DELAY_MAX);
                    if self.curr_rtt.is_some_and(|c| c > delay_min + thresh) {
                        self.found = true;
                    }
                }
            }
            Classic::Ns3 => {
                // tcp-cubic.cc PktsAcked: the tests run from HyStartLowWindow on, before
                // IncreaseWindow starts the next round (TcpSocketBase calls PktsAcked first).
                if cwnd >= CLASSIC_LOW_WINDOW {
                    let delay_min = self.delay_min.unwrap_or(rtt);
                    // HystartUpdate: a train lasting past delay_min itself (no halving, no ack delay).
                    self.train(delay_min, now);
                    if self.sample_cnt < CLASSIC_MIN_SAMPLES {
                        // Only the first HyStartMinSamples samples feed m_currRtt.
                        self.curr_rtt = Some(self.curr_rtt.map_or(rtt, |c| c.min(rtt)));
                        self.sample_cnt += 1;
                    } else {
                        // HystartDelayThresh(m_delayMin): delay_min + clamp(delay_min, 4 ms, 1 s).
                        let thresh = delay_min.clamp(NS3_DELAY_MIN, NS3_DELAY_MAX);
                        if self.curr_rtt.is_some_and(|c| c > delay_min + thresh) {
                            self.found = true;
                        }
                    }
                }
                // IncreaseWindow: the round is reset only while cwnd < ssthresh, so not once found.
                if !self.found {
                    self.new_round_if_over(now, seq, last_sent);
                }
            }
        }
        self.found
    }

    /// The ACK-train test: ACKs at most `CLASSIC_ACK_DELTA` apart extend the train, which fires once
    /// it has lasted more than `threshold` since the round began (tcp_cubic.c L403-426).
    fn train(&mut self, threshold: Dur, now: Time) {
        if let Some(r) = self.round.as_mut() {
            if now.since(r.last_ack) <= CLASSIC_ACK_DELTA {
                r.last_ack = now;
                if now.since(r.start) > threshold {
                    self.found = true;
                }
            }
        }
    }

    /// tcp_cubic.c `bictcp_hystart_reset` (L118-127) when the ACK passes the round's end.
    fn new_round_if_over(&mut self, now: Time, seq: u64, last_sent: u64) {
        if self.round.is_none_or(|r| seq >= r.end) {
            self.start_round(now, last_sent + 1);
        }
    }

    fn start_round(&mut self, now: Time, end: u64) {
        self.round = Some(Round {
            start: now,
            last_ack: now,
            end,
        });
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// The retransmission timer fired: Linux `cubictcp_state(TCP_CA_Loss)` (L358-364: `bictcp_reset`
    /// clears `found` and `delay_min`, `bictcp_hystart_reset` starts a round at SND.NXT), ns-3
    /// `CongestionStateSet(CA_LOSS)` (`CubicReset`, `HystartReset`). `next_seq` is SND.NXT.
    pub fn on_rto(&mut self, now: Time, next_seq: u64) {
        self.found = false;
        self.delay_min = None;
        self.start_round(now, next_seq);
    }
}

/// Linux's `hystart_ack_delay` (tcp_cubic.c L375-384): min(1 ms, 4 GSO sizes at the pacing rate),
/// with the pacing rate `tcp_update_pacing_rate` sets in slow start, 2 cwnd MSS / SRTT; 0 before the
/// first RTT sample (no rate yet).
pub fn linux_ack_delay(cwnd: f64, mss_bytes: u32, srtt: Option<Dur>) -> Dur {
    let Some(srtt) = srtt.filter(|s| *s > Dur::ZERO) else {
        return Dur::ZERO;
    };
    let rate_bytes_per_s = 2.0 * cwnd * mss_bytes as f64 / srtt.as_secs_f64();
    if !(rate_bytes_per_s > 0.0) {
        return Dur::ZERO;
    }
    Dur::from_secs_f64(4.0 * LINUX_GSO_MAX_BYTES / rate_bytes_per_s).min(Dur::from_ms(1))
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
    /// One ACK to a classic HyStart at `t_us`: the RTT sample first, then the slow-start test.
    fn classic_ack(
        h: &mut ClassicHyStart,
        t_us: u64,
        seq: u64,
        last_sent: u64,
        rtt_ms: u64,
        cwnd: f64,
    ) -> bool {
        let rtt = Dur::from_ms(rtt_ms);
        h.on_rtt(rtt);
        h.on_slow_start_ack(
            Time(t_us * 1000),
            seq,
            last_sent,
            rtt,
            cwnd,
            Dur::from_ms(1),
        )
    }

    /// The first ACK (0-based) at which `h` ends slow start, for ACKs `spacing_us` apart from t = 0.
    fn first_exit(
        h: &mut ClassicHyStart,
        acks: &[(u64, u64, u64)],
        spacing_us: u64,
        cwnd: f64,
    ) -> Option<usize> {
        acks.iter()
            .enumerate()
            .find_map(|(i, &(seq, last_sent, rtt_ms))| {
                classic_ack(h, i as u64 * spacing_us, seq, last_sent, rtt_ms, cwnd).then_some(i)
            })
    }

    #[test]
    fn linux_train_exit_fires_once_the_train_outlasts_half_of_min_rtt_plus_ack_delay() {
        let mut h = ClassicHyStart::new(Classic::Linux);
        // One round (all sent up to 200), ACKs 1 ms apart, RTT 40 ms: threshold (40 + 1) / 2 = 20.5 ms.
        let acks: Vec<_> = (0..100).map(|s| (s, 200, 40)).collect();
        assert_eq!(first_exit(&mut h, &acks, 1000, 16.0), Some(21));
        assert!(h.found());
    }

    #[test]
    fn ns3_train_exit_needs_the_whole_min_rtt() {
        let mut h = ClassicHyStart::new(Classic::Ns3);
        // ns-3.37 does not halve: the train must last past 40 ms. Its first ACK only starts the round.
        let acks: Vec<_> = (0..100).map(|s| (s, 200, 40)).collect();
        assert_eq!(first_exit(&mut h, &acks, 1000, 16.0), Some(41));
    }

    #[test]
    fn a_gap_over_two_ms_breaks_the_train_for_the_rest_of_the_round() {
        let mut h = ClassicHyStart::new(Classic::Linux);
        // ACKs 3 ms apart never extend the train: no exit however long the round lasts (flat RTT).
        let acks: Vec<_> = (0..100).map(|s| (s, 200, 40)).collect();
        assert_eq!(first_exit(&mut h, &acks, 3000, 16.0), None);
    }

    /// Round 1: packets 0-9 at 40 ms; round 2 (everything up to 29 sent): 20 packets at `rtt2_ms`.
    fn two_rounds(rtt2_ms: u64) -> Vec<(u64, u64, u64)> {
        let mut acks: Vec<_> = (0..10).map(|s| (s, 9, 40)).collect();
        acks.extend((10..30).map(|s| (s, 29, rtt2_ms)));
        acks
    }

    #[test]
    fn linux_delay_exit_fires_on_the_ninth_sample_of_a_round_above_min_plus_clamp() {
        // clamp(40 / 8, 4, 16) = 5 ms: 46 ms exceeds 45, 45 does not; ACKs 3 ms apart (no train).
        let mut h = ClassicHyStart::new(Classic::Linux);
        assert_eq!(
            first_exit(&mut h, &two_rounds(46), 3000, 16.0),
            Some(10 + 8)
        );
        let mut h = ClassicHyStart::new(Classic::Linux);
        assert_eq!(first_exit(&mut h, &two_rounds(45), 3000, 16.0), None);
    }

    #[test]
    fn ns3_delay_exit_needs_a_doubling_and_counts_the_round_from_its_second_ack() {
        // delay_min + clamp(40, 4, 1000) = 80 ms. The round-ending ACK is still tested in the old
        // round (PktsAcked before IncreaseWindow), so round 2's ninth sample is its tenth ACK.
        let mut h = ClassicHyStart::new(Classic::Ns3);
        assert_eq!(
            first_exit(&mut h, &two_rounds(81), 3000, 16.0),
            Some(10 + 9)
        );
        let mut h = ClassicHyStart::new(Classic::Ns3);
        assert_eq!(first_exit(&mut h, &two_rounds(80), 3000, 16.0), None);
    }

    #[test]
    fn ns3_keeps_the_minimum_of_the_first_eight_samples_where_linux_keeps_the_rounds() {
        // Round 2: eight samples at 90 ms, then 41 ms. ns-3's round minimum stays 90 (> 80): exit.
        // Linux's falls to 41 (< 45): none.
        let mut acks: Vec<_> = (0..10).map(|s| (s, 9, 40)).collect();
        acks.extend((10..19).map(|s| (s, 40, 90)));
        acks.extend((19..30).map(|s| (s, 40, 41)));
        let mut ns3 = ClassicHyStart::new(Classic::Ns3);
        assert_eq!(first_exit(&mut ns3, &acks, 3000, 16.0), Some(19));
        let mut linux = ClassicHyStart::new(Classic::Linux);
        assert_eq!(first_exit(&mut linux, &acks[..19], 3000, 16.0), Some(18));
        let mut linux = ClassicHyStart::new(Classic::Linux);
        let mut late: Vec<_> = (0..10).map(|s| (s, 9, 40)).collect();
        late.extend((10..17).map(|s| (s, 40, 90)));
        late.extend((17..30).map(|s| (s, 40, 41)));
        assert_eq!(first_exit(&mut linux, &late, 3000, 16.0), None);
    }

    #[test]
    fn below_the_low_window_nothing_fires_but_rounds_still_turn_over() {
        for flavour in [Classic::Linux, Classic::Ns3] {
            let mut h = ClassicHyStart::new(flavour);
            // A long train and a doubled RTT, all at cwnd 15.
            assert_eq!(
                first_exit(&mut h, &two_rounds(200), 1000, 15.0),
                None,
                "{flavour:?}"
            );
            assert_eq!(h.round.map(|r| r.end), Some(30), "{flavour:?}");
            assert_eq!(h.sample_cnt, 0, "{flavour:?}");
        }
    }

    #[test]
    fn a_new_round_restarts_the_train_clock_the_round_minimum_and_the_sample_count() {
        let mut h = ClassicHyStart::new(Classic::Linux);
        for s in 0..10 {
            assert!(!classic_ack(&mut h, s * 3000, s, 9, 50, 16.0));
        }
        assert_eq!((h.curr_rtt, h.sample_cnt), (Some(Dur::from_ms(50)), 8));
        // Packet 10 ends the round at 30 ms: a round from there to SND.NXT 41 (40 sent).
        assert!(!classic_ack(&mut h, 30_000, 10, 40, 48, 16.0));
        let r = h.round.unwrap();
        assert_eq!(
            (r.start, r.last_ack, r.end),
            (Time::from_ms(30), Time::from_ms(30), 41)
        );
        assert_eq!((h.curr_rtt, h.sample_cnt), (Some(Dur::from_ms(48)), 1));
        assert_eq!(h.delay_min(), Some(Dur::from_ms(48)));
    }

    #[test]
    fn an_rto_forgets_the_exit_and_the_minimum_rtt_and_starts_a_round_at_snd_nxt() {
        let mut h = ClassicHyStart::new(Classic::Linux);
        let acks: Vec<_> = (0..100).map(|s| (s, 200, 40)).collect();
        assert!(first_exit(&mut h, &acks, 1000, 16.0).is_some());
        h.on_rto(Time::from_ms(500), 201);
        assert!(!h.found());
        assert_eq!(h.delay_min(), None);
        assert_eq!(
            h.round.map(|r| (r.start, r.end)),
            Some((Time::from_ms(500), 201))
        );
    }

    #[test]
    fn linux_ack_delay_is_four_gso_sizes_at_twice_cwnd_per_srtt_capped_at_one_ms() {
        // 16 x 1500 B per 40 ms, doubled: 1.2 MB/s; 4 x 64 KiB take 218 ms: capped to 1 ms.
        assert_eq!(
            linux_ack_delay(16.0, 1500, Some(Dur::from_ms(40))),
            Dur::from_ms(1)
        );
        // 10,000 x 1500 B per 1 ms, doubled: 3e10 B/s; 262,144 B take 8.738 us.
        assert_eq!(
            linux_ack_delay(10_000.0, 1500, Some(Dur::from_ms(1))),
            Dur(8_738)
        );
        assert_eq!(linux_ack_delay(16.0, 1500, None), Dur::ZERO);
    }

    #[test]
    fn the_flavour_takes_its_names_and_the_old_booleans() {
        #[derive(Deserialize)]
        struct T {
            h: Flavour,
        }
        let parse = |v: &str| toml::from_str::<T>(&format!("h = {v}")).map(|t| t.h);
        assert_eq!(parse("true").unwrap(), Flavour::Rfc9406);
        assert_eq!(parse("false").unwrap(), Flavour::Off);
        assert_eq!(parse("\"linux\"").unwrap(), Flavour::Linux);
        assert_eq!(parse("\"ns3\"").unwrap(), Flavour::Ns3);
        assert_eq!(parse("\"rfc9406\"").unwrap(), Flavour::Rfc9406);
        assert_eq!(parse("\"off\"").unwrap(), Flavour::Off);
        let e = parse("\"bsd\"").unwrap_err().to_string();
        assert!(e.contains("\"linux\""), "{e}");
        assert!(parse("1").is_err());
    }
}
