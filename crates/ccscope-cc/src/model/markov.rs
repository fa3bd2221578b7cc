//! Model-driven congestion control by a guided random walk in a (delay, window) Markov chain (paper
//! 000 §3.2, §5, §5.1), the chain trained offline from Verus runs and loaded from a `.ccm` file
//! (`common::ccm`).
//!
//! A state is (delay bin `d`, window `w`), `w` the packets sent in one epoch. Every `epoch_ms` the
//! controller takes the largest RTT of the last epoch as the perceived delay `d_r` (§3.2), restricts
//! the row of the current state (the origin) to the next states with delay bin `d_r` (the subset),
//! draws `N` uniform in `[min P_subset, max P_subset]` and moves to the state whose probability is
//! closest to `N` (ties: the lowest `w`). Its `w` is sent during the epoch. An empty subset moves the
//! origin one row up (`w - 1`, `w - 2`, ... down to `w_min`) until one is found (§5.1). No slow start
//! (§5).
//!
//! Choices the paper leaves open (docs/deviations.md, "Markov model controller"):
//! - **Epoch budget as a window**, as in `verus`: `cwnd() = in_flight + budget`, `budget = w` at each
//!   epoch and one less per packet sent, so `w` packets leave at the epoch tick.
//! - **No RTT sample in an epoch:** the delay is the previous epoch's, or the time since the last ACK
//!   if that is larger (Verus's rule); before any ACK the origin's delay bin is kept.
//! - **Delays outside the model** are clamped into the first or last bin and counted (`out_of_range`).
//! - **No subset down to `w_min`:** the smallest window with a row in the perceived delay bin is sent
//!   and becomes the state (`w_min` if the bin has no row). Counted as a dead end.
//! - **First epoch:** the origin is (bin 0, `max(w_min, 1)` clamped to `w_max`) and that many packets
//!   may go out before the first epoch; the epoch timer starts with the first packet sent.
//! - **Losses** get no reaction (the paper's sender keeps only a timeout timer, §5); the no-ACK
//!   timeout is Verus's `5 x RTT` clamped to `[min_timeout_ms, max_timeout_ms]`.
//! - **No model** (`model = ""`, the default): a fixed window of `fallback_window` packets.

use std::sync::Arc;

use ccscope_core::rng::{self, RngExt};
use ccscope_core::{Dur, Time};
use serde::{Deserialize, Serialize};

use crate::common::ccm::Model;
use crate::params::{check_timer_ms, invalid, ParamError, ParamSpec};
use crate::{AckEvent, Controller, LossEvent, SendEvent};

/// The no-ACK timeout is this many times the latest RTT, clamped (Verus reference: 5 x delay).
const TIMEOUT_RTT_MULTIPLE: f64 = 5.0;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Path of the `.ccm` model; empty: a fixed window of `fallback_window` (ours).
    pub model: String,
    /// Epoch length (paper 000 §5, as Verus: 5 ms).
    pub epoch_ms: f64,
    /// Window in packets without a model (ours: 10).
    pub fallback_window: u32,
    /// Lower clamp of the 5 x RTT no-ACK timeout (Verus reference: 150 ms).
    pub min_timeout_ms: f64,
    /// Upper clamp of the 5 x RTT no-ACK timeout, and the timeout before any RTT sample (Verus reference: 1000 ms).
    pub max_timeout_ms: f64,
    /// Seed of the random walk's uniform draws (the simulator gives each flow its own).
    pub seed: u64,
    /// How the next window is drawn from the subset (paper 000 §3.2's `closest` by default).
    pub draw: Draw,
}

/// How the guided random walk picks the next state within the subset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Draw {
    /// Paper 000 §3.2: N uniform in [min, max] of the subset's probabilities, the closest probability wins.
    Closest,
    /// Ours: each state with its transition probability, an ordinary Markov-chain step.
    Proportional,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            model: String::new(),
            epoch_ms: 5.0,
            fallback_window: 10,
            min_timeout_ms: 150.0,
            max_timeout_ms: 1000.0,
            seed: 0,
            draw: Draw::Closest,
        }
    }
}

