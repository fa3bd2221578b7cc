//! Poisson counts and Poisson counts with a random rate, in the forms a Bayesian rate model needs:
//! log-likelihoods that do not underflow, a censored (at-least-k) likelihood, and the
//! `p(c + 1) = p(c) (a + b c) / (c + 1)` recursion (Panjer's (a, b, 0) class) that yields a count
//! distribution term by term without allocating.

/// `ln k!`: exact sum up to 255, Stirling's series beyond (error below 1e-12 there).
pub fn ln_factorial(k: u64) -> f64 {
    if k < 256 {
        return (2..=k).map(|i| (i as f64).ln()).sum();
    }
    let n = k as f64 + 1.0;
    // ln Γ(n) by Stirling's series with three correction terms.
    (n - 0.5) * n.ln() - n + 0.5 * (2.0 * std::f64::consts::PI).ln() + 1.0 / (12.0 * n)
        - 1.0 / (360.0 * n.powi(3))
        + 1.0 / (1260.0 * n.powi(5))
}

/// `ln P(N = k)` for `N ~ Poisson(x)` without the `ln k!` term, which is the same for every `x`:
/// `k ln x - x`. `ln_x` is `ln x`, passed in so a caller with fixed `x` values can precompute it.
/// `x = 0` gives 0 for `k = 0` and `-inf` otherwise.
#[inline]
pub fn ln_pmf_kernel(k: u64, x: f64, ln_x: f64) -> f64 {
    if k == 0 {
        -x
    } else if x > 0.0 {
        k as f64 * ln_x - x
    } else {
        f64::NEG_INFINITY
    }
}

/// `ln P(N >= k)` for `N ~ Poisson(x)`: the likelihood of a count that is only known to be at least `k`.
/// `ln_k_fact` is `ln_factorial(k)`, passed in because a caller evaluates many `x` for one `k`.
pub fn ln_sf(k: u64, x: f64, ln_k_fact: f64) -> f64 {
    if k == 0 {
        return 0.0;
    }
    if !(x > 0.0) {
        return f64::NEG_INFINITY;
    }
    let kf = k as f64;
    if x < kf + 1.0 {
        // P(N >= k) = P(N = k) * sum_n x^n / ((k+1)...(k+n)); the terms shrink geometrically here.
        let mut term = 1.0;
        let mut sum = 1.0;
        let mut n = 1.0;
        while n < 10_000.0 {
            term *= x / (kf + n);
            sum += term;
            if term < 1e-17 * sum {
                break;
            }
            n += 1.0;
        }
        kf * x.ln() - x - ln_k_fact + sum.ln()
    } else {
        // x >= k + 1: P(N < k) is at most about one half, so 1 - P(N < k) loses no precision.
        let ln_x = x.ln();
        let mut ln_p = -x;
        let mut below = 0.0;
        for c in 0..k {
            if c > 0 {
                ln_p += ln_x - (c as f64).ln();
            }
            below += ln_p.exp();
        }
        (1.0 - below).max(f64::MIN_POSITIVE).ln()
    }
}

/// A count distribution given by `P(0) = p0` and `P(c + 1) = P(c) (a + b c) / (c + 1)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CountRecursion {
    pub p0: f64,
    pub a: f64,
    pub b: f64,
}

impl CountRecursion {
    /// All mass at zero.
    pub const ZERO: CountRecursion = CountRecursion {
        p0: 1.0,
        a: 0.0,
        b: 0.0,
    };

    /// Counts of a Poisson process whose expected count is itself random with mean `mean` and variance
    /// `extra_var`, the random mean taken to be gamma distributed: a negative binomial with mean `mean`
    /// and variance `mean + extra_var`. `extra_var = 0` is Poisson(`mean`).
    pub fn mixed_poisson(mean: f64, extra_var: f64) -> CountRecursion {
        if !(mean > 0.0) {
            return CountRecursion::ZERO;
        }
        if !(extra_var > 0.0) {
            return CountRecursion {
                p0: (-mean).exp(),
                a: mean,
                b: 0.0,
            };
        }
        // Gamma(shape r, scale theta) mean: r theta = mean, r theta^2 = extra_var.
        let theta = extra_var / mean;
        let r = mean / theta;
        let q = theta / (1.0 + theta);
        CountRecursion {
            p0: (-r * theta.ln_1p()).exp(),
            a: r * q,
            b: q,
        }
    }

