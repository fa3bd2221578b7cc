"""`ccscope repro mtsc` never replaces a file in its figures folder that ccscope did not write: a same-named CSV
stops it before any run, with one error line and exit 2, and the file stays as it was."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ccscope.cli import app

REPO = Path(__file__).resolve().parents[2]
FOREIGN = b"a user's,table\r\n1,2\n"


def expected_error(d: Path, name: str) -> str:
    return f"error: figures folder {d}: {name} is there and ccscope did not write it; move it away first"


@pytest.mark.parametrize("part, name", [("traffic", "fig3_mechanism.csv"), ("sac", "sac_runs.csv"),
                                        ("all", "fig1_hurst.csv")])
def test_a_foreign_csv_in_the_figures_folder_stops_the_script_before_any_run(tmp_path, part, name):
    out, d = tmp_path / "mtsc.md", tmp_path / "mtsc"
    d.mkdir()
    (d / name).write_bytes(FOREIGN)
    res = subprocess.run([sys.executable, str(REPO / "experiments/mtsc/repro.py"), "-o", str(out), "--part", part,
                          "--seeds", "2", "--duration-s", "300", "--sac-seeds", "2", "--sac-duration-s", "20", "-q"],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.splitlines() == [expected_error(d, name)]
    assert res.stdout == ""
    assert (d / name).read_bytes() == FOREIGN
    assert not out.exists() and [p.name for p in d.iterdir()] == [name]


def test_the_cli_exits_2_with_one_error_line_for_a_foreign_csv(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)  # `ccscope repro` runs the experiments of the checkout it is started in
    out, d = tmp_path / "mtsc.md", tmp_path / "mtsc"
    d.mkdir()
    (d / "fig2_condprob.csv").write_bytes(FOREIGN)
    res = CliRunner().invoke(app, ["repro", "mtsc", "-o", str(out), "--part", "traffic", "--seeds", "2",
                                   "--duration-s", "300", "-q"])
    assert res.exit_code == 2
    assert expected_error(d, "fig2_condprob.csv") in res.output.splitlines()
    assert (d / "fig2_condprob.csv").read_bytes() == FOREIGN and not out.exists()
