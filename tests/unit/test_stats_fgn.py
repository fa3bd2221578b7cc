"""Exact fGn by Davies-Harte (paper 003 spec §5 A5): covariance, determinism, the embedding check, bad input."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from ccscope import stats
from ccscope.stats.fgn import embedding_eigenvalues, fgn, fgn_autocovariance

# The package re-exports the function fgn, which hides the module of the same name.
fgn_mod = importlib.import_module("ccscope.stats.fgn")


def test_gamma_k_is_the_fgn_formula_by_hand():
    # H = 0.75: gamma(1) = (2^1.5 - 2) / 2, gamma(2) = (3^1.5 - 2 * 2^1.5 + 1) / 2.
    g = fgn_autocovariance([0, 1, 2], 0.75)
    assert g[0] == 1.0
    assert g[1] == pytest.approx((2**1.5 - 2) / 2, rel=1e-14)
    assert g[2] == pytest.approx((3**1.5 - 2 * 2**1.5 + 1) / 2, rel=1e-14)
    assert np.allclose(fgn_autocovariance(np.arange(1, 50), 0.5), 0.0)


@pytest.mark.parametrize("h", [0.3, 0.7, 0.9])
def test_fgn_sample_autocovariance_matches_gamma_k_within_3_se(h):
    # A5: lags 0-10 averaged over 200 series; the mean is known (0), so the estimator is unbiased.
    n, reps, lags = 2048, 200, np.arange(11)
    est = np.empty((reps, len(lags)))
    for s in range(reps):
        x = fgn(n, h, seed=s)
        est[s] = [np.dot(x[: n - k], x[k:]) / (n - k) for k in lags]
    mean, se = est.mean(axis=0), est.std(axis=0, ddof=1) / np.sqrt(reps)
    theory = fgn_autocovariance(lags, h)
    assert np.all(np.abs(mean - theory) <= 3 * se), (mean - theory) / se


def test_fgn_is_bit_identical_for_the_same_seed_and_differs_across_seeds():
    a, b = fgn(4096, 0.8, seed=7), fgn(4096, 0.8, seed=7)
    assert a.tobytes() == b.tobytes()
    assert not np.array_equal(a, fgn(4096, 0.8, seed=8))


def test_fgn_sigma_scales_the_same_draw():
    assert np.array_equal(fgn(1000, 0.6, seed=3, sigma=2.5), 2.5 * fgn(1000, 0.6, seed=3))


def test_fgn_of_odd_and_tiny_lengths_has_that_length():
    for n in (1, 2, 3, 1001):
        assert fgn(n, 0.7, seed=1).shape == (n,)


def test_gamma_k_keeps_its_precision_at_large_lags():
    # At k = 10^6 the three terms are about 10^11.7 each (H = 0.975); gamma(k) ~ H (2H - 1) k^(2H - 2)
    # there (Beran 1994, Sec. 2.1), to relative O(1/k^2).
    k = np.array([1e5, 1e6, 4e6])
    for h in (0.6, 0.975):
        assert np.allclose(fgn_autocovariance(k, h), h * (2 * h - 1) * k ** (2 * h - 2), rtol=1e-9)
    small = np.arange(2, 60, dtype=np.float64)
    direct = 0.5 * ((small + 1) ** 1.95 - 2 * small**1.95 + (small - 1) ** 1.95)
    assert np.allclose(fgn_autocovariance(small, 0.975), direct, rtol=1e-11)


@pytest.mark.parametrize("h", [0.975, 0.99])
def test_fgn_of_a_million_points_near_h_one_has_a_non_negative_embedding(h):
    # Paper 003's alpha = 1.05 gives H = 0.975 on 10^6 bins (10^4 s at 10 ms); the direct gamma(k) lost
    # 5e-5 per lag to cancellation and made eigenvalues of -0.08 here.
    lam = embedding_eigenvalues(10**6, h)
    assert lam.min() > -1e-10 * lam.max()


@pytest.mark.parametrize("h", [0.01, 0.25, 0.5, 0.75, 0.99])
def test_fgn_embedding_is_non_negative_across_h(h):
    for n in (10, 1000, 1 << 14):
        lam = embedding_eigenvalues(n, h)
        assert lam.min() > -1e-10 * lam.max()


def test_negative_embedding_eigenvalue_raises_embedding_error(monkeypatch):
    def indefinite(n, hurst):
        lam = np.ones(n + 1)
        lam[3] = -0.5
        return lam

    monkeypatch.setattr(fgn_mod, "embedding_eigenvalues", indefinite)
    with pytest.raises(stats.EmbeddingError, match="negative eigenvalue"):
        fgn(100, 0.7, seed=1)


@pytest.mark.parametrize("kwargs,field", [
    ({"n": 0, "hurst": 0.7}, "n"), ({"n": 2.5, "hurst": 0.7}, "n"), ({"n": fgn_mod.MAX_FGN_N + 1, "hurst": 0.7}, "n"),
    ({"n": 10, "hurst": 0.0}, "hurst"), ({"n": 10, "hurst": 1.0}, "hurst"), ({"n": 10, "hurst": float("nan")}, "hurst"),
    ({"n": 10, "hurst": 0.5, "sigma": 0.0}, "sigma"),
])
def test_fgn_bad_input_names_the_argument(kwargs, field):
    with pytest.raises(stats.StatsError, match=f"^{field}:"):
        fgn(seed=1, **kwargs)


def _gamma_by_hand(k: int, h: float) -> float:
    """The textbook (|k+1|^2H - 2|k|^2H + |k-1|^2H) / 2 in 60-digit decimal arithmetic."""
    from decimal import Decimal, localcontext

    with localcontext() as c:
        c.prec = 60
        a = 2 * Decimal(h)
        return float((Decimal(k + 1) ** a - 2 * Decimal(k) ** a + abs(Decimal(k - 1)) ** a) / 2)


@pytest.mark.parametrize("h", [0.3, 0.6, 0.975, 0.99])
def test_gamma_k_matches_the_textbook_formula_to_1e_13_at_every_lag(h):
    # Two expm1 terms of size 2H/k still cancel down to H(2H-1)/k^2: a relative error of eps k (5e-11 at 10^6).
    ks = [0, 1, 2, 3, 10, 63, 64, 65, 1000, 10**5, 10**6, 4 * 10**6]
    got = fgn_autocovariance(np.array(ks, dtype=np.float64), h)
    for k, g in zip(ks, got):
        want = _gamma_by_hand(k, h)
        assert abs(g - want) <= 1e-13 * abs(want), (k, g, want)


@pytest.mark.parametrize("seed", [-1, 1.5, "x", True])
def test_a_seed_that_is_not_a_non_negative_integer_is_a_stats_error_naming_it(seed):
    from ccscope.stats import StatsError, entropy_curve, onoff_aggregate, shuffle

    x = fgn(256, 0.7, 1)
    with pytest.raises(StatsError, match="^seed: "):
        fgn(64, 0.7, seed)
    with pytest.raises(StatsError, match="^seed: "):
        shuffle(x, seed)
    with pytest.raises(StatsError, match="^seed: "):
        onoff_aggregate(4, 100, 1.5, seed)
    with pytest.raises(StatsError, match="^control_seed: "):
        entropy_curve(x, 0.01, [0.02], control_seed=seed)


@pytest.mark.parametrize("kwargs,name", [(dict(hurst=None), "hurst"), (dict(hurst="0.7"), "hurst"),
                                         (dict(sigma="1"), "sigma"), (dict(sigma=None), "sigma")])
def test_a_hurst_or_sigma_that_is_not_a_number_is_a_stats_error_naming_it(kwargs, name):
    from ccscope.stats import StatsError

    args = dict(n=64, hurst=0.7, seed=1, sigma=1.0)
    args.update(kwargs)
    with pytest.raises(StatsError, match=f"^{name}: "):
        fgn(**args)


@pytest.mark.parametrize("k,hurst,name", [
    ([1, 2], 1.5, "hurst"),  # gave [3, 6]: no fGn has H outside (0, 1)
    ([1, 2], math.nan, "hurst"),  # gave NaNs
    ([1, 2], "0.7", "hurst"),  # was Python's "can't multiply sequence"
    ([1, 2], True, "hurst"),
    (np.array([1 + 2j, 2]), 0.7, "k"),  # the imaginary part was dropped with only a warning
    ([math.nan], 0.7, "k"),
    (["a"], 0.7, "k"),
])
def test_autocovariance_refuses_a_hurst_or_lags_that_are_not_real_numbers_naming_them(k, hurst, name):
    from ccscope.stats import StatsError

    with pytest.raises(StatsError, match=f"^{name}: "):
        fgn_autocovariance(k, hurst)
