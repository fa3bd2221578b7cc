//! Cubic smoothing spline (Reinsch 1967; Green and Silverman 1994, "Nonparametric Regression and
//! Generalized Linear Models", ch. 2-3), used by Verus for its delay profile.
//!
//! Given points `(x_i, y_i)` with weights `w_i > 0`, the fit is the function `f` minimising
//!
//! ```text
//! sum_i w_i (y_i - f(x_i))^2 + lambda * integral f''(x)^2 dx
//! ```
//!
//! The minimiser is a natural cubic spline with a knot at every distinct `x_i`. Writing `g_i = f(x_i)`
//! and `gamma_i = f''(x_i)` (zero at both ends), Reinsch's algorithm solves the banded system
//! `(R + lambda Q^T W^-1 Q) gamma = Q^T y` (pentadiagonal, symmetric positive definite: O(n) by an
//! LDL^T factorisation) and sets `g = y - lambda W^-1 Q gamma` (Green and Silverman §3.5).
//!
//! - `lambda = 0` interpolates: `g_i = y_i` (the natural interpolating spline).
//! - `lambda -> inf` forces `f'' = 0`: the weighted least-squares line (`f64::INFINITY` gives it exactly).
//! - Beyond the data the fit is extended linearly (a natural spline has `f'' = 0` at the end knots).
//!
//! `lambda` has units of weight x x^3, so its effect depends on the spacing of the data: for points at
//! unit spacing with unit weights the fit averages over roughly `lambda^(1/4)` neighbours on each side.
//! There is no default here; callers choose it (Verus: `spline_lambda`, default 1000, about 5.6 windows).

/// A fitted natural cubic spline: knots, fitted values and second derivatives at the knots.
#[derive(Clone, Debug)]
pub struct SmoothingSpline {
    x: Vec<f64>,
    g: Vec<f64>,
    gamma: Vec<f64>,
}

/// Why a fit was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplineError {
    /// No points at all.
    Empty,
    /// `x`, `y` and `weights` differ in length.
    LengthMismatch,
    /// A coordinate is NaN or infinite, a weight is not finite and > 0, or `lambda` is NaN or < 0.
    InvalidInput,
}

impl SmoothingSpline {
    /// Fit points `(x[i], y[i])` with weights (`None`: all 1) and smoothing parameter `lambda`.
    /// `x` need not be sorted; points sharing an `x` are merged (weighted mean, summed weight).
    pub fn fit(
        x: &[f64],
        y: &[f64],
        weights: Option<&[f64]>,
        lambda: f64,
    ) -> Result<SmoothingSpline, SplineError> {
        if x.len() != y.len() || weights.is_some_and(|w| w.len() != x.len()) {
            return Err(SplineError::LengthMismatch);
        }
        if x.is_empty() {
            return Err(SplineError::Empty);
        }
        let weight = |i: usize| weights.map_or(1.0, |w| w[i]);
        let valid = (0..x.len()).all(|i| {
            x[i].is_finite() && y[i].is_finite() && weight(i).is_finite() && weight(i) > 0.0
        });
        if !valid || !(lambda >= 0.0) {
            return Err(SplineError::InvalidInput);
        }
        let (xs, ys, ws) = merge_sorted(x, y, weight);
        let n = xs.len();
        if n <= 2 || lambda == f64::INFINITY {
            // Two knots: every natural spline is a line, and the weighted line through them is exact.
            return Ok(least_squares_line(xs, &ys, &ws));
        }
        let h: Vec<f64> = xs.windows(2).map(|p| p[1] - p[0]).collect();
        let m = n - 2;
        // Column j of Q (interior knot j + 1) has entries q0, q1, q2 in rows j, j + 1, j + 2.
        let q = |j: usize| (1.0 / h[j], -1.0 / h[j] - 1.0 / h[j + 1], 1.0 / h[j + 1]);
        let dinv: Vec<f64> = ws.iter().map(|w| 1.0 / w).collect();
        // Bands of A = R + lambda Q^T W^-1 Q: diagonal, first and second super-diagonal.
        let mut a0 = vec![0.0; m];
        let mut a1 = vec![0.0; m];
        let mut a2 = vec![0.0; m];
        let mut rhs = vec![0.0; m];
        for j in 0..m {
            let (q0, q1, q2) = q(j);
            a0[j] = (h[j] + h[j + 1]) / 3.0
                + lambda * (q0 * q0 * dinv[j] + q1 * q1 * dinv[j + 1] + q2 * q2 * dinv[j + 2]);
            if j + 1 < m {
                let (p0, p1, _) = q(j + 1);
                a1[j] = h[j + 1] / 6.0 + lambda * (q1 * dinv[j + 1] * p0 + q2 * dinv[j + 2] * p1);
            }
            if j + 2 < m {
                let (r0, _, _) = q(j + 2);
                a2[j] = lambda * q2 * dinv[j + 2] * r0;
            }
            rhs[j] = q0 * ys[j] + q1 * ys[j + 1] + q2 * ys[j + 2];
        }
        let inner = solve_pentadiagonal(&a0, &a1, &a2, &rhs);
        // g = y - lambda W^-1 Q gamma.
        let mut g = ys.clone();
        if lambda > 0.0 {
            for (j, gj) in inner.iter().enumerate() {
                let (q0, q1, q2) = q(j);
                g[j] -= lambda * dinv[j] * q0 * gj;
                g[j + 1] -= lambda * dinv[j + 1] * q1 * gj;
                g[j + 2] -= lambda * dinv[j + 2] * q2 * gj;
            }
        }
        let mut gamma = Vec::with_capacity(n);
        gamma.push(0.0);
        gamma.extend_from_slice(&inner);
        gamma.push(0.0);
        Ok(SmoothingSpline { x: xs, g, gamma })
    }