impl crate::params::Params for Params {
    const SPEC: &'static [ParamSpec] = &[
        ParamSpec { name: "model", unit: "path", doc: "the .ccm Markov model; empty: fixed window of fallback_window (ours)" },
        ParamSpec { name: "epoch_ms", unit: "ms", doc: "epoch length (paper 000 §5, as Verus: 5)" },
        ParamSpec { name: "fallback_window", unit: "packets", doc: "fixed window without a model (ours: 10)" },
        ParamSpec { name: "min_timeout_ms", unit: "ms", doc: "lower clamp of the 5 x RTT no-ACK timeout (Verus: 150)" },
        ParamSpec { name: "max_timeout_ms", unit: "ms", doc: "upper clamp of the 5 x RTT no-ACK timeout, and before any RTT (Verus: 1000)" },
        ParamSpec { name: "seed", unit: "integer", doc: "seed of the random walk (the simulator sets one per flow)" },
        ParamSpec { name: "draw", unit: "closest|proportional", doc: "subset draw: closest probability to N uniform in [min, max] (paper 000 §3.2) or proportional to probability (ours)" },
    ];
    fn validate(&self) -> Result<(), ParamError> {
        check_timer_ms("epoch_ms", self.epoch_ms)?;
        check_timer_ms("min_timeout_ms", self.min_timeout_ms)?;
        check_timer_ms("max_timeout_ms", self.max_timeout_ms)?;
        if !(self.max_timeout_ms >= self.min_timeout_ms) {
            return Err(invalid("max_timeout_ms", "must be >= min_timeout_ms"));
        }
        if self.fallback_window < 1 {
            return Err(invalid("fallback_window", "must be >= 1"));
        }
        if !self.model.is_empty() {
            Model::load_shared(&self.model)
                .map_err(|e| invalid("model", format!("{}: {e}", self.model)))?;
        }
        Ok(())
    }

    /// The model must cover the path's unloaded round trip: a model trained on other delays would see
    /// every uncongested delay outside its range (paper 000 §6.1 trains and evaluates on the same links).
    /// Delays beyond the range at run time are counted instead (`model_delay_below`, `_above`).
    fn check_round_trip(&self, rtt_ms: f64) -> Result<(), ParamError> {
        if self.model.is_empty() {
            return Ok(());
        }
        let model = Model::load_shared(&self.model)
            .map_err(|e| invalid("model", format!("{}: {e}", self.model)))?;
        let m = &model.meta;
        let (lo, hi) = (
            m.d_min_ms - m.quantize_ms,
            m.d_min_ms + m.quantize_ms * m.n_d as f64,
        );
        if rtt_ms < lo || rtt_ms >= hi {
            return Err(invalid(
                "model",
                format!(
                    "{} covers delays {:.0}..{:.0} ms (round trips in [{lo:.0}, {hi:.0}) ms accepted), but this flow's propagation round trip is {rtt_ms:.0} ms, so its delays fall outside the model; train the model on links with this flow's delays",
                    self.model, m.d_min_ms, m.d_max_ms
                ),
            ));
        }
        Ok(())
    }
}

/// The walk's position: delay bin and window (paper 000 §3.1 state S_kl).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct State {
    pub d_bin: u32,
    pub w: u32,
}

#[derive(Debug)]
pub struct Markov {
    p: Params,
    /// `None`: the fixed-window fallback.
    model: Option<Arc<Model>>,
    /// Why the model given could not be loaded at construction (validate loads it first, so only a
    /// file changed in between gets here); the controller then falls back.
    pub load_error: Option<String>,
    state: State,
    rng: rng::Rng,
    /// Packets the walk may still send this epoch.
    budget: u32,
    /// Packets in flight as the sender counts them.
    in_flight: u32,
    /// Largest RTT of the current epoch, ms.
    epoch_max_rtt: Option<f64>,
    /// The delay used at the last epoch, ms.
    last_d_ms: Option<f64>,
    last_ack: Option<Time>,
    latest_rtt_ms: Option<f64>,
    next_epoch: Option<Time>,
    /// Delays below the model's first bin and above its last, clamped into them.
    out_of_range: (u64, u64),
    /// Epochs where no subset was found down to `w_min`.
    dead_ends: u64,
    /// Walk steps taken.
    epochs: u64,
}

impl Markov {
    pub fn new(p: Params) -> Self {
        let (model, load_error) = if p.model.is_empty() {
            (None, None)
        } else {
            match Model::load_shared(&p.model) {
                Ok(m) => (Some(m), None),
                Err(e) => (None, Some(format!("{}: {e}", p.model))),
            }
        };
        Self::build(p, model, load_error)
    }

