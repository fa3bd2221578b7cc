"""experiments/ns3/cwnd.py never replaces a file beside its figure that ccscope did not write: a same-named CSV or
figure stops it before any run (or any ns-3 build), with one error line and exit 2, and the file stays as it was;
its own files are replaced and listed in the folder's manifest, and the folder's other documents are left alone.
No ns-3 needed: `--ns3-csv-dir` reads small synthetic ns-3 traces."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "experiments" / "ns3" / "cwnd.py"
FOREIGN = b"a user's,table\r\n1,2\n"
CCSCOPE = [f"ccscope_{ctl}_{stack}.csv" for ctl in ("cubic", "newreno", "bbr") for stack in ("rfc", "linux")]
NS3 = [f"ns3_{tcp}.csv" for tcp in ("cubic", "newreno", "bbr")]


def expected_error(d: Path, name: str) -> str:
    return f"error: figures folder {d}: {name} is there and ccscope did not write it; move it away first"


def ns3_csvs(d: Path) -> Path:
    d.mkdir()
    for name in NS3:
        (d / name).write_text("time_s,cwnd_packets\r\n1.000000,10.000\r\n1.500000,20.000\r\n")
    return d


def draw(out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "-o", str(out), "--sim-s", "2", *extra],
                          capture_output=True, text=True, timeout=600)


def manifest_files(d: Path) -> list:
    return json.loads((d / "ccscope-manifest.json").read_text())["files"]


@pytest.mark.parametrize("name", ["cwnd.png", "cwnd.svg", "ccscope_cubic_rfc.csv", "ccscope_bbr_linux.csv"])
def test_a_foreign_file_named_like_an_output_stops_the_script_before_any_run(tmp_path, name):
    d = tmp_path / "ns3"
    d.mkdir()
    (d / name).write_bytes(FOREIGN)
    res = draw(d / "cwnd.png", "--ns3-csv-dir", str(ns3_csvs(tmp_path / "in")))
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.splitlines() == [expected_error(d, name)] and res.stdout == ""
    assert (d / name).read_bytes() == FOREIGN
    assert [p.name for p in d.iterdir()] == [name]


def test_a_foreign_ns3_trace_stops_a_recording_run_before_ns3_is_built(tmp_path):
    # Recording writes ns3_<tcp>.csv too; the check comes before the tracer is built (no ns-3 needed here).
    d = tmp_path / "ns3"
    d.mkdir()
    (d / "ns3_newreno.csv").write_bytes(FOREIGN)
    res = draw(d / "cwnd.png", "--ns3-source", str(tmp_path / "missing.cc"))
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.splitlines() == [expected_error(d, "ns3_newreno.csv")]
    assert (d / "ns3_newreno.csv").read_bytes() == FOREIGN and [p.name for p in d.iterdir()] == ["ns3_newreno.csv"]


def test_its_own_files_are_listed_and_replaced_and_other_documents_left_alone(tmp_path):
    d, src = tmp_path / "ns3", ns3_csvs(tmp_path / "in")
    d.mkdir()
    (d / "notes.md").write_bytes(FOREIGN)  # another document of the folder
    assert draw(d / "cwnd.png", "--ns3-csv-dir", str(src)).returncode == 0
    own = sorted(CCSCOPE + ["cwnd.png", "cwnd.svg"])
    assert manifest_files(d) == own
    (d / "cwnd.png").write_bytes(b"stale")
    res = draw(d / "cwnd.png", "--ns3-csv-dir", str(src))
    assert res.returncode == 0, res.stderr
    assert (d / "cwnd.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert manifest_files(d) == own and (d / "notes.md").read_bytes() == FOREIGN


def test_the_committed_folders_manifest_lists_exactly_the_files_a_recording_run_writes():
    d = REPO / "docs" / "ns3"
    own = sorted(CCSCOPE + NS3 + ["cwnd.png", "cwnd.svg"])
    assert manifest_files(d) == own
    assert all((d / name).is_file() for name in own)


def fake_tracer(path: Path, fails_for: str) -> Path:
    """A stand-in for the ns-3 tracer: prints a few `cwnd` lines, or fails for `--tcp=<fails_for>`."""
    path.write_text(f"#!{sys.executable}\n"
                    "import sys\n"
                    f"if '--tcp={fails_for}' in sys.argv:\n"
                    "    sys.exit(1)\n"
                    "print('cwnd 1.000000 14480')\nprint('cwnd 1.500000 28960')\n")
    path.chmod(0o755)
    return path


def test_a_late_failure_keeps_every_trace_recorded_before_it(tmp_path):
    # The last scheme's ns-3 run fails: the runs before it are not lost, each file written as its run finished.
    d = tmp_path / "ns3"
    d.mkdir()
    res = draw(d / "cwnd.png", "--ns3-bin", str(fake_tracer(tmp_path / "tracer", fails_for="Bbr")))
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.splitlines()[-1].startswith("error: Command "), res.stderr
    done = sorted(["ns3_cubic.csv", "ns3_newreno.csv"] + [n for n in CCSCOPE if "_bbr_" not in n])
    assert manifest_files(d) == done
    assert (d / "ns3_cubic.csv").read_text().splitlines() == ["time_s,cwnd_packets", "1.000000,10.000", "1.500000,20.000"]
    assert sorted(p.name for p in d.iterdir()) == sorted(done + ["ccscope-manifest.json"])


def file_runs(d: Path) -> dict:
    return json.loads((d / "ccscope-manifest.json").read_text()).get("runs", {})


def test_after_a_late_failure_the_manifest_says_which_run_wrote_each_file(tmp_path):
    # A complete run, then one whose last ns-3 run fails: the folder holds files of both, and the manifest
    # names the run of each (the first run's figure and BBR traces, the second's Cubic and NewReno traces).
    d = tmp_path / "ns3"
    first = draw(d / "cwnd.png", "--ns3-bin", str(fake_tracer(tmp_path / "ok", fails_for="none")))
    assert first.returncode == 0, first.stderr
    runs = file_runs(d)
    assert sorted(runs) == sorted(CCSCOPE + NS3 + ["cwnd.png", "cwnd.svg"]) and len(set(runs.values())) == 1
    (a,) = set(runs.values())
    second = draw(d / "cwnd.png", "--ns3-bin", str(fake_tracer(tmp_path / "bad", fails_for="Bbr")))
    assert second.returncode == 2, second.stdout + second.stderr
    runs = file_runs(d)
    fresh = ["ns3_cubic.csv", "ns3_newreno.csv"] + [n for n in CCSCOPE if "_bbr_" not in n]
    older = ["ns3_bbr.csv", "ccscope_bbr_rfc.csv", "ccscope_bbr_linux.csv", "cwnd.png", "cwnd.svg"]
    assert sorted(runs) == sorted(fresh + older) == manifest_files(d)
    (b,) = {runs[n] for n in fresh}
    assert b != a and {runs[n] for n in older} == {a}
