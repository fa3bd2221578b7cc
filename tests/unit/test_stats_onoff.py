"""Fluid Pareto ON/OFF aggregates (paper 003 spec §5 A5): Hurst estimates near (3 - alpha)/2, the
stationary start, fluid bounds, determinism and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from ccscope import stats
from ccscope.stats import hurst, onoff_aggregate

ALPHAS = (1.2, 1.4, 1.6, 1.8)


@pytest.fixture(scope="module")
def aggregates():
    """A5: 100 sources, 2^18 slots aggregated x16, 10 runs per alpha."""
    return {a: [onoff_aggregate(100, 1 << 18, a, seed=s, aggregate=16) for s in range(10)] for a in ALPHAS}


@pytest.mark.parametrize("alpha", ALPHAS)
def test_wavelet_and_aggregated_variance_read_onoff_aggregates_within_01_of_three_minus_alpha_over_two(aggregates, alpha):
    theory = (3 - alpha) / 2
    # Aggregated variance on its default blocks (10 .. n/100); the wavelet over the octaves of the same
    # block sizes and above: 2^4 >= 10 bins up to the default j_max - 3.
    av = np.mean([hurst(x, "aggvar").hurst for x in aggregates[alpha]])
    wv = np.mean([hurst(x, "wavelet", j1=4).hurst for x in aggregates[alpha]])
    assert abs(av - theory) <= 0.1, av
    assert abs(wv - theory) <= 0.1, wv


def test_both_estimates_fall_as_alpha_rises(aggregates):
    for method, kw in (("aggvar", {}), ("wavelet", {"j1": 4})):
        means = [np.mean([hurst(x, method, **kw).hurst for x in aggregates[a]]) for a in ALPHAS]
        assert all(b < a for a, b in zip(means, means[1:])), (method, means)


def test_onoff_starts_stationary_so_every_slot_has_the_mean_load():
    # E[ON] = E[OFF] (same alpha and k), so each source is ON half the time from slot 0 on.
    runs = np.array([onoff_aggregate(50, 1 << 14, 1.5, seed=s) for s in range(40)])
    first, last = runs[:, :256].mean(), runs[:, -256:].mean()
    assert first == pytest.approx(25, rel=0.05) and last == pytest.approx(25, rel=0.05)


def test_onoff_slots_hold_fluid_on_time_between_zero_and_all_sources():
    x = onoff_aggregate(7, 5000, 1.3, seed=2, on_min=0.3, off_min=2.5, aggregate=4)
    assert x.shape == (1250,) and x.min() >= -1e-9 and x.max() <= 7 * 4 + 1e-9
    assert not np.allclose(x, np.round(x))  # fractional ON time, not whole slots


def test_onoff_is_bit_identical_for_the_same_seed():
    a = onoff_aggregate(20, 4096, 1.4, seed=5, aggregate=2)
    assert a.tobytes() == onoff_aggregate(20, 4096, 1.4, seed=5, aggregate=2).tobytes()
    assert not np.array_equal(a, onoff_aggregate(20, 4096, 1.4, seed=6, aggregate=2))


@pytest.mark.parametrize("kwargs,field", [
    ({"alpha": 1.0}, "alpha"), ({"alpha": 0.5}, "alpha"), ({"alpha": -1.0}, "alpha"), ({"alpha": float("nan")}, "alpha"),
    ({"on_min": 0.0}, "on_min"), ({"off_min": -2.0}, "off_min"), ({"n_sources": 0}, "n_sources"),
    ({"slots": 0}, "slots"), ({"aggregate": 0}, "aggregate"), ({"slots": 10, "aggregate": 20}, "aggregate"),
    ({"n_sources": 10_000, "slots": 1 << 30}, "slots"),
])
def test_onoff_bad_input_names_the_argument(kwargs, field):
    args = {"n_sources": 10, "slots": 1000, "alpha": 1.5, "seed": 1, **kwargs}
    with pytest.raises(stats.StatsError, match=f"^{field}"):
        onoff_aggregate(**args)