    /// The fitted function at `t` (linear beyond the first and last knots).
    pub fn eval(&self, t: f64) -> f64 {
        let n = self.x.len();
        if n == 1 {
            return self.g[0];
        }
        if t <= self.x[0] {
            return self.g[0] + (t - self.x[0]) * self.slope_at(0);
        }
        if t >= self.x[n - 1] {
            return self.g[n - 1] + (t - self.x[n - 1]) * self.slope_at(n - 1);
        }
        // Segment i with x[i] <= t < x[i + 1].
        let i = self.x.partition_point(|&k| k <= t) - 1;
        let (xl, xr) = (self.x[i], self.x[i + 1]);
        let h = xr - xl;
        let (a, b) = (t - xl, xr - t);
        // Green and Silverman eq. (2.4).
        (a * self.g[i + 1] + b * self.g[i]) / h
            - a * b / 6.0 * ((1.0 + a / h) * self.gamma[i + 1] + (1.0 + b / h) * self.gamma[i])
    }

    /// f' at knot `k`, which must be the first or the last (where the fit continues linearly).
    fn slope_at(&self, k: usize) -> f64 {
        let n = self.x.len();
        if n == 1 {
            return 0.0;
        }
        if k == 0 {
            let h = self.x[1] - self.x[0];
            (self.g[1] - self.g[0]) / h - h * (2.0 * self.gamma[0] + self.gamma[1]) / 6.0
        } else {
            let h = self.x[n - 1] - self.x[n - 2];
            (self.g[n - 1] - self.g[n - 2]) / h
                + h * (2.0 * self.gamma[n - 1] + self.gamma[n - 2]) / 6.0
        }
    }

    /// Slope of the linear extension beyond the last knot.
    pub fn end_slope(&self) -> f64 {
        self.slope_at(self.x.len() - 1)
    }

    /// The knots (distinct data x, ascending).
    pub fn knots(&self) -> &[f64] {
        &self.x
    }

    /// The fitted values at the knots.
    pub fn fitted(&self) -> &[f64] {
        &self.g
    }
}

/// Sort by x and merge equal x: weighted mean of y, summed weight.
fn merge_sorted(
    x: &[f64],
    y: &[f64],
    weight: impl Fn(usize) -> f64,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let (mut xs, mut sy, mut ws): (Vec<f64>, Vec<f64>, Vec<f64>) =
        (Vec::new(), Vec::new(), Vec::new());
    for i in order {
        let w = weight(i);
        if xs.last() == Some(&x[i]) {
            *sy.last_mut().expect("parallel vectors") += w * y[i];
            *ws.last_mut().expect("parallel vectors") += w;
        } else {
            xs.push(x[i]);
            sy.push(w * y[i]);
            ws.push(w);
        }
    }
    let ys = sy.iter().zip(&ws).map(|(s, w)| s / w).collect();
    (xs, ys, ws)
}

