"""`ccscope repro mtsc` never replaces a file in its figures folder that ccscope did not write: a same-named CSV,
figure or SAC runs log stops it before any run, with one error line and exit 2, and the file stays as it was;
its own files are replaced and listed in the folder's manifest."""

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
                                        ("all", "fig1_hurst.csv"), ("sac", "sac_runs.jsonl"),
                                        ("traffic", "fig2_condprob.png"), ("sac", "fig17_nsac.png"),
                                        ("all", "fig9_10_threshold.png")])
def test_a_foreign_file_in_the_figures_folder_stops_the_script_before_any_run(tmp_path, part, name):
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


SAC = ["--part", "sac", "--figs", "14", "--sac-seeds", "2", "--first-seed", "11", "--sac-duration-s", "20", "--jobs", "1",
       "-q"]


def repro(out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "experiments/mtsc/repro.py"), "-o", str(out), *SAC, *extra],
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("mode", [[], ["--reuse"], ["--report-only"]])
def test_a_foreign_sac_runs_log_is_never_replaced_appended_to_or_read(tmp_path, mode):
    out, d = tmp_path / "mtsc.md", tmp_path / "mtsc"
    d.mkdir()
    (d / "sac_runs.jsonl").write_bytes(FOREIGN)
    res = repro(out, *mode)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.splitlines() == [expected_error(d, "sac_runs.jsonl")] and res.stdout == ""
    assert (d / "sac_runs.jsonl").read_bytes() == FOREIGN and not out.exists()


def manifest_files(d: Path) -> list:
    import json

    return json.loads((d / "ccscope-manifest.json").read_text())["files"]


def test_its_own_log_and_figures_are_replaced_on_a_fresh_run_and_kept_by_reuse(tmp_path):
    out, d = tmp_path / "mtsc.md", tmp_path / "mtsc"
    d.mkdir()
    (d / "notes.png").write_bytes(FOREIGN)  # a user's file of another name stays
    assert repro(out).returncode == 0
    own = ["fig9_10_threshold.png", "sac_runs.csv", "sac_runs.jsonl"]
    assert manifest_files(d) == own
    log = (d / "sac_runs.jsonl").read_bytes()
    n = len(log.splitlines())
    assert n == 16
    # ccscope's own files are replaced: the log starts again (not appended to), the figure is written anew.
    (d / "fig9_10_threshold.png").write_bytes(b"stale")
    (d / "sac_runs.jsonl").write_bytes(log + log[:log.index(b"\n") + 1])
    res = repro(out)
    assert res.returncode == 0, res.stderr
    assert len((d / "sac_runs.jsonl").read_bytes().splitlines()) == n
    assert (d / "fig9_10_threshold.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # --reuse keeps the log and runs nothing; --report-only reads it.
    res = repro(out, "--reuse")
    assert res.returncode == 0, res.stderr
    assert len((d / "sac_runs.jsonl").read_bytes().splitlines()) == n
    res = repro(out, "--report-only")
    assert res.returncode == 0 and f"{n} runs read from" in res.stdout
    assert manifest_files(d) == own and (d / "notes.png").read_bytes() == FOREIGN
