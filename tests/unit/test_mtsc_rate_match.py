"""experiments/mtsc/rate_match.py's per-seed gains and their summary (no simulation)."""

from __future__ import annotations

import numpy as np
import pytest

from _experiments import load_experiment

rate_match = load_experiment("mtsc", "rate_match")


def test_the_gain_is_on_line_over_generic_per_seed_and_a_missing_run_gives_none():
    res = {("generic", 11, 1.05): (500.0, 4.0), ("online", 11, 1.05): (550.0, 3.9),
           ("generic", 12, 1.05): (400.0, 4.2), ("online", 12, 1.05): (300.0, 4.5)}
    np.testing.assert_allclose(rate_match.gains(res, [11, 12], 1.05), [10.0, -25.0])
    assert rate_match.gains(res, [11, 13], 1.05) is None
    assert rate_match.gains(res, [11], 1.95) is None


def test_the_summary_gives_a_paired_t_interval_around_the_mean():
    # Gains 10 and 20: mean 15, sd 7.07, t(0.975, 1) = 12.706, half width 12.706 * 7.07 / sqrt(2) = 63.5.
    assert rate_match.summary(np.array([10.0, 20.0])) == "mean +15.0% ± 63.5, median +15.0%"


def test_committed_runs_are_only_the_fig14_pairs_of_the_asked_length():
    got = rate_match.committed(10_000.0)
    assert got, "the committed report's run log is in the repository"
    assert {k[0] for k in got} == {"generic", "online", "inverted", "random"}  # Fig. 14's pairs and A3's tables
    assert {k[2] for k in got if k[0] in ("inverted", "random")} == {1.05}
    assert {k[2] for k in got} >= {1.05, 1.95}
    assert rate_match.committed(123.0) == {}


def test_a3_judges_the_inverted_table_against_half_the_gain_and_the_random_table_by_a_paired_interval():
    res = {}
    for seed, (g, o, inv, rnd) in {11: (500.0, 550.0, 510.0, 530.0), 12: (400.0, 440.0, 420.0, 430.0)}.items():
        for v, pps in (("generic", g), ("online", o), ("inverted", inv), ("random", rnd)):
            res[(v, seed, 1.05)] = (pps, 4.0)
    # Gains +10% and +10% on-line; inverted +2% and +5% (mean +3.5% <= 5%); on-line - random 20 and 10 pkt/s:
    # mean 15, half width 12.706 * 7.07 / sqrt(2) = 63.5, so the interval holds 0.
    assert rate_match.a3(res, [11, 12], 1.05) == [
        "A3 inverted table: gain +3.5% against on-line +10.0%: <= 1/2 of it holds",
        "A3 random table: on-line - random +15.0 ± 63.5 pkt/s: random below on-line (paired CI) fails"]
    assert rate_match.a3({k: v for k, v in res.items() if k[0] != "random"}, [11, 12], 1.05) == [
        "A3 inverted table: gain +3.5% against on-line +10.0%: <= 1/2 of it holds"]


@pytest.mark.parametrize("argv,message", [
    (["--constant-a", "-1"], "--constant-a -1.0: a finite number >= 0"),
    (["--constant-a", "nan"], "--constant-a nan: a finite number >= 0"),
    (["--variants", "generic", "inverted"], "--variants: generic and online are always needed"),
])
def test_a_bad_constant_or_variant_list_exits_2_naming_the_option_before_any_run(argv, message, capsys, monkeypatch):
    monkeypatch.setattr(rate_match, "one", lambda job: pytest.fail("a run started"))
    with pytest.raises(SystemExit) as e:
        rate_match.main(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err
