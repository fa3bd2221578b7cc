"""The console script's start-up path: a well-formed `ccscope run` runs without typer and pydantic,
takes its options exactly as the typer command declares them, and writes the same results folder and
prints the same lines as the full command line; anything else goes to the full command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from ccscope import entry
from ccscope.cli import app

SCRIPT = Path(sys.executable).parent / "ccscope"
FULL_CLI = [sys.executable, "-m", "ccscope.cli"]
KINDS = {"value", "int", "multiple", "flag"}


def _run_command() -> typer.core.TyperCommand:
    group = typer.main.get_command(app)
    return group.commands["run"]  # type: ignore[attr-defined]


def _typer_params(args: list) -> dict:
    """The parameters typer's own parser gives `ccscope run ARGS`."""
    ctx = _run_command().make_context("run", list(args))
    return dict(ctx.params)


def _with_defaults(kw: dict) -> dict:
    return {"seed": None, "sets": None, "packets": False, "cwnd": False, "plot": False, "overwrite": False, **kw}


def test_start_up_parser_declares_exactly_the_options_of_the_typer_run_command():
    declared, argument = {}, None
    for p in _run_command().params:
        if p.param_type_name == "argument":
            argument = p.name
            continue
        kind = "flag" if p.is_flag else "multiple" if p.multiple else "int" if p.name == "seed" else "value"
        for opt in [*p.opts, *p.secondary_opts]:
            declared[opt] = (p.name, kind)
    assert declared == entry.RUN_OPTIONS
    assert argument == entry.RUN_ARGUMENT
    assert {k for _, k in entry.RUN_OPTIONS.values()} == KINDS


@pytest.mark.parametrize("args", [
    ["s.toml", "-o", "out"],
    ["-o", "out", "s.toml"],
    ["s.toml", "--out=out", "--seed", "7"],
    ["s.toml", "--out", "a/b", "--seed=0012", "--set", "duration_s=5", "--set=flows.0.window=20"],
    ["s.toml", "-o", "out", "--packets", "--cwnd", "--plot", "--overwrite"],
    ["examples/datagrump.toml", "--overwrite", "-o", "x y"],
])
def test_start_up_parser_gives_the_parameters_typer_gives(args):
    want = _typer_params(args)
    got = _with_defaults(entry.parse_run(args))
    assert got["sets"] == (list(want["sets"]) if want["sets"] else None)
    assert {**got, "sets": None} == {**want, "sets": None}
    assert type(got["out"]) is type(want["out"]) and type(got["seed"]) is type(want["seed"])


@pytest.mark.parametrize("args", [
    [],
    ["s.toml"],  # no -o
    ["-o", "out"],  # no scenario
    ["s.toml", "-o", "out", "--help"],
    ["s.toml", "-o", "out", "extra.toml"],
    ["s.toml", "-o", "out", "--seed", "x"],
    ["s.toml", "-o", "out", "--seed", "-1"],
    ["s.toml", "-o", "out", "--seed", str(2**63)],  # beyond what a scenario file can hold
    ["s.toml", "-o", "out", "--seed", "1" * 5000],  # more digits than Python's int() reads
    ["s.toml", "-o", "out", "--seed", "1", "--seed", "2"],
    ["s.toml", "-o", "a", "-o", "b"],
    ["s.toml", "-oout"],
    ["s.toml", "-o", "--overwrite"],
    ["s.toml", "-o", ""],
    ["s.toml", "-o", "out", "--packets=yes"],
    ["s.toml", "-o", "out", "--packets", "--packets"],
    ["s.toml", "-o", "out", "--no-such-option"],
    ["s.toml", "-o", "out", "--"],
    ["s.toml", "-o"],
])
def test_start_up_parser_leaves_every_other_argument_list_to_the_full_command_line(args):
    assert entry.parse_run(args) is None


def _loaded_by_script(args: list, cwd: Path) -> tuple:
    probe = ("import sys, json\nfrom ccscope import entry\n"
             f"sys.argv = ['ccscope', *{args!r}]\n"
             "try:\n    entry.main()\nexcept SystemExit as e:\n    code = e.code\nelse:\n    code = 0\n"
             "print(json.dumps([code, [m for m in ('typer', 'pydantic', 'click', 'ccscope.cli') if m in sys.modules]]),"
             " file=sys.stderr)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=cwd)
    return tuple(json.loads(out.stderr.strip().splitlines()[-1]))


def test_console_script_runs_a_scenario_without_importing_typer_pydantic_or_the_full_cli(tmp_path):
    code, loaded = _loaded_by_script(["run", "examples/datagrump.toml", "--set", "duration_s=5", "-o", "res"], tmp_path)
    assert (code, loaded) == (0, [])
    assert (tmp_path / "res" / "provenance.json").is_file()


def test_console_script_hands_help_to_the_full_command_line(tmp_path):
    code, loaded = _loaded_by_script(["run", "--help"], tmp_path)
    assert code == 0 and "typer" in loaded and "ccscope.cli" in loaded


def test_start_up_path_writes_the_folder_and_prints_the_lines_of_the_full_command_line(tmp_path):
    args = ["run", "examples/datagrump.toml", "--set", "duration_s=10", "--seed", "3", "--cwnd"]
    fast = subprocess.run([str(SCRIPT), *args, "-o", "fast"], capture_output=True, text=True, cwd=tmp_path)
    full = subprocess.run([*FULL_CLI, *args, "-o", "full"], capture_output=True, text=True, cwd=tmp_path)
    assert fast.returncode == full.returncode == 0, fast.stderr + full.stderr
    assert fast.stdout.replace("fast", "full") == full.stdout and fast.stderr == full.stderr == ""
    for name in ("summary.json", "scenario.toml", "flows.parquet", "timeseries.parquet", "cwnd.parquet"):
        assert (tmp_path / "fast" / name).read_bytes() == (tmp_path / "full" / name).read_bytes(), name
    prov = [json.loads((tmp_path / d / "provenance.json").read_text()) for d in ("fast", "full")]
    assert prov[0] == prov[1] and prov[0]["seed"] == 3 and prov[0]["ccscope"]


def test_start_up_path_reports_bad_input_as_the_full_command_line_does(tmp_path):
    (tmp_path / "bad.toml").write_text("duration_s = 1\n[data_link]\nrate_mbps = 0\n")
    args = ["run", "bad.toml", "-o", "res"]
    fast = subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, cwd=tmp_path)
    full = subprocess.run([*FULL_CLI, *args], capture_output=True, text=True, cwd=tmp_path)
    assert fast.returncode == full.returncode == 2
    assert fast.stderr == full.stderr and fast.stderr.startswith("error: ") and len(fast.stderr.splitlines()) == 1
    assert not (tmp_path / "res").exists()
