//! Sprout: stochastic forecasts of a varying link (Winstein, Sivaraman and Balakrishnan, "Stochastic
//! Forecasts Achieve High Throughput and Low Delay over Cellular Networks", NSDI 2013; reference
//! implementation keithw/sprout: `src/sprout/{process,receiver,processforecaster}.cc` and
//! `src/network/sproutconn.cc`).
//!
//! **Model** (Sprout §3.1-3.2; reference `Process`). The link delivers packets as a Poisson process whose
//! rate λ wanders. A belief over λ is kept on `bins` rates `0, Δ, 2Δ, ..., max_rate_pps`; bin 0 is the
//! outage state λ = 0. It starts uniform, and every tick (20 ms) it
//! 1. evolves: λ takes a Brownian step of standard deviation `sigma_pps √tick` (the Gaussian is
//!    discretised exactly on the grid and cut at 5 standard deviations, the cut tails folded into the
//!    farthest taps); mass that falls below the first positive bin enters the outage bin (the only way
//!    in, as in the reference's open-ended first bin) and mass above the top bin stays there; the
//!    outage bin is left at `outage_escape_rate` per second, the leaving mass spread like the positive
//!    half of the same Gaussian;
//! 2. observes the `k` packets that arrived during the tick (in MTU units, rounded as the reference
//!    rounds: any fraction below one counts as one) and multiplies by their likelihood;
//! 3. normalises.
//!
//! **Censoring** (the reference's `time_to_next`/`_score_time` rule). Few arrivals say little about λ
//! when the sender let the link run dry. A tick counts as a full observation, likelihood
//! `P(N = k | λ·tick)`, when the link was backlogged at its end: the first packet the receiver got after
//! the tick had been sent at least one minimum one-way delay before the tick ended, so it had been
//! waiting. Otherwise the count is only a lower bound and the likelihood is `P(N >= k | λ·tick)`; for
//! `k = 0` that is 1, the reference's skipped tick.
//!
//! **Forecast** (Sprout §3.3; reference `ProcessForecastInterval`). For each horizon `h = 1..8` ticks, the
//! `1 - confidence` (5 %) quantile of the packets delivered in the next `h` ticks. Given a starting
//! bin, the count is Poisson with a random mean: over `h` ticks the path of a Brownian rate averages to
//! λ with variance `sigma² h tick / 3`, which we take as gamma distributed, so each bin contributes a
//! negative binomial; the forecast is the quantile of their mixture under the belief. The outage bin
//! forecasts no deliveries. Quantiles are made non-decreasing in `h`.
//!
//! **Window** (sproutconn.cc `window_size`). Sprout may send `forecast(now + 5 ticks) - forecast(now) -
//! queued` more (bytes there, packets here), `queued` being its packets sent but not yet delivered.
//! ccscope's `cwnd` bounds the packets in flight, so `cwnd = in_flight + that`, at least `min_window`.
//!
//! **Placement.** ccscope controllers run at the sender only, so the receiver's model runs here, on the
//! receiver timestamps the ACKs carry (`AckEvent::recv_time`): arrivals are counted per 20 ms tick of
//! receiver time, and a tick is scored once an ACK for a packet received after it comes back, one ACK
//! path later, which is when Sprout's forecast for it would reach the sender too. While no ACK comes
//! the belief waits and the forecast slides as in sproutconn.cc: `now` in the forecast is the receiver
//! time the sender has news of, `now - smallest ACK delay seen`, in ticks since the belief's last
//! scored tick; packets the forecast says were delivered since then, beyond the arrivals already
//! counted, come off `queued`; once the whole forecast has elapsed the window is empty. An outage thus
//! stops the sender within the forecast horizon, and is scored (mass moved to λ = 0) when the first
//! ACK after it shows the silent ticks, which were backlogged.
//!
//! Departures from the reference are listed in `docs/deviations.md` (Sprout).

use ccscope_core::{Dur, Time};
use serde::{Deserialize, Serialize};

use crate::common::poisson::{self, CountRecursion};
use crate::params::{check_timer_ms, invalid, ParamError, ParamSpec};
use crate::{AckEvent, Controller, LossEvent, SendEvent};

/// When one ACK closes several ticks, the counted tick and at most this many silent ticks after it are
/// scored one by one; older silent ticks are evolved and scored in one step, so a jump in time costs
/// no more than a few ticks.
const MAX_EXACT_TICKS: u64 = 1;
/// Largest window handed out, in packets.
const MAX_WINDOW: f64 = 10_000_000.0;
/// Bins with less probability than this are dropped when the belief evolves: so thin a tail cannot move
/// a forecast, and leaving it out keeps a tick cheap.
const UNPROPAGATED: f64 = 1e-20;
/// Bins with less probability than this are left out of the forecast's mixture.
const NEGLIGIBLE: f64 = 1e-14;
/// Most packets a forecast horizon may expect at the top rate; beyond it `P(0)` of the count
/// recursion underflows.
const MAX_HORIZON_PACKETS: f64 = 500.0;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Length of one tick of the model in ms (reference receiver.hh TICK_LENGTH: 20).
    pub tick_ms: f64,
    /// Rate bins, the outage bin λ = 0 included (reference NUM_BINS: 256).
    pub bins: u32,
    /// Highest rate of the grid in packets/s (reference MAX_ARRIVAL_RATE: 1000).
    pub max_rate_pps: f64,
    /// Volatility of λ in packets/s per √s (reference BROWNIAN_MOTION_RATE: 200).
    pub sigma_pps: f64,
    /// Rate at which the outage state is left, per s (reference OUTAGE_ESCAPE_RATE: 1).
    pub outage_escape_rate: f64,
    /// Forecast horizons in ticks (reference NUM_TICKS: 8).
    pub forecast_ticks: u32,
    /// Delay the window aims at in ms (sproutconn.h TARGET_DELAY_TICKS: 5 ticks = 100).
    pub target_delay_ms: f64,
    /// Probability with which forecast deliveries happen (Sprout §3.3 and receiver.cc: 0.95).
    pub confidence: f64,
    /// Window floor in packets (ours: Sprout may allow nothing; 1 keeps a flow from stalling).
    pub min_window: f64,
    /// No-ACK time in ms before a packet is sent anyway (datagrump: 1000).
    pub timeout_ms: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            tick_ms: 20.0,
            bins: 256,
            max_rate_pps: 1000.0,
            sigma_pps: 200.0,
            outage_escape_rate: 1.0,
            forecast_ticks: 8,
            target_delay_ms: 100.0,
            confidence: 0.95,
            min_window: 1.0,
            timeout_ms: 1000.0,
        }
    }
}

