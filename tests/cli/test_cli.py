"""The `ccscope` command line: run, --packets, plot, controllers, repro, and one clear error line (file,
line, field; exit 2; no results folder) for every kind of bad input."""

from __future__ import annotations

import inspect
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from ccscope import api
from ccscope.cli import app

# Click < 8.2 mixes stderr into stdout unless told not to; 8.2 and later always keep both apart.
if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:
    runner = CliRunner(mix_stderr=False)
else:
    runner = CliRunner()

SHORT = ["--set", "duration_s=10"]
CONTROLLER_NAMES = ["fixed", "aimd", "aiad", "mimd", "timely", "queue_gradient", "newreno", "cubic", "vegas", "verus", "sprout", "markov", "sctp", "lied", "sac", "bbr", "ledbat",
                    "copa", "vivace", "bbr3"]


def all_output(res) -> str:
    """Everything the command printed, stdout and stderr."""
    try:
        return res.stdout + res.stderr
    except ValueError:  # stderr not captured separately
        return res.output


# --- run ---------------------------------------------------------------------------------------------


def test_run_prints_a_table_and_writes_a_results_folder(tmp_path):
    out = tmp_path / "res"
    res = runner.invoke(app, ["run", "examples/datagrump.toml", "-o", str(out), *SHORT])
    assert res.exit_code == 0, all_output(res)
    assert "Mbit/s" in res.stdout and "score" in res.stdout and "fixed" in res.stdout
    assert "datagrump" in res.stdout
    assert {p.name for p in out.iterdir()} == {"summary.json", "flows.parquet", "timeseries.parquet", "scenario.toml",
                                               "provenance.json", "ccscope-manifest.json"}
    r = api.load_result(out)
    assert r.summary["sent"] == r.summary["delivered"] + r.summary["dropped"] + r.summary["in_flight"]
    assert r.scenario["duration_s"] == 10.0
    assert r.summary == api.run("examples/datagrump.toml", overrides={"duration_s": 10}).summary


def test_run_set_and_seed_override_the_scenario(tmp_path):
    out = tmp_path / "res"
    res = runner.invoke(app, ["run", "examples/fixed.toml", "-o", str(out), *SHORT, "--set", "flows.0.window=3",
                              "--seed", "9"])
    assert res.exit_code == 0, all_output(res)
    r = api.load_result(out)
    expected = api.run("examples/fixed.toml", overrides={"duration_s": 10, "flows.0.window": 3}, seed=9)
    assert r.summary == expected.summary and r.scenario["seed"] == 9


LOG_LINE = re.compile(r"^(?P<t>\d+) (?:\+ \d+|# \d+|- \d+ \d+)$")


def test_run_with_packets_writes_a_mahimahi_link_log(tmp_path):
    out = tmp_path / "res"
    res = runner.invoke(app, ["run", "examples/datagrump.toml", "-o", str(out), "--packets", *SHORT])
    assert res.exit_code == 0, all_output(res)
    assert (out / "packets.parquet").exists()
    lines = (out / "link.log").read_text().splitlines()
    header = [ln for ln in lines if ln.startswith("#")]
    body = [ln for ln in lines if not ln.startswith("#")]
    assert lines[: len(header)] == header  # the header comes first
    assert "# base timestamp: 0" in header
    bad = [ln for ln in body if not LOG_LINE.match(ln)]
    assert bad == []
    pk = pd.read_parquet(out / "packets.parquet")
    counts = pk["event"].value_counts()
    assert sum(ln.split()[1] == "+" for ln in body) == counts["arrival"]
    assert sum(ln.split()[1] == "-" for ln in body) == counts["departure"]
    assert sum(ln.split()[1] == "#" for ln in body) == counts["opportunity"]
    # Every departure's delay is at most its timestamp (Mahimahi's mm-throughput-graph checks this).
    for ln in body:
        f = ln.split()
        if f[1] == "-":
            assert int(f[3]) <= int(f[0])


def test_link_log_timestamps_never_decrease(tmp_path):
    out = tmp_path / "res"
    res = runner.invoke(app, ["run", "examples/datagrump.toml", "-o", str(out), "--packets", *SHORT])
    assert res.exit_code == 0, all_output(res)
    times = [int(ln.split()[0]) for ln in (out / "link.log").read_text().splitlines() if not ln.startswith("#")]
    assert times == sorted(times)