    /// With a model already in memory (several flows may share one).
    pub fn with_model(p: Params, model: Arc<Model>) -> Self {
        Self::build(p, Some(model), None)
    }

    fn build(p: Params, model: Option<Arc<Model>>, load_error: Option<String>) -> Self {
        let w0 = model
            .as_ref()
            .map_or(p.fallback_window, |m| m.meta.w_min.max(1).min(m.meta.w_max));
        Markov {
            rng: rng::stream(p.seed, 0),
            p,
            model,
            load_error,
            state: State { d_bin: 0, w: w0 },
            budget: w0,
            in_flight: 0,
            epoch_max_rtt: None,
            last_d_ms: None,
            last_ack: None,
            latest_rtt_ms: None,
            next_epoch: None,
            out_of_range: (0, 0),
            dead_ends: 0,
            epochs: 0,
        }
    }

    pub fn state(&self) -> State {
        self.state
    }

    /// (below the first bin, above the last) delay counts, clamped into the model's range.
    pub fn out_of_range(&self) -> (u64, u64) {
        self.out_of_range
    }

    pub fn dead_ends(&self) -> u64 {
        self.dead_ends
    }

    /// The delay bin of `d_ms` (paper 000 §4.2 quantizing), clamped into the model and counted if outside.
    fn quantize(&mut self, model: &Model, d_ms: f64) -> u32 {
        let x = ((d_ms - model.meta.d_min_ms) / model.meta.quantize_ms).floor();
        if !(x >= 0.0) {
            self.out_of_range.0 += 1;
            return 0;
        }
        if x >= model.meta.n_d as f64 {
            self.out_of_range.1 += 1;
            return model.meta.n_d - 1;
        }
        x as u32
    }

    /// One guided random-walk step (paper 000 §3.2, §5.1) to the perceived delay `d_ms`, with `u`
    /// uniform in [0, 1) mapped onto `[min P_subset, max P_subset]`. Returns the new window; without
    /// a model, `fallback_window`.
    pub fn step(&mut self, d_ms: f64, u: f64) -> u32 {
        let Some(model) = self.model.clone() else {
            return self.p.fallback_window;
        };
        let d_bin = self.quantize(&model, d_ms);
        self.step_bin(&model, d_bin, u)
    }

    fn step_bin(&mut self, model: &Model, d_bin: u32, u: f64) -> u32 {
        let n_w = model.meta.n_w;
        let (lo, hi) = (d_bin * n_w, (d_bin + 1) * n_w);
        // §5.1: an empty subset moves the origin one row up (w - 1) at a time.
        for (_, row) in model.rows_down_from(self.state.d_bin, self.state.w) {
            let subset = row.filter(|&(c, p)| (lo..hi).contains(&c) && p > 0.0);
            if let Some(c) = draw(subset, u, self.p.draw) {
                let (d, w) = model.state_of(c);
                self.state = State { d_bin: d, w };
                return w;
            }
        }
        // No subset down to w_min (ours; the paper does not say what happens then): the walk-down ends at
        // the bottom, snapped to the trained states: the smallest window with a row at the perceived
        // delay is sent (w_min if that delay has none), so the next epoch starts from a trained row.
        self.dead_ends += 1;
        let w = model
            .lowest_window_with_row(d_bin)
            .unwrap_or(model.meta.w_min);
        self.state = State { d_bin, w };
        w
    }

    fn on_epoch(&mut self, now: Time) {
        let Some(model) = self.model.clone() else {
            return;
        };
        let since_ack = self.last_ack.map(|t| now.since(t).as_ms_f64());
        let d_ms = match self.epoch_max_rtt.take() {
            Some(m) => Some(m),
            None => match (self.last_d_ms, since_ack) {
                (Some(d), Some(s)) => Some(d.max(s)),
                (d, s) => d.or(s),
            },
        };
        let u: f64 = self.rng.gen();
        self.epochs += 1;
        let w = match d_ms {
            Some(d) => {
                self.last_d_ms = Some(d);
                let d_bin = self.quantize(&model, d);
                self.step_bin(&model, d_bin, u)
            }
            None => self.step_bin(&model, self.state.d_bin, u),
        };
        self.budget = w;
    }
}