impl crate::params::Params for Params {
    const SPEC: &'static [ParamSpec] = &[
        ParamSpec {
            name: "tick_ms",
            unit: "ms",
            doc: "model tick (reference TICK_LENGTH: 20)",
        },
        ParamSpec {
            name: "bins",
            unit: "bins",
            doc: "rate bins including the outage bin (reference NUM_BINS: 256)",
        },
        ParamSpec {
            name: "max_rate_pps",
            unit: "packets/s",
            doc: "top of the rate grid (reference MAX_ARRIVAL_RATE: 1000)",
        },
        ParamSpec {
            name: "sigma_pps",
            unit: "packets/s/√s",
            doc: "Brownian volatility of the rate (reference BROWNIAN_MOTION_RATE: 200)",
        },
        ParamSpec {
            name: "outage_escape_rate",
            unit: "1/s",
            doc: "rate of leaving the outage state (reference OUTAGE_ESCAPE_RATE: 1)",
        },
        ParamSpec {
            name: "forecast_ticks",
            unit: "ticks",
            doc: "forecast horizons (reference NUM_TICKS: 8)",
        },
        ParamSpec {
            name: "target_delay_ms",
            unit: "ms",
            doc: "delay the window aims at (sproutconn TARGET_DELAY_TICKS 5 = 100)",
        },
        ParamSpec {
            name: "confidence",
            unit: "probability",
            doc: "forecast quantile is 1 - this (Sprout §3.3: 0.95)",
        },
        ParamSpec {
            name: "min_window",
            unit: "packets",
            doc: "window floor (ours; Sprout may send nothing)",
        },
        ParamSpec {
            name: "timeout_ms",
            unit: "ms",
            doc: "no-ACK time before a packet is sent anyway (datagrump: 1000)",
        },
    ];
    fn validate(&self) -> Result<(), ParamError> {
        check_timer_ms("tick_ms", self.tick_ms)?;
        if !(2..=4096).contains(&self.bins) {
            return Err(invalid("bins", "must be in 2..=4096"));
        }
        if !(self.max_rate_pps > 0.0 && self.max_rate_pps.is_finite()) {
            return Err(invalid("max_rate_pps", "must be > 0 and finite"));
        }
        if !(self.sigma_pps >= 0.0 && self.sigma_pps.is_finite()) {
            return Err(invalid("sigma_pps", "must be >= 0 and finite"));
        }
        if !(self.outage_escape_rate >= 0.0 && self.outage_escape_rate.is_finite()) {
            return Err(invalid("outage_escape_rate", "must be >= 0 and finite"));
        }
        if !(1..=64).contains(&self.forecast_ticks) {
            return Err(invalid("forecast_ticks", "must be in 1..=64"));
        }
        let horizon_packets =
            self.max_rate_pps * self.forecast_ticks as f64 * self.tick_ms / 1000.0;
        if !(horizon_packets <= MAX_HORIZON_PACKETS) {
            return Err(invalid(
                "max_rate_pps",
                format!(
                    "max_rate_pps x forecast_ticks x tick must be <= {MAX_HORIZON_PACKETS} packets"
                ),
            ));
        }
        let horizon_ms = self.forecast_ticks as f64 * self.tick_ms;
        if !(self.target_delay_ms > 0.0 && self.target_delay_ms <= horizon_ms * (1.0 + 1e-9)) {
            return Err(invalid(
                "target_delay_ms",
                format!("must be > 0 and <= forecast_ticks x tick_ms ({horizon_ms} ms)"),
            ));
        }
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return Err(invalid("confidence", "must be in (0, 1)"));
        }
        if !(self.min_window >= 0.0 && self.min_window <= MAX_WINDOW) {
            return Err(invalid("min_window", "must be in [0, 1e7]"));
        }
        check_timer_ms("timeout_ms", self.timeout_ms)?;
        Ok(())
    }
    /// `RateModel::new`'s vectors: a count distribution per bin and forecast tick, ten `f64` rows and
    /// the two scratch rows per bin, the transition's taps (at most 2 bins + 1 wide) and the forecast.
    fn state_bytes(&self) -> u64 {
        let (n, ticks) = (self.bins.max(2) as u64, self.forecast_ticks.max(1) as u64);
        let per_bin = 10 * 8 + std::mem::size_of::<usize>() + std::mem::size_of::<Component>();
        ticks * n * std::mem::size_of::<CountRecursion>() as u64
            + n * per_bin as u64
            + 2 * (2 * n + 1) * 8
            + (ticks + 1) * 4
    }
}

