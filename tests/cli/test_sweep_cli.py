"""`ccscope sweep` and `ccscope tune`: tables written, input errors exit 2 with one line and no table, and
the dask cluster's processes: killed workers lose nothing, a killed sweep leaves no worker behind."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest
from typer.testing import CliRunner

from ccscope.cli import app

runner = CliRunner()
CCSCOPE = [sys.executable, "-m", "ccscope.cli"]
# Long enough per point (constant_rate: 4 AIMD flows at 12 Mbit/s) that a kill lands mid-sweep.
# Points long enough (~0.5-1 s of simulation each on an idle machine) that a kill after 5 of 8 comes
# before the last finishes; at 60 s an idle machine finished all 8 within one poll.
SLOW = ["examples/constant_rate.toml", "--param", "data_link.rate_mbps=4:11", "--param", "duration_s=2000"]


def _wait_for(cond, timeout_s: float, what: str) -> None:
    end = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > end:
            pytest.fail(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.1)


def _points(out: Path) -> int:
    return len(list((out / "points").glob("*.json"))) if (out / "points").exists() else 0


def _stop(procs) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait(timeout=30)


def test_sweep_writes_a_row_per_grid_point(tmp_path):
    args = ["sweep", "examples/fixed.toml", "--param", "flows.0.window=1,12", "--param", "duration_s=5", "--seeds", "1",
            "-o", str(tmp_path), "-j", "1"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    df = pd.read_parquet(tmp_path / "sweep.parquet")
    assert len(df) == 2
    assert list(df["flows.0.window"]) == [1, 12]
    assert df.loc[1, "throughput_mbps"] > df.loc[0, "throughput_mbps"]
    assert "2 runs simulated, 0 loaded" in res.stdout


def test_seeds_without_randomness_print_one_warning_and_quiet_prints_no_table(tmp_path):
    args = ["sweep", "examples/fixed.toml", "--param", "flows.0.window=2:3", "--param", "duration_s=2", "--seeds", "5",
            "-o", str(tmp_path), "-j", "1", "--quiet"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    warnings = [line for line in res.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "ran seed 1 only" in warnings[0]
    assert "sweep (" not in res.stdout and res.stdout.strip().startswith("wrote")
    assert list(pd.read_parquet(tmp_path / "sweep.parquet")["seed"]) == [1, 1]


def test_seeds_with_random_loss_print_mean_and_ci(tmp_path):
    args = ["sweep", "examples/red_lossy.toml", "--param", "duration_s=2", "--seeds", "3", "-o", str(tmp_path), "-j", "1"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "95% CI" in res.stdout and "±" in res.stdout
    assert pd.read_parquet(tmp_path / "summary.parquet").loc[0, "seeds"] == 3


@pytest.mark.parametrize("param, shown", [
    ("flows.0.window=1,-1", "flows.0.window"), ("flows.0.window", "--param flows.0.window"),
    ("flows.0.window=9:1", "--param flows.0.window=9:1"), ("flows.0.window=logspace(0,1)", "logspace"),
    ("flows.0.window=1:b:2", '"1:b:2"'),  # printed as typed, not as an emoji code
])
def test_bad_param_exits_2_with_one_error_line(tmp_path, param, shown):
    res = runner.invoke(app, ["sweep", "examples/fixed.toml", "--param", param, "-o", str(tmp_path / "out"), "-j", "1"])
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and shown in lines[0]
    assert not (tmp_path / "out").exists()


def test_unreachable_scheduler_exits_2_naming_the_option(tmp_path):
    res = runner.invoke(app, ["sweep", "examples/fixed.toml", "--param", "duration_s=1", "--scheduler",
                              "tcp://127.0.0.1:9", "-o", str(tmp_path / "out")])
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --scheduler tcp://127.0.0.1:9: cannot connect")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("after", [1, 5])
def test_kill_9_of_a_sweep_leaves_no_worker_and_the_rerun_matches_an_uninterrupted_run(tmp_path, after):
    out = tmp_path / "killed"
    proc = subprocess.Popen([*CCSCOPE, "sweep", *SLOW, "-j", "2", "-o", str(out), "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers = []
    try:
        _wait_for(lambda: _points(out) >= after, 120, f"{after} points")
        workers = psutil.Process(proc.pid).children(recursive=True)
        assert len(workers) >= 2
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        _, alive = psutil.wait_procs(workers, timeout=30)
        assert not alive, f"orphaned worker processes: {[p.pid for p in alive]}"
    finally:
        _stop([proc])
        for p in workers:
            if p.is_running():
                p.kill()
    assert _points(out) < 8 and not (out / "sweep.parquet").exists()
    again = subprocess.run([*CCSCOPE, "sweep", *SLOW, "-j", "2", "-o", str(out), "--quiet"], capture_output=True,
                           text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    fresh = subprocess.run([*CCSCOPE, "sweep", *SLOW, "-j", "2", "-o", str(tmp_path / "fresh"), "--quiet"],
                           capture_output=True, text=True, timeout=300)
    assert fresh.returncode == 0, fresh.stderr
    pd.testing.assert_frame_equal(pd.read_parquet(out / "sweep.parquet"), pd.read_parquet(tmp_path / "fresh" / "sweep.parquet"))
    assert not [p for p in out.rglob("*") if p.name.startswith(".")]  # no temporary file left


def test_a_worker_killed_mid_sweep_on_a_real_scheduler_loses_and_repeats_nothing(tmp_path):
    sched_file = tmp_path / "scheduler.json"
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", "0", "--no-dashboard", "--scheduler-file", str(sched_file)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        _wait_for(sched_file.exists, 60, "the scheduler")
        address = json.loads(sched_file.read_text())["address"]
        worker = [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--no-nanny",
                  "--no-dashboard", "--death-timeout", "60"]
        workers = [subprocess.Popen(worker, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(2)]
        procs += workers
        out = tmp_path / "cluster"
        sweep = subprocess.Popen([*CCSCOPE, "sweep", *SLOW, "--scheduler", address, "-o", str(out)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(sweep)
        _wait_for(lambda: _points(out) >= 2, 120, "two points")
        workers[0].send_signal(signal.SIGKILL)
        assert _points(out) < 8  # killed mid-sweep: both workers had a point to run
        stdout, stderr = sweep.communicate(timeout=300)
        assert sweep.returncode == 0, stderr
        assert "8 runs simulated, 0 loaded" in stdout
    finally:
        _stop(reversed(procs))
    local = subprocess.run([*CCSCOPE, "sweep", *SLOW, "-j", "2", "-o", str(tmp_path / "local"), "--quiet"],
                           capture_output=True, text=True, timeout=300)
    assert local.returncode == 0, local.stderr
    pd.testing.assert_frame_equal(pd.read_parquet(out / "sweep.parquet"), pd.read_parquet(tmp_path / "local" / "sweep.parquet"))
    assert _points(out) == 8


def test_tune_finds_a_better_window_than_the_default_and_reports_held_out_traces(tmp_path):
    # A 12-packets-per-12-ms link: the fixed window of 1 the scenario starts from is far from the best.
    for name, step in (("a.trace", 1), ("b.trace", 1), ("c.trace", 2)):
        (tmp_path / name).write_text("".join(f"{t}\n" for t in range(1, 2001, step)))
    (tmp_path / "s.toml").write_text(
        'duration_s = 2\nseed = 1\n[data_link]\ntrace = "a.trace"\ndelay_ms = 10\n[ack_link]\nrate_mbps = 12\n'
        'delay_ms = 10\n[[flows]]\ncontroller = "fixed"\nwindow = 1\n')
    args = ["tune", str(tmp_path / "s.toml"), "--param", "flows.0.window=1:40", "--objective", "throughput_mbps",
            "--trials", "6", "--traces-tune", "a.trace,b.trace", "--traces-report", "c.trace", "-o",
            str(tmp_path / "study"), "-j", "1", "--quiet"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    best = json.loads((tmp_path / "study" / "best.json").read_text())
    table = pd.read_parquet(tmp_path / "study" / "tune.parquet")
    assert list(table["set"]) == ["tune"] * 4 + ["held-out"] * 2
    assert list(table["params"]) == ["default", "tuned"] * 3
    for _, pair in table.groupby("trace", sort=False):
        assert pair["throughput_mbps"].iloc[1] > 2 * pair["throughput_mbps"].iloc[0]
    assert best["trials"] == 6 and best["params"]["flows.0.window"] > 1

    # The study resumes: asking for 8 trials runs 2 more, and the first 6 are as before.
    trials_before = best["trials"]
    res = runner.invoke(app, [*args[:args.index("--trials") + 1], "8", *args[args.index("--trials") + 2:]])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "study" / "best.json").read_text())["trials"] == trials_before + 2

    # An edited tuning trace makes the stored trials another study's: refused, nothing changed.
    (tmp_path / "a.trace").write_text("".join(f"{t}\n" for t in range(1, 2001, 3)))
    db = (tmp_path / "study" / "study.db").read_bytes()
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and "holds a study of another tuning" in res.stderr
    assert (tmp_path / "study" / "study.db").read_bytes() == db


def test_tune_is_deterministic_for_a_seed(tmp_path):
    (tmp_path / "a.trace").write_text("".join(f"{t}\n" for t in range(1, 1001)))
    (tmp_path / "s.toml").write_text(
        'duration_s = 1\n[data_link]\ntrace = "a.trace"\ndelay_ms = 10\n[ack_link]\nrate_mbps = 12\ndelay_ms = 10\n'
        '[[flows]]\ncontroller = "fixed"\nwindow = 1\n')

    def study(name):
        import optuna

        res = runner.invoke(app, ["tune", str(tmp_path / "s.toml"), "--param", "flows.0.window=1:40", "--trials", "5",
                                  "--objective", "-signal_delay_p95_ms", "-o", str(tmp_path / name), "-j", "1", "-q"])
        assert res.exit_code == 0, res.output
        s = optuna.load_study(study_name="ccscope-tune", storage=f"sqlite:///{tmp_path / name / 'study.db'}")
        return [t.params for t in s.trials]

    assert study("one") == study("two")


@pytest.mark.parametrize("extra, option", [
    (["--objective", "goodness"], "--objective goodness"),
    (["--param", "flows.0.window=5:1"], "--param flows.0.window=5:1"),
    (["--traces-tune", "nonexistent.trace"], "nonexistent.trace"),
    (["--trials", "0"], "--trials 0"),
    (["--direction", "up"], "--direction up"),
])
def test_tune_bad_input_exits_2_with_one_line(tmp_path, extra, option):
    args = ["tune", "examples/fixed.toml", "--param", "flows.0.window=1:4", "--trials", "2", "-o", str(tmp_path / "s"),
            "-j", "1", "-q", *extra]
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and option in lines[0]
    assert not (tmp_path / "s").exists()


def test_a_tuning_killed_mid_batch_resumes_to_the_same_trials_as_one_never_killed(tmp_path):
    import optuna

    (tmp_path / "a.trace").write_text("".join(f"{t}\n" for t in range(1, 1001)))
    # A fixed window that takes a second of wall time to start: the kill lands while a batch runs.
    (tmp_path / "slow.py").write_text("import time\nfrom ccscope import Controller\n\n\nclass Slow(Controller):\n"
                                      "    def __init__(self, window=1, **kw):\n        time.sleep(1.0)\n"
                                      "        self.cwnd = window\n")
    (tmp_path / "s.toml").write_text(
        'duration_s = 5\n[data_link]\ntrace = "a.trace"\ndelay_ms = 10\n[ack_link]\nrate_mbps = 12\ndelay_ms = 10\n'
        '[[flows]]\ncontroller = "python"\nclass = "slow.py:Slow"\nwindow = 1\n')

    def cmd(name):
        return [*CCSCOPE, "tune", str(tmp_path / "s.toml"), "--param", "flows.0.window=1:60", "--trials", "8",
                "--objective", "score", "-o", str(tmp_path / name), "-j", "1", "-q"]

    def complete(name):
        s = optuna.load_study(study_name="ccscope-tune", storage=f"sqlite:///{tmp_path / name / 'study.db'}")
        return [(t.params, t.value) for t in s.trials if t.state == optuna.trial.TrialState.COMPLETE]

    proc = subprocess.Popen(cmd("killed"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(lambda: _points(tmp_path / "killed") >= 5, 120, "a point of the second batch")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        at_kill = _points(tmp_path / "killed")
    finally:
        _stop([proc])
    assert len(complete("killed")) == 4, "the first batch was recorded, the second was running"
    for name in ("killed", "whole"):
        done = subprocess.run(cmd(name), capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    assert complete("killed") == complete("whole")
    assert len(complete("whole")) == 8
    assert at_kill < _points(tmp_path / "whole")  # the second batch had runs left when it was killed