/// One draw among `(key, probability)` entries, `u` uniform in [0, 1); `None` if there are none.
/// `closest` (paper 000 §3.2): N = min + u (max - min), the entry whose probability is nearest to N wins
/// (ties: the lowest key). `proportional`: entry i with probability p_i / sum(p).
fn draw(entries: impl Iterator<Item = (u32, f64)> + Clone, u: f64, rule: Draw) -> Option<u32> {
    if rule == Draw::Proportional {
        let total: f64 = entries.clone().map(|(_, p)| p).sum();
        let target = u * total;
        let mut acc = 0.0;
        let mut pick = None;
        for (k, p) in entries {
            acc += p;
            pick = Some(k);
            if acc > target {
                break;
            }
        }
        return pick;
    }
    let (p_min, p_max) = entries
        .clone()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (_, p)| {
            (a.min(p), b.max(p))
        });
    if p_min > p_max {
        return None;
    }
    let n = p_min + u * (p_max - p_min);
    let mut best: Option<(f64, u32)> = None;
    for (k, p) in entries {
        let dist = (p - n).abs();
        if best.is_none_or(|(d, bk)| dist < d || (dist == d && k < bk)) {
            best = Some((dist, k));
        }
    }
    best.map(|(_, k)| k)
}

impl Controller for Markov {
    fn on_send(&mut self, now: Time, ev: &SendEvent) -> u64 {
        self.in_flight = ev.in_flight;
        if !ev.after_timeout {
            self.budget = self.budget.saturating_sub(1);
        }
        if self.model.is_some() && self.next_epoch.is_none() {
            self.next_epoch = Some(now + Dur::from_ms_f64(self.p.epoch_ms));
        }
        0
    }

    fn on_ack(&mut self, now: Time, ev: &AckEvent) {
        self.in_flight = ev.in_flight;
        let rtt_ms = ev.rtt.as_ms_f64();
        self.epoch_max_rtt = Some(self.epoch_max_rtt.map_or(rtt_ms, |m| m.max(rtt_ms)));
        self.latest_rtt_ms = Some(rtt_ms);
        self.last_ack = Some(now);
    }

    fn on_loss(&mut self, _now: Time, ev: &LossEvent) {
        // Paper 000 §5: no loss reaction; the report only frees the window.
        self.in_flight = ev.in_flight;
    }

    fn on_timer(&mut self, now: Time) {
        if let Some(t) = self.next_epoch.filter(|&t| now >= t) {
            let epoch = Dur::from_ms_f64(self.p.epoch_ms);
            if now.since(t) >= epoch {
                // The clock was stopped (idle between transfers): the silence was not the network's
                // delay, so the last delay perceived stands.
                self.last_ack = self.last_ack.map(|_| now);
            }
            self.next_epoch = Some(now + epoch);
            self.on_epoch(now);
        }
    }

    fn next_timer(&self) -> Option<Time> {
        self.next_epoch
    }

    fn cwnd(&self) -> u32 {
        if self.model.is_none() {
            return self.p.fallback_window;
        }
        self.in_flight.saturating_add(self.budget)
    }

    fn timeout(&self) -> Dur {
        let ms = self.latest_rtt_ms.map_or(self.p.max_timeout_ms, |r| {
            (TIMEOUT_RTT_MULTIPLE * r).clamp(self.p.min_timeout_ms, self.p.max_timeout_ms)
        });
        Dur::from_ms_f64(ms)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        if self.model.is_none() {
            return Vec::new();
        }
        // A delay outside the model's range means the model was not trained for this path (paper 000 §6.1).
        vec![
            ("model_epochs", self.epochs),
            ("model_delay_below", self.out_of_range.0),
            ("model_delay_above", self.out_of_range.1),
            ("model_dead_ends", self.dead_ends),
        ]
    }

