"""Paper 003's traffic claims (§2, Figs. 1-3), checked on short versions of the reproduction's runs
(experiments/mtsc): alpha 1.05 against 1.95, 2 seeds x 3,000 s of background. Then the SAC experiments'
machinery (the two-pass oracle, frozen tables), the one SAC claim that holds on short runs (Fig. 18's
fairness), and bad input.

Each claim is recomputed here from the runs' Hurst estimates, CondProb tables and entropy curves; nothing
reads a verdict back from the report. Figs. 1-3 are checked at spec §4's acceptance bounds (Fig. 1's H bands,
Fig. 2's tau_b bounds, Fig. 3's drop against the control); a bound these runs miss, as the full report does, is
a strict expected failure with the measured numbers. The full-size reproduction is `ccscope repro mtsc`.
"""

import statistics

import numpy as np
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


# Fig. 1's estimators are R/S and V-T; the wavelet and Whittle are the spec's additions. Whittle fits the fGn
# spectrum to the series aggregated over 1.28 s (ccscope.stats' default): over every 10 ms frequency the
# sub-second TCP dynamics dominated it and it read 0.79 at alpha 1.05 against 0.83 at 1.95 (docs/deviations.md).
@pytest.mark.parametrize("method", repro.METHODS)
def test_heavier_tailed_files_give_a_higher_hurst_parameter(runs, method):
    # Fig. 1: H close to 1 as alpha -> 1, close to 1/2 as alpha -> 2.
    low = mean_of(runs, LOW, lambda r: r["hurst"][method])
    high = mean_of(runs, HIGH, lambda r: r["hurst"][method])
    assert low > high, (method, low, high)


R_S_ABOVE_BAND = pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "spec §4 Fig. 1: H(1.95) in [0.45, 0.68]; R/S (Anis-Lloyd) reads 0.70 here (0.699, 0.707 at seeds 1-2) and 0.687 "
    "in the full report (docs/reproductions/mtsc.md), above the band; the other three estimators are inside it"))


@pytest.mark.parametrize("method", [pytest.param(m, marks=R_S_ABOVE_BAND) if m == "rs" else m for m in repro.METHODS])
def test_hurst_is_at_least_0_85_at_alpha_1_05_and_within_0_45_to_0_68_at_alpha_1_95(runs, method):
    # Spec §4, Fig. 1's acceptance on seed means: H(1.05) >= 0.85, H(1.95) in [0.45, 0.68] (theory 0.975, 0.525).
    # Measured here: R/S 0.87/0.70, variance-time 0.90/0.61, wavelet 1.00/0.61, Whittle 0.98/0.58.
    low = mean_of(runs, LOW, lambda r: r["hurst"][method])
    high = mean_of(runs, HIGH, lambda r: r["hurst"][method])
    assert low >= 0.85 and 0.45 <= high <= 0.68, (method, low, high)


@pytest.mark.parametrize("t", repro.FIG2_T_S)
def test_successive_levels_are_more_correlated_at_alpha_near_one(runs, t):
    # Fig. 2 / §2.3: a diagonal skew at alpha 1.05, none at 1.95. Spec §4's acceptance: Kendall tau_b >= 0.3 at
    # alpha 1.05 and at most half of that at 1.95, at every T (measured here: 0.59/0.57/0.50 against 0.14/0.11/0.00).
    low = mean_of(runs, LOW, lambda r: r["tables"][t]["tau"])
    high = mean_of(runs, HIGH, lambda r: r["tables"][t]["tau"])
    assert low >= 0.3 and high <= 0.5 * low, (t, low, high)


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "spec §4 Fig. 2: 'more concentrated at larger T', tau_b at 5 s above tau_b at 0.5 s for alpha 1.05; "
    "measured 0.50 against 0.59 here, 0.607 against 0.664 in the full report (docs/reproductions/mtsc.md)"))
def test_successive_levels_are_more_correlated_at_5_s_than_at_half_a_second_at_alpha_1_05(runs):
    tau = {t: mean_of(runs, LOW, lambda r: r["tables"][t]["tau"]) for t in (0.5, 5.0)}
    assert tau[5.0] > tau[0.5], tau


@pytest.mark.parametrize("t", (1.0, 2.0, 5.0))
def test_long_range_dependence_lowers_the_entropy_below_the_shuffled_control(runs, t):
    # Fig. 3 / §2.4: at alpha 1.05 the past level predicts the next one, so the average entropy is below
    # that of the same bins in random order (which keeps the marginal and destroys the correlation).
    i = repro.FIG3_T_S.index(t)
    for r in repro.by_alpha(runs, LOW):
        e = r["entropy"]
        assert e["entropy"][i] < e["control"][i], (t, r["seed"], e["entropy"][i], e["control"][i])


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "spec §4 Fig. 3: S-bar falls from 250 ms to 5 s by at least 0.2 nats more than the shuffled control; measured "
    "here S-bar rises 0.03 nats while the control falls 0.06 (median over seeds 1-2), in the full report an excess of "
    "-0.110 (docs/reproductions/mtsc.md)"))
