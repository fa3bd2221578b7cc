"""CondProb (paper 003 §2.3, Appendix A) and its average entropy (§2.4): hand-worked arithmetic, level
boundaries, the on-line table against the off-line one, entropy of independent and persistent series."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from scipy.stats import norm

from ccscope import stats
from ccscope.stats import CondProbOnline, average_entropy, condprob_table, entropy_curve, fgn, shuffle
from ccscope.stats.condprob import block_sums, levels, sigma_edges


def interleave(v1, v2):
    """A series whose blocks of T1 = T2 = 1 bin have these V1 and V2."""
    return np.column_stack([v1, v2]).ravel().astype(float)


def test_levels_are_closed_below_at_mean_plus_minus_k_sigma():
    e = sigma_edges(0.0, 1.0)
    assert list(levels([-3.0001, -3.0, -2.5, -1.0, -0.5, 0.0, 0.9, 2.0, 2.99, 3.0, 50.0], e)) == \
        [1, 2, 2, 4, 4, 5, 5, 7, 7, 8, 8]


def test_condprob_arithmetic_on_a_hand_made_series():
    # V1 and V2 both have mean 5 and sigma 5: 0 is level 4 ([mu - sigma, mu)), 10 is level 6.
    v1 = [0, 0, 0, 0, 10, 10, 10, 10]
    v2 = [0, 0, 0, 10, 10, 10, 10, 0]
    t = condprob_table(interleave(v1, v2), 1, 1)
    assert t.blocks == 8 and t.mu == (5.0, 5.0) and t.sigma == (5.0, 5.0)
    want = np.zeros((8, 9), dtype=int)
    want[3, 3], want[3, 5], want[3, 8] = 3, 1, 4
    want[5, 5], want[5, 3], want[5, 8] = 3, 1, 4
    assert np.array_equal(t.counts, want)
    p = t.probabilities()
    assert p[3, 3] == 0.75 and p[3, 5] == 0.25 and p[5, 5] == 0.75
    assert np.isnan(p[0]).all() and np.isnan(p[7]).all()  # rows never seen
    assert t.expected_next()[3] == 4.5 and t.expected_next()[5] == 5.5
    s = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert t.row_entropy()[3] == pytest.approx(s) and np.isnan(t.row_entropy()[0])
    assert average_entropy(t, min_count=1) == pytest.approx(s)
    assert math.isnan(average_entropy(t))  # no row reaches h >= 10
    assert average_entropy(t, min_count=1, weighted=True) == pytest.approx(s)


def test_block_sums_take_t1_then_t2_bins_and_drop_the_incomplete_block():
    v1, v2 = block_sums(np.arange(1.0, 13.0), 2, 3)  # blocks [1..5], [6..10]; 11, 12 dropped
    assert list(v1) == [1 + 2, 6 + 7] and list(v2) == [3 + 4 + 5, 8 + 9 + 10]


def test_average_entropy_skips_thin_rows_and_weights_by_h():
    x = fgn(40_000, 0.8, seed=3)
    t = condprob_table(x, 4, 4)
    s, h = t.row_entropy(), t.h
    ok = h >= 10
    assert average_entropy(t) == pytest.approx(np.mean(s[ok]))
    assert average_entropy(t, weighted=True) == pytest.approx(np.sum(s[ok] * h[ok]) / np.sum(h[ok]))
    rows = t.probabilities()[h > 0]
    assert np.allclose(rows.sum(axis=1), 1.0)


def test_online_table_with_the_offline_statistics_equals_the_offline_table():
    x = fgn(30_000, 0.85, seed=5) + 3.0
    off = condprob_table(x, 3, 5)
    on = CondProbOnline(3, 5, frozen=(off.mu[0], off.sigma[0], off.mu[1], off.sigma[1]))
    v1, v2 = block_sums(x, 3, 5)
    for a, b in zip(v1, v2):
        on.update(a, b)
    assert np.array_equal(on.table().counts, off.counts)
    assert on.table().blocks == off.blocks


def test_online_table_classifies_each_block_with_the_running_statistics_it_has_seen():
    # A.2: mu, sigma are updated with V first, then V is classified; earlier blocks are never redone.
    x = fgn(8_000, 0.7, seed=6)
    v1, v2 = block_sums(x, 2, 2)
    on = CondProbOnline(2, 2)
    want = np.zeros((8, 9), dtype=int)
    def second(v, first):
        # Two values lie exactly at mu -+ sigma, so the second sits on the edge between levels 3 and 4 under the
        # first, 6 and 7 above it (8 if equal, sigma = 0): which side is the last bit of the running mean and
        # std (numpy's prefix statistics and the online update each round either way, and the fGn's last bits
        # move with gamma(k)'s evaluation), so only the edge is asserted.
        return (3, 4) if v < first else (6, 7) if v > first else (8,)

    for i, (a, b) in enumerate(zip(v1, v2)):
        l1 = int(levels(a, sigma_edges(v1[: i + 1].mean(), v1[: i + 1].std())))
        l2 = int(levels(b, sigma_edges(v2[: i + 1].mean(), v2[: i + 1].std())))
        got = on.update(a, b)
        if i == 1:
            assert got[0] in second(a, v1[0]) and got[1] in second(b, v2[0]), got
            l1, l2 = got
        want[l1 - 1, l2 - 1] += 1
        want[l1 - 1, 8] += 1
        assert got == (l1, l2)
    assert np.array_equal(on.counts, want)
    t = on.table()
    assert t.mu[0] == pytest.approx(v1.mean()) and t.sigma[1] == pytest.approx(v2.std())


def test_online_update_keeps_constant_state_whatever_the_number_of_blocks():
    on = CondProbOnline(1, 1)
    rng = np.random.default_rng(1)
    for v in rng.normal(size=(10, 2)):
        on.update(*v)
    small = len(pickle.dumps(on))
    for v in rng.normal(size=(20_000, 2)):
        on.update(*v)
    assert len(pickle.dumps(on)) - small <= 16  # O(1): no history kept
    assert on.table().blocks == 20_010


def test_online_clock_must_alternate_t1_and_t2():
    on = CondProbOnline(1, 1)
    with pytest.raises(stats.StatsError, match="end_t2"):
        on.end_t2(1.0)
    on.end_t1(1.0)
    with pytest.raises(stats.StatsError, match="end_t1"):
        on.end_t1(1.0)
    assert on.table().h.sum() == 0  # a T1 without its T2 is not a block yet
    on.end_t2(2.0)
    # One value: sigma = 0, and the literal intervals put V = mu in [mu + 3 sigma, inf), level 8.
    assert on.table().h.sum() == 1 and on.expected_next(8) == 8.0 and math.isnan(on.expected_next(5))


def gaussian_level_entropy() -> float:
    """Entropy of the sigma levels of a normal variable: the most an independent L2 can have."""
    p = np.diff(norm.cdf(np.r_[-np.inf, np.arange(-3, 4), np.inf]))
    return float(-np.sum(p * np.log(p)))


def test_entropy_of_an_iid_series_is_near_the_maximum_and_a_persistent_one_is_lower():
    iid = np.random.default_rng(11).normal(size=100_000)
    top = gaussian_level_entropy()
    assert average_entropy(condprob_table(iid, 1, 1), weighted=True) == pytest.approx(top, abs=0.02)
    # Quantile levels are uniform: an independent L2 has entropy near log 8.
    assert average_entropy(condprob_table(iid, 1, 1, partition="quantile")) == pytest.approx(math.log(8), abs=0.02)
    persistent = fgn(100_000, 0.95, seed=11)
    assert average_entropy(condprob_table(persistent, 1, 1), weighted=True) < top - 0.3


def test_quantile_partition_fills_every_level_equally():
    x = fgn(16_000, 0.7, seed=2)
    t = condprob_table(x, 1, 1, partition="quantile")
    assert np.all(np.abs(t.h - t.blocks / 8) <= 1)


def test_entropy_curve_of_a_long_range_dependent_series_lies_below_its_shuffled_control():
    x = fgn(60_000, 0.9, seed=12)
    c = entropy_curve(x, 0.01, [0.01, 0.05, 0.2], control_seed=1)
    assert list(c.blocks) == [30_000, 6_000, 1_500]
    assert np.all(c.entropy < c.control_entropy - 0.2)
    assert np.all(c.weighted < c.control_weighted - 0.2)
    assert entropy_curve(x, 0.01, [0.05]).control_entropy is None


def test_an_exactly_self_similar_series_predicts_no_better_at_coarser_scales():
    # Paper 003 eq. 2: r^(m)(k) = r(k), so adjacent windows of T bins correlate as 2^(2H-1) - 1 at every T and
    # S-bar(T1 = T2 = T) has nothing to fall by. On exact fGn at alpha 1.05's H = 0.975, 10^6 bins (10^4 s),
    # the spec's Fig. 3 excess drop S-bar(0.25 s) - S-bar(5 s) over the shuffled control's stays below its 0.2.
    for seed in (0, 1, 2):
        x = fgn(10**6, 0.975, seed=seed)
        c = entropy_curve(x, 0.01, (0.25, 5.0), control_seed=seed + 1000)
        excess = (c.entropy[0] - c.entropy[1]) - (c.control_entropy[0] - c.control_entropy[1])
        assert excess < 0.2, (seed, c.entropy, c.control_entropy)
        r = [np.corrcoef(*block_sums(x, b, b))[0, 1] for b in (25, 500)]
        assert r[1] <= r[0] + 0.05, (seed, r)


def test_shuffle_is_a_seeded_permutation():
    x = np.arange(1000.0)
    a, b = shuffle(x, 3), shuffle(x, 3)
    assert a.tobytes() == b.tobytes() and not np.array_equal(a, x) and np.array_equal(np.sort(a), x)
    assert not np.array_equal(a, shuffle(x, 4))


@pytest.mark.parametrize("call,match", [
    (lambda: condprob_table(np.ones(100), 0, 1), "t1_bins"),
    (lambda: condprob_table(np.ones(100), 1, 2.5), "t2_bins"),
    (lambda: condprob_table(np.ones(5), 2, 2), "at least 2"),
    (lambda: condprob_table(np.r_[np.ones(9), np.inf], 1, 1), "not finite"),
    (lambda: condprob_table(np.ones(100), 1, 1, partition="uniform"), "partition"),
    (lambda: entropy_curve(np.ones(100), 0.01, [0.015]), "scales"),
    (lambda: entropy_curve(np.ones(100), 0.0, [1.0]), "bin_s"),
])
def test_condprob_bad_input_names_the_argument(call, match):
    with pytest.raises(stats.StatsError, match=match):
        call()


def test_online_expectation_counts_complete_blocks_only():
    # A T1 awaiting its T2 adds to h_l but not to E(L2 | l): the expectation is over whole blocks
    # (the Rust table in ccscope-cc common/condprob.rs agrees).
    on = CondProbOnline(frozen=(0.0, 1.0, 0.0, 1.0))
    on.update(0.5, 2.5)
    on.end_t1(0.5)
    assert on.counts[4, 8] == 2 and on.expected_next(5) == 7.0
    on.end_t2(-0.5)
    assert on.expected_next(5) == 5.5


def test_oracle_levels_quantise_each_sliding_t2_window_with_the_block_statistics():
    from ccscope.stats.condprob import oracle_levels, oracle_levels_toml

    # Blocks of 2 bins: sums 2, 4, 2, 4 -> mu 3, sigma 1; sliding sums 2, 3, 4, 3, 2, 3, 4.
    x = [1, 1, 2, 2, 1, 1, 2, 2]
    lv, mu, sigma = oracle_levels(x, 0.5, 1.0)
    assert (mu, sigma) == (3.0, 1.0)
    # 2 = mu - sigma -> level 4; 3 = mu -> 5; 4 = mu + sigma -> 6 (intervals closed below).
    assert lv.tolist() == [4, 5, 6, 5, 4, 5, 6]
    text = oracle_levels_toml(lv, 0.5, t2_s=1.0)
    assert 'levels = "4565456"' in text and "bin_s = 0.5" in text and "t2_s = 1.0" in text


def test_oracle_levels_refuse_a_series_shorter_than_two_blocks_and_bad_levels():
    from ccscope.stats.condprob import oracle_levels, oracle_levels_toml

    with pytest.raises(stats.StatsError, match="two T2 blocks"):
        oracle_levels([1.0, 2.0, 3.0], 0.01, 0.02)
    with pytest.raises(stats.StatsError, match="bin_s"):
        oracle_levels([1.0] * 10, 0.0, 0.02)
    with pytest.raises(stats.StatsError, match="1..8"):
        oracle_levels_toml(np.array([0, 3]), 0.01)


def test_min_count_and_scales_that_are_not_numbers_are_stats_errors_naming_them():
    from ccscope.stats import StatsError, average_entropy, condprob_table, entropy_curve, fgn

    x = fgn(4096, 0.8, 1)
    table = condprob_table(x, 1, 2)
    for bad in (None, 1.5, "10", math.nan):
        with pytest.raises(StatsError, match="^min_count: "):
            average_entropy(table, min_count=bad)
    for bad in (math.nan, math.inf, "0.02", None):
        with pytest.raises(StatsError, match="^scales: "):
            entropy_curve(x, 0.01, [bad])
    with pytest.raises(StatsError, match="^table: "):
        average_entropy(x)


def test_an_entropy_curve_over_no_scales_is_refused_naming_scales():
    # An empty curve would be drawn as an empty figure and reported as nothing, silently.
    x = fgn(1024, 0.8, 1)
    for empty in ([], (), np.array([])):
        with pytest.raises(stats.StatsError, match="^scales: "):
            entropy_curve(x, 0.01, empty)
    with pytest.raises(stats.StatsError, match="^scales: "):
        entropy_curve(x, 0.01, 0.05)  # one number, not a sequence of them


@pytest.mark.parametrize("frozen", [(0.0, math.nan, 0.0, 1.0), (math.nan, 1.0, 0.0, 1.0), (0.0, math.inf, 0.0, 1.0),
                                    (0.0, 1.0, -math.inf, 1.0), ("a", 1.0, 0.0, 1.0)])
def test_frozen_statistics_that_are_not_finite_numbers_are_refused_naming_frozen(frozen):
    # A NaN mu or sigma made every boundary NaN: each block went to one level without a word.
    with pytest.raises(stats.StatsError, match="^frozen: "):
        CondProbOnline(1, 1, frozen=frozen)
