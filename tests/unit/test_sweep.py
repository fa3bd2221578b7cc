"""Sweeps: grid parsing, table shape, determinism, resume, and failing before anything runs."""

from __future__ import annotations

import pandas as pd
import pytest

from ccscope import _native, sweep
from ccscope._native import ScenarioError

# Synthetic links only (no traces), 2 simulated seconds: each point runs in milliseconds.
SHORT = {"duration_s": [2]}


def test_parse_grid_reads_values_as_toml_in_insertion_order():
    grid = sweep.parse_grid(["flows.0.window=1,2,5,10", "flows.0.controller=aimd", "data_link.delay_ms=2.5, 20"])
    assert grid == {"flows.0.window": [1, 2, 5, 10], "flows.0.controller": ["aimd"], "data_link.delay_ms": [2.5, 20]}
    assert list(grid) == ["flows.0.window", "flows.0.controller", "data_link.delay_ms"]
    assert sweep.parse_grid([]) == {}


@pytest.mark.parametrize("item", ["flows.0.window", "=1,2", "flows.0.window=", "flows.0.window=1,,2", "seed=1,2"])
def test_parse_grid_names_the_malformed_item_in_one_line(item):
    with pytest.raises(ScenarioError) as e:
        sweep.parse_grid(["duration_s=2", item])
    assert item in str(e.value) and "\n" not in str(e.value)


def test_parse_grid_rejects_a_key_given_twice():
    with pytest.raises(ScenarioError, match="twice"):
        sweep.parse_grid(["flows.0.window=1", "flows.0.window=2"])


def test_two_by_two_grid_with_two_seeds_gives_eight_rows_in_grid_then_seed_order(tmp_path):
    grid = {"data_link.rate_mbps": [6, 12], "data_link.delay_ms": [10, 20], **SHORT}
    df = sweep.run_sweep("examples/constant_rate.toml", grid, seeds=2, out=tmp_path, jobs=1)
    assert list(df.columns) == [*grid, "seed", *sweep.SUMMARY_FIELDS]
    assert len(df) == 8
    assert list(zip(df["data_link.rate_mbps"], df["data_link.delay_ms"], df["seed"])) == [
        (r, d, s) for r in (6, 12) for d in (10, 20) for s in (1, 2)
    ]
    assert (df["capacity_mbps"] == df["data_link.rate_mbps"]).all()
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "sweep.parquet"), df)
    assert len(list((tmp_path / "points").glob("*.json"))) == 8
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith(".")]  # no temp files left


def test_same_seed_gives_identical_numbers_and_seeds_change_random_loss(tmp_path):
    a = sweep.run_sweep("examples/red_lossy.toml", {"duration_s": [5]}, seeds=2, out=tmp_path / "a", jobs=1)
    b = sweep.run_sweep("examples/red_lossy.toml", {"duration_s": [5]}, seeds=2, out=tmp_path / "b", jobs=1)
    pd.testing.assert_frame_equal(a, b)
    assert a.loc[0, "seed"] == 1 and a.loc[1, "seed"] == 2
    assert a.loc[0, "dropped"] != a.loc[1, "dropped"]


def test_worker_processes_give_the_same_table_as_one_process(tmp_path):
    grid = {"data_link.rate_mbps": [6, 12], **SHORT}
    serial = sweep.run_sweep("examples/constant_rate.toml", grid, seeds=2, out=tmp_path / "serial", jobs=1)
    parallel = sweep.run_sweep("examples/constant_rate.toml", grid, seeds=2, out=tmp_path / "parallel", jobs=2)
    pd.testing.assert_frame_equal(serial, parallel)


def test_resume_reruns_only_the_missing_point(tmp_path, monkeypatch):
    grid = {"data_link.rate_mbps": [6, 12], **SHORT}
    first = sweep.run_sweep("examples/constant_rate.toml", grid, seeds=2, out=tmp_path, jobs=1)
    (tmp_path / "sweep.parquet").unlink()
    missing = sweep.point_key(sweep.api.Scenario.load("examples/constant_rate.toml").text, {"data_link.rate_mbps": 12, "duration_s": 2}, 1)
    (tmp_path / "points" / f"{missing}.json").unlink()

    calls = []
    real = sweep._run_point

    def counting(text, file, overrides, seed):
        calls.append((overrides, seed))
        return real(text, file, overrides, seed)

    monkeypatch.setattr(sweep, "_run_point", counting)
    again = sweep.run_sweep("examples/constant_rate.toml", grid, seeds=2, out=tmp_path, jobs=1)
    assert calls == [({"data_link.rate_mbps": 12, "duration_s": 2}, 1)]
    pd.testing.assert_frame_equal(first, again)
    assert (tmp_path / "sweep.parquet").exists()


def test_bad_grid_value_fails_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(sweep, "_run_point", lambda *a: pytest.fail("ran a point"))
    out = tmp_path / "out"
    with pytest.raises(ScenarioError, match="window"):
        sweep.run_sweep("examples/fixed.toml", {"flows.0.window": [1, -1], **SHORT}, out=out, jobs=1)
    assert not (out / "sweep.parquet").exists()


def test_seeds_below_one_are_rejected(tmp_path):
    with pytest.raises(ScenarioError, match="seeds"):
        sweep.run_sweep("examples/constant_rate.toml", SHORT, seeds=0, out=tmp_path)


def test_native_error_in_a_worker_comes_back_as_its_own_class(monkeypatch):
    def failing(*a):
        raise _native.ControllerError("flow 0: boom")

    monkeypatch.setattr(sweep, "_run_point", failing)
    outcome = sweep._pool_entry("", None, {}, 1, "unused.json")
    with pytest.raises(_native.ControllerError, match="flow 0: boom"):
        sweep._unwrap(outcome)


def test_render_table_shows_grid_columns_seed_and_metrics(tmp_path):
    df = sweep.run_sweep("examples/constant_rate.toml", {"data_link.rate_mbps": [6, 12], **SHORT}, out=tmp_path, jobs=1)
    t = sweep.render_table(df)
    assert [c.header for c in t.columns] == ["data_link.rate_mbps", "duration_s", "seed", "Mbit/s", "p95 signal ms", "score"]
    assert t.row_count == 2


def test_resume_with_worker_processes_leaves_finished_point_files_untouched(tmp_path):
    grid = {"data_link.rate_mbps": [6, 12], **SHORT}
    first = sweep.run_sweep("examples/constant_rate.toml", grid, seeds=2, out=tmp_path, jobs=2)
    files = sorted((tmp_path / "points").glob("*.json"))
    files[0].unlink()
    before = {p.name: p.stat().st_mtime_ns for p in files[1:]}
    again = sweep.run_sweep("examples/constant_rate.toml", grid, seeds=2, out=tmp_path, jobs=2)
    assert files[0].exists()
    assert {p.name: p.stat().st_mtime_ns for p in files[1:]} == before
    pd.testing.assert_frame_equal(first, again)
