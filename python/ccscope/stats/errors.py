"""Errors of :mod:`ccscope.stats`: every one is a ``ValueError`` so callers (and the CLI) can catch bad input
in one place."""

from __future__ import annotations


class StatsError(ValueError):
    """Bad input to a statistics function; the message names the argument."""


class SeriesTooShortError(StatsError):
    """The series is too short for an estimator's fit range; names the method and the minimum length."""

    def __init__(self, method: str, n: int, minimum: int, why: str = ""):
        self.method, self.n, self.minimum = method, n, minimum
        extra = f" ({why})" if why else ""
        #: The message without the method's name.
        self.detail = f"the series has {n} points; it needs at least {minimum}{extra}"
        super().__init__(f"{method}: {self.detail}")


class EmbeddingError(StatsError):
    """Davies-Harte: the circulant embedding has a negative eigenvalue (Dietrich & Newsam 1997)."""


def check_series(x, name: str = "x"):
    """`x` as a 1-D float64 array of finite values, or a StatsError naming `name`."""
    import numpy as np

    if np.iscomplexobj(x):  # a float64 cast would drop the imaginary part with only a warning
        raise StatsError(f"{name}: expected real numbers, got complex values")
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise StatsError(f"{name}: not a series of numbers ({e})") from None
    if a.ndim != 1:
        raise StatsError(f"{name}: expected a 1-D series, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        bad = int(np.flatnonzero(~np.isfinite(a))[0])
        raise StatsError(f"{name}: value {a[bad]} at index {bad} is not finite")
    return a


def check_seed(seed, name: str = "seed"):
    """`seed` for ``numpy.random.default_rng``: None or an integer >= 0, else a StatsError naming `name`."""
    import numbers

    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise StatsError(f"{name}: must be a non-negative integer, got {seed!r}")
    return int(seed)