/// `P(Z > z)` for a standard normal `Z`, to about 1e-7 relative (Chebyshev fit of erfc, Press et al.,
/// Numerical Recipes §6.2).
fn normal_upper_tail(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * x);
    let poly = -1.26551223
        + t * (1.00002368
            + t * (0.37409196
                + t * (0.09678418
                    + t * (-0.18628806
                        + t * (0.27886807
                            + t * (-1.13520398
                                + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
    let erfc = t * (-x * x + poly).exp();
    if z >= 0.0 {
        0.5 * erfc
    } else {
        1.0 - 0.5 * erfc
    }
}

/// The rate's dynamics over one tick on the grid (reference `Process::evolve`).
#[derive(Debug)]
struct Transition {
    /// Probability of moving `d` bins, at index `d + w`; the two end taps hold the tails beyond.
    taps: Vec<f64>,
    /// Running sums of `taps`.
    cum: Vec<f64>,
    /// Half width in bins.
    w: usize,
    /// Probability of a move of at least one bin up, the spread of mass leaving the outage.
    up: f64,
    /// Probability that the outage state lasts the whole span.
    stay: f64,
}

impl Transition {
    /// A Gaussian step of `sd_bins` bins, cut at 5 standard deviations (reference `evolve`), and outage
    /// persistence `stay`.
    fn new(sd_bins: f64, stay: f64, bins: usize) -> Self {
        let w = if sd_bins > 0.0 {
            ((5.0 * sd_bins).ceil() as usize).clamp(1, bins - 1)
        } else {
            0
        };
        let mut taps = vec![0.0; 2 * w + 1];
        if w == 0 {
            taps[0] = 1.0;
        } else {
            for d in 0..=w {
                let p = if d == w {
                    normal_upper_tail((d as f64 - 0.5) / sd_bins)
                } else if d == 0 {
                    1.0 - 2.0 * normal_upper_tail(0.5 / sd_bins)
                } else {
                    normal_upper_tail((d as f64 - 0.5) / sd_bins)
                        - normal_upper_tail((d as f64 + 0.5) / sd_bins)
                };
                taps[w + d] = p.max(0.0);
                taps[w - d] = p.max(0.0);
            }
        }
        let total: f64 = taps.iter().sum();
        let mut run = 0.0;
        let mut cum = Vec::with_capacity(taps.len());
        for t in taps.iter_mut() {
            *t /= total;
            run += *t;
            cum.push(run);
        }
        let up = if w == 0 {
            0.0
        } else {
            taps[w + 1..].iter().sum()
        };
        Transition {
            taps,
            cum,
            w,
            up,
            stay,
        }
    }

    /// `dst = src` moved one tick forward; `dst` is overwritten.
    fn apply(&self, src: &[f64], dst: &mut [f64]) {
        let n = src.len();
        let w = self.w;
        let (taps, cum) = (&self.taps[..], &self.cum[..]);
        let total = cum[2 * w];
        dst.fill(0.0);
        // The outage bin persists or is left, for a rate drawn from the positive half of the step.
        dst[0] += src[0] * self.stay;
        let leaving = src[0] * (1.0 - self.stay);
        if leaving > 0.0 {
            if self.up > 0.0 {
                for d in 1..=w {
                    dst[d.min(n - 1)] += leaving * taps[w + d] / self.up;
                }
            } else {
                dst[1] += leaving;
            }
        }
        for i in 1..n {
            let m = src[i];
            if m < UNPROPAGATED {
                continue;
            }
            // Taps t <= w - i land below the first positive bin: the outage.
            if w >= i {
                dst[0] += m * cum[w - i];
            }
            let lo = if i > w { i - w } else { 1 };
            let hi = (i + w).min(n - 2);
            let mut j = lo;
            while j <= hi {
                dst[j] += m * taps[j + w - i];
                j += 1;
            }
            // Taps t >= n - 1 - i + w land on or above the top bin.
            let t_top = n - 1 - i + w;
            if t_top <= 2 * w {
                dst[n - 1] += m * (total - if t_top > 0 { cum[t_top - 1] } else { 0.0 });
            }
        }
    }
}

/// Radii of three box filters whose repeated application has about the variance of a Gaussian of
/// `sd` bins (Kovesi, "Fast almost-Gaussian filtering", DICTA 2010), each at most `cap`.
fn box_radii(sd: f64, cap: usize) -> [usize; 3] {
    if !(sd > 0.0) {
        return [0; 3];
    }
    let var = sd * sd;
    let mut wl = ((4.0 * var + 1.0).sqrt().floor() as i64).max(1);
    if wl % 2 == 0 {
        wl -= 1;
    }
    let wl_f = wl as f64;
    let m = ((12.0 * var - 3.0 * wl_f * wl_f - 12.0 * wl_f - 9.0) / (-4.0 * wl_f - 4.0))
        .round()
        .clamp(0.0, 3.0) as usize;
    let (rl, ru) = (((wl - 1) / 2) as usize, ((wl + 1) / 2) as usize);
    let mut radii = [ru.min(cap); 3];
    for r in radii.iter_mut().take(m) {
        *r = rl.min(cap);
    }
    radii
}

/// One bin of the forecast's mixture: its probability and its count distribution, at count `c` of the
/// scan.
#[derive(Clone, Copy, Debug)]
struct Component {
    weight: f64,
    a: f64,
    b: f64,
    /// `P(count = c)`.
    p: f64,
}

/// The receiver's belief about the link rate and the forecast drawn from it (reference `Process` and
/// `Receiver`).
#[derive(Debug)]
struct RateModel {
    /// Probability of each rate bin; bin `i` is `i * bin_pps` packets/s, bin 0 the outage.
    belief: Vec<f64>,
    scratch: Vec<f64>,
    bin_pps: f64,
    tick_s: f64,
    /// Expected arrivals per tick in each bin, `λ_i tick`, and their logarithms.
    x: Vec<f64>,
    ln_x: Vec<f64>,
    one_tick: Transition,
    /// Scratch of the fast-forward's box filters, three grids long.
    pad: Vec<f64>,
    pad_out: Vec<f64>,
    sd_bins_per_tick: f64,
    escape_rate: f64,
    /// Count distribution of bin `i` over `h` ticks at index `(h - 1) * bins + i`.
    horizon: Vec<CountRecursion>,
    /// Lower-quantile forecast of cumulative deliveries after `h` ticks, at index `h` (0 at index 0).
    forecast: Vec<u32>,
    /// Quantile level, `1 - confidence`.
    alpha: f64,
    /// Scan limit of the quantile search.
    max_count: u32,
    /// Scratch of the quantile scan: bins in the mixture, and their count distributions.
    active: Vec<usize>,
    mix: Vec<Component>,
}

impl RateModel {
    fn new(p: &Params) -> Self {
        let n = (p.bins as usize).max(2);
        let ticks = (p.forecast_ticks as usize).max(1);
        let tick_s = p.tick_ms / 1000.0;
        let bin_pps = p.max_rate_pps / (n - 1) as f64;
        let x: Vec<f64> = (0..n).map(|i| i as f64 * bin_pps * tick_s).collect();
        let ln_x = x.iter().map(|v| v.ln()).collect();
        let sd_bins_per_tick = p.sigma_pps * tick_s.sqrt() / bin_pps;
        let one_tick = Transition::new(sd_bins_per_tick, (-p.outage_escape_rate * tick_s).exp(), n);
        // Over h ticks a Brownian rate averages to its start with variance sigma² h tick / 3.
        let mut horizon = Vec::with_capacity(ticks * n);
        for h in 1..=ticks {
            let span_s = h as f64 * tick_s;
            let extra_var = p.sigma_pps.powi(2) * span_s.powi(3) / 3.0;
            horizon.extend((0..n).map(|i| {
                if i == 0 {
                    CountRecursion::ZERO
                } else {
                    CountRecursion::mixed_poisson(x[i] * h as f64, extra_var)
                }
            }));
        }
        let top_mean = p.max_rate_pps * ticks as f64 * tick_s;
        let top_var = top_mean + p.sigma_pps.powi(2) * (ticks as f64 * tick_s).powi(3) / 3.0;
        let mut model = RateModel {
            belief: vec![1.0 / n as f64; n],
            scratch: vec![0.0; n],
            bin_pps,
            tick_s,
            x,
            ln_x,
            one_tick,
            pad: vec![0.0; 3 * n],
            pad_out: vec![0.0; 3 * n],
            sd_bins_per_tick,
            escape_rate: p.outage_escape_rate,
            horizon,
            forecast: vec![0; ticks + 1],
            alpha: 1.0 - p.confidence,
            max_count: (top_mean + 12.0 * top_var.sqrt() + 20.0).ceil() as u32,
            active: Vec::with_capacity(n),
            mix: Vec::with_capacity(n),
        };
        model.update_forecast();
        model
    }

    fn bins(&self) -> usize {
        self.belief.len()
    }

    fn rate_pps(&self, i: usize) -> f64 {
        i as f64 * self.bin_pps
    }

    /// One tick of Brownian motion and outage dynamics (Sprout §3.1).
    fn evolve(&mut self) {
        self.one_tick.apply(&self.belief, &mut self.scratch);
        std::mem::swap(&mut self.belief, &mut self.scratch);
    }

    /// `ticks` ticks of dynamics in one step, for the silent part of a long gap. The Gaussian is
    /// approximated by three box filters of about its variance, O(bins) whatever the span (boxes are at
    /// most as wide as the grid); the outage lasts with the span's probability and the mass leaving it is
    /// spread evenly over rates up to twice the mean of the half-normal step.
    fn evolve_span(&mut self, ticks: u64) {
        let n = self.bins();
        let t = ticks as f64;
        let sd = self.sd_bins_per_tick * t.sqrt();
        let stay = (-self.escape_rate * self.tick_s * t).exp();
        let outage = self.belief[0];
        self.belief[0] = 0.0;
        for r in box_radii(sd, n) {
            self.box_pass(r);
        }
        self.belief[0] += outage * stay;
        let leaving = outage * (1.0 - stay);
        if leaving > 0.0 {
            let k =
                ((2.0 * sd * std::f64::consts::FRAC_2_PI.sqrt()).round() as usize).clamp(1, n - 1);
            for b in &mut self.belief[1..=k] {
                *b += leaving / k as f64;
            }
        }
    }

    /// One box filter of radius `r` over the positive bins; what spills below the first enters the
    /// outage bin, what spills above the last stays in it.
    fn box_pass(&mut self, r: usize) {
        if r == 0 {
            return;
        }
        let n = self.bins();
        let m = n - 1;
        let len = m + 2 * r;
        let (pad, out) = (&mut self.pad[..len], &mut self.pad_out[..len]);
        pad.fill(0.0);
        pad[r..r + m].copy_from_slice(&self.belief[1..]);
        let inv = 1.0 / (2 * r + 1) as f64;
        let mut sum: f64 = pad[..=r].iter().sum();
        for k in 0..len {
            out[k] = (sum * inv).max(0.0);
            if k + r + 1 < len {
                sum += pad[k + r + 1];
            }
            if k >= r {
                sum -= pad[k - r];
            }
        }
        self.belief[0] += out[..r].iter().sum::<f64>();
        self.belief[1..].copy_from_slice(&out[r..r + m]);
        self.belief[m] += out[r + m..].iter().sum::<f64>();
    }

    /// Bayes' rule with a log-likelihood per bin; an observation impossible under every bin is ignored.
    fn reweight(belief: &mut [f64], lp: &mut [f64], ll: impl Fn(usize) -> f64) {
        let mut best = f64::NEG_INFINITY;
        for i in 0..belief.len() {
            lp[i] = if belief[i] > 0.0 {
                belief[i].ln() + ll(i)
            } else {
                f64::NEG_INFINITY
            };
            if lp[i] > best {
                best = lp[i];
            }
        }
        if !best.is_finite() {
            return;
        }
        let mut sum = 0.0;
        for v in lp.iter_mut() {
            *v = (*v - best).exp();
            sum += *v;
        }
        if !(sum > 0.0 && sum.is_finite()) {
            return;
        }
        for (b, v) in belief.iter_mut().zip(lp.iter()) {
            *b = v / sum;
        }
    }

    /// `k` arrivals in one tick (Sprout §3.2); `censored` when the link may have run dry, so that `k` is
    /// only a lower bound on what it could have delivered.
    fn observe(&mut self, k: u64, censored: bool) {
        let (x, ln_x) = (&self.x, &self.ln_x);
        if censored {
            if k == 0 {
                return;
            }
            let ln_k_fact = poisson::ln_factorial(k);
            Self::reweight(&mut self.belief, &mut self.scratch, |i| {
                poisson::ln_sf(k, x[i], ln_k_fact)
            });
        } else {
            Self::reweight(&mut self.belief, &mut self.scratch, |i| {
                poisson::ln_pmf_kernel(k, x[i], ln_x[i])
            });
        }
    }

    /// No arrivals over `ticks` backlogged ticks, the rate taken as constant over them.
    fn observe_silence(&mut self, ticks: u64) {
        let (x, t) = (&self.x, ticks as f64);
        Self::reweight(&mut self.belief, &mut self.scratch, |i| -x[i] * t);
    }

    /// The lower-quantile forecast for every horizon (reference `Receiver::forecast`).
    fn update_forecast(&mut self) {
        let n = self.bins();
        self.active.clear();
        for (i, &b) in self.belief.iter().enumerate() {
            if b > NEGLIGIBLE {
                self.active.push(i);
            }
        }
        for h in 1..self.forecast.len() {
            let dists = &self.horizon[(h - 1) * n..h * n];
            let mix = &mut self.mix;
            mix.clear();
            let mut cdf = 0.0;
            for &i in &self.active {
                let d = dists[i];
                mix.push(Component {
                    weight: self.belief[i],
                    a: d.a,
                    b: d.b,
                    p: d.p0,
                });
                cdf += self.belief[i] * d.p0;
            }
            // Smallest c with P(count <= c) >= alpha (reference `lower_quantile`).
            let mut c = 0;
            while cdf < self.alpha && c < self.max_count {
                let (cf, inv) = (c as f64, 1.0 / (c as f64 + 1.0));
                for m in mix.iter_mut() {
                    m.p *= (m.a + m.b * cf) * inv;
                    cdf += m.weight * m.p;
                }
                c += 1;
            }
            self.forecast[h] = c.max(self.forecast[h - 1]);
        }
    }

    /// The forecast at a fractional horizon, linear between ticks and flat beyond the last.
    fn forecast_at(&self, ticks: f64) -> f64 {
        let last = self.forecast.len() - 1;
        let t = ticks.clamp(0.0, last as f64);
        let lo = t.floor() as usize;
        if lo >= last {
            return self.forecast[last] as f64;
        }
        let f = t - lo as f64;
        self.forecast[lo] as f64 * (1.0 - f) + self.forecast[lo + 1] as f64 * f
    }

    fn mean_pps(&self) -> f64 {
        self.belief
            .iter()
            .enumerate()
            .map(|(i, b)| b * self.rate_pps(i))
            .sum()
    }

    #[cfg(test)]
    fn variance_pps2(&self) -> f64 {
        let mean = self.mean_pps();
        self.belief
            .iter()
            .enumerate()
            .map(|(i, b)| b * (self.rate_pps(i) - mean).powi(2))
            .sum()
    }

    /// Expected deliveries over `h` ticks.
    #[cfg(test)]
    fn mean_forecast(&self, h: usize) -> f64 {
        self.mean_pps() * self.tick_s * h as f64
    }

    fn outage_probability(&self) -> f64 {
        self.belief[0]
    }
}

#[derive(Debug)]
pub struct Sprout {
    p: Params,
    model: RateModel,
    tick: Dur,
    /// Target delay in ticks.
    target_ticks: f64,
    /// Start of the tick being counted, receiver clock; `None` until the first ACK.
    open_start: Option<Time>,
    /// Arrivals in the open tick, in MTU units.
    open_count: f64,
    /// Smallest `recv_time - send_time` seen.
    owd_min: Option<Dur>,
    /// Smallest `now - recv_time` seen: how long news from the receiver takes.
    ack_delay_min: Option<Dur>,
    in_flight: u32,
    /// Largest packet seen, the unit of the counts.
    mtu: u32,
    now: Time,
    cwnd: f64,
}

impl Sprout {
    pub fn new(p: Params) -> Self {
        let model = RateModel::new(&p);
        let tick = Dur::from_ms_f64(p.tick_ms).max(Dur(1));
        let target_ticks = p.target_delay_ms / p.tick_ms;
        let mut s = Sprout {
            model,
            tick,
            target_ticks,
            open_start: None,
            open_count: 0.0,
            owd_min: None,
            ack_delay_min: None,
            in_flight: 0,
            mtu: 1,
            now: Time::ZERO,
            cwnd: 0.0,
            p,
        };
        s.update_window();
        s
    }

    /// Lower-quantile forecast of cumulative deliveries after `h` ticks of the belief's clock, `h = 0..=H`.
    pub fn forecast(&self) -> &[u32] {
        &self.model.forecast
    }

    /// Probability of each rate bin; bin `i` is `i * max_rate_pps / (bins - 1)` packets/s.
    pub fn belief(&self) -> &[f64] {
        &self.model.belief
    }

    /// Mean of the belief in packets/s.
    pub fn mean_rate_pps(&self) -> f64 {
        self.model.mean_pps()
    }

    /// Sprout's window: packets it may send now beyond those in flight (sproutconn.cc `window_size`).
    pub fn window(&self) -> f64 {
        let (span, drain) = self.span_and_drain();
        span - (self.in_flight as f64 - drain).max(0.0)
    }

    /// Ticks of the belief's clock elapsed at the receiver time the sender has news of.
    fn elapsed_ticks(&self) -> f64 {
        match (self.open_start, self.ack_delay_min) {
            (Some(start), Some(ack_delay)) => {
                let news = Time(self.now.as_ns().saturating_sub(ack_delay.as_ns()));
                news.since(start).as_ns() as f64 / self.tick.as_ns() as f64
            }
            _ => 0.0,
        }
    }

    /// Forecast deliveries from now to the target delay, and those since the belief's clock not yet seen.
    fn span_and_drain(&self) -> (f64, f64) {
        let e = self.elapsed_ticks();
        let now = self.model.forecast_at(e);
        let span = self.model.forecast_at(e + self.target_ticks) - now;
        (span, (now - self.open_count).max(0.0))
    }

    fn update_window(&mut self) {
        let (span, drain) = self.span_and_drain();
        // in_flight + window, where window = span - max(0, in_flight - drain).
        let cwnd = span + drain.min(self.in_flight as f64);
        self.cwnd = cwnd.max(self.p.min_window).min(MAX_WINDOW);
    }

    fn touch(&mut self, now: Time) {
        self.now = self.now.max(now);
    }

    fn tick_floor(&self, t: Time) -> Time {
        let tick = self.tick.as_ns();
        Time(t.as_ns() / tick * tick)
    }

    /// Score every tick that ends at or before `end`; ticks ending at or after `backlogged_from` are
    /// full observations, the others censored.
    fn close_through(&mut self, end: Time, backlogged_from: Time) {
        let Some(start) = self.open_start else { return };
        let tick = self.tick.as_ns();
        let n = end.as_ns().saturating_sub(start.as_ns()) / tick;
        if n == 0 {
            return;
        }
        let from = backlogged_from.as_ns();
        // Tick j (1-based) ends at start + j tick.
        let backlogged = |j: u64| start.as_ns().saturating_add(j.saturating_mul(tick)) >= from;
        let k = match self.open_count {
            c if c > 0.0 && c < 1.0 => 1,
            c => (c + 0.5).floor().min(1e9) as u64,
        };
        self.model.evolve();
        self.model.observe(k, !backlogged(1));
        // Ticks 2..=n heard nothing; the oldest of a long run are fast-forwarded together.
        let silent = n - 1;
        let fast = silent.saturating_sub(MAX_EXACT_TICKS);
        if fast > 0 {
            // Ticks 2..=fast+1 end at or after `from` from the first j with start + j tick >= from.
            let first = from.saturating_sub(start.as_ns()).div_ceil(tick).max(2);
            let full = (fast + 2).saturating_sub(first).min(fast);
            self.model.evolve_span(fast);
            if full > 0 {
                self.model.observe_silence(full);
            }
        }
        for j in fast + 2..=n {
            self.model.evolve();
            if backlogged(j) {
                self.model.observe(0, false);
            }
        }
        self.open_start = Some(Time(start.as_ns().saturating_add(n.saturating_mul(tick))));
        self.open_count = 0.0;
        self.model.update_forecast();
    }
}

impl Controller for Sprout {
    fn on_send(&mut self, now: Time, ev: &SendEvent) -> u64 {
        self.touch(now);
        self.mtu = self.mtu.max(ev.bytes);
        self.in_flight = ev.in_flight;
        self.update_window();
        0
    }

    fn on_ack(&mut self, now: Time, ev: &AckEvent) {
        self.touch(now);
        self.mtu = self.mtu.max(ev.bytes);
        self.in_flight = ev.in_flight;
        let recv = ev.recv_time.min(self.now);
        let owd = recv.since(ev.send_time);
        self.owd_min = Some(self.owd_min.map_or(owd, |m| m.min(owd)));
        let ack_delay = self.now.since(recv);
        self.ack_delay_min = Some(self.ack_delay_min.map_or(ack_delay, |m| m.min(ack_delay)));
        let start = match self.open_start {
            Some(s) => s,
            None => {
                let s = self.tick_floor(recv);
                self.open_start = Some(s);
                s
            }
        };
        if recv >= start + self.tick {
            // This packet waited at the bottleneck from its send time plus the minimum one-way delay
            // (FIFO), so the link was backlogged at the end of every tick after that.
            let backlogged_from = ev.send_time + self.owd_min.unwrap_or(Dur::ZERO);
            self.close_through(self.tick_floor(recv), backlogged_from);
        }
        // A packet received before the open tick (reordered on the way back) is counted in it.
        self.open_count += ev.newly_acked.max(1) as f64 * ev.bytes as f64 / self.mtu.max(1) as f64;
        self.update_window();
    }

    fn on_loss(&mut self, now: Time, ev: &LossEvent) {
        self.touch(now);
        self.in_flight = ev.in_flight;
        self.update_window();
    }

    fn on_timeout(&mut self, now: Time) {
        self.touch(now);
        self.update_window();
    }

    /// The forecast slides with time (sproutconn.cc `update_queue_estimate`).
    fn on_timer(&mut self, now: Time) {
        self.touch(now);
        self.update_window();
    }

    fn next_timer(&self) -> Option<Time> {
        Some(self.tick_floor(self.now) + self.tick)
    }

    fn cwnd(&self) -> u32 {
        self.cwnd as u32
    }

    fn timeout(&self) -> Dur {
        Dur::from_ms_f64(self.p.timeout_ms)
    }

    fn state_name(&self) -> &'static str {
        if self.open_start.is_none() {
            "startup"
        } else if self.model.outage_probability() >= self.model.alpha {
            "outage"
        } else if self.elapsed_ticks() >= self.p.forecast_ticks as f64 {
            // No news for the whole forecast: Sprout sends nothing more until an ACK comes.
            "stale"
        } else {
            "forecast"
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;
    use crate::params::Params as _;
    use crate::testing::Script;

    fn total(m: &RateModel) -> f64 {
        m.belief.iter().sum()
    }

    fn point_mass(m: &mut RateModel, bin: usize) {
        m.belief.fill(0.0);
        m.belief[bin] = 1.0;
    }

    /// 500 packets/s exactly on the grid (4 packets/s per bin) with no volatility, so every forecast
    /// is a plain Poisson quantile.
    fn known_rate_params() -> Params {
        Params {
            sigma_pps: 0.0,
            max_rate_pps: 1020.0,
            ..Default::default()
        }
    }

    /// A FIFO bottleneck serving `rate_pps` (nothing during `outage`), `fwd` from it to the receiver and
    /// `back` for the ACK, driven by the controller's window and timer.
    struct Link {
        rate_pps: f64,
        fwd: Dur,
        back: Dur,
        outage: Option<(Time, Time)>,
        now: Time,
        last_depart: Time,
        next_seq: u64,
        /// (seq, sent, received, ACK arrival) of packets in flight, in delivery order.
        pending: VecDeque<(u64, Time, Time, Time)>,
        /// Send times.
        sends: Vec<Time>,
        /// (receive time, time spent waiting at the bottleneck).
        waits: Vec<(Time, Dur)>,
        /// (time, cwnd) after every event.
        windows: Vec<(Time, u32)>,
    }

    impl Link {
        fn new(rate_pps: f64, fwd_ms: u64, back_ms: u64) -> Self {
            Link {
                rate_pps,
                fwd: Dur::from_ms(fwd_ms),
                back: Dur::from_ms(back_ms),
                outage: None,
                now: Time::ZERO,
                last_depart: Time::ZERO,
                next_seq: 0,
                pending: VecDeque::new(),
                sends: Vec::new(),
                waits: Vec::new(),
                windows: Vec::new(),
            }
        }

        fn send(&mut self, cc: &mut Sprout) {
            let service = Dur::from_secs_f64(1.0 / self.rate_pps);
            let mut start = self.now.max(self.last_depart);
            if let Some((from, to)) = self.outage {
                if start >= from && start < to {
                    start = to;
                }
            }
            let depart = start + service;
            self.last_depart = depart;
            let seq = self.next_seq;
            self.next_seq += 1;
            let recv = depart + self.fwd;
            self.pending
                .push_back((seq, self.now, recv, recv + self.back));
            self.sends.push(self.now);
            self.waits.push((recv, start.since(self.now)));
            let ev = SendEvent {
                seq,
                bytes: 1500,
                in_flight: self.pending.len() as u32,
                after_timeout: false,
                retransmission: false,
                app_limited: false,
            };
            cc.on_send(self.now, &ev);
        }

        fn run(&mut self, cc: &mut Sprout, until: Time) {
            loop {
                while (self.pending.len() as u32) < cc.cwnd() {
                    self.send(cc);
                }
                let timer = cc.next_timer().expect("sprout always asks for a timer");
                let ack = self.pending.front().map(|p| p.3);
                let t = ack.map_or(timer, |a| a.min(timer));
                if t > until {
                    self.now = until;
                    return;
                }
                self.now = t;
                if ack == Some(t) {
                    let (seq, sent, recv, _) = self.pending.pop_front().expect("an ACK is due");
                    let ev = AckEvent {
                        seq,
                        bytes: 1500,
                        send_time: sent,
                        recv_time: recv,
                        rtt: t - sent,
                        ca_rtt: t - sent,
                        in_flight: self.pending.len() as u32,
                        last_sent_seq: self.next_seq - 1,
                        tag: 0,
                        newly_acked: 1,
                        snd_una_advanced: true,
                        in_recovery: false,
                        rate: None,
                        host_bytes: None,
                    };
                    cc.on_ack(t, &ev);
                } else {
                    cc.on_timer(t);
                }
                self.windows.push((t, cc.cwnd()));
            }
        }
    }

    #[test]
    fn default_params_are_the_reference_values_and_validate() {
        let p = Params::default();
        assert_eq!(
            (p.tick_ms, p.bins, p.max_rate_pps, p.sigma_pps),
            (20.0, 256, 1000.0, 200.0)
        );
        assert_eq!(
            (
                p.outage_escape_rate,
                p.forecast_ticks,
                p.target_delay_ms,
                p.confidence
            ),
            (1.0, 8, 100.0, 0.95)
        );
        assert!(p.validate().is_ok());
    }

    #[test]
    fn validate_rejects_out_of_range_params() {
        let bad = |p: Params| {
            p.validate()
                .expect_err("should be rejected")
                .key()
                .map(str::to_string)
        };
        assert_eq!(
            bad(Params {
                bins: 1,
                ..Default::default()
            })
            .as_deref(),
            Some("bins")
        );
        assert_eq!(
            bad(Params {
                confidence: 1.0,
                ..Default::default()
            })
            .as_deref(),
            Some("confidence")
        );
        assert_eq!(
            bad(Params {
                forecast_ticks: 0,
                ..Default::default()
            })
            .as_deref(),
            Some("forecast_ticks")
        );
        // 8 ticks x 20 ms = 160 ms of forecast: a 200 ms target lies beyond it.
        assert_eq!(
            bad(Params {
                target_delay_ms: 200.0,
                ..Default::default()
            })
            .as_deref(),
            Some("target_delay_ms")
        );
        // 10,000 packets/s over 160 ms is 1600 packets, beyond what the count recursion can start from.
        assert_eq!(
            bad(Params {
                max_rate_pps: 10_000.0,
                ..Default::default()
            })
            .as_deref(),
            Some("max_rate_pps")
        );
        assert_eq!(
            bad(Params {
                sigma_pps: f64::NAN,
                ..Default::default()
            })
            .as_deref(),
            Some("sigma_pps")
        );
    }

    #[test]
    fn startup_window_comes_from_the_uniform_prior() {
        let cc = Sprout::new(Params::default());
        // 5 % of a uniform 0..1000 packets/s is about 50 packets/s: 3 packets in 100 ms, after Poisson noise.
        assert_eq!(cc.forecast()[5], 3);
        assert_eq!((cc.cwnd(), cc.state_name()), (3, "startup"));
    }

    #[test]
    fn belief_starts_uniform_and_stays_normalised() {
        let mut m = RateModel::new(&Params::default());
        assert!(m.belief.iter().all(|&b| b == 1.0 / 256.0));
        for (k, censored) in [
            (0, false),
            (3, false),
            (8, false),
            (25, false),
            (0, true),
            (5, true),
            (0, false),
            (40, false),
        ] {
            m.evolve();
            m.observe(k, censored);
            assert!(
                (total(&m) - 1.0).abs() < 1e-9,
                "sum {} after k = {k}",
                total(&m)
            );
            assert!(m.belief.iter().all(|&b| b >= 0.0 && b.is_finite()));
        }
        m.evolve_span(500);
        m.observe_silence(3);
        assert!((total(&m) - 1.0).abs() < 1e-9, "sum {}", total(&m));
    }

    #[test]
    fn belief_mean_converges_near_an_observed_300_packets_per_second() {
        // Model alone: 6 arrivals per 20 ms tick for 5 s.
        let mut m = RateModel::new(&Params::default());
        for _ in 0..250 {
            m.evolve();
            m.observe(6, false);
        }
        assert!((m.mean_pps() - 300.0).abs() < 25.0, "mean {}", m.mean_pps());
        // Whole controller, fed by ACKs from a 300 packets/s bottleneck it keeps busy.
        let mut cc = Sprout::new(Params::default());
        let mut link = Link::new(300.0, 20, 20);
        link.run(&mut cc, Time::from_ms(10_000));
        assert!(
            (cc.mean_rate_pps() - 300.0).abs() < 30.0,
            "mean {}",
            cc.mean_rate_pps()
        );
        assert_eq!(cc.state_name(), "forecast");
    }

    #[test]
    fn diffusion_widens_the_belief_when_no_information_arrives() {
        let mut m = RateModel::new(&Params::default());
        point_mass(&mut m, 128);
        let start = m.mean_pps();
        let mut var = m.variance_pps2();
        for tick in 1..=10 {
            m.evolve();
            let v = m.variance_pps2();
            assert!(v > var, "tick {tick}: variance {v} did not grow from {var}");
            var = v;
            if tick == 1 {
                // sigma² tick = 200² x 0.02 = 800 (pps)², plus a twelfth of a bin² from the grid.
                assert!((v - 800.0).abs() < 0.03 * 800.0, "one-tick variance {v}");
            }
        }
        assert!(
            (m.mean_pps() - start).abs() < 1.0,
            "mean moved from {start} to {}",
            m.mean_pps()
        );
        // A censored tick without arrivals carries no information: the belief only diffuses.
        let before = m.belief.clone();
        m.observe(0, true);
        assert_eq!(m.belief, before);
    }

    #[test]
    fn fast_forward_diffuses_about_as_much_as_the_ticks_it_replaces() {
        let (mut exact, mut fast) = (
            RateModel::new(&Params::default()),
            RateModel::new(&Params::default()),
        );
        point_mass(&mut exact, 128);
        point_mass(&mut fast, 128);
        for _ in 0..10 {
            exact.evolve();
        }
        fast.evolve_span(10);
        let (ve, vf) = (exact.variance_pps2(), fast.variance_pps2());
        assert!(
            (vf - ve).abs() < 0.05 * ve,
            "fast-forward variance {vf}, ten ticks {ve}"
        );
        assert!((fast.mean_pps() - exact.mean_pps()).abs() < 2.0);
    }

    #[test]
    fn censored_count_rules_out_only_rates_too_low_to_deliver_it() {
        let mut m = RateModel::new(&Params::default());
        m.observe(5, true);
        // 5 in 20 ms is 250 packets/s: rates four times that are untouched (P(N < 5 | 20) = 2e-5), rates
        // near zero all but excluded.
        assert!((m.belief[255] / m.belief[250] - 1.0).abs() < 1e-4);
        assert!(m.belief[0] == 0.0 && m.belief[3] < 1e-5 * m.belief[200]);
    }

    #[test]
    fn forecast_of_a_known_rate_is_the_poisson_quantile() {
        let mut m = RateModel::new(&known_rate_params());
        point_mass(&mut m, 125);
        m.update_forecast();
        // 500 packets/s: 10 h expected in h ticks; 5th percentiles of Poisson(10 h), worked by hand.
        assert_eq!(m.forecast, [0, 5, 13, 21, 30, 39, 48, 57, 66]);
    }

    #[test]
    fn lower_quantile_forecast_is_below_the_mean_and_grows_with_the_horizon() {
        let mut m = RateModel::new(&Params::default());
        let check = |m: &RateModel| {
            for h in 1..=8 {
                assert!(
                    (m.forecast[h] as f64) < m.mean_forecast(h),
                    "h {h}: {} vs mean {}",
                    m.forecast[h],
                    m.mean_forecast(h)
                );
                assert!(
                    m.forecast[h] >= m.forecast[h - 1],
                    "forecast {:?}",
                    m.forecast
                );
            }
        };
        check(&m);
        for _ in 0..100 {
            m.evolve();
            m.observe(8, false);
        }
        m.update_forecast();
        check(&m);
        assert!(m.forecast[8] > m.forecast[1], "forecast {:?}", m.forecast);
    }

    #[test]
    fn window_is_the_forecast_to_the_target_minus_the_queued_estimate() {
        let mut cc = Sprout::new(known_rate_params());
        point_mass(&mut cc.model, 125);
        cc.model.update_forecast();
        // Forecast [0, 5, 13, 21, 30, 39, 48, 57, 66]; the sender has news up to the belief's clock.
        let start = Time::from_ms(1000);
        cc.open_start = Some(start);
        cc.ack_delay_min = Some(Dur::from_ms(10));
        cc.now = start + Dur::from_ms(10);
        cc.in_flight = 12;
        cc.update_window();
        // Nothing forecast yet, so all 12 are queued: 39 - 0 - 12.
        assert_eq!(cc.window(), 27.0);
        assert_eq!(cc.cwnd(), 39);
        // 30 ms later (1.5 ticks) with 3 arrivals counted: forecast(1.5) = 9 of which 6 unseen leave the
        // queue estimate at 12 - 6 = 6; forecast(6.5) - forecast(1.5) = 52.5 - 9 = 43.5.
        cc.now += Dur::from_ms(30);
        cc.open_count = 3.0;
        cc.update_window();
        assert_eq!(cc.window(), 43.5 - 6.0);
        assert_eq!(cc.cwnd(), 49);
        // More queued than the forecast delivers: Sprout sends nothing, the floor still allows one packet.
        cc.in_flight = 60;
        cc.update_window();
        assert!(cc.window() < 0.0);
        cc.model.belief.fill(0.0);
        cc.model.belief[0] = 1.0;
        cc.model.update_forecast();
        cc.update_window();
        assert_eq!(cc.cwnd(), 1);
    }

    #[test]
    fn steady_five_megabit_link_settles_near_the_delay_target() {
        // 5 Mbit/s of 1500-byte packets, 40 ms of propagation round trip.
        let rate = 5e6 / (1500.0 * 8.0);
        let mut cc = Sprout::new(Params::default());
        let mut link = Link::new(rate, 20, 20);
        link.run(&mut cc, Time::from_ms(30_000));
        let settled = Time::from_ms(5_000);
        let max_window = link
            .windows
            .iter()
            .filter(|w| w.0 >= settled)
            .map(|w| w.1)
            .max()
            .expect("windows");
        // In flight at most rate x (RTT + 100 ms), with 10 % to spare.
        assert!(
            (max_window as f64) <= rate * (0.04 + 0.1) * 1.1,
            "window {max_window}"
        );
        let waits: Vec<f64> = link
            .waits
            .iter()
            .filter(|w| w.0 >= settled)
            .map(|w| w.1.as_ms_f64())
            .collect();
        let mean_wait = waits.iter().sum::<f64>() / waits.len() as f64;
        assert!(mean_wait <= 100.0, "mean queueing delay {mean_wait} ms");
        // And the link stays busy.
        let throughput = waits.len() as f64 / 25.0;
        assert!(
            throughput > 0.9 * rate,
            "throughput {throughput} of {rate} packets/s"
        );
    }

    #[test]
    fn outage_moves_mass_to_zero_and_closes_the_window_quickly() {
        let rate = 5e6 / (1500.0 * 8.0);
        let mut cc = Sprout::new(Params::default());
        let mut link = Link::new(rate, 20, 20);
        let (from, to) = (Time::from_ms(5_000), Time::from_ms(6_000));
        link.outage = Some((from, to));
        link.run(&mut cc, from);
        assert!(cc.cwnd() > 10, "cwnd before the outage {}", cc.cwnd());
        assert!(cc.model.outage_probability() < 0.01);
        // No ACKs come back: the forecast slides past its horizon and Sprout stops sending.
        link.run(&mut cc, from + Dur::from_ms(200));
        assert_eq!(cc.state_name(), "stale");
        assert!(cc.window() <= 0.0, "window {}", cc.window());
        let last_send = *link.sends.last().expect("sends");
        assert!(
            last_send.since(from) <= Dur::from_ms(160),
            "sent until {} after the outage began",
            last_send.since(from)
        );
        link.run(&mut cc, to);
        assert_eq!(*link.sends.last().expect("sends"), last_send);
        // The first ACK after the outage (42.4 ms after it ends: 2.4 ms of service, 20 + 20 ms of path)
        // shows the silent ticks, which were backlogged: the mass moves to the outage state.
        link.run(&mut cc, to + Dur::from_ms(50));
        assert!(
            cc.model.outage_probability() > 0.9,
            "P(outage) {}",
            cc.model.outage_probability()
        );
        assert_eq!(cc.forecast()[8], 0);
        assert_eq!((cc.state_name(), cc.cwnd()), ("outage", 1));
        // Deliveries resume and so does the window.
        link.run(&mut cc, to + Dur::from_ms(1_000));
        assert!(cc.cwnd() > 10, "cwnd after the outage {}", cc.cwnd());
    }

    #[test]
    fn huge_time_jumps_and_stale_receive_times_neither_panic_nor_break_the_belief() {
        let mut s = Script::new(Sprout::new(Params::default()));
        s.send(10);
        s.ack_oldest(Dur::from_ms(40));
        s.advance(Dur::from_secs_f64(1e6));
        s.ack_oldest(Dur::from_ms(2000));
        s.send(5);
        s.ack_oldest(Dur::from_ms(1));
        s.advance(Dur::from_ms(20));
        // An ACK for a packet received before the tick being counted is counted in it.
        let count = s.cc.open_count;
        s.ack_oldest(Dur::from_ms(1));
        assert_eq!(s.cc.open_count, count + 1.0);
        assert!((s.cc.belief().iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(s.cc.cwnd() >= 1 && s.cc.window().is_finite());
        assert!(s.cc.next_timer().is_some_and(|t| t > s.now));
    }
}
