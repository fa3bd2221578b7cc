"""`ccscope compare` and `ccscope report` on short runs of the embedded examples, and their bad inputs:
one line naming the file or option, exit 2, nothing written, nothing of the user's touched."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import statistics
from pathlib import Path

import pytest

import ccscope
from ccscope import api
from ccscope.cli import app


def _ok(runner, args):
    res = runner.invoke(app, [str(a) for a in args])
    assert res.exit_code == 0, res.stdout + res.stderr
    return res


def _bad(runner, args) -> str:
    """The command fails as bad input: exit 2, exactly one line on stderr, no traceback."""
    res = runner.invoke(app, [str(a) for a in args])
    assert res.exit_code == 2, res.stdout + res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert res.exception is None or isinstance(res.exception, SystemExit)
    return lines[0]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Results folders: fixed and aimd, each for 6 s and 9 s of the contest link (two runs per scheme),
    a timely run with its window trace and packet log, and a sweep of the fixed window."""
    root = tmp_path_factory.mktemp("runs")
    out: dict[str, Path] = {}
    for ctl in ("fixed", "aimd"):
        for secs in (6, 9):
            r = api.run(f"examples/{ctl}.toml", overrides={"duration_s": secs}, cwnd=(ctl == "aimd"))
            out[f"{ctl}-{secs}"] = r.save(root / f"{ctl}-{secs}")
    r = api.run("examples/timely.toml", overrides={"duration_s": 6}, cwnd=True, packets=True)
    out["timely"] = r.save(root / "timely")
    from ccscope import sweep

    sweep.run_sweep("examples/fixed.toml", {"flows.0.window": [4, 16], "duration_s": [6, 9]}, out=root / "sweep", jobs=1)
    out["sweep"] = root / "sweep"
    return out


def _summary(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text())["summary"]


# --- compare -----------------------------------------------------------------------------------------


def test_compare_groups_runs_by_controller_at_their_mean(runs, tmp_path, cli_runner):
    out = tmp_path / "cmp"
    res = _ok(cli_runner, ["compare", runs["fixed-6"], runs["fixed-9"], runs["aimd-6"], runs["aimd-9"], "-o", out])
    rec = json.loads((out / "compare.json").read_text())
    groups = {g["label"]: g for g in rec["groups"]}
    assert list(groups) == ["fixed", "aimd"]
    for ctl in ("fixed", "aimd"):
        s = [_summary(runs[f"{ctl}-{t}"]) for t in (6, 9)]
        assert groups[ctl]["runs"] == 2
        assert groups[ctl]["throughput_mean"] == pytest.approx(statistics.fmean(x["throughput_mbps"] for x in s))
        assert groups[ctl]["delay_mean"] == pytest.approx(statistics.fmean(x["one_way_delay_p95_ms"] for x in s))
        assert groups[ctl]["throughput_sd"] == pytest.approx(statistics.stdev(x["throughput_mbps"] for x in s))
    for name in ("throughput_delay", "delay_cdf", "throughput_time", "window_time"):
        for fmt in ("svg", "png"):
            assert (out / f"{name}.{fmt}").stat().st_size > 1000, name
    assert "fixed" in res.stdout and "aimd" in res.stdout


def test_compare_says_which_schemes_have_no_window_trace(runs, tmp_path, cli_runner):
    out = tmp_path / "cmp"
    res = _ok(cli_runner, ["compare", runs["fixed-6"], "-o", out])
    assert "fixed: no window trace" in res.stderr and "--cwnd" in res.stderr
    assert not (out / "window_time.svg").exists()


def test_compare_delay_axis_can_be_the_signal_delay(runs, tmp_path, cli_runner):
    out = tmp_path / "cmp"
    _ok(cli_runner, ["compare", runs["fixed-6"], runs["aimd-6"], "-o", out, "--delay", "signal"])
    rec = json.loads((out / "compare.json").read_text())
    assert [r["delay_ms"] for r in rec["runs"]] == [_summary(runs[k])["signal_delay_p95_ms"] for k in ("fixed-6", "aimd-6")]
    assert "95th percentile signal delay" in (out / "throughput_delay.svg").read_text()