    fn state_name(&self) -> &'static str {
        if self.model.is_some() {
            "walk"
        } else {
            "fallback"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::ccm::Meta;
    use crate::testing::Script;

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("ccscope-markov-{}-{name}.ccm", std::process::id()))
    }

    /// Delay bins of 10 ms from 20 ms (bin 0: [20, 30), bin 1: [30, 40)), windows `1..=n_w`.
    fn meta(n_d: u32, n_w: u32) -> Meta {
        Meta {
            quantize_ms: 10.0,
            d_min_ms: 20.0,
            d_max_ms: 20.0 + 10.0 * n_d as f64,
            w_min: 1,
            w_max: n_w,
            n_d,
            n_w,
        }
    }

    /// Write `rows` as a model file and build the controller from it through the file.
    fn markov(name: &str, meta: Meta, rows: &[Vec<(u32, f64)>], seed: u64) -> Markov {
        let path = temp(name);
        Model::from_rows(meta, rows)
            .expect("valid model")
            .write(&path)
            .expect("write");
        let p = Params {
            model: path.to_string_lossy().into_owned(),
            seed,
            ..Default::default()
        };
        crate::params::Params::validate(&p).expect("validates");
        let cc = Markov::new(p);
        std::fs::remove_file(&path).ok();
        assert!(cc.load_error.is_none() && cc.model.is_some());
        cc
    }

    #[test]
    fn subset_selection_picks_the_window_whose_probability_is_closest_to_the_draw() {
        let (m, mut rows) = (meta(2, 4), vec![Vec::new(); 8]);
        // Origin (0, w = 2) = state 1; next states in bin 1 are 4..8 (w = 1..4), plus bin-0 noise.
        rows[1] = vec![(0, 0.35), (4, 0.05), (5, 0.15), (6, 0.25), (7, 0.2)];
        let mut cc = markov("closest", m, &rows, 0);
        // Subset probabilities {0.05, 0.15, 0.25, 0.2}: N = 0.05 + u 0.2.
        for (u, want_w) in [(0.0, 1), (0.45, 2), (0.6, 2), (0.7, 4), (0.95, 3), (1.0, 3)] {
            cc.state = State { d_bin: 0, w: 2 };
            assert_eq!(cc.step(35.0, u), want_w, "u = {u}");
            assert_eq!(
                cc.state(),
                State {
                    d_bin: 1,
                    w: want_w
                }
            );
        }
    }

    #[test]
    fn proportional_draw_walks_the_cumulative_probabilities_of_the_subset() {
        let (m, mut rows) = (meta(2, 4), vec![Vec::new(); 8]);
        rows[1] = vec![(0, 0.35), (4, 0.05), (5, 0.15), (6, 0.25), (7, 0.2)];
        let path = temp("proportional");
        Model::from_rows(m, &rows)
            .expect("valid")
            .write(&path)
            .expect("write");
        let mut cc = Markov::new(Params {
            model: path.to_string_lossy().into_owned(),
            draw: Draw::Proportional,
            ..Default::default()
        });
        std::fs::remove_file(&path).ok();
        // Subset mass 0.65; cumulative 0.05, 0.20, 0.45, 0.65 for w = 1..4.
        for (u, want_w) in [
            (0.0, 1),
            (0.07, 1),
            (0.08, 2),
            (0.30, 2),
            (0.31, 3),
            (0.69, 3),
            (0.70, 4),
            (0.999, 4),
        ] {
            cc.state = State { d_bin: 0, w: 2 };
            assert_eq!(cc.step(35.0, u), want_w, "u = {u}");
        }
    }

    #[test]
    fn closest_draw_picks_a_rare_window_about_as_often_as_a_common_one() {
        // Paper 000 §3.2's rule: with two next states the draw is a coin toss whatever their probabilities.
        let (m, mut rows) = (meta(1, 3), vec![Vec::new(); 3]);
        rows[0] = vec![(0, 0.99), (2, 0.01)];
        // Of 1000 evenly spread draws from state (0, 1), how many go to the rare window 3.
        let rare_wins = |cc: &mut Markov| {
            (0..1000)
                .filter(|i| {
                    cc.state = State { d_bin: 0, w: 1 };
                    cc.step(25.0, (*i as f64 + 0.5) / 1000.0) == 3
                })
                .count()
        };
        let mut cc = markov("rare", m, &rows, 0);
        assert_eq!(
            rare_wins(&mut cc),
            500,
            "closest: the 1% window wins half the draws"
        );
        let p = Params {
            draw: Draw::Proportional,
            ..Default::default()
        };
        let mut prop = Markov::with_model(p, cc.model.clone().expect("model"));
        assert_eq!(
            rare_wins(&mut prop),
            10,
            "proportional: the 1% window wins 1% of the draws"
        );
    }

    #[test]
    fn an_unknown_draw_rule_is_rejected_naming_the_field() {
        let mut t = toml::Table::new();
        t.insert("draw".into(), toml::Value::String("nearest".into()));
        let e = crate::params::parse_params::<Params>("markov", &t).expect_err("invalid");
        let ParamError::Invalid { key, reason } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(key, "draw");
        assert!(
            reason.contains("closest") && reason.contains("proportional"),
            "{reason}"
        );
    }

    #[test]
    fn counters_report_epochs_out_of_range_delays_and_dead_ends() {
        let (m, mut rows) = (meta(2, 2), vec![Vec::new(); 4]);
        rows[0] = vec![(1, 1.0)];
        let mut cc = markov("counters", m, &rows, 0);
        assert!(
            Markov::new(Params::default()).counters().is_empty(),
            "no model, no counters"
        );
        cc.state = State { d_bin: 0, w: 1 };
        cc.step(500.0, 0.0); // above the range; state (1, 1) has no row: dead end
        assert_eq!(cc.out_of_range(), (0, 1));
        assert_eq!(cc.dead_ends(), 1);
        let c = cc.counters();
        assert!(
            c.contains(&("model_delay_above", 1)) && c.contains(&("model_dead_ends", 1)),
            "{c:?}"
        );
    }

    #[test]
    fn equal_probabilities_tie_to_the_lowest_window() {
        let (m, mut rows) = (meta(1, 3), vec![Vec::new(); 3]);
        rows[0] = vec![(1, 0.5), (2, 0.5)];
        let mut cc = markov("tie", m, &rows, 0);
        assert_eq!(cc.step(25.0, 0.3), 2);
    }

    #[test]
    fn empty_subset_walks_the_origin_window_down_one_row_at_a_time() {
        let (m, mut rows) = (meta(2, 4), vec![Vec::new(); 8]);
        rows[3] = vec![(0, 1.0)]; // origin (0, 4): only bin 0 next
                                  // (0, 3) has no transitions at all.
        rows[1] = vec![(6, 1.0)]; // (0, 2) -> (1, 3): the first row with a bin-1 subset
        rows[0] = vec![(7, 1.0)]; // (0, 1) -> (1, 4): not reached
        let mut cc = markov("walkdown", m, &rows, 0);
        cc.state = State { d_bin: 0, w: 4 };
        assert_eq!(cc.step(31.0, 0.5), 3);
        assert_eq!(cc.state(), State { d_bin: 1, w: 3 });
        assert_eq!(cc.dead_ends(), 0);
        // Starting below (0, 2): (0, 1) is the only row left.
        cc.state = State { d_bin: 0, w: 1 };
        assert_eq!(cc.step(31.0, 0.5), 4);
    }

    #[test]
    fn a_dead_end_moves_to_a_trained_row_of_the_perceived_delay() {
        // Bin 0: windows 1..4 are states 0..3; bin 1: states 4..7.
        let (m, mut rows) = (meta(2, 4), vec![Vec::new(); 8]);
        rows[2] = vec![(0, 1.0)]; // (0, 3) only ever stayed in bin 0
        let mut cc = markov("deadend", m, &rows, 0);
        cc.state = State { d_bin: 0, w: 3 };
        assert_eq!(cc.step(39.0, 0.5), 1, "no row in bin 1: w_min");
        assert_eq!((cc.state(), cc.dead_ends()), (State { d_bin: 1, w: 1 }, 1));
        rows[5] = vec![(4, 1.0)]; // (1, 2)
        rows[7] = vec![(4, 1.0)]; // (1, 4)
        let mut cc = markov("deadend2", meta(2, 4), &rows, 0);
        cc.state = State { d_bin: 0, w: 3 };
        assert_eq!(
            cc.step(39.0, 0.5),
            2,
            "the smallest window with a row in bin 1"
        );
        cc.state = State { d_bin: 0, w: 1 };
        assert_eq!(cc.step(39.0, 0.5), 2, "whatever the origin's window");
        assert_eq!(cc.dead_ends(), 2);
    }

    #[test]
    fn a_walk_whose_window_has_no_row_recovers_instead_of_sending_nothing_forever() {
        // w_min = 0 and rows only at (0, 1) <-> (0, 2): a delay in bin 1 is a dead end at w_min = 0, and
        // the next bin-0 delay finds the trained windows again.
        let m = Meta {
            quantize_ms: 10.0,
            d_min_ms: 20.0,
            d_max_ms: 40.0,
            w_min: 0,
            w_max: 2,
            n_d: 2,
            n_w: 3,
        };
        let mut rows = vec![Vec::new(); 6];
        rows[1] = vec![(2, 1.0)];
        rows[2] = vec![(1, 1.0)];
        let mut cc = markov("stuck", m, &rows, 0);
        cc.state = State { d_bin: 0, w: 1 };
        assert_eq!(cc.step(35.0, 0.5), 0);
        let ws: Vec<u32> = (0..4).map(|_| cc.step(25.0, 0.5)).collect();
        assert_eq!(ws, vec![1, 2, 1, 2]);
    }

    #[test]
    fn delays_outside_the_model_are_clamped_and_counted() {
        let (m, mut rows) = (meta(2, 2), vec![Vec::new(); 4]);
        rows[0] = vec![(1, 0.5), (3, 0.5)];
        let mut cc = markov("range", m, &rows, 0);
        cc.state = State { d_bin: 0, w: 1 };
        assert_eq!(cc.step(500.0, 0.0), 2);
        assert_eq!(cc.state(), State { d_bin: 1, w: 2 });
        cc.state = State { d_bin: 0, w: 1 };
        assert_eq!(cc.step(3.0, 0.0), 2);
        assert_eq!(cc.state(), State { d_bin: 0, w: 2 });
        assert_eq!(cc.out_of_range(), (1, 1));
    }

    #[test]
    fn epoch_budget_maps_to_cwnd_in_flight_plus_w() {
        // Every state moves to (bin 0, w = 3).
        let m = meta(1, 5);
        let rows: Vec<_> = (0..5).map(|_| vec![(2u32, 1.0)]).collect();
        let mut s = Script::new(markov("budget", m, &rows, 0));
        assert_eq!(s.cc.cwnd(), 1, "first epoch: max(w_min, 1)");
        s.fill_window();
        assert_eq!((s.in_flight.len(), s.cc.cwnd()), (1, 1));
        assert_eq!(s.cc.next_timer(), Some(Time::ZERO + Dur::from_ms(5)));
        s.advance(Dur::from_ms(5));
        assert_eq!(s.cc.cwnd(), 1 + 3);
        s.fill_window();
        assert_eq!((s.in_flight.len(), s.cc.cwnd()), (4, 4));
        // ACKs mid-epoch do not open the window.
        s.ack_oldest(Dur::from_ms(6));
        assert_eq!(s.cc.cwnd(), 3);
        s.advance(Dur::from_ms(4)); // t = 10 ms: next epoch
        assert_eq!(s.cc.cwnd(), 3 + 3);
        // Losses free the window but change nothing else.
        s.lose_oldest(crate::LossCause::Reordering);
        assert_eq!(s.cc.cwnd(), 2 + 3);
    }

    /// Windows chosen over 200 epochs with ACKs at RTTs across both bins.
    fn window_sequence(seed: u64) -> Vec<u32> {
        let m = meta(2, 8);
        // Every row spreads over all 16 states with distinct probabilities (j + 1) / 136.
        let rows: Vec<_> = (0..16)
            .map(|_| (0..16u32).map(|j| (j, (j + 1) as f64 / 136.0)).collect())
            .collect();
        let mut s = Script::new(markov(&format!("seq{seed}"), m, &rows, seed));
        let mut out = Vec::new();
        for i in 0..200u64 {
            s.fill_window();
            s.ack_oldest(Dur::from_ms(20 + (i * 7) % 20));
            let t = s.cc.next_timer().expect("epoch timer runs");
            s.advance(t.since(s.now));
            out.push(s.cc.state().w);
        }
        out
    }

    #[test]
    fn same_seed_gives_the_same_window_sequence_and_other_seeds_differ() {
        let a = window_sequence(7);
        assert_eq!(a, window_sequence(7));
        assert_ne!(a, window_sequence(8));
        assert!(
            a.iter().collect::<std::collections::BTreeSet<_>>().len() > 4,
            "the walk moves: {a:?}"
        );
    }

    /// Three delay bins, and from any state: bin 0 -> w 1, bin 1 -> w 2, bin 2 -> w 1 (one entry per
    /// subset, p = 1/3); one packet sent and ACKed after 4 ms (below the model: bin 0), one epoch run.
    fn after_one_4ms_ack(name: &str) -> Script<Markov> {
        let rows: Vec<_> = (0..6)
            .map(|_| vec![(0u32, 1.0 / 3.0), (3, 1.0 / 3.0), (4, 1.0 / 3.0)])
            .collect();
        let mut s = Script::new(markov(name, meta(3, 2), &rows, 0));
        s.send(1);
        s.ack_oldest(Dur::from_ms(4));
        s.advance(Dur::from_ms(1));
        assert_eq!(s.cc.state(), State { d_bin: 0, w: 1 });
        s
    }

    #[test]
    fn no_sample_in_an_epoch_uses_the_time_since_the_last_ack_when_larger() {
        let mut s = after_one_4ms_ack("nosample");
        // Nothing ACKed for 31 ms: the time since the last ACK (31 ms) is bin 1.
        s.advance(Dur::from_ms(30));
        assert_eq!(s.cc.state(), State { d_bin: 1, w: 2 });
    }

    #[test]
    fn a_clock_stopped_between_transfers_does_not_read_the_pause_as_delay() {
        let mut s = after_one_4ms_ack("idle");
        // The simulator stops the timer while the flow is idle; 10 s later the late epoch fires.
        s.now += Dur::from_ms(10_000);
        s.cc.on_timer(s.now);
        assert_eq!(s.cc.state().d_bin, 0, "the 10 s pause is not a delay");
        assert_eq!(
            s.cc.out_of_range().1,
            0,
            "the last delay (4 ms, below the model) stands; nothing above"
        );
    }

    #[test]
    fn without_a_model_the_window_is_fixed_at_fallback_window() {
        let cc =
            crate::registry::build("markov", &toml::Table::new()).expect("builds with defaults");
        assert_eq!(
            (cc.cwnd(), cc.next_timer(), cc.state_name()),
            (10, None, "fallback")
        );
        let mut s = Script::new(Markov::new(Params {
            fallback_window: 4,
            ..Default::default()
        }));
        s.fill_window();
        s.ack_all(Dur::from_ms(500));
        s.lose_oldest(crate::LossCause::Timeout);
        s.advance(Dur::from_ms(100));
        assert_eq!(s.cc.cwnd(), 4);
        assert_eq!(s.cc.timeout(), Dur::from_ms(1000));
    }

    #[test]
    fn a_missing_model_file_is_an_invalid_model_naming_the_file() {
        let path = temp("does-not-exist");
        let mut t = toml::Table::new();
        t.insert(
            "model".into(),
            toml::Value::String(path.to_string_lossy().into_owned()),
        );
        let e = crate::registry::build("markov", &t)
            .err()
            .expect("must fail");
        let ParamError::Invalid { key, reason } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(key, "model");
        assert!(reason.contains(&*path.to_string_lossy()), "{reason}");
    }

    #[test]
    fn a_model_file_given_by_path_is_walked() {
        let path = temp("registry");
        let rows: Vec<_> = (0..5).map(|_| vec![(4u32, 1.0)]).collect();
        Model::from_rows(meta(1, 5), &rows)
            .expect("valid")
            .write(&path)
            .expect("write");
        let mut t = toml::Table::new();
        t.insert(
            "model".into(),
            toml::Value::String(path.to_string_lossy().into_owned()),
        );
        let cc = crate::registry::build("markov", &t);
        std::fs::remove_file(&path).ok();
        let mut s = Script::new(cc.expect("builds"));
        assert_eq!(s.cc.state_name(), "walk");
        s.fill_window();
        s.advance(Dur::from_ms(5));
        assert_eq!(s.cc.cwnd(), 1 + 5);
    }

    #[test]
    fn timeout_is_five_rtts_clamped() {
        let mut s = Script::new(Markov::new(Params::default()));
        s.send_and_ack(Dur::from_ms(100));
        assert_eq!(s.cc.timeout(), Dur::from_ms(500));
        s.send_and_ack(Dur::from_ms(10));
        assert_eq!(s.cc.timeout(), Dur::from_ms(150));
    }
}
