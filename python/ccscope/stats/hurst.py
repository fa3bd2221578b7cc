"""Hurst-parameter estimators (paper 003 §2.1, Fig. 1): rescaled range, aggregated variance, Abry-Veitch
wavelet and Whittle on the fGn spectrum.

Default fit ranges are the spec's [D] for 10 ms traffic series (docs/deviations.md): block sizes from 10
bins (0.1 s) to n/100 for R/S and aggregated variance, wavelet octaves 7 (2^7 bins = 1.28 s) to j_max - 3,
and Whittle on the series aggregated over 2^7 bins (the wavelet's finest scale; aggregation=1 is the
plain full-band Whittle of exact fGn). Each estimator takes its range as arguments, and a series too short
for it raises :class:`SeriesTooShortError` naming the method and the minimum length.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Optional, Tuple

import numpy as np

from ccscope.stats.errors import SeriesTooShortError, StatsError, check_series

METHODS = ("rs", "aggvar", "wavelet", "whittle")

#: Smallest block size of the R/S and variance-time fits, in bins (spec §3.1 [D]: 10 bins = 0.1 s).
MIN_SCALE = 10
#: The largest block size is n // MAX_SCALE_DIVISOR (spec §3.1 [D]: N/100, so at least 100 blocks).
MAX_SCALE_DIVISOR = 100
#: Block sizes per decade between the two.
SCALES_PER_DECADE = 10
#: First wavelet octave of the fit (spec §3.1 [D]: j >= 7, 1.28 s at 10 ms); the last is j_max - 3.
WAVELET_J1 = 7
WAVELET_TOP_GAP = 3
#: Most block sizes a fit may ask for (8 MB of them); at most n / 100 of them are distinct anyway.
MAX_SCALES = 1_000_000
#: Largest octave a fit may name: octave j needs more than 2^j points, and no series holds 2^62.
MAX_OCTAVE = 62
#: Daubechies wavelet with 3 vanishing moments: > (2H - 1)/2 for every H < 1, and blind to linear trends.
WAVELET = "db3"
#: Whittle needs a spectrum to fit; fewer points than this leave too few Fourier frequencies.
WHITTLE_MIN_N = 128
#: Whittle's default aggregation, in bins: the fGn model is fitted to the block means X^(m) over 2^WAVELET_J1 bins
#: (1.28 s at 10 ms), the finest scale of the wavelet fit (Taqqu, Teverovsky & Willinger 1995; Leland et al. 1994).
WHITTLE_AGGREGATION = 2**WAVELET_J1
#: Terms of the fGn spectral sum kept exactly on each side (Paxson 1997 keeps 3) before the integral tail.
WHITTLE_TERMS = 3
#: 95% normal quantile for the confidence intervals.
Z95 = 1.959963984540054


@dataclass(frozen=True, eq=False)
class HurstEstimate:
    """One Hurst estimate and the points it was fitted to.

    ``log_scale``/``log_stat`` are the points of the method's plot: R/S: (log10 block size, log10 of the
    Anis-Lloyd-corrected mean R/S, whose slope is H); aggregated variance: (log10 m, log10 Var X^(m),
    slope 2H - 2); wavelet: (octave j, bias-corrected log2 mean squared detail y_j, slope 2H - 1, every
    octave computed, not only the fitted ones); Whittle: (log10 frequency, log10 periodogram) averaged in
    log-spaced frequency bins. ``fit_range`` is in ``fit_unit``; ``ci`` is a 95% interval or None."""

    hurst: float
    method: str
    fit_range: Tuple[float, float]
    fit_unit: str
    ci: Optional[Tuple[float, float]]
    n: int
    log_scale: np.ndarray
    log_stat: np.ndarray
    slope: Optional[float] = None
    intercept: Optional[float] = None

    def to_dict(self, points: bool = False) -> dict:
        """Plain types for JSON; the plot points only if asked."""
        d = asdict(self)
        d["fit_range"] = list(self.fit_range)
        d["ci"] = list(self.ci) if self.ci is not None else None
        if points:
            d["log_scale"], d["log_stat"] = self.log_scale.tolist(), self.log_stat.tolist()
        else:
            del d["log_scale"], d["log_stat"]
        return d


def hurst(x, method: str = "whittle", **fit) -> HurstEstimate:
    """Estimate the Hurst parameter of series `x` with `method` (one of :data:`METHODS`).

    Keyword arguments set the fit: ``rs``: min_scale, max_scale, scales_per_decade, correction;
    ``aggvar``: min_scale, max_scale, scales_per_decade; ``wavelet``: j1, j2, wavelet; ``whittle``: aggregation."""
    fns = {"rs": rescaled_range, "aggvar": aggregated_variance, "wavelet": wavelet, "whittle": whittle}
    if method not in fns:
        raise StatsError(f"method: {method!r} is not one of {', '.join(METHODS)}")
    import inspect

    allowed = set(inspect.signature(fns[method]).parameters) - {"x"}
    for k in fit:
        if k not in allowed:
            raise StatsError(f"{method}: unknown fit argument {k!r} (expected one of {', '.join(sorted(allowed))})")
    return fns[method](x, **fit)


def _whole(method: str, name: str, v) -> int:
    """A fit argument as an int; NaN, infinities, fractions and text are a StatsError naming it."""
    import numbers

    if isinstance(v, bool) or not (isinstance(v, numbers.Integral) or (isinstance(v, float) and v.is_integer())):
        raise StatsError(f"{method}: {name} must be a whole number, got {v!r}")
    return int(v)


def _block_scales(method: str, n: int, min_scale: int, max_scale: Optional[int], per_decade: int) -> np.ndarray:
    """Integer block sizes log-spaced from min_scale to max_scale (default n // 100), at least 2 blocks each."""
    min_scale, per_decade = _whole(method, "min_scale", min_scale), _whole(method, "scales_per_decade", per_decade)
    max_scale = None if max_scale is None else _whole(method, "max_scale", max_scale)
    if min_scale < 2:
        raise StatsError(f"{method}: min_scale must be >= 2, got {min_scale}")
    if per_decade < 1:
        raise StatsError(f"{method}: scales_per_decade must be >= 1, got {per_decade}")
    if max_scale is None:
        hi = n // MAX_SCALE_DIVISOR
        need = 2 * min_scale * MAX_SCALE_DIVISOR
        why = f"block sizes {min_scale}..n/{MAX_SCALE_DIVISOR} spanning a factor of 2"
    else:
        hi = max_scale
        if max_scale < 2 * min_scale:
            raise StatsError(f"{method}: max_scale {max_scale} must be at least 2 * min_scale ({2 * min_scale})")
        need = 2 * max_scale
        why = f"2 blocks of the largest size {max_scale}"
    if hi < 2 * min_scale or n < need:
        raise SeriesTooShortError(method, n, need, why)
    decades = math.log10(hi / min_scale)
    # An exact int/float comparison, before the product: per_decade may lie beyond the float range.
    if per_decade > 2 * MAX_SCALES / decades:
        shown = per_decade if per_decade < 10**30 else "above 1e30"
        raise StatsError(f"{method}: scales_per_decade {shown} gives over {2 * MAX_SCALES} block sizes, above the "
                         f"limit of {MAX_SCALES}")
    k = max(2, int(math.ceil(per_decade * decades)) + 1)
    if k > MAX_SCALES:  # before logspace allocates them
        raise StatsError(f"{method}: scales_per_decade {per_decade} gives {k} block sizes, above the limit of {MAX_SCALES}")
    return np.unique(np.round(np.logspace(math.log10(min_scale), math.log10(hi), k)).astype(np.int64))


def _line(xs: np.ndarray, ys: np.ndarray) -> Tuple[float, float]:
    """Ordinary least-squares slope and intercept."""
    slope, intercept = np.polyfit(xs, ys, 1)
    return float(slope), float(intercept)


def anis_lloyd(n) -> np.ndarray:
    """Expected R/S of n i.i.d. normals (Anis & Lloyd 1976): Gamma((n-1)/2) / (sqrt(pi) Gamma(n/2))
    sum_{i=1}^{n-1} sqrt((n-i)/i), in log-gamma so it stays finite for every n. Peters' (1994) factor
    (n - 1/2)/n is not applied: without it the formula matches the simulated mean of this R/S to 0.1%
    at n = 10-300 (docs/deviations.md)."""
    out = []
    for m in np.atleast_1d(n).astype(np.int64):
        i = np.arange(1, m, dtype=np.float64)
        s = np.sum(np.sqrt((m - i) / i))
        out.append(math.exp(math.lgamma((m - 1) / 2.0) - math.lgamma(m / 2.0)) / math.sqrt(math.pi) * s)
    return np.asarray(out)


def _mean_rs(x: np.ndarray, s: int) -> float:
    """Mean R/S over the non-overlapping blocks of size s (blocks of zero variance are skipped)."""
    k = len(x) // s
    b = x[: k * s].reshape(k, s)
    y = np.cumsum(b - b.mean(axis=1, keepdims=True), axis=1)
    # The range of the partial sums Y_1..Y_s (Y_s = 0, so it spans 0) over the block's deviation.
    r = np.maximum(y.max(axis=1), 0.0) - np.minimum(y.min(axis=1), 0.0)
    sd = b.std(axis=1)
    ok = sd > 0
    if not ok.any():
        raise StatsError(f"rs: every block of size {s} is constant")
    return float(np.mean(r[ok] / sd[ok]))


def rescaled_range(x, min_scale: int = MIN_SCALE, max_scale: Optional[int] = None,
                   scales_per_decade: int = SCALES_PER_DECADE, correction: str = "anis-lloyd") -> HurstEstimate:
    """R/S (Hurst 1951; Mandelbrot & Wallis 1969) over non-overlapping blocks.

    correction="anis-lloyd": H = 1/2 + slope of log(R/S)_n - log E(R/S)_n against log n (Anis & Lloyd 1976;
    Weron 2002); "none": the plain pox-plot slope of log mean (R/S)_n. S is the block's standard
    deviation with divisor n, as in the Anis-Lloyd expectation."""
    if correction not in ("anis-lloyd", "none"):
        raise StatsError(f"rs: correction must be 'anis-lloyd' or 'none', got {correction!r}")
    a = check_series(x)
    scales = _block_scales("rs", len(a), min_scale, max_scale, scales_per_decade)
    rs = np.array([_mean_rs(a, int(s)) for s in scales])
    lx = np.log10(scales.astype(np.float64))
    ly = np.log10(rs)
    if correction == "anis-lloyd":
        # Plot log(R/S) - log E(R/S) + log(n)/2, whose slope is the corrected H (Weron 2002).
        ly = ly - np.log10(anis_lloyd(scales)) + 0.5 * lx
    slope, intercept = _line(lx, ly)
    return HurstEstimate(slope, "rs" if correction == "anis-lloyd" else "rs-uncorrected",
                         (float(scales[0]), float(scales[-1])), "block size (bins)", None, len(a), lx, ly,
                         slope, intercept)


def aggregated_variance(x, min_scale: int = MIN_SCALE, max_scale: Optional[int] = None,
                        scales_per_decade: int = SCALES_PER_DECADE) -> HurstEstimate:
    """Variance-time plot: Var X^(m) ~ m^(-beta), H = 1 - beta/2 (paper 003 §2.1; Taqqu et al. 1995)."""
    a = check_series(x)
    scales = _block_scales("aggvar", len(a), min_scale, max_scale, scales_per_decade)
    var = np.empty(len(scales))
    for i, m in enumerate(scales):
        k = len(a) // m
        var[i] = a[: k * m].reshape(k, m).mean(axis=1).var(ddof=1)
    if np.any(var <= 0):
        raise StatsError("aggvar: the aggregated series is constant at some block size")
    lx, ly = np.log10(scales.astype(np.float64)), np.log10(var)
    slope, intercept = _line(lx, ly)
    return HurstEstimate(1.0 + slope / 2.0, "aggvar", (float(scales[0]), float(scales[-1])), "block size (bins)",
                         None, len(a), lx, ly, slope, intercept)


def wavelet(x, j1: int = WAVELET_J1, j2: Optional[int] = None, wavelet: str = WAVELET) -> HurstEstimate:
    """Abry-Veitch (1998) logscale-diagram estimator.

    y_j = log2(mean_k d_{j,k}^2) - g(n_j), g(n) = psi(n/2)/ln 2 - log2(n/2) (Veitch & Abry 1999, eq. 7),
    fitted by weighted least squares over octaves j1..j2 with weights 1/var(y_j), var(y_j) = zeta(2, n_j/2)/ln^2 2;
    slope alpha = 2H - 1, and the 95% CI comes from the regression's variance. Octave 1 is the finest.
    Detail coefficients whose support wraps around the series' ends are dropped."""
    import pywt
    from scipy.special import polygamma, psi

    # pywt's transform needs a writable buffer; pandas hands out read-only views.
    a = np.require(check_series(x), requirements=["W"])
    n = len(a)
    try:
        w = pywt.Wavelet(wavelet)
    except ValueError:
        raise StatsError(f"wavelet: unknown wavelet {wavelet!r}") from None
    j1 = _whole("wavelet", "j1", j1)
    j2 = None if j2 is None else _whole("wavelet", "j2", j2)
    if j1 < 1:
        raise StatsError(f"wavelet: j1 must be >= 1, got {j1}")
    # Before any 2^j: the minimum length below is exact integer arithmetic, unbounded in j.
    for name, j in (("j1", j1), ("j2", j2)):
        if j is not None and j > MAX_OCTAVE:
            raise StatsError(f"wavelet: {name} must be at most {MAX_OCTAVE}, got {j}")
    jmax = pywt.dwt_max_level(n, w.dec_len)
    if j2 is None:
        j2_eff, need = jmax - WAVELET_TOP_GAP, (w.dec_len - 1) * 2 ** (j1 + 1 + WAVELET_TOP_GAP)
        why = f"octaves {j1}..j_max-{WAVELET_TOP_GAP} with {wavelet}"
    else:
        if j2 <= j1:
            raise StatsError(f"wavelet: j2 ({j2}) must be above j1 ({j1})")
        j2_eff, need = j2, (w.dec_len - 1) * 2**j2
        why = f"octave {j2} with {wavelet}"
    if j2_eff < j1 + 1 or n < need:
        raise SeriesTooShortError("wavelet", n, need, why)
    if a.min() == a.max():
        # Its detail coefficients are rounding noise of the level (about 1e-16 of it), not zero.
        raise StatsError("wavelet: the series is constant")
    levels = max(jmax, j2_eff)
    coeffs = pywt.wavedec(a, w, mode="periodization", level=levels)
    # A linear ramp has zero detail coefficients (>= 2 vanishing moments) except where the periodic
    # extension jumps: those coefficients straddle the ends and are dropped.
    ramp = pywt.wavedec(np.arange(n, dtype=np.float64), w, mode="periodization", level=levels)
    octaves, ys, vs, ns = [], [], [], []
    for j in range(1, levels + 1):
        d, r = coeffs[-j], ramp[-j]
        keep = d[np.abs(r) <= 1e-6 * n]
        nj = len(keep)
        if nj < 2:
            continue
        mu = float(np.mean(keep * keep))
        if mu <= 0:
            raise StatsError("wavelet: the series is constant")
        octaves.append(j)
        ys.append(math.log2(mu) - (psi(nj / 2.0) / math.log(2) - math.log2(nj / 2.0)))
        vs.append(float(polygamma(1, nj / 2.0)) / math.log(2) ** 2)
        ns.append(nj)
    js, y, v = np.array(octaves, dtype=np.float64), np.array(ys), np.array(vs)
    sel = (js >= j1) & (js <= j2_eff)
    if sel.sum() < 2:
        raise SeriesTooShortError("wavelet", n, need, why)
    wt = 1.0 / v[sel]
    xj, yj = js[sel], y[sel]
    s0, s1, s2 = wt.sum(), (wt * xj).sum(), (wt * xj * xj).sum()
    det = s0 * s2 - s1 * s1
    slope = float(((wt * (s0 * xj - s1)) * yj).sum() / det)
    intercept = float(((wt * (s2 - s1 * xj)) * yj).sum() / det)
    sd_h = 0.5 * math.sqrt(s0 / det)
    h = (slope + 1.0) / 2.0
    return HurstEstimate(h, "wavelet", (float(xj[0]), float(xj[-1])), "octave", (h - Z95 * sd_h, h + Z95 * sd_h),
                         n, js, y, slope, intercept)


def _fgn_spectrum_logs(lam: np.ndarray, terms: int):
    """log(1 - cos l), log|l| and log(2 pi k +- l) for k = 1..terms+1 (the last pair for the tail)."""
    k = np.arange(1, terms + 2, dtype=np.float64)[:, None]
    two_pi_k = 2.0 * np.pi * k
    tail = 2.0 * np.pi * (terms + 0.5)
    return (np.log1p(-np.cos(lam)), np.log(lam), np.log(two_pi_k[:terms] + lam), np.log(two_pi_k[:terms] - lam),
            np.log(tail + lam), np.log(tail - lam))


def fgn_log_spectrum(h: float, logs) -> np.ndarray:
    """log f(lambda; H) of fGn up to a constant: (1 - cos l) sum_k |2 pi k + l|^(-2H-1) (Sinai 1976; Beran
    1994, Sec. 2.4), the sum kept for |k| <= WHITTLE_TERMS and its tail by the integral from K + 1/2 plus
    the midpoint rule's first Euler-Maclaurin term (Paxson 1997 also replaces the tail by integrals)."""
    l1c, ll, lp, lm, tp, tm = logs
    d = -2.0 * h - 1.0
    b = np.exp(d * ll) + np.exp(d * lp).sum(axis=0) + np.exp(d * lm).sum(axis=0)
    b += (np.exp(-2.0 * h * tp) + np.exp(-2.0 * h * tm)) / (4.0 * np.pi * h)
    # Euler-Maclaurin for the midpoint rule: sum_k g(k) = integral + g'(K + 1/2)/24 + O(g''').
    b += d * 2.0 * np.pi * (np.exp((d - 1.0) * tp) + np.exp((d - 1.0) * tm)) / 24.0
    return l1c + np.log(b)


def whittle(x, aggregation: int = WHITTLE_AGGREGATION) -> HurstEstimate:
    """Whittle's approximate maximum likelihood for fGn (Beran 1994, Sec. 5.5) on the aggregated series.

    The series is first replaced by its means over non-overlapping blocks of `aggregation` bins (paper 003
    §2.1's X^(m); an incomplete last block is dropped): aggregating an asymptotically self-similar series
    keeps its correlation structure (eq. 2) and brings it towards fGn, which is how the traffic literature fits
    the fGn model to data whose fine scales are not fGn (Leland et al. 1994; Taqqu, Teverovsky & Willinger
    1995). Then, the scale profiled out, minimise log(mean I(l_j)/f(l_j; H)) + mean log f(l_j; H) over the
    Fourier frequencies l_j in (0, pi) of the aggregated series for H in (0, 1). The 95% CI uses the Fisher
    information: Var H = 2 / (n_m Var_l d log f/dH), n_m the aggregated length. ``aggregation=1`` is the
    plain full-band Whittle. ``fit_range`` and the plot points are in radians per original bin (l_j / m)."""
    from scipy.optimize import minimize_scalar

    a = check_series(x)
    n = len(a)
    if isinstance(aggregation, bool) or not isinstance(aggregation, (int, np.integer)) or aggregation < 1:
        raise StatsError(f"whittle: aggregation must be a whole number of bins >= 1, got {aggregation!r}")
    agg = int(aggregation)
    need = WHITTLE_MIN_N * agg
    if n < need:
        why = ("enough Fourier frequencies to fit" if agg == 1 else
               f"{WHITTLE_MIN_N} blocks of the aggregation {agg} bins")
        raise SeriesTooShortError("whittle", n, need, why)
    if agg > 1:
        k = n // agg
        a = a[: k * agg].reshape(k, agg).mean(axis=1)
    na = len(a)
    a = a - a.mean()
    m = (na - 1) // 2
    per = (np.abs(np.fft.rfft(a)[1 : m + 1]) ** 2) / (2.0 * np.pi * na)
    if not np.any(per > 0):
        raise StatsError("whittle: the series is constant")
    lam = 2.0 * np.pi * np.arange(1, m + 1) / na
    logs = _fgn_spectrum_logs(lam, WHITTLE_TERMS)

    def objective(h: float) -> float:
        lf = fgn_log_spectrum(h, logs)
        return math.log(np.mean(per * np.exp(-lf))) + float(np.mean(lf))

    res = minimize_scalar(objective, bounds=(1e-4, 1.0 - 1e-4), method="bounded", options={"xatol": 1e-7})
    h = float(res.x)
    eps = 1e-5
    dlog = (fgn_log_spectrum(min(h + eps, 1 - 1e-6), logs) - fgn_log_spectrum(max(h - eps, 1e-6), logs)) / (2 * eps)
    sd = math.sqrt(2.0 / (na * float(np.var(dlog))))
    # Plot points: the periodogram averaged in 60 log-spaced frequency bins, frequencies per original bin.
    lam0 = lam / agg
    edges = np.logspace(math.log10(lam0[0]), math.log10(lam0[-1]) + 1e-12, 61)
    idx = np.clip(np.searchsorted(edges, lam0, side="right") - 1, 0, 59)
    cnt = np.bincount(idx, minlength=60)[:60]
    sums = np.bincount(idx, weights=per, minlength=60)[:60]
    lsum = np.bincount(idx, weights=np.log10(lam0), minlength=60)[:60]
    ok = cnt > 0
    return HurstEstimate(h, "whittle", (float(lam0[0]), float(lam0[-1])), "frequency (rad/bin)",
                         (h - Z95 * sd, h + Z95 * sd), n, lsum[ok] / cnt[ok], np.log10(sums[ok] / cnt[ok]))
