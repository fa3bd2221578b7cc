"""Exact fractional Gaussian noise by circulant embedding (Davies & Harte 1987; Dietrich & Newsam 1997).

The autocovariance of unit-variance fGn is gamma(k) = (|k+1|^{2H} - 2|k|^{2H} + |k-1|^{2H}) / 2. Its first
n lags, mirrored, form the first row of a 2n x 2n circulant matrix whose eigenvalues are the FFT of that
row; when none is negative (Dietrich & Newsam's condition; it holds for fGn at every H in (0, 1)), a
complex Gaussian vector scaled by their square roots and transformed back has real part with exactly the
fGn covariance on its first n points.
"""

from __future__ import annotations

import numpy as np

from ccscope.stats.errors import EmbeddingError, StatsError, check_seed

#: Largest n accepted: the embedding holds 2n complex values plus 4n normals (about 1 GB at this n).
MAX_FGN_N = 1 << 23


def fgn_autocovariance(k, hurst: float) -> np.ndarray:
    """gamma(k) of unit-variance fGn: (|k+1|^{2H} - 2|k|^{2H} + |k-1|^{2H}) / 2.

    For 2 <= k < 64 it is evaluated as k^{2H} (expm1(2H log1p(1/k)) + expm1(2H log1p(-1/k))) / 2, and for
    k >= 64 as the even binomial series k^{2H} sum_{j>=1} C(2H, 2j) k^{-2j} (8 terms, truncation below
    64^-14 relative): the same quantity without the cancellation of three terms of size k^{2H}. At
    k = 10^6 and H = 0.975 the direct form loses about 5e-5 per lag, enough to make the embedding's
    eigenvalues negative; the expm1 form alone still cancels two terms of size 2H/k, a relative error of
    eps k (5e-11 there)."""
    hurst = _check_hurst(hurst)
    if np.iscomplexobj(k):  # a float64 cast would drop the imaginary part with only a warning
        raise StatsError("k: expected real lags, got complex values")
    try:
        k = np.abs(np.asarray(k, dtype=np.float64))
    except (TypeError, ValueError) as e:
        raise StatsError(f"k: not numbers ({e})") from None
    if not np.all(np.isfinite(k)):
        raise StatsError("k: every lag must be a finite number")
    h2 = 2.0 * hurst
    direct = 0.5 * (np.abs(k + 1.0) ** h2 - 2.0 * k**h2 + np.abs(k - 1.0) ** h2)
    mid = (k >= 2.0) & (k < 64.0)
    km = np.where(mid, k, 2.0)
    stable = 0.5 * km**h2 * (np.expm1(h2 * np.log1p(1.0 / km)) + np.expm1(h2 * np.log1p(-1.0 / km)))
    big = k >= 64.0
    kb = np.where(big, k, 64.0)
    x2 = 1.0 / (kb * kb)
    coef, series, xp = 1.0, np.zeros_like(kb), np.ones_like(kb)
    for j in range(1, 9):
        # C(2H, 2j) from C(2H, 2j - 2).
        coef *= (h2 - (2 * j - 2)) * (h2 - (2 * j - 1)) / ((2 * j - 1) * (2 * j))
        xp = xp * x2
        series = series + coef * xp
    return np.where(big, kb**h2 * series, np.where(mid, stable, direct))


def _check_real(x, name: str) -> float:
    """`x` as a float when it is a real number (not text, None or a bool), else a StatsError naming it."""
    import numbers

    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise StatsError(f"{name}: must be a number, got {x!r}")
    return float(x)


def _check_hurst(hurst: float) -> float:
    h = _check_real(hurst, "hurst")
    if not 0.0 < h < 1.0:
        raise StatsError(f"hurst: must be in (0, 1), got {hurst}")
    return h


def embedding_eigenvalues(n: int, hurst: float) -> np.ndarray:
    """Eigenvalues of the 2n-circulant embedding of n points of fGn (Davies & Harte 1987, Sec. 2)."""
    gamma = fgn_autocovariance(np.arange(n + 1), hurst)
    # First row c = (g0, g1, ..., gn, g(n-1), ..., g1): symmetric, so its FFT is real.
    row = np.concatenate([gamma, gamma[-2:0:-1]])
    return np.fft.rfft(row).real


def fgn(n: int, hurst: float, seed: int, sigma: float = 1.0) -> np.ndarray:
    """n points of fractional Gaussian noise with Hurst parameter `hurst` and standard deviation `sigma`.

    Exact (Davies-Harte circulant embedding); the draws come from ``numpy.random.default_rng(seed)``, so
    the same (n, hurst, seed, sigma) gives bit-identical arrays. Raises :class:`EmbeddingError` if the
    embedding has a negative eigenvalue (it cannot then be exact)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise StatsError(f"n: must be a positive integer, got {n!r}")
    if n > MAX_FGN_N:
        raise StatsError(f"n: {n} is above the limit of {MAX_FGN_N} points")
    h = _check_hurst(hurst)
    sigma = _check_real(sigma, "sigma")
    if not (np.isfinite(sigma) and sigma > 0):
        raise StatsError(f"sigma: must be positive, got {sigma}")
    n = int(n)
    m = 2 * n
    half = embedding_eigenvalues(n, h)  # eigenvalues 0..n; the rest mirror them
    # Rounding leaves eigenvalues of about -1e-16 * max where the true value is 0; anything beyond that
    # is a genuinely indefinite embedding (Dietrich & Newsam 1997).
    tol = 1e-10 * float(np.max(np.abs(half)))
    if half.min() < -tol:
        j = int(np.argmin(half))
        raise EmbeddingError(f"hurst={h}: circulant embedding of n={n} has a negative eigenvalue "
                             f"lambda_{j} = {half[j]:.3g}; Davies-Harte cannot be exact here")
    lam = np.concatenate([half, half[-2:0:-1]])
    np.maximum(lam, 0.0, out=lam)
    rng = np.random.default_rng(check_seed(seed))
    w = rng.standard_normal((2, m))
    # Real part of FFT(sqrt(lambda/m) (A + iB)) has covariance exactly the circulant row (Davies-Harte).
    z = np.sqrt(lam / m) * (w[0] + 1j * w[1])
    x = np.fft.fft(z)[:n].real
    if sigma != 1.0:
        x *= sigma
    return x
