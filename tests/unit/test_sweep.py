"""Sweeps: grid syntax, table shape, determinism, content-keyed resume, seed aggregation, on a dask cluster."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from ccscope import api, grid, sweep
from ccscope._native import ScenarioError
from ccscope.cluster import open_client

# Synthetic links only (no traces), 2 simulated seconds: each point runs in milliseconds.
SHORT = {"duration_s": [2]}


@pytest.fixture(scope="module")
def client():
    with open_client(jobs=2) as c:
        yield c


def test_parse_grid_reads_values_as_toml_in_insertion_order():
    g = sweep.parse_grid(["flows.0.window=1,2,5,10", "flows.0.controller=aimd", "data_link.delay_ms=2.5, 20"])
    assert g == {"flows.0.window": [1, 2, 5, 10], "flows.0.controller": ["aimd"], "data_link.delay_ms": [2.5, 20]}
    assert list(g) == ["flows.0.window", "flows.0.controller", "data_link.delay_ms"]
    assert sweep.parse_grid([]) == {}


def test_integer_range_includes_both_ends_and_mixes_with_values():
    assert grid.parse_values("--param", "k=1:5", "1:5") == [1, 2, 3, 4, 5]
    assert grid.parse_values("--param", "k=1:10:3", "1:10:3") == [1, 4, 7, 10]
    assert grid.parse_values("--param", "k=1:3,10", "1:3,10") == [1, 2, 3, 10]
    assert grid.parse_values("--param", "k=5:1:-2", "5:1:-2") == [5, 3, 1]


def test_decimal_step_lands_exactly_on_the_end():
    # 0.1 + 2 * 0.1 is 0.30000000000000004 in binary floating point; the grid says 0.3.
    assert grid.parse_values("--param", "k", "0.1:0.5:0.1") == [0.1, 0.2, 0.3, 0.4, 0.5]


def test_linspace_and_logspace_follow_numpy_and_geomspace_takes_endpoints():
    assert grid.parse_values("--param", "k", "linspace(0, 1, 5)") == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert grid.parse_values("--param", "k", "logspace(-2, 0, 3)") == pytest.approx([0.01, 0.1, 1.0], rel=1e-12)
    assert grid.parse_values("--param", "k", "geomspace(1, 100, 3)") == pytest.approx([1.0, 10.0, 100.0], rel=1e-12)


def test_a_controller_spec_with_a_colon_stays_a_string():
    assert sweep.parse_grid(["flows.0.class=ctl.py:A,other.py:B"]) == {"flows.0.class": ["ctl.py:A", "other.py:B"]}


@pytest.mark.parametrize("item", [
    "flows.0.window", "=1,2", "flows.0.window=", "flows.0.window=1,,2", "seed=1,2", "flows.0.window=5:1",
    "flows.0.window=1:5:0", "flows.0.window=1:5:-1", "flows.0.window=linspace(0,1)", "flows.0.window=linspace(0,1,0)",
    "flows.0.window=logspace(0,1,2.5)", "flows.0.window=geomspace(0,1,3)", "flows.0.window=1:100000000",
    "flows.0.window=linspace(a,1,3)",
])
def test_bad_grid_names_the_option_and_item_in_one_line(item):
    with pytest.raises(ScenarioError) as e:
        sweep.parse_grid(["duration_s=2", item])
    msg = str(e.value)
    assert msg.startswith(f"--param {item}:") and "\n" not in msg


def test_parse_grid_rejects_a_key_given_twice():
    with pytest.raises(ScenarioError, match="twice"):
        sweep.parse_grid(["flows.0.window=1", "flows.0.window=2"])


def test_a_grid_too_large_is_refused_before_any_list_is_built():
    with pytest.raises(ScenarioError, match="limit"):
        sweep.parse_grid(["a=1:1000", "b=1:1000", "c=1:2"])


def test_two_by_two_grid_with_two_seeds_gives_eight_rows_in_grid_then_seed_order(tmp_path, client):
    g = {"data_link.rate_mbps": [6, 12], "data_link.delay_ms": [10, 20], **SHORT}
    res = sweep.run_sweep("examples/red_lossy.toml", g, seeds=2, out=tmp_path, client=client)
    df = res.table
    assert list(df.columns) == [*g, "seed", *sweep.SUMMARY_FIELDS]
    assert len(df) == 8 and res.seeds == 2 and res.ran == 8 and res.loaded == 0
    assert list(zip(df["data_link.rate_mbps"], df["data_link.delay_ms"], df["seed"])) == [
        (r, d, s) for r in (6, 12) for d in (10, 20) for s in (1, 2)
    ]
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "sweep.parquet"), df)
    assert len(list((tmp_path / "points").glob("*.json"))) == 8
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith(".")]  # no temp files left
    record = json.loads((tmp_path / "sweep.json").read_text())
    assert record["grid"] == g and record["seeds"] == record["seeds_run"] == 2
    assert record["scenario"] == api.Scenario.load("examples/red_lossy.toml").text


def test_same_seed_gives_identical_numbers_and_seeds_change_random_loss(tmp_path, client):
    a = sweep.run_sweep("examples/red_lossy.toml", {"duration_s": [5]}, seeds=2, out=tmp_path / "a", client=client)
    b = sweep.run_sweep("examples/red_lossy.toml", {"duration_s": [5]}, seeds=2, out=tmp_path / "b", client=client)
    pd.testing.assert_frame_equal(a.table, b.table)
    assert list(a.table["seed"]) == [1, 2]
    assert a.table.loc[0, "dropped"] != a.table.loc[1, "dropped"]
    assert not a.warnings


def test_summary_gives_mean_and_student_t_95_ci_over_seeds(tmp_path, client):
    res = sweep.run_sweep("examples/red_lossy.toml", {"duration_s": [3]}, seeds=3, out=tmp_path, client=client)
    x = [float(v) for v in res.table["dropped"]]
    mean = sum(x) / 3
    sd = math.sqrt(sum((v - mean) ** 2 for v in x) / 2)
    t975_df2 = 4.302652729911275  # Student t, 97.5th percentile, 2 degrees of freedom
    row = res.summary.iloc[0]
    assert row["seeds"] == 3
    assert row["dropped_mean"] == pytest.approx(mean, rel=1e-12)
    assert row["dropped_ci95"] == pytest.approx(t975_df2 * sd / math.sqrt(3), rel=1e-9)
    assert row["dropped_ci95"] > 0
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "summary.parquet"), res.summary)


def test_extra_seeds_without_randomness_warn_once_and_keep_seed_one(tmp_path, client):
    g = {"data_link.rate_mbps": [6, 12], **SHORT}
    res = sweep.run_sweep("examples/constant_rate.toml", g, seeds=4, out=tmp_path, client=client)
    assert len(res.warnings) == 1 and "a sweep of 4 seeds ran seed 1 only" in res.warnings[0]
    assert res.seeds == 1 and list(res.table["seed"]) == [1, 1]
    assert res.ran == 4  # seeds 1 and 2 of both points, compared; seeds 3 and 4 never ran
    assert list(res.summary["seeds"]) == [1, 1]


def test_one_local_worker_gives_the_same_table_as_two(tmp_path, client):
    g = {"data_link.rate_mbps": [6, 12], **SHORT}
    one = sweep.run_sweep("examples/red_lossy.toml", g, seeds=2, out=tmp_path / "one", jobs=1)
    two = sweep.run_sweep("examples/red_lossy.toml", g, seeds=2, out=tmp_path / "two", client=client)
    pd.testing.assert_frame_equal(one.table, two.table)


def test_resume_reruns_only_the_missing_point_and_leaves_the_others_untouched(tmp_path, client):
    g = {"data_link.rate_mbps": [6, 12], **SHORT}
    first = sweep.run_sweep("examples/red_lossy.toml", g, seeds=2, out=tmp_path, client=client)
    files = sorted((tmp_path / "points").glob("*.json"))
    files[0].unlink()
    before = {p.name: p.stat().st_mtime_ns for p in files[1:]}
    again = sweep.run_sweep("examples/red_lossy.toml", g, seeds=2, out=tmp_path, client=client)
    assert (again.ran, again.loaded) == (1, 3)
    assert files[0].exists()
    assert {p.name: p.stat().st_mtime_ns for p in files[1:]} == before
    pd.testing.assert_frame_equal(first.table, again.table)


SCENARIO = """duration_s = 2
seed = 1
[data_link]
trace = "link.trace"
delay_ms = 10
[ack_link]
rate_mbps = 12
delay_ms = 10
[[flows]]
controller = "python"
class = "a.py:Ctl"
"""

CTL = "from ccscope import Controller\n\nclass Ctl(Controller):\n    cwnd = {w}\n"


def _folder(tmp_path):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "link.trace").write_text("".join(f"{t}\n" for t in range(1, 101)))
    (tmp_path / "a.py").write_text(CTL.format(w=4))
    (tmp_path / "b.py").write_text(CTL.format(w=8))
    (tmp_path / "s.toml").write_text(SCENARIO)
    return tmp_path / "s.toml"


def test_editing_a_controller_reruns_exactly_its_points_and_editing_nothing_reruns_none(tmp_path, client):
    s = _folder(tmp_path / "in")
    g = {"flows.0.class": ["a.py:Ctl", "b.py:Ctl"], "data_link.delay_ms": [5, 10]}
    first = sweep.run_sweep(s, g, out=tmp_path / "out", client=client)
    assert (first.ran, first.loaded) == (4, 0)
    same = sweep.run_sweep(s, g, out=tmp_path / "out", client=client)
    assert (same.ran, same.loaded) == (0, 4)
    pd.testing.assert_frame_equal(first.table, same.table)

    (tmp_path / "in" / "a.py").write_text(CTL.format(w=1))
    edited = sweep.run_sweep(s, g, out=tmp_path / "out", client=client)
    assert (edited.ran, edited.loaded) == (2, 2)
    a_rows = edited.table["flows.0.class"] == "a.py:Ctl"
    # Window 1 instead of 4 on a 100-packet link: fewer packets delivered, b's rows as before.
    assert (edited.table.loc[a_rows, "delivered"] < first.table.loc[a_rows, "delivered"]).all()
    pd.testing.assert_frame_equal(edited.table[~a_rows], first.table[~a_rows])


def test_editing_the_trace_reruns_every_point(tmp_path, client):
    s = _folder(tmp_path / "in")
    g = {"flows.0.class": ["a.py:Ctl", "b.py:Ctl"]}
    sweep.run_sweep(s, g, out=tmp_path / "out", client=client)
    (tmp_path / "in" / "link.trace").write_text("".join(f"{t}\n" for t in range(1, 101, 2)))
    again = sweep.run_sweep(s, g, out=tmp_path / "out", client=client)
    assert (again.ran, again.loaded) == (2, 0)


def test_bad_grid_value_fails_before_anything_runs_or_is_written(tmp_path, client):
    out = tmp_path / "out"
    with pytest.raises(ScenarioError, match="window"):
        sweep.run_sweep("examples/fixed.toml", {"flows.0.window": [1, -1], **SHORT}, out=out, client=client)
    assert not out.exists()


def test_seeds_below_one_are_rejected(tmp_path, client):
    with pytest.raises(ScenarioError, match="seeds"):
        sweep.run_sweep("examples/constant_rate.toml", SHORT, seeds=0, out=tmp_path, client=client)


def test_native_error_in_a_worker_comes_back_as_its_own_class():
    outcome = sweep._run_point("duration_s = -1\n", None, {}, 1, {})
    assert outcome[0] == "ScenarioError"
    with pytest.raises(ScenarioError):
        sweep._unwrap(outcome)


def test_a_worker_whose_inputs_differ_from_the_clients_refuses_to_run(tmp_path):
    s = api.Scenario.load(_folder(tmp_path))
    stale = {str(tmp_path / "a.py"): "0" * 64, str(tmp_path / "link.trace"): "0" * 64}
    kind, msg = sweep._run_point(s.text, s.file, {}, 1, stale)
    assert kind == "ValueError" and "differs from the client's" in msg


def test_render_table_shows_one_row_per_seed_or_mean_and_ci_per_point(tmp_path, client):
    one = sweep.run_sweep("examples/constant_rate.toml", {"data_link.rate_mbps": [6, 12], **SHORT}, out=tmp_path / "a",
                          client=client)
    t = sweep.render_table(one)
    assert [c.header for c in t.columns] == ["data_link.rate_mbps", "duration_s", "seed", "Mbit/s", "p95 signal ms", "score"]
    assert t.row_count == 2
    many = sweep.run_sweep("examples/red_lossy.toml", SHORT, seeds=3, out=tmp_path / "b", client=client)
    t = sweep.render_table(many)
    assert [c.header for c in t.columns] == ["duration_s", "seeds", "Mbit/s", "p95 signal ms", "score"]
    assert t.row_count == 1 and "±" in list(t.columns[2].cells)[0]


def test_a_worker_of_another_ccscope_build_refuses_to_run(tmp_path):
    s = api.Scenario.load(_folder(tmp_path))
    kind, msg = sweep._run_point(s.text, s.file, {}, 1, {}, build="0.0.0+0000000000000000")
    assert kind == "ValueError" and "install the same ccscope everywhere" in msg


def test_a_rerun_removes_what_a_killed_write_left_and_nothing_else(tmp_path, client):
    g = {"data_link.rate_mbps": [6], **SHORT}
    sweep.run_sweep("examples/red_lossy.toml", g, out=tmp_path, client=client)
    (tmp_path / ".sweep.parquet.ab12cd_9.tmp").write_text("half")
    (tmp_path / "points" / ".0123456789abcdef0123.json.zzzzzzzz.tmp").write_text("half")
    mine = [tmp_path / ".notes.tmp", tmp_path / "notes.txt", tmp_path / "points" / ".x.json.abcdefgh.tmp"]
    for p in mine:
        p.write_text("the user's")
    sweep.run_sweep("examples/red_lossy.toml", g, out=tmp_path, client=client)
    assert sorted(p.name for p in tmp_path.rglob("*.tmp")) == [".notes.tmp", ".x.json.abcdefgh.tmp"]
    assert all(p.read_text() == "the user's" for p in mine)


def test_a_point_that_kills_its_workers_stops_the_sweep_with_one_line_naming_it(tmp_path):
    import dask

    s = _folder(tmp_path / "in")
    (tmp_path / "in" / "crash.py").write_text("import os\n\nclass Ctl:\n    def __init__(self, **kw):\n        os._exit(3)\n")
    # The scheduler of a local cluster lives in this process: one death is enough to give up.
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), open_client(jobs=1) as c:
        with pytest.raises(sweep.SweepError) as e:
            sweep.run_sweep(s, {"flows.0.class": ["crash.py:Ctl"]}, out=tmp_path / "out", client=c)
    assert str(e.value).startswith("point flows.0.class=crash.py:Ctl seed=1: every worker that ran it died")


@pytest.mark.parametrize("kwargs,named", [
    (dict(seeds=1.5), "seeds=1.5: must be a whole number of seeds"),
    (dict(seeds="2"), "seeds='2': must be a whole number of seeds"),
    (dict(seeds=True), "seeds=True: must be a whole number of seeds"),
    (dict(seeds=0), "seeds=0: need at least one seed"),
    (dict(seeds=10**9), f"seeds=1000000000: 1000000000 runs, more than the limit of {sweep.MAX_RUNS}"),
    (dict(grid={"duration_s": 1}), "grid['duration_s']: expected a list of values, got 1"),  # a scalar
    (dict(grid={"duration_s": []}), "grid['duration_s']: no values"),  # the sweep would run nothing and say nothing
    (dict(grid={"seed": [1, 2]}), "grid['seed']: use seeds= to vary the seed"),
    (dict(grid={"duration_s": {"a": 1}}), "grid['duration_s']: expected a list of values, got {'a': 1}"),
])
def test_a_bad_seeds_or_grid_is_a_scenario_error_naming_the_python_argument_before_any_run(tmp_path, kwargs, named):
    # The Python API names its own arguments; `ccscope sweep` names its options (tests/cli/test_bad_inputs.py).
    args = dict(grid={"duration_s": [1]}, seeds=1)
    args.update(kwargs)
    with pytest.raises(ScenarioError) as e:
        sweep.run_sweep("examples/aimd.toml", args["grid"], seeds=args["seeds"], out=tmp_path / "s", jobs=1)
    assert str(e.value) == named
    assert not (tmp_path / "s").exists()


def test_an_out_that_is_a_file_is_refused_naming_out(tmp_path):
    from ccscope.store import OutputError

    (tmp_path / "f").write_text("the user's")
    with pytest.raises(OutputError) as e:
        sweep.run_sweep("examples/aimd.toml", {"duration_s": [1]}, out=tmp_path / "f", jobs=1)
    assert str(e.value) == f"out {tmp_path / 'f'}: is a file, not a folder; give a folder name"
    assert (tmp_path / "f").read_text() == "the user's"
