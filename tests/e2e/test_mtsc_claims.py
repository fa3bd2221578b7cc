"""Paper 003's traffic claims (§2, Figs. 1-3), checked on short versions of the reproduction's runs
(experiments/mtsc): alpha 1.05 against 1.95, 2 seeds x 3,000 s of background.

Each claim is recomputed here from the runs' Hurst estimates, CondProb tables and entropy curves; nothing
reads a verdict back from the report. The full-size reproduction is `ccscope repro mtsc`.
"""

import statistics

import pytest

from _experiments import load_experiment  # noqa: E402

repro = load_experiment("mtsc")

# Development seeds (spec A2: the report uses 11 and up).
SEEDS = (1, 2)
DURATION_S = 3_000.0
LOW, HIGH = 1.05, 1.95


@pytest.fixture(scope="module")
def runs():
    jobs = [repro.Job(a, s, DURATION_S, True) for a in (LOW, HIGH) for s in SEEDS]
    return repro.run_all(jobs, 2)


def mean_of(runs, alpha, f):
    return statistics.fmean(f(r) for r in repro.by_alpha(runs, alpha))


def test_every_run_is_a_full_length_ten_millisecond_series(runs):
    for r in runs:
        assert r["bins"] == int(DURATION_S / repro.BIN_S), r["bins"]
        assert 0 < r["load_mbps"] < 10.0
    # The calibrated idle means hold the background near 5 Mbit/s at both ends (seed means, short runs).
    for a in (LOW, HIGH):
        assert 3.5 < mean_of(runs, a, lambda r: r["load_mbps"]) < 6.5, a


# Fig. 1's estimators are R/S and V-T; the wavelet is the spec's addition. Whittle fits the fGn spectrum over
# every frequency, so at 10 ms the sub-second TCP dynamics dominate it: in the full reproduction it reads
# 0.79 at alpha 1.05 and 0.83 at 1.95 (docs/reproductions/mtsc.md). It is held to the claim as a strict
# expected failure, so a change that makes it order the alphas is noticed.
WHITTLE_REVERSED = pytest.mark.xfail(strict=True, reason="Whittle's fGn fit is dominated by fine-scale TCP dynamics "
                                     "(docs/deviations.md, paper 003 Figs. 1-3)")


@pytest.mark.parametrize("method", [m if m != "whittle" else pytest.param(m, marks=WHITTLE_REVERSED)
                                    for m in repro.METHODS])
def test_heavier_tailed_files_give_a_higher_hurst_parameter(runs, method):
    # Fig. 1: H close to 1 as alpha -> 1, close to 1/2 as alpha -> 2.
    low = mean_of(runs, LOW, lambda r: r["hurst"][method])
    high = mean_of(runs, HIGH, lambda r: r["hurst"][method])
    assert low > high, (method, low, high)


@pytest.mark.parametrize("t", repro.FIG2_T_S)
def test_successive_levels_are_more_correlated_at_alpha_near_one(runs, t):
    # Fig. 2 / §2.3: a diagonal skew at alpha 1.05, none at 1.95.
    low = mean_of(runs, LOW, lambda r: r["tables"][t]["tau"])
    high = mean_of(runs, HIGH, lambda r: r["tables"][t]["tau"])
    assert low > high, (t, low, high)


@pytest.mark.parametrize("t", (1.0, 2.0, 5.0))
def test_long_range_dependence_lowers_the_entropy_below_the_shuffled_control(runs, t):
    # Fig. 3 / §2.4: at alpha 1.05 the past level predicts the next one, so the average entropy is below
    # that of the same bins in random order (which keeps the marginal and destroys the correlation).
    i = repro.FIG3_T_S.index(t)
    for r in repro.by_alpha(runs, LOW):
        e = r["entropy"]
        assert e["entropy"][i] < e["control"][i], (t, r["seed"], e["entropy"][i], e["control"][i])