def test_compare_label_groups_results_by_a_scenario_key(runs, tmp_path, cli_runner):
    out = tmp_path / "cmp"
    _ok(cli_runner, ["compare", runs["fixed-6"], runs["fixed-9"], runs["aimd-6"], "-o", out, "--label", "duration_s"])
    rec = json.loads((out / "compare.json").read_text())
    assert {g["label"]: g["runs"] for g in rec["groups"]} == {"6": 2, "9": 1}


def test_compare_of_a_sweep_puts_one_point_per_row_grouped_by_a_grid_parameter(runs, tmp_path, cli_runner):
    import pandas as pd

    out = tmp_path / "cmp"
    _ok(cli_runner, ["compare", runs["sweep"], "-o", out, "--label", "flows.0.window"])
    rec = json.loads((out / "compare.json").read_text())
    table = pd.read_parquet(runs["sweep"] / "sweep.parquet")
    assert len(rec["runs"]) == len(table) == 4
    groups = {g["label"]: g for g in rec["groups"]}
    assert set(groups) == {"4", "16"}
    for w in (4, 16):
        rows = table[table["flows.0.window"] == w]
        assert groups[str(w)]["throughput_mean"] == pytest.approx(rows["throughput_mbps"].mean())
    # A sweep keeps summaries only: the figure of points, and a note that there is nothing over time.
    assert (out / "throughput_delay.svg").exists() and not (out / "throughput_time.svg").exists()


def test_compare_of_a_sweep_groups_by_grid_point_by_default(runs, tmp_path, cli_runner):
    out = tmp_path / "cmp"
    _ok(cli_runner, ["compare", runs["sweep"], "-o", out])
    labels = [g["label"] for g in json.loads((out / "compare.json").read_text())["groups"]]
    assert labels == ["flows.0.window=4, duration_s=6", "flows.0.window=4, duration_s=9",
                      "flows.0.window=16, duration_s=6", "flows.0.window=16, duration_s=9"]


def test_compare_from_python_matches_the_command(runs, tmp_path):
    res = ccscope.compare([runs["fixed-6"], runs["timely"]], tmp_path / "c")
    assert [g.label for g in res.groups] == ["fixed", "timely"]
    assert (tmp_path / "c" / "compare.json").exists()


def test_compare_per_packet_cdf_when_every_run_kept_its_packet_log(runs, tmp_path, cli_runner):
    out = tmp_path / "cmp"
    res = _ok(cli_runner, ["compare", runs["timely"], "-o", out])
    assert "per-bin mean" not in res.stderr
    assert "per-packet queueing delay" in (out / "delay_cdf.svg").read_text()


def test_a_second_compare_replaces_its_own_figures_and_keeps_the_users_files(runs, tmp_path, cli_runner):
    out = tmp_path / "cmp"
    _ok(cli_runner, ["compare", runs["aimd-6"], "-o", out])
    assert (out / "window_time.svg").exists()
    (out / "my-notes.txt").write_text("mine")
    _ok(cli_runner, ["compare", runs["fixed-6"], "-o", out])
    assert not (out / "window_time.svg").exists(), "a figure of the earlier compare was left stale"
    assert (out / "my-notes.txt").read_text() == "mine"
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_a_compare_folder_is_a_results_folder_whose_manifest_lists_exactly_its_files(runs, tmp_path, cli_runner):
    from ccscope import store

    out = tmp_path / "cmp"
    _ok(cli_runner, ["compare", runs["aimd-6"], "-o", out, "--formats", "svg"])
    listed = store.read_manifest(out)["files"]
    on_disk = sorted(p.name for p in out.iterdir() if p.name != store.MANIFEST)
    assert listed == on_disk and "compare.json" in listed and "window_time.svg" in listed