/// The weighted least-squares line, as a spline with zero curvature.
fn least_squares_line(xs: Vec<f64>, ys: &[f64], ws: &[f64]) -> SmoothingSpline {
    let sw: f64 = ws.iter().sum();
    let xbar = xs.iter().zip(ws).map(|(x, w)| w * x).sum::<f64>() / sw;
    let ybar = ys.iter().zip(ws).map(|(y, w)| w * y).sum::<f64>() / sw;
    let sxx: f64 = xs
        .iter()
        .zip(ws)
        .map(|(x, w)| w * (x - xbar) * (x - xbar))
        .sum();
    let sxy: f64 = xs
        .iter()
        .zip(ys)
        .zip(ws)
        .map(|((x, y), w)| w * (x - xbar) * (y - ybar))
        .sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let g = xs.iter().map(|x| ybar + slope * (x - xbar)).collect();
    let gamma = vec![0.0; xs.len()];
    SmoothingSpline { x: xs, g, gamma }
}

/// Solve A z = b for symmetric positive definite pentadiagonal A (bands a0, a1, a2) by LDL^T.
fn solve_pentadiagonal(a0: &[f64], a1: &[f64], a2: &[f64], b: &[f64]) -> Vec<f64> {
    let m = a0.len();
    // L is unit lower triangular: l1[i] = L[i][i-1], l2[i] = L[i][i-2].
    let mut d = vec![0.0; m];
    let mut l1 = vec![0.0; m];
    let mut l2 = vec![0.0; m];
    for i in 0..m {
        if i >= 2 {
            l2[i] = a2[i - 2] / d[i - 2];
        }
        if i >= 1 {
            let correction = if i >= 2 {
                l2[i] * l1[i - 1] * d[i - 2]
            } else {
                0.0
            };
            l1[i] = (a1[i - 1] - correction) / d[i - 1];
        }
        d[i] = a0[i]
            - if i >= 1 {
                l1[i] * l1[i] * d[i - 1]
            } else {
                0.0
            }
            - if i >= 2 {
                l2[i] * l2[i] * d[i - 2]
            } else {
                0.0
            };
    }
    let mut z = vec![0.0; m];
    for i in 0..m {
        z[i] = b[i]
            - if i >= 1 { l1[i] * z[i - 1] } else { 0.0 }
            - if i >= 2 { l2[i] * z[i - 2] } else { 0.0 };
    }
    for i in 0..m {
        z[i] /= d[i];
    }
    for i in (0..m).rev() {
        let next1 = if i + 1 < m { l1[i + 1] * z[i + 1] } else { 0.0 };
        let next2 = if i + 2 < m { l2[i + 2] * z[i + 2] } else { 0.0 };
        z[i] -= next1 + next2;
    }
    z
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccscope_core::rng::{stream, RngExt};

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1.0)
    }

    #[test]
    fn spline_with_zero_lambda_interpolates_the_knots() {
        let x = [0.0, 1.0, 2.5, 3.0, 4.5, 7.0, 8.0];
        let y = [1.0, 3.0, -2.0, 0.5, 4.0, 4.0, 10.0];
        let s = SmoothingSpline::fit(&x, &y, None, 0.0).expect("fits");
        for (xi, yi) in x.iter().zip(&y) {
            assert!(
                close(s.eval(*xi), *yi, 1e-12),
                "f({xi}) = {} != {yi}",
                s.eval(*xi)
            );
        }
        // Natural: zero curvature at the ends, and continuous at an interior knot.
        let eps = 1e-7;
        assert!(close(s.eval(2.5 - eps), s.eval(2.5 + eps), 1e-6));
    }

    #[test]
    fn spline_with_zero_lambda_through_collinear_points_is_that_line() {
        // A natural interpolating spline through points of a line is that line.
        let x: Vec<f64> = (0..10).map(|i| i as f64 * 1.5).collect();
        let y: Vec<f64> = x.iter().map(|x| 3.0 - 0.25 * x).collect();
        let s = SmoothingSpline::fit(&x, &y, None, 0.0).expect("fits");
        for t in [-3.0, 0.7, 5.1, 13.4, 20.0] {
            assert!(
                close(s.eval(t), 3.0 - 0.25 * t, 1e-12),
                "f({t}) = {}",
                s.eval(t)
            );
        }
    }

    fn least_squares(x: &[f64], y: &[f64], w: &[f64]) -> (f64, f64) {
        let sw: f64 = w.iter().sum();
        let xb = x.iter().zip(w).map(|(a, b)| a * b).sum::<f64>() / sw;
        let yb = y.iter().zip(w).map(|(a, b)| a * b).sum::<f64>() / sw;
        let sxx: f64 = x.iter().zip(w).map(|(a, b)| b * (a - xb) * (a - xb)).sum();
        let sxy: f64 = x
            .iter()
            .zip(y)
            .zip(w)
            .map(|((a, c), b)| b * (a - xb) * (c - yb))
            .sum();
        let slope = sxy / sxx;
        (yb - slope * xb, slope)
    }

    #[test]
    fn spline_with_huge_lambda_is_the_least_squares_line() {
        let x: Vec<f64> = (1..=30).map(|i| i as f64).collect();
        let y: Vec<f64> = x
            .iter()
            .map(|x| 40.0 + 0.02 * x * x + (x * 1.7).sin() * 3.0)
            .collect();
        let w: Vec<f64> = x.iter().map(|x| 1.0 + (x % 3.0)).collect();
        let (a, b) = least_squares(&x, &y, &w);
        let exact = SmoothingSpline::fit(&x, &y, Some(&w), f64::INFINITY).expect("fits");
        let huge = SmoothingSpline::fit(&x, &y, Some(&w), 1e12).expect("fits");
        for t in [0.0, 1.0, 7.5, 15.0, 30.0, 45.0] {
            assert!(
                close(exact.eval(t), a + b * t, 1e-12),
                "inf: f({t}) = {} vs {}",
                exact.eval(t),
                a + b * t
            );
            assert!(
                close(huge.eval(t), a + b * t, 1e-6),
                "1e12: f({t}) = {} vs {}",
                huge.eval(t),
                a + b * t
            );
        }
    }

    #[test]
    fn spline_is_linear_beyond_the_data() {
        let x = [2.0, 3.0, 5.0, 6.0, 9.0];
        let y = [1.0, 4.0, 2.0, 8.0, 9.0];
        for lambda in [0.0, 1.0, 100.0] {
            let s = SmoothingSpline::fit(&x, &y, None, lambda).expect("fits");
            // Right of the data: constant slope equal to the end slope, continuous at the last knot.
            let (f9, f12, f20) = (s.eval(9.0), s.eval(12.0), s.eval(20.0));
            assert!(close((f12 - f9) / 3.0, (f20 - f12) / 8.0, 1e-12));
            assert!(close((f20 - f9) / 11.0, s.end_slope(), 1e-12));
            assert!(close(s.eval(9.0 - 1e-9), f9, 1e-6));
            // Left of the data: a straight line too.
            let (f2, f0, fm5) = (s.eval(2.0), s.eval(0.0), s.eval(-5.0));
            assert!(close((f2 - f0) / 2.0, (f0 - fm5) / 5.0, 1e-12));
        }
    }

    #[test]
    fn spline_smooths_noise_yet_stays_close_to_the_true_curve() {
        let truth = |x: f64| 40.0 + 30.0 / (1.0 + (-(x - 50.0) / 8.0).exp());
        let sigma = 4.0;
        let mut rng = stream(7, 1);
        let x: Vec<f64> = (1..=100).map(|i| i as f64).collect();
        let y: Vec<f64> = x
            .iter()
            .map(|&x| {
                // Box-Muller.
                let (u1, u2): (f64, f64) = (rng.gen::<f64>().max(1e-12), rng.gen());
                truth(x) + sigma * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
            })
            .collect();
        let s = SmoothingSpline::fit(&x, &y, None, 1000.0).expect("fits");
        let n = x.len() as f64;
        let residual_var = x
            .iter()
            .zip(&y)
            .map(|(&x, &y)| (y - s.eval(x)).powi(2))
            .sum::<f64>()
            / n;
        let noise_var = x
            .iter()
            .zip(&y)
            .map(|(&x, &y)| (y - truth(x)).powi(2))
            .sum::<f64>()
            / n;
        let error_rms = (x
            .iter()
            .map(|&x| (s.eval(x) - truth(x)).powi(2))
            .sum::<f64>()
            / n)
            .sqrt();
        assert!(
            residual_var < noise_var,
            "residual variance {residual_var} >= noise variance {noise_var}"
        );
        assert!(
            residual_var > 0.5 * noise_var,
            "residual variance {residual_var}: the fit chases the noise"
        );
        assert!(
            error_rms < 0.4 * sigma,
            "fit is {error_rms} ms RMS from the true curve"
        );
    }

    /// sum w (y - f)^2 + lambda * integral f''^2 of the natural spline through `g` at the knots `x`.
    fn criterion(x: &[f64], y: &[f64], w: &[f64], g: &[f64], lambda: f64) -> f64 {
        let interp = SmoothingSpline::fit(x, g, None, 0.0).expect("fits");
        // f'' is linear on each segment: integral = h/3 (a^2 + ab + b^2).
        let roughness: f64 = (0..x.len() - 1)
            .map(|i| {
                let (a, b) = (interp.gamma[i], interp.gamma[i + 1]);
                (x[i + 1] - x[i]) / 3.0 * (a * a + a * b + b * b)
            })
            .sum();
        let fit: f64 = (0..x.len()).map(|i| w[i] * (y[i] - g[i]).powi(2)).sum();
        fit + lambda * roughness
    }

    #[test]
    fn spline_minimises_the_penalised_criterion() {
        let x = [1.0, 2.0, 4.0, 5.0, 7.0, 8.0, 9.0, 12.0];
        let y = [40.0, 42.0, 41.0, 47.0, 52.0, 50.0, 61.0, 70.0];
        let w = [1.0, 2.0, 1.0, 1.0, 3.0, 1.0, 1.0, 2.0];
        let lambda = 5.0;
        let s = SmoothingSpline::fit(&x, &y, Some(&w), lambda).expect("fits");
        let best = criterion(&x, &y, &w, s.fitted(), lambda);
        for k in 0..x.len() {
            for eps in [-1e-3, 1e-3] {
                let mut g = s.fitted().to_vec();
                g[k] += eps;
                let moved = criterion(&x, &y, &w, &g, lambda);
                assert!(
                    moved > best,
                    "moving g[{k}] by {eps} lowers the criterion: {moved} < {best}"
                );
            }
        }
    }

    #[test]
    fn spline_merges_duplicate_x_and_accepts_unsorted_input() {
        let s = SmoothingSpline::fit(&[3.0, 1.0, 3.0, 2.0], &[4.0, 1.0, 6.0, 2.0], None, 0.0)
            .expect("fits");
        assert_eq!(s.knots(), &[1.0, 2.0, 3.0]);
        assert!(close(s.eval(3.0), 5.0, 1e-12));
        let one = SmoothingSpline::fit(&[5.0], &[7.0], None, 1.0).expect("fits");
        assert_eq!((one.eval(-1.0), one.eval(100.0)), (7.0, 7.0));
    }

    #[test]
    fn spline_rejects_bad_input() {
        assert_eq!(
            SmoothingSpline::fit(&[], &[], None, 1.0).err(),
            Some(SplineError::Empty)
        );
        assert_eq!(
            SmoothingSpline::fit(&[1.0], &[], None, 1.0).err(),
            Some(SplineError::LengthMismatch)
        );
        assert_eq!(
            SmoothingSpline::fit(&[1.0], &[f64::NAN], None, 1.0).err(),
            Some(SplineError::InvalidInput)
        );
        assert_eq!(
            SmoothingSpline::fit(&[1.0], &[1.0], Some(&[0.0]), 1.0).err(),
            Some(SplineError::InvalidInput)
        );
        assert_eq!(
            SmoothingSpline::fit(&[1.0], &[1.0], None, -1.0).err(),
            Some(SplineError::InvalidInput)
        );
    }
}
