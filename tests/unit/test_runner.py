"""The shared runner of the reproductions (ccscope.runner): results in the order of the work whatever the
pool does, the same on one process as on several, errors raised in the caller, no bar when quiet."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ccscope import _native, api
from ccscope.runner import Runner, run_all


def _square_slow_first(x: int) -> tuple[int, int]:
    # Early items take longest, so a pool finishes them last.
    import time

    time.sleep(0.02 * (5 - x) if x < 5 else 0)
    return x * x, os.getpid()


def _summary(window: int) -> dict:
    return api.run("examples/fixed.toml", overrides={"flows.0.window": window, "duration_s": 5}).summary


def _boom(x: int) -> int:
    if x == 3:
        raise ValueError("three is bad")
    return x


def test_results_come_back_in_the_works_order_from_a_pool():
    out = run_all(_square_slow_first, list(range(8)), jobs=2, quiet=True)
    assert [v for v, _ in out] == [x * x for x in range(8)]
    assert len({pid for _, pid in out} - {os.getpid()}) >= 1  # ran in worker processes


def test_start_order_does_not_change_the_result_order():
    with Runner(2, quiet=True) as r:
        out = r.map(_square_slow_first, list(range(6)), order=[5, 4, 3, 2, 1, 0])
    assert [v for v, _ in out] == [0, 1, 4, 9, 16, 25]


def test_one_job_runs_in_this_process():
    out = run_all(_square_slow_first, [1, 2], jobs=1, quiet=True)
    assert {pid for _, pid in out} == {os.getpid()}


def test_simulations_are_bit_identical_on_one_process_and_on_two():
    windows = [3, 7, 12, 20]
    assert run_all(_summary, windows, jobs=1, quiet=True) == run_all(_summary, windows, jobs=2, quiet=True)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_workers_exception_reaches_the_caller(jobs):
    with pytest.raises(ValueError, match="three is bad"):
        run_all(_boom, [1, 2, 3, 4], jobs=jobs, quiet=True)


def _bad_scenario(x: int) -> dict:
    return api.run("examples/fixed.toml", overrides={"bin_ms": 1e-6} if x == 1 else {"duration_s": 1}).summary


def test_a_scenario_error_in_a_worker_reaches_the_caller_as_itself():
    # The native exception classes must pickle to cross the process boundary (they live in ccscope._native).
    with pytest.raises(_native.ScenarioError, match="bin_ms"):
        run_all(_bad_scenario, [0, 1], jobs=2, quiet=True)


def test_a_bad_order_or_job_count_is_refused():
    with pytest.raises(ValueError, match="permutation"):
        with Runner(1, quiet=True) as r:
            r.map(_boom, [1, 2], order=[0, 0])
    with pytest.raises(ValueError, match="--jobs 0"):
        Runner(0)


def test_quiet_runner_draws_no_bar(capsys):
    run_all(_boom, [1, 2], jobs=1, quiet=True)
    assert capsys.readouterr().err == ""


def test_runner_draws_nothing_when_stderr_is_not_a_terminal(capsys):
    run_all(_square_slow_first, [1, 2], jobs=1, quiet=False)
    assert capsys.readouterr().err == ""


def test_ctrl_c_in_the_caller_stops_a_one_process_run_at_once():
    ran = []

    def job(i):
        ran.append(i)
        if i == 0:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        with Runner(1, quiet=True) as r:
            for i in range(3):
                r.submit(job, i)
    assert ran == [0]


def test_a_pool_of_more_workers_than_four_per_core_is_refused_before_any_starts():
    from ccscope.cluster import open_client
    from ccscope.runner import max_jobs

    assert max_jobs() == 4 * (os.cpu_count() or 1)
    with pytest.raises(ValueError, match=r"^--jobs 100000: more than"):
        Runner(jobs=100_000)
    with pytest.raises(ValueError, match=r"^--jobs 100000: more than"):
        with open_client(jobs=100_000):
            pass


def test_a_reproductions_jobs_beyond_four_per_core_are_refused_as_its_options_are_read(tmp_path, capsys):
    import argparse

    from ccscope.experiment import add_runner_options
    from ccscope.runner import max_jobs

    ap = argparse.ArgumentParser(prog="repro.py")
    add_runner_options(ap)
    assert ap.parse_args(["--jobs", str(max_jobs())]).jobs == max_jobs()
    with pytest.raises(SystemExit) as e:
        ap.parse_args(["--jobs", "100000"])
    assert e.value.code == 2
    assert "argument --jobs: 100000: more than" in capsys.readouterr().err
    # mtsc's reproduction met the pool only inside its runs: a traceback, exit 1, and its data folder made.
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, str(repo / "experiments/mtsc/repro.py"), "--jobs", "100000",
                          "-o", str(tmp_path / "r.md")], capture_output=True, text=True, cwd=repo)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr[-2000:]
    assert "more than" in out.stderr.splitlines()[-1]
    assert list(tmp_path.iterdir()) == []
