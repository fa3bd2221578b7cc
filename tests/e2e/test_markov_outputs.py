"""`ccscope repro markov` never replaces a file in its figures folders that ccscope did not write: a same-named
figure in markov/ or markov_fast_links/, or a companion report it did not write, stops it before any run with
one error line and exit 2, and the file stays as it was. The traces are placeholders: nothing runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FOREIGN = b"\x89PNG\r\n\x1a\n a user's picture"


def repro(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    traces = tmp_path / "traces"
    traces.mkdir(exist_ok=True)
    for name in ("a.up", "b.down"):
        (traces / name).write_text("1\n")
    return subprocess.run([sys.executable, str(REPO / "experiments/markov/repro.py"), "-o", str(tmp_path / "markov.md"),
                           "--traces", str(traces), "--train", "a.up", "--eval", "b.down", "--seeds", "1",
                           "--seconds", "10", "--jobs", "1", "-q", *extra], capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("folder, name", [("markov", "fig7_nonmatching.png"), ("markov", "fig5_heatmap_1ms.png"),
                                          ("markov", "fig12_onoff_per_user.png"),
                                          ("markov_fast_links", "fig10_combined.png")])
def test_a_foreign_figure_stops_the_script_before_any_run(tmp_path, folder, name):
    d = tmp_path / folder
    d.mkdir()
    (d / name).write_bytes(FOREIGN)
    res = repro(tmp_path)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.splitlines() == [
        f"error: figures folder {d}: {name} is there and ccscope did not write it; move it away first"]
    assert (d / name).read_bytes() == FOREIGN
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["traces", folder])
    assert [p.name for p in d.iterdir()] == [name]


def test_a_companion_report_it_did_not_write_stops_the_script_before_any_run(tmp_path):
    notes = tmp_path / "markov_fast_links.md"
    notes.write_text("# my notes\n")
    res = repro(tmp_path)
    assert res.returncode == 2, res.stdout + res.stderr
    assert len(res.stderr.splitlines()) == 1 and f"{notes}: the file is there and is not a report" in res.stderr
    assert notes.read_text() == "# my notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["markov_fast_links.md", "traces"]


def test_without_the_companion_run_its_files_are_not_checked(tmp_path):
    # --no-fast-links writes nothing there, so a user's file of that name is no reason to stop: it runs (and
    # then fails on the placeholder traces, past the check).
    notes = tmp_path / "markov_fast_links.md"
    notes.write_text("# my notes\n")
    res = repro(tmp_path, "--no-fast-links")
    assert "markov_fast_links" not in res.stderr
    assert notes.read_text() == "# my notes\n"


def test_its_own_figures_are_listed_in_the_manifest_and_replaced_by_a_rerun_beside_a_users_file(tmp_path):
    import json

    d = tmp_path / "markov"
    d.mkdir()
    (d / "notes.txt").write_text("mine")  # a user's file of another name: kept, never listed
    for _ in range(2):
        res = repro(tmp_path, "--no-fast-links")
        assert res.returncode == 0, res.stdout + res.stderr
    listed = json.loads((d / "ccscope-manifest.json").read_text())["files"]
    assert listed == sorted(p.name for p in d.glob("*.png")) and "fig5_heatmap_1ms.png" in listed
    assert (d / "notes.txt").read_text() == "mine"