def test_compare_with_overwrite_writes_beside_the_users_files_and_a_rerun_needs_no_overwrite(runs, tmp_path, cli_runner):
    out = tmp_path / "thesis"
    out.mkdir()
    (out / "chapter1.tex").write_text("precious")
    _ok(cli_runner, ["compare", runs["fixed-6"], "-o", out, "--overwrite"])
    assert (out / "chapter1.tex").read_text() == "precious" and (out / "compare.json").is_file()
    _ok(cli_runner, ["compare", runs["aimd-6"], "-o", out])  # now a results folder: its own files are replaced
    assert (out / "chapter1.tex").read_text() == "precious"
    assert json.loads((out / "compare.json").read_text())["groups"][0]["label"] == "aimd"


def test_compare_with_overwrite_still_refuses_to_replace_a_file_of_the_users(runs, tmp_path, cli_runner):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "compare.json").write_text("my own notes")
    line = _bad(cli_runner, ["compare", runs["fixed-6"], "-o", out, "--overwrite"])
    assert "compare.json" in line and str(out) in line
    assert (out / "compare.json").read_text() == "my own notes" and [p.name for p in out.iterdir()] == ["compare.json"]


def test_compare_refuses_to_write_into_a_runs_results_folder(runs, tmp_path, cli_runner):
    run = tmp_path / "run"
    shutil.copytree(runs["fixed-9"], run)
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    line = _bad(cli_runner, ["compare", runs["fixed-6"], "-o", run])
    assert str(run) in line and "another kind" in line
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before


# --- compare: bad input ---------------------------------------------------------------------------


def test_compare_of_a_folder_that_is_not_a_results_folder_exits_2(runs, tmp_path, cli_runner):
    other = tmp_path / "photos"
    other.mkdir()
    (other / "a.jpg").write_bytes(b"x")
    line = _bad(cli_runner, ["compare", runs["fixed-6"], other, "-o", tmp_path / "cmp"])
    assert str(other) in line and "not a results folder" in line
    assert not (tmp_path / "cmp").exists()


def test_compare_of_a_corrupt_parquet_names_the_file_and_writes_nothing(runs, tmp_path, cli_runner):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(runs["fixed-6"], bad)
    (bad / "timeseries.parquet").write_bytes(b"PAR1 not really")
    line = _bad(cli_runner, ["compare", runs["aimd-6"], bad, "-o", tmp_path / "cmp"])
    assert str(bad / "timeseries.parquet") in line and "Parquet" in line
    assert not (tmp_path / "cmp").exists()


def test_compare_of_a_corrupt_summary_names_the_file_and_line(runs, tmp_path, cli_runner):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(runs["fixed-6"], bad)
    (bad / "summary.json").write_text('{\n  "summary": {,\n}')
    line = _bad(cli_runner, ["compare", bad, "-o", tmp_path / "cmp"])
    assert f"{bad / 'summary.json'}: line 2" in line


def test_compare_of_a_corrupt_sweep_table_exits_2(runs, tmp_path, cli_runner):
    bad = tmp_path / "sw"
    bad.mkdir()
    (bad / "sweep.parquet").write_text("not parquet")
    line = _bad(cli_runner, ["compare", bad, "-o", tmp_path / "cmp"])
    assert str(bad / "sweep.parquet") in line


def test_compare_refuses_an_output_folder_that_holds_someone_elses_files(runs, tmp_path, cli_runner):
    out = tmp_path / "thesis"
    out.mkdir()
    (out / "chapter1.tex").write_text("precious")
    line = _bad(cli_runner, ["compare", runs["fixed-6"], "-o", out])
    assert "-o" in line and str(out) in line
    assert [p.name for p in out.iterdir()] == ["chapter1.tex"] and (out / "chapter1.tex").read_text() == "precious"


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
def test_compare_names_a_folder_an_earlier_compare_wrote_without_a_manifest(runs, tmp_path, cli_runner, overwrite):
    out = tmp_path / "old-compare"
    out.mkdir()
    (out / "compare.json").write_text("{}")
    (out / "throughput_delay.png").write_bytes(b"old figure")
    line = _bad(cli_runner, ["compare", runs["fixed-6"], "-o", out, *overwrite])
    assert "earlier ccscope" in line and "--overwrite" not in line
    assert sorted(p.name for p in out.iterdir()) == ["compare.json", "throughput_delay.png"]
    assert (out / "throughput_delay.png").read_bytes() == b"old figure"


