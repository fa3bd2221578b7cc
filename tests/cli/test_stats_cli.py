"""`ccscope stats hurst|condprob` on a Parquet series and on a results folder, and one error line (exit 2)
naming the option for each kind of bad input."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import ccscope
from ccscope import stats
from ccscope.cli import app

if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:
    runner = CliRunner(mix_stderr=False)
else:
    runner = CliRunner()


def all_output(res) -> str:
    try:
        return res.stdout + res.stderr
    except ValueError:
        return res.output


@pytest.fixture(scope="module")
def link_file(tmp_path_factory):
    """A results-style timeseries.parquet: flow -1 is fGn (H = 0.8) around 5, flow 0 a constant."""
    n = 20_000
    x = stats.fgn(n, 0.8, seed=1) + 5.0
    d = tmp_path_factory.mktemp("series")
    t = np.arange(n) * 0.01
    pq.write_table(pa.table({
        "time_s": np.r_[t, t], "flow": np.r_[np.full(n, 0), np.full(n, -1)].astype(np.int32),
        "throughput_mbps": np.r_[np.ones(n), x], "ingress_mbps": np.r_[np.ones(n), x + 1],
    }), d / "timeseries.parquet")
    return d, x


def test_stats_hurst_reads_the_link_series_of_a_results_folder(link_file):
    folder, x = link_file
    res = runner.invoke(app, ["stats", "hurst", str(folder), "--json"])
    assert res.exit_code == 0, all_output(res)
    out = json.loads(res.stdout)
    assert out["column"] == "throughput_mbps" and out["bin_s"] == pytest.approx(0.01)
    got = {e["method"]: e for e in out["estimates"]}
    assert list(got) == ["rs", "aggvar", "wavelet", "whittle"]
    # The same numbers as the API on the flow -1 series.
    assert got["whittle"]["hurst"] == stats.hurst(x, "whittle").hurst
    assert got["aggvar"]["fit_range"] == [10.0, 200.0]
    # --aggregation 1 is the full-band Whittle, accurate on exact fGn.
    res = runner.invoke(app, ["stats", "hurst", str(folder), "--method", "whittle", "--aggregation", "1", "--json"])
    assert res.exit_code == 0, all_output(res)
    full = json.loads(res.stdout)["estimates"][0]
    assert full["hurst"] == stats.hurst(x, "whittle", aggregation=1).hurst
    assert abs(full["hurst"] - 0.8) < 0.03


def test_stats_hurst_table_and_one_method_with_a_fit_range(link_file):
    folder, x = link_file
    res = runner.invoke(app, ["stats", "hurst", str(folder / "timeseries.parquet"), "--method", "wavelet", "--j1", "3",
                              "--j2", "9"])
    assert res.exit_code == 0, all_output(res)
    assert "wavelet" in res.stdout and f"{stats.hurst(x, 'wavelet', j1=3, j2=9).hurst:.3f}" in res.stdout


def test_stats_condprob_matches_the_api_table(link_file):
    folder, x = link_file
    res = runner.invoke(app, ["stats", "condprob", str(folder), "--t1", "0.5", "--t2", "1", "--json"])
    assert res.exit_code == 0, all_output(res)
    out = json.loads(res.stdout)
    want = stats.condprob_table(x, 50, 100)
    assert out["counts"] == want.counts.tolist() and out["blocks"] == 133
    assert out["average_entropy"] == pytest.approx(stats.average_entropy(want))
    res = runner.invoke(app, ["stats", "condprob", str(folder), "--column", "ingress_mbps"])
    assert res.exit_code == 0 and "E(L2 | L1)" in res.stdout and "average entropy" in res.stdout


def test_stats_on_a_simulated_run_uses_its_10_ms_link_series(tmp_path):
    r = ccscope.run("examples/fixed.toml", overrides={"duration_s": 30, "bin_ms": 10})
    out = r.save(tmp_path / "res")
    res = runner.invoke(app, ["stats", "condprob", str(out), "--t1", "0.5", "--t2", "0.5", "--json"])
    assert res.exit_code == 0, all_output(res)
    d = json.loads(res.stdout)
    assert d["bin_s"] == pytest.approx(0.01) and d["blocks"] == 30
    # 30 s = 3,000 bins: too short for the default aggregation (128 blocks of 128 bins), enough at 10.
    res = runner.invoke(app, ["stats", "hurst", str(out), "--method", "whittle", "--aggregation", "10", "--json"])
    assert res.exit_code == 0, all_output(res)


def test_a_plain_series_file_with_one_column_needs_no_column_but_bin_s(tmp_path):
    f = tmp_path / "x.parquet"
    pq.write_table(pa.table({"bytes": stats.fgn(4000, 0.7, seed=3)}), f)
    res = runner.invoke(app, ["stats", "condprob", str(f), "--bin-s", "0.01", "--t1", "0.1", "--t2", "0.1", "--json"])
    assert res.exit_code == 0, all_output(res)
    assert json.loads(res.stdout)["column"] == "bytes"


# --- bad input: one line naming the option, exit 2 ---------------------------------------------------

def _write(tmp_path, name, table):
    f = tmp_path / name
    pq.write_table(pa.table(table), f)
    return str(f)


BAD = [
    ("missing file", lambda p: ["stats", "hurst", str(p / "nope.parquet")], "SERIES"),
    ("folder without timeseries", lambda p: ["stats", "hurst", str(p)], "SERIES"),
    ("not parquet", lambda p: ["stats", "hurst", (p / "x.parquet").write_text("hello") and str(p / "x.parquet")], "SERIES"),
    ("unknown column", lambda p: ["stats", "hurst", _write(p, "a.parquet", {"x": np.ones(3000)}), "--column", "y"], "--column"),
    ("ambiguous column", lambda p: ["stats", "hurst", _write(p, "a.parquet", {"x": np.ones(9), "y": np.ones(9)})], "--column"),
    ("too short", lambda p: ["stats", "hurst", _write(p, "a.parquet", {"x": np.arange(500.0)}), "--method", "aggvar"],
     "--method aggvar"),
    ("too short for wavelet in all", lambda p: ["stats", "hurst", _write(p, "a.parquet", {"x": np.arange(5000.0) % 7})],
     "--method wavelet"),
    ("bad fit range", lambda p: ["stats", "hurst", _write(p, "a.parquet", {"x": np.arange(5000.0) % 7}), "--method",
                                 "wavelet", "--j1", "5", "--j2", "3"], "--j2"),
    ("octave beyond any series", lambda p: ["stats", "hurst", _write(p, "a.parquet", {"x": np.arange(5000.0) % 7}),
                                            "--method", "wavelet", "--j2", "20000"], "--j2 20000: must be at most"),
    ("block too small", lambda p: ["stats", "hurst", _write(p, "a.parquet", {"x": np.arange(5000.0) % 7}), "--min-scale",
                                   "1"], "--min-scale"),
    ("bad aggregation", lambda p: ["stats", "hurst", _write(p, "a.parquet", {"x": np.arange(5000.0) % 7}), "--method",
                                   "whittle", "--aggregation", "0"], "--aggregation"),
    ("too short for whittle's aggregation", lambda p: ["stats", "hurst", _write(p, "a.parquet", {"x": np.arange(5000.0) % 7}),
                                                     "--method", "whittle"], "--method whittle"),
    ("constant series", lambda p: ["stats", "hurst", _write(p, "a.parquet", {"x": np.ones(5000)})],
     "--method rs: every block of size 10 is constant"),
    ("unknown method", lambda p: ["stats", "hurst", _write(p, "a.parquet", {"x": np.ones(9)}), "--method", "dfa"], "--method"),
    ("t1 off the bins", lambda p: ["stats", "condprob", _write(p, "a.parquet", {"time_s": np.arange(900) * 0.01,
                                                                            "x": np.ones(900)}), "--t1", "0.015"], "--t1"),
    ("t1 beyond the block limit", lambda p: ["stats", "condprob", _write(p, "a.parquet", {"time_s": np.arange(900) * 0.01,
                                                                                      "x": np.ones(900)}), "--t1", "1e300"],
     "--t1 1e+300: 1e+302 bins"),
    ("t2 beyond the block limit", lambda p: ["stats", "condprob", _write(p, "a.parquet", {"time_s": np.arange(900) * 0.01,
                                                                                      "x": np.ones(900)}), "--t2", "1e6"],
     "--t2 1e+06: 1e+08 bins"),
    ("t1 infinite", lambda p: ["stats", "condprob", _write(p, "a.parquet", {"time_s": np.arange(900) * 0.01,
                                                                        "x": np.ones(900)}), "--t1", "inf"], "--t1 inf"),
    ("t2 infinite", lambda p: ["stats", "condprob", _write(p, "a.parquet", {"time_s": np.arange(900) * 0.01,
                                                                        "x": np.ones(900)}), "--t2", "inf"], "--t2 inf"),
    ("t1 over bin_s beyond the float range", lambda p: ["stats", "condprob", _write(p, "a.parquet", {"x": np.ones(900)}),
                                                       "--t1", "1e300", "--bin-s", "1e-10"], "--t1 1e+300: inf bins"),
    ("series shorter than two blocks", lambda p: ["stats", "condprob", _write(p, "a.parquet", {"x": np.ones(900)}),
                                                  "--bin-s", "0.01", "--t1", "5"], "--t1 5 + --t2 2"),
    ("no bin width", lambda p: ["stats", "condprob", _write(p, "a.parquet", {"x": np.ones(900)})], "--bin-s"),
    ("unknown partition", lambda p: ["stats", "condprob", _write(p, "a.parquet", {"x": np.ones(900)}), "--bin-s",
                                     "0.01", "--partition", "uniform"], "--partition"),
    ("no link rows", lambda p: ["stats", "hurst", _write(p, "a.parquet", {"flow": np.zeros(9, dtype=np.int32),
                                                                      "throughput_mbps": np.ones(9)})], "flow -1"),
]


@pytest.mark.parametrize("case,argv,names", BAD, ids=[b[0] for b in BAD])
def test_stats_bad_input_gives_one_error_line_naming_the_option(tmp_path, case, argv, names):
    res = runner.invoke(app, argv(tmp_path))
    assert res.exit_code == 2, all_output(res)
    lines = [ln for ln in all_output(res).splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: ") and names in lines[0], lines[0]
    assert "Traceback" not in all_output(res)


@pytest.mark.parametrize("value", ["0", "-3", "x"])
def test_a_bad_aggregation_is_one_line_naming_the_option_once(tmp_path, value):
    res = runner.invoke(app, ["stats", "hurst", _write(tmp_path, "a.parquet", {"x": np.arange(5000.0) % 7}), "--method",
                              "whittle", "--aggregation", value])
    assert res.exit_code == 2, all_output(res)
    lines = [ln for ln in all_output(res).splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    # The option is named once, with the value given; nothing is said twice.
    assert lines[0].count("aggregation") == 1 and "--aggregation" in lines[0], lines[0]
    if value != "x":
        assert lines[0] == f"error: --aggregation {value}: must be a whole number of bins >= 1 (whittle)"
