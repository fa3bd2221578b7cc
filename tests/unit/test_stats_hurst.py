"""Hurst estimators on exact fGn (paper 003 spec §5 A5): Whittle's accuracy, the known low bias of R/S
and aggregated variance at H = 0.9, the Anis-Lloyd expectation, confidence intervals, fit ranges."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ccscope import stats
from ccscope.stats import fgn, hurst
from ccscope.stats.hurst import anis_lloyd


@pytest.fixture(scope="module")
def series():
    """50 exact fGn series of 10^4 points at H = 0.5, 0.7, 0.9 (the spec's A5 protocol)."""
    return {h: [fgn(10_000, h, seed=s) for s in range(50)] for h in (0.5, 0.7, 0.9)}


@pytest.mark.parametrize("h", [0.5, 0.7, 0.9])
def test_whittle_recovers_hurst_on_exact_fgn(series, h):
    # A5 is the plain full-band Whittle (aggregation=1): on exact fGn every frequency follows the model.
    est = np.array([hurst(x, "whittle", aggregation=1).hurst for x in series[h]])
    assert math.sqrt(np.mean((est - h) ** 2)) <= 0.01
    assert abs(est.mean() - h) <= 0.005


@pytest.mark.parametrize("method", ["rs", "aggvar"])
def test_aggregated_variance_and_rs_are_biased_low_at_h_09(series, method):
    # The literature's sign (Taqqu, Teverovsky & Willinger 1995): both under-read strong LRD.
    err = np.array([hurst(x, method).hurst for x in series[0.9]]) - 0.9
    assert err.mean() < -3 * err.std(ddof=1) / math.sqrt(len(err)), err.mean()


def test_anis_lloyd_correction_removes_the_small_block_bias_of_rs_at_h_05(series):
    plain = np.array([hurst(x, "rs", correction="none").hurst for x in series[0.5]])
    corrected = np.array([hurst(x, "rs").hurst for x in series[0.5]])
    assert plain.mean() - 0.5 > 0.05  # the pox-plot slope reads high on short blocks
    assert abs(corrected.mean() - 0.5) < 0.01


def test_anis_lloyd_expectation_matches_the_formula_by_hand():
    # n = 3: Gamma(1) / (sqrt(pi) Gamma(3/2)) (sqrt(2) + sqrt(1/2)) = (2/pi) * 3/sqrt(2).
    assert anis_lloyd([3])[0] == pytest.approx(2 / math.pi * 3 / math.sqrt(2), rel=1e-13)
    # Large n stays finite and approaches sqrt(n pi / 2).
    assert anis_lloyd([100_000])[0] / math.sqrt(100_000 * math.pi / 2) == pytest.approx(1, abs=0.01)


@pytest.mark.parametrize("h", [0.5, 0.9])
def test_whittle_and_wavelet_95_percent_intervals_cover_the_truth_about_95_percent_of_the_time(series, h):
    wh = [hurst(x, "whittle", aggregation=1) for x in series[h]]
    wv = [hurst(x, "wavelet", j1=3, j2=9) for x in series[h]]
    for ests in (wh, wv):
        cover = np.mean([e.ci[0] <= h <= e.ci[1] for e in ests])
        assert 0.8 <= cover <= 1.0, (ests[0].method, cover)


def test_wavelet_recovers_hurst_on_exact_fgn(series):
    for h in (0.5, 0.9):
        est = np.array([hurst(x, "wavelet", j1=3, j2=9).hurst for x in series[h]])
        assert abs(est.mean() - h) < 0.01 and est.std() < 0.03


def test_whittle_is_blind_to_the_series_scale_and_level():
    x = fgn(4096, 0.8, seed=2)
    for agg in (1, 16):
        assert hurst(5.0 * x + 100.0, "whittle", aggregation=agg).hurst == pytest.approx(
            hurst(x, "whittle", aggregation=agg).hurst, abs=1e-6)


def _ar1_differences(n: int, phi: float, var: float, seed: int) -> np.ndarray:
    """u_t - u_(t-1) of a stationary AR(1) u with lag-1 correlation phi and variance var."""
    from scipy.signal import lfilter

    rng = np.random.default_rng(seed)
    e = rng.standard_normal(n + 1) * math.sqrt(var * (1 - phi * phi))
    e[0] = rng.standard_normal() * math.sqrt(var)  # u_0 from the stationary law
    return np.diff(lfilter([1.0], [1.0, -phi], e))


def test_aggregated_whittle_recovers_h_under_fine_scale_short_range_noise_where_the_full_band_does_not():
    # fGn (H = 0.8) plus differenced AR(1) noise (correlated over ~10 bins, no power at frequency 0: it moves
    # volume between neighbouring bins, as queueing does). Its block sums telescope, so X^(128) is fGn again
    # (paper 003 eq. 2) and the aggregated fit recovers H; the full-band fGn fit is pulled down by the noise.
    n, h = 1 << 18, 0.8
    full, agg = [], []
    for s in range(8):
        x = fgn(n, h, seed=s) + _ar1_differences(n, 0.9, 4.0, seed=100 + s)
        full.append(hurst(x, "whittle", aggregation=1).hurst)
        agg.append(hurst(x, "whittle").hurst)
    assert abs(np.mean(agg) - h) < 0.02, agg
    assert np.mean(full) < h - 0.1, full


def test_whittle_aggregation_fits_the_block_means_and_reports_the_band_per_original_bin():
    x = fgn(1 << 15, 0.7, seed=5)
    means = x.reshape(-1, 64).mean(axis=1)
    e = hurst(x, "whittle", aggregation=64)
    assert e.hurst == hurst(means, "whittle", aggregation=1).hurst and e.n == len(x)
    lo, hi = e.fit_range
    assert lo == pytest.approx(2 * math.pi / len(x)) and hi == pytest.approx(2 * math.pi * 255 / 512 / 64)
    # The default is the wavelet's finest scale, 2^7 bins (1.28 s at 10 ms).
    assert hurst(x, "whittle").fit_range[1] == pytest.approx(2 * math.pi * 127 / 256 / 128)
    with pytest.raises(stats.StatsError, match="aggregation"):
        hurst(x, "whittle", aggregation=0)


@pytest.mark.parametrize("method,slope_to_h", [
    ("rs", lambda b: b), ("aggvar", lambda b: 1 + b / 2), ("wavelet", lambda b: (b + 1) / 2),
])
def test_plot_points_carry_the_fitted_slope(method, slope_to_h):
    x = fgn(1 << 15, 0.75, seed=4)
    e = hurst(x, method) if method != "wavelet" else hurst(x, method, j1=3)
    assert slope_to_h(e.slope) == pytest.approx(e.hurst, abs=1e-12)
    if method != "wavelet":  # a plain OLS line through exactly the plotted points
        b, _ = np.polyfit(e.log_scale, e.log_stat, 1)
        assert slope_to_h(b) == pytest.approx(e.hurst, abs=1e-9)
    assert e.n == len(x) and len(e.log_scale) == len(e.log_stat) >= 2


def test_default_fit_ranges_are_the_spec_traffic_ranges():
    x = fgn(1_000_000 // 10, 0.7, seed=1)  # 10^5 points: blocks 10..1000, octaves 7..j_max-3
    assert hurst(x, "aggvar").fit_range == (10.0, 1000.0)
    assert hurst(x, "rs").fit_range == (10.0, 1000.0)
    import pywt

    jmax = pywt.dwt_max_level(len(x), pywt.Wavelet("db3").dec_len)
    assert hurst(x, "wavelet").fit_range == (7.0, float(jmax - 3))


@pytest.mark.parametrize("method,fit,minimum", [
    ("rs", {}, 2000), ("aggvar", {}, 2000), ("aggvar", {"max_scale": 500}, 1000),
    ("wavelet", {}, 5 * 2 ** 11), ("wavelet", {"j1": 2, "j2": 6}, 5 * 2**6), ("whittle", {"aggregation": 1}, 128),
    ("whittle", {}, 128 * 128), ("whittle", {"aggregation": 10}, 1280),
])
def test_series_too_short_for_the_fit_range_names_the_method_and_minimum(method, fit, minimum):
    x = fgn(minimum - 1, 0.7, seed=1)
    with pytest.raises(stats.SeriesTooShortError) as ei:
        hurst(x, method, **fit)
    assert ei.value.method == method and ei.value.minimum == minimum
    assert str(ei.value).startswith(f"{method}:") and str(minimum) in str(ei.value)
    assert isinstance(ei.value, ValueError)
    hurst(fgn(minimum, 0.7, seed=1), method, **fit)  # the minimum itself is enough


def test_unknown_method_or_fit_argument_is_refused():
    x = fgn(5000, 0.7, seed=1)
    with pytest.raises(stats.StatsError, match="method"):
        hurst(x, "dfa")
    with pytest.raises(stats.StatsError, match="j1"):
        hurst(x, "aggvar", j1=3)
    with pytest.raises(stats.StatsError, match="not finite"):
        hurst(np.r_[x, np.nan], "whittle")


def test_four_estimators_give_identical_results_on_the_same_series():
    x = fgn(20_000, 0.8, seed=9)
    for m in stats.METHODS:
        kw = {"j1": 3} if m == "wavelet" else {}
        a, b = hurst(x, m, **kw), hurst(x.copy(), m, **kw)
        assert a.hurst == b.hurst and a.ci == b.ci


@pytest.mark.parametrize("method", stats.METHODS)
def test_every_estimator_accepts_a_read_only_series(method):
    # A run's link series is a read-only view of the native result's buffer; pywt refused it once.
    x = fgn(2**14, 0.8, seed=3)
    ro = x.copy()
    ro.flags.writeable = False
    assert hurst(ro, method).hurst == hurst(x, method).hurst


@pytest.mark.parametrize("x,why", [
    (np.exp(1j * np.arange(4096.0)), "complex values"),  # numpy would drop the imaginary part with only a warning
    (["1.0", "a"] * 2048, "not a series of numbers"),
    ("abc", "not a series of numbers"),
])
def test_a_series_that_is_not_real_numbers_is_a_stats_error_naming_x(x, why):
    from ccscope.stats import StatsError

    with pytest.raises(StatsError, match=f"^x: .*{why}"):
        hurst(x, "rs")


@pytest.mark.parametrize("method,fit,name", [
    ("rs", dict(min_scale=math.nan), "min_scale"),
    ("aggvar", dict(min_scale=2.5), "min_scale"),
    ("rs", dict(max_scale=100.5), "max_scale"),
    ("rs", dict(scales_per_decade=math.inf), "scales_per_decade"),
    ("wavelet", dict(j1=1.5), "j1"),  # was fitted over octaves 2.. without a word
    ("wavelet", dict(j2=math.nan), "j2"),
])
def test_a_fit_argument_that_is_not_a_whole_number_is_a_stats_error_naming_it(method, fit, name):
    from ccscope.stats import StatsError

    with pytest.raises(StatsError, match=f"^{method}: {name} must be a whole number"):
        hurst(fgn(40_000, 0.8, 1), method, **fit)


@pytest.mark.parametrize("fit,name", [(dict(j1=20_000), "j1"), (dict(j2=20_000), "j2"), (dict(j1=3, j2=20_000), "j2")])
def test_a_wavelet_octave_beyond_any_series_is_refused_by_name_before_its_length_is_computed(fit, name):
    # The minimum length (dec_len - 1) 2^j was computed first: at j = 20,000 it cannot even be printed (a bare
    # "Exceeds the limit (4300 digits)" error), and at j = 10^14 the power alone exhausts memory.
    from ccscope.stats import StatsError
    from ccscope.stats.hurst import MAX_OCTAVE

    with pytest.raises(StatsError, match=f"^wavelet: {name} must be at most {MAX_OCTAVE}, got 20000$"):
        hurst(fgn(4096, 0.8, 1), "wavelet", **fit)


@pytest.mark.parametrize("method", stats.METHODS)
@pytest.mark.parametrize("level", [0.0, 2.0, 1e6])
def test_every_estimator_refuses_a_constant_series(method, level):
    # The wavelet fitted the rounding noise of a constant's detail coefficients: H = 3.38 at level 2.
    from ccscope.stats import StatsError

    with pytest.raises(StatsError, match=f"^{method}: .*constant"):
        hurst(np.full(2**15, level), method)


@pytest.mark.parametrize("method", ["rs", "aggvar"])
def test_a_scale_count_beyond_the_bound_is_refused_naming_scales_per_decade_before_allocating(method):
    # 10^9 per decade asked numpy for 9.7 GiB of block sizes (10^11: 970 GiB) before any check.
    from ccscope.stats import StatsError

    with pytest.raises(StatsError, match=f"^{method}: scales_per_decade .* above the limit"):
        hurst(fgn(20_000, 0.7, 1), method, scales_per_decade=10**11)


@pytest.mark.parametrize("method", ["rs", "aggvar"])
@pytest.mark.parametrize("per_decade", [10**400, 1.7e308], ids=["10^400", "1.7e308"])
def test_a_scale_count_beyond_the_float_range_is_refused_naming_scales_per_decade_not_an_overflow(method, per_decade):
    # The count was per_decade x log10(span) in floats: an OverflowError ("int too large to convert to float",
    # "cannot convert float infinity to integer") before the bound could name the argument.
    from ccscope.stats import StatsError

    with pytest.raises(StatsError, match=f"^{method}: scales_per_decade .* above the limit"):
        hurst(fgn(20_000, 0.7, 1), method, scales_per_decade=per_decade)