@pytest.mark.parametrize("args, names", [
    (["--label", "flows.0.no_such_key"], "--label flows.0.no_such_key"),
    (["--delay", "median"], "--delay median"),
    (["--formats", "gif"], "--formats gif"),
])
def test_compare_bad_options_name_the_option(runs, tmp_path, cli_runner, args, names):
    line = _bad(cli_runner, ["compare", runs["fixed-6"], "-o", tmp_path / "cmp", *args])
    assert names in line
    assert not (tmp_path / "cmp").exists()


def test_compare_of_a_missing_folder_exits_2(tmp_path, cli_runner):
    line = _bad(cli_runner, ["compare", tmp_path / "nope", "-o", tmp_path / "cmp"])
    assert str(tmp_path / "nope") in line


# --- report --------------------------------------------------------------------------------------------


def _svgs(html: str) -> list[str]:
    return re.findall(r"<svg.*?</svg>", html, flags=re.S)


def _no_urls_but_namespaces(html: str) -> None:
    urls = set(re.findall(r"https?://[^\"' )<>]+", html))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls


def test_report_of_a_folder_without_provenance_hashes_its_inputs_now_and_says_so(runs, tmp_path, cli_runner):
    old = tmp_path / "old"
    shutil.copytree(runs["timely"], old)
    (old / "provenance.json").unlink()
    out = tmp_path / "old.html"
    _ok(cli_runner, ["report", old, "-o", out])
    trace = api.TRACES_DIR / "Verizon-LTE-short.down"
    html = out.read_text()
    assert hashlib.sha256(trace.read_bytes()).hexdigest() in html and "hashed now" in html


def test_report_of_a_run_holds_tables_figures_scenario_and_input_hashes(runs, tmp_path, cli_runner):
    out = tmp_path / "run.html"
    _ok(cli_runner, ["report", runs["timely"], "-o", out])
    html = out.read_text()
    assert len(_svgs(html)) == 3  # throughput, delay CDF, window
    assert "p95 one-way delay (ms)" in html and "timely" in html
    scenario = (runs["timely"] / "scenario.toml").read_text()
    assert 'controller = "timely"' in scenario and 'controller = &#34;timely&#34;' in html
    # The run recorded its inputs' hashes (provenance.json): the page shows them as recorded.
    trace = api.TRACES_DIR / "Verizon-LTE-short.down"
    assert hashlib.sha256(trace.read_bytes()).hexdigest() in html and "hashed now" not in html
    for f in ("summary.json", "timeseries.parquet", "cwnd.parquet"):
        assert hashlib.sha256((runs["timely"] / f).read_bytes()).hexdigest() in html
    _no_urls_but_namespaces(html)
    assert "<script" not in html


def test_report_shows_a_recorded_provenance(runs, tmp_path, cli_runner):
    import shutil

    folder = tmp_path / "res"
    shutil.copytree(runs["fixed-6"], folder)
    (folder / "provenance.json").write_text(json.dumps({"ccscope": "0.1.0+abc", "seed": 7, "inputs": {"/x/trace.down": "ab" * 32}}))
    out = tmp_path / "r.html"
    _ok(cli_runner, ["report", folder, "-o", out])
    html = out.read_text()
    assert "recorded at run time" in html and "ab" * 32 in html and "0.1.0+abc" in html


def test_report_of_a_run_without_a_window_trace_says_so(runs, tmp_path, cli_runner):
    out = tmp_path / "r.html"
    _ok(cli_runner, ["report", runs["fixed-6"], "-o", out])
    html = out.read_text()
    assert "no window trace" in html and len(_svgs(html)) == 2


def test_report_of_a_sweep_has_the_grid_table_and_figure(runs, tmp_path, cli_runner):
    out = tmp_path / "s.html"
    _ok(cli_runner, ["report", runs["sweep"], "-o", out])
    html = out.read_text()
    assert len(_svgs(html)) == 1 and "Runs (4)" in html and "flows.0.window=16, duration_s=9" in html
    assert hashlib.sha256((runs["sweep"] / "sweep.parquet").read_bytes()).hexdigest() in html
    _no_urls_but_namespaces(html)