def test_the_average_entropy_falls_from_250_ms_to_5_s_by_0_2_nats_more_than_the_shuffled_control(runs):
    i0, i5 = repro.FIG3_T_S.index(0.25), repro.FIG3_T_S.index(5.0)
    med = {k: np.median([r["entropy"][k] for r in repro.by_alpha(runs, LOW)], axis=0) for k in ("entropy", "control")}
    drop, control_drop = med["entropy"][i0] - med["entropy"][i5], med["control"][i0] - med["control"][i5]
    assert drop - control_drop >= 0.2, (drop, control_drop)


# ---------------------------------------------------------------- SAC (Figs. 9-18): the machinery, exactly

import sac_runs  # noqa: E402  (experiments/mtsc, on sys.path through load_experiment)
from mtsc_scenarios import background_dict, registered_idle_mean  # noqa: E402

SAC_S = 150.0


@pytest.fixture(scope="module")
def oracle_passes(tmp_path_factory):
    """Pass 1 (on-line SAC, series kept) and pass 2 (the oracle reading pass 1's levels), twice."""
    first = sac_runs.Run("online", 1, SAC_S)
    p1 = sac_runs.execute(first)
    path = tmp_path_factory.mktemp("oracle") / "levels.toml"
    path.write_text(p1["oracle_toml"])
    second = sac_runs.Run("oracle", 1, SAC_S)
    f, kw = sac_runs._child_input(second, p1, path.parent)
    return p1, f, [sac_runs.execute(second, f, **kw) for _ in range(2)]


def test_the_oracle_file_holds_one_level_per_bin_for_every_whole_t2_window(oracle_passes):
    p1, f, _ = oracle_passes
    text = open(f).read()
    digits = text.split('levels = "', 1)[1].split('"', 1)[0]
    bins, t2 = int(SAC_S / repro.BIN_S), int(sac_runs.T2_S / repro.BIN_S)
    assert len(digits) == bins - t2 + 1
    assert set(digits) <= set("12345678") and len(set(digits)) >= 3


def test_two_passes_over_one_seed_are_deterministic_and_the_oracle_drives_every_increase(oracle_passes):
    p1, _, (a, b) = oracle_passes
    for k in ("pps", "loss", "background_mbps", "boosted_share", "no_row", "oracle_mismatch"):
        assert a[k] == b[k], k
    # a_t = 1/L2 > 0 wherever the series has a level: every increase is boosted but those of the last T2.
    assert a["boosted_share"] > 0.98
    assert 0.0 <= a["oracle_mismatch"] <= 1.0
    # The same background draws under one seed: pass 2 differs from pass 1 only through the SAC flow.
    assert a["pps"] != p1["pps"]


def test_a_sac_run_needs_a_registered_background():
    with pytest.raises(ValueError, match="no idle mean registered"):
        registered_idle_mean(1.05, 3.0)


# ---------------------------------------------------------------- bad input: one line, exit 2

import inspect  # noqa: E402

from typer.testing import CliRunner  # noqa: E402

from ccscope.cli import app  # noqa: E402

runner = CliRunner(mix_stderr=False) if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters else CliRunner()


def _bad_run(tmp_path, edit):
    import tomli_w

    d = background_dict(1.35, 1.0, idle_mean_s=1.0)
    edit(d)
    sc = tmp_path / "bad.toml"
    sc.write_text(tomli_w.dumps(d))
    out = tmp_path / "res"
    res = runner.invoke(app, ["run", str(sc), "-o", str(out)])
    text = res.stderr if hasattr(res, "stderr") else res.output
    assert res.exit_code == 2, text
    assert "Traceback" not in text and not out.exists()
    return text


def test_a_pareto_alpha_of_one_or_less_is_refused_naming_the_field(tmp_path):
    def edit(d):
        d["flows"][0]["traffic"]["alpha"] = 1.0
    text = _bad_run(tmp_path, edit)
    assert "flows[0].traffic.alpha" in text, text
    with pytest.raises(ValueError, match="alpha"):
        background_dict(1.0, 10.0, idle_mean_s=1.0)


def test_a_non_positive_file_size_is_refused_naming_the_field(tmp_path):
    def edit(d):
        d["flows"][1]["traffic"]["mean_bytes"] = 0
    assert "flows[1].traffic.mean_bytes" in _bad_run(tmp_path, edit)


def test_a_missing_oracle_file_is_refused_naming_the_field(tmp_path):
    def edit(d):
        d["flows"].append({"controller": "sac", "transport": "datagram", "table": "oracle",
                           "oracle_file": "no-such-levels.toml", "route": ["access", "bottleneck", "server0"],
                           "ack_route": ["server0_back", "bottleneck_back", "access_back"]})
    text = _bad_run(tmp_path, edit)
    assert "oracle_file" in text and "no-such-levels.toml" in text, text


