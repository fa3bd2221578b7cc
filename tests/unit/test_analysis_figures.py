"""The analysis figures: the 1-sigma ellipse, the empirical CDF, group statistics, and the paper standards
every figure keeps (log inverted delay axis, fonts of 9 pt or more, units, colour-blind-safe colours)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from matplotlib.text import Text

from ccscope.analysis import figures as F
from ccscope.analysis.comparison import RunPoint, group_stats


def _mahalanobis(points: np.ndarray, d: np.ndarray, t: np.ndarray) -> np.ndarray:
    xy = np.column_stack([d, t])
    mu, cov = xy.mean(axis=0), np.cov(xy, rowvar=False, bias=True)
    p = points - mu
    return np.sqrt(np.einsum("ij,jk,ik->i", p, np.linalg.inv(cov), p))


def test_every_point_of_the_ellipse_is_one_sigma_from_the_runs_mean():
    d = np.array([80.0, 95.0, 120.0, 100.0, 70.0])
    t = np.array([4.0, 4.6, 5.1, 4.2, 3.9])
    ell = F.sigma_ellipse(d, t)
    assert ell is not None
    np.testing.assert_allclose(_mahalanobis(ell, d, t), 1.0, rtol=1e-9)
    # Centred on the scheme's marker: Pantheon's mean over runs.
    np.testing.assert_allclose([ell[:-1, 0].mean(), ell[:-1, 1].mean()], [d.mean(), t.mean()], rtol=1e-9)


def test_two_runs_lie_on_their_degenerate_ellipse():
    # With two runs the maximum-likelihood variance is (half the gap)^2: both runs are 1 sigma from the mean.
    d, t = np.array([50.0, 200.0]), np.array([2.0, 6.0])
    ell = F.sigma_ellipse(d, t, points=721)
    assert ell is not None
    for x, y in zip(d, t):
        assert np.min(np.hypot(ell[:, 0] - x, ell[:, 1] - y)) < 0.1


def test_an_ellipse_reaching_zero_delay_is_clipped_to_half_the_smallest_delay():
    ell = F.sigma_ellipse(np.array([10.0, 10.0, 1000.0]), np.array([1.0, 1.1, 1.0]))
    assert ell is not None and ell[:, 0].min() == 5.0


def test_one_run_has_no_ellipse():
    assert F.sigma_ellipse(np.array([10.0]), np.array([1.0])) is None


def test_ecdf_is_the_fraction_at_or_below_each_value():
    x, c = F.ecdf(np.array([3.0, 1.0, 2.0, 2.0]))
    assert x.tolist() == [1.0, 2.0, 3.0]
    assert c.tolist() == [0.25, 0.75, 1.0]


def test_weighted_ecdf_counts_weights_not_samples():
    x, c = F.ecdf(np.array([10.0, 20.0]), np.array([3.0, 1.0]))
    assert c.tolist() == [0.75, 1.0]


def test_thinned_ecdf_keeps_exact_steps():
    rng = np.random.default_rng(1)
    v = rng.exponential(50.0, 200_000).round(1)
    x, c = F.ecdf(v, points=500)
    assert len(x) <= 500
    s = np.sort(v)
    exact = np.searchsorted(s, x, side="right") / len(s)
    np.testing.assert_allclose(c, exact, rtol=0, atol=1e-12)


def test_envelope_bounds_the_points_and_keeps_each_columns_extremes():
    t = np.linspace(0, 100, 50_000)
    y = np.sin(t * 7.0) * 10 + t
    tt, yy = F.envelope(t, y, columns=100)
    assert len(tt) <= 4 * 100
    assert yy.max() == y.max() and yy.min() == y.min()
    assert tt[0] == t[0] and tt[-1] == t[-1]


def test_group_statistics_use_the_sample_sd_and_students_t():
    runs = [RunPoint("x", f"r{i}", "s", thr, delay) for i, (thr, delay) in enumerate([(1.0, 10.0), (2.0, 20.0), (3.0, 30.0)])]
    g = group_stats("s", runs)
    assert (g.runs, g.throughput_mean, g.throughput_sd) == (3, 2.0, 1.0)
    # t(0.975, 2) = 4.302653 (table value); half-width = t * s / sqrt(n).
    assert g.throughput_ci95 == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)
    assert g.delay_ci95 == pytest.approx(10 * 4.302653 / math.sqrt(3), rel=1e-6)


def test_runs_without_a_delay_are_left_out_and_counted():
    g = group_stats("s", [RunPoint("x", "a", "s", 1.0, 10.0), RunPoint("x", "b", "s", 0.0, math.nan)])
    assert (g.runs, g.left_out, g.throughput_mean) == (1, 1, 1.0)


def _texts(fig) -> list[Text]:
    return [t for t in fig.findobj(Text) if t.get_text().strip()]


def test_throughput_delay_figure_is_pantheons_inverted_log_delay_axis():
    schemes = [F.Scheme("a", [100, 120, 90], [5, 5.5, 4.8]), F.Scheme("b", [300, 320], [7, 7.2]), F.Scheme("c", [40], [2])]
    fig = F.throughput_delay_figure(schemes)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    lo, hi = ax.get_xlim()
    assert lo > hi, "lower delay must be to the right"
    assert ax.get_ylim()[0] == 0
    assert "(ms)" in ax.get_xlabel() and "(Mbit/s)" in ax.get_ylabel()
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert [re.split(r" \(|:", s)[0] for s in legend] == ["a", "b", "c"]
    # Each legend marker's colour is its scheme's palette colour.
    handles = ax.get_legend().legend_handles
    for i, h in enumerate(handles):
        assert tuple(h.get_facecolor()[0][:3]) == pytest.approx(tuple(int(F.PALETTE[i][k:k + 2], 16) / 255 for k in (1, 3, 5)))
    F.plt.close(fig)


@pytest.mark.parametrize("make", [
    lambda: F.throughput_delay_figure([F.Scheme("a", [10, 12], [1, 2])], title="t"),
    lambda: F.cdf_figure([F.Distribution("x", np.arange(10.0))], xlabel="delay (ms)", ylabel="fraction"),
    lambda: F.time_figure([F.Panel("p", [F.Series("s", np.arange(5.0), np.ones(5))], F.Series("cap", np.arange(5.0), np.ones(5)))],
                          ylabel="throughput (Mbit/s, 500 ms bins)"),
])
def test_every_text_is_at_least_nine_points_at_the_printed_size(make):
    fig = make()
    sizes = [t.get_fontsize() for t in _texts(fig)]
    assert sizes and min(sizes) >= F.MIN_FONT_PT
    F.plt.close(fig)


def test_palette_is_okabe_ito():
    # Okabe & Ito (2008): the eight colours of "Color Universal Design".
    assert set(F.PALETTE) == {"#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7"}


def test_inlined_figures_share_no_ids():
    a = F.inline_svg(F.figure_svg(F.cdf_figure([F.Distribution("x", np.arange(5.0))], xlabel="x (ms)", ylabel="y")), "f0-")
    b = F.inline_svg(F.figure_svg(F.cdf_figure([F.Distribution("x", np.arange(5.0))], xlabel="x (ms)", ylabel="y")), "f1-")
    ids_a = set(re.findall(r'id="([^"]+)"', a))
    ids_b = set(re.findall(r'id="([^"]+)"', b))
    assert ids_a and not ids_a & ids_b
    for svg, ids in ((a, ids_a), (b, ids_b)):
        assert set(re.findall(r"url\(#([^)]+)\)", svg)) <= ids
    assert a.startswith("<svg") and "<metadata>" not in a


def test_compare_and_report_stay_functions_once_their_modules_are_imported():
    import ccscope
    import ccscope.analysis
    import ccscope.analysis.comparison  # noqa: F401
    import ccscope.analysis.html_report  # noqa: F401

    for f in (ccscope.compare, ccscope.report, ccscope.analysis.compare, ccscope.analysis.report):
        assert callable(f) and not isinstance(f, type(ccscope))