def test_report_of_a_compare_inlines_its_figures_and_checks_its_inputs(runs, tmp_path, cli_runner):
    cmp = tmp_path / "cmp"
    _ok(cli_runner, ["compare", runs["fixed-6"], runs["aimd-6"], runs["aimd-9"], "-o", cmp])
    out = tmp_path / "c.html"
    _ok(cli_runner, ["report", cmp, "-o", out])
    html = out.read_text()
    assert len(_svgs(html)) == 4
    assert html.count("unchanged") >= 3 and "changed since the compare" not in html
    _no_urls_but_namespaces(html)


def test_report_rewrites_its_page_atomically_and_leaves_no_temporary_file(runs, tmp_path, cli_runner):
    out = tmp_path / "r.html"
    _ok(cli_runner, ["report", runs["fixed-9"], "-o", out])
    _ok(cli_runner, ["report", runs["fixed-6"], "-o", out])
    assert out.read_text().startswith("<!DOCTYPE html>") and "fixed-6" in out.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]


def test_report_of_a_folder_that_is_not_a_results_folder_exits_2(tmp_path, cli_runner):
    (tmp_path / "x").mkdir()
    line = _bad(cli_runner, ["report", tmp_path / "x", "-o", tmp_path / "r.html"])
    assert str(tmp_path / "x") in line
    assert not (tmp_path / "r.html").exists()


def test_report_of_a_corrupt_parquet_writes_no_page(runs, tmp_path, cli_runner):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(runs["fixed-6"], bad)
    (bad / "timeseries.parquet").write_bytes(b"\x00" * 100)
    line = _bad(cli_runner, ["report", bad, "-o", tmp_path / "r.html"])
    assert str(bad / "timeseries.parquet") in line
    assert not (tmp_path / "r.html").exists()


def test_report_will_not_overwrite_a_file_that_is_not_html(runs, tmp_path, cli_runner):
    paper = tmp_path / "paper.tex"
    paper.write_text("precious")
    line = _bad(cli_runner, ["report", runs["fixed-6"], "-o", paper])
    assert "-o" in line and paper.read_text() == "precious"


def test_report_into_a_missing_folder_exits_2(runs, tmp_path, cli_runner):
    line = _bad(cli_runner, ["report", runs["fixed-6"], "-o", tmp_path / "no" / "r.html"])
    assert str(tmp_path / "no") in line


# --- plot ----------------------------------------------------------------------------------------------


def test_plot_of_a_corrupt_parquet_exits_2_naming_it(runs, tmp_path, cli_runner):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(runs["fixed-6"], bad)
    (bad / "timeseries.parquet").write_bytes(b"garbage")
    line = _bad(cli_runner, ["plot", bad])
    assert str(bad / "timeseries.parquet") in line
    assert not (bad / "throughput.png").exists()


def test_plot_states_the_bin_width(runs, tmp_path, cli_runner):
    _ok(cli_runner, ["plot", runs["fixed-9"], "-o", tmp_path, "--formats", "svg"])
    assert "500 ms bins" in (tmp_path / "throughput.svg").read_text()


# --- repro (the reproductions live in experiments/, beside the library) ---------------------------


@pytest.mark.parametrize("name", ["datagrump", "verus", "markov", "cmt", "mtsc"])
def test_repro_outside_a_checkout_exits_2_naming_the_experiment(name, tmp_cwd, cli_runner):
    line = _bad(cli_runner, ["repro", name])
    assert f"experiments/{name}/repro.py" in line and "checkout" in line
    assert list(tmp_cwd.iterdir()) == []


def test_repro_option_errors_come_back_as_one_line_and_exit_2(tmp_path, cli_runner):
    line = _bad(cli_runner, ["repro", "markov", "-o", tmp_path / "m.md", "--traces", tmp_path])
    assert str(tmp_path) in line and "no Mahimahi traces" in line
    assert not (tmp_path / "m.md").exists()