def test_an_untrained_frozen_table_gives_exactly_the_generic_control():
    # Fig. 16's D_train = 0: no row was ever seen, so a_t = 0 at every increase (spec §2.4 [D]) and the
    # run is generic LIED's, packet for packet, under the same background draws.
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        empty = Path(d) / "empty.toml"
        empty.write_text(sac_runs.EMPTY_TABLE)
        sac = sac_runs.execute(sac_runs.Run("trained", 2, 120.0), str(empty))
    generic = sac_runs.execute(sac_runs.Run("generic", 2, 120.0))
    assert sac["boosted_share"] == 0.0
    assert (sac["pps"], sac["loss"], sac["link_mbps"]) == (generic["pps"], generic["loss"], generic["link_mbps"])


def test_ten_inverse_sac_flows_share_the_bottleneck_fairly():
    # Fig. 18 (spec §4 [D] thresholds): Jain's index >= 0.95 and max/min <= 1.5 among 10 on-line inverse SAC
    # flows on the 20 Mbit/s bottleneck, on each seed.
    for seed in (1, 2):
        r = sac_runs.execute(sac_runs.Run("online", seed, 100.0, bottleneck_mbps=20.0, n=10))
        pps = r["pps"]
        assert len(pps) == 10
        jain = sum(pps) ** 2 / (len(pps) * sum(x * x for x in pps))
        assert jain >= 0.95 and max(pps) / min(pps) <= 1.5, (seed, jain, pps)


def test_an_oracle_file_named_relative_to_the_scenario_is_found_and_recorded_as_an_input(tmp_path, monkeypatch):
    import ccscope
    from ccscope.stats.condprob import oracle_levels_toml

    (tmp_path / "levels.toml").write_text(oracle_levels_toml(np.full(3000, 1, dtype=np.int8), 0.01))
    text = ccscope.api.EXAMPLES_DIR.joinpath("sac_pareto.toml").read_text()
    scenario = tmp_path / "s.toml"
    scenario.write_text(text.replace('controller = "sac"',
                                     'controller = "sac"\ntable = "oracle"\noracle_file = "levels.toml"'))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    res = ccscope.run(str(scenario), overrides={"duration_s": 20})
    row = res.flows.iloc[-1]
    # Level 1 everywhere: a_t = 1 at every increase once the series is read.
    assert row["sac_boosted_increases"] == row["sac_increases"] > 0
    assert str(tmp_path / "levels.toml") in res.scenario["inputs"]


def test_at_alpha_1_95_perfect_prediction_beats_the_online_table_which_beats_generic(tmp_path):
    # Fig. 12 at alpha 1.95 (spec §4: the order on medians over seeds): perfect > on-line > generic.
    # Development seeds, 300 s (the report: 10 seeds x 600 s, medians 558 > 548 > 495 packets/s).
    rows = []
    for seed in (1, 2, 3):
        online = sac_runs.execute(sac_runs.Run("online", seed, 300.0, alpha=1.95))
        oracle = sac_runs.Run("oracle", seed, 300.0, alpha=1.95)
        f, kw = sac_runs._child_input(oracle, online, tmp_path)
        perfect = sac_runs.execute(oracle, f, **kw)
        generic = sac_runs.execute(sac_runs.Run("generic", seed, 300.0, alpha=1.95))
        rows.append((perfect["total_pps"], online["total_pps"], generic["total_pps"]))
    p, o, g = (statistics.median(x) for x in zip(*rows))
    assert p > o > g, rows


def test_an_interrupted_csv_write_leaves_the_old_file_whole_and_no_temporary(tmp_path):
    # repro.py's CSVs go through ccscope.store's atomic folder writer: a failure mid-write (here a row with a
    # column the header lacks) leaves the previous file and the folder's manifest as they were, nothing beside.
    path = tmp_path / "mtsc" / "fig1_hurst.csv"
    repro.write_csv(path, [{"alpha": 1.05, "seed": 11}])
    before = path.read_bytes()
    manifest = (path.parent / "ccscope-manifest.json").read_bytes()
    with pytest.raises(ValueError):
        repro.write_csv(path, [{"alpha": 1.95, "seed": 12}, {"alpha": 1.95, "seed": 13, "extra": 1}])
    assert path.read_bytes() == before
    assert (path.parent / "ccscope-manifest.json").read_bytes() == manifest
    assert sorted(p.name for p in path.parent.iterdir()) == ["ccscope-manifest.json", "fig1_hurst.csv"]


@pytest.mark.parametrize("reuse", [False, True])
def test_the_sac_runner_never_replaces_or_appends_to_a_log_ccscope_did_not_write(tmp_path, reuse):
    # The check at write time (the script checks before any run too): a foreign log that appeared is left as it was.
    from ccscope import store

    (tmp_path / "sac_runs.jsonl").write_bytes(b"mine\n")
    with pytest.raises(store.OutputError):
        sac_runs.run_all([], 1, cache=tmp_path / "sac_runs.jsonl", reuse=reuse)
    assert (tmp_path / "sac_runs.jsonl").read_bytes() == b"mine\n"
