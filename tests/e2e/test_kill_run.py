"""kill -9 of `ccscope run` at random moments, most of them during its final write: the results
folder is left in its old state or its new one (never a mix, never without the user's file), and a
rerun leaves no temporary file behind and writes the same tables as a run never interrupted."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from ccscope import api, store

# 100 Mbit/s for 15 s with the packet log: a few MB of Parquet, about half a second of writing.
SCENARIO = """\
name = "kill"
seed = 1
duration_s = 15

[data_link]
rate_mbps = 100
delay_ms = 10

[ack_link]
rate_mbps = 100
delay_ms = 10

[[flows]]
controller = "fixed"
window = 300
"""

TABLES = ("flows.parquet", "timeseries.parquet", "packets.parquet")


def ccscope_exe() -> str:
    exe = shutil.which("ccscope", path=os.path.dirname(sys.executable)) or shutil.which("ccscope")
    assert exe, "the ccscope console script is not installed"
    return exe


def command(scenario: Path, out: Path, window: int) -> list:
    return [ccscope_exe(), "run", str(scenario), "-o", str(out), "--set", f"flows.0.window={window}", "--packets"]


def tables(folder: Path) -> dict:
    r = api.load_result(folder)  # finishes a committed write first, as every reader does
    return {"summary": r.summary, "flows": r.flows, "timeseries": r.timeseries, "packets": r.packets}


def same(a: dict, b: dict) -> bool:
    try:
        assert a["summary"] == b["summary"]
        for k in ("flows", "timeseries", "packets"):
            pd.testing.assert_frame_equal(a[k], b[k])
    except AssertionError:
        return False
    return True


def leftovers(*folders: Path) -> list:
    return [p for d in folders if d.is_dir() for p in d.iterdir() if p.name.startswith((store.TMP_PREFIX, store.COMMIT))]


def kill_at(cmd: list, moment, rng: random.Random) -> str:
    """Start `cmd` and kill -9 it when `moment(proc)` says so; returns where it was killed."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        where = moment(proc, rng)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=120)
    return where


def during_write(out: Path):
    """Wait for the final write to start (summary.json staged), then a random part of a second."""

    def moment(proc, rng):
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            staged = [p for p in out.parent.glob(f"{store.TMP_PREFIX}*")] + [p for p in out.glob(f"{store.TMP_PREFIX}*")]
            if any((p / "summary.json").exists() for p in staged if p.is_dir()) or (out / store.COMMIT).exists():
                delay = rng.uniform(0.0, 0.8)
                time.sleep(delay)
                return f"write+{delay:.3f}s"
            time.sleep(0.001)
        return "finished"

    return moment


def at_random(total_s: float):
    def moment(proc, rng):
        delay = rng.uniform(0.0, total_s)
        time.sleep(delay)
        return f"{delay:.3f}s"

    return moment


@pytest.mark.parametrize("fresh", [False, True], ids=["over-old-results", "new-folder"])
def test_kill_9_during_run_leaves_old_or_new_and_the_rerun_matches(tmp_path, fresh):
    rng = random.Random(20261124 + fresh)
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    ref = tmp_path / "ref"
    t0 = time.monotonic()
    subprocess.run(command(scenario, ref, 300), check=True, capture_output=True, timeout=300)
    total_s = time.monotonic() - t0
    new = tables(ref)
    old_dir = tmp_path / "old"
    subprocess.run(command(scenario, old_dir, 100), check=True, capture_output=True, timeout=300)
    old = tables(old_dir)
    assert not same(old, new)

    work = tmp_path / "work"
    work.mkdir()
    out = work / "res"
    seen = []
    trials = 4 if fresh else 6
    for trial in range(trials):
        # The old state: nothing (a new folder) or the results of another window with a user's file in it.
        if out.exists():
            shutil.rmtree(out)
        if not fresh:
            shutil.copytree(old_dir, out)
            (out / "notes.txt").write_text("the user's")
        moment = during_write(out) if trial != 2 else at_random(total_s)
        seen.append(kill_at(command(scenario, out, 300), moment, rng))
        # Right after the kill: the old state or the new, nothing in between.
        if fresh and not out.exists():
            state = "old"
        else:
            now = tables(out)
            state = "new" if same(now, new) else "old" if same(now, old) else "mixed"
        assert state != "mixed", seen[-1]
        if not fresh:
            assert (out / "notes.txt").read_text() == "the user's"
        # The rerun: no leftovers anywhere, and the tables of an uninterrupted run, bit for bit.
        subprocess.run(command(scenario, out, 300), check=True, capture_output=True, timeout=300)
        assert leftovers(work, out) == [], seen[-1]
        assert same(tables(out), new)
        for name in TABLES:
            assert (out / name).read_bytes() == (ref / name).read_bytes(), name
        seen[-1] += f" -> {state}"
    print("kills:", seen)
    # The kills did land in the write (a test that never interrupts a write proves nothing).
    assert sum(s.startswith("write+") for s in seen) >= trials - 2, seen
