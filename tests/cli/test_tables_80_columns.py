"""Every table the CLI prints stays readable in an 80-column terminal: no line wider than 80 characters
and no cell cut short with an ellipsis (long words fold onto the next line instead)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _ccscope(args: list, cwd: Path, stderr: bool = False) -> str:
    """The command's standard output (and its standard error after it, with `stderr`)."""
    env = {**os.environ, "COLUMNS": "80"}
    res = subprocess.run([sys.executable, "-m", "ccscope.cli", *map(str, args)], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout + res.stderr if stderr else res.stdout


def _assert_fits(text: str) -> None:
    assert text.strip(), "nothing printed"
    wide = [ln for ln in text.splitlines() if len(ln) > 80]
    assert not wide, "\n".join(wide)
    assert "\u2026" not in text, text


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("cols")
    _ccscope(["run", REPO / "examples/fixed.toml", "-o", d / "fixed", "--set", "duration_s=5"], d)
    _ccscope(["run", REPO / "examples/aimd.toml", "-o", d / "aimd", "--set", "duration_s=60"], d)
    return d


def test_run_table_fits_80_columns_with_every_header_whole(work):
    _assert_fits(_ccscope(["run", REPO / "examples/aimd.toml", "-o", work / "again", "--set", "duration_s=5"], work))


def test_controllers_tables_fit_80_columns_with_long_parameter_names_folded(work):
    _assert_fits(_ccscope(["controllers"], work))


def test_compare_table_and_notes_fit_80_columns(work):
    text = _ccscope(["compare", work / "fixed", work / "aimd", "-o", work / "cmp", "--formats", "svg"], work,
                    stderr=True)
    # The runs have no window trace, so compare explains how to record one.
    assert "note: " in text and "--cwnd" in text
    _assert_fits(text)


def test_sweep_table_fits_80_columns(work):
    _assert_fits(_ccscope(["sweep", REPO / "examples/fixed.toml", "--param", "flows.0.window=4,8", "--param",
                           "duration_s=5", "--seeds", "2", "-o", work / "sw", "--jobs", "1"], work))


def test_cmt_model_and_condprob_tables_fit_80_columns(work):
    _assert_fits(_ccscope(["cmt", "model", "--p", "0.01", "--b", "10", "--d", "100", "--rbuf", "128KB"], work))
    _assert_fits(_ccscope(["stats", "condprob", work / "aimd"], work))
