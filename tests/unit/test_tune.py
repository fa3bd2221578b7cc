"""Tuning: the search space syntax, the objective, and a study that resumes the trials a kill left running."""

from __future__ import annotations

import math

import pytest

from ccscope import grid, tune
from ccscope._native import ScenarioError
from ccscope.grid import Choice, Interval


def test_space_reads_integer_float_log_step_and_choice_dimensions():
    space = grid.parse_space(["a=1:10", "b=0.01:1", "c=0.001:1:log", "d=0:1:0.25", "e=aimd,cubic"])
    assert space == {"a": Interval(1, 10), "b": Interval(0.01, 1), "c": Interval(0.001, 1, log=True),
                     "d": Interval(0, 1, step=0.25), "e": Choice(("aimd", "cubic"))}
    assert space["a"].integer and not space["b"].integer and not space["d"].integer


@pytest.mark.parametrize("item", ["a=5:1", "a=0:1:log", "a=1:2:-1", "a=1:2:x", "seed=1:2", "a"])
def test_bad_space_names_the_option_and_item(item):
    with pytest.raises(ScenarioError) as e:
        grid.parse_space([item])
    assert str(e.value).startswith(f"--param {item}:")


def test_objective_negates_with_a_leading_minus_and_is_nan_when_a_run_has_no_value():
    obj = tune.Objective.parse("-signal_delay_p95_ms")
    assert obj.of([{"signal_delay_p95_ms": 100.0}, {"signal_delay_p95_ms": 200.0}]) == -150.0
    assert math.isnan(obj.of([{"signal_delay_p95_ms": None}]))
    with pytest.raises(ValueError, match="--objective goodness"):
        tune.Objective.parse("goodness")


def test_traces_take_a_down_and_an_optional_up_trace():
    assert tune.parse_traces("--traces-tune", "a.down, b.down+b.up") == [
        ("a.down", {"data_link.trace": "a.down"}),
        ("b.down+b.up", {"data_link.trace": "b.down", "ack_link.trace": "b.up"}),
    ]
    assert tune.parse_traces("--traces-tune", None) == []
    with pytest.raises(ValueError, match="--traces-report b.down\\+"):
        tune.parse_traces("--traces-report", "b.down+")


def test_a_trial_left_running_by_a_kill_is_asked_again_with_its_parameters(tmp_path):
    study = tune._open_study(tmp_path, "spec", "maximize")
    done = study.ask()
    x_done = done.suggest_float("x", 0, 1)
    study.tell(done, 1.0)
    killed = study.ask()
    x_killed = killed.suggest_float("x", 0, 1)  # running when the process died

    again = tune._open_study(tmp_path, "spec", "maximize")
    assert tune._done(again) == 1
    t = again.ask()
    assert t.suggest_float("x", 0, 1) == x_killed != x_done


def test_a_folder_holding_another_study_is_refused(tmp_path):
    tune._open_study(tmp_path, "spec one", "maximize")
    with pytest.raises(ValueError) as e:
        tune._open_study(tmp_path, "spec two", "maximize")
    assert str(e.value).startswith(f"out {tmp_path}: holds a study of another tuning")  # the argument, not -o


SPACE = {"flows.0.window": Interval(2, 20)}


@pytest.mark.parametrize("kwargs,named", [
    (dict(trials=0), "trials=0: need at least one trial"),
    (dict(seeds=0), "seeds=0: need at least one seed"),
    (dict(batch=0), "batch=0: need at least one trial per batch"),
    (dict(space={}), "space: give at least one parameter to tune"),
    (dict(trials=10**9), "trials=1000000000: 1000000002 runs, more than the limit of "),
])
def test_a_bad_argument_of_tune_names_the_python_argument_before_any_run(tmp_path, kwargs, named):
    # The Python API names its own arguments; `ccscope tune` names its options (tests/cli/test_bad_inputs.py).
    args = {**dict(space=SPACE, trials=2, seeds=1, batch=4), **kwargs}
    with pytest.raises(ValueError) as e:
        tune.tune("examples/fixed.toml", args.pop("space"), tune.Objective.parse("score"), out=tmp_path / "t",
                  jobs=1, **args)
    assert str(e.value).startswith(named) and "--" not in str(e.value)
    assert not (tmp_path / "t").exists()


def test_an_out_that_is_a_file_is_refused_naming_out(tmp_path):
    from ccscope.store import OutputError

    (tmp_path / "f").write_text("the user's")
    with pytest.raises(OutputError) as e:
        tune.tune("examples/fixed.toml", SPACE, tune.Objective.parse("score"), 2, tmp_path / "f", jobs=1)
    assert str(e.value) == f"out {tmp_path / 'f'}: is a file, not a folder; give a folder name"
    assert (tmp_path / "f").read_text() == "the user's"

