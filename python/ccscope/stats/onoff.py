"""Fluid Pareto ON/OFF aggregate (Willinger, Taqqu, Sherman & Wilson 1997): each source sends at rate 1
while ON and 0 while OFF; ON and OFF periods are i.i.d. Pareto with tail index alpha, so for 1 < alpha < 2
the aggregate is asymptotically self-similar with H = (3 - alpha)/2 (paper 003 §2.2, spec §5 A5).

Each source starts in its stationary state: ON with probability E[ON]/(E[ON] + E[OFF]), and its first
period drawn from the equilibrium (residual-life) law of the Pareto, which is uniform on [0, k) with
probability (alpha - 1)/alpha and Pareto(alpha - 1, k) otherwise. So the series needs no warm-up.
"""

from __future__ import annotations

import math

import numpy as np

from ccscope.stats.errors import StatsError, check_seed

#: Largest expected number of ON/OFF periods over all sources (bounds the draws held in memory).
MAX_PERIODS = 50_000_000


def pareto(rng: np.random.Generator, alpha: float, k: float, size) -> np.ndarray:
    """Pareto draws with Pr{X > x} = (k/x)^alpha, x >= k (paper 003 §2.1): k U^(-1/alpha) = k exp(E/alpha)
    with E = -log U standard exponential."""
    return k * np.exp(rng.standard_exponential(size) / alpha)


def _residual(rng: np.random.Generator, alpha: float, k: float, size: int) -> np.ndarray:
    """The equilibrium law of Pareto(alpha, k): density Pr{X > x}/E[X]."""
    u = rng.random(size)
    short = rng.random(size) < (alpha - 1.0) / alpha
    return np.where(short, k * u, pareto(rng, alpha - 1.0, k, size))


def onoff_aggregate(n_sources: int, slots: int, alpha: float, seed: int, on_min: float = 1.0,
                    off_min: float = 1.0, aggregate: int = 1) -> np.ndarray:
    """Work done by `n_sources` fluid ON/OFF sources in each of `slots` unit slots, summed over groups of
    `aggregate` slots (so ``slots // aggregate`` values).

    ON periods are Pareto(alpha, on_min), OFF periods Pareto(alpha, off_min), in slots; a slot's value is
    the exact ON time inside it (fluid). Same arguments and seed give bit-identical arrays."""
    for name, v in (("n_sources", n_sources), ("slots", slots), ("aggregate", aggregate)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise StatsError(f"{name}: must be a positive integer, got {v!r}")
    if not (isinstance(alpha, (int, float)) and math.isfinite(alpha)) or alpha <= 1.0:
        raise StatsError(f"alpha: must be > 1 (a finite mean; ON/OFF self-similarity needs 1 < alpha < 2), got {alpha}")
    for name, v in (("on_min", on_min), ("off_min", off_min)):
        if not (math.isfinite(v) and v > 0):
            raise StatsError(f"{name}: the Pareto scale k must be positive, got {v}")
    if slots < aggregate:
        raise StatsError(f"aggregate: {aggregate} is more than the {slots} slots")
    mean_on, mean_off = alpha * on_min / (alpha - 1.0), alpha * off_min / (alpha - 1.0)
    expected = n_sources * (slots / (mean_on + mean_off) + 2)
    if expected > MAX_PERIODS:
        raise StatsError(f"slots: {n_sources} sources x {slots} slots need about {expected:.3g} periods, "
                         f"above the limit of {MAX_PERIODS}")
    rng = np.random.default_rng(check_seed(seed))
    starts_all, ends_all = [], []
    for _ in range(n_sources):
        on_first = rng.random() < mean_on / (mean_on + mean_off)
        first = _residual(rng, alpha, on_min if on_first else off_min, 1)
        # Draw in chunks until the periods cover the run; pairs alternate from the state after `first`.
        per_pair = mean_on + mean_off
        t, starts, ends = float(first[0]), [], []
        if on_first:
            starts.append(np.zeros(1))
            ends.append(first)
        while t < slots:
            k = int((slots - t) / per_pair * 1.2) + 16
            off, on = pareto(rng, alpha, off_min, k), pareto(rng, alpha, on_min, k)
            if on_first:  # each chunk is OFF, ON, OFF, ON, ...
                s = t + np.cumsum(off) + np.concatenate([[0.0], np.cumsum(on)[:-1]])
                t_next = s[-1] + on[-1]
            else:  # each chunk is ON, OFF, ON, OFF, ...
                s = t + np.concatenate([[0.0], np.cumsum(on + off)[:-1]])
                t_next = s[-1] + on[-1] + off[-1]
            e = s + on
            starts.append(s)
            ends.append(e)
            t = float(t_next)
        if not starts:  # OFF for the whole run
            continue
        s, e = np.concatenate(starts), np.concatenate(ends)
        keep = s < slots
        s, e = s[keep], np.minimum(e[keep], slots)
        starts_all.append(s)
        ends_all.append(e)
    if not starts_all:
        return np.zeros(slots // aggregate)
    # Slot k holds sum over ON intervals of their overlap with [k, k+1): with r(t) = #starts <= t - #ends
    # <= t, that is r just after k plus, for kinks p inside the slot, +-(k + 1 - p).
    per_slot = np.zeros(slots + 1)
    for pts, sign in ((np.concatenate(starts_all), 1.0), (np.concatenate(ends_all), -1.0)):
        fl = pts.astype(np.int64)  # p >= 0: truncation is floor
        cnt = np.bincount(fl, minlength=slots + 1).astype(np.float64)
        part = np.bincount(fl, weights=fl + 1.0 - pts, minlength=slots + 1)
        per_slot += sign * (np.concatenate([[0.0], np.cumsum(cnt)[:-1]]) + part)
    per_slot = per_slot[:slots]
    g = slots // aggregate
    return per_slot[: g * aggregate].reshape(g, aggregate).sum(axis=1)