def test_plot_draws_throughput_and_delay_figures(tmp_path):
    out = tmp_path / "res"
    assert runner.invoke(app, ["run", "examples/datagrump.toml", "-o", str(out), *SHORT]).exit_code == 0
    res = runner.invoke(app, ["plot", str(out)])
    assert res.exit_code == 0, all_output(res)
    for name in ("throughput.png", "throughput.svg", "delay.png", "delay.svg"):
        assert (out / name).stat().st_size > 1000, name
    assert (out / "throughput.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_controllers_lists_every_registered_controller():
    res = runner.invoke(app, ["controllers"])
    assert res.exit_code == 0, all_output(res)
    for name in CONTROLLER_NAMES:
        assert re.search(rf"^{name}: ", res.stdout, re.M), name
    assert {c["name"] for c in api.controllers()} == set(CONTROLLER_NAMES)


def test_repro_datagrump_writes_the_report_and_its_figures(tmp_path):
    md = tmp_path / "repro" / "datagrump.md"
    res = runner.invoke(app, ["repro", "datagrump", "-o", str(md)])
    assert res.exit_code == 0, all_output(res)
    text = md.read_text()
    for heading in ("## Setup", "## 1. Fixed-window sweep", "## 2. Window 12", "## 3. Controller ladder",
                    "## Differences from the paper"):
        assert heading in text
    assert "`ccscope repro datagrump`" in text and "![" in text
    assert (tmp_path / "repro" / "datagrump.png").stat().st_size > 1000
    assert (tmp_path / "repro" / "datagrump.svg").stat().st_size > 1000
    assert sorted(p.name for p in md.parent.iterdir()) == ["datagrump.md", "datagrump.png", "datagrump.svg"]


def test_repro_mtsc_passes_its_options_through_and_writes_the_report(tmp_path):
    md = tmp_path / "mtsc.md"
    res = runner.invoke(app, ["repro", "mtsc", "-o", str(md), "--part", "traffic", "--seeds", "2", "--duration-s", "300",
                              "--jobs", "2"])
    assert res.exit_code == 0, all_output(res)
    text = md.read_text()
    assert "**Size: 2 seeds (11-12" in text and "x 300 s a run" in text and "**smaller**" in text
    for heading in ("## Realised background load", "## Fig. 1", "## Fig. 2", "## Fig. 3"):
        assert heading in text
    names = sorted(p.name for p in (tmp_path / "mtsc").iterdir())
    csvs = ["fig1_hurst.csv", "fig2_condprob.csv", "fig3_entropy.csv", "fig3_mechanism.csv"]
    assert names == ["ccscope-manifest.json", "fig1_hurst.csv", "fig1_hurst.png", "fig2_condprob.csv",
                     "fig2_condprob.png", "fig3_entropy.csv", "fig3_entropy.png", "fig3_mechanism.csv"]
    # The manifest marks the CSVs and figures as ccscope's (so the next run may replace them); each CSV holds rows.
    assert json.loads((tmp_path / "mtsc" / "ccscope-manifest.json").read_text())["files"] == names[1:]
    assert all(len((tmp_path / "mtsc" / n).read_text().splitlines()) > 1 for n in csvs)
    assert "### What sets S-bar at each scale" in text and "exact fGn" in text


def test_console_script_runs_the_contest_example(tmp_path):
    exe = Path(sys.executable).parent / "ccscope"
    exe = str(exe) if exe.exists() else shutil.which("ccscope")
    assert exe, "the ccscope console script is not installed"
    out = tmp_path / "res"
    proc = subprocess.run([exe, "run", "examples/datagrump.toml", "-o", str(out), *SHORT], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "score" in proc.stdout
    assert (out / "summary.json").exists()


# --- bad input (the whole table is tests/cli/test_bad_inputs.py) ------------------------------------


def test_bad_set_value_names_the_field_and_exits_2(tmp_path):
    out = tmp_path / "out"
    res = runner.invoke(app, ["run", "examples/fixed.toml", "-o", str(out), "--set", "flows.0.window=-1"])
    assert res.exit_code == 2
    lines = [ln for ln in all_output(res).splitlines() if ln.strip()]
    assert len(lines) == 1 and "flows[0].window" in lines[0]
    # The value came from --set, not from a line of the file: the error names the override.
    assert "override `flows.0.window`" in lines[0] and "fixed.toml:" not in lines[0].split("override")[0][-3:]
    assert not out.exists()


# --- results folders ---------------------------------------------------------------------------------


def test_rerunning_the_saved_scenario_reproduces_seed_and_overrides_bit_for_bit(tmp_path):
    # red_lossy's Gilbert-Elliott loss draws from the seed: another seed gives other tables.
    args = ["run", "examples/red_lossy.toml", "--set", "duration_s=5", "--set", "flows.0.count=1"]
    for name, seed in (("a", "5"), ("other", "1")):
        res = runner.invoke(app, [*args, "--seed", seed, "-o", str(tmp_path / name)])
        assert res.exit_code == 0, all_output(res)
    res = runner.invoke(app, ["run", str(tmp_path / "a" / "scenario.toml"), "-o", str(tmp_path / "b")])
    assert res.exit_code == 0, all_output(res)
    a, b, other = (tmp_path / n for n in ("a", "b", "other"))
    assert (a / "timeseries.parquet").read_bytes() != (other / "timeseries.parquet").read_bytes()
    for name in ("flows.parquet", "timeseries.parquet", "summary.json", "scenario.toml"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert "seed = 5" in (a / "scenario.toml").read_text()


def test_plot_adds_its_figures_to_the_folder_and_a_rerun_replaces_them(tmp_path):
    out = tmp_path / "res"
    assert runner.invoke(app, ["run", "examples/fixed.toml", "-o", str(out), *SHORT]).exit_code == 0
    (out / "notes.txt").write_text("mine")
    res = runner.invoke(app, ["plot", str(out), "--formats", "svg"])
    assert res.exit_code == 0, all_output(res)
    manifest = (out / "ccscope-manifest.json").read_text()
    assert "throughput.svg" in manifest and "delay.svg" in manifest and "notes.txt" not in manifest
    # A new run rewrites ccscope's files: the figures of the old run go, the user's notes stay.
    assert runner.invoke(app, ["run", "examples/fixed.toml", "-o", str(out), *SHORT]).exit_code == 0
    assert not (out / "throughput.svg").exists() and (out / "notes.txt").read_text() == "mine"


def test_a_scenario_named_from_another_folder_reads_and_records_the_trace_beside_it(tmp_path, monkeypatch, cli_runner):
    sub = tmp_path / "exp"
    sub.mkdir()
    (sub / "t.trace").write_text("".join(f"{t}\n" for t in range(1, 101)))
    (sub / "s.toml").write_text('duration_s = 1\n[data_link]\ntrace = "t.trace"\ndelay_ms = 10\n'
                                '[[flows]]\ncontroller = "fixed"\nwindow = 4\n')
    monkeypatch.chdir(tmp_path)
    res = cli_runner.invoke(app, ["run", "exp/s.toml", "-o", "exp/out"])
    assert res.exit_code == 0, (res.stdout, res.stderr)
    inputs = json.loads((sub / "out" / "provenance.json").read_text())["inputs"]
    assert list(inputs) == [str((sub / "t.trace").resolve())], inputs


def test_validate_applies_set_and_seed_before_it_checks(tmp_path):
    # What validate prints is the effective scenario's summary, so an override shows in it.
    s = tmp_path / "s.toml"
    s.write_text(api.EXAMPLES_DIR.joinpath("datagrump.toml").read_text())
    plain = runner.invoke(app, ["validate", str(s)])
    res = runner.invoke(app, ["validate", str(s), "--set", "duration_s=7", "--seed", "9"])
    assert plain.exit_code == 0 and res.exit_code == 0, all_output(res)
    assert "7" in res.stdout and res.stdout != plain.stdout


def test_run_and_validate_print_at_most_table_rows_flows_and_say_where_the_rest_are(tmp_path):
    # 10^5 flows took rich minutes to lay out, row by row; the rest are in the results folder.
    from ccscope.run_command import TABLE_ROWS

    s = tmp_path / "many.toml"
    n = TABLE_ROWS + 8
    s.write_text(f"""seed = 1
duration_s = 2
[data_link]
rate_mbps = 12
delay_ms = 10
[ack_link]
rate_mbps = 100
delay_ms = 10
[[flows]]
controller = "newreno"
count = {n - 1}
[[flows]]
controller = "cubic"
""")
    out = tmp_path / "res"
    res = runner.invoke(app, ["run", str(s), "-o", str(out)])
    assert res.exit_code == 0, all_output(res)
    cells = [line.split("│")[1].strip() for line in res.stdout.splitlines() if line.count("│") > 2]
    rows = [c for c in cells if c]  # a folded row goes on with an empty first cell
    assert rows[:TABLE_ROWS] == [str(i) for i in range(TABLE_ROWS)]
    assert rows[TABLE_ROWS:] == ["...", "all"], rows
    assert "8 more flows in flows.parquet" in res.stdout
    assert len(api.load_result(out).flows) == n
    res = runner.invoke(app, ["validate", str(s)])
    assert res.exit_code == 0, all_output(res)
    assert f"'controllers': {{'newreno': {n - 1}, 'cubic': 1}}" in res.stdout


def test_links_table_prints_at_most_table_rows_links_and_says_where_the_rest_are():
    from rich.console import Console

    from ccscope import run_command
    from ccscope.run_command import TABLE_ROWS, links_table

    class Links:
        def _records(self, name):
            assert name == "links"
            return [{"link": f"l{i}", "throughput_mbps": 1.0, "capacity_mbps": 2.0, "utilization": 0.5, "arrivals": 3,
                     "dropped": 0, "loss_rate": 0.0, "queue_delay_p95_ms": 1.0} for i in range(TABLE_ROWS + 3)]

    c = Console(width=200, record=True)
    c.print(links_table(Links()))
    text = c.export_text()
    assert f"l{TABLE_ROWS - 1} " in text and f"l{TABLE_ROWS} " not in text
    assert "3 more links in summary.json" in text
    assert run_command.more(1, "flow") == "1 more flow" and run_command.more(1200, "flow") == "1,200 more flows"