    /// `P(c + 1) / P(c)`.
    #[inline]
    pub fn ratio(&self, c: u32) -> f64 {
        (self.a + self.b * c as f64) / (c as f64 + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::assert_close;

    fn pmf(k: u64, x: f64) -> f64 {
        (ln_pmf_kernel(k, x, x.ln()) - ln_factorial(k)).exp()
    }

    #[test]
    fn ln_factorial_matches_products_and_stirling_joins_smoothly() {
        assert_eq!(ln_factorial(0), 0.0);
        assert_close(ln_factorial(5), 120f64.ln());
        let direct: f64 = (2..=300u64).map(|i| (i as f64).ln()).sum();
        assert!(
            (ln_factorial(300) - direct).abs() < 1e-9,
            "{} vs {direct}",
            ln_factorial(300)
        );
    }

    #[test]
    fn pmf_kernel_plus_factorial_is_the_poisson_pmf() {
        // P(N = 3 | x = 2) = e^-2 2^3 / 3! (hand-worked: 0.180447...).
        assert_close(pmf(3, 2.0), (-2f64).exp() * 8.0 / 6.0);
        assert_eq!(ln_pmf_kernel(0, 0.0, f64::NEG_INFINITY), 0.0);
        assert_eq!(ln_pmf_kernel(2, 0.0, f64::NEG_INFINITY), f64::NEG_INFINITY);
    }

    #[test]
    fn survival_function_matches_the_sum_of_the_pmf_on_both_branches() {
        for &(k, x) in &[
            (1u64, 0.5),
            (3, 2.0),
            (5, 5.5),
            (10, 30.0),
            (40, 3.0),
            (2, 200.0),
        ] {
            let direct: f64 = 1.0 - (0..k).map(|c| pmf(c, x)).sum::<f64>();
            let tail: f64 = (k..k + 400).map(|c| pmf(c, x)).sum();
            let got = ln_sf(k, x, ln_factorial(k)).exp();
            assert!(
                (got - tail).abs() <= 1e-12 + 1e-9 * tail,
                "k {k} x {x}: {got} vs tail {tail}"
            );
            if direct > 1e-6 {
                assert!(
                    (got - direct).abs() < 1e-9,
                    "k {k} x {x}: {got} vs {direct}"
                );
            }
        }
        assert_eq!(ln_sf(0, 0.0, 0.0), 0.0);
        assert_eq!(ln_sf(1, 0.0, 0.0), f64::NEG_INFINITY);
    }

    fn moments(d: CountRecursion, n: u32) -> (f64, f64, f64) {
        let (mut p, mut total, mut mean, mut sq) = (d.p0, 0.0, 0.0, 0.0);
        for c in 0..n {
            total += p;
            mean += c as f64 * p;
            sq += (c as f64).powi(2) * p;
            p *= d.ratio(c);
        }
        (total, mean, sq - mean * mean)
    }

    #[test]
    fn mixed_poisson_has_the_requested_mean_and_variance() {
        let (total, mean, var) = moments(CountRecursion::mixed_poisson(20.0, 15.0), 400);
        assert!(
            (total - 1.0).abs() < 1e-12 && (mean - 20.0).abs() < 1e-9 && (var - 35.0).abs() < 1e-8,
            "{total} {mean} {var}"
        );
        let (total, mean, var) = moments(CountRecursion::mixed_poisson(7.0, 0.0), 200);
        assert!(
            (total - 1.0).abs() < 1e-12 && (mean - 7.0).abs() < 1e-9 && (var - 7.0).abs() < 1e-8,
            "{total} {mean} {var}"
        );
        assert_eq!(
            CountRecursion::mixed_poisson(0.0, 3.0),
            CountRecursion::ZERO
        );
    }
}
