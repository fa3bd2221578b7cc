"""experiments/mtsc/lockin.py's criterion and counting on hand-made series (no simulation): where a lock-in
starts and ends, how many clients have a transfer under way, what counts as a lull, and bad --runs input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _experiments import load_experiment

lockin = load_experiment("mtsc", "lockin")


def test_lock_in_starts_at_the_first_run_of_blocks_below_one_mbps_lasting_100_s():
    # 10 s blocks: a 90 s dip (too short), then a 120 s one that starts at 200 s and ends at 320 s.
    bg = np.array([3.0] * 5 + [0.5] * 9 + [3.0] * 6 + [0.2] * 12 + [4.0] * 3)
    assert lockin.lock_in(bg) == (200.0, 320.0)
    assert lockin.lock_in(bg[:14]) is None
    # A run that reaches the end is reported up to the end (never left).
    assert lockin.lock_in(np.array([3.0, 0.0] + [0.9] * 10)) == (10.0, 120.0)


def test_a_block_at_exactly_the_threshold_is_not_below_it():
    assert lockin.lock_in(np.array([1.0] * 20)) is None
    assert lockin.below_runs(np.array([0.5, 1.0, 0.5, 0.5]), 1.0) == [(0, 1), (2, 4)]


def test_blocks_average_whole_blocks_and_drop_the_incomplete_tail():
    x = np.arange(25, dtype=float)
    np.testing.assert_allclose(lockin.blocks(x, 0.01, 0.1), [4.5, 14.5])


def test_active_transfers_are_the_clients_outside_their_off_periods():
    off = pd.DataFrame({"flow": [0, 0, 1], "start_s": [1.0, 5.0, 2.0], "end_s": [3.0, 6.0, 8.0]})
    t = np.array([0.5, 1.0, 2.5, 3.0, 5.5, 7.9, 8.0])
    np.testing.assert_array_equal(lockin.active_transfers(off, t, n_clients=3), [3, 2, 1, 2, 1, 2, 3])


def test_a_lull_is_at_least_min_s_with_no_more_than_the_allowed_active_clients():
    active = np.array([5, 2, 2, 2, 1, 5, 0, 0, 5, 1, 1, 1, 1, 1])
    # Steps of 0.5 s: [1, 5) lasts 2 s, [6, 8) 1 s, [9, 14) 2.5 s.
    assert lockin.lulls(active, 0.5, most=2, min_s=2.0) == [(0.5, 2.0), (4.5, 2.5)]
    assert lockin.lulls(active, 0.5, most=0, min_s=1.0) == [(3.0, 1.0)]


def test_runs_are_variant_colon_seed_and_anything_else_is_refused():
    assert lockin.parse_run("online:11") == ("online", 11)
    for bad in ("online", "oracle:3", "generic:x"):
        with pytest.raises(ValueError, match="VARIANT:SEED"):
            lockin.parse_run(bad)


def test_a_bad_runs_option_exits_2_with_one_line(capsys):
    assert lockin.main(["run", "/nonexistent", "--runs", "online:eleven"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "online:eleven" in err


def test_the_clamp_stretch_starts_at_the_last_measurement_below_the_clamp():
    st = pd.DataFrame({"t": [1.0, 2.0, 3.0, 4.0, 5.0], "paced": [900.0, 1250.0, 1000.0, 1250.0, 1250.0]})
    assert lockin.at_clamp_since(st, 4.5, 1250.0) == 3.0
    assert lockin.at_clamp_since(st.iloc[3:], 5.0, 1250.0) == 0.0
    assert lockin.at_clamp_since(st, 1.5, 1250.0) == 1.0


def _fake_lied_trace(calls: list):
    """Stands in for `cargo run --example lied_trace -- SCENARIO PREFIX`: writes the five files at PREFIX."""
    def run(cmd, **kwargs):
        scenario, prefix = cmd[-2], cmd[-1]
        calls.append(Path(scenario).read_text())
        for ext in ("epochs", "sac", "link", "off", "flows"):
            Path(f"{prefix}.{ext}.csv").write_text(f"{ext}\n")
    return run


def test_run_never_overwrites_a_file_ccscope_did_not_write_and_runs_nothing_then(tmp_path, monkeypatch, capsys):
    calls: list = []
    monkeypatch.setattr(lockin.subprocess, "run", _fake_lied_trace(calls))
    mine = tmp_path / "online_11.toml"
    mine.write_text("# not ccscope's\n")
    assert lockin.main(["run", str(tmp_path), "--runs", "generic:12", "online:11", "--duration-s", "60"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "online_11.toml" in err, err
    assert mine.read_text() == "# not ccscope's\n"
    assert calls == [] and sorted(p.name for p in tmp_path.iterdir()) == ["online_11.toml"]


def test_run_writes_each_runs_scenario_and_traces_into_the_folders_manifest(tmp_path, monkeypatch):
    from ccscope import store

    calls: list = []
    monkeypatch.setattr(lockin.subprocess, "run", _fake_lied_trace(calls))
    out = tmp_path / "traces"
    assert lockin.main(["run", str(out), "--runs", "generic:12", "--duration-s", "60"]) == 0
    names = ["generic_12.toml"] + [f"generic_12.{e}.csv" for e in ("epochs", "flows", "link", "off", "sac")]
    assert sorted(store.read_manifest(out)["files"]) == sorted(names)
    assert (out / "generic_12.toml").read_text() == calls[0]
    # Run again: ccscope's own files are replaced.
    assert lockin.main(["run", str(out), "--runs", "generic:12", "--duration-s", "60"]) == 0
    assert len(calls) == 2
